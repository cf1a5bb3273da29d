#!/bin/bash
# gdrb-plot and gdrb-report on the fixtures: one valid PNG and SVG per benchmark and memory
# kind, titles naming hosts, GPU and NIC, size labels in binary units, the staged/direct panel;
# summary.md and a self-contained report.html with the verdict on top and both paths side by
# side. The PNG checker is shown to catch a file that is not a PNG.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot not installed"

run=$WORK/bad
cp -r "$DATA/bad-run" "$run"
"$SCRIPTS/gdrb" plot "$run" >"$WORK/plot.out" 2>&1 || { cat "$WORK/plot.out"; fail "gdrb-plot exited $?"; }

# The checker first: it must refuse what is not a PNG, or a PNG too small to hold a plot.
printf 'not a png' >"$WORK/fake.png"
head -c 100 "$run/plots/write_bw-device.png" >"$WORK/cut.png"
! png_ok "$WORK/fake.png" || fail "png_ok accepts a text file"
! png_ok "$WORK/cut.png" || fail "png_ok accepts a truncated PNG"

figures="mpi_latency-host mpi_latency-device mpi_bw-host mpi_bw-device write_lat-host write_lat-device
	write_bw-host write_bw-device copy_bw-host copy_bw-pinned copy_bw-device"
for f in $figures; do
	png_ok "$run/plots/$f.png" || fail "$f.png: not a valid PNG of a plot"
	head -c 300 "$run/plots/$f.svg" | grep -q '<svg' || fail "$f.svg: not SVG"
done
[ "$(find "$run/plots" -maxdepth 1 -name '*.png' | wc -l)" -eq 11 ] || fail "expected 11 figures"
pass "11 figures, each a valid PNG (signature, size) and an SVG"

gp=$run/plots/plots.gp
# Text in plots.gp is single-quoted (gnuplot expands nothing there); a title's lines are joined by "\n".
nl="' . \"\\n\" . '"
grep -qF "write_bw, device memory: bandwidth by path${nl}hosts gpu-a01, gpu-a02; 2 ranks; GPU NVIDIA H100 80GB HBM3; NIC mlx5_0:1 400 Gb/s" "$gp" ||
	fail "the write_bw title does not name hosts, GPU and NIC"
grep -qF "mpi_latency, host memory: latency${nl}hosts gpu-a01, gpu-a02; 2 ranks; GPU none used" "$gp" ||
	fail "a host-memory figure names a GPU it did not use"
grep -q "set xtics ('8B' 8 0, \"\" 16 1, .*'1KiB' 1024 0, .*'1MiB' 1048576 0, .*'1GiB' 1073741824 0)" "$gp" ||
	fail "size tics are not labelled 8B, 1KiB, 1MiB, 1GiB"
grep -q 'set ylabel "latency (us)"' "$gp" && grep -q 'set ylabel "bandwidth (GB/s, 1 GB = 1e9 B)"' "$gp" ||
	fail "axes lack their units"
grep -q 'staged p50 / direct p50: above 1, the direct path is faster' "$gp" || fail "no staged/direct panel"
awk '$1 == 8 { found = 1; exit !($2 > 6 && $2 < 7) } END { exit !found }' "$run/plots/data/write_lat-device.ratio.dat" ||
	fail "staged/direct ratio at 8B is not 10.6/1.6"
pass "titles name hosts, GPU and NIC; axes have units; sizes 8B..1GiB; staged/direct panel"

# Summary and HTML report, after gdrb-accept: the verdict on top.
"$SCRIPTS/gdrb" accept -q "$run" ib-ndr400 >/dev/null 2>&1
"$SCRIPTS/gdrb" report "$run" >"$WORK/report.out" 2>&1 || { cat "$WORK/report.out"; fail "gdrb-report exited $?"; }
sed -n 3p "$run/summary.md" | grep -q '^\*\*Verdict: FAIL\*\* (profile ib-ndr400): 4 of 8 rules passed' ||
	{ head -5 "$run/summary.md"; fail "summary.md: the verdict is not on top"; }
grep -q '^| size | direct p50 us | direct p99 us | staged p50 us | staged p99 us | staged/direct p50 |$' "$run/summary.md" ||
	fail "summary.md: no latency table with both paths side by side"
grep -q '^| 1GiB | failed |$' "$run/summary.md" || fail "summary.md: the failed row is not shown as failed"
grep -q '^| 8B | 1.627 | 7.900 | 10.63 | 14.02 | 6.54x |$' "$run/summary.md" || fail "summary.md: write_lat device 8B row"
grep -q 'gpu-a01 | Ubuntu 22.04.4 LTS, 5.15.0-105-generic | 550.54.15 | 12.4 / 12.4.131' "$run/summary.md" ||
	fail "summary.md: no environment table"
