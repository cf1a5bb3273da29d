#!/bin/bash
# gdrb_mpi_pairs (all pairs in shifted rounds): np 2, 3 (odd) and 4 give complete matrices
# and a pairs CSV valid against common/core/pairs_schema.def; --rounds samples the seeded shifts;
# --granularity rail pairs GPU i with GPU i only (nodes named by the GDRB_INJECT_HOSTS hook);
# device memory on the simulated GPU, direct and staged; a rank stopped mid-run is named within
# --timeout with the finished rounds kept; a corrupted byte is caught; bad input exits 2 with
# one line. Each checker is shown to catch the fault it is for.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# The GDRB_INJECT_* test hooks below run only with the test switch (common/util/gdrb_inject.h).
export GDRB_TEST_HOOKS=1
need_mpi
bin=$top_builddir/mpi/gdrb_mpi_pairs
[ -x "$bin" ] || skip "gdrb_mpi_pairs not built"

# run NP DIR ARGS...: gdrb_mpi_pairs with its CSV in DIR; output in DIR/out, DIR/err; the
# variables named in $pass (GDRB_INJECT_*) go to the ranks; $sizes replaces -m 64K,8.
pass=
run() {
	local np=$1 dir=$2 x=() v
	shift 2
	mkdir -p "$dir"
	for v in $pass; do x+=(-x "$v"); done
	mpi "$np" "${x[@]}" "$bin" -t 0.005 -W 2 -m "${sizes:-64K,8}" --csv "$dir/pairs.csv" "$@" >"$dir/out" 2>"$dir/err"
}

# The checkers catch their faults: a comma in a text field, a missing cell, a filled diagonal.
h=$(pairs_header)
row=mpi_pairs,mpi,host,direct,host,bw,8,1,0,1,a,b,0,0,,,,,5,1.500,,ok,0,,,,2026-01-01T00:00:00Z,0.1
printf '%s\n%s\n' "$h" "$row" >"$WORK/good.csv"
pairs_check "$WORK/good.csv" -v rows=1 >/dev/null || fail "pairs_check refuses a good row"
printf '%s\n%s\n' "$h" "${row/,a,b,/,a_x,b,c,}" >"$WORK/bad.csv"
pairs_check "$WORK/bad.csv" >/dev/null && fail "pairs_check passes a row with an extra comma"
printf '%s\n%s\n' "$h" "${row/,1.500,,ok/,,,ok}" >"$WORK/bad.csv"
pairs_check "$WORK/bad.csv" >/dev/null && fail "pairs_check passes a bw row without bw_GBps"
printf '%s\n%s\n' "$h" "${row/,ok,0,,,,/,ok,0,3,900,,}" >"$WORK/bad.csv"
pairs_check "$WORK/bad.csv" >/dev/null && fail "pairs_check passes a bw row with nic_errors"
printf 'src\\dst,0,1\n0,,1.0\n1,,\n' >"$WORK/m.csv"
pairs_matrix_check "$WORK/m.csv" 2 all >/dev/null && fail "pairs_matrix_check passes a missing cell"
printf 'src\\dst,0,1\n0,1.0,1.0\n1,1.0,\n' >"$WORK/m.csv"
pairs_matrix_check "$WORK/m.csv" 2 all >/dev/null && fail "pairs_matrix_check passes a filled diagonal"
pass "the checkers catch a comma in a field, a bw row without its figure or with NIC counts, a hole and a filled diagonal"

# np 2, 3, 4 (2 and 3 in the sanitizer pass: rank_counts): every off-diagonal cell of every
# matrix, one row per pair, size and metric.
for np in $(rank_counts); do
	d=$WORK/np$np
	run "$np" "$d" --metric bw,lat || { cat "$d/out" "$d/err"; fail "np $np exited non-zero"; }
	pairs_check "$d/pairs.csv" -v rows=$((np * (np - 1) * 4)) -v status=ok -v shift=1 -v ranks="$np" ||
		fail "np $np: the pairs CSV"
	for f in pairs-65536-direct pairs-8-direct pairs-lat-65536-direct pairs-lat-8-direct; do
		pairs_matrix_check "$d/$f.csv" "$np" all || fail "np $np: $f.csv"
	done
	[ "$(ranks_col "$d/pairs-ranks.csv" rank | paste -sd,)" = "$(seq -s, 0 $((np - 1)))" ] || fail "np $np: the rank table"
	grep -q "^# matrix bw 64KiB direct" "$d/out" || fail "np $np: no matrix on stdout"
	[ -z "$(find "$d" -name '*.tmp')" ] || fail "np $np: a .tmp file left"
