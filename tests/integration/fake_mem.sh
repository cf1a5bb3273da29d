#!/bin/bash
# Test-only memory kinds (tests/integration/fake_mem.c, the worked example of "Adding a
# memory kind" in docs/architecture.md), registered from test code: --mem
# accepts them and lists them, the driver allocates through their ops, opens a
# GPU only for the kind that needs one, offers staged paths only to the kind
# that has them, and refuses the options of a property the kind lacks.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

bin=$top_builddir/tests/integration/fake_mem
[ -x "$bin" ] || fail "tests/integration/fake_mem not built"

# A kind without a GPU and without staged paths: one direct row, its name in the CSV,
# its ops serving the send and receive buffers, no GPU opened even where none works.
SIMGPU_DRIVER=none "$bin" --mem fake -m 64,4K -n 10 -w 1 -t 0.05 --csv "$WORK/fake.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "a run with --mem fake"; }
grep -q '^# layer fake, mem fake (malloc behind the test'"'"'s own memory kind), one process on ' "$WORK/out" ||
	{ cat "$WORK/out"; fail "layer line"; }
grep -q '^# fake memory: 2 buffer(s) allocated by the kind'"'"'s ops$' "$WORK/out" ||
	{ cat "$WORK/out"; fail "the kind's ops did not allocate the send and receive buffers"; }
grep -q '^# GPU: none used' "$WORK/out" || { cat "$WORK/out"; fail "a GPU was opened for a kind that opens none"; }
[ "$(csv_count "$WORK/fake.csv")" -eq 2 ] || { cat "$WORK/fake.csv"; fail "--mem fake: not one row per size"; }
[ "$(csv_col "$WORK/fake.csv" mem | sort -u)" = fake ] || { cat "$WORK/fake.csv"; fail "mem column"; }
[ "$(csv_col "$WORK/fake.csv" path | sort -u)" = direct ] || { cat "$WORK/fake.csv"; fail "paths of --mem fake"; }
[ "$(csv_col "$WORK/fake.csv" status | sort -u)" = ok ] || { cat "$WORK/fake.csv"; fail "status of --mem fake"; }
pass "--mem fake: the kind's ops allocate, one direct row per size, no GPU opened"

# A kind with staged paths: the driver adds them and --staging applies to it.
"$bin" --mem fakestaged --staging serial -m 64,4K -n 10 -w 1 -t 0.05 --csv "$WORK/staged.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "a run with --mem fakestaged"; }
[ "$(csv_col "$WORK/staged.csv" path | sort -u | tr '\n' ' ')" = "direct staged-serial " ] ||
	{ cat "$WORK/staged.csv"; fail "paths of --mem fakestaged"; }
[ "$(csv_col "$WORK/staged.csv" mem | sort -u)" = fakestaged ] || { cat "$WORK/staged.csv"; fail "mem column"; }
[ "$(csv_col "$WORK/staged.csv" status | sort -u)" = ok ] || { cat "$WORK/staged.csv"; fail "status of the staged rows"; }
pass "--mem fakestaged --staging serial: direct and staged-serial rows"

# The default, pipelined staging, overlaps CUDA's asynchronous copies: it runs where CUDA is
# built (here on the simulated GPU's runtime), and where it is not its rows say why, while the
# direct path is measured and the run succeeds (it failed whole, no row written, before).
"$bin" --mem fakestaged -m 64,4K -n 10 -w 1 -t 0.05 --csv "$WORK/pipe.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "a run with --mem fakestaged, pipelined staging (HAVE_CUDA=${HAVE_CUDA:-1})"; }
[ "$(csv_count "$WORK/pipe.csv" path=direct status=ok)" -eq 2 ] || { cat "$WORK/pipe.csv"; fail "pipelined: the direct rows"; }
if [ "${HAVE_CUDA:-1}" = 1 ]; then
	[ "$(csv_count "$WORK/pipe.csv" path=staged reg=staged status=ok 'stage_chunk~[0-9]+')" -eq 2 ] ||
		{ cat "$WORK/pipe.csv"; fail "pipelined: the staged rows with CUDA built"; }
	pass "--mem fakestaged, pipelined staging with CUDA built: direct and staged rows measured"
else
	[ "$(csv_count "$WORK/pipe.csv" path=staged reg=staged status=unsupported \
		'note~.*pipelined staging overlaps CUDA.s asynchronous copies: gdrbench was built without CUDA.*')" -eq 2 ] ||
		{ cat "$WORK/pipe.csv"; fail "pipelined without CUDA: the staged rows are not unsupported saying why"; }
	grep -q '^# path staged: .*built without CUDA' "$WORK/out" || { cat "$WORK/out"; fail "pipelined without CUDA: the header does not say why"; }
	pass "--mem fakestaged, pipelined staging, built without CUDA: direct rows measured, staged rows unsupported saying why"
fi

# A kind that needs a GPU: without one, unsupported here (77), said once, naming the kind.
rc=0
SIMGPU_DRIVER=none "$bin" --mem fakegpu -m 64 -n 5 -w 1 -t 0.05 >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -eq 77 ] || { cat "$WORK/out" "$WORK/err"; fail "--mem fakegpu without a GPU exited $rc, expected 77"; }
grep -q 'unsupported on this node: --mem fakegpu: ' "$WORK/err" || { cat "$WORK/err"; fail "why fakegpu is unsupported"; }
pass "--mem fakegpu without a GPU: 77, $(cat "$WORK/err")"

# Options that need a property the kind lacks are refused, as for the built-in kinds.
expect_refused "--mem: unknown memory kind 'bogus'; accepted: host, pinned, device, fake, fakestaged, fakegpu" "$bin" --mem bogus
expect_refused "--staging has no effect with --mem fake" "$bin" --mem fake --staging serial
expect_refused "--gpu has no effect with --mem fake" "$bin" --mem fake --gpu 0
