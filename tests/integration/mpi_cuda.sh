#!/bin/bash
# --mpi-cuda: the header's "CUDA-aware:" line says what decided, the MPI library's
# own answer (auto, the default) or the user's choice, in a point-to-point and a
# collective binary. Host memory, so that it runs without a GPU: no device
# pointer reaches MPI, whatever the answer.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

# What auto can ask this build's MPI: the run-time query where configure found
# it (Open MPI, MPICH >= 4), else mpi-ext.h's compile-time macro, else nothing.
# Either way the answer and the reason must agree.
if grep -q '^#define HAVE_MPIX_QUERY_CUDA_SUPPORT 1' "$top_builddir/config.h"; then
	auto="CUDA-aware: (yes \(by MPIX_Query_cuda_support\(\) = 1|no \(by MPIX_Query_cuda_support\(\) = 0) at run time; "
elif grep -q '^#define HAVE_MPIX_QUERY_CUDA_SUPPORT 0' "$top_builddir/config.h"; then
	auto="CUDA-aware: (yes \(by MPIX_CUDA_AWARE_SUPPORT = 1|no \(by MPIX_CUDA_AWARE_SUPPORT = 0|no \(by default: this MPI has neither)"
else
	fail "config.h does not define HAVE_MPIX_QUERY_CUDA_SUPPORT to 0 or 1"
fi

# header NAME ARGS...: run 2 ranks on host memory; the header's MPI line in $WORK/line.
header() {
	local name=$1
	shift
	mpi 2 "$top_builddir/mpi/$name" -m 8 -n 20 -t 0.01 --mem host "$@" >"$WORK/out" 2>"$WORK/err" ||
		{ cat "$WORK/out" "$WORK/err"; fail "$name $* exited $?"; }
	grep '^# MPI: ' "$WORK/out" >"$WORK/line" || { cat "$WORK/out"; fail "$name $*: no '# MPI:' header line"; }
	[ "$(grep -vc '^#' "$WORK/out")" -eq 1 ] || { cat "$WORK/out"; fail "$name $*: not one measured row"; }
}

# expect NAME PATTERN ARGS...: the header line matches the extended regex PATTERN.
expect() {
	local name=$1 pattern=$2
	shift 2
	header "$name" "$@"
	grep -Eq -- "$pattern" "$WORK/line" ||
		{ cat "$WORK/line"; fail "$name ${*:-(no --mpi-cuda)}: header lacks /$pattern/"; }
	pass "$name ${*:-(no --mpi-cuda)}: $(sed 's/^# MPI: [^;]*; //' "$WORK/line")"
}

for name in gdrb_mpi_latency gdrb_mpi_allreduce; do
	expect "$name" "$auto"
	cp "$WORK/line" "$WORK/default"
	expect "$name" "$auto" --mpi-cuda auto
	cmp -s "$WORK/line" "$WORK/default" || fail "$name: --mpi-cuda auto is not the default"
	expect "$name" "CUDA-aware: no \(by --mpi-cuda no; detected: " --mpi-cuda no
	expect "$name" "CUDA-aware: yes \(by --mpi-cuda yes; detected: " --mpi-cuda yes
	# What was detected is the reason auto gave.
	detected=$(sed -n 's/.*(by \(default: \)\{0,1\}\(.*\))$/\2/p' "$WORK/default")
	[ -n "$detected" ] && grep -qF "detected: $detected)" "$WORK/line" ||
		{ cat "$WORK/default" "$WORK/line"; fail "$name: --mpi-cuda yes does not repeat what was detected"; }
	# Host memory is never handed over as a device pointer: no warning about forcing yes.
	[ "$(our_lines "$name" "$WORK/err")" -eq 0 ] || { cat "$WORK/err"; fail "$name --mpi-cuda yes warned on host memory"; }
done

# The option is the MPI binaries': the barrier has no buffers, the verbs binaries
# use MPI only to connect.
expect_refused "--mpi-cuda does not apply to gdrb_mpi_barrier" \
	"$top_builddir/mpi/gdrb_mpi_barrier" --mpi-cuda no
if [ -x "$top_builddir/bench/gdrb_send_bw" ]; then
	expect_refused "--mpi-cuda does not apply to gdrb_send_bw" \
		"$top_builddir/bench/gdrb_send_bw" --mpi-cuda yes
fi
for name in gdrb_mpi_bw gdrb_mpi_gather; do
	"$top_builddir/mpi/$name" --help >"$WORK/help" || fail "$name --help"
	grep -q -- "--mpi-cuda MODE .*crashes" "$WORK/help" ||
		{ cat "$WORK/help"; fail "$name --help lacks --mpi-cuda and its warning"; }
done
pass "--help of the MPI binaries: --mpi-cuda, and that forcing yes can crash"
