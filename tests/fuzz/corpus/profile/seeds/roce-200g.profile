# roce-200g: acceptance of a RoCE v2 node pair on 200 Gb Ethernet (ConnectX-6/7 class NIC,
# PCIe Gen4 x16 or better), GPUDirect RDMA included.
#
# Where the numbers come from:
#  - Line rate: 200 Gb/s = 25 GB/s (1 GB/s = 1e9 B/s), each way.
#  - Wire overhead is larger than on InfiniBand: each packet carries Ethernet (14 B, 18 with a
#    VLAN), IPv4 (20), UDP (8), BTH (12), RETH on the first packet (16), ICRC (4) and FCS (4),
#    plus 20 B of preamble and inter-frame gap: about 100 B. At RDMA MTU 4096 (netdev MTU 9000)
#    that is 2.4%; at RDMA MTU 1024 (netdev MTU 1500) it is 9%.
#  - Expected: at least 85% of the line rate for large messages, 21.25 GB/s from 1 MiB up: the
#    header cost at a jumbo MTU plus what congestion control (ECN/DCQCN) and PFC pauses take on
#    a lightly loaded fabric. A fabric left at MTU 1500 typically lands just below this, which is
#    worth failing: the fix is an MTU change.
#  - "85% of link" checks the port rate recorded in the run (meta.json); the absolute rule also
#    catches a port that came up at 100 Gb/s.
#  - Latency: 8-byte RDMA write over RoCE is 2-3 us through one switch (Ethernet switches add
#    more per hop than InfiniBand): p50 <= 4 us, p99 <= 8 us at 8 B.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description RoCE v2 200 Gb/s: >= 21.25 GB/s (85% of 25 GB/s) from 1 MiB, 8 B write p50 <= 4 us
include gdr-effectiveness

rule roce200-bw-host    write_bw   bw_GBps    >= 21.25 GB/s     mem=host   sizes=1M:
rule roce200-bw-gdr     write_bw   bw_GBps    >= 21.25 GB/s     mem=device path=direct sizes=1M:
rule roce200-bw-port    write_bw   bw_GBps    >= 85% of link    mem=device path=direct sizes=1M:
rule roce200-lat-p50    write_lat  lat_p50_us <= 4 us           mem=device path=direct sizes=8
rule roce200-lat-p99    write_lat  lat_p99_us <= 8 us           mem=device path=direct sizes=8
