#!/bin/bash
# A peer that stops answering: rank 1 is frozen with SIGSTOP mid-run. Rank 0
# must give up within --timeout, naming rank 1 and its host, exit non-zero,
# and the rows measured before the fault must stay in the CSV.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need_mpi

csv=$WORK/t.csv
tag=timeout-test-$$
mpi 2 "$top_builddir/mpi/gdrb_mpi_latency" -m 8:256M -t 0.2 -T 3 --label "$tag" --csv "$csv" \
	>"$WORK/out" 2>"$WORK/err" &
launcher=$!

# Wait for some rows, then freeze rank 1.
for _ in $(seq 1 200); do
	[ -f "$csv" ] && [ "$(wc -l <"$csv")" -ge 4 ] && break
	sleep 0.1
done
victim=
for pid in $(pgrep -f -- "--label $tag"); do
	if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1; then
		victim=$pid
	fi
done
[ -n "$victim" ] || { kill "$launcher"; fail "rank 1 not found"; }
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
