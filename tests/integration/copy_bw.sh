#!/bin/bash
# gdrb_copy_bw on the simulated GPU: five copy kinds side by side, validated.
# Each simulated copy takes its modelled time (SIMGPU_COPY_GBPS), so a figure
# above it means a copy's end was not timed (cudaMemcpy returns before a
# device-to-device copy, and before a pageable copy's tail, have landed).
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

SIMGPU_DRIVER=none "$bin" -m 8 >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 77 ] || { cat "$WORK/err"; fail "without a driver exited $rc, expected 77"; }
grep -q "unsupported on this node: copy_bw: " "$WORK/err" || { cat "$WORK/err"; fail "no reason"; }
grep -qv '^#' "$WORK/out" && fail "something was measured"
pass "no driver: exit 77 with $(cat "$WORK/err")"
