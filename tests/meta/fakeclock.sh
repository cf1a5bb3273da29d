#!/bin/bash
# scripts/measure/compare-builds and its fake clock (tests/support/fakeclock.so): two runs of the same
# gdrb_mpi_latency must give the same bytes, figures included (stdout of each rank, the CSV);
# a planted difference in the figures alone (the clock's step 1001 ns in one tree, not 1000)
# must be reported as different, with exit status 1.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
shim=$top_builddir/tests/support/fakeclock.so
[ -f "$shim" ] || fail "$shim is not built (make check builds it: make tests/support/fakeclock.so)"
[ "${GDRB_SANITIZE:-0}" = 1 ] && export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
compare=$top_srcdir/scripts/measure/compare-builds

rc=0
python3 "$compare" --only latency "$top_builddir" "$top_builddir" "$WORK/same" >"$WORK/same.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/same.log"; fail "the same build twice: compare-builds exited $rc"; }
for out in csv rank.0.stdout exit; do
	grep -q "^identical  latency/$out\$" "$WORK/same.log" || { cat "$WORK/same.log"; fail "latency/$out not compared"; }
done
# The figures are there to compare, not masked: a latency in microseconds in each row.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "lat_p50_us") c = i; next }
	!c || $c !~ /^[0-9]+\.[0-9]+$/ { bad = 1 } END { exit bad || NR < 2 }' "$WORK/same/old/latency/csv.masked" ||
	{ cat "$WORK/same/old/latency/csv.masked"; fail "the compared CSV has no latency figures"; }

# A tree whose gdrb_mpi_latency is the real one with its clock a nanosecond a read slower.
mkdir -p "$WORK/planted/mpi"
printf '#!/bin/sh\nGDRB_FAKECLOCK_STEP_NS=1001 exec "%s" "$@"\n' "$top_builddir/mpi/gdrb_mpi_latency" \
	>"$WORK/planted/mpi/gdrb_mpi_latency"
chmod +x "$WORK/planted/mpi/gdrb_mpi_latency"
rc=0
python3 "$compare" --only latency --shim "$shim" "$top_builddir" "$WORK/planted" "$WORK/planted-out" \
	>"$WORK/planted.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/planted.log"; fail "a planted difference: compare-builds exited $rc, not 1"; }
grep -q '^DIFFERENT  latency/csv$' "$WORK/planted.log" || { cat "$WORK/planted.log"; fail "the planted CSV difference not reported"; }
grep -q '^DIFFERENT  latency/rank.0.stdout$' "$WORK/planted.log" ||
	{ cat "$WORK/planted.log"; fail "the planted table difference not reported"; }
grep -q '^identical  latency/exit$' "$WORK/planted.log" || { cat "$WORK/planted.log"; fail "exit status not compared"; }
pass "two runs of gdrb_mpi_latency under the fake clock identical byte for byte; a 1 ns/read planted difference reported"
