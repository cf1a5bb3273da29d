# full: every gdrbench benchmark that applies on this host, every memory kind, 8 B to 1 GiB,
# 1 s per size. Tens of minutes on a GPU node pair; use it to characterise a new system,
# and quick (the default) for a first look. No rules: acceptance profiles add them.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description Every benchmark and memory kind, 8 B to 1 GiB, 1 s per size
sizes 8:1G
time 1

doctor gdrb_doctor

# MPI point-to-point
run gdrb_mpi_latency mem=host,pinned,device
run gdrb_mpi_bw      mem=host,pinned,device
run gdrb_mpi_bibw    mem=host,pinned,device

# Verbs point-to-point (RDMA device needed)
run gdrb_write_lat   mem=host,pinned,device needs=rdma
run gdrb_write_bw    mem=host,pinned,device needs=rdma
run gdrb_read_lat    mem=host,pinned,device needs=rdma
run gdrb_read_bw     mem=host,pinned,device needs=rdma
run gdrb_send_lat    mem=host,pinned,device needs=rdma
run gdrb_send_bw     mem=host,pinned,device needs=rdma

# MPI collectives (busbw as nccl-tests defines it)
run gdrb_mpi_allreduce      mem=host,device
run gdrb_mpi_allgather      mem=host,device
run gdrb_mpi_reduce_scatter mem=host,device
run gdrb_mpi_alltoall       mem=host,device
run gdrb_mpi_bcast          mem=host,device
run gdrb_mpi_reduce         mem=host,device
run gdrb_mpi_gather         mem=host,device
run gdrb_mpi_scatter        mem=host,device
# A barrier moves no data: one size is enough.
run gdrb_mpi_barrier        mem=host sizes=8

# Copies (GPU needed)
run gdrb_copy_bw launch=local needs=gpu mem=none paths=host:h2d,pinned:h2d,host:d2h,pinned:d2h,device:d2d
