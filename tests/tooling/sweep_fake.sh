#!/bin/bash
# The tool follows a memory kind and a transport added on the C side only: the test-only kinds
# of tests/integration/fake_mem.c (fake, fakestaged, fakegpu) and the test-only transport of
# tests/integration/fake_transport.c, which no file of scripts/ names. gdrb sweep asks the
# binaries (--describe) which kinds they take, what each needs and which paths a run on it
# writes: it plans the fake kinds, skips the one needing a GPU where there is none, merges the
# rows (filling an unsupported kind's rows with the paths and reg names the binary gave), and
# the profile's rules judge them.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
gdrb=$top_srcdir/scripts/gdrb
for b in fake_mem fake_transport; do
	[ -x "$top_builddir/tests/integration/$b" ] || fail "tests/integration/$b not built"
done
# The profile names gdrbench binaries (gdrb_NAME): the test binaries under such names.
mkdir -p "$WORK/bin" "$WORK/gpu"
cp "$top_builddir/tests/integration/fake_mem" "$WORK/bin/gdrb_fake_mem"
cp "$top_builddir/tests/integration/fake_transport" "$WORK/bin/gdrb_fake_transport"
cat >"$WORK/fake.profile" <<'PROFILE'
sizes 64,4K
time 0.02
iters 20
run gdrb_fake_mem bench=fake_mem_copy launch=local mem=fake,fakegpu
run gdrb_fake_mem bench=fake_mem_copy launch=local mem=fakestaged args=--staging=both
run gdrb_fake_transport bench=fake_latency launch=local mem=fake args=--fake-delay=200
rule staged-ok fake_mem_copy status = ok mem=fakestaged path=staged-serial
rule delay-arrived fake_latency lat_p50_us >= 200 us
PROFILE

# No GPU here (no nvidia-smi on PATH): the kind that needs one is skipped, as its binary says.
PATH=$WORK/bin:/usr/bin:/bin "$gdrb" sweep --profile "$WORK/fake.profile" --bin-dir "$WORK/bin" \
	--out "$WORK/nogpu" >"$WORK/nogpu.out" 2>"$WORK/nogpu.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "run gdrb_fake_transport mem=fake: gdrb_fake_transport takes --mem host, pinned, device" "$WORK/nogpu.err" ||
	{ cat "$WORK/nogpu.out" "$WORK/nogpu.err"; fail "a kind the transport's binary does not take was not refused (exit $rc)"; }
pass "a kind one binary takes and another does not: refused naming the binary and its kinds"
sed -i 's/^run gdrb_fake_transport \(.*\) mem=fake /run gdrb_fake_transport \1 /' "$WORK/fake.profile"

PATH=$WORK/bin:/usr/bin:/bin "$gdrb" sweep --profile "$WORK/fake.profile" --bin-dir "$WORK/bin" \
	--out "$WORK/nogpu" >"$WORK/nogpu.out" 2>"$WORK/nogpu.err" ||
	{ cat "$WORK/nogpu.out" "$WORK/nogpu.err"; fail "the sweep over the fake kinds failed"; }
csv=$WORK/nogpu/results.csv
# (csv_check knows the shipped layers only: a test layer is what this test adds.)
[ "$(head -1 "$csv")" = "$(python3 -c "import sys; sys.path.insert(0, \"$top_srcdir/scripts/lib\"); from gdrbtool import common; print(common.schema().header)")" ] || fail "results.csv header"
[ "$(csv_col "$csv" mem | sort -u | tr '\n' ' ')" = "fake fakestaged host " ] || { cat "$csv"; fail "memory kinds in results.csv"; }
# Both staged paths, as --describe gives them with --staging both: serial measured; pipelined
# measured where CUDA is built (its asynchronous copies), else its rows say why.
[ "$(csv_count "$csv" benchmark=fake_mem_copy layer=fake mem=fakestaged path=staged-serial reg=staged status=ok)" -eq 2 ] ||
	{ cat "$csv"; fail "the serial staged rows of the fake staged kind"; }
pipelined=ok
[ "${HAVE_CUDA:-1}" = 1 ] || pipelined=unsupported
[ "$(csv_count "$csv" benchmark=fake_mem_copy layer=fake mem=fakestaged path=staged reg=staged status=$pipelined)" -eq 2 ] ||
	{ cat "$csv"; fail "the pipelined staged rows of the fake staged kind: not $pipelined (HAVE_CUDA=${HAVE_CUDA:-1})"; }
[ "$(csv_count "$csv" benchmark=fake_latency layer=fake mem=host path=direct status=ok)" -eq 2 ] ||
	{ cat "$csv"; fail "the fake transport's rows"; }
[ "$(json_get "$WORK/nogpu/meta.json" skipped.0.mem)" = fakegpu ] &&
	[ "$(json_get "$WORK/nogpu/meta.json" skipped.0.reason)" = "fakegpu memory needs a GPU: nvidia-smi -L lists none here" ] ||
	{ cat "$WORK/nogpu/meta.json"; fail "the kind needing a GPU was not skipped"; }
[ "$(json_get "$WORK/nogpu/verdict.json" verdict)" = PASS ] || { cat "$WORK/nogpu.out"; fail "the rules on the fake rows"; }
pass "no GPU: fake and fakestaged measured, their paths as the binary gives them (pipelined staging $pipelined), fakegpu skipped, rules PASS"

# A GPU that nvidia-smi lists but the (simulated) driver cannot open: fakegpu runs, its binary
# says unsupported (77), and the sweep writes its rows with the path and reg the binary described.
fake_nvidia_smi "$WORK/gpu" "Fake GPU" "00000000:17:00.0"
SIMGPU_DRIVER=none PATH=$WORK/gpu:$WORK/bin:/usr/bin:/bin "$gdrb" sweep --profile "$WORK/fake.profile" \
	--bin-dir "$WORK/bin" --mem fakegpu --bench fake_mem_copy --out "$WORK/gpu-run" >"$WORK/gpu.out" 2>"$WORK/gpu.err"
csv=$WORK/gpu-run/results.csv
[ "$(csv_count "$csv" benchmark=fake_mem_copy layer=fake mem=fakegpu path=direct reg=none status=unsupported)" -eq 2 ] ||
	{ cat "$WORK/gpu.out" "$WORK/gpu.err" "$csv"; fail "no unsupported rows for the kind needing a GPU"; }
pass "fakegpu unsupported here: a row per size, path and reg from the binary's --describe"
