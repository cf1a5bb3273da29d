#!/bin/bash
# gdrb sweep --profile nccl-gdr on the simulated NCCL over the simulated GPU (listed by a fake
# nvidia-smi), 2 ranks, small sizes: a simulated two-node IB fabric where GDRDMA is used (both
# launches' rows kept and paired, the GDR-used rule passes, the verdict SIMULATED, plots and
# report with the transport table), then a NIC without GPUDirect (the GDR-used rule fails with
# the note's reason in the verdict).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"
need_mpi
[ -x "$top_builddir/nccl/gdrb_nccl_allreduce" ] || skip "built without NCCL"
have_gpu && skip "a real GPU answers here: the simulated one is not put in front of it"
use_simgpu strict
lib=$top_builddir/tests/support/simnccl/lib
ls "$lib"/libnccl.so.* >/dev/null 2>&1 || skip "the simulated NCCL is not built"
export LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH
export SIMGPU_DEVICES=0000:3b:00.0,0000:5e:00.0,0000:86:00.0,0000:af:00.0
unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE NCCL_P2P_DISABLE NCCL_SHM_DISABLE \
	NCCL_IB_DISABLE NCCL_NET NCCL_NET_GDR_LEVEL SIMNCCL_NET SIMNCCL_NIC_GDR SIMNCCL_FAIL_AFTER \
	SIMNCCL_FAIL_RANK
# A rank a node: every connection goes through the (simulated) IB network.
export SIMNCCL_RANKS_PER_NODE=1 SIMNCCL_DELAY_US=20
fake_nvidia_smi "$WORK/gpu" "gdrbench simulated GPU (simgpu)" 00000000:3B:00.0 0x00000000 16384 0.0
export PATH=$WORK/gpu:$PATH

sweep() { # NAME [ARGS...]: the nccl-gdr profile, small sizes, into $WORK/NAME
	local name=$1
	shift
	"$SCRIPTS/gdrb" sweep --profile nccl-gdr --bin-dir "$top_builddir" --sizes 8,64K --time-per-size 0.01 \
		--out "$WORK/$name" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
}

sweep gdr
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/gdr.out" "$WORK/gdr.err"; fail "sweep on the simulated NCCL exited $rc, expected 1 (SIMULATED)"; }
csv=$WORK/gdr/results.csv
csv_check "$csv" || fail "results.csv does not follow the schema"
nccl=(layer=nccl mem=device reg=nccl pair=all status=ok 'library=NCCL 2.28.9 (simulated)' transport=NET/IB)
for b in allreduce alltoall; do
	[ "$(csv_count "$csv" benchmark=nccl_$b path=direct gdr_connections=8/8 "${nccl[@]}")" -eq 2 ] &&
		[ "$(csv_count "$csv" benchmark=nccl_$b path=staged gdr_connections=0/8 "${nccl[@]}")" -eq 2 ] ||
		{ cat "$csv"; fail "nccl_$b: not 2 direct rows (8/8 GDRDMA) and 2 staged rows (0/8) from the two launches"; }
done
grep -q -E '^\[2/4\] gdrb_nccl_allreduce mem=device --nccl-gdr=off --nccl-net-only: ok, 2 rows' "$WORK/gdr.err" ||
	{ cat "$WORK/gdr.err"; fail "the progress line does not tell the two launches apart"; }
v=$WORK/gdr/verdict.json
[ "$(json_get "$v" verdict)" = SIMULATED ] || { cat "$WORK/gdr.out"; fail "the verdict is not SIMULATED"; }
grep -q '^SIMULATED: 4 rules, .*measured on gdrbench simulated GPU (simgpu) and NCCL 2.28.9 (simulated), which proves behaviour, never speed' \
	"$WORK/gdr.out" || { cat "$WORK/gdr.out"; fail "the verdict line does not name the simulated GPU and NCCL"; }
[ "$(json_get "$v" rules.0.name)" = nccl-gdr-used ] && [ "$(json_get "$v" rules.0.verdict)" = PASS ] &&
	[ "$(json_get "$v" rules.0.checked)" = 2 ] || { cat "$WORK/gdr.out"; fail "the GDR-used rule did not pass on 8/8"; }
