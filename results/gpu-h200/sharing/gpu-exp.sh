#!/usr/bin/env bash
# One-off diagnosis (not committed): staged small-message latency, two ranks on one GPU.
set -u
O=${OUT:-/tmp/expout}; mkdir -p "$O"
tar -xzf gdrbench-gpubundle.tar.gz -C /tmp
. /tmp/gdrbench-gpubundle/env.sh
[[ -n ${SIMGPU_DRYRUN:-} ]] && export LD_LIBRARY_PATH=$SIMGPU_DRYRUN:$LD_LIBRARY_PATH
cd /tmp/gdrbench-gpubundle/build
S=8,1K,4K,16K,32K,64K,256K
t0=$SECONDS
st() { echo "=== [$((SECONDS - t0)) s] $*"; }
lat() { local tag=$1; shift; timeout -k 3 40 mpirun -np 2 mpi/gdrb_mpi_latency -m $S -t 0.1 "$@" --csv "$O/lat-$tag.csv" >"$O/lat-$tag.out" 2>&1; echo "$tag exit $?"; }
{
st pinned; lat pinned --mem pinned
st device; lat device --mem device --staging serial
st copy1; timeout 40 bench/gdrb_copy_bw -m $S -t 0.1 --csv "$O/copy-alone.csv" >"$O/copy-alone.out" 2>&1; echo "alone exit $?"
st copy2
timeout 60 bench/gdrb_copy_bw -m $S -t 0.3 --csv "$O/copy-a.csv" >"$O/copy-a.out" 2>&1 &
timeout 60 bench/gdrb_copy_bw -m $S -t 0.3 --csv "$O/copy-b.csv" >"$O/copy-b.out" 2>&1; wait; echo "pair done"
st mps
command -v nvidia-cuda-mps-control; nvidia-smi --query-gpu=compute_mode --format=csv
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
if nvidia-cuda-mps-control -d; then
	sleep 1; lat device-mps --mem device --staging serial
	echo quit | nvidia-cuda-mps-control; sleep 1; cat /tmp/mps-log/control.log | tail -5
fi
st done
} >"$O/exp.log" 2>&1
tail -30 "$O/exp.log"
