#!/bin/bash
# scripts/measure/measure-staging: its model on fixture rows (the arithmetic, and a verdict that can fail),
# then end to end on the simulated GPU with tiny sizes: a report that says SIMULATED at the top,
# figures in every table, the verdicts not judged, nothing written under results/. Bad usage exits
# 2 with one line; without a GPU it exits 77; a run that fails validation fails the script (1).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# The GDRB_INJECT_* test hooks below run only with the test switch (common/util/gdrb_inject.h).
export GDRB_TEST_HOOKS=1
script=$top_srcdir/scripts/measure/measure-staging

# --- the model on fixture rows ---------------------------------------------------------------
# C = 8 GB/s at the 1 MiB fragment, 10 at the 4 MiB message, W = 5: the wire bounds the pipeline.
#   pipelined: 4 / (1/8 + 1/5 + 1/8 + 3/5) = 3.81 GB/s; serial: 1 / (1/10 + 1/5 + 1/10) = 2.50
#   target: 4.6 / (0.9 x 5) = 1.022 PASS, 4.4: 0.978 FAIL; latency 10/10 PASS, 11/10 FAIL
#   beside it, with Wf = 4 GB/s (the wire at the fragment, 4 in flight; the row whose window is 4):
#   4 / (1/8 + 1/4 + 1/8 + 3/4) = 3.20 GB/s, not judged
fixture() { # PIPELINED_GBPS PIPELINED_P50_US
	cat <<CSV
benchmark,mem,path,stage_chunk,size_bytes,lat_p50_us,bw_GBps,status,window
copy_bw,pinned,h2d,,1048576,,8,ok
copy_bw,pinned,d2h,,1048576,,8,ok
copy_bw,pinned,h2d,,4194304,,10,ok
copy_bw,pinned,d2h,,4194304,,10,ok
copy_bw,host,d2h,,4194304,,99,ok
mpi_bw,pinned,direct,,4194304,,5,ok
mpi_bw,device,direct,,4194304,,,unsupported
mpi_bw,device,staged,1048576,4194304,,$1,ok
mpi_bw,device,staged-serial,,4194304,,2.4,ok
mpi_latency,device,staged,524288,8,$2,,ok
mpi_latency,device,staged-serial,,8,10,,ok
mpi_bw,pinned,direct,,1048576,,4,ok,4
CSV
}
model() { # CSV MODE
	PYTHONPATH=$top_srcdir/scripts/lib python3 -m gdrbtool.staging_model "$2" --sizes 4194304 \
		--chunks 1048576 --target 0.9 --lat-tol 1.05 "$1"
}
fixture 4.6 10 >"$WORK/pass.csv"
fixture 4.4 11 >"$WORK/fail.csv"
model "$WORK/pass.csv" bw | grep -q '^| 1 MiB | 4 MiB | 4.60 | 3.81 | 1.21 | wire | [0-9.]*% | 1.02 | 3.20 | 1.44 |$' ||
	{ model "$WORK/pass.csv" bw; fail "pipelined model: expected 3.81 GB/s, bound by the wire; with Wf 3.20"; }
model "$WORK/pass.csv" serial | grep -q '^| 4 MiB | 2.40 | 2.50 | 0.960 | 1.92 |$' ||
	{ model "$WORK/pass.csv" serial; fail "serial model: expected 2.50 GB/s"; }
model "$WORK/pass.csv" rates | grep -q '^| 4 MiB | message | 10.0 | 10.0 | 5.00 | 5.00 | - |$' ||
	{ model "$WORK/pass.csv" rates; fail "rates: the pageable row, or W, taken for C"; }
model "$WORK/pass.csv" rates | grep -q '^| 1 MiB | fragment | 8.00 | 8.00 | - | - | 4.00 |$' ||
	{ model "$WORK/pass.csv" rates; fail "rates: Wf (window 4) not at the fragment, or taken for W"; }
[ "$(model "$WORK/pass.csv" verdict | tr '\n' ' ')" = \
	"bw_ratio 1.022 bw_verdict PASS lat_worst 1.000 lat_worst_size 8 B lat_verdict PASS bad 0 " ] ||
	{ model "$WORK/pass.csv" verdict; fail "verdicts of the passing rows"; }
[ "$(model "$WORK/fail.csv" verdict | tr '\n' ' ')" = \
	"bw_ratio 0.978 bw_verdict FAIL lat_worst 1.100 lat_worst_size 8 B lat_verdict FAIL bad 0 " ] ||
	{ model "$WORK/fail.csv" verdict; fail "verdicts of the failing rows"; }
