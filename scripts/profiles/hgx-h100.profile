# hgx-h100: acceptance of one HGX H100 node (8 GPUs, NVSwitch, one NDR 400 Gb/s NIC per GPU), floor by floor.
#
# A floor is a figure someone published for a healthy node of this SKU, or gdrbench's own
# estimate, said as such: every rule carries source= (docs/skus.md has the same table). Before
# measuring, `gdrb sweep --sku h100` checks the node's parts against the SKU (gdrb inventory:
# GPU count and model, NIC count and rate, PCIe widths, NVLinks up) and stops at the first part that differs.
# NVLinks up on each GPU: 18, source: https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper (H100 SXM5: 18 fourth-generation NVLinks, 900 GB/s).
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

description HGX H100 node: copies >= 48 GB/s, GPU-to-GPU >= 335 GB/s per pair, NCCL allreduce busbw >= 460 GB/s at 16 GiB, GPUDirect >= 380 Gb/s per NDR NIC (Azure ND H100 v5)
sources required
doctor gdrb_doctor

run gdrb_copy_bw launch=local needs=gpu mem=none sizes=256M:1G paths=pinned:h2d,pinned:d2h,device:d2d
run gdrb_copy_bw launch=local needs=gpu mem=none sizes=512M paths=device:p2p-direct,device:p2p-staged args="--p2p=uni"
run gdrb_nccl_allreduce mem=device needs=gpu np=8 sizes=1G:16G args="--nccl-gdr=auto"
run gdrb_write_bw mem=device needs=rdma sizes=1M:8M

rule h100-h2d copy_bw bw_GBps >= 48 GB/s mem=pinned path=h2d sizes=256M: source="https://github.com/Azure/azurehpc-health-checks/blob/7e6ac7796e4398d2a6b0b29ca39f1060f0a993cb/conf/nd96isr_h100_v5.conf (check_gpu_bw 48 335: nvbandwidth host_to_device_memcpy_ce per GPU >= 48 GB/s, https://github.com/Azure/azurehpc-health-checks/blob/1f17ee7537f30864a6d0303516072ac244bc8481/customTests/azure_gpu_bandwidth.nhc)"
rule h100-d2h copy_bw bw_GBps >= 48 GB/s mem=pinned path=d2h sizes=256M: source="https://github.com/Azure/azurehpc-health-checks/blob/7e6ac7796e4398d2a6b0b29ca39f1060f0a993cb/conf/nd96isr_h100_v5.conf (check_gpu_bw 48: nvbandwidth device_to_host_memcpy_ce per GPU, https://github.com/Azure/azurehpc-health-checks/blob/1f17ee7537f30864a6d0303516072ac244bc8481/customTests/azure_gpu_bandwidth.nhc)"
rule h100-d2d copy_bw bw_GBps >= 600 GB/s mem=device path=d2d sizes=256M: source="estimate: a copy within the GPU reads and writes each byte, so at most half the HBM rate; 600 GB/s is about 40% of half the H100 SXM5's 3350 GB/s HBM3 rate (NVIDIA's figure); no published floor found"
rule h100-p2p copy_bw bw_GBps >= 335 GB/s mem=device path=p2p-direct pair=* sizes=512M source="https://github.com/Azure/azurehpc-health-checks/blob/7e6ac7796e4398d2a6b0b29ca39f1060f0a993cb/conf/nd96isr_h100_v5.conf (check_gpu_bw 48 335: nvbandwidth device_to_device_memcpy_read_ce per GPU pair >= 335 GB/s, https://github.com/Azure/azurehpc-health-checks/blob/1f17ee7537f30864a6d0303516072ac244bc8481/customTests/azure_gpu_bandwidth.nhc; nvbandwidth's copy reads, run on the destination GPU, gdrbench's writes, run on the source GPU, over the same NVLinks)"
rule h100-nccl-allreduce nccl_allreduce busbw_GBps >= 460 GB/s path=direct sizes=16G source="https://github.com/Azure/azurehpc-health-checks/blob/7e6ac7796e4398d2a6b0b29ca39f1060f0a993cb/conf/nd96isr_h100_v5.conf (check_nccl_allreduce 460.0 at 16G, https://github.com/Azure/azurehpc-health-checks/blob/2a4d33ef68abeaef9bd5f8b777359487fbc07a14/customTests/azure_nccl_allreduce.nhc); the NCCL maintainers expect about 480 GB/s peak with NVLS on 8 H100s, at sizes above 256 MiB: https://github.com/NVIDIA/nccl-tests/issues/212"
rule h100-gdr-write write_bw bw_GBps >= 380 Gb/s mem=device path=direct sizes=1M source="https://github.com/Azure/azurehpc-health-checks/blob/7e6ac7796e4398d2a6b0b29ca39f1060f0a993cb/conf/nd96isr_h100_v5.conf (check_ib_bw_gdr 380: ib_write_bw -s 1M with GPU memory, Gb/s, per NDR NIC pair, https://github.com/Azure/azurehpc-health-checks/blob/1e8ca47645d3653ed59651ce332442edc95c446f/customTests/azure_ib_write_bw_gdr.nhc)"
