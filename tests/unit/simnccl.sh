#!/bin/bash
# The simulated NCCL (tests/support/simnccl) under mpirun at 2, 3 and 4 ranks, one simulated
# GPU a rank: every call, type and operation checked element by element, each check shown to
# catch its fault (a spoiled element, a missing synchronisation); a duplicate GPU; an
# injected failure and its async errors, ended by an abort and by a process exit; the INFO
# log's lines for each transport, written to NCCL_DEBUG_FILE with %h and %p expanded.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

use_simgpu strict
need_mpi
prog=$top_builddir/tests/support/simnccl_check
lib=$top_builddir/tests/support/simnccl/lib
[ -x "$prog" ] || skip "built without NCCL"
ls "$lib"/libnccl.so.* >/dev/null 2>&1 || skip "the simulated NCCL is not built"
export LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH
ldd "$prog" | grep -q "libnccl.*$lib/" || { ldd "$prog"; fail "simnccl_check does not load the simulated NCCL"; }
# A GPU a rank (cudaSetDevice(rank % 4)); nothing from the caller's environment steers NCCL.
export SIMGPU_DEVICES=0000:3b:00.0,0000:5e:00.0,0000:86:00.0,0000:af:00.0
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE NCCL_P2P_DISABLE NCCL_SHM_DISABLE \
	NCCL_IB_DISABLE NCCL_NET NCCL_NET_GDR_LEVEL NCCL_CUMEM_ENABLE SIMNCCL_RANKS_PER_NODE \
	SIMNCCL_NET SIMNCCL_NIC_GDR SIMNCCL_CHANNELS SIMNCCL_DELAY_US SIMNCCL_FAIL_AFTER \
	SIMNCCL_FAIL_RANK SIMNCCL_CHUNK_BYTES

# run NAME NP [VAR=VALUE...] -- ARGS...: the ranks' output in $WORK/NAME.out and .err; the
# exit status in $WORK/rc.
run() {
	local name=$1 np=$2 rc=0
	shift 2
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	env "${vars[@]}" timeout 300 "$MPIRUN" -np "$np" "$prog" "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null || rc=$?
	echo "$name $rc" >>"$WORK/rc"
	no_simgpu_errors "$WORK/$name.err"
}
passes() { [ "$(status_of "$1")" = 0 ] || { show "$1" >&2; fail "$2"; }; }
fails() {
	[ "$(status_of "$1")" != 0 ] || { show "$1" >&2; fail "$2: not caught"; }
	grep -q "$3" "$WORK/$1.err" || { show "$1" >&2; fail "$2: caught, but not as '$3'"; }
}

# Small chunks: every size above one element crosses chunk boundaries and wraps the mailboxes.
for np in 2 3 4; do
	run "check$np" "$np" SIMNCCL_CHUNK_BYTES=4096 -- check
	passes "check$np" "every call, type and operation at $np ranks"
done
run planted 2 SIMNCCL_CHUNK_BYTES=4096 -- check --plant
fails planted "a wrong element in the results" "element [0-9]* is .*, expected"
pass "collectives and send/recv: every element right at 2, 3 and 4 ranks (and a wrong one caught)"

run big 2 -- big
passes big "96 MiB AllReduce and AllGather at the default chunk"
pass "large buffers move in chunks"

# A modelled delay of 300 ms: the call returns at once, the stream is busy, the bytes late.
run nosync 2 SIMNCCL_DELAY_US=300000 -- nosync
fails nosync "results read without synchronising" "read without synchronising: element"
run synced 2 SIMNCCL_DELAY_US=300000 -- nosync --sync
passes synced "results read after cudaStreamSynchronize"
pass "asynchronous on the stream: a missing synchronisation reads wrong bytes"

# The simulated GPU's default: one device, so both ranks sit on 0000:3b:00.0.
run dupgpu 2 SIMGPU_DEVICES= NCCL_DEBUG=WARN -- dupgpu
passes dupgpu "two ranks on one GPU"
grep -q 'NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 3b000$' "$WORK/dupgpu.out" ||
	{ show dupgpu >&2; fail "no NCCL warning for the duplicate GPU"; }
pass "a duplicate GPU fails ncclCommInitRank with ncclInvalidUsage and NCCL's warning"

run failed 3 SIMNCCL_FAIL_AFTER=2 SIMNCCL_FAIL_RANK=1 -- fail
passes failed "an injected failure, ended by ncclCommAbort"
run exited 3 SIMNCCL_FAIL_AFTER=2 SIMNCCL_FAIL_RANK=1 -- fail --exit
passes exited "an injected failure, ended by the failing process's exit"
pass "injected failure: ncclSystemError there, ncclRemoteError on the peers, no hang"

