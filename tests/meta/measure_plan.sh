#!/bin/bash
# scripts/measure/measure-plan end to end, small: one round at 8 B and 1 KiB with short
# budgets and one busy process. The verdict itself depends on the machine's
# noise; the report's structure, the plan's figures per loaded size and the
# refusal of bad options do not.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
command -v python3 >/dev/null 2>&1 || skip "no python3"

plan=$top_srcdir/scripts/measure/measure-plan
rc=0
"$plan" --build-dir "$top_builddir" --rounds 1 --sizes 8,1K --short 0.01 --long 0.05 --load 1 \
	--report "$WORK/plan.md" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -le 1 ] || { cat "$WORK/out" "$WORK/err"; fail "measure-plan exited $rc"; }
grep -q '^| mpi_latency | 8 | ' "$WORK/plan.md" && grep -q '^| mpi_bw | 1024 | ' "$WORK/plan.md" ||
	{ cat "$WORK/plan.md"; fail "the quiet table lacks a size"; }
# Loaded: 8 B..4 MiB, 20 sizes per benchmark, each with its planned minimum from -v.
[ "$(grep -c '^| mpi_\(latency\|bw\) | [0-9]* | [0-9]* | [0-9][0-9]* | ' "$WORK/plan.md")" -ge 40 ] ||
	{ cat "$WORK/plan.md"; fail "the loaded table lacks sizes or their planned minimum"; }
grep -q '^Verdict: \(PASS\|FAIL\)$' "$WORK/plan.md" || fail "no verdict"
pass "measure-plan: report written, $(grep -o 'Verdict: .*' "$WORK/plan.md") (exit $rc)"

expect_refused "--rounds: expected a positive integer, got '0'" "$plan" --rounds 0
expect_refused "--sizes: expected sizes like" "$plan" --sizes 8,1Q
expect_refused "--short: expected less than --long" "$plan" --short 2 --long 1