grep -q '<div class="verdict fail">Verdict: FAIL' "$run/report.html" || fail "report.html: no verdict on top"
[ "$(grep -o 'src="data:image/png;base64,' "$run/report.html" | wc -l)" -eq 11 ] || fail "report.html: not 11 embedded figures"
! grep -q -E '(src|href)="(https?:|/)' "$run/report.html" || fail "report.html refers to outside files"
# The first embedded figure decodes to a PNG.
sed -n 's/.*src="data:image\/png;base64,\([^"]*\)".*/\1/p' "$run/report.html" | head -n 1 | base64 -d >"$WORK/embedded.png"
png_ok "$WORK/embedded.png" || fail "report.html: the embedded figure is not a PNG"
if command -v xmllint >/dev/null 2>&1; then
	xmllint --html --noout "$run/report.html" 2>"$WORK/html.err" || { cat "$WORK/html.err"; fail "report.html does not parse"; }
fi
pass "summary.md and report.html: verdict on top, environment, both paths side by side, figures embedded"

# Values that are not numbers are gaps in the figures and "invalid" in the tables, named with
# their file and line, never drawn or shown as 0 (or as -5); an empty value is "n/a".
for spoilt in hex:lat_p50_us:0x10 negative:lat_p50_us:-5 nan:lat_p50_us:nan; do
	IFS=: read -r kind column value <<<"$spoilt"
	run=$WORK/invalid-$kind
	cp -r "$DATA/invalid-$kind" "$run"
	"$SCRIPTS/gdrb" plot "$run" >"$WORK/plot.out" 2>&1 || { cat "$WORK/plot.out"; fail "$value: gdrb-plot exited $?"; }
	grep -q -F "$run/results.csv:2: $column '$value' is not a finite non-negative decimal number: not plotted" "$WORK/plot.out" ||
		{ cat "$WORK/plot.out"; fail "$value: gdrb-plot does not name the value it left out"; }
	grep -q '^8 NaN 2.315$' "$run/plots/data/write_lat-device.direct.dat" ||
		{ cat "$run/plots/data/write_lat-device.direct.dat"; fail "$value: plotted as a number"; }
	"$SCRIPTS/gdrb" report "$run" >"$WORK/report.out" 2>&1 || { cat "$WORK/report.out"; fail "$value: gdrb-report exited $?"; }
	grep -q -F "| 8B | invalid '$value' | 2.315 | 10.63 | 14.02 | - |" "$run/summary.md" ||
		{ cat "$run/summary.md"; fail "$value: summary.md does not show it as invalid"; }
	grep -q -F "Invalid: $run/results.csv:2: $column '$value' is not a finite" "$run/summary.md" ||
		fail "$value: summary.md does not say where the invalid value is"
done
run=$WORK/invalid-size
cp -r "$DATA/invalid-size" "$run"
"$SCRIPTS/gdrb" plot "$run" >"$WORK/plot.out" 2>&1 || { cat "$WORK/plot.out"; fail "size 8x: gdrb-plot exited $?"; }
grep -q -F "$run/results.csv:2: size_bytes '8x' is not a non-negative integer: not plotted" "$WORK/plot.out" ||
	{ cat "$WORK/plot.out"; fail "size 8x: gdrb-plot does not name the row it left out"; }
[ ! -e "$run/plots/data/write_lat-device.direct.dat" ] || fail "size 8x: the row is plotted (at 8 B)"
"$SCRIPTS/gdrb" report "$run" >/dev/null 2>&1 || fail "size 8x: gdrb-report failed"
grep -q -F "Invalid: $run/results.csv:2: size_bytes '8x' is not a non-negative integer (row not shown)" "$run/summary.md" ||
	{ cat "$run/summary.md"; fail "size 8x: summary.md does not list the row it left out"; }
run=$WORK/nofigure
cp -r "$DATA/nofigure-staged" "$run"
"$SCRIPTS/gdrb" report "$run" >/dev/null 2>&1 || fail "no figure: gdrb-report failed"
grep -q -F "| 8B | n/a | 2.315 | 10.63 | 14.02 | - |" "$run/summary.md" || { cat "$run/summary.md"; fail "no figure: not n/a"; }
pass "nan, -5, 0x10 and size 8x: gaps in the figures, invalid in the tables, named by file and line; no figure: n/a"

# Bad input.
expect_refused "no-such: no such results directory" "$SCRIPTS/gdrb" plot "$WORK/no-such"
expect_refused "malformed-header/results.csv:1: not a gdrbench results CSV" "$SCRIPTS/gdrb" plot "$DATA/malformed-header"
expect_refused "malformed-row/results.csv:4: has 40 fields" "$SCRIPTS/gdrb" report "$DATA/malformed-row"
expect_refused "--format: expected png, svg or png,svg" "$SCRIPTS/gdrb" plot --format jpg "$run"
[ ! -e "$DATA/malformed-header/plots" ] || fail "gdrb-plot wrote into a directory it refused"
pass "bad input leaves no plots directory behind"
