description "every statement" of the profile language
include quick
sizes 8,4K,1M
time 0.2
iters 100
validate on
run gdrb_write_bw mem=host,pinned,device needs=rdma,gpu launch=mpi sizes=8:64K time=0.1 iters=50 validate=off np=2 paths=direct,staged bench=write_bw layer=verbs args="-W 16"
run gdrb_copy_bw launch=local mem=none paths=host:h2d,device:d2d
run gdrb_mpi_pairs mem=device
doctor gdrb_doctor args="--sys /sys"
rule bw write_bw bw_GBps >= 45 GB/s mem=device path=direct sizes=1M:
rule lat write_lat lat_p99_us <= 5 us sizes=:4K
rule port write_bw bw_GBps >= 90% of link sizes=8,64K
rule gdr write_lat lat_p50_us <= 50% of staged mem=device sizes=8:4K
rule reg write_bw reg in dmabuf,peermem reg=dmabuf pair=all layer=verbs ranks=2
rule st write_bw status != failed
pairs bw below=80%median size=8M node=60% name=slow-pairs
pairs lat above=2.1xbest size=8 mem=device path=direct bench=mpi_pairs
