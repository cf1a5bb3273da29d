# ib-ndr400: acceptance of an InfiniBand NDR node pair (4X NDR, 400 Gb/s per port, ConnectX-7
# class NIC in a PCIe Gen5 x16 slot), GPUDirect RDMA included.
#
# Where the numbers come from:
#  - Line rate: 4 lanes x 100 Gb/s = 400 Gb/s of data = 50 GB/s (1 GB/s = 1e9 B/s), each way.
#  - Wire overhead: with a 4096-byte IB MTU a packet carries about 30-50 bytes of headers
#    (LRH, BTH, RETH, ICRC, VCRC), about 1%. PCIe Gen5 x16 (32 GT/s x 16, 128b/130b) is about
#    63 GB/s before TLP overhead, so the slot does not limit a 50 GB/s port.
#  - Expected: RDMA write bandwidth of large messages at 90% of the line rate or better, i.e.
#    at least 45 GB/s from 1 MiB up, from host and, through GPUDirect, from GPU memory. Healthy
#    NDR links measure 96-98%; 90% leaves room for noise, and anything below points to a
#    down-trained PCIe link, a NIC and GPU across sockets, or a port that did not train at NDR.
#  - "90% of link" checks the same against the port rate recorded in the run (meta.json, read
#    from /sys/class/infiniband/*/ports/*/rate); the absolute 45 GB/s rule additionally catches
#    a port that trained at a lower rate (HDR 200 Gb/s passes the relative rule, not this one).
#  - Latency: 8-byte RDMA write latency on InfiniBand is 1-2 us through one switch. p50 <= 3 us
#    and p99 <= 5 us at 8 B leave room for a second switch hop; a direct path that detours
#    through host memory (two cudaMemcpy calls) lands far above.
#
# The format is documented in docs/sweeps.md ("Profiles") and scripts/lib/gdrbtool/profile.py.

description InfiniBand NDR 400 Gb/s: >= 45 GB/s (90% of 50 GB/s) from 1 MiB, 8 B write p50 <= 3 us
include gdr-effectiveness

rule ndr-bw-host        write_bw   bw_GBps    >= 45 GB/s        mem=host   sizes=1M:
rule ndr-bw-gdr         write_bw   bw_GBps    >= 45 GB/s        mem=device path=direct sizes=1M:
rule ndr-bw-port        write_bw   bw_GBps    >= 90% of link    mem=device path=direct sizes=1M:
rule ndr-lat-p50        write_lat  lat_p50_us <= 3 us           mem=device path=direct sizes=8
rule ndr-lat-p99        write_lat  lat_p99_us <= 5 us           mem=device path=direct sizes=8
