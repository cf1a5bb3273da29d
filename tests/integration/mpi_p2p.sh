#!/bin/bash
# The MPI point-to-point binaries under mpirun with 2 and 4 ranks, host and
# pinned memory, validation on; every CSV row checked against the schema.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

csv=$WORK/p2p.csv
sizes=8,1K,64K,1M
for np in 2 4; do
	for mem in host pinned; do
		for b in latency bw bibw; do
			out=$WORK/$b-$np-$mem.out
			mpi "$np" "$top_builddir/mpi/gdrb_mpi_$b" -m $sizes -c -t 0.02 -n 200 \
				--mem "$mem" --csv "$csv" >"$out" 2>"$WORK/err" ||
				{ cat "$out" "$WORK/err"; fail "gdrb_mpi_$b np=$np mem=$mem exited $?"; }
			grep -q "^# layer mpi, mem $mem" "$out" || fail "$b: header lacks the memory kind"
			grep -q "^# MPI: " "$out" || fail "$b: header lacks the MPI library"
			[ "$(grep -vc '^#' "$out")" -eq $((np / 2 == 1 ? 4 : 12)) ] ||
				{ cat "$out"; fail "$b np=$np: wrong number of table rows"; }
			pass "gdrb_mpi_$b np=$np mem=$mem"
		done
	done
done
# 3 binaries x 2 kinds x 4 sizes x (1 row for 2 ranks + 3 rows for 4 ranks)
csv_check -v status=ok -v rows=96 "$csv" || fail "CSV rows do not match the schema"
csv_has "$csv" benchmark=mpi_bw layer=mpi mem=pinned path=direct reg=host stage_chunk= stage_slots= \
	'window~[0-9]*' buffers=slots pair=1:3 size_bytes=1048576 || fail "no per-pair row for 4 ranks"
csv_has "$csv" benchmark=mpi_latency layer=mpi mem=host path=direct reg=host stage_chunk= stage_slots= window= \
	buffers= pair=all size_bytes=8 'iterations~[0-9]*' ranks=2 hosts=1 gpu= nic= link_layer= link_gbps= \
	gpu_nic_dist= 'cpu_initiator_pct~[0-9.]*' 'cpu_responder_pct~[0-9.]*' status=ok errors=0 'quality~[a-z+-]*' \
	transport=unknown gdr_connections= 'library~Open MPI.*|MPICH.*|.+' || fail "2-rank latency row missing or wrong"
pass "CSV: 96 rows, schema and values checked"

# CPU time per side over the timed part: a number with one decimal, never above
# 101 % (the benchmark thread's CPU time within the wall time around it, 1 for the
# clocks' skew; the first size of a run read 160-300 % when every thread of the
# process counted); on a loaded machine a rank may be descheduled: no lower bound.
csv_col "$csv" cpu_initiator_pct,cpu_responder_pct | awk -F'\t' '{ for (k = 1; k <= 2; k++)
		if ($k !~ /^[0-9]+\.[0-9]$/ || $k + 0 > 101) { print "implausible CPU %: " $0; bad = 1 } }
	END { exit bad || NR != 96 }' || fail "cpu_initiator_pct/cpu_responder_pct out of [0, 101]"
pass "CPU time per side: every row has both, in [0, 101] %"
# csv_check refuses a CPU figure that is not a percentage, or one on a row without that side.
head -n 2 "$csv" >"$WORK/one.csv"
for bad in 'abc' '-5' '150.0' ''; do
	csv_set "$WORK/one.csv" cpu_responder_pct "$bad" >"$WORK/badcpu.csv"
	! csv_check "$WORK/badcpu.csv" >/dev/null || fail "csv_check accepts cpu_responder_pct '$bad'"
done
pass "csv_check refuses cpu_responder_pct 'abc', '-5', '150.0' and empty on a measured point-to-point row"
# csv_check refuses on an MPI row a transport that is not UCX's names (or unknown), unknown
# without its reason, and NCCL's GPUDirect connections.
csv_set "$WORK/one.csv" transport x >"$WORK/badlib.csv"
! csv_check "$WORK/badlib.csv" >/dev/null || fail "csv_check accepts transport x on an mpi row"
csv_set "$WORK/one.csv" transport direct >"$WORK/badlib.csv"
! csv_check "$WORK/badlib.csv" >/dev/null || fail "csv_check accepts transport 'direct' on an mpi row"
csv_set "$WORK/one.csv" note "" >"$WORK/badlib.csv"
! csv_check "$WORK/badlib.csv" >/dev/null || fail "csv_check accepts transport unknown without its reason"
csv_set "$WORK/one.csv" gdr_connections 1/2 >"$WORK/badlib.csv"
! csv_check "$WORK/badlib.csv" >/dev/null || fail "csv_check accepts gdr_connections on an mpi row"
csv_set "$WORK/one.csv" transport shm+cuda_ipc >"$WORK/badlib.csv"
csv_check "$WORK/badlib.csv" >/dev/null || fail "csv_check refuses transport shm+cuda_ipc on an mpi row"
pass "csv_check on an mpi row: transport x, direct, unknown without a reason and gdr_connections refused"
