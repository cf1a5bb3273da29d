# nccl-gdr: does NCCL use GPUDirect RDMA, and does it pay? Any fabric, any link rate.
#
# NCCL falls back to staging its network traffic through host memory without a word (a NIC that
# cannot read GPU memory, a GPU too far from the NIC, a missing nvidia-peermem or dma-buf), and
# the only symptom is a training job's bandwidth. This profile runs NCCL's allreduce (and its
# all-to-all) twice, GPUDirect allowed and GPUDirect off (NCCL reads its environment once per
# process, so each is a launch of its own), 8 B to 1 GiB, and checks (docs/nccl.md):
#  - GPUDirect carried every network connection: NCCL's own log says which of its connections
#    used GDRDMA (the gdr_connections column, G/N), so this is the evidence, not a guess from
#    the bandwidth. A row whose connections did not all use it fails with the binary's reason
#    ("GPUDirect allowed but NCCL used NET/IB without GDRDMA on 16 of 16 connections"); a log
#    that could not be read fails as "transport unknown"; no network connection at all (ranks
#    that talked through NVLink or shared memory) fails as nothing to judge;
#  - busbw with GPUDirect at least 130% of staged from 256 MiB: NCCL's rule of thumb (+30% bus
#    bandwidth with GDR). Without GDR, NCCL's GPU kernels write the network buffers in host
#    memory across PCIe and the proxy sends them from there: a second PCIe crossing, host memory
#    bandwidth and SM time per byte; at 256 MiB and above the Simple protocol is
#    bandwidth-bound, so the difference shows and launch costs do not blur it;
#  - latency with GPUDirect at most 50% of staged at 8 B..8 KiB: staging adds the host hop on
#    both sides (the GPU's store into host memory, the proxy's copy out, the receiver's poll of
#    host memory) to a network latency of a few microseconds. The column is lat_avg_us, the mean
#    time per call, because nccl-tests reports the mean (its "time" column) and busbw is computed
#    from it: the three rules read one measurement, and a number can be set beside nccl-tests'.
#    This floor is the field's recipe for a healthy node pair; NCCL's LL protocol hides part of
#    the host hop, so measure a reference node and lower it there if it does not hold.
#
# Where NCCL runs: --nccl-gdr=auto leaves NCCL its own rule of how close GPU and NIC must be
# (NCCL_NET_GDR_LEVEL, PXB by default), i.e. what a training job with default settings gets; a
# node whose GPU sits too far from its NIC fails the first rule, as its jobs would stage. Use
# args="--nccl-gdr=on ..." to ask whether GPUDirect works at any distance. --nccl-net-only puts
# every connection through the network (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE), so that each byte
# tests GPUDirect, on one node with two GPUs and NICs as on two nodes (--hosts a,b: rank i and
# i + N/2 on different nodes). At least 2 ranks, one GPU each. The binaries are built where
# configure finds NCCL (docs/nccl.md); elsewhere these runs are skipped ("not built here") and
# every rule fails with "no data", on purpose: an acceptance check that cannot run has not
# passed.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description NCCL with GPUDirect RDMA: used on every network connection, busbw +30% from 256 MiB, latency halved
sizes 8:1G

doctor gdrb_doctor

# GPUDirect allowed (NCCL's own rule: direct rows) and off (NCCL stages: staged rows); the rows
# of the two runs pair by size as the direct and staged rows of one MPI or verbs run do.
run gdrb_nccl_allreduce mem=device needs=gpu args="--nccl-gdr=auto --nccl-net-only"
run gdrb_nccl_allreduce mem=device needs=gpu args="--nccl-gdr=off --nccl-net-only"
run gdrb_nccl_alltoall  mem=device needs=gpu args="--nccl-gdr=auto --nccl-net-only"
run gdrb_nccl_alltoall  mem=device needs=gpu args="--nccl-gdr=off --nccl-net-only"

rule nccl-gdr-used      nccl_allreduce gdr_connections all                   path=direct
rule nccl-a2a-gdr-used  nccl_alltoall  gdr_connections all                   path=direct
rule nccl-gdr-busbw     nccl_allreduce busbw_GBps >= 130% of staged  mem=device sizes=256M:
rule nccl-gdr-latency   nccl_allreduce lat_avg_us <= 50% of staged   mem=device sizes=8:8K
