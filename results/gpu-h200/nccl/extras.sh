#!/usr/bin/env bash
# After run.sh: nccl-tests beside gdrbench's NCCL binaries (one rank, one GPU), two ranks on one
# GPU under NCCL, staging under MPS. Everything into $1/extra.tgz.
set -u
OUT=$1 R=$PWD B=/tmp/gdrbench-gpubundle E=$(mktemp -d /tmp/gdrb-extra.XXXXXX)
. "$B/env.sh"
lim() { timeout -k 5 "$@"; }
trap 'tar -C "$E" -czf "$OUT/extra.tgz" .; exit' EXIT TERM INT
cd "$B/build"
{
echo "## versions"; python3 -c 'import nvidia.nccl,os;print(os.listdir(os.path.join(list(nvidia.nccl.__path__)[0],"lib")))'
ldd "$R/.gpucarry/nt/all_reduce_perf" | grep -E 'nccl|cudart'
ldd nccl/gdrb_nccl_allreduce | grep -E 'nccl|cudart'
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv
} >"$E/versions.txt" 2>&1
# nccl-tests and gdrbench, each collective back to back, twice, order swapped
for round in 1; do
 for c in all_reduce all_gather reduce_scatter; do
  g=${c/all_reduce/allreduce}; g=${g/all_gather/allgather}; g=${g/broadcast/bcast}
  nt() { lim 60 "$R/.gpucarry/nt/${c}_perf" -b 8 -e 64M -f 2 -g 1 -w 5 -n 50 -c 1 >"$E/nt-$c-r$round.txt" 2>&1; echo "nt $c r$round exit $?"; }
  gd() { local ip=(--in-place both); [[ $c == alltoall || $c == broadcast ]] && ip=()
    lim 90 mpirun -np 1 "nccl/gdrb_nccl_$g" --mem device "${ip[@]}" -c -m 8:64M -t 0.1 --csv "$E/gd-$g-r$round.csv" >"$E/gd-$g-r$round.txt" 2>&1; echo "gd $g r$round exit $?"; }
  if ((round == 1)); then nt; gd; else gd; nt; fi
 done
done >"$E/order.txt" 2>&1
NCCL_DEBUG=INFO lim 60 mpirun -np 1 nccl/gdrb_nccl_allreduce --mem device -c -m 8:1M -t 0.05 >"$E/nccl-debug-1rank.txt" 2>&1; echo "exit $?" >>"$E/nccl-debug-1rank.txt"
NCCL_DEBUG=WARN lim 60 mpirun -np 2 nccl/gdrb_nccl_allreduce --mem device -c -m 8:1M -t 0.05 >"$E/nccl-2ranks-1gpu.txt" 2>&1; echo "exit $?" >>"$E/nccl-2ranks-1gpu.txt"
lim 60 mpirun -np 2 nccl/gdrb_nccl_sendrecv --mem device -c -m 8:1M -t 0.05 >"$E/nccl-sendrecv-2ranks.txt" 2>&1; echo "exit $?" >>"$E/nccl-sendrecv-2ranks.txt"
# staging under MPS (finding 5 of the last GPU check)
nvidia-cuda-mps-control -d >"$E/mps.txt" 2>&1; echo "mps start $?" >>"$E/mps.txt"
cd "$R"
lim 150 scripts/measure-staging --build-dir "$B/build" --stage-chunk 512K,128K,2M --time-per-size 0.3 \
  --out "$E/staging-mps" --report "$E/staging-mps.md" >"$E/staging-mps.out" 2>&1; echo "staging-mps exit $?" >>"$E/mps.txt"
cd "$B/build"
lim 60 mpirun -np 2 mpi/gdrb_mpi_latency --mem device -c -m 8:64K -t 0.1 >"$E/mpi-latency-mps.txt" 2>&1; echo "exit $?" >>"$E/mpi-latency-mps.txt"
echo quit | nvidia-cuda-mps-control; echo "mps quit $?" >>"$E/mps.txt"