sed 's/,ok$/,failed/' "$WORK/pass.csv" | sed -n '1,2p' >"$WORK/bad.csv"
model "$WORK/bad.csv" verdict | grep -qx 'bad 1' || fail "a failed row is not counted"
pass "model on fixture rows: pipelined 3.81, serial 2.50 GB/s; verdicts PASS at the target, FAIL below"

# --- bad usage ---------------------------------------------------------------------------------
expect_refused "unknown option '--bogus'" "$script" --bogus
expect_refused "--sizes: expected MIN:MAX" "$script" --sizes 8:1X
expect_refused "--sizes: expected MIN:MAX with 0 < MIN <= MAX" "$script" --sizes 4M:1M
expect_refused "--stage-chunk: '1K' is out of range; expected 4K to 1G" "$script" --stage-chunk 512K,1K
expect_refused "--stage-chunk: expected a size, auto, or a list" "$script" --stage-chunk 512Q
expect_refused "--stage-chunk: expected a size, auto, or a list" "$script" --stage-chunk automatic
expect_refused "--time-per-size: expected seconds" "$script" --time-per-size 0
expect_refused "--report: no directory" "$script" --report /nonexistent/staging.md
expect_refused "--build-dir: '/nonexistent' is not a directory" "$script" --build-dir /nonexistent
expect_refused "unexpected argument 'extra'" "$script" extra
"$script" --help | grep -q '^  *scripts/measure/measure-staging \[options\]' || fail "--help prints no usage"
pass "bad usage: exit 2 with one line; --help from the header comment"

need_mpi
[ -x "$top_builddir/bench/gdrb_copy_bw" ] || fail "gdrb_copy_bw not built"
use_simgpu strict
ms() {
	"$script" --build-dir "$top_builddir" --sizes 64K,256K --stage-chunk 16K,32K --time-per-size 0.02 "$@"
}
# one_line CODE PATTERN FILE: the run exited CODE ($rc) with exactly one stderr line holding PATTERN.
one_line() {
	[ "$rc" -eq "$1" ] || { cat "$3"; fail "exit $rc, expected $1"; }
	[ "$(wc -l <"$3")" -eq 1 ] || { cat "$3"; fail "not one line on stderr"; }
	grep -q -- "$2" "$3" || { cat "$3"; fail "the message lacks '$2'"; }
}

# --- no GPU: the runtime without a driver ------------------------------------------------------
SIMGPU_DRIVER=none ms >"$WORK/none.out" 2>"$WORK/none.err"
rc=$?
one_line 77 "^measure-staging: no usable GPU here: .*cudaErrorInsufficientDriver" "$WORK/none.err"
[ ! -s "$WORK/none.out" ] || fail "no GPU: something on stdout"
pass "no GPU: $(cat "$WORK/none.err")"

# --- the simulated GPU: never under results/ -----------------------------------------------------
expect_refused "--report: the GPU is simulated (gdrbench simulated GPU (simgpu)); its report never goes under results/" \
	ms --report "$top_srcdir/results/staging-simulated.md"
[ ! -e "$top_srcdir/results/staging-simulated.md" ] || fail "a simulated report under results/"

# --- a whole run on the simulated GPU ------------------------------------------------------------
results_before=$(ls -lA "$top_srcdir/results")
mkdir "$WORK/tmp"
TMPDIR=$WORK/tmp ms --report "$WORK/staging.md" >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/run.err"; fail "the simulated run exited $rc"; }
no_simgpu_errors "$WORK/run.err"
report=$WORK/staging.md
cmp -s "$report" "$WORK/run.out" || fail "stdout is not the report"
head -n 1 "$report" | grep -q '^# SIMULATED GPU: ' || fail "the title does not say SIMULATED"
grep -q '^\*\*SIMULATED:\*\*' "$report" || fail "no SIMULATED note"
grep -q '^| GPU | gdrbench simulated GPU (simgpu) (\*\*SIMULATED\*\*) |$' "$report" || fail "machine: GPU line"
grep -q '^| CPU | .*, [0-9]* CPUs online |$' "$report" || fail "machine: CPU line"
grep -q '^- Bandwidth: \*\*SIMULATED (not judged)\*\*: pipelined (16 KiB fragments) / (0.9 x min(C, W)) at 256 KiB =$' "$report" ||
	fail "the bandwidth verdict is judged, or its line is missing"
grep -q '^- Small messages: \*\*SIMULATED (not judged)\*\*: ' "$report" || fail "the latency verdict is judged"
grep -q '\*\*\(PASS\|FAIL\)\*\*' "$report" && fail "a PASS or FAIL on the simulated GPU"
num='[0-9][0-9.]*'
for s in '16 KiB | fragment' '32 KiB | fragment' '64 KiB | message' '256 KiB | message'; do
	grep -q "^| $s | $num | $num | " "$report" || fail "rates: no C at $s"
