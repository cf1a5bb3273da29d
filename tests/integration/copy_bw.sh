#!/bin/bash
# gdrb_copy_bw on the simulated GPU: five copy kinds side by side, validated.
# Each simulated copy takes its modelled time (SIMGPU_COPY_GBPS), so a figure
# above it means a copy's end was not timed (cudaMemcpy returns before a
# device-to-device copy, and before a pageable copy's tail, have landed).
# --copy-timing events (nvbandwidth's shape), from the simulator's trace:
#  - both directions of a bidir row run at once: the two streams' event
#    intervals overlap in every bidirectional sample;
#  - the figures are the events' times: each row's lowest and highest time per
#    copy is a sample the trace's cudaEventElapsedTime gave, over the batch;
#  - every row validated under -c, and the opposite direction of a bidir row
#    checked too (the corruption hook costs such a row twice the wrong bytes);
#  - a bad --copy-timing or --copy-batch: one line, exit 2.
# Without a driver: exit 77 with the reason.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
use_simgpu strict

bin=$top_builddir/bench/gdrb_copy_bw
[ -x "$bin" ] || fail "gdrb_copy_bw not built"
expect_refused "--bogus" "$bin" --bogus

SIMGPU_COPY_GBPS=2 "$bin" -m 8,64K,16M -c -t 0.05 --csv "$WORK/copy.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "gdrb_copy_bw"; }
cat "$WORK/out"
no_simgpu_errors "$WORK/err"
csv_check -v status=ok -v rows=15 "$WORK/copy.csv" || fail "CSV"
grep -q "^# NOTE: the GPU is simulated" "$WORK/out" || fail "no 'simulated' note"
# 5% over the model for rounding and clock granularity.
csv_col "$WORK/copy.csv" path,size_bytes,bw_GBps |
	awk -F'\t' '$3 > 2 * 1.05 { print; bad++ } END { exit bad > 0 || NR != 15 }' ||
	fail "a copy ran faster than the simulated engine: its end was not timed"
pass "gdrb_copy_bw: 5 copy kinds x 3 sizes validated, every copy timed to its end"

expect_refused "^gdrb_copy_bw: --copy-timing: unknown mode 'nvb'; accepted: call, events" "$bin" --copy-timing nvb
expect_refused "^gdrb_copy_bw: --copy-batch: expected an integer from 1 to 1024, got '0'" "$bin" --copy-timing events --copy-batch 0
expect_refused "^gdrb_copy_bw: --copy-batch: expected an integer from 1 to 1024, got '1025'" "$bin" --copy-timing events --copy-batch 1025
expect_refused "^gdrb_copy_bw: --copy-batch: counts the copies of a sample under --copy-timing events" "$bin" --copy-batch 4

# Events, validated: five rows a size, each direction of the bidirectional copies its own row.
SIMGPU_COPY_GBPS=2 "$bin" --copy-timing events -m 8,64K,1M -c -t 0.05 --csv "$WORK/ev.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "gdrb_copy_bw --copy-timing events"; }
no_simgpu_errors "$WORK/err"
csv_check -v status=ok -v rows=15 "$WORK/ev.csv" || fail "events CSV"
for path in h2d-batch d2h-batch h2d-bidir d2h-bidir d2d-batch; do
	[ "$(csv_count "$WORK/ev.csv" path="$path" errors=0)" = 3 ] || fail "not 3 validated rows of $path"
done
[ "$(csv_count "$WORK/ev.csv" "note~copy engine: 16 cudaMemcpyAsync per sample between CUDA events.*")" = 15 ] ||
	fail "a row does not say which engine and timing it measured"
grep -q "^# copies on the copy engines only (cudaMemcpyAsync; no SM copies: nvbandwidth's _sm testcases are not comparable); --copy-timing events: " "$WORK/out" ||
	fail "the header does not say which engine was measured"
csv_col "$WORK/ev.csv" path,size_bytes,bw_GBps |
	awk -F'\t' '$3 > 2 * 1.05 { print; bad++ } END { exit bad > 0 || NR != 15 }' ||
	fail "an events copy ran faster than the simulated engine: its end was not timed"
pass "--copy-timing events: h2d-batch, d2h-batch, h2d-bidir, d2h-bidir, d2d-batch x 3 sizes validated"

