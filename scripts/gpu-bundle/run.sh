#!/usr/bin/env bash
# gdrbench-gpubundle/run.sh OUTDIR: the GPU check, gdrbench beside its reference tools on one GPU
# node, within GDRB_BUNDLE_BUDGET seconds (default 500; a device call allows 9 minutes). The
# bundle is self-contained (scripts/gpu-bundle/mkbundle); start this from anywhere.
#
# Parts, each under its own time limit so that one hang costs only itself:
#   inventory   the node: kernel, driver, GPU, PCI, what the bundle carries (inventory.txt)
#   semantics   tests/test_simgpu on the real CUDA runtime, driver attributes (cuda-semantics.txt)
#   nccl        gdrb_nccl_{allreduce,allgather,reduce_scatter} beside nccl-tests'
#               {all_reduce,all_gather,reduce_scatter}_perf on one rank, 8 B to 64 MiB, out of
#               place and in place, 3 rounds in alternating order
#   copies      gdrb_copy_bw beside nvbandwidth (copy engine and SM, each direction and both)
#   sku         the GPU's SKU from its name (GDRB_BUNDLE_SKU overrides): the node profile's copy
#               steps against its floors, and gdrb inventory on the sweep's doctor report (sku.txt)
#   mpi         every MPI binary with --mem device -c on two ranks on one GPU under MPS, direct
#               beside staged, on the CUDA-aware Open MPI, UCX's protocol choices and Open MPI's
#               verbose lines kept raw; OMB's osu_latency/osu_bw -d cuda and ucx_perftest -m cuda
#               beside them where carried
#   staging     scripts/measure/measure-staging under MPS (staging.md)
# then reference.md (python3 -m gdrbtool.reference: each figure beside its reference tool's) and
# raw.tgz (everything each part wrote). A reference tool the bundle does not carry makes its
# part say "not carried"; the rest runs.
#
# Environment: GDRB_BUNDLE_BUDGET (seconds, default 500), GDRB_BUNDLE_PARTS (default all, e.g.
# "nccl copies"), GDRB_BUNDLE_ROUNDS (NCCL rounds, default 3), GDRB_BUNDLE_QUICK=1 (small sizes
# and two MPI binaries: a rehearsal of the pipeline, not of figures), SIMGPU_DRYRUN=DIR and
# SIMNCCL_DRYRUN=DIR (a build tree's tests/support/simgpu/lib and simnccl/lib: rehearse on the
# simulated GPU and NCCL; MPS is then not started).
set -u
B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export B

# --part NAME: one part, run by the main script under timeout (below).
if [[ ${1:-} == --part ]]; then
	. "$B/env.sh"
	# shellcheck source=parts.sh
	. "$B/parts.sh"
	"part_$2"
	exit
fi

OUT=${1:-}
[[ -n $OUT && $# -eq 1 ]] || {
	echo "run.sh: usage: run.sh OUTDIR (a directory for the report; GDRB_BUNDLE_* in the environment)" >&2
	exit 2
}
budget=${GDRB_BUNDLE_BUDGET:-500}
if ! [[ $budget =~ ^[0-9]+$ ]] || ((budget < 60)); then
	echo "run.sh: GDRB_BUNDLE_BUDGET: expected whole seconds, at least 60, not '$budget'" >&2
	exit 2
fi
rounds=${GDRB_BUNDLE_ROUNDS:-3}
[[ $rounds =~ ^[1-9]$ ]] || {
	echo "run.sh: GDRB_BUNDLE_ROUNDS: expected 1 to 9, not '$rounds'" >&2
	exit 2
}
parts=${GDRB_BUNDLE_PARTS:-inventory semantics nccl copies sku mpi staging}
for p in $parts; do
	case $p in
	inventory | semantics | nccl | copies | sku | mpi | staging) ;;
	*)
		echo "run.sh: GDRB_BUNDLE_PARTS: unknown part '$p' (inventory semantics nccl copies sku mpi staging)" >&2
		exit 2
		;;
	esac
done
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/gdrb-run.XXXXXX")
export OUT W GDRB_BUNDLE_ROUNDS=$rounds
exec > >(tee "$OUT/run.log") 2>&1
t0=$SECONDS
step() { echo "=== [$((SECONDS - t0)) s] $*"; }

# MPS for the parts with two ranks on one GPU: private pipe and log directories, stopped at exit.
export CUDA_MPS_PIPE_DIRECTORY=$W/mps/pipe CUDA_MPS_LOG_DIRECTORY=$W/mps/log
mps_started=0
mps_stop() {
	if ((mps_started)); then
		echo quit | timeout 20 nvidia-cuda-mps-control >>"$W/mps/control.txt" 2>&1
		echo "MPS stopped (exit $?)"
		mps_started=0
	fi
}
mps_start() {
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
	if [[ -n ${SIMGPU_DRYRUN:-} ]]; then
		echo "MPS not started: rehearsal on the simulated GPU"
	elif ! command -v nvidia-cuda-mps-control >/dev/null; then
		echo "MPS not started: no nvidia-cuda-mps-control on PATH"
	elif timeout 20 nvidia-cuda-mps-control -d >>"$W/mps/control.txt" 2>&1; then
		mps_started=1
		echo "MPS started (pipes in the run's temporary directory)"
	else
		echo "MPS not started: nvidia-cuda-mps-control -d failed (see raw mps/control.txt)"
	fi
}
trap 'mps_stop' EXIT

# part NAME LIMIT: run a part under the smaller of LIMIT and what the budget leaves (30 s kept for
# the report and the archive).
part() {
	local name=$1 limit=$2 left
	left=$((budget - (SECONDS - t0) - 30))
	((left < limit)) && limit=$left
	if [[ " $parts " != *" $name "* ]]; then
		return 0
	fi
	if ((limit < 10)); then
		step "$name: skipped, $((SECONDS - t0)) s of the $budget s budget gone"
		echo "$name: skipped (budget)" >>"$W/parts.txt"
		return 0
	fi
	step "$name (at most $limit s)"
	timeout -k 5 "$limit" bash "$B/run.sh" --part "$name"
	local rc=$?
	((rc == 124 || rc == 137)) && echo "$name: stopped at its time limit ($limit s)"
	echo "$name: exit $rc after $((SECONDS - t0)) s" | tee -a "$W/parts.txt"
}

cp "$B/MANIFEST" "$OUT/manifest.txt"
part inventory 25
part semantics 45
part nccl 150
part copies 110
part sku 90
if [[ " $parts " == *" mpi "* || " $parts " == *" staging "* ]]; then mps_start; fi
part mpi 120
part staging 110
mps_stop

step "report -> reference.md"
PYTHONPATH=$B/scripts/lib timeout 20 python3 -m gdrbtool.reference --out "$OUT/reference.md" "$W"
echo "report exit $?"
[[ -f $W/staging.md ]] && cp "$W/staging.md" "$OUT/staging.md"
[[ -f $W/sku/sweep/verdict.json ]] && cp "$W/sku/sweep/verdict.json" "$OUT/sku-verdict.json"
step "raw output -> raw.tgz"
tar -C "$W" -czf "$OUT/raw.tgz" --exclude=./mps/pipe . 2>/dev/null
rm -rf "$W"
ls -la "$OUT"
step "done"
