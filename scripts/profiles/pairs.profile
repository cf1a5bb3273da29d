# pairs: every pair of nodes (or of GPUs on one rail) against the rest of the fabric.
#
# Runs gdrb_mpi_pairs (all pairs in shifted rounds, as LLNL's mpiGraph) with host and device
# memory (device: the direct path, GPUDirect, and the staged one, per pair), then judges each
# matrix relative to the fabric, as NVIDIA's ClusterKit does, instead of against a link rate:
#  - bandwidth at 8 MiB below 80% of the median pair: a healthy fabric's pairs sit within a few
#    percent of each other; a pair at 80% or less has a bad cable, port, NIC, PCIe link or a
#    GPU-NIC path through the CPU, or shares a congested switch link;
#  - latency at 8 B above 2.1x the best pair (ClusterKit's rule of thumb).
# The verdict names the suspects: a node most of whose sends or receives are low, a link (one
# source -> destination), a rail (GPU i on every node), and says when the evidence cannot tell
# a node from its links (docs/pairs.md). The median is robust while fewer than half the pairs are
# slow; against "best" use e.g. below=93%best (ClusterKit's bandwidth rule), stricter on noise.
#
# Run it across the nodes, one rank per node (or per GPU with args="--granularity rail"):
#   scripts/gdrb sweep --profile pairs --hosts n01,n02,...,n16 --np 16
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description All pairs: each pair against the fabric's median and best; names the slow node, link or rail
# The doctor on every node of the job: the report shows its checks beside the suspects.
doctor gdrb_doctor_mpi
run gdrb_mpi_pairs mem=host,device sizes=8,8M args="--metric bw,lat"

pairs bw  below=80%median size=8M
pairs lat above=2.1xbest  size=8
