#!/bin/bash
# Every collective under mpirun with 2, 3 and 4 ranks (odd counts too),
# validation on, every CSV row checked; then --in-place (allreduce: both), every dtype and op,
# and the bus-bandwidth factors.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

colls="allreduce allgather reduce_scatter alltoall bcast reduce gather scatter"
csv=$WORK/coll.csv
run() { # NP BINARY ARGS...
	local np=$1 b=$2
	shift 2
	mpi "$np" "$top_builddir/mpi/gdrb_mpi_$b" -c -t 0.01 -n 30 -w 2 --csv "$csv" "$@" \
		>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_$b np=$np $*"; }
}

rows=0
for np in $(rank_counts); do
	for b in $colls; do
		run "$np" "$b" -m 8,1K,64K
		rows=$((rows + 3))
	done
	run "$np" barrier
	rows=$((rows + 1))
	pass "np=$np: every collective validated"
done
csv_check -v status=ok -v rows=$rows "$csv" || fail "CSV rows"
# Odd rank counts round blocked sizes down to whole blocks: 1 KiB over 3 ranks is 1023 B.
agg=(layer=mpi mem=host path=direct reg=host stage_chunk= stage_slots= window= buffers= pair=all)
csv_has "$csv" benchmark=mpi_allgather "${agg[@]}" size_bytes=1023 || fail "no rounded size for 3 ranks"
csv_has "$csv" benchmark=mpi_allreduce "${agg[@]}" size_bytes=1024 || fail "allreduce size"
csv_has "$csv" benchmark=mpi_barrier "${agg[@]}" size_bytes=0 || fail "barrier row"
# busbw = algbw x 2(n-1)/n for allreduce with 3 ranks, (n-1)/n for allgather
# (to the CSV's 9 decimals).
{
	csv_col "$csv" algbw_GBps,busbw_GBps benchmark=mpi_allreduce ranks=3 | sed 's/^/4\/3\t/'
	csv_col "$csv" algbw_GBps,busbw_GBps benchmark=mpi_allgather ranks=3 | sed 's/^/2\/3\t/'
} | awk -F'\t' '{ split($1, q, "/"); d = $3 - $2 * q[1] / q[2]; bad += d < -2e-9 || d > 2e-9; n++ }
	END { exit (bad || n != 6) }' ||
	fail "bus factors"
pass "sizes rounded, bus factors 2(n-1)/n and (n-1)/n"

: >"$csv.ip"
for b in allreduce allgather reduce_scatter alltoall reduce gather scatter; do
	for root in 0 2; do
		case $b in reduce | gather | scatter) extra=(--root "$root") ;; *) extra=(); [ "$root" = 2 ] && continue ;; esac
		# allreduce each size out of place, then in place; the others in place only.
		[ "$b" = allreduce ] && extra=(both)
		mpi 3 "$top_builddir/mpi/gdrb_mpi_$b" -m 12,3K -c -t 0.01 -n 30 --in-place "${extra[@]}" \
			--csv "$csv.ip" >"$WORK/out" 2>"$WORK/err" ||
			{ cat "$WORK/err"; fail "gdrb_mpi_$b --in-place ${extra[*]}"; }
	done
done
csv_check -v status=ok -v rows=22 "$csv.ip" || fail "in-place rows"
[ "$(csv_count "$csv.ip" placement=in-place)" -eq 20 ] && [ "$(csv_count "$csv.ip" placement=out-of-place)" -eq 2 ] ||
	{ cat "$csv.ip"; fail "not 20 rows in place and allreduce's 2 out of place"; }
[ "$(csv_col "$csv.ip" placement benchmark=mpi_allreduce size_bytes=3072 | tr '\n' ' ')" = "out-of-place in-place " ] ||
	{ cat "$csv.ip"; fail "--in-place both: not a row out of place, then one in place"; }
pass "--in-place, roots 0 and 2; --in-place both"

# Each type's MPI mapping once and each op's at least once (the values and expected results
# are one table for every type and op: common/core/coll/coll_data.c), and every op on int8, the
# narrowest type, where a sum or product would overflow first.
for pair in int8:sum int8:prod int8:min int8:max int32:prod int64:min float:max double:sum; do
	dt=${pair%:*} op=${pair#*:}
	mpi 3 "$top_builddir/mpi/gdrb_mpi_allreduce" -m 8,4K -c -t 0.005 -n 20 --dtype "$dt" \
		--op "$op" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "allreduce $dt $op"; }
	grep -q "^# mpi_allreduce: --op $op --dtype $dt;" "$WORK/out" || fail "header lacks $op $dt"
done
mpi 3 "$top_builddir/mpi/gdrb_mpi_reduce_scatter" -m 48,6K -c -t 0.005 -n 20 --dtype int8 --op sum \
	>/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "reduce_scatter int8"; }
pass "every dtype and op (each op on int8), exact results"
