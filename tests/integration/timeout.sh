#!/bin/bash
# A peer that stops answering: rank 1 is frozen with SIGSTOP mid-run. Rank 0
# must give up within --timeout, naming rank 1 and its host, exit non-zero,
# and the rows measured before the fault must stay in the CSV. Then the same
# under load, where only progress counts (common/util/watchdog.c):
#  - busy loops beside, and rank 0 itself off the CPU for 1.2 s at a time (a
#    machine so loaded that it is not scheduled for seconds: a watchdog that
#    forgets the idle time it counted before each such gap fires 3 to 5 x
#    late, or never): the frozen peer is named within 1.5 x --timeout of
#    the time rank 0 could run, plus 1 s (the 50 ms looks, the test's own 0.1 s
#    polling and a loaded machine's scheduling delays);
#  - a healthy run with -T 2 under busy loops, each rank off the CPU for 0.5 s
#    now and then (a loaded 2-core machine itself can stall a ping-pong for
#    most of a second): it must not trip.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

csv=$WORK/t.csv
tag=timeout-test-$$
busy=()
pauser=
cleanup() {
	[ -n "$pauser" ] && kill "$pauser" 2>/dev/null
	for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT

# rank_pid N: the process of rank N of the run labelled $tag.
rank_pid() {
	local pid
	for pid in $(pids_matching "--label $tag"); do
		if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
			echo "$pid"
			return
		fi
	done
}
# wait_rows N: until the CSV holds N lines (header included).
wait_rows() {
	for _ in $(seq 1 600); do
		[ -f "$csv" ] && [ "$(wc -l <"$csv")" -ge "$1" ] && return
		sleep 0.1
	done
}
now() { date +%s.%N; }
# load N: N busy loops beside the run until the test ends.
load() {
	local i
	for ((i = 0; i < $1; i++)); do
		(while :; do :; done) &
		busy+=($!)
	done
}

mpi 2 "$top_builddir/mpi/gdrb_mpi_latency" -m 8:256M -t 0.5 -T 3 --label "$tag" --csv "$csv" \
	>"$WORK/out" 2>"$WORK/err" &
launcher=$!

# Find rank 1 first, then freeze it as soon as three rows are in: early in a size's timed
# iterations, not in the gather after them (a loaded machine made the lookup late enough for
# that, and a gather has no one rank to name).
wait_rows 2
victim=$(rank_pid 1)
[ -n "$victim" ] || { kill "$launcher"; fail "rank 1 not found"; }
wait_rows 4
rows_before=$(($(wc -l <"$csv") - 1))
stopped_at=$(date +%s)
kill -STOP "$victim"

wait "$launcher"
rc=$?
took=$(($(date +%s) - stopped_at))
kill -KILL "$victim" 2>/dev/null
[ "$rc" -ne 0 ] || fail "the run exited 0 after its peer froze"
[ "$took" -le 20 ] || fail "gave up after $took s, --timeout was 3 s"
grep -q "rank 0 (.*): error: timeout: no answer from rank 1 ([^)]*) for [0-9]* s" "$WORK/err" ||
	{ cat "$WORK/err"; fail "no message naming rank 1 and its host"; }
rows_after=$(($(wc -l <"$csv") - 1))
[ "$rows_after" -ge "$rows_before" ] && [ "$rows_after" -ge 3 ] ||
	fail "rows lost: $rows_before before the fault, $rows_after after"
csv_check -v status=ok "$csv" || fail "the kept rows are damaged"
pass "frozen peer detected in $took s (exit $rc); $rows_after rows kept"

# Under load: 2 busy loops, rank 1 frozen, rank 0 stopped 1.2 s in every 2.5 s.
load 2
limit=4
tag=timeout-load-$$
rm -f "$csv"
mpi 2 "$top_builddir/mpi/gdrb_mpi_latency" -m 8:256M -t 0.2 -T "$limit" --label "$tag" --csv "$csv" \
	>"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_rows 4
victim=$(rank_pid 1)
waiter=$(rank_pid 0)
[ -n "$victim" ] && [ -n "$waiter" ] || { kill "$launcher"; fail "ranks not found"; }
# Each pause's seconds, in a file, so the time rank 0 could run is known.
(
	while kill -0 "$waiter" 2>/dev/null; do
		sleep 1.3
		kill -STOP "$waiter" 2>/dev/null || break
		sleep 1.2
		kill -CONT "$waiter" 2>/dev/null
		echo 1.2 >>"$WORK/paused"
	done
) &
pauser=$!
start=$(now)
kill -STOP "$victim"
named=
# The run ends as soon as it has named the peer: a look after its end reads the line it left
# (one that only looked while it ran missed it when the end fell between two looks, and under
# the sanitizer pass beside the fresh root it did).
for ((running = 1; running; )); do
	kill -0 "$launcher" 2>/dev/null || running=0
	grep -q 'timeout: no answer from rank 1' "$WORK/err" && { named=$(now); break; }
	# Four times the limit of running time and more: it will not come.
	awk -v now="$(now)" -v start="$start" 'BEGIN { exit !(now - start > 60) }' && break
	sleep 0.1
done
kill "$pauser" 2>/dev/null
wait "$pauser" 2>/dev/null
pauser=
kill -CONT "$waiter" 2>/dev/null
[ -n "$named" ] || {
	kill -KILL "$victim" "$waiter" 2>/dev/null
	wait "$launcher"
	cat "$WORK/err"
	fail "under load, rank 0 paused 1.2 s at a time: the frozen peer was not named within 60 s (--timeout $limit)"
}
wait "$launcher"
kill -KILL "$victim" 2>/dev/null
paused=$(awk '{ s += $1 } END { printf "%.1f", s }' "$WORK/paused" 2>/dev/null || echo 0)
ran=$(awk -v n="$named" -v s="$start" -v p="${paused:-0}" 'BEGIN { printf "%.3f", n - s - p }')
awk -v ran="$ran" -v limit="$limit" 'BEGIN { exit !(ran <= 1.5 * limit + 1) }' ||
	{ cat "$WORK/err"; fail "under load: the frozen peer was named after $ran s of rank 0 running ($paused s paused), more than 1.5 x --timeout $limit + 1 s"; }
pass "under load, rank 0 paused ${paused} s in all: the frozen peer named after $ran s of running (--timeout $limit)"

# A healthy run with -T 2 under load, each rank off the CPU for 0.5 s now and then: no trip.
tag=timeout-healthy-$$
rm -f "$csv" "$WORK/paused"
mpi 2 "$top_builddir/mpi/gdrb_mpi_latency" -m 8:1M -t 0.1 -T 2 --label "$tag" --csv "$csv" \
	>"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_rows 2
(
	r=0
	while :; do
		pid=$(rank_pid $r)
		[ -n "$pid" ] || break
		sleep 1
		kill -STOP "$pid" 2>/dev/null || break
		sleep 0.5
		kill -CONT "$pid" 2>/dev/null
		r=$((1 - r))
	done
) &
pauser=$!
wait "$launcher"
rc=$?
kill "$pauser" 2>/dev/null
pauser=
[ "$rc" -eq 0 ] && ! grep -q timeout: "$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "a healthy run under load with -T 2 (ranks paused 0.5 s) exited $rc"; }
csv_check -v rows=18 -v status=ok "$csv" || fail "the healthy run's rows"
pass "a healthy run under load with -T 2, ranks paused 0.5 s in turn: no trip, 18 rows"