# The opposite direction of a bidirectional row is checked too: twice the wrong bytes under the hook.
GDRB_TEST_HOOKS=1 GDRB_INJECT_CORRUPTION=0 "$bin" --copy-timing events -m 64K -c -w 2 -n 5 --min-iters 1 \
	-t 0.02 --csv "$WORK/bad.csv" >"$WORK/out" 2>"$WORK/err" && fail "corrupted copies passed"
got=$(csv_col "$WORK/bad.csv" path,status,errors | tr '\t\n' ': ')
[ "$got" = "h2d-batch:invalid-data:3 d2h-batch:invalid-data:3 h2d-bidir:invalid-data:6 d2h-bidir:invalid-data:6 d2d-batch:invalid-data:3 " ] ||
	fail "corruption of each checked copy: $got (expected 3 wrong bytes a batch row, 6 a bidir row)"
pass "-c catches a wrong byte in each direction of a bidir row: $got"

# From the trace: samples (each opens with the hold of the first stream), the times its
# streams reached their events and finished their copies, and the elapsed times the binary read.
rm -f "$WORK/trace"
SIMGPU_COPY_GBPS=2 SIMGPU_TRACE="$WORK/trace" "$bin" --copy-timing events --copy-batch 16 -m 1M -n 20 \
	--min-iters 5 -w 3 -t 0.05 --csv "$WORK/tr.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "gdrb_copy_bw traced"; }
no_simgpu_errors "$WORK/err"
# A bidirectional sample is concurrent when the opposite stream finishes timed copies (after
# its start event) while the measured one is between its events. Most samples must be: run one
# after the other, none would be; on a loaded machine a stream's worker thread may now and then
# be descheduled for a whole sample, so one sample alone proves nothing either way.
awk '
	$2 == "cudaLaunchHostFunc" && !s0 { s0 = $4 }
	$2 == "cudaLaunchHostFunc" && $4 == s0 { close_sample(); n++ }
	$2 == "cudaEventReached" { k = $5 == s0 ? 0 : 1; t[k, m[k]++] = $6 }
	$2 == "copyDone" && $4 != s0 && m[1] == 1 { done1[d1++] = $6 }
	function close_sample(   i, inside) {
		if (m[1]) {
			bidir++
			for (i = 0; i < d1; i++)
				inside += done1[i] > t[0, 0] && done1[i] < t[0, 1]
			if (!inside) { print "sample " n ": no timed copy of the opposite direction while the measured one ran"; bad++ }
		}
		delete m
		d1 = 0
	}
	END { close_sample(); printf "%d samples, %d bidirectional, %d of them not concurrent\n", n, bidir, bad
	      exit bad * 2 > bidir || bidir < 2 }
' "$WORK/trace" >"$WORK/overlap" || { cat "$WORK/overlap"; fail "the two directions of a bidir row did not run at once"; }
pass "bidir samples ran both streams at once: $(tail -1 "$WORK/overlap")"

# Each row's fastest and slowest copy time is an event-timed sample over the batch of 16
# (the host clock's time of a sample also holds 4 warm-up copies, the enqueueing and the wait).
awk '$2 == "cudaEventElapsedTime" { printf "%.6f\n", $5 * 1000 / 16 }' "$WORK/trace" >"$WORK/samples_us"
[ -s "$WORK/samples_us" ] || fail "no cudaEventElapsedTime in the trace"
csv_col "$WORK/tr.csv" path,lat_min_us,lat_max_us | while IFS=$'\t' read -r path lo hi; do
	for v in "$lo" "$hi"; do
		awk -v v="$v" '{ d = $1 - v; if (d < 0) d = -d; if (d <= 0.0005 * v + 0.01) hit = 1 } END { exit !hit }' \
			"$WORK/samples_us" || { echo "$path: $v us per copy is no event-timed sample"; exit 1; }
	done
done || fail "a figure is not the events' time"
pass "every row's min and max time per copy is a cudaEventElapsedTime sample over the batch"

SIMGPU_DRIVER=none "$bin" -m 8 >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 77 ] || { cat "$WORK/err"; fail "without a driver exited $rc, expected 77"; }
grep -q "unsupported on this node: copy_bw: " "$WORK/err" || { cat "$WORK/err"; fail "no reason"; }
grep -qv '^#' "$WORK/out" && fail "something was measured"
pass "no driver: exit 77 with $(cat "$WORK/err")"
