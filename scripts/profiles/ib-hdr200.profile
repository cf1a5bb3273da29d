# ib-hdr200: acceptance of an InfiniBand HDR node pair (4X HDR, 200 Gb/s per port, ConnectX-6
# class NIC in a PCIe Gen4 x16 slot), GPUDirect RDMA included.
#
# Where the numbers come from:
#  - Line rate: 4 lanes x 50 Gb/s = 200 Gb/s of data = 25 GB/s (1 GB/s = 1e9 B/s), each way.
#  - Wire overhead: about 1% of headers at a 4096-byte IB MTU. PCIe Gen4 x16 (16 GT/s x 16,
#    128b/130b) is about 31.5 GB/s before TLP overhead, 26-28 GB/s after: enough for one port,
#    but with little margin, so a Gen4 x8 or Gen3 link (down-training) fails here.
#  - Expected: at least 90% of the line rate for large messages, 22.5 GB/s from 1 MiB up, from
#    host and GPU memory; healthy HDR links measure about 24.5 GB/s (98%).
#  - "90% of link" checks the port rate recorded in the run; the absolute rule also catches a
#    port that trained at EDR (100 Gb/s).
#  - Latency: 8-byte RDMA write on HDR is 1-2 us through one switch: p50 <= 3 us, p99 <= 5 us.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description InfiniBand HDR 200 Gb/s: >= 22.5 GB/s (90% of 25 GB/s) from 1 MiB, 8 B write p50 <= 3 us
include gdr-effectiveness

rule hdr-bw-host        write_bw   bw_GBps    >= 22.5 GB/s      mem=host   sizes=1M:
rule hdr-bw-gdr         write_bw   bw_GBps    >= 22.5 GB/s      mem=device path=direct sizes=1M:
rule hdr-bw-port        write_bw   bw_GBps    >= 90% of link    mem=device path=direct sizes=1M:
rule hdr-lat-p50        write_lat  lat_p50_us <= 3 us           mem=device path=direct sizes=8
rule hdr-lat-p99        write_lat  lat_p99_us <= 5 us           mem=device path=direct sizes=8
