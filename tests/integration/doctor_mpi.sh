#!/bin/bash
# gdrb_doctor_mpi: under mpirun the first rank of each host runs the checks and
# rank 0 prints one summary line per node; the job's exit status is 1 when a
# node FAILs. Only one host here: several ranks must still give one line.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

bin=$top_builddir/mpi/gdrb_doctor_mpi
fx=$top_builddir/tests/fixtures
[ -x "$bin" ] || fail "gdrb_doctor_mpi not built"

# run NP FIXTURE ARGS...: stdout in $WORK/out, exit status in $rc
run() {
	local np=$1 name=$2
	shift 2
	mpi "$np" "$bin" --sysfs-root "$fx/$name/sys" --procfs-root "$fx/$name/proc" "$@" \
		>"$WORK/out" 2>"$WORK/err"
	rc=$?
}

for np in 2 3; do
	run "$np" acs
	[ "$rc" -eq 1 ] || { cat "$WORK/out" "$WORK/err"; fail "np=$np acs: exit $rc, expected 1"; }
	[ "$(grep -c ': FAIL (8 PASS, 0 WARN, 1 FAIL, 2 SKIP) 8:acs=FAIL$' "$WORK/out")" -eq 1 ] ||
		{ cat "$WORK/out"; fail "np=$np acs: not one summary line for the one node"; }
	[ "$(grep -vc '^#' "$WORK/out")" -eq 1 ] || { cat "$WORK/out"; fail "np=$np: more than one node line"; }
	grep -q '^# 1 node, 1 with a FAIL: FAIL$' "$WORK/out" || { cat "$WORK/out"; fail "np=$np: no total"; }
	pass "np=$np acs: $(head -1 "$WORK/out")"
done

run 2 healthy
[ "$rc" -eq 0 ] || { cat "$WORK/out" "$WORK/err"; fail "healthy: exit $rc, expected 0"; }
grep -q ': PASS (9 PASS, 0 WARN, 0 FAIL, 2 SKIP)$' "$WORK/out" || { cat "$WORK/out"; fail "healthy line"; }
pass "np=2 healthy: $(head -1 "$WORK/out")"

run 2 roce --json
[ "$rc" -eq 0 ] || { cat "$WORK/out" "$WORK/err"; fail "roce --json: exit $rc"; }
if command -v python3 >/dev/null 2>&1; then
	python3 -m json.tool "$WORK/out" >/dev/null || { cat "$WORK/out"; fail "--json is not valid JSON"; }
fi
grep -q '"rdma-ports": "WARN"' "$WORK/out" && grep -q '"roce-gid": "PASS"' "$WORK/out" &&
	[ "$(grep -c '"host": ' "$WORK/out")" -eq 1 ] || { cat "$WORK/out"; fail "--json content"; }
pass "np=2 --json: one node, per-check verdicts"

mpi 2 "$bin" --bogus >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "--bogus: exit $rc, expected 2"; }
[ "$(our_lines gdrb_doctor_mpi "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "--bogus: not one line"; }
pass "np=2 --bogus -> 2"

mpi 2 "$bin" >"$WORK/out" 2>"$WORK/err"
rc=$?
{ [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } || { cat "$WORK/out" "$WORK/err"; fail "live: exit $rc"; }
[ "$(grep -vc '^#' "$WORK/out")" -eq 1 ] || { cat "$WORK/out"; fail "live: not one line"; }
pass "np=2 live: $(head -1 "$WORK/out")"