done
pass "np $(rank_counts): complete bw and lat matrices, one row per pair, size and metric, rank table"

# Latency phases longer than --timeout: with 3 ranks a phase times one pair while the third rank
# goes on to the next phase and waits there on a rank still timing; it waits up to 10 x -t
# beyond --timeout (pairs.c busy_s()), so a healthy run does not give up (it did with -t 2 -T 1,
# and with 4 x -t under the sanitizers beside other tests).
d=$WORK/longphase
mkdir -p "$d"
mpi 3 "$bin" --metric lat -m 8 -n 10000000 -t 2 -T 1 --rounds 1 --seed 1 --csv "$d/pairs.csv" >"$d/out" 2>"$d/err" ||
	{ cat "$d/err"; fail "latency phases of 2 s with --timeout 1: exit non-zero"; }
pairs_check "$d/pairs.csv" -v rows=3 -v status=ok || fail "latency phases of 2 s with --timeout 1: the CSV"
pass "latency phases of 2 s, --timeout 1: the ranks outside a phase wait for it, 3 pairs measured"

# --rounds K --seed S: K distinct shifts, the same for the same seed, recorded.
d=$WORK/rounds
run 5 "$d" --rounds 2 --seed 42 || { cat "$d/err"; fail "--rounds 2"; }
shifts=$(sed -n 's/^# rounds: 2 of 4, shifts \([0-9,]*\); seed 42 .*/\1/p' "$d/out")
[ -n "$shifts" ] || { cat "$d/out"; fail "the header does not give 2 of 4 shifts and seed 42"; }
cells=
for k in ${shifts//,/ }; do for i in 0 1 2 3 4; do cells+="$i:$(((i + k) % 5)) "; done; done
pairs_matrix_check "$d/pairs-65536-direct.csv" 5 "$cells" || fail "--rounds 2: cells of shifts $shifts"
pairs_check "$d/pairs.csv" -v rows=20 -v shift=1 -v ranks=5 || fail "--rounds 2: CSV"
[ "$(grep -c 'rounds 2 of 4 sampled by seed 42' "$d/pairs.csv")" -eq 20 ] || fail "the seed is not in the note"
run 5 "$WORK/rounds2" --rounds 2 --seed 42 || fail "--rounds 2 again"
grep -q "shifts $shifts; seed 42" "$WORK/rounds2/out" || fail "the same seed chose other shifts"
pass "--rounds 2 --seed 42 measures shifts $shifts, again for the same seed, the note says so"

# Rail: hosts a,a,b,b (two GPUs per node): GPU i meets GPU i of the other node only.
d=$WORK/rail
GDRB_INJECT_HOSTS=a,a,b,b pass=GDRB_INJECT_HOSTS run 4 "$d" --granularity rail ||
	{ cat "$d/err"; fail "--granularity rail"; }
pairs_matrix_check "$d/pairs-65536-direct.csv" 4 "0:2 2:0 1:3 3:1" || fail "rail: not GPU i with GPU i"
grep -q "granularity rail: 2 shift group(s) of 2 ranks" "$d/out" || { cat "$d/out"; fail "rail header"; }
pass "--granularity rail on two 2-GPU nodes: only 0<->2 and 1<->3"
d=$WORK/node
GDRB_INJECT_HOSTS=a,b,c pass=GDRB_INJECT_HOSTS run 3 "$d" --granularity node || { cat "$d/err"; fail "--granularity node"; }
pairs_matrix_check "$d/pairs-65536-direct.csv" 3 all || fail "node: not every pair"
grep -q "^# ranks: 3 on 3 nodes; granularity node" "$d/out" || { cat "$d/out"; fail "node header"; }
pass "--granularity node on three one-rank nodes: every pair"

# Bad input: one line, exit 2.
export GDRB_INJECT_HOSTS=
expect_mpi_usage() { # PATTERN NP ARGS...
	local pattern=$1 np=$2 rc=0
	shift 2
	mpi "$np" -x GDRB_INJECT_HOSTS "$bin" "$@" >"$WORK/u.out" 2>"$WORK/u.err" || rc=$?
	[ "$rc" -eq 2 ] || { cat "$WORK/u.err"; fail "'$*' at np $np exited $rc, expected 2"; }
	[ "$(our_lines gdrb_mpi_pairs "$WORK/u.err")" -eq 1 ] || { cat "$WORK/u.err"; fail "'$*': not one line"; }
	grep -q -- "$pattern" "$WORK/u.err" || { cat "$WORK/u.err"; fail "'$*': no '$pattern'"; }
	pass "np $np $* -> 2: $(grep '^gdrb_mpi_pairs' "$WORK/u.err")"
}
expect_mpi_usage "needs at least 2 ranks (got 1)" 1
expect_mpi_usage "--rounds 3: accepted 1..2" 3 --rounds 3
expect_mpi_usage "--granularity node: one rank per node, but host .* runs 2 ranks" 2 --granularity node
GDRB_INJECT_HOSTS=a,a,b expect_mpi_usage "--granularity rail: .*host a runs 2 and host b runs 1" 3 \
	--granularity rail
expect_refused "--rounds: expected an integer from 1" "$bin" --rounds 0
expect_refused "--granularity: unknown granularity 'x'; accepted: rank, node, rail" "$bin" --granularity x
expect_refused "--metric: unknown metric list 'bw,x'" "$bin" --metric bw,x
expect_refused "--staging both, --stage-chunk, --stage-slots and --buffers single do not apply" "$bin" --mem device --staging both
expect_refused "--round-every: needs --start-at EPOCH" "$bin" --round-every 2
expect_refused "--start-at: expected an integer from 1" "$bin" --start-at 0

# --start-at and --round-every: round 1 begins at the given second, round 2 two seconds after it.
start=$(($(date +%s) + 2))
mpi 3 "$bin" -m 4K -t 0.05 --start-at "$start" --round-every 2 >"$WORK/start.out" 2>"$WORK/start.err" ||
	{ cat "$WORK/start.err"; fail "--start-at $start --round-every 2"; }
end=$(date +%s)
grep -q "^# start: round i (from 0) at the wall-clock second $start + i x 2 s (--start-at, --round-every)" "$WORK/start.out" ||
	{ cat "$WORK/start.out"; fail "--start-at: the header does not say when the rounds begin"; }
[ "$end" -ge $((start + 2)) ] || fail "--start-at $start --round-every 2: ended at $end, before round 2's second"
pass "--start-at $start --round-every 2: 2 rounds, ended at $end"

# A flipped byte in rank 1's receive buffer: the pair into rank 1 is an error, exit 1.
d=$WORK/corrupt
rc=0
GDRB_INJECT_CORRUPTION=1 pass=GDRB_INJECT_CORRUPTION sizes=4K run 3 "$d" || rc=$?
[ "$rc" -eq 1 ] || { cat "$d/err"; fail "a corrupted byte: exit $rc, expected 1"; }
n=$(pairs_count "$d/pairs.csv" metric=bw size_bytes=4096 'round~[12]' 'src_rank~[02]' dst_rank=1 status=error errors=1)
[ "$n" -eq 2 ] || { cat "$d/pairs.csv"; fail "$n of 2 pairs into rank 1 are errors with 1 wrong byte"; }
pairs_matrix_check "$d/pairs-4096-direct.csv" 3 "0:2 1:0 1:2 2:0" || fail "the corrupted pairs are not empty cells"
grep -q "wrong byte(s) from rank" "$d/err" || fail "no line naming the sender"
pass "a flipped byte is caught: the 2 pairs into rank 1 are status error, their cells empty, exit 1"

# run_stopped VAR=RANK:N WHAT: run 4 ranks into $d with --timeout 3 and the stop hook VAR set,
# in the background under a 240 s hang guard; rc: its exit status, took: seconds from the start
# until a line named rank 2 (or until the end).
run_stopped() {
	local hook=$1 what=$2 start pid
	start=$(date +%s)
	(export "${hook?}"; pass=${hook%%=*} run 4 "$d" --timeout 3) &
	pid=$!
	took=
	while kill -0 "$pid" 2>/dev/null; do
		if [ -z "$took" ] && grep -q "timeout: no answer from rank 2 (" "$d/err" 2>/dev/null; then
			took=$(($(date +%s) - start))
		fi
		[ "$(($(date +%s) - start))" -le 240 ] ||
			{ kill "$pid"; cat "$d/out" "$d/err"; fail "$what: still running after 240 s"; }
		sleep 0.2
	done
	rc=0
	wait "$pid" || rc=$?
	[ -n "$took" ] || took=$(($(date +%s) - start))
}

# A rank that stops (SIGSTOP) as round 2 begins: named within --timeout, round 1 kept. The
# time asked is until the line naming it: the ranks' exit after it can take longer than the
# run (a sanitizer build scans each of the 4 processes for leaks as it exits). The watchdog
# counts --timeout in time the waiting rank could run (common/util/watchdog.c); 4 polling
# ranks on a loaded 2-core machine get a fraction of a CPU each (-T 3 takes 4 to 86 s at load 7
# to 11), so the bound is a hang guard, not -T: tests/integration/timeout.sh holds the watchdog to -T.
d=$WORK/stop
run_stopped GDRB_INJECT_PAIRS_STOP=2:2 "a stopped rank"
[ "$rc" -ne 0 ] || fail "a stopped rank: exit 0"
[ "$took" -le 180 ] || fail "a stopped rank: named after $took s, --timeout was 3"
grep -q "timeout: no answer from rank 2 (" "$d/err" || { cat "$d/err"; fail "the stopped rank 2 is not named"; }
pairs_matrix_check "$d/pairs-65536-direct.csv" 4 "0:1 1:2 2:3 3:0" || fail "round 1 not kept in the matrix"
pairs_check "$d/pairs.csv" -v rows=8 -v status=ok || fail "round 1 not kept in the CSV"
pass "rank 2 stopped in round 2: named after $took s ($(grep -m1 -o 'no answer from rank 2 ([^)]*)' "$d/err")), round 1 kept"

# A rank lost inside a step of all ranks (GDRB_INJECT_STEP_STOP: rank 2 stops inside its second
# step, the agreement on the first size's iteration counts, after its first round): the MPI
# library's reduction could only have said "the other ranks"; with the named steps
# (common/boot/boot_steps.c) rank 0, waiting on it in the step's second round, names it, and
# so do ranks 1 and 3, which finished the step and wait on it for a window (which of them
# speaks first depends on load; the linger lets the others speak too). The same bounds as above.
d=$WORK/stepstop
run_stopped GDRB_INJECT_STEP_STOP=2:2 "rank 2 stopped inside a step"
[ "$rc" -ne 0 ] || { cat "$d/out" "$d/err"; fail "rank 2 stopped inside a step: exit 0"; }
grep -q "timeout: no answer from rank 2 (" "$d/err" || { cat "$d/err"; fail "rank 2 stopped inside a step: no rank names it"; }
grep -q "the other ranks" "$d/err" && { cat "$d/err"; fail "rank 2 stopped inside a step: a rank could only say 'the other ranks'"; }
pass "rank 2 stopped inside a step: named ($(grep -o 'no answer from rank 2 ([^)]*) .* at size [0-9]*[A-Za-z]*' "$d/err" | sort -u | paste -sd ';'))"

# Device memory on the simulated GPU: staged always; direct with --mpi-cuda yes in peermem mode
# (device memory the CPU, so MPI, can touch, standing in for a CUDA-aware MPI); direct skipped
# with the reason where MPI is not CUDA-aware, in strict mode (a CPU touch of device memory faults).
rc=0
if ! why=$(simgpu_here); then
	echo "skipped case: --mem device ($why); the host memory cases above passed"
	exit 0
fi
(
	use_simgpu peermem
	d=$WORK/dev
	run 3 "$d" --mem device --mpi-cuda yes --metric bw,lat || { cat "$d/err"; fail "--mem device"; }
	no_simgpu_errors "$d/err"
	for f in pairs-65536-direct pairs-65536-staged pairs-lat-8-direct pairs-lat-8-staged; do
		pairs_matrix_check "$d/$f.csv" 3 all || fail "device: $f.csv"
	done
	pairs_check "$d/pairs.csv" -v rows=48 -v status=ok || fail "device: CSV"
	pairs_has "$d/pairs.csv" mem=device path=staged reg=staged metric=bw &&
		pairs_has "$d/pairs.csv" mem=device path=direct reg=mpi-cuda metric=lat ||
		fail "device: the paths' mem and reg"
	# Said on the simulated GPU, as the driver says it: the header's NOTE and every row's note.
	grep -qx "# NOTE: the GPU is simulated (the test suite's stand-in for CUDA): these rows prove behaviour, never speed" \
		"$d/out" || { cat "$d/out"; fail "device: no NOTE that the GPU is simulated"; }
	# Three ranks on the one simulated GPU: named in the header and before it in each row's note.
	[ "$(pairs_count "$d/pairs.csv" 'note~3 ranks share GPU 0000:3B:00\.0 on [^ ]* \(MPS off\); simulated GPU: gdrbench simulated GPU \(simgpu\)')" -eq 48 ] ||
		{ cat "$d/pairs.csv"; fail "device: not every row's note names the shared and simulated GPU"; }
	grep -q "^# NOTE: 3 ranks share GPU 0000:3B:00.0 on [^ ]* (MPS off): without MPS the GPU time-slices" "$d/out" ||
		{ cat "$d/out"; fail "device: no NOTE that the ranks share a GPU"; }
	! grep -q 'share GPU' "$WORK/np3/out" "$WORK/np3/pairs.csv" || fail "host memory: said to share a GPU"
	! grep -q 'simulated' "$WORK/np3/out" "$WORK/np3/pairs.csv" || fail "host memory: said to be simulated"
	[ "$(ranks_count "$d/pairs-ranks.csv" 'rank~[0-9]' 'local_rank~[0-9]' gpu=0000:3b:00.0 nic=)" -eq 3 ] &&
		pairs_has "$d/pairs.csv" src_gpu=0000:3b:00.0 dst_gpu=0000:3b:00.0 ||
		{ cat "$d/pairs-ranks.csv"; fail "device: the GPU bus id is not in the rank table and rows"; }
	export SIMGPU_MODE=strict
	d=$WORK/dev2
	run 2 "$d" --mem device || { cat "$d/err"; fail "--mem device, MPI not CUDA-aware"; }
	[ "$(pairs_count "$d/pairs.csv" mem=device path=direct reg=mpi-cuda metric=bw status=skipped errors=0 \
		'note~.*not CUDA-aware.*')" -eq 4 ] ||
		{ cat "$d/pairs.csv"; fail "the direct path is not skipped with its reason"; }
	pairs_matrix_check "$d/pairs-65536-staged.csv" 2 all || fail "device: staged without direct"
	[ ! -e "$d/pairs-65536-direct.csv" ] || fail "a matrix for the skipped direct path"
	rc=0
	GDRB_INJECT_CORRUPTION=2 pass=GDRB_INJECT_CORRUPTION sizes=4K run 3 "$WORK/dev3" --mem device || rc=$?
	[ "$rc" -eq 1 ] || fail "a flipped byte in device memory: exit $rc, expected 1"
	pairs_has "$WORK/dev3/pairs.csv" mem=device path=staged reg=staged metric=bw size_bytes=4096 dst_rank=2 status=error \
		errors=1 ||
		fail "a flipped byte in device memory is not caught on the staged path"
) || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
pass "--mem device on the simulated GPU: direct and staged matrices complete, direct skipped with its reason where MPI is not CUDA-aware, a flipped device byte caught"
