#!/bin/bash
# gdrb_copy_bw --p2p on the simulated GPU's nodes (SIMGPU_NODE): every ordered
# pair of GPUs, direct and staged, one way and both ways at once.
#  - nvswitch8, nvlink4, pcie4: a row for every ordered pair, path and size,
#    and a matrix per size naming every GPU; the direct rows of a pair without
#    peer access are n/a with CUDA's answer (pcie4: all of them; nvlink4: all
#    but the bridged pairs), never a figure; every measured row validated;
#  - the direct copies went over the link (the trace: peer access was on), and
#    no figure beats the simulated engines (each copy timed to its end);
#  - the staged copy's two halves overlap fragment by fragment (the trace);
#  - peer access CUDA refuses to enable (SIMGPU_PEER_MAX: cudaErrorTooManyPeers):
#    those pairs' direct rows n/a with its answer;
#  - a link that corrupts a byte of every copy (SIMGPU_CORRUPT_PEER=1): -c
#    makes each direct row invalid-data and leaves the staged ones ok;
#  - --p2p-gpus: only the pairs among the GPUs listed, named by their numbers in
#    the rows, the notes and the matrices;
#  - one GPU: exit 77, saying so; bad input (--p2p-gpus too: a GPU the node lacks,
#    one named twice, a single one, garbage): one line, exit 2, no CSV written.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
use_simgpu strict

bin=$top_builddir/bench/gdrb_copy_bw
[ -x "$bin" ] || fail "gdrb_copy_bw not built"
# Few iterations: a node of 8 GPUs has 56 ordered pairs, 4 paths each.
short=(-n 20 --min-iters 2 -w 2 -t 0.01 -c)

# p2p NODE NGPU MODE SIZES: run it, keep out/err/csv under $WORK/NODE.MODE.*.
p2p() {
	local base=$WORK/$1.$3
	SIMGPU_NODE=$1 SIMGPU_COPY_GBPS=2 SIMGPU_PEER_GBPS=6 SIMGPU_TRACE=$base.trace \
		"$bin" --p2p="$3" -m "$4" "${short[@]}" --csv "$base.csv" >"$base.out" 2>"$base.err" ||
		{ tail -20 "$base.out" "$base.err"; fail "$1 --p2p=$3"; }
	no_simgpu_errors "$base.err"
	grep -q "^# NOTE: the GPU is simulated" "$base.out" || fail "$1: no 'simulated' note"
}

# every_pair NODE.MODE NGPU PATH SIZES: one row per ordered pair and size of PATH, and no other pair.
every_pair() {
	local csv=$WORK/$1.csv n=$2 i j
	for ((i = 0; i < n; i++)); do
		for ((j = 0; j < n; j++)); do
			[ "$i" = "$j" ] && continue
			[ "$(csv_count "$csv" path="$3" pair="gpu$i->gpu$j")" = "$4" ] ||
				fail "$1: not $4 row(s) of $3 for gpu$i->gpu$j"
		done
	done
	[ "$(csv_count "$csv" path="$3")" = $((n * (n - 1) * $4)) ] || fail "$1: $3 rows beyond the pairs"
}

