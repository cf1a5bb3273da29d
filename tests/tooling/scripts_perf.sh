#!/bin/bash
# gdrb-accept, gdrb-plot and gdrb-report on a 100,000-row CSV each finish in under 5 s. The CSV is
# tests/support/gen_csv.awk's NDR run repeated until 100,000 aggregate rows (every row is read and
# checked, none skipped as a per-pair row). Wall time depends on what else this machine runs
# (make -j check runs MPI tests beside this one): over 5 s of wall time is accepted only when
# the CPU time of the script and its children stays under 5 s, and the test says so.
# scripts/measure/measure-scripts records the figures in results/scripts-performance.md.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"
command -v gawk >/dev/null 2>&1 || skip "gawk not installed (tests/support/gen_csv.awk)"

limit=5
mkdir "$WORK/big"
gawk -v schema_def="$top_srcdir/common/core/csv_schema.def" -f "$top_srcdir/tests/support/schema.awk" -f "$top_srcdir/tests/support/gen_csv.awk" -v rows=100000 >"$WORK/big/results.csv" ||
	fail "tests/support/gen_csv.awk exited $?"
cp "$DATA/good-run/meta.json" "$WORK/big/"
[ "$(wc -l <"$WORK/big/results.csv")" -eq 100001 ] || fail "the generated CSV does not have 100,000 rows"

# timed NAME CMD...: run CMD, check its wall and CPU time against the limit.
timed() {
	local name=$1 wall cpu t
	shift
	TIMEFORMAT='%R %U %S'
	{ time "$@" >"$WORK/$name.out" 2>&1; } 2>"$WORK/$name.time" || { rc=$?; cat "$WORK/$name.out"; fail "$name exited $rc"; }
	read -r wall t cpu <"$WORK/$name.time"
	cpu=$(awk -v u="$t" -v s="$cpu" 'BEGIN { printf "%.2f", u + s }')
	if awk -v w="$wall" -v l="$limit" 'BEGIN { exit !(w < l) }'; then
		pass "$name on 100,000 rows: ${wall} s wall, ${cpu} s CPU (limit ${limit} s)"
	elif awk -v c="$cpu" -v l="$limit" 'BEGIN { exit !(c < l) }'; then
		pass "$name on 100,000 rows: ${wall} s wall on a busy machine (load $(cut -d' ' -f1 /proc/loadavg)), ${cpu} s CPU (limit ${limit} s)"
	else
		fail "$name on 100,000 rows: ${wall} s wall, ${cpu} s CPU: over ${limit} s"
	fi
}

timed gdrb-accept "$SCRIPTS/gdrb" accept "$WORK/big" ib-ndr400
grep -q '^PASS: 8 rules, 8 passed' "$WORK/gdrb-accept.out" || { cat "$WORK/gdrb-accept.out"; fail "gdrb-accept: wrong verdict on the large CSV"; }
if command -v gnuplot >/dev/null 2>&1; then
	timed gdrb-plot "$SCRIPTS/gdrb" plot "$WORK/big"
	png_ok "$WORK/big/plots/write_bw-device.png" || fail "gdrb-plot: no figure from the large CSV"
else
	echo "gnuplot not installed: gdrb-plot not timed"
fi
# The report of the same directory: its verdict, and the figures where gdrb-plot drew them.
timed gdrb-report "$SCRIPTS/gdrb" report "$WORK/big"
[ -s "$WORK/big/summary.md" ] && [ -s "$WORK/big/report.html" ] || { cat "$WORK/gdrb-report.out"; fail "gdrb-report: no summary.md or report.html from the large CSV"; }
grep -q '^\*\*Verdict: PASS\*\*' "$WORK/big/summary.md" || { cat "$WORK/big/summary.md"; fail "gdrb-report: no verdict in the summary of the large CSV"; }
