#!/bin/bash
# scripts/measure/measure-gpu end to end on the simulated GPU (its test switch): the report, marked
# simulated and kept out of results/, has copy_bw's figures and a PASS line per step that ran,
# a reason for every SKIP; a validation failure in a step makes it FAIL and the run exit 1.
# The p2p step: one GPU a SKIP saying so (not a failure); on the simulated 4-GPU node (nvlink4)
# gdrb_copy_bw --p2p=both over --p2p-sizes, PASS with the pairs without peer access n/a, its
# matrices in the report, and a corrupting link makes it FAIL.
# Without the switch it refuses the simulator (LD_LIBRARY_PATH, or the header alone); without a
# GPU it exits 77 with one line; bad usage exits 2 with one line.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# The GDRB_INJECT_* test hooks below run only with the test switch (common/util/gdrb_inject.h).
export GDRB_TEST_HOOKS=1
script=$top_srcdir/scripts/measure/measure-gpu
[ -x "$top_builddir/bench/gdrb_copy_bw" ] || fail "gdrb_copy_bw not built"
# The tests never build: the build tree is make check's own.
mg() {
	"$script" --no-build --build-dir "$top_builddir" --sizes 8,64K --time-per-size 0.02 "$@"
}
# one_line CODE PATTERN FILE: the run exited CODE ($rc) with exactly one stderr line holding PATTERN.
one_line() {
	[ "$rc" -eq "$1" ] || { cat "$3"; fail "exit $rc, expected $1"; }
	[ "$(wc -l <"$3")" -eq 1 ] || { cat "$3"; fail "not one line on stderr"; }
	grep -q -- "$2" "$3" || { cat "$3"; fail "the message lacks '$2'"; }
}

# --- bad usage ----------------------------------------------------------------------------
expect_refused "unknown option '--bogus'" "$script" --bogus
expect_refused "--sizes: expected MIN:MAX" "$script" --sizes 8:1X
expect_refused "--p2p-sizes: expected MIN:MAX or a list like 64K,4M,512M" "$script" --p2p-sizes 64K,,1M
expect_refused "--time-per-size: expected seconds" "$script" --time-per-size 0
expect_refused "--step-timeout: expected whole seconds" "$script" --step-timeout
expect_refused "--build-dir: '/nonexistent' is not a directory" "$script" --build-dir /nonexistent
expect_refused "--report: no directory" "$script" --report /nonexistent/gpu.md
expect_refused "configure arguments after -- need a build" "$script" --no-build -- --with-mpi=no
expect_refused "unexpected argument 'extra'" "$script" extra
"$script" --help | grep -q '^  *scripts/measure/measure-gpu \[options\]' || fail "--help prints no usage"
"$script" --help | grep -q 'test-on-simulator' && fail "--help shows the test switch"
pass "bad usage: exit 2 with one line; --help from the header comment, without the test switch"

# --- a GPU listed by nvidia-smi (a fake one), for the paths that consult it ------------------
fake_nvidia_smi "$WORK/smi" "NVIDIA H100 80GB HBM3" 00000000:3B:00.0

# --- no GPU: the real CUDA runtime of this machine, without a driver ---------------------------
if command -v nvidia-smi >/dev/null 2>&1; then
	echo "this machine has nvidia-smi: the no-GPU runs of the real runtime are not checked here"
else
	env -u LD_LIBRARY_PATH "$script" --no-build --build-dir "$top_builddir" >"$WORK/none.out" 2>"$WORK/none.err"
	rc=$?
	one_line 77 "^measure-gpu: no GPU here: nvidia-smi not found" "$WORK/none.err"
	[ ! -s "$WORK/none.out" ] || fail "no GPU: something on stdout"
	PATH=$WORK/smi:$PATH env -u LD_LIBRARY_PATH "$script" --no-build --build-dir "$top_builddir" \
		>"$WORK/none.out" 2>"$WORK/none.err"
	rc=$?
	if [ "${HAVE_CUDA:-1}" = 1 ]; then
		one_line 77 "^measure-gpu: no usable GPU here: gdrb_copy_bw: unsupported on this node: .*cudaErrorInsufficientDriver" "$WORK/none.err"
	else
		one_line 1 "built without CUDA" "$WORK/none.err"
	fi
	pass "no GPU: $(cat "$WORK/none.err")"
