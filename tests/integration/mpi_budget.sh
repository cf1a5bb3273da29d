#!/bin/bash
# What -t guarantees: a size (per path) stops at 10 x -t on the slowest rank's clock, warm-up,
# fills, checks and the ranks' agreements included: no timed batch begins past it, but the
# one timed iteration a row needs where the warm-up's cold first iteration already passed it.
# Read from the driver's own account of each size (-v: its iterations, when its last batch
# began and when it ended, on the clock the stop is checked on), so that a loaded machine,
# which stretches wall time, cannot fail or pass it; that clock is held to what the size
# really spent (every injected stall counted), and the sizes together to the run's wall time.
# The plan on a fake clock, agreements longer than the iterations included: test_figures'
# "plan" cases.
#  - 300 ms every iteration (GDRB_INJECT_STALL=300000/1) at -t 0.02: two iterations a size,
#    the cold one and one timed (no second warm-up iteration past the stop);
#  - 200 ms every 10th iteration, --min-iters 200 at -t 0.1: the minimum cannot be had, the
#    size stops at 10 x -t;
#  - two busy loops beside, 14 sizes at -t 0.05.
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

# plan_run STALL ARGS...: gdrb_mpi_latency -v with GDRB_INJECT_STALL=STALL (none if empty);
# each size's account in $WORK/plan, one line a size: SIZE TIMED WARMUP BEGAN ENDED STOP
# (seconds); the run's wall seconds in took.
plan_run() {
	local stall=$1 start
	shift
	start=$(now)
	mpi 2 -x GDRB_INJECT_STALL="$stall" "$top_builddir/mpi/gdrb_mpi_latency" -v "$@" \
		>"$WORK/out" 2>"$WORK/err" ||
		{ cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_latency $*"; }
	took=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
	drv_accounts "$WORK/err" | awk '{ print $1, $2, $4, $7, $8, $9 }' >"$WORK/plan"
	[ "$(wc -l <"$WORK/plan")" -eq "$sizes" ] ||
		{ cat "$WORK/err"; fail "gdrb_mpi_latency $*: not $sizes sizes accounted for (-v)"; }
}

# check WHAT STALL_S EVERY [ITERS]: every size of $WORK/plan kept the stop (its last batch began
# before it, or it is the one timed iteration after a warm-up that reached it), took ITERS
# iterations in all where given, and its clock counted each stall of STALL_S seconds (rank 0
# sleeps before iterations 0, EVERY, 2 x EVERY, ...); the sizes together took no more than the run.
check() {
	local what=$1 stall=$2 every=$3 iters=${4:-} bad
	bad=$(awk -v stall="$stall" -v every="$every" -v iters="$iters" -v took="$took" '
		{
			n = $2 + $3; stalls = int((n - 1) / every) + 1; sum += $5
			if ($4 >= $6 && $2 != 1)
				printf "size %s: its last batch began at %s s, past the stop %s s\n", $1, $4, $6
			if (iters != "" && n != iters)
				printf "size %s: %d iterations (%d warm-up), not %d\n", $1, n, $3, iters
			if ($5 < stalls * stall - 0.001)
				printf "size %s: %s s on its clock, less than its %d stalls of %s s\n", $1, $5, stalls, stall
		}
		END { if (sum > took) printf "the sizes took %.3f s on their clock, the run %s s\n", sum, took }' \
		"$WORK/plan")
	[ -z "$bad" ] || { cat "$WORK/plan"; fail "$what: $bad"; }
	pass "$what: every size within its stop ($(awk '{ printf "%s%d+%d", (NR > 1 ? " " : ""), $3, $2 }' "$WORK/plan") warm-up+timed iterations; run $took s)"
}

# 14 sizes, each iteration 300 ms, 10 x -t = 0.2 s: the cold iteration passes the stop.
sizes=14
plan_run 300000/1 -m 8:64K -t 0.02
check "300 ms iterations, -t 0.02" 0.3 1 2

# 3 sizes; the minimum of 200 would take 4 s a size: the size stops at 1 s instead.
sizes=3
plan_run 200000/10 -m 8,16,32 -t 0.1 --min-iters 200
check "200 ms every 10th iteration, --min-iters 200, -t 0.1" 0.2 10
grep -q 'few-samples' "$WORK/out" || { cat "$WORK/out"; fail "the sizes stopped short of --min-iters are not flagged few-samples"; }

# Two busy loops beside, no injected stall.
for _ in 1 2; do
	(while :; do :; done) &
	busy+=($!)
done
sizes=14
plan_run "" -m 8:64K -t 0.05
check "-t 0.05, 14 sizes, two busy loops beside" 0 1
