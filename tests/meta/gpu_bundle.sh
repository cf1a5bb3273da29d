#!/bin/bash
# The GPU check's bundle rehearsed on the simulated GPU and NCCL: scripts/gpu-bundle/mkbundle
# --without-tools packs the built tree (no reference tool is built here: too slow for CI), and
# the unpacked bundle's run.sh runs its parts in quick mode from outside the source tree. Planted
# nccl-tests and nvbandwidth binaries print their real formats (tests/tooling/py/reference_data),
# so reference.md must set gdrbench's figures beside theirs; the CUDA-aware MPI, not carried,
# must say so while the MPI binaries still run; the sku part judges the node against the SKU
# an nvidia-smi names (a planted one). Bad usage of either script: one line, exit 2.
# Skips where the Debian packages the bundle carries cannot be downloaded.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
mk=$top_srcdir/scripts/gpu-bundle/mkbundle
data=$top_srcdir/tests/tooling/py/reference_data
use_simnccl
command -v apt-get >/dev/null || skip "no apt-get: the bundle carries Debian packages"

expect_refused "unknown option '--bogus'" "$mk" --bogus
expect_refused "--build-dir: expected a directory" "$mk" --build-dir /nonexistent

rc=0
"$mk" --without-tools --no-build --build-dir "$top_builddir" --out "$WORK/b.tgz" >"$WORK/mk.out" 2>"$WORK/mk.err" || rc=$?
[ "$rc" -ne 77 ] || skip "$(tail -n 1 "$WORK/mk.err")"
[ "$rc" -eq 0 ] || { cat "$WORK/mk.err"; fail "mkbundle exited $rc"; }
mkdir "$WORK/u"
tar -xzf "$WORK/b.tgz" -C "$WORK/u" || fail "the bundle does not unpack"
B=$WORK/u/gdrbench-gpubundle
for f in run.sh env.sh parts.sh MANIFEST build/bench/gdrb_copy_bw build/nccl/gdrb_nccl_allreduce \
	scripts/measure/measure-staging scripts/lib/gdrbtool/reference.py sys/usr/bin/orterun; do
	[ -e "$B/$f" ] || fail "the bundle lacks $f"
done
grep -q '^nccl-tests: not carried$' "$B/MANIFEST" || { cat "$B/MANIFEST"; fail "MANIFEST does not say nccl-tests is not carried"; }
[ ! -e "$B/tools/ompi" ] || fail "--without-tools carried the CUDA-aware Open MPI"
pass "mkbundle --without-tools: $(du -h "$WORK/b.tgz" | cut -f1), binaries, scripts, Debian's Open MPI, a MANIFEST"

expect_refused "^run.sh: usage: run.sh OUTDIR" bash "$B/run.sh"
GDRB_BUNDLE_BUDGET=10 expect_refused "^run.sh: GDRB_BUNDLE_BUDGET: expected whole seconds, at least 60, not '10'" bash "$B/run.sh" "$WORK/o"
GDRB_BUNDLE_PARTS=bogus expect_refused "^run.sh: GDRB_BUNDLE_PARTS: unknown part 'bogus'" bash "$B/run.sh" "$WORK/o"

# Reference tools that print what the real ones print (the captured and source-written fixtures).
mkdir -p "$B/tools/nccl-tests/bin" "$B/tools/nvbandwidth/bin"
for c in all_reduce all_gather reduce_scatter; do
	printf '#!/bin/sh\ncat "%s"\n' "$data/nt-all_reduce.txt" >"$B/tools/nccl-tests/bin/${c}_perf"
done
printf '#!/bin/sh\ncat "%s"\n' "$data/nvbandwidth.txt" >"$B/tools/nvbandwidth/bin/nvbandwidth"
chmod +x "$B"/tools/*/bin/*

# An nvidia-smi that names an H200, for the sku part (the simulated GPU does the copies).
fake_nvidia_smi "$WORK/smi" "NVIDIA H200" 00000000:18:00.0
rc=0
(cd "$WORK" && PATH=$WORK/smi:$PATH SIMGPU_DRYRUN=$top_builddir/tests/support/simgpu/lib \
	SIMNCCL_DRYRUN=$top_builddir/tests/support/simnccl/lib GDRB_BUNDLE_QUICK=1 GDRB_BUNDLE_ROUNDS=1 \
	GDRB_BUNDLE_PARTS="inventory nccl copies sku mpi" bash "$B/run.sh" "$WORK/out") >"$WORK/run.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/run.out"; fail "run.sh exited $rc"; }
for f in reference.md run.log manifest.txt inventory.txt raw.tgz; do
	[ -s "$WORK/out/$f" ] || { cat "$WORK/run.out"; fail "run.sh wrote no $f"; }
done
for p in inventory nccl copies sku mpi; do
	grep -q "^$p: exit 0 after" "$WORK/out/run.log" || { cat "$WORK/out/run.log"; fail "part $p did not end with exit 0"; }
done
r=$WORK/out/reference.md
# 8 B out of place: nccl-tests' 5.82 us beside a simulated figure, with a ratio and a verdict.
grep -Eq '^\| 8 B \| out-of-place \| [0-9.]+ \| 5\.82 \| [0-9.]+ \| (ok|\*\*GAP)' "$r" ||
	{ cat "$r"; fail "no allreduce row beside nccl-tests"; }
[ "$(grep -c '^| 8 B | out-of-place |' "$r")" -eq 3 ] || { cat "$r"; fail "not one 8 B row for each of the three collectives"; }
grep -Eq '^\| host to device, copy engine \| 1 MiB \| [0-9.]+ \| 55\.1 \| [0-9.]+ \|' "$r" ||
	{ cat "$r"; fail "no copy row beside nvbandwidth"; }
grep -q '^- CUDA-aware MPI: not carried' "$r" || { cat "$r"; fail "the missing CUDA-aware MPI is not said"; }
grep -Eq '^\| gdrb_mpi_bw \| 8 B \|' "$r" || { cat "$r"; fail "no MPI row"; }
tar -tzf "$WORK/out/raw.tgz" | grep -q 'nccl/gd-all_reduce-r1.csv' || fail "raw.tgz lacks gdrbench's NCCL CSV"
grep -q 'its own timing\|timed as nccl-tests' "$r" || fail "the report does not say how gdrbench's NCCL was timed"
pass "run.sh on the simulated GPU: nccl-tests and nvbandwidth figures beside gdrbench's, the MPI part without a CUDA-aware MPI"
# The sku part: this build machine is no H200 node, so the inventory fails naming what differs;
# the profile's copies ran on the simulated GPU and are judged SIMULATED, never PASS.
s=$WORK/out/sku.txt
grep -q "^## GPU 'NVIDIA H200': SKU h200 (node profile hgx-h200)" "$s" || { cat "$s"; fail "sku: the SKU is not taken from the GPU's name"; }
grep -q '^inventory h200: FAIL' "$s" || { cat "$s"; fail "sku: the inventory of a node that is not an H200 node does not fail"; }
grep -q '^SIMULATED: ' "$s" || { cat "$s"; fail "sku: the copies on the simulated GPU are not judged SIMULATED"; }
grep -q '"verdict": "SIMULATED"' "$WORK/out/sku-verdict.json" || fail "sku: sku-verdict.json"
pass "run.sh's sku part: the SKU from the GPU's name, the inventory failing on this node, the profile's copies judged SIMULATED"
