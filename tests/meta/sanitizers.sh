#!/bin/bash
# The sanitizer pass is real (./configure --enable-sanitizers, scripts/test --sanitize):
# every binary of the build links ASan and UBSan, a deliberate heap overflow, signed
# overflow, bad shift and leak (tests/meta/sanitize_fault) are each reported and fail, also
# in a rank mpirun starts, and a clean run prints nothing. Skips in an ordinary build.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

[ "${GDRB_SANITIZE:-0}" = 1 ] || skip "not a sanitizer build (./configure --enable-sanitizers)"
prog=$top_builddir/tests/meta/sanitize_fault

# Every program and the simulated GPU's runtime are instrumented: none lost the flags.
command -v readelf >/dev/null 2>&1 || skip "no readelf"
checked=0
for f in "$top_builddir"/bench/gdrb_* "$top_builddir"/mpi/gdrb_* "$top_builddir"/tests/unit/test_* \
	"$top_builddir"/tests/support/bare_mpi_* "$top_builddir"/tests/support/simgpu/*/libcudart.so.* "$prog"; do
	case $f in *.o | *.c | *.log | *.trs) continue ;; esac
	[ -f "$f" ] && [ -x "$f" ] || continue
	needed=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p')
	grep -q '^libasan\.so' <<<"$needed" || fail "$f does not link ASan: $(echo "$needed" | tr '\n' ' ')"
	grep -q '^libubsan\.so' <<<"$needed" || fail "$f does not link UBSan: $(echo "$needed" | tr '\n' ' ')"
	checked=$((checked + 1))
done
[ "$checked" -ge 3 ] || fail "only $checked instrumented files found in $top_builddir"
pass "$checked programs and libraries link ASan and UBSan"

# expect_report WHAT PATTERN [LAUNCHER...]: the fault is reported and the run fails.
expect_report() {
	local what=$1 pattern=$2 rc=0
	shift 2
	"$@" "$prog" "$what" >"$WORK/$what.out" 2>"$WORK/$what.err" || rc=$?
	[ "$rc" -ne 0 ] || { cat "$WORK/$what.err"; fail "$what: exit 0 despite the fault"; }
	grep -q -- "$pattern" "$WORK/$what.err" || { cat "$WORK/$what.err"; fail "$what: no '$pattern' report"; }
	pass "$what${1:+ under $(basename "$1")}: '$pattern', exit $rc"
}

"$prog" none >"$WORK/none.out" 2>"$WORK/none.err" || { cat "$WORK/none.err"; fail "none: exit $?"; }
[ ! -s "$WORK/none.err" ] || { cat "$WORK/none.err"; fail "the sanitizer runtime printed on a clean run"; }
pass "a clean run exits 0 and prints nothing"
expect_report heap 'AddressSanitizer: heap-buffer-overflow'
expect_report signed 'runtime error: signed integer overflow'
expect_report shift 'runtime error: shift exponent'
expect_report leak 'LeakSanitizer: detected memory leaks'
# The report's exit status is the pass's own, so that no test mistakes it for an expected 1.
"$prog" heap 2>/dev/null && rc=0 || rc=$?
[ "$rc" -eq 99 ] || fail "heap: exit $rc, not 99: ASAN_OPTIONS did not reach the test"

# The ranks mpirun starts carry the same options (the suppressions file among them).
if [ "${HAVE_MPI:-1}" = 1 ] && command -v "$MPIRUN" >/dev/null 2>&1; then
	expect_report heap 'AddressSanitizer: heap-buffer-overflow' "$MPIRUN" -np 2
	expect_report signed 'runtime error: signed integer overflow' "$MPIRUN" -np 2
	mpi 2 env >"$WORK/env.out" 2>&1 || { cat "$WORK/env.out"; fail "mpirun env"; }
	grep -q "^LSAN_OPTIONS=.*suppressions=$top_srcdir/tests/support/lsan.supp" "$WORK/env.out" ||
		fail "the ranks lack LSAN_OPTIONS with the suppressions"
	pass "2 ranks under mpirun: reports, exit status, LSAN_OPTIONS"
fi