host=$(hostname)
host=${host%%.*}
# logs NAME NP VAR=VALUE...: one allreduce at INFO, each rank's log in $WORK/NAME/nccl.HOST.PID.
logs() {
	local name=$1 np=$2 f pid
	shift 2
	mkdir "$WORK/$name"
	run "$name" "$np" NCCL_DEBUG=INFO "NCCL_DEBUG_FILE=$WORK/$name/nccl.%h.%p" "$@" -- log
	passes "$name" "the log run $name"
	[ "$(find "$WORK/$name" -name "nccl.$host.*" | wc -l)" = "$np" ] ||
		{ ls "$WORK/$name" >&2; fail "$name: not one log file a rank named nccl.$host.PID"; }
	for f in "$WORK/$name"/nccl.*; do
		pid=${f##*.}
		# Every line carries NCCL's prefix, with the pid the file is named for.
		grep -qv "^$host:$pid:[0-9]* \[[0-9]\] NCCL INFO " "$f" &&
			{ cat "$f" >&2; fail "$name: a line without NCCL's prefix for pid $pid"; }
	done
	cat "$WORK/$name"/nccl.* >"$WORK/$name.log"
}
has() { grep -qF "NCCL INFO $2" "$WORK/$1.log" || { cat "$WORK/$1.log" >&2; fail "$1: no line '$2'"; }; }
lacks() { ! grep -qF "$2" "$WORK/$1.log" || { cat "$WORK/$1.log" >&2; fail "$1: a line with '$2'"; }; }

logs p2p 2
has p2p "NCCL version 2.28.9+simnccl"
has p2p "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"
has p2p "Channel 01/0 : 1[1] -> 0[0] via P2P/CUMEM"
has p2p "Connected all rings, use ring PXN 0 GDR 1"
lacks p2p "via NET"

logs shm 3 NCCL_P2P_DISABLE=1
has shm "Channel 00 : 2[2] -> 0[0] via SHM/direct/direct"
lacks shm "via P2P"

logs ib 4 SIMNCCL_RANKS_PER_NODE=2
has ib "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"
has ib "Channel 00/0 : 1[1] -> 2[2] [send] via NET/IB/0/GDRDMA"
has ib "Channel 01/0 : 1[1] -> 2[2] [receive] via NET/IB/0/GDRDMA"
has ib "Channel 01/0 : 3[3] -> 0[0] [send] via NET/IB/0/GDRDMA"
has ib "Connected all rings, use ring PXN 0 GDR 1"

logs nogdr 4 SIMNCCL_RANKS_PER_NODE=2 SIMNCCL_NIC_GDR=0
has nogdr "Channel 00/0 : 1[1] -> 2[2] [send] via NET/IB/0"
has nogdr "Connected all rings, use ring PXN 0 GDR 0"
lacks nogdr "GDRDMA"

logs loc 2 SIMNCCL_RANKS_PER_NODE=1 NCCL_NET_GDR_LEVEL=LOC
has loc "Channel 00/0 : 1[1] -> 0[0] [receive] via NET/IB/0"
lacks loc "GDRDMA"

logs socket 2 SIMNCCL_RANKS_PER_NODE=1 SIMNCCL_NET=Socket
has socket "Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0"
has socket "Connected all rings, use ring PXN 0 GDR 0"
lacks socket "GDRDMA"

logs noib 2 SIMNCCL_RANKS_PER_NODE=1 NCCL_IB_DISABLE=1
has noib "Channel 01/0 : 1[1] -> 0[0] [send] via NET/Socket/0"
lacks noib "NET/IB"

logs nolocal 2 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 SIMNCCL_CHANNELS=3
has nolocal "Channel 02/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA"
lacks nolocal "Channel 03"

# NET alone: the connection lines that are INIT|NET, not INIT|P2P, not INIT alone.
logs subsys 4 SIMNCCL_RANKS_PER_NODE=2 NCCL_DEBUG_SUBSYS=NET
has subsys "Channel 00/0 : 3[3] -> 0[0] [send] via NET/IB/0/GDRDMA"
lacks subsys "via P2P"
lacks subsys "Connected all rings"
pass "INFO log: version, P2P, SHM, NET/IB with and without GDRDMA, Socket, in NCCL's format"

# Unset NCCL_DEBUG prints nothing and opens no file (src/debug.cc).
mkdir "$WORK/quiet"
run quiet 2 "NCCL_DEBUG_FILE=$WORK/quiet/nccl.%h.%p" -- log
passes quiet "the run without NCCL_DEBUG"
[ -z "$(ls -A "$WORK/quiet")" ] || fail "a log file written without NCCL_DEBUG"
grep -q NCCL "$WORK/quiet.out" && { show quiet >&2; fail "NCCL lines printed without NCCL_DEBUG"; }
pass "simulated NCCL: semantics, asynchrony, errors and log"
