#!/bin/bash
# scripts/measure/measure-hostile on a few of its cases against the built tree: a refusal that holds
# (PASS), the timeout of -T 0 being off (PASS), and the --selftest cases whose expectation is
# deliberately wrong: --help taken for a refusal and a default sweep that outlives a 3 s limit
# must both FAIL (exit 1), the hang killed with every process of its session. The report's shape
# (summary, per-item counts, one row per case with command, expected, observed, outcome; no path
# or host name of this machine). Bad usage exits 2 with one line; no MPI binaries, 77.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
script=$top_srcdir/scripts/measure/measure-hostile
command -v python3 >/dev/null 2>&1 || skip "no python3"

# --- bad usage ---------------------------------------------------------------------------------
mkdir "$WORK/empty"
expect_refused "^measure-hostile: --only: '(' is not a regular expression" "$script" --only '('
expect_refused "^measure-hostile: unknown option '--bogus'" "$script" --bogus
expect_refused "^measure-hostile: --build-dir: '/nonexistent' is not a directory" "$script" --build-dir /nonexistent
expect_refused "^measure-hostile: --report: no directory '/nonexistent'" "$script" --report /nonexistent/h.md
expect_refused "^measure-hostile: --time-scale: expected a factor" "$script" --time-scale 0
expect_refused "^measure-hostile: --only: no case matches 'no-such-case'" "$script" --only no-such-case
"$script" --list | grep -q '^m-0@latency	item held	refused$' || fail "--list lacks m-0@latency"
[ "$("$script" --list | wc -l)" -ge 150 ] || fail "--list: fewer than 150 cases"
pass "bad usage: exit 2 with one line; --list"

rc=0
"$script" --build-dir "$WORK/empty" --report "$WORK/x.md" >/dev/null 2>"$WORK/77.err" || rc=$?
[ "$rc" -eq 77 ] && [ "$(wc -l <"$WORK/77.err")" -eq 1 ] &&
	grep -q "^measure-hostile: --build-dir: no mpi/gdrb_mpi_latency in $WORK/empty" "$WORK/77.err" ||
	{ cat "$WORK/77.err"; fail "no binaries: exit $rc, expected 77 with one line"; }
[ ! -e "$WORK/x.md" ] || fail "a report without a run"
pass "no MPI binaries: exit 77"

need_mpi
# --- the battery catches a fault: the deliberately wrong cases FAIL ----------------------------------
results_before=$(ls -lA "$top_srcdir/results")
only='^(m-0@latency|T-0-is-off@latency|selftest-.*)$'
rc=0
"$script" --build-dir "$top_builddir" --report "$WORK/r.md" --only "$only" --selftest \
	>"$WORK/r.out" 2>"$WORK/r.err" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/r.out" "$WORK/r.err"; fail "with the selftest cases: exit $rc, expected 1"; }
grep -qx 'PASS m-0@latency (item held)' "$WORK/r.out" || { cat "$WORK/r.out"; fail "m-0@latency did not pass"; }
grep -qx 'PASS T-0-is-off@latency (item held)' "$WORK/r.out" || { cat "$WORK/r.out"; fail "T-0-is-off did not pass"; }
grep -qx 'FAIL selftest-help-refused (item selftest): exit 0, expected exit 2; .*output on stdout' "$WORK/r.out" ||
	{ cat "$WORK/r.out"; fail "--help taken for a refusal was not reported FAIL"; }
grep -qx 'FAIL selftest-hang (item selftest): hang (killed after [0-9.]* s).*' "$WORK/r.out" ||
	{ cat "$WORK/r.out"; fail "a sweep past its time limit was not reported as a hang"; }
sleep 1
[ -z "$(pids_matching 'gdrb_mpi_latency -m 8:1G -t 5')" ] || fail "the hung case left processes behind"
grep -q '^measure-hostile: 2 of 4 cases passed or were skipped, 2 failed; report: ' "$WORK/r.err" ||
	{ cat "$WORK/r.err"; fail "the closing line"; }

report=$WORK/r.md
grep -qx '# Hostile-input and fault battery (issues 15, 24 and 37)' "$report" || fail "report: title"
grep -qx '\*\*2 PASS, 2 FAIL, 0 SKIP\*\* of 4 cases.' "$report" || fail "report: summary count"
grep -qx '| held | 2 | 0 | 0 |' "$report" && grep -qx '| selftest | 0 | 2 | 0 |' "$report" || fail "report: counts per item"
grep -qx '| id | item | command | expected | observed | outcome |' "$report" || fail "report: table header"
grep -q '^| `m-0@latency` | held | `mpi/gdrb_mpi_latency -m 0 -t 0.01` | exit 2, one line .* | exit 2 in [0-9.]* s; stderr 1 line: `gdrb_mpi_latency: -m/--sizes: .*`; stdout empty; files left: none | \*\*PASS\*\* |$' "$report" ||
	fail "report: the m-0 row"
grep -q '^| `selftest-hang` | selftest | `mpirun -np 2 mpi/gdrb_mpi_latency -m 8:1G -t 5` | .* | hang: still running after [0-9.]* s, killed; .* | \*\*FAIL: hang ' "$report" ||
	fail "report: the hang row"
grep -q '^- `selftest-help-refused` (item selftest): exit 0' "$report" || fail "report: the list of failures"
[ "$(grep -c '^| `' "$report")" -eq 4 ] || fail "report: expected 4 case rows"
grep -n "$WORK\|$top_builddir\|$top_srcdir" "$report" && fail "the report names this machine's paths"
grep -nw -- "$(hostname)" "$report" && fail "the report names this machine"
[ "$(ls -lA "$top_srcdir/results")" = "$results_before" ] || fail "the run changed results/"
pass "cases that hold PASS, deliberately wrong ones FAIL (exit 1), the hang killed; report complete"

# --- every case passing: exit 0 -----------------------------------------------------------------
rc=0
"$script" --build-dir "$top_builddir" --report "$WORK/ok.md" --only '^m-0@(latency|doctor)$' \
	>"$WORK/ok.out" 2>"$WORK/ok.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/ok.out" "$WORK/ok.err"; fail "two passing cases: exit $rc, expected 0"; }
grep -qx '\*\*2 PASS, 0 FAIL, 0 SKIP\*\* of 2 cases.' "$WORK/ok.md" || fail "report: 2 PASS"
pass "only passing cases: exit 0"

# --- issue 37's fail-closed runner: sound evidence PASSes, a verdict of PASS where none may be is caught
rc=0
"$script" --build-dir "$top_builddir" --report "$WORK/fc.md" --selftest \
	--only '^(37\.1-gdr-baseline|37\.4-prolog-doctor-ok-held|fc-selftest-pass)$' >"$WORK/fc.out" 2>"$WORK/fc.err" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/fc.out" "$WORK/fc.err"; fail "fail-closed cases with a selftest: exit $rc, expected 1"; }
grep -qx 'PASS 37.1-gdr-baseline (item 37.1)' "$WORK/fc.out" &&
	grep -qx 'PASS 37.4-prolog-doctor-ok-held (item 37.4)' "$WORK/fc.out" || { cat "$WORK/fc.out"; fail "a sound case did not pass"; }
grep -q '^FAIL fc-selftest-pass (item selftest): exit 0, expected exit 3; the overall line says PASS' "$WORK/fc.out" ||
	{ cat "$WORK/fc.out"; fail "a PASS where the case forbids one was not reported FAIL"; }
pass "fail-closed cases: sound evidence PASS, a verdict of PASS where none may be FAILs"
