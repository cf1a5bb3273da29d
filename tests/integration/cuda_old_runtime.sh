#!/bin/bash
# An older CUDA runtime first on LD_LIBRARY_PATH (same soname, no
# cudaGetDriverEntryPointByVersion: tests/support/simgpu/old) must not kill gdrbench
# with a symbol lookup error at the first GPU registration: the driver entry
# points resolve through cudaGetDriverEntryPoint instead. The newer runtime
# uses cudaGetDriverEntryPointByVersion.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
use_simgpu strict
prog=$top_builddir/tests/unit/test_reg
[ -x "$prog" ] || skip "built without Check"
[ -x "$top_builddir/bench/gdrb_write_lat" ] || skip "built without verbs: no GPU registration"

GDRB_TEST_ENTRY_LOOKUP=cudaGetDriverEntryPointByVersion CK_RUN_CASE=driver_entry "$prog" >"$WORK/new" 2>&1 ||
	{ cat "$WORK/new"; fail "driver entry points on the current runtime"; }
pass "current runtime: entry points through cudaGetDriverEntryPointByVersion"

old=$top_builddir/tests/support/simgpu/old
GDRB_TEST_ENTRY_LOOKUP=cudaGetDriverEntryPoint CK_RUN_CASE=driver_entry \
	LD_LIBRARY_PATH=$old:$LD_LIBRARY_PATH "$prog" >"$WORK/old" 2>&1 ||
	{ cat "$WORK/old"; fail "driver entry points on a runtime without cudaGetDriverEntryPointByVersion"; }
grep -q 'symbol lookup error' "$WORK/old" && fail "symbol lookup error on the older runtime"
pass "older runtime: entry points through cudaGetDriverEntryPoint, no symbol lookup error"
