#!/bin/bash
# The simulated GPU itself: each CUDA semantic the device-memory tests rely on
# (faulting CPU access, late async copies, bounds, dma-buf rules) is a fault it
# must catch (tests/unit/test_simgpu.c), and its library stands in for the runtime.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

use_simgpu strict
prog=$top_builddir/tests/unit/test_simgpu
[ -x "$prog" ] || skip "built without Check"
# The binaries must load the simulator, not the real runtime, through LD_LIBRARY_PATH.
ldd "$top_builddir/bench/gdrb_copy_bw" | grep -q "libcudart.*$top_builddir/tests/support/simgpu/lib/" ||
	{ ldd "$top_builddir/bench/gdrb_copy_bw"; fail "gdrb_copy_bw does not load the simulated runtime"; }
# Two cases expect a CPU touch of device memory to die by SIGSEGV: under ASan
# (the sanitizer pass) that signal must reach Check, not ASan's report-and-exit.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0 "$prog" || fail "the simulator's semantics"
pass "simulated GPU: semantics enforced"
