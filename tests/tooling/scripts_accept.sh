#!/bin/bash
# gdrb-accept on the fixtures: the good run passes the NDR acceptance profile, the bad run
# fails it naming each failing size with its value and threshold; link rates, path
# comparisons, "no data" and bad input (exit 2, one line naming the file and line).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"

accept=("$SCRIPTS/gdrb" accept)
cp -r "$DATA/good-run" "$WORK/good"
cp -r "$DATA/bad-run" "$WORK/bad"

# rule_says FILE NAME REGEX: the two lines gdrb-accept prints for rule NAME, joined, match REGEX.
rule_says() {
	grep -A1 -E "^[A-Z]+ +$2: " "$1" | paste -sd' ' - | grep -q -E -- "$3" ||
		{ cat "$1"; fail "rule $2: its lines do not match '$3'"; }
}

# The good run passes every rule of the NDR profile, and says by how much.
"${accept[@]}" "$WORK/good" ib-ndr400 >"$WORK/good.out" 2>&1 || { cat "$WORK/good.out"; fail "good run: not accepted"; }
grep -q '^PASS: 8 rules, 8 passed' "$WORK/good.out" || { cat "$WORK/good.out"; fail "good run: summary line"; }
rule_says "$WORK/good.out" ndr-bw-gdr '^PASS .*11 checks at 11 sizes \(1MiB\.\.1GiB\), worst 47\.33 GB/s against 45\.00 GB/s at 1MiB'
rule_says "$WORK/good.out" ndr-lat-p99 '^PASS .*worst 2\.315 us against 5\.000 us at 8B$'
json_ok "$WORK/good/verdict.json" || fail "good run: verdict.json is not JSON"
[ "$(json_get "$WORK/good/verdict.json" verdict)" = PASS ] || fail "good run: verdict.json does not say PASS"
pass "good fixture passes ib-ndr400 (exit 0, verdict.json PASS)"

# The same figures measured on the test suite's simulated GPU are never a pass.
cp -r "$DATA/good-run" "$WORK/sim"
csv_set "$DATA/good-run/results.csv" gpu "gdrbench simulated GPU (simgpu)" mem=device >"$WORK/sim/results.csv"
grep -q 'simulated GPU' "$WORK/sim/results.csv" || fail "the fixture has no device rows to mark simulated"
"${accept[@]}" "$WORK/sim" ib-ndr400 >"$WORK/sim.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/sim.out"; fail "simulated run: exit $rc, expected 1"; }
grep -q '^SIMULATED: 8 rules, .*gdrbench simulated GPU (simgpu), which proves behaviour, never speed' "$WORK/sim.out" ||
	{ cat "$WORK/sim.out"; fail "simulated run: summary line"; }
[ "$(json_get "$WORK/sim/verdict.json" verdict)" = SIMULATED ] || fail "simulated run: verdict.json does not say SIMULATED"
grep -q 'failures="8"' "$WORK/sim/verdict.xml" || fail "simulated run: JUnit does not fail every rule"
pass "the good figures on a simulated GPU: verdict SIMULATED, exit 1, JUnit failures"

# The bad run fails, and says where and by how much.
"${accept[@]}" "$WORK/bad" ib-ndr400 >"$WORK/bad.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/bad.out"; fail "bad run: exit $rc, expected 1"; }
rule_says "$WORK/bad.out" ndr-bw-gdr '^FAIL .*write_bw bw_GBps >= 45 GB/s .*3 of 11 checks failed: 4MiB: 41\.10 GB/s < 45\.00 GB/s; 8MiB: 41\.20 GB/s < 45\.00 GB/s; 16MiB: 41\.40 GB/s < 45\.00 GB/s$'
rule_says "$WORK/bad.out" ndr-bw-port '^FAIL .*4MiB: 41\.10 GB/s < 45\.00 GB/s \(90% of 400 Gb/s\)'
rule_says "$WORK/bad.out" ndr-lat-p99 '^FAIL .*write_lat lat_p99_us <= 5 us .*8B: 7\.900 us > 5\.000 us$'
rule_says "$WORK/bad.out" ndr-bw-host '^FAIL .*1GiB: status failed \(gdrb-sweep: gdrb_write_bw exited 1'
rule_says "$WORK/bad.out" ndr-lat-p50 '^PASS '
grep -q '^FAIL: 8 rules, 4 passed, 4 failed, 0 without data' "$WORK/bad.out" || { cat "$WORK/bad.out"; fail "bad run: summary line"; }
json_ok "$WORK/bad/verdict.json" || fail "bad run: verdict.json is not JSON"
[ "$(json_get "$WORK/bad/verdict.json" rules.4.name)" = ndr-bw-gdr ] &&
	[ "$(json_get "$WORK/bad/verdict.json" rules.4.failures.0.size_bytes)" = 4194304 ] &&
	[ "$(json_get "$WORK/bad/verdict.json" rules.4.failures.0.threshold)" = 45 ] &&
	[ "$(json_get "$WORK/bad/verdict.json" rules.4.failures.0.value)" = 41.1 ] ||
	fail "bad run: verdict.json lacks the failing size, value and threshold"
