#!/bin/bash
# What NCCL chose, on the simulated NCCL: the CSV algorithm, protocol and channels from rank
# 0's TUNING lines with --nccl-tuning-log (simnccl writes NCCL 2.24's form), empty with the
# note saying why without it or for send/receive (never a guess), from NCCL_ALGO/NCCL_PROTO
# where set; a user's NCCL_DEBUG_SUBSYS without INIT and NET still gives the connections
# (the subsystems added, said once); --nccl-net-only turns NVLS off too.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

need_mpi
use_simnccl

csv=$WORK/nccl.csv
run() { # NP BINARY ARGS...: nccl_run with 5 iterations
	nccl_run "$1" "$2" -n 5 "${@:3}"
}

: >"$csv"
run 2 allreduce -m 8,64K --nccl-tuning-log --in-place both
[ "$(csv_count "$csv" algorithm=Ring protocol=Simple channels=2)" -eq 4 ] ||
	{ cat "$csv"; fail "--nccl-tuning-log: rows not Ring, Simple, 2 channels"; }
: >"$csv"
SIMNCCL_ALGO=NVLS_TREE SIMNCCL_CHANNELS=5 run 2 allgather -m 1K --nccl-tuning-log
csv_has "$csv" algorithm=NVLSTree protocol=Simple channels=5 ||
	{ cat "$csv"; fail "--nccl-tuning-log: NCCL's NVLS_TREE not read as NVLSTree with 5 channels"; }
pass "--nccl-tuning-log: algorithm, protocol and channels from rank 0's TUNING lines, as NCCL_ALGO spells them"

: >"$csv"
run 2 sendrecv -m 8 --nccl-tuning-log
csv_has "$csv" algorithm= protocol= || { cat "$csv"; fail "send/receive: an algorithm where NCCL says none"; }
grep -q 'algorithm unknown: no TUNING line in NCCL.s log at this size' "$csv" ||
	{ cat "$csv"; fail "send/receive: the note does not say why the algorithm is unknown"; }
: >"$csv"
run 2 allreduce -m 8
csv_has "$csv" algorithm= protocol= || { cat "$csv"; fail "without the TUNING log: an algorithm guessed"; }
grep -q "algorithm unknown: NCCL's TUNING log is off" "$csv" || { cat "$csv"; fail "without the TUNING log: the note does not say why"; }
: >"$csv"
NCCL_ALGO=Ring NCCL_PROTO=LL128 run 2 allreduce -m 8
csv_has "$csv" algorithm=Ring protocol=LL128 || { cat "$csv"; fail "NCCL_ALGO/NCCL_PROTO not in the columns"; }
grep -q 'algorithm and protocol as set in the environment' "$csv" || { cat "$csv"; fail "NCCL_ALGO: the note does not say where it came from"; }
: >"$csv"
NCCL_ALGO='allreduce:tree;allgather:ring' run 2 allreduce -m 8
csv_has "$csv" algorithm= || { cat "$csv"; fail "a per-collective NCCL_ALGO list read as one algorithm"; }
pass "no TUNING line (send/receive), the TUNING log off: empty columns and the reason; NCCL_ALGO/NCCL_PROTO of one name used and said"

# A user's NCCL_DEBUG_SUBSYS without INIT and NET: the connections are still read.
for subsys in GRAPH '^INIT,NET,ENV'; do
	: >"$csv"
	NCCL_DEBUG_SUBSYS=$subsys run 2 allreduce -m 8
	csv_has "$csv" transport=P2P || { cat "$csv"; fail "NCCL_DEBUG_SUBSYS=$subsys: the connection lines were lost"; }
	[ "$(grep -c "NCCL_DEBUG_SUBSYS=.* \(lacks\|excludes\) INIT,NET" "$WORK/err")" -eq 1 ] ||
		{ cat "$WORK/err"; fail "NCCL_DEBUG_SUBSYS=$subsys: the subsystems added not said once"; }
done
pass "NCCL_DEBUG_SUBSYS without INIT and NET (GRAPH, ^INIT,NET,ENV): INIT and NET added, said once, transport read"

: >"$csv"
run 2 allreduce -m 8 --nccl-net-only
grep -q '^# .*--nccl-net-only: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0' "$WORK/out" ||
	{ cat "$WORK/out"; fail "--nccl-net-only: the header does not say NVLS is off"; }
pass "--nccl-net-only: NCCL_NVLS_ENABLE=0 too, in the header"