# matrices NODE.MODE NGPU COUNT: COUNT matrices, each with a row for every GPU.
matrices() {
	local out=$WORK/$1.out
	[ "$(grep -c '^# [0-9.]*[KMG]*i*B.*: direct / staged$' "$out")" -ge 1 ] || fail "$1: no ratio matrix"
	[ "$(grep -c '^# gpu0 ' "$out")" = "$3" ] || fail "$1: not $3 matrices"
	[ "$(grep -c "^# gpu$(($2 - 1)) " "$out")" = "$3" ] || fail "$1: a matrix lacks gpu$(($2 - 1))"
	! grep -q "^# gpu$2 " "$out" || fail "$1: a matrix names a GPU the node lacks"
}

# No figure above the engine it ran on (5% for rounding and clock granularity).
within_model() {
	csv_col "$WORK/$1.csv" path,pair,bw_GBps status=ok |
		awk -F'\t' '($1 ~ /staged/ && $3 > 2 * 1.05) || ($1 ~ /direct/ && $3 > 6 * 1.05) { print; bad++ }
			END { exit bad > 0 || NR == 0 }' ||
		fail "$1: a copy ran faster than the simulated engine: its end was not timed"
}

# NVSwitch: 8 GPUs, every pair peer-capable; both directions sets, one size.
p2p nvswitch8 8 both 64K
csv_check -v status=ok -v rows=224 "$WORK/nvswitch8.both.csv" || fail "nvswitch8 CSV"
for path in p2p-direct p2p-staged p2p-direct-bidir p2p-staged-bidir; do
	every_pair nvswitch8.both 8 "$path" 1
done
[ "$(csv_count "$WORK/nvswitch8.both.csv" status=ok errors=0)" = 224 ] || fail "nvswitch8: a row not validated ok"
matrices nvswitch8.both 8 6
within_model nvswitch8.both
# Direct copies crossed the NVSwitch with peer access; none went through host memory.
grep -q 'cudaMemcpyAsync .* device<-device stream .* peer nvswitch$' "$WORK/nvswitch8.both.trace" ||
	fail "nvswitch8: no direct copy over the link in the trace"
! grep -q 'peer via-host' "$WORK/nvswitch8.both.trace" || fail "nvswitch8: a direct copy went through host memory"
pass "nvswitch8: 56 ordered pairs x 4 paths validated, 6 matrices of 8 GPUs, direct copies over the link"

# PCIe with peer access off: every direct row n/a with CUDA's answer, the staged ones measured.
p2p pcie4 4 uni 64K,1M
csv_check "$WORK/pcie4.uni.csv" || fail "pcie4 CSV"
every_pair pcie4.uni 4 p2p-direct 2
every_pair pcie4.uni 4 p2p-staged 2
[ "$(csv_count "$WORK/pcie4.uni.csv" path=p2p-direct status=unsupported bw_GBps= \
	'note~cudaDeviceCanAccessPeer\([0-3], [0-3]\) = 0: CUDA maps no peer path between these GPUs .*')" = 24 ] ||
	fail "pcie4: a direct row is not n/a with cudaDeviceCanAccessPeer's answer"
[ "$(csv_count "$WORK/pcie4.uni.csv" path=p2p-staged status=ok)" = 24 ] || fail "pcie4: a staged row not ok"
matrices pcie4.uni 4 6
awk '/: direct \(peer access\)/ { m = 1; next } m && /^# gpu/ { for (i = 3; i <= NF; i++) if ($i != "n/a" && $i != "-") bad++ }
	/^# [0-9]/ && !/: direct \(peer access\)/ { m = 0 } END { exit bad > 0 }' "$WORK/pcie4.uni.out" ||
	fail "pcie4: the direct matrix holds a figure"
grep -Eq '^ +64KiB +gpu0->gpu1 +n/a +[0-9.]+ +n/a$' "$WORK/pcie4.uni.out" || fail "pcie4: the table line is not n/a, staged, n/a"
grep -q 'peer access (cudaDeviceCanAccessPeer): 0 of 12 ordered pairs; without it: gpu0->gpu1, ' "$WORK/pcie4.uni.out" ||
	fail "pcie4: the header does not name the pairs without peer access"
within_model pcie4.uni
pass "pcie4: 12 ordered pairs, direct n/a with cudaDeviceCanAccessPeer's answer, staged measured and validated"

# NVLink bridges 0-1 and 2-3 only: direct on those four ordered pairs, n/a on the eight others.
p2p nvlink4 4 bidir 256K
csv_check "$WORK/nvlink4.bidir.csv" || fail "nvlink4 CSV"
every_pair nvlink4.bidir 4 p2p-direct-bidir 1
every_pair nvlink4.bidir 4 p2p-staged-bidir 1
got=$(csv_col "$WORK/nvlink4.bidir.csv" pair path=p2p-direct-bidir status=ok | tr '\n' ' ')
[ "$got" = "gpu0->gpu1 gpu1->gpu0 gpu2->gpu3 gpu3->gpu2 " ] || fail "nvlink4: direct rows measured on '$got'"
[ "$(csv_count "$WORK/nvlink4.bidir.csv" path=p2p-direct-bidir status=unsupported)" = 8 ] || fail "nvlink4: not 8 n/a rows"
grep -q 'peer nvlink$' "$WORK/nvlink4.bidir.trace" || fail "nvlink4: no copy over NVLink in the trace"
within_model nvlink4.bidir
pass "nvlink4: direct on the bridged pairs only, both directions at once, validated"

# The staged copy is pipelined: a fragment's copy into GPU J overlaps the next one's copy out of
# GPU I. Each simulated 1 MiB copy takes at least T (5 us + 1 MiB at 0.5 GB/s; load only makes it
# longer), so two copies on different streams that end less than T apart ran at the same time;
# copied one after the other they end T or more apart. From the trace's copyDone lines.
SIMGPU_NODE=pcie4 SIMGPU_COPY_GBPS=0.5 CUDA_VISIBLE_DEVICES=0,1 SIMGPU_TRACE=$WORK/pipe.trace "$bin" --p2p uni -m 8M \
	-n 4 --min-iters 2 -w 1 -t 0.1 --csv "$WORK/pipe.csv" >"$WORK/pipe.out" 2>"$WORK/pipe.err" ||
	{ cat "$WORK/pipe.err"; fail "8M staged"; }
[ "$(csv_count "$WORK/pipe.csv" path=p2p-staged status=ok)" = 2 ] || fail "8M staged: not 2 rows ok"
overlaps=$(awk -v t="$(awk 'BEGIN { print 5e-6 + 1048576 / 0.5e9 }')" '
	$2 == "copyDone" && $5 == 1048576 { if (prev != "" && $4 != prev && $6 - at < t) n++; prev = $4; at = $6 }
	END { print n + 0 }' "$WORK/pipe.trace")
[ "$overlaps" -ge 4 ] || fail "the staged copies did not overlap ($overlaps fragment pairs ran at once)"
pass "staged: copies out of one GPU and into the other overlap ($overlaps fragment pairs ran at once)"

# Peer access CUDA refuses to enable (out of peer mappings): the pair's direct row n/a with its answer.
SIMGPU_NODE=nvswitch8 SIMGPU_PEER_MAX=6 "$bin" --p2p uni -m 8K "${short[@]}" --csv "$WORK/max.csv" \
	>"$WORK/max.out" 2>"$WORK/max.err" || { cat "$WORK/max.err"; fail "SIMGPU_PEER_MAX=6"; }
no_simgpu_errors "$WORK/max.err"
got=$(csv_col "$WORK/max.csv" pair path=p2p-direct status=unsupported \
	'note~cudaDeviceEnablePeerAccess\([67]\) on GPU [0-7]: .*\(cudaErrorTooManyPeers\); the copies go through host memory.*' | tr '\n' ' ')
[ "$got" = "gpu0->gpu7 gpu1->gpu7 gpu2->gpu7 gpu3->gpu7 gpu4->gpu7 gpu5->gpu7 gpu6->gpu7 gpu7->gpu6 " ] ||
	fail "peer access refused: direct rows n/a on '$got'"
[ "$(csv_count "$WORK/max.csv" path=p2p-direct status=ok)" = 48 ] || fail "peer access refused: not 48 direct rows ok"
pass "peer access CUDA refuses (cudaErrorTooManyPeers): those pairs' direct rows n/a with its answer, the rest measured"

# A link that corrupts every copy: -c catches it on each direct row, the staged rows stay ok.
SIMGPU_NODE=nvlink4 SIMGPU_CORRUPT_PEER=1 "$bin" --p2p uni -m 64K "${short[@]}" --csv "$WORK/bad.csv" \
	>"$WORK/bad.out" 2>"$WORK/bad.err" && fail "corrupted peer copies passed"
no_simgpu_errors "$WORK/bad.err"
[ "$(csv_count "$WORK/bad.csv" path=p2p-direct status=invalid-data 'errors~[1-9][0-9]*')" = 4 ] ||
	{ csv_col "$WORK/bad.csv" path,pair,status,errors; fail "a corrupted direct copy was not caught"; }
[ "$(csv_count "$WORK/bad.csv" path=p2p-staged status=ok errors=0)" = 12 ] || fail "a staged row was hit"
grep -q 'wrong byte(s) after the direct copy gpu0->gpu1 at size 65536, first at byte 32768' "$WORK/bad.err" ||
	fail "the mismatch does not name the pair and the byte"
pass "-c catches the byte a link corrupted in each direct copy; staged rows unaffected"

# Renumbered by CUDA_VISIBLE_DEVICES, the links follow the GPUs: physical 1 and 0 stay peers.
SIMGPU_NODE=nvlink4 CUDA_VISIBLE_DEVICES=2,1,0 "$bin" --p2p uni -m 8K "${short[@]}" --csv "$WORK/vis.csv" \
	>"$WORK/vis.out" 2>"$WORK/vis.err" || { cat "$WORK/vis.err"; fail "CUDA_VISIBLE_DEVICES=2,1,0"; }
got=$(csv_col "$WORK/vis.csv" pair path=p2p-direct status=ok | tr '\n' ' ')
[ "$got" = "gpu1->gpu2 gpu2->gpu1 " ] || fail "visible 2,1,0: direct rows on '$got'"
pass "CUDA_VISIBLE_DEVICES renumbers the GPUs and their links with them"

# --p2p-gpus 0,1,3 on nvlink4: the six pairs among them, direct on the bridge 0-1 only, each GPU
# named by its own number (CUDA's answer for gpu1->gpu3 names 1 and 3, the matrices skip gpu2).
SIMGPU_NODE=nvlink4 "$bin" --p2p uni --p2p-gpus 0,1,3 -m 8K "${short[@]}" --csv "$WORK/sub.csv" \
	>"$WORK/sub.out" 2>"$WORK/sub.err" || { cat "$WORK/sub.err"; fail "--p2p-gpus 0,1,3"; }
got=$(csv_col "$WORK/sub.csv" pair path=p2p-staged status=ok | tr '\n' ' ')
[ "$got" = "gpu0->gpu1 gpu0->gpu3 gpu1->gpu0 gpu1->gpu3 gpu3->gpu0 gpu3->gpu1 " ] ||
	fail "--p2p-gpus 0,1,3: staged rows on '$got'"
got=$(csv_col "$WORK/sub.csv" pair path=p2p-direct status=ok | tr '\n' ' ')
[ "$got" = "gpu0->gpu1 gpu1->gpu0 " ] || fail "--p2p-gpus 0,1,3: direct rows on '$got'"
[ "$(csv_count "$WORK/sub.csv" path=p2p-direct pair='gpu1->gpu3' status=unsupported \
	'note~cudaDeviceCanAccessPeer\(1, 3\) = 0: .*')" = 1 ] || fail "--p2p-gpus: gpu1->gpu3's note does not name GPUs 1 and 3"
grep -q '^# GPU to GPU (--p2p uni): 3 GPUs (--p2p-gpus: gpu0, gpu1, gpu3 of the node.s 4), ' "$WORK/sub.out" ||
	fail "--p2p-gpus: the header does not name the GPUs chosen"
[ "$(grep -c '^#  *gpu0  *gpu1  *gpu3$' "$WORK/sub.out")" = 3 ] || fail "--p2p-gpus: the matrices do not name gpu0 gpu1 gpu3"
! grep -q 'gpu2' "$WORK/sub.out" "$WORK/sub.csv" || fail "--p2p-gpus 0,1,3: gpu2 measured"
SIMGPU_NODE=nvswitch8 "$bin" --p2p bidir --p2p-gpus 4-6 -m 8K "${short[@]}" --csv "$WORK/range.csv" \
	>"$WORK/range.out" 2>"$WORK/range.err" || { cat "$WORK/range.err"; fail "--p2p-gpus 4-6"; }
got=$(csv_col "$WORK/range.csv" pair path=p2p-direct-bidir status=ok | tr '\n' ' ')
[ "$got" = "gpu4->gpu5 gpu4->gpu6 gpu5->gpu4 gpu5->gpu6 gpu6->gpu4 gpu6->gpu5 " ] || fail "--p2p-gpus 4-6: rows on '$got'"
pass "--p2p-gpus 0,1,3 and 4-6: the pairs among those GPUs only, named by their numbers"

# One GPU: nothing to measure.
rc=0
"$bin" --p2p -m 8K "${short[@]}" >"$WORK/one.out" 2>"$WORK/one.err" || rc=$?
[ "$rc" = 77 ] || { cat "$WORK/one.err"; fail "one GPU: exit $rc, expected 77"; }
grep -q 'gdrb_copy_bw: error: --p2p: CUDA sees 1 GPU on this node .*GPU-to-GPU copies need two; nothing measured' "$WORK/one.err" ||
	{ cat "$WORK/one.err"; fail "one GPU: not said"; }
pass "one GPU: exit 77, saying so"

expect_refused "^gdrb_copy_bw: --p2p: unknown direction set 'sideways'; accepted: off, uni, bidir, both" "$bin" --p2p=sideways
expect_refused "^gdrb_copy_bw: --p2p: GPU-to-GPU copies are timed per copy on the host clock" "$bin" --p2p --copy-timing events
# --p2p-gpus: each refused before anything is written (no CSV), the node's count read from CUDA.
form="expected GPU numbers like 0,2,5 or 0-3 (from 0 to 63, each once)"
for bad in "" "1,1" "0-3,2" "x" "1," "3-1" "0 1" "64"; do
	SIMGPU_NODE=nvswitch8 expect_refused "^gdrb_copy_bw: --p2p-gpus: $form, got '$bad'" \
		"$bin" --p2p --p2p-gpus="$bad" --csv "$WORK/refused.csv"
	[ ! -e "$WORK/refused.csv" ] || fail "--p2p-gpus='$bad': a CSV written"
done
SIMGPU_NODE=nvswitch8 expect_refused "^gdrb_copy_bw: --p2p-gpus: GPU 8 is beyond this node's 8 GPUs (0-7, .*); expected GPU numbers like 0,2,5 or 0-3" \
	"$bin" --p2p --p2p-gpus 0,8 --csv "$WORK/refused.csv"
[ ! -e "$WORK/refused.csv" ] || fail "--p2p-gpus 0,8: a CSV written"
SIMGPU_NODE=nvlink4 CUDA_VISIBLE_DEVICES=2,3 expect_refused "^gdrb_copy_bw: --p2p-gpus: GPU 3 is beyond this node's 2 GPUs (0-1, " \
	"$bin" --p2p --p2p-gpus 2,3 --csv "$WORK/refused.csv"
expect_refused "^gdrb_copy_bw: --p2p-gpus: GPU 1 is beyond this node's 1 GPU (0-0, " "$bin" --p2p --p2p-gpus 0,1 --csv "$WORK/refused.csv"
[ ! -e "$WORK/refused.csv" ] || fail "--p2p-gpus on one GPU: a CSV written"
SIMGPU_NODE=nvswitch8 expect_refused "^gdrb_copy_bw: --p2p-gpus: names one GPU; GPU-to-GPU copies need two or more" "$bin" --p2p --p2p-gpus 3
SIMGPU_NODE=nvswitch8 expect_refused "^gdrb_copy_bw: --p2p-gpus: chooses the GPUs of --p2p; add --p2p" "$bin" --p2p-gpus 0,1