fi

use_simgpu strict

# --- the simulator without the switch: refused, before or after the probe ---------------------
PATH=$WORK/smi:$PATH mg --out "$WORK/refused" >"$WORK/ref.out" 2>"$WORK/ref.err"
rc=$?
one_line 1 "^measure-gpu: refusing to measure the simulated GPU: LD_LIBRARY_PATH puts" "$WORK/ref.err"
[ -z "$(ls -A "$WORK/refused" 2>/dev/null)" ] || fail "refused, yet wrote into --out"
# The same library elsewhere: only gdrbench's header tells.
cp -r "$top_builddir/tests/support/simgpu/lib" "$WORK/cudart"
PATH=$WORK/smi:$PATH LD_LIBRARY_PATH=$WORK/cudart mg --out "$WORK/refused" >"$WORK/ref.out" 2>"$WORK/ref.err"
rc=$?
one_line 1 "^measure-gpu: refusing to measure the simulated GPU: gdrbench's header says 'gdrbench simulated GPU (simgpu)" "$WORK/ref.err"
ls "$WORK/refused"/*.md >/dev/null 2>&1 && fail "refused, yet wrote a report"
ls "$top_srcdir"/results/gpu-*simulated* >/dev/null 2>&1 && fail "a simulated report under results/"
pass "the simulated GPU is refused without the test switch: by LD_LIBRARY_PATH, and by the header alone"

# --- the switch without a driver: 77 ------------------------------------------------------------
SIMGPU_DRIVER=none mg --test-on-simulator >"$WORK/nodrv.out" 2>"$WORK/nodrv.err"
rc=$?
one_line 77 "^measure-gpu: no usable GPU here: .*cudaErrorInsufficientDriver" "$WORK/nodrv.err"
pass "no driver behind the runtime: $(cat "$WORK/nodrv.err")"

# --- the switch: a whole run, the report in the raw-output directory -----------------------
expect_refused "--report: a report of the simulated GPU never goes under results/" \
	"$script" --test-on-simulator --report "$top_srcdir/results/gpu-x.md"
expect_refused "--out: the simulated GPU's report goes there, and never under results/" \
	"$script" --test-on-simulator --out "$top_srcdir/results/simulated"
[ ! -e "$top_srcdir/results/simulated" ] || fail "--out under results/ was created"
mg --test-on-simulator --out "$WORK/run" >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/run.err"; fail "the simulated run exited $rc"; }
no_simgpu_errors "$WORK/run.err"
report=$WORK/run/gpu-gdrbench-simulated-GPU-simgpu.md
[ -s "$report" ] || { ls "$WORK/run"; fail "no report gpu-gdrbench-simulated-GPU-simgpu.md in --out"; }
cmp -s "$report" "$WORK/run.out" || fail "stdout is not the report"
head -n 1 "$report" | grep -q '^# gdrbench on a SIMULATED GPU' || fail "the title does not say simulated"
grep -q '^\*\*SIMULATED:\*\*' "$report" || fail "no SIMULATED note"
grep -q 'Verdict: \*\*PASS\*\*' "$report" || { cat "$report"; fail "verdict"; }
grep -q '^| GPU | gdrbench simulated GPU (simgpu), PCI 0000:3B:00.0' "$report" || fail "machine: GPU line"
grep -q '^| 1 | copy_bw | PASS | 0 | [0-9]* | 10 rows ok, validated |$' "$report" ||
	{ grep '^| 1 ' "$report"; fail "copy_bw: no PASS line with 5 copies x 2 sizes"; }
grep -q '^| 64 KiB | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |$' "$report" || fail "no copy_bw figures at 64 KiB"
grep -q '^`bench/gdrb_copy_bw -c -m 8,64K -t 0.02 --csv OUT/01-copy_bw.csv`$' "$report" || fail "copy_bw's command"
csv_check -v status=ok -v rows=10 "$WORK/run/01-copy_bw.csv" || fail "copy_bw's raw CSV"
grep -q '^| 3 | doctor | \(PASS\|INFO\) | [01] | ' "$report" || fail "doctor: not recorded"
grep -q '^# gdrb_doctor ' "$report" || fail "doctor's table not in the report"
if [ -x "$top_builddir/tests/unit/test_mem" ]; then
	grep -q '^| 2 | test_mem | PASS | 0 | [0-9]* | 100%: Checks: [0-9]*, Failures: 0, Errors: 0; device_roundtrip ran on the GPU |$' "$report" ||
		fail "test_mem: no PASS line"
else
	grep -q '^| 2 | test_mem | SKIP | ' "$report" || fail "test_mem: neither run nor skipped"
fi
n=4
for b in latency bw bibw allreduce bcast; do
	if [ "${HAVE_MPI:-1}" = 1 ] && command -v "$MPIRUN" >/dev/null 2>&1; then
		grep -q "^| $n | mpi_$b | PASS | 0 | [0-9]* | 2 rows ok, validated" "$report" ||
			{ grep "^| $n " "$report"; fail "mpi_$b: no PASS line"; }
		grep -q "^\`$(basename "$MPIRUN") -np 2 mpi/gdrb_mpi_$b --mem device -c " "$report" || fail "mpi_$b: command"
	else
		grep -q "^| $n | mpi_$b | SKIP | " "$report" || fail "mpi_$b: no SKIP line"
	fi
	n=$((n + 1))
done
for b in write_lat write_bw read_lat read_bw send_lat send_bw; do
	grep -q "^| $n | $b | \(PASS\|SKIP\) | " "$report" || { grep "^| $n " "$report"; fail "$b: neither PASS nor SKIP"; }
	n=$((n + 1))
done
# scripts/measure/measure-staging: its report inside this one, its verdicts not judged on the simulator.
if [ "${HAVE_MPI:-1}" = 1 ] && command -v "$MPIRUN" >/dev/null 2>&1; then
	grep -q "^| $n | staging | PASS | 0 | [0-9]* | every run validated; bandwidth SIMULATED (not judged) (ratio [0-9.]*), small messages SIMULATED (not judged) " "$report" ||
		{ grep "^| $n " "$report"; fail "staging: no PASS line with verdicts not judged"; }
	grep -q '^`scripts/measure/measure-staging --build-dir \. --time-per-size 0.02 --out OUT/15-staging.raw`$' "$report" || fail "staging: command"
	grep -q '^#### SIMULATED GPU: the staged path against its model' "$report" || fail "staging: its report is not in this one"
	grep -q '^##### Pipelined staging against the model$' "$report" || fail "staging: its headings are not below the step's"
else
	grep -q "^| $n | staging | SKIP | " "$report" || fail "staging: no SKIP line"
fi
grep -q '^| 16 | p2p | SKIP |  |  | one GPU: GPU-to-GPU not measured (CUDA sees 1 GPU; gdrb_copy_bw --p2p needs two) |$' "$report" ||
	{ grep '^| 16 ' "$report"; fail "p2p on one GPU: not a SKIP saying so"; }
grep -E '^\| [0-9]+ \| [a-z_]+ \| SKIP \|.*\|  \|$' "$report" && fail "a SKIP without its reason"
grep -q '/tmp\|'"$top_builddir" "$report" && { grep -n "/tmp\|$top_builddir" "$report"; fail "the report names this machine's paths"; }
pass "simulated run: $(grep -c '| PASS |' "$report") steps PASS, $(grep -c '| SKIP |' "$report") SKIP with a reason, report marked simulated"

# --- a step that fails validation fails the run ---------------------------------------------------
# MPI ranks corrupt a device receive buffer (GDRB_INJECT_CORRUPTION=1: rank 1): the MPI steps
# find wrong bytes, the report says FAIL, the exit status is 1.
if [ "${HAVE_MPI:-1}" = 1 ] && command -v "$MPIRUN" >/dev/null 2>&1; then
	GDRB_INJECT_CORRUPTION=1 mg --test-on-simulator --out "$WORK/bad" >"$WORK/bad.out" 2>"$WORK/bad.err"
	rc=$?
	[ "$rc" -eq 1 ] || { cat "$WORK/bad.err"; fail "validation failures: exit $rc, expected 1"; }
	report=$WORK/bad/gpu-gdrbench-simulated-GPU-simgpu.md
	grep -q '^| 4 | mpi_latency | FAIL | 1 | ' "$report" || { grep '^| 4 ' "$report"; fail "mpi_latency: no FAIL line"; }
	grep -q 'Verdict: \*\*FAIL\*\*' "$report" || fail "verdict is not FAIL"
	grep -q '^| 1 | copy_bw | PASS ' "$report" || fail "copy_bw does not PASS beside the failure"
	grep -q '^| 15 | staging | FAIL | 1 | [0-9]* | exit 1: measure-staging: staged-auto: exit 1: ' "$report" ||
		{ grep '^| 15 ' "$report"; fail "staging: no FAIL line"; }
	pass "injected corruption: $(grep -c '| FAIL |' "$report") steps FAIL, exit 1"
else
	echo "no MPI: the injected validation failure is not checked"
fi

# --- GPU to GPU on a node of 4 (nvlink4: bridges 0-1 and 2-3 only) ------------------------------
# No launcher (MPIRUN and the build's mpirun hidden): the MPI, verbs and staging steps SKIP quickly.
p2p_run() { # DIR [ENV...]: the run on nvlink4 with the p2p step's sizes; rc set
	local dir=$1
	shift
	env SIMGPU_NODE=nvlink4 MPIRUN=/nonexistent/mpirun "$@" "$script" --no-build --build-dir "$top_builddir" \
		--sizes 8 --p2p-sizes 64K --time-per-size 0.02 --test-on-simulator --out "$dir" >"$dir.out" 2>"$dir.err"
	rc=$?
}
p2p_run "$WORK/p2p"
[ "$rc" -eq 0 ] || { cat "$WORK/p2p.err"; fail "nvlink4: exit $rc"; }
no_simgpu_errors "$WORK/p2p.err"
report=$WORK/p2p/gpu-gdrbench-simulated-GPU-simgpu.md
grep -q '^| GPU | gdrbench simulated GPU (simgpu), PCI [0-9A-F:.]* (rank 0: device 0 of 4)' "$report" || fail "nvlink4: the GPU line"
grep -q '^| 16 | p2p | PASS | 0 | [0-9]* | 32 rows ok, validated; 16 unsupported: cudaDeviceCanAccessPeer(0, 2) = 0: ' "$report" ||
	{ grep '^| 16 ' "$report"; fail "nvlink4: p2p not PASS with 32 rows ok and 16 n/a"; }
grep -q '^`bench/gdrb_copy_bw --p2p=both -c -m 64K -t 0.02 --csv OUT/16-p2p.csv`$' "$report" || fail "p2p: its command"
csv_check -v rows=48 "$WORK/p2p/16-p2p.csv" || fail "p2p: its raw CSV"
[ "$(grep -c '^# 64KiB.*: direct / staged$' "$report")" = 2 ] || fail "p2p: the ratio matrices are not in the report"
grep -q '^# gpu3 ' "$report" || fail "p2p: the matrices lack gpu3"
grep -q 'Verdict: \*\*PASS\*\*' "$report" || fail "nvlink4: verdict"
pass "nvlink4: the p2p step PASS, 12 ordered pairs x 4 paths, 16 direct rows n/a with CUDA's answer, matrices in the report"
p2p_run "$WORK/p2pbad" SIMGPU_CORRUPT_PEER=1
[ "$rc" -eq 1 ] || { cat "$WORK/p2pbad.err"; fail "a corrupting link: exit $rc, expected 1"; }
report=$WORK/p2pbad/gpu-gdrbench-simulated-GPU-simgpu.md
grep -q '^| 16 | p2p | FAIL | 1 | [0-9]* | exit 1: ' "$report" || { grep '^| 16 ' "$report"; fail "p2p: a corrupting link is not FAIL"; }
grep -q '^| 1 | copy_bw | PASS ' "$report" || fail "copy_bw does not PASS beside the p2p failure"
pass "a link that corrupts every peer copy: the p2p step FAIL, exit 1"