# The ratio rules paired each direct row with the staged row of its size (8 B for latency).
[ "$(json_get "$v" rules.3.name)" = nccl-gdr-latency ] && [ "$(json_get "$v" rules.3.checked)" = 1 ] ||
	{ cat "$WORK/gdr.out"; fail "the latency rule did not pair the 8 B rows of the two launches"; }
json_get "$v" rules.3.message | grep -q 'of staged' || { cat "$WORK/gdr.out"; fail "the latency rule's message"; }
[ "$(json_get "$v" rules.2.verdict)" = NODATA ] || fail "the busbw rule judged sizes below 256 MiB"
if command -v gnuplot >/dev/null 2>&1; then
	png_ok "$WORK/gdr/plots/nccl_allreduce-device.png" || fail "no figure of nccl_allreduce"
	grep -q '^65536 ' "$WORK/gdr/plots/data/nccl_allreduce-device.ratio.dat" ||
		fail "the figure has no direct/staged panel for the NCCL pair"
fi
md=$WORK/gdr/summary.md
[ -s "$WORK/gdr/report.html" ] || fail "no report.html"
grep -q '^| 64KiB | [0-9.]* | [0-9.]* | [0-9.]*x |$' "$md" || { cat "$md"; fail "summary.md: no direct and staged busbw side by side with their ratio"; }
grep -q '^## NCCL: the path NCCL took' "$md" || { cat "$md"; fail "summary.md: no transport section"; }
grep -q '^| nccl_allreduce | device | direct | 8B..64KiB (2) | NET/IB | 8/8 | NCCL 2.28.9 (simulated) | yes, every network connection |$' "$md" &&
	grep -q '^| nccl_allreduce | device | staged | 8B..64KiB (2) | NET/IB | 0/8 | NCCL 2.28.9 (simulated) | no, as asked (GPUDirect off: staged through host memory) |$' "$md" ||
	{ cat "$md"; fail "summary.md: the transport table"; }
grep -q 'gdrb_nccl_allreduce --nccl-gdr=off --nccl-net-only' "$md" || fail "summary.md: the steps do not show the runs' arguments"
pass "nccl-gdr on a simulated IB fabric: both launches' rows kept and paired, GDR-used passes on 8/8, SIMULATED, plots, transport table"

# A NIC without GPUDirect: NCCL falls back, the rule fails with the binary's reason.
SIMNCCL_NIC_GDR=0 sweep nogdr --bench nccl_allreduce
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/nogdr.out" "$WORK/nogdr.err"; fail "sweep on a NIC without GPUDirect exited $rc, expected 1"; }
v=$WORK/nogdr/verdict.json
[ "$(json_get "$v" rules.0.name)" = nccl-gdr-used ] && [ "$(json_get "$v" rules.0.verdict)" = FAIL ] ||
	{ cat "$WORK/nogdr.out"; fail "the GDR-used rule did not fail on a NIC without GPUDirect"; }
grep -q '^FAIL   nccl-gdr-used: ' "$WORK/nogdr.out" &&
	grep -q "2 of 2 checks failed: 8B: every attempt failed: attempts 1: '0/8' (fail: GPUDirect allowed but NCCL used NET/IB without GDRDMA on 8 of 8 connections), 2: '0/8' (fail: GPUDirect allowed" "$WORK/nogdr.out" ||
	{ cat "$WORK/nogdr.out"; fail "the verdict does not give the note's reason"; }
[ "$(json_get "$v" verdict)" = SIMULATED ] || fail "a failing rule on the simulator: still SIMULATED overall"
grep -q '| nccl_allreduce | device | direct | 8B..64KiB (2) | NET/IB | 0/8 | .* | no: GPUDirect allowed but NCCL used NET/IB without GDRDMA on 8 of 8 connections |' \
	"$WORK/nogdr/summary.md" || { cat "$WORK/nogdr/summary.md"; fail "summary.md does not say GDRDMA did not carry the bytes"; }
pass "a NIC without GPUDirect: nccl-gdr-used FAILs with 'GPUDirect allowed but NCCL used NET/IB without GDRDMA on 8 of 8 connections'"
