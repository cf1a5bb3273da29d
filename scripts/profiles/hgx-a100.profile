# hgx-a100: acceptance of one HGX A100 node (8 GPUs, NVSwitch, one HDR 200 Gb/s NIC per GPU), floor by floor.
#
# A floor is a figure someone published for a healthy node of this SKU, or gdrbench's own
# estimate, said as such: every rule carries source= (docs/skus.md has the same table). Before
# measuring, `gdrb sweep --sku a100` checks the node's parts against the SKU (gdrb inventory:
# GPU count and model, NIC count and rate, PCIe widths, NVLinks up) and stops at the first part that differs.
# NVLinks up on each GPU: 12, source: https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/nvidia-ampere-architecture-whitepaper.pdf (A100: 12 third-generation NVLinks, 600 GB/s).
#
# What runs, on one node:
#  - host<->GPU copies on the copy engines from pinned memory, 256 MiB to 1 GiB (nvbandwidth's
#    buffer is 64 MiB in early releases, 512 MiB now; at these sizes one cudaMemcpy a sample
#    costs nothing measurable over a batch), and a copy within the GPU (d2d); the local
#    process's GPU (GPU 0, or CUDA_VISIBLE_DEVICES): one GPU a run;
#  - NCCL allreduce on the node's 8 GPUs, one rank each, NCCL's own transports (NVLink, NVLS),
#    up to 16 GiB, the size Azure's health checks judge;
#  - GPUDirect RDMA write bandwidth, GPU memory on both sides, 1 MiB messages as Azure's
#    ib_write_bw check sends; the NIC pair the launcher gives the two ranks (each rail in turn,
#    or all at once, is the all-rails run of issue 40 part 2).
#  - GPU-to-GPU copies with peer access (gdrb_copy_bw --p2p=uni: every ordered pair of the GPUs the
#    process sees, direct beside staged through pinned host memory), 512 MiB as nvbandwidth's
#    device-to-device tests; each pair judged on its own (pair=*), a pair without peer access fails.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description HGX A100 node: copies >= 24 GB/s, GPU-to-GPU >= 220 GB/s per pair, NCCL allreduce busbw >= 228 GB/s at 16 GiB, GPUDirect >= 185 Gb/s per HDR NIC (Azure ND A100 v4)
sources required
doctor gdrb_doctor

run gdrb_copy_bw launch=local needs=gpu mem=none sizes=256M:1G paths=pinned:h2d,pinned:d2h,device:d2d
run gdrb_copy_bw launch=local needs=gpu mem=none sizes=512M paths=device:p2p-direct,device:p2p-staged args="--p2p=uni"
run gdrb_nccl_allreduce mem=device needs=gpu np=8 sizes=1G:16G args="--nccl-gdr=auto"
run gdrb_write_bw mem=device needs=rdma sizes=1M:8M

rule a100-h2d copy_bw bw_GBps >= 24 GB/s mem=pinned path=h2d sizes=256M: source="https://github.com/Azure/azurehpc-health-checks/blob/7f4897680c90aca0cc7627190e670e35b0cd4407/customTests/azure_cuda_bandwidth.nhc (check_cuda_bw: superbench gpu-copy 128 MiB, H2D and D2H each >= the floor) with 24 in https://github.com/Azure/azurehpc-health-checks/blob/2a20aecf0371335db7741a498a836b910d716d15/conf/nd96amsr_a100_v4.conf"
rule a100-d2h copy_bw bw_GBps >= 24 GB/s mem=pinned path=d2h sizes=256M: source="https://github.com/Azure/azurehpc-health-checks/blob/7f4897680c90aca0cc7627190e670e35b0cd4407/customTests/azure_cuda_bandwidth.nhc (check_cuda_bw, as a100-h2d) with 24 in https://github.com/Azure/azurehpc-health-checks/blob/2a20aecf0371335db7741a498a836b910d716d15/conf/nd96amsr_a100_v4.conf"
rule a100-d2d copy_bw bw_GBps >= 300 GB/s mem=device path=d2d sizes=256M: source="estimate: a copy within the GPU reads and writes each byte, so at most half the HBM rate; 300 GB/s is 40% of half the A100 SXM4 40GB's 1555 GB/s HBM2 rate (NVIDIA's figure); no published floor found"
rule a100-p2p copy_bw bw_GBps >= 220 GB/s mem=device path=p2p-direct pair=* sizes=512M source="estimate: an HGX A100 GPU has 300 GB/s of NVLink each way (12 NVLink 3 links, 600 GB/s both ways: NVIDIA's A100 page); Azure's published H100 floor (335 GB/s) is 74% of the H100's 450 GB/s each way, and 220 GB/s is the same share of the A100's; Azure's A100 file checks no peer copy"
rule a100-nccl-allreduce nccl_allreduce busbw_GBps >= 228 GB/s path=direct sizes=16G source="https://github.com/Azure/azurehpc-health-checks/blob/2a20aecf0371335db7741a498a836b910d716d15/conf/nd96amsr_a100_v4.conf (check_nccl_allreduce 228.0 at 16G: all_reduce_perf busbw on the node's 8 GPUs, judged by https://github.com/Azure/azurehpc-health-checks/blob/2a4d33ef68abeaef9bd5f8b777359487fbc07a14/customTests/azure_nccl_allreduce.nhc)"
rule a100-gdr-write write_bw bw_GBps >= 185 Gb/s mem=device path=direct sizes=1M source="https://github.com/Azure/azurehpc-health-checks/blob/2a20aecf0371335db7741a498a836b910d716d15/conf/nd96amsr_a100_v4.conf (check_ib_bw_gdr 185.0: ib_write_bw -s 1M with GPU memory, Gb/s, per HDR NIC pair, https://github.com/Azure/azurehpc-health-checks/blob/1e8ca47645d3653ed59651ce332442edc95c446f/customTests/azure_ib_write_bw_gdr.nhc)"
