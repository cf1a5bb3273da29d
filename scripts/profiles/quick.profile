# quick: the default sweep (scripts/gdrb sweep with no arguments; scripts/quickstart).
#
# Every point-to-point benchmark that applies on this host, 8 B to 1 GiB, with the binaries'
# default time budget (0.3 s per size). Device memory runs where nvidia-smi lists a GPU, the verbs
# benchmarks where /sys/class/infiniband lists an RDMA device; a binary that is not built is
# skipped. About 75 s on a 2-core machine without GPU or NIC; a few minutes on a GPU node pair.
# It measures and does not judge: no rules. The acceptance profiles include it and add rules.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description Point-to-point latency and bandwidth, 8 B to 1 GiB, every path that applies here
sizes 8:1G

# What gdrb_doctor finds on this node (GPUDirect preconditions), kept as doctor.json.
doctor gdrb_doctor

# MPI point-to-point: host memory, and device memory (direct and staged) where a GPU exists.
run gdrb_mpi_latency mem=host,device
run gdrb_mpi_bw      mem=host,device
run gdrb_mpi_bibw    mem=host,device

# Verbs: RDMA write, read and send with GPUDirect and staged side by side (RDMA device needed).
run gdrb_write_lat   mem=host,device needs=rdma
run gdrb_write_bw    mem=host,device needs=rdma
run gdrb_read_bw     mem=host,device needs=rdma
run gdrb_send_lat    mem=host,device needs=rdma

# One collective, to see what a training job's allreduce gets.
run gdrb_mpi_allreduce mem=host,device

# What the staged path pays: host<->GPU copies, one local process (GPU needed, takes no --mem).
run gdrb_copy_bw launch=local needs=gpu mem=none paths=host:h2d,pinned:h2d,host:d2h,pinned:d2h,device:d2d
