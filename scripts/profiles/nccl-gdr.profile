# nccl-gdr: does NCCL use GPUDirect RDMA, and does it pay? Any fabric, any link rate.
#
# NCCL falls back to staging its network traffic through host memory without a word (a NIC that
# cannot read GPU memory, a GPU too far from the NIC, a missing nvidia-peermem or dma-buf), and
# the only symptom is a training job's bandwidth. This profile runs NCCL's allreduce (and its
# all-to-all) twice, GPUDirect allowed and GPUDirect off (NCCL reads its environment once per
# process, so each is a launch of its own), 8 B to 1 GiB, and checks (docs/nccl.md):
#  - GPUDirect carried every network connection on which NCCL itself would use it: NCCL's own
#    log says which of its connections used GDRDMA (the gdr_connections column, G/N), so this is
#    the evidence, not a guess from the bandwidth. A row whose connections did not all use it
#    fails with the binary's reason ("GPUDirect allowed but NCCL used NET/IB without GDRDMA on
#    16 of 16 connections") and why NCCL should have used it, unless the evidence shows that
#    NCCL declines it there: a GPU-NIC distance beyond NCCL_NET_GDR_LEVEL (PXB by default: a
#    NIC across the root complex or the sockets, from the doctor's topology), or its sends on a
#    GPU before Ampere (the receives must still use it). A log that could not be read fails as
#    "transport unknown"; no network connection at all (ranks that talked through NVLink or
#    shared memory) fails as nothing to judge;
#  - busbw with GPUDirect, from 256 MiB, at least what the node's topology predicts of
#    direct/staged, less 10%: about 1 where the wire is the bottleneck (staging through host
#    memory reaches the wire too), up to 2 and more where GPU and NIC share a PCIe switch whose
#    uplink staging crosses twice each way. The prediction reads the doctor's report (NIC rate,
#    GPU-NIC distance, the PCIe links and the shared uplink); where a piece is missing the rule
#    has no data, never a pass. The derivation is in docs/nccl.md ("What GPUDirect should be
#    worth here"). The seeds' observed +30% is printed beside the measured ratio as a reference;
#  - latency with GPUDirect at 8 B..8 KiB not above staged, with 10% tolerance: NCCL's LL
#    protocol, which carries these sizes, keeps its send buffers in host memory with or without
#    GPUDirect, so only the receive side gains and halving is no law; the seeds' -50% is
#    printed beside the measured ratio as a reference. The column is lat_avg_us, the mean time
#    per call, because nccl-tests reports the mean (its "time" column) and busbw is computed
#    from it: the rules read one measurement, and a number can be set beside nccl-tests'.
#
# Where NCCL runs: --nccl-gdr=auto leaves NCCL its own rule of how close GPU and NIC must be
# (NCCL_NET_GDR_LEVEL, PXB by default), i.e. what a training job with default settings gets; on
# a node whose GPU sits too far from its NIC NCCL stages on purpose, and the first rule says so
# rather than fail. Use args="--nccl-gdr=on ..." to ask whether GPUDirect works at any distance.
# --nccl-net-only puts every connection through the network (NCCL_P2P_DISABLE,
# NCCL_SHM_DISABLE), so that each byte tests GPUDirect, on one node with two GPUs and NICs as on
# two nodes (--hosts a,b: rank i and i + N/2 on different nodes). At least 2 ranks, one GPU
# each. The binaries are built where configure finds NCCL (docs/nccl.md); elsewhere these runs
# are skipped ("not built here") and every rule fails with "no data", on purpose: an acceptance
# check that cannot run has not passed.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description NCCL with GPUDirect RDMA: used wherever NCCL would use it, busbw and latency against what the topology predicts (+30% and -50% printed as reference)
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
rule nccl-gdr-busbw     nccl_allreduce busbw_GBps >= predicted of staged mem=device sizes=256M: tolerance=10% reference=130%
rule nccl-gdr-latency   nccl_allreduce lat_avg_us <= predicted of staged mem=device sizes=8:8K  tolerance=10% reference=50%