grep -q '<testsuites name="gdrbench" tests="8" failures="4" errors="0">' "$WORK/bad/verdict.xml" ||
	fail "bad run: JUnit XML lacks the counts"
[ "$(grep -c '<failure type="threshold"' "$WORK/bad/verdict.xml")" -eq 4 ] || fail "bad run: JUnit XML: not 4 failures"
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout "$WORK/bad/verdict.xml" || fail "verdict.xml is not well-formed XML"
fi
pass "bad fixture fails ib-ndr400 (exit 1) naming 4MiB..16MiB against 45 GB/s, 8B p99 against 5 us, the failed 1GiB row"

# The generic GDR profile passes the bad run: its dip stays above the staged path.
"${accept[@]}" -q "$WORK/bad" gdr-effectiveness >"$WORK/gdr.out" 2>&1 || { cat "$WORK/gdr.out"; fail "gdr-effectiveness on the bad run"; }
pass "gdr-effectiveness: $(head -n 1 "$WORK/gdr.out")"

# Rules of our own: a staged comparison that fails, a link rule, Gb/s, no rows at all (NODATA).
cat >"$WORK/rules.profile" <<'PROFILE'
# test rules
include quick
rule lat-3x    write_lat   lat_p50_us <= 10% of staged  mem=device sizes=8:64
rule bw-line   write_bw    bw_GBps    >= 95% of link    mem=device path=direct sizes=1G
rule no-data   read_bw     bw_GBps    >= 1 GB/s
rule gb-bits   write_bw    bw_GBps    >= 380 Gb/s       mem=host sizes=64M
PROFILE
"${accept[@]}" "$WORK/good" "$WORK/rules.profile" >"$WORK/rules.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/rules.out"; fail "own rules: exit $rc, expected 1"; }
rule_says "$WORK/rules.out" lat-3x '^FAIL .*8B: direct 1\.627 us > 1\.063 us \(10% of staged 10\.63 us\); 16B: '
rule_says "$WORK/rules.out" bw-line '^PASS .*against 47\.50 GB/s'
rule_says "$WORK/rules.out" no-data '^NODATA .*no data: no row of read_bw with all sizes'
rule_says "$WORK/rules.out" gb-bits '^PASS .*against 47\.50 GB/s'
grep -q '<failure type="nodata"' "$WORK/good/verdict.xml" || fail "NODATA is not a failure in the JUnit XML"
pass "staged comparison, link rate from meta.json, Gb/s units and NODATA"

"${accept[@]}" --link-rate 800 "$WORK/good" "$WORK/rules.profile" >"$WORK/rules.out" 2>&1
rule_says "$WORK/rules.out" bw-line '^FAIL .*95% of 800 Gb/s'
# Without meta.json the rate comes from the link_gbps column, or the nic column when it names
# one; else the rule fails.
rm "$WORK/good/meta.json"
"${accept[@]}" "$WORK/good" "$WORK/rules.profile" >"$WORK/rules.out" 2>&1
rule_says "$WORK/rules.out" bw-line '^FAIL .*no link rate recorded'
sed 's|,mlx5_0:1,|,mlx5_0:1 200 Gb/s,|' "$DATA/good-run/results.csv" >"$WORK/good/results.csv"
"${accept[@]}" "$WORK/good" "$WORK/rules.profile" >"$WORK/rules.out" 2>&1
rule_says "$WORK/rules.out" bw-line '^PASS .*against 23\.75 GB/s'
sed 's|,mlx5_0:1,InfiniBand,,|,mlx5_0:1,InfiniBand,200.000,|' "$DATA/good-run/results.csv" >"$WORK/good/results.csv"
"${accept[@]}" "$WORK/good" "$WORK/rules.profile" >"$WORK/rules.out" 2>&1
rule_says "$WORK/rules.out" bw-line '^PASS .*against 23\.75 GB/s'
pass "--link-rate, the link_gbps column, the nic column's rate, and no rate recorded"

