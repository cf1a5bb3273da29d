#!/bin/bash
# The NCCL binaries on the simulated NCCL (tests/support/simnccl) over the simulated GPU,
# one GPU a rank: every gdrb_nccl_* at 2, 3 and 4 ranks (sendrecv at 2 and 4), validated,
# every CSV row checked (layer nccl, path direct, reg nccl, the transport columns from the
# log, the library simulated); in place, and out of place then in place (--in-place both: two
# rows a size); every --dtype, every --op; a flipped element, out of place and in place,
# caught; GPUDirect on and off side by side on a simulated two-node IB fabric, with the
# connections' /GDRDMA counted from NCCL's log; a NIC without GPUDirect, sockets and
# --nccl-net-only named in the rows; a user's NCCL_DEBUG_FILE without %p made one file per rank,
# each rank's connections counted apart (rank 1's fallback without GPUDirect stays in the sum).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

need_mpi
use_simnccl

csv=$WORK/nccl.csv
run() { # NP BINARY ARGS...: nccl_run with 20 iterations, the simulated GPU silent
	nccl_run "$1" "$2" -n 20 "${@:3}"
	no_simgpu_errors "$WORK/err"
}

rows=0
for np in $(rank_counts); do
	for b in allreduce allgather reduce_scatter alltoall bcast reduce sendrecv; do
		# sendrecv pairs ranks; 4 ranks for the collectives that split blocks or exchange.
		case $b$np in sendrecv3 | allgather4 | bcast4 | reduce4) continue ;; esac
		run "$np" "$b" -m 8,4K,1M
		rows=$((rows + 3))
	done
done
csv_check -v status=ok -v rows=$rows "$csv" || fail "CSV rows"
agg=(layer=nccl mem=device path=direct reg=nccl pair=all transport=P2P gdr_connections=0/0)
[ "$(csv_count "$csv" "${agg[@]}")" -eq "$rows" ] || { cat "$csv"; fail "rows lack layer nccl, path direct, reg nccl, transport P2P, 0/0"; }
csv_col "$csv" library | grep -qx 'NCCL [0-9.]* (simulated)' || fail "the library column does not say the NCCL was simulated"
# Blocked sizes round down to whole blocks: 1 MiB over 3 ranks is 1048575 B.
csv_has "$csv" benchmark=nccl_allgather ranks=3 size_bytes=1048575 || fail "no rounded size for 3 ranks"
# busbw = algbw x 2(n-1)/n for allreduce with 3 ranks, 1 for sendrecv.
{
	csv_col "$csv" algbw_GBps,busbw_GBps benchmark=nccl_allreduce ranks=3 | sed 's/^/4\/3\t/'
	csv_col "$csv" algbw_GBps,busbw_GBps benchmark=nccl_sendrecv | sed 's/^/1\/1\t/'
} | awk -F'\t' '{ split($1, q, "/"); d = $3 - $2 * q[1] / q[2]; bad += d < -2e-9 || d > 2e-9; n++ }
	END { exit (bad || n < 6) }' ||
	fail "bus factors"
grep -q '^# NCCL 2.28.9 (simulated): the test suite.s simulated NCCL' "$WORK/out" || { cat "$WORK/out"; fail "the header does not say the NCCL is simulated"; }
pass "7 binaries at 2, 3 and 4 ranks: $rows rows validated, transport P2P from the log, simulated NCCL named, bus factors"

# --in-place alone is yes; both measures each size out of place, then in place, a row each.
: >"$csv"
run 3 allgather -m 12,3K --in-place
grep -q 'in-place yes' "$WORK/out" || fail "the header does not say in place"
run 3 allreduce -m 12,3K --in-place both
run 3 reduce_scatter -m 12,3K --in-place=both
run 3 reduce -m 12,3K --in-place both
grep -q 'in-place both' "$WORK/out" || fail "the header does not say --in-place both"
grep -q '^# placements: out-of-place, then in-place' "$WORK/out" || { cat "$WORK/out"; fail "the header does not say the placements"; }
[ "$(grep -c '^ *3KiB  *out-of-place ' "$WORK/out")" -eq 1 ] && [ "$(grep -c '^ *3KiB  *in-place ' "$WORK/out")" -eq 1 ] ||
	{ cat "$WORK/out"; fail "the table does not show a line for each placement"; }
