# gdr-effectiveness: does GPUDirect RDMA work, and does it pay? Any fabric, any link rate.
#
# Runs the quick sweep, then checks the field's common rule of thumb on the verbs benchmarks with
# device memory (a GPU and an RDMA NIC on each node are needed; elsewhere these rules fail with
# "no data", on purpose: an acceptance check that cannot run has not passed):
#  - the direct path registered GPU memory with the NIC (reg dmabuf or peermem), i.e. the bytes
#    did not quietly fall back to a bounce buffer;
#  - GDR cuts small-message latency by at least 50% against staging: the staged path adds a
#    device->host copy before the send and a host->device copy after the receive (one fragment
#    at these sizes, so pipelining cannot hide them), each a few microseconds of copy latency on
#    top of a 1-3 us network latency, so a working direct path is typically 3-5x faster at
#    8 B..4 KiB; 50% is a floor that a healthy node clears easily;
#  - GDR is at least as fast as staging at large sizes. The staged baseline is pipelined (as UCX
#    and NCCL stage without GPUDirect): its bandwidth is about min(copy rate, wire rate), so where
#    the GPU's copy engines outrun the NIC, staging comes close to the wire and GDR's gain is
#    small; its cost is host memory bandwidth and a second PCIe crossing, which show under load
#    and bidirectional traffic. Direct below staged means GPUDirect is broken or badly placed
#    (GPU and NIC across the CPU's root complex or sockets: check the doctor's topology). NCCL's
#    rule of thumb (busbw +30% with GDR on) is about all-to-all traffic under load; raise the
#    threshold to what your reference node measures. Against serial staging (copy, wire, copy
#    one after the other, --staging serial) a +30% rule would be too easy to pass: serial
#    understates staging by up to 3x.
#
# NCCL (where configure built its binaries: docs/nccl.md) is measured with GPUDirect allowed and
# off, so that the figures and the report show its two curves and which transport its
# connections used (the report's "NCCL: the path NCCL took"), but it is judged by nccl-gdr, not
# here: its rules would fail with "no data" on every node pair where gdrbench was built without
# NCCL, a verbs-only acceptance among them, and ib-ndr400, ib-hdr200, roce-200g and roce-400g
# include this profile. For NCCL's verdict: gdrb sweep --profile nccl-gdr, or a profile file
# with "include gdr-effectiveness" and "include nccl-gdr".
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description GPUDirect RDMA effectiveness: GPU registration used, latency halved, bandwidth not below pipelined staging
include quick

rule gdr-registered  write_bw   reg        in  dmabuf,peermem   mem=device path=direct
rule gdr-latency     write_lat  lat_p50_us <=  50% of staged    mem=device sizes=8:4K
rule gdr-bandwidth   write_bw   bw_GBps    >=  100% of staged   mem=device sizes=1M:

# With a CUDA-aware MPI (MPIX_Query_cuda_support() = 1), the same checks through MPI:
# rule mpi-gdr-latency   mpi_latency lat_p50_us <= 50% of staged  mem=device sizes=8:4K
# rule mpi-gdr-bandwidth mpi_bw      bw_GBps    >= 100% of staged mem=device sizes=1M:

# NCCL's allreduce, GPUDirect allowed (direct rows) and off (staged rows): measured, not judged.
run gdrb_nccl_allreduce mem=device needs=gpu args="--nccl-gdr=auto --nccl-net-only"
run gdrb_nccl_allreduce mem=device needs=gpu args="--nccl-gdr=off --nccl-net-only"