# Values that are not numbers are never read as 0 and never pass: each fixture holds the 8 B
# write_lat rows of the good run with one field spoilt (lat_p50_us nan, abc, -5, 0x10; size 8x).
cat >"$WORK/lat.profile" <<'PROFILE'
include quick
rule lat-p50  write_lat  lat_p50_us <= 3 us           mem=device path=direct sizes=8
rule gdr-lat  write_lat  lat_p50_us <= 50% of staged  mem=device sizes=8
PROFILE
mkdir "$WORK/lat-good"
csv_rows "$DATA/good-run/results.csv" benchmark=write_lat layer=verbs mem=device 'path~[a-z]+' 'reg~[a-z]+' \
	'stage_chunk~[0-9]*' 'stage_slots~[0-9]*' window= buffers= pair=all size_bytes=8 >"$WORK/lat-good/results.csv"
"${accept[@]}" "$WORK/lat-good" "$WORK/lat.profile" >"$WORK/lat.out" 2>&1 ||
	{ cat "$WORK/lat.out"; fail "the unspoilt 8 B rows: not accepted"; }
grep -q '^PASS: 2 rules, 2 passed' "$WORK/lat.out" || { cat "$WORK/lat.out"; fail "the unspoilt 8 B rows: summary line"; }
for spoilt in nan:lat_p50_us:nan text:lat_p50_us:abc negative:lat_p50_us:-5 hex:lat_p50_us:0x10 size:size_bytes:8x; do
	IFS=: read -r kind column value <<<"$spoilt"
	run=$WORK/invalid-$kind
	cp -r "$DATA/invalid-$kind" "$run"
	"${accept[@]}" "$run" "$WORK/lat.profile" >"$WORK/invalid.out" 2>&1
	rc=$?
	[ "$rc" -eq 3 ] || { cat "$WORK/invalid.out"; fail "$column '$value': exit $rc, expected 3 (INVALID)"; }
	why="not a finite non-negative decimal number"
	[ "$column" = size_bytes ] && why="not a non-negative integer"
	grep -q -F "INVALID $run/results.csv:2: $column '$value' is $why" "$WORK/invalid.out" ||
		{ cat "$WORK/invalid.out"; fail "$column '$value': the value is not named with its file and line"; }
	grep -q '^INVALID: 2 rules, 0 passed, 0 failed, 0 without data, 2 invalid (1 value not a number' "$WORK/invalid.out" ||
		{ cat "$WORK/invalid.out"; fail "$column '$value': summary line"; }
	rule_says "$WORK/invalid.out" lat-p50 "^INVALID lat-p50: .*1 of 1 check read a value that is not a number: .*results.csv:2: $column '$value'"
	json_ok "$run/verdict.json" || fail "$column '$value': verdict.json is not JSON"
	[ "$(json_get "$run/verdict.json" verdict)" = INVALID ] &&
		[ "$(json_get "$run/verdict.json" rules.0.verdict)" = INVALID ] &&
		[ "$(json_get "$run/verdict.json" invalid_values.0.line)" = 2 ] &&
		[ "$(json_get "$run/verdict.json" invalid_values.0.column)" = "$column" ] &&
		[ "$(json_get "$run/verdict.json" invalid_values.0.value)" = "$value" ] ||
		fail "$column '$value': verdict.json does not say INVALID with the file, line, column and value"
	grep -q '<testsuites name="gdrbench" tests="2" failures="0" errors="2">' "$run/verdict.xml" &&
		[ "$(grep -c '<error type="invalid"' "$run/verdict.xml")" -eq 2 ] ||
		{ cat "$run/verdict.xml"; fail "$column '$value': the JUnit XML does not report 2 errors"; }
	"${accept[@]}" -q "$run" "$WORK/lat.profile" >"$WORK/invalid.out" 2>&1
	[ "$(wc -l <"$WORK/invalid.out")" -eq 1 ] && grep -q '^INVALID: ' "$WORK/invalid.out" ||
		{ cat "$WORK/invalid.out"; fail "$column '$value': -q does not print the INVALID line alone"; }
done
pass "lat_p50_us nan, abc, -5, 0x10 and size_bytes 8x: INVALID (exit 3), named by file, line and column, in JSON and JUnit"

# An empty value is the binaries' "no figure": it fails, even against a staged path (never 0).
cp -r "$DATA/nofigure-staged" "$WORK/nofigure"
"${accept[@]}" "$WORK/nofigure" "$WORK/lat.profile" >"$WORK/nofigure.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/nofigure.out"; fail "empty lat_p50_us: exit $rc, expected 1"; }
rule_says "$WORK/nofigure.out" lat-p50 '^FAIL .*8B: lat_p50_us is empty \(no figure\)'
rule_says "$WORK/nofigure.out" gdr-lat '^FAIL .*8B: direct lat_p50_us is empty \(no figure\)'
pass "an empty lat_p50_us (no figure) fails, against a threshold and against the staged path"

