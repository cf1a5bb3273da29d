#!/bin/bash
# The test-only fake transport (tests/integration/fake_transport.c, the worked example of
# "How to add a transport" in docs/architecture.md): its option group is in
# --help where the layers' options go, its value reaches its iteration (the
# p50 is at least --fake-delay), a host-memory run opens no GPU (the local shape
# without needs_gpu), its errors are the core's one-line form, and the shipped
# layers' options are refused by name.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

bin=$top_builddir/tests/integration/fake_transport
[ -x "$bin" ] || fail "tests/integration/fake_transport not built"

"$bin" --help >"$WORK/help" || fail "--help"
grep -q '^      --fake-delay US  *microseconds one message of the fake transport takes (default 50)$' "$WORK/help" ||
	{ cat "$WORK/help"; fail "--help lacks --fake-delay"; }
# The group's options come after the core's and before its last ones (--clock ...).
order=$(grep -o -- '--[a-z-]*' "$WORK/help" | awk '$0 == "--stage-chunk" || $0 == "--fake-delay" || $0 == "--clock"' | tr '\n' ' ')
[ "$order" = "--stage-chunk --fake-delay --clock " ] || fail "--help order: $order"
pass "--help lists --fake-delay between the core's options and its last ones"

"$bin" -m 8,64 -n 20 -w 2 -t 0.2 --fake-delay 2000 >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "a run with --fake-delay 2000"; }
grep -q '^# fake transport: 2000 us per message (--fake-delay)$' "$WORK/out" || { cat "$WORK/out"; fail "header"; }
# p50_us, found by the table's header ("# size ..."); a spin never ends early.
awk '/^# +size / { for (i = 2; i <= NF; i++) if ($i == "p50_us") col = i - 1 }
	/^ *[0-9]+B / { rows++; if (!col || $col < 2000) bad++ } END { exit !(rows == 2 && !bad) }' "$WORK/out" ||
	{ cat "$WORK/out"; fail "p50 below --fake-delay 2000: the value did not reach the transport"; }
pass "--fake-delay 2000: both rows' p50 at least 2000 us"

"$bin" -m 8 -n 5 -w 1 -t 0.05 >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "default run"; }
grep -q '^# fake transport: 50 us per message' "$WORK/out" || { cat "$WORK/out"; fail "default delay"; }
pass "the group's default (50 us) when --fake-delay is not given"

# The local shape opens no GPU unless --mem asks for one: a run where the (simulated) GPU
# has no driver, which gdrb_copy_bw (needs_gpu) refuses with 77, measures on host memory.
SIMGPU_DRIVER=none "$bin" -m 8 -n 5 -w 1 -t 0.05 >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "a host-memory run with no GPU driver"; }
grep -q '^# GPU: none used (host memory run)$' "$WORK/out" || { cat "$WORK/out"; fail "a GPU was opened"; }
grep -q '^# layer fake, mem host (.*), one process on ' "$WORK/out" || { cat "$WORK/out"; fail "layer line"; }
pass "local traffic without needs_gpu: no GPU opened, none needed"

expect_refused "fake_transport: --fake-delay: expected an integer from 0 to 1000000, got 'soon'" "$bin" --fake-delay soon
expect_refused "--fake-delay given twice" "$bin" --fake-delay 1 --fake-delay 2
expect_refused "--qps does not apply to fake_transport" "$bin" --qps 2
expect_refused "--mpi-cuda does not apply to fake_transport" "$bin" --mpi-cuda yes
expect_refused "--window does not apply to fake_transport" "$bin" -W 4
# A group is the binary's own: another binary does not know it.
if [ -x "$top_builddir/bench/gdrb_copy_bw" ]; then
	expect_refused "unknown option '--fake-delay'" "$top_builddir/bench/gdrb_copy_bw" --fake-delay 1
fi