csv_check -v status=ok -v rows=14 "$csv" || fail "in-place rows"
[ "$(csv_count "$csv" benchmark=nccl_allgather placement=in-place)" -eq 2 ] || { cat "$csv"; fail "--in-place alone: not in place"; }
for b in allreduce reduce_scatter reduce; do
	for s in 12 3072; do
		[ "$(csv_col "$csv" placement "benchmark=nccl_$b" size_bytes=$s | tr '\n' ' ')" = "out-of-place in-place " ] ||
			{ cat "$csv"; fail "--in-place both: nccl_$b at $s B is not one row out of place, then one in place"; }
	done
done
pass "--in-place (yes) and --in-place both: allreduce, allgather, reduce_scatter (output at the rank's block), reduce; two rows a size"

# Pinned host memory, which NCCL's kernels reach as well.
: >"$csv"
run 2 allreduce -m 8,64K --mem pinned
run 2 sendrecv -m 8,64K --mem pinned
csv_check -v status=ok -v rows=4 "$csv" || fail "pinned rows"
[ "$(csv_count "$csv" mem=pinned path=direct reg=nccl)" -eq 4 ] || { cat "$csv"; fail "--mem pinned: rows not mem pinned"; }
pass "--mem pinned: allreduce and sendrecv validated"

: >"$csv"
ops=(sum prod min max)
i=0
for dt in int8 int32 int64 float double half bfloat16; do
	op=${ops[i % 4]}
	i=$((i + 1))
	run 3 allreduce -m 8,4K --dtype "$dt" --op "$op"
	grep -q "^# nccl_allreduce: --op $op --dtype $dt;" "$WORK/out" || fail "header lacks $op $dt"
done
run 2 reduce_scatter -m 16,4K --dtype half --op max
csv_check -v status=ok -v rows=16 "$csv" || fail "dtype rows"
pass "every --dtype (int8 int32 int64 float double half bfloat16) and --op, exact results"

# A flipped element on rank 1 is caught, named and counted, out of place and in place alike.
: >"$csv"
GDRB_TEST_HOOKS=1 GDRB_INJECT_CORRUPTION=1 mpi 2 "$bin/gdrb_nccl_allreduce" -m 4K -c -t 0.01 -n 5 \
	--in-place both --csv "$csv" >"$WORK/out" 2>"$WORK/err" && fail "a corrupted element was not caught (exit 0)"
grep -q 'element .* of the result is' "$WORK/err" || { cat "$WORK/err"; fail "the wrong element is not named"; }
grep -q 'wrong byte(s) at size 4096 on the direct path, in-place (status invalid-data)' "$WORK/err" ||
	{ cat "$WORK/err"; fail "the in-place run's wrong elements are not said"; }
csv_check -v status=invalid-data -v rows=2 "$csv" || fail "the corrupted rows are not invalid-data"
csv_has "$csv" placement=in-place status=invalid-data || { cat "$csv"; fail "the in-place row is not invalid-data"; }
pass "a flipped element on rank 1, out of place and in place: exit 1, named, both rows invalid-data"

# Two simulated nodes over IB (a rank a node): GPUDirect on and off in two launches, the
# connections' /GDRDMA counted from every rank's log.
: >"$csv"
export SIMNCCL_RANKS_PER_NODE=1
run 2 allreduce -m 8,1M --nccl-gdr on
run 2 allreduce -m 8,1M --nccl-gdr off
grep -q 'NCCL_NET_GDR_LEVEL=LOC' "$WORK/out" || fail "the header does not show NCCL_NET_GDR_LEVEL=LOC"
grep -q '^# from 8B on: transport NET/IB, GPUDirect RDMA on 0/8 network connections$' "$WORK/out" ||
	{ cat "$WORK/out"; fail "the table does not say the transport and its GPUDirect connections"; }
[ "$(csv_count "$csv" path=direct transport=NET/IB gdr_connections=8/8)" -eq 2 ] ||
	{ cat "$csv"; fail "--nccl-gdr on: not NET/IB with 8 of 8 connections GDRDMA"; }
[ "$(csv_count "$csv" path=staged transport=NET/IB gdr_connections=0/8)" -eq 2 ] ||
	{ cat "$csv"; fail "--nccl-gdr off: not staged NET/IB with 0 of 8 GDRDMA"; }
pass "GPUDirect on and off: direct rows NET/IB 8/8 GDRDMA, staged rows NET/IB 0/8"