# Bad input: exit 2, one line naming the file (and line).
mkdir "$WORK/empty"
: >"$WORK/emptycsv.csv"
expect_refused "no-such-dir: no such results directory" "${accept[@]}" "$WORK/no-such-dir" quick
expect_refused "empty: no results.csv" "${accept[@]}" "$WORK/empty" ib-ndr400
expect_refused "emptycsv.csv:1: empty file" "${accept[@]}" "$WORK/emptycsv.csv" ib-ndr400
expect_refused "malformed-header/results.csv:1: not a gdrbench results CSV" "${accept[@]}" "$DATA/malformed-header" ib-ndr400
expect_refused "malformed-row/results.csv:4: has 40 fields, the schema has 46" "${accept[@]}" "$DATA/malformed-row" ib-ndr400
expect_refused "nosuch: no such profile; expected a file or a shipped profile: .*ib-ndr400" "${accept[@]}" "$WORK/bad" nosuch
expect_refused "quick.profile: no rule lines" "${accept[@]}" "$WORK/bad" quick
expect_refused "expected RESULTS_DIR PROFILE" "${accept[@]}" "$WORK/bad"
expect_refused "unknown option '--bogus'" "${accept[@]}" --bogus "$WORK/bad" quick
expect_refused "--link-rate: expected the port rate in Gb/s" "${accept[@]}" --link-rate fast "$WORK/bad" quick

# Malformed profile lines: each names its file and line.
bad_profile() {
	printf 'run gdrb_mpi_bw mem=host\n%s\n' "$1" >"$WORK/bad.profile"
	expect_refused "bad.profile:2: $2" "${accept[@]}" "$WORK/bad" "$WORK/bad.profile"
}
bad_profile 'rule r mpi_bw bandwidth >= 1' "rule r: unknown column 'bandwidth'"
bad_profile 'rule r nosuch_bw bw_GBps >= 1' "rule r: benchmark 'nosuch_bw' is not run by this profile; its run lines give: mpi_bw"
bad_profile 'rule r mpi_bw bw_GBps => 1' "rule r: unknown operator '=>'"
bad_profile 'rule r mpi_bw bw_GBps >= 1 us' "rule r: unit 'us' does not fit bw_GBps"
bad_profile 'rule r mpi_bw bw_GBps >= fast' "rule r: threshold 'fast'"
bad_profile 'rule r mpi_bw bw_GBps >= nan' "rule r: threshold 'nan'"
bad_profile 'rule r mpi_bw bw_GBps >= -5' "rule r: threshold '-5'"
bad_profile 'rule r mpi_bw bw_GBps >= 0x10' "rule r: threshold '0x10'"
bad_profile 'rule r mpi_bw bw_GBps >= 1e3' "rule r: threshold '1e3'"
bad_profile 'rule r mpi_bw bw_GBps >= 1 sizes=8x' "rule r: sizes=8x: expected MIN:MAX"
bad_profile 'rule r mpi_bw bw_GBps >= 90%' "rule r: a percentage must say of what"
bad_profile 'rule r mpi_bw lat_p50_us >= 90% of link' "rule r: '% of link' compares a bandwidth column"
bad_profile 'rule r mpi_bw bw_GBps >= 1 sizes=8:4:2' "rule r: sizes=8:4:2: expected MIN:MAX"
bad_profile 'rule r mpi_bw bw_GBps >= 1 color=red' "rule r: unknown key 'color'"
bad_profile 'rule r mpi_bw reg >= 1' "rule r: >= needs a numeric column; 'reg' is text"
bad_profile 'rule r mpi_bw bw_GBps' "rule needs NAME BENCH COLUMN OP THRESHOLD"
bad_profile 'run gdrb_mpi_bw mem=GPU' "mem=: expected a comma list of lower-case names"
bad_profile 'run gdrb_mpi_bw sizes=0' "sizes: '0' is not a size list"
bad_profile 'walk gdrb_mpi_bw' "unknown statement 'walk'"
bad_profile 'run gdrb_mpi_bw args="-x' 'unterminated "quote"'
bad_profile 'include no-such-profile' "include: cannot read"
printf 'rule a mpi_bw bw_GBps >= 1\nrule a mpi_bw bw_GBps >= 2\nrun gdrb_mpi_bw\n' >"$WORK/dup.profile"
expect_refused "dup.profile:2: rule name 'a' already used at .*dup.profile:1" "${accept[@]}" "$WORK/bad" "$WORK/dup.profile"

# Every shipped profile parses.
for p in "$SCRIPTS"/profiles/*.profile; do
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from gdrbtool import common, profile
try:
    profile.load(sys.argv[2])
except common.Stop as e:
    sys.exit(e.message)' "$SCRIPTS/lib" "$p" || fail "$p does not parse"
done
pass "every shipped profile parses"
