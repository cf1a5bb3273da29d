# roce-400g: acceptance of a RoCE v2 node pair on 400 Gb Ethernet (ConnectX-7 class NIC in a
# PCIe Gen5 x16 slot), GPUDirect RDMA included.
#
# Where the numbers come from:
#  - Line rate: 400 Gb/s = 50 GB/s (1 GB/s = 1e9 B/s), each way.
#  - Wire overhead: about 100 B of Ethernet, IP, UDP and RoCE headers, FCS, preamble and gap per
#    packet: 2.4% at RDMA MTU 4096 (netdev MTU 9000), 9% at RDMA MTU 1024 (netdev MTU 1500).
#  - PCIe: Gen5 x16 is about 63 GB/s before TLP overhead, enough for 50 GB/s. In a Gen4 x16 slot
#    (about 27 GB/s usable) a 400G NIC cannot pass: that is what this profile should catch.
#  - Expected: at least 85% of the line rate for large messages, 42.5 GB/s from 1 MiB up
#    (headers at a jumbo MTU plus ECN/DCQCN and PFC on a lightly loaded fabric).
#  - "85% of link" checks the port rate recorded in the run (meta.json); the absolute rule also
#    catches a port that came up at 200 Gb/s.
#  - Latency: 8-byte RDMA write over RoCE is 2-3 us through one switch: p50 <= 4 us,
#    p99 <= 8 us at 8 B.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description RoCE v2 400 Gb/s: >= 42.5 GB/s (85% of 50 GB/s) from 1 MiB, 8 B write p50 <= 4 us
include gdr-effectiveness

rule roce400-bw-host    write_bw   bw_GBps    >= 42.5 GB/s      mem=host   sizes=1M:
rule roce400-bw-gdr     write_bw   bw_GBps    >= 42.5 GB/s      mem=device path=direct sizes=1M:
rule roce400-bw-port    write_bw   bw_GBps    >= 85% of link    mem=device path=direct sizes=1M:
rule roce400-lat-p50    write_lat  lat_p50_us <= 4 us           mem=device path=direct sizes=8
rule roce400-lat-p99    write_lat  lat_p99_us <= 8 us           mem=device path=direct sizes=8