done
grep -q "^| 256 KiB | message | $num | $num | $num | $num | - |$" "$report" || fail "rates: no W at 256 KiB"
grep -q "^| 16 KiB | fragment | $num | $num | - | - | $num |$" "$report" || fail "rates: no Wf at the 16 KiB fragment"
for c in 16 32; do
	for s in '64 KiB' '256 KiB'; do
		grep -q "^| $c KiB | $s | $num | $num | $num | \(wire\|copy D2H\|copy H2D\) | $num% | $num | $num | $num |$" "$report" ||
			fail "pipelined: no figures for $c KiB fragments at $s"
	done
done
grep -q "^| 256 KiB | $num | $num | $num | $num |$" "$report" || fail "serial: no figures at 256 KiB"
[ "$(grep -c "^| [0-9]* [KM]*i*B | $num | $num | $num |$" "$report")" -eq 14 ] ||
	fail "latency: expected 14 sizes, 8 B..64 KiB"
{ grep -q "^| 8 B | $num | $num | $num |$" "$report" && grep -q "^| 64 KiB | $num | $num | $num |$" "$report"; } ||
	fail "latency: 8 B or 64 KiB missing"
grep -q '^    mpirun -np 2 mpi/gdrb_mpi_bw --mem device --staging both --stage-chunk 16K --stage-slots 4 -W 1 -c -m 64K,256K -t 0.02 --csv OUT/rows.csv$' "$report" ||
	fail "the staged command"
grep -q '^measure-staging: verdict: bandwidth SIMULATED (not judged) (ratio [0-9.]*), small messages SIMULATED (not judged)' "$WORK/run.err" ||
	fail "no verdict line on stderr"
grep -n "/tmp\|$top_builddir" "$report" && fail "the report names this machine's paths"
grep -nw -- "$(hostname)" "$report" && fail "the report names this machine"
[ -z "$(ls -A "$WORK/tmp")" ] || fail "the temporary raw output was left behind"
[ "$(ls -lA "$top_srcdir/results")" = "$results_before" ] || fail "the run changed results/"
pass "simulated run: SIMULATED at the top, every table filled, verdicts not judged, results/ untouched"

# --- auto: the fragment and slots the binary chose, run first and judged first -------------------
ms --stage-chunk auto,16K --report "$WORK/auto.md" >/dev/null 2>"$WORK/auto.err"
rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/auto.err"; fail "the auto run exited $rc"; }
no_simgpu_errors "$WORK/auto.err"
chosen=$(sed -n 's/^measure-staging: staged-auto: the binary chose \([0-9]* [KM]iB\) fragments x \([2-8]\) slots$/\1 \2/p' "$WORK/auto.err")
[ -n "$chosen" ] || { cat "$WORK/auto.err"; fail "auto: no line saying what the binary chose"; }
grep -q '^    mpirun -np 2 mpi/gdrb_mpi_bw --mem device --staging both -W 1 -c -m 64K,256K -t 0.02 --csv OUT/rows.csv$' "$WORK/auto.md" ||
	fail "auto: the staged-auto command (no --stage-chunk, --staging both)"
grep -q "^- Bandwidth: \*\*SIMULATED (not judged)\*\*: pipelined (${chosen% *} fragments) " "$WORK/auto.md" ||
	fail "auto: the chosen fragment is not the one judged"
grep -q "^\`gdrb_mpi_bw --mem device -W 1\`, validated (\`-c\`): ${chosen% *} fragments x ${chosen##* } slots as the$" "$WORK/auto.md" ||
	fail "auto: the report does not say what was chosen"
grep -q '^    mpirun -np 2 mpi/gdrb_mpi_bw --mem device --staging pipelined --stage-chunk 16K --stage-slots 4 ' "$WORK/auto.md" ||
	fail "auto: the explicit fragment's run after it"
pass "auto: the binary chose $chosen; run first, judged, said in the report"

# --- a run that fails validation fails the script ------------------------------------------------
# Rank 1 corrupts its device receive buffer: the staged run finds wrong bytes.
GDRB_INJECT_CORRUPTION=1 ms --out "$WORK/bad" >"$WORK/bad.out" 2>"$WORK/bad.err"
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/bad.err"; fail "validation failure: exit $rc, expected 1"; }
tail -n 1 "$WORK/bad.err" | grep -q '^measure-staging: staged-16K: exit 1: ' || { cat "$WORK/bad.err"; fail "the failure's line"; }
[ ! -s "$WORK/bad.out" ] || fail "a report after a failed run"
{ [ -s "$WORK/bad/rows.csv" ] && [ -s "$WORK/bad/staged-16K.err" ]; } || fail "--out lacks the raw output"
pass "injected corruption: $(tail -n 1 "$WORK/bad.err")"
