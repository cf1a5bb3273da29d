# hgx-b200: acceptance of one HGX B200 node (8 GPUs, NVSwitch, one NDR 400 Gb/s NIC per GPU), floor by floor.
#
# A floor is a figure someone published for a healthy node of this SKU, or gdrbench's own
# estimate, said as such: every rule carries source= (docs/skus.md has the same table). Before
# measuring, `gdrb sweep --sku b200` checks the node's parts against the SKU (gdrb inventory:
# GPU count and model, NIC count and rate, PCIe widths, NVLinks up) and stops at the first part that differs.
# NVLinks up on each GPU: 18, source: https://www.nvidia.com/en-us/data-center/nvlink/ (Blackwell: fifth-generation NVLink, 18 links per GPU, 1.8 TB/s).
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

description HGX B200 node: gdrbench's estimates, none published: copies >= 48 GB/s, GPU-to-GPU >= 670 GB/s per pair, NCCL allreduce busbw >= 700 GB/s at 16 GiB, GPUDirect >= 360 Gb/s per NDR NIC
sources required
doctor gdrb_doctor

run gdrb_copy_bw launch=local needs=gpu mem=none sizes=256M:1G paths=pinned:h2d,pinned:d2h,device:d2d
run gdrb_copy_bw launch=local needs=gpu mem=none sizes=512M paths=device:p2p-direct,device:p2p-staged args="--p2p=uni"
run gdrb_nccl_allreduce mem=device needs=gpu np=8 sizes=1G:16G args="--nccl-gdr=auto"
run gdrb_write_bw mem=device needs=rdma sizes=1M:8M

rule b200-h2d copy_bw bw_GBps >= 48 GB/s mem=pinned path=h2d sizes=256M: source="estimate: the B200 reaches the host over PCIe Gen5 x16 as the H100 does, whose published floor is 48 GB/s (Azure, docs/skus.md); no B200 floor found"
rule b200-d2h copy_bw bw_GBps >= 48 GB/s mem=pinned path=d2h sizes=256M: source="estimate: as b200-h2d, the H100's published 48 GB/s over the same PCIe Gen5 x16 host link"
rule b200-d2d copy_bw bw_GBps >= 1600 GB/s mem=device path=d2d sizes=256M: source="estimate: a copy within the GPU reads and writes each byte, so at most half the HBM rate; 1600 GB/s is 40% of half the B200's 8000 GB/s HBM3e rate (NVIDIA's DGX B200 figure of 64 TB/s for 8 GPUs); no published floor found"
rule b200-p2p copy_bw bw_GBps >= 670 GB/s mem=device path=p2p-direct pair=* sizes=512M source="estimate: NVLink 5 gives a B200 900 GB/s each way (1.8 TB/s both ways: NVIDIA's DGX B200 figures); 670 GB/s is the share of it (74%) that Azure's published H100 floor (335 GB/s) is of the H100's 450 GB/s each way"
rule b200-nccl-allreduce nccl_allreduce busbw_GBps >= 700 GB/s path=direct sizes=16G source="estimate: NVLink 5 gives each GPU 1.8 TB/s, twice NVLink 4's 900 GB/s (NVIDIA's DGX B200 guide: 14.4 TB/s for 8 GPUs); the H100's published 460 GB/s floor scaled by 1.5, below 2x because NVLS busbw does not follow the line rate; unverified on a B200"
rule b200-gdr-write write_bw bw_GBps >= 360 Gb/s mem=device path=direct sizes=1M source="estimate: the DGX B200 carries the same ConnectX-7 NDR 400 Gb/s NICs in PCIe Gen5 as the H100 and H200 nodes; the lower of their published floors (Azure: 380 H100, 360 H200, docs/skus.md)"
