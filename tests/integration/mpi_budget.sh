#!/bin/bash
# What -t guarantees: a size (per path) takes at most 10 x -t, warm-up and the
# ranks' agreements included, plus one iteration; a size whose first, cold
# iteration is longer than that, two (the cold one and the one timed iteration
# a row needs). Measured on the wall clock around whole runs, less a baseline
# run of the same sizes without the injected load (MPI start-up and the real
# work), plus 2 s for a loaded machine. The plan itself, on a fake clock with
# agreements that take longer than the iterations: test_figures' "plan" cases.
#  - 300 ms every iteration (GDRB_INJECT_STALL=300000/1) at -t 0.02: two
#    iterations a size, not three (no second warm-up iteration once the cold
#    one has passed the hard stop).
#  - 200 ms every 10th iteration, --min-iters 200 at -t 0.1: the minimum
#    cannot be had, the size stops at 10 x -t;
#  - two busy loops beside, 14 sizes at -t 0.05 (the baseline: one size).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# The GDRB_INJECT_* test hooks below run only with the test switch (common/util/gdrb_inject.h).
export GDRB_TEST_HOOKS=1
need_mpi

busy=()
cleanup() {
	for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
now() { date +%s.%N; }
# calc EXPR: EXPR's value (awk's arithmetic, so that no bc is needed).
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
# timed_run STALL ARGS...: gdrb_mpi_latency with GDRB_INJECT_STALL=STALL (none if
# empty), its wall seconds in took.
timed_run() {
	local stall=$1 start
	shift
	rm -f "$WORK/b.csv"
	start=$(now)
	mpi 2 -x GDRB_INJECT_STALL="$stall" "$top_builddir/mpi/gdrb_mpi_latency" --csv "$WORK/b.csv" "$@" \
		>"$WORK/out" 2>"$WORK/err" ||
		{ cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_latency $*"; }
	took=$(calc "$(now) - $start")
}
# over WALL BASE BOUND: true when WALL - BASE > BOUND + 2.
over() { awk -v wall="$1" -v base="$2" -v bound="$3" 'BEGIN { exit !(wall - base > bound + 2) }'; }
# within WALL BASE BOUND WHAT [STALL ARGS...]: WALL - BASE <= BOUND + 2. A machine whose load
# rose between the baseline and the run can push a right run over (4.2 s separate the first
# case's right and wrong runs): over the bound, a case given its STALL and ARGS (the same for
# both runs) is measured once more, and fails if over again; a run that takes one iteration too
# many is over every time.
within() {
	local wall=$1 base=$2 bound=$3 what=$4
	shift 4
	if [ $# -gt 0 ] && over "$wall" "$base" "$bound"; then
		local stall=$1
		shift
		echo "$what: $wall s, baseline $base s: over the bound $bound s + 2 s; measuring again"
		timed_run "" "$@"
		base=$took
		timed_run "$stall" "$@"
		wall=$took
	fi
	over "$wall" "$base" "$bound" &&
		{ cat "$WORK/out"; fail "$what: $wall s, baseline $base s: more than the bound $bound s + 2 s"; }
	pass "$what: $wall s (baseline $base s, bound $bound s + 2 s)"
}

# 14 sizes, each iteration 300 ms, 10 x -t = 0.2 s: two iterations a size.
timed_run "" -m 8:64K -t 0.02
base=$took
timed_run 300000/1 -m 8:64K -t 0.02
wall=$took
within "$wall" "$base" "$(calc "14 * 2 * 0.3")" "300 ms iterations, -t 0.02, 14 sizes" 300000/1 -m 8:64K -t 0.02

# 3 sizes, 10 x 0.1 s each plus one 200 ms iteration (a GDRB_MAX_STRETCH of 20 fails here).
timed_run "" -m 8,16,32 -t 0.1 --min-iters 200
base=$took
timed_run 200000/10 -m 8,16,32 -t 0.1 --min-iters 200
wall=$took
within "$wall" "$base" "$(calc "3 * (10 * 0.1 + 0.2)")" "200 ms every 10th iteration, --min-iters 200, -t 0.1" \
	200000/10 -m 8,16,32 -t 0.1 --min-iters 200

# Two busy loops beside, no injected stall: 14 sizes, 10 x 0.05 s each plus an iteration and, on
# a loaded machine, the batches' agreements and the gathering of results (0.2 s a size, generous).
for _ in 1 2; do
	(while :; do :; done) &
	busy+=($!)
done
timed_run "" -m 8 -t 0.05
base=$took
timed_run "" -m 8:64K -t 0.05
wall=$took
within "$wall" "$base" "$(calc "14 * (10 * 0.05 + 0.2)")" "-t 0.05, 14 sizes, two busy loops beside"
