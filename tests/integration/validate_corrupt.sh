#!/bin/bash
# Validation must catch corrupted data: one byte of every received message is
# flipped on one rank (GDRB_INJECT_CORRUPTION=RANK); each binary must report
# invalid-data in the table and the CSV and exit 1. The same run without the
# fault must pass, so it is the fault that is caught.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# The GDRB_INJECT_* test hooks below run only with the test switch (common/util/gdrb_inject.h).
export GDRB_TEST_HOOKS=1
need_mpi

for b in latency bw bibw; do
	for victim in 0 1; do
		csv=$WORK/$b-$victim.csv
		# rank 0 receives nothing in mpi_bw: corrupting there must change nothing
		expect=1
		[ "$b" = bw ] && [ "$victim" = 0 ] && expect=0
		GDRB_INJECT_CORRUPTION=$victim mpi 2 -x GDRB_INJECT_CORRUPTION \
			"$top_builddir/mpi/gdrb_mpi_$b" -m 8,4K,1M -c -t 0.02 -n 50 --csv "$csv" \
			>"$WORK/out" 2>"$WORK/err"
		rc=$?
		if [ "$expect" = 1 ]; then
			[ "$rc" -ne 0 ] || fail "gdrb_mpi_$b: corruption on rank $victim not caught (exit 0)"
			csv_check -v status=invalid-data -v rows=3 "$csv" ||
				fail "gdrb_mpi_$b: CSV rows are not invalid-data"
			grep -q "INVALID" "$WORK/out" || fail "gdrb_mpi_$b: table does not say INVALID"
			grep -q "validation: 1 wrong byte(s) from rank" "$WORK/err" ||
				{ cat "$WORK/err"; fail "gdrb_mpi_$b: no mismatch description"; }
			pass "gdrb_mpi_$b: corruption on rank $victim caught (exit $rc)"
		else
			[ "$rc" -eq 0 ] || fail "gdrb_mpi_$b: false alarm on the sending rank"
			csv_check -v status=ok -v rows=3 "$csv" || fail "gdrb_mpi_$b: rows not ok"
			pass "gdrb_mpi_$b: rank 0 only sends, nothing to corrupt, no false alarm"
		fi
	done
	mpi 2 "$top_builddir/mpi/gdrb_mpi_$b" -m 8,4K,1M -c -t 0.02 -n 50 --csv "$WORK/clean.csv" \
		>/dev/null 2>"$WORK/err" || { cat "$WORK/err"; fail "gdrb_mpi_$b: clean run failed"; }
done
csv_check -v status=ok -v rows=9 "$WORK/clean.csv" || fail "clean runs not ok"
pass "clean runs validate"

# Which iterations are checked: the corrupted byte counts once per checked iteration. 4 warm-up
# and 20 timed ones: -c (untimed) checks the warm-up's and one after the timed ones (5), -c every
# all of them (24), --validate=no none (and the run passes).
for mode in untimed every no; do
	GDRB_INJECT_CORRUPTION=1 mpi 2 -x GDRB_INJECT_CORRUPTION "$top_builddir/mpi/gdrb_mpi_latency" \
		-m 4K --validate="$mode" -w 4 -n 20 -t 5 --csv "$WORK/when-$mode.csv" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	case $mode in
	untimed) want=5 status=invalid-data code=1 ;;
	every) want=24 status=invalid-data code=1 ;;
	no) want=0 status=ok code=0 ;;
	esac
	[ "$rc" -eq "$code" ] || { cat "$WORK/err"; fail "--validate=$mode: exit $rc, not $code"; }
	csv_check -v status="$status" -v rows=1 "$WORK/when-$mode.csv" || fail "--validate=$mode: rows not $status"
	got=$(csv_col "$WORK/when-$mode.csv" errors)
	[ "$got" = "$want" ] || fail "--validate=$mode: $got wrong bytes counted, not $want (one per checked iteration)"
	grep -q "^# clock .*validation $( [ $mode = no ] && echo off || echo on)" "$WORK/out" ||
		fail "--validate=$mode: the header does not say when it checks"
	pass "--validate=$mode: $want of 24 iterations checked (the timed ones $( [ $mode = every ] || echo un)touched)"
done