: >"$csv"
SIMNCCL_NIC_GDR=0 run 2 allreduce -m 8
csv_has "$csv" path=direct transport=NET/IB gdr_connections=0/8 ||
	{ cat "$csv"; fail "a NIC without GPUDirect: not 0 of 8"; }
grep -q 'GPUDirect allowed but NCCL used NET/IB without GDRDMA on 8 of 8 connections' "$csv" ||
	{ cat "$csv"; fail "the note does not say GPUDirect was allowed but not used"; }
SIMNCCL_NET=Socket run 2 sendrecv -m 8
csv_has "$csv" benchmark=nccl_sendrecv transport=NET/Socket || { cat "$csv"; fail "sockets not named"; }
unset SIMNCCL_RANKS_PER_NODE
run 2 allreduce -m 8 --nccl-net-only
csv_has "$csv" transport=NET/IB gdr_connections=8/8 || { cat "$csv"; fail "--nccl-net-only: ranks of one node not through the network"; }
grep -q 'NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1' "$csv" || fail "--nccl-net-only: the variables are not in the note"
pass "a NIC without GPUDirect named in the note, sockets, --nccl-net-only through NET/IB"

# A user's own NCCL log settings kept: their file (%h and %p expanded as NCCL does) is read
# where it is and left there; their INFO level without a file still reaches them (stderr).
: >"$csv"
NCCL_DEBUG=INFO NCCL_DEBUG_FILE=$WORK/user.%h.%p.log run 2 allreduce -m 8
csv_has "$csv" transport=P2P gdr_connections=0/0 || { cat "$csv"; fail "the user's NCCL_DEBUG_FILE was not read"; }
[ "$(find "$WORK" -name 'user.*.log' | wc -l)" -eq 2 ] || fail "the user's two log files are not kept"
NCCL_DEBUG=INFO run 2 allreduce -m 8
grep -q 'NCCL INFO Channel 00/.* via P2P' "$WORK/err" || { cat "$WORK/err"; fail "NCCL_DEBUG=INFO without a file: the log did not reach stderr"; }
pass "a user's NCCL_DEBUG_FILE read where it is and kept; NCCL_DEBUG=INFO without a file shown on stderr"

# A user's NCCL_DEBUG_FILE without %p names one file for every rank: each rank is given its
# own (NAME.<pid>, said once) and reads only its own lines. Rank 1's NIC has no GPUDirect, on
# a node of its own: its 4 connections without GDRDMA stay in the sum beside rank 0's 4 with.
: >"$csv"
rm -f "$WORK"/shared.log*
export SIMNCCL_RANKS_PER_NODE=1
NCCL_DEBUG_FILE=$WORK/shared.log mpi 1 "$bin/gdrb_nccl_allreduce" -c -t 0.01 -n 20 -m 8 --csv "$csv" : \
	-np 1 -x SIMNCCL_NIC_GDR=0 "$bin/gdrb_nccl_allreduce" -c -t 0.01 -n 20 -m 8 --csv "$csv" \
	>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "a shared NCCL_DEBUG_FILE: the run failed"; }
unset SIMNCCL_RANKS_PER_NODE
csv_has "$csv" transport=NET/IB gdr_connections=4/8 || { cat "$csv" "$WORK"/shared.log*; fail "a shared NCCL_DEBUG_FILE: rank 1's connections without GPUDirect not counted apart (not 4/8)"; }
grep -q 'without GDRDMA on 4 of 8 connections' "$csv" || { cat "$csv"; fail "a shared NCCL_DEBUG_FILE: the note does not say 4 of 8 without GDRDMA"; }
[ "$(find "$WORK" -maxdepth 1 -name 'shared.log.[0-9]*' | wc -l)" -eq 2 ] && [ ! -e "$WORK/shared.log" ] ||
	{ ls -l "$WORK"; fail "a shared NCCL_DEBUG_FILE: not one file per rank, NAME.<pid>"; }
[ "$(grep -c "NCCL_DEBUG_FILE '.*shared.log' has no %p, so every rank would write one file: each rank writes its own, '.*shared.log.%p'" "$WORK/err")" -eq 1 ] ||
	{ cat "$WORK/err"; fail "a shared NCCL_DEBUG_FILE: not said once"; }
pass "NCCL_DEBUG_FILE without %p: one file per rank (NAME.<pid>), said once; rank 1's fallback without GPUDirect counted (4/8)"
