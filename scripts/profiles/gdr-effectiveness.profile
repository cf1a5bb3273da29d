# gdr-effectiveness: does GPUDirect RDMA work, and does it pay? Any fabric, any link rate.
#
# Runs the quick sweep, then checks the field's common rule of thumb on the verbs benchmarks with
# device memory (a GPU and an RDMA NIC on each node are needed; elsewhere these rules fail with
# "no data", on purpose: an acceptance check that cannot run has not passed):
#  - the direct path registered GPU memory with the NIC (reg dmabuf or peermem), i.e. the bytes
#    did not quietly fall back to a bounce buffer;
#  - GDR cuts small-message latency by at least 50% against staging: the staged path adds a
#    device->host copy before the send and a host->device copy after the receive, each a few
#    microseconds of cudaMemcpy latency on top of a 1-3 us network latency, so a working direct
#    path is typically 3-5x faster at 8 B..4 KiB; 50% is a floor that a healthy node clears easily;
#  - GDR raises large-message bandwidth by at least 30% over staging: unpipelined staging moves
#    every byte three times (copy, wire, copy), which costs more than half the bandwidth when the
#    copies and the wire run at similar rates; a GPU and NIC under the same PCIe switch reach
#    near line rate directly. 30% is conservative, for nodes where the GPU-NIC path crosses the
#    CPU's root complex (check the doctor's topology when it fails).
#
# The format is documented in scripts/lib/profile.awk and README.md ("Profiles").

description GPUDirect RDMA effectiveness: GPU registration used, latency halved, bandwidth +30%
include quick

rule gdr-registered  write_bw   reg        in  dmabuf,peermem   mem=device path=direct
rule gdr-latency     write_lat  lat_p50_us <=  50% of staged    mem=device sizes=8:4K
rule gdr-bandwidth   write_bw   bw_GBps    >=  130% of staged   mem=device sizes=1M:

# With a CUDA-aware MPI (MPIX_Query_cuda_support() = 1), the same checks through MPI:
# rule mpi-gdr-latency   mpi_latency lat_p50_us <= 50% of staged  mem=device sizes=8:4K
# rule mpi-gdr-bandwidth mpi_bw      bw_GBps    >= 130% of staged mem=device sizes=1M:
