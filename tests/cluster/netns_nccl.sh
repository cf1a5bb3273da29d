#!/bin/bash
# A multi-node NCCL row whose busbw exceeds the NIC's line rate is flagged: the simulated NCCL
# across two "nodes" of the network-namespace test bed (tests/cluster/netns/bed.sh; each rank
# on a host of its own, its connections through the simulated IB network), the NIC's speed
# given by simnccl's NCCL 2.27-form device line (SIMNCCL_NIC_MBPS) or, without it, by a sysfs
# fixture (GDRB_INJECT_SYSFS_ROOT). A small rate: the rows flagged, with the rate's source and
# the algorithm; a large one: not; no rate known: not flagged, nothing claimed. One node: never.
# Skips (77) where the machine has no root, network namespaces, bridges or Open MPI.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=netns/bed.sh
. "$(dirname "$0")/netns/bed.sh"
need_mpi
use_simnccl
bed_up 2
unset SIMNCCL_NIC_MBPS SIMNCCL_NIC SIMNCCL_ALGO NCCL_ALGO NCCL_PROTO NCCL_CONF_FILE GDRB_TEST_HOOKS GDRB_INJECT_SYSFS_ROOT
export SIMNCCL_RANKS_PER_NODE=1

csv=$WORK/nccl.csv
# run HOSTS ARGS...: gdrb_nccl_allreduce on 2 ranks of HOSTS, 1 MiB, into $csv (a fresh one)
run() {
	local hosts=$1
	shift
	: >"$csv"
	on_node gdrbn1 timeout 120 "$MPIRUN" -np 2 --host "$hosts" "$bin/gdrb_nccl_allreduce" -m 1M -t 0.01 -n 5 -T 30 \
		--csv "$csv" "$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_nccl_allreduce on $hosts $*"; }
	csv_has "$csv" status=ok transport=NET/IB || { cat "$csv"; fail "$hosts: the row is not an ok NET/IB one"; }
}
flagged() { grep -q 'busbw [0-9.]* GB/s above the line rate' "$csv" "$WORK/out"; }

# 100 Mb/s (0.0125 GB/s): any busbw here is above it.
SIMNCCL_NIC_MBPS=100 SIMNCCL_ALGO=TREE run "$(bed_hosts 2)" --nccl-tuning-log
csv_has "$csv" hosts=2 algorithm=Tree || { cat "$csv"; fail "not 2 hosts, algorithm Tree"; }
grep -q 'busbw [0-9.]* GB/s above the line rate 0.013 GB/s (NIC mlx5_0:1 of NCCL.s connections at 0.1 Gb/s on gdrbn1, from NCCL.s log): tree, NVLS, CollNet or SHARP at work (algorithm Tree); for network acceptance force NCCL_ALGO=Ring' "$csv" ||
	{ cat "$csv"; fail "busbw above a 100 Mb/s NIC not flagged with the rate's source, the algorithm and the advice"; }
grep -q '^# 1MiB, out-of-place: busbw [0-9.]* GB/s above the line rate 0.013 GB/s (NIC mlx5_0:1' "$WORK/out" ||
	{ cat "$WORK/out"; fail "the table does not say it under the size's line"; }
pass "2 nodes, NCCL's device line says 100 Mb/s: the row flagged, the NIC and NCCL's log named, algorithm Tree, force Ring"

# NCCL says Ring: the rate cannot be the network's, and the note says that instead.
SIMNCCL_NIC_MBPS=100 run "$(bed_hosts 2)" --nccl-tuning-log
grep -q "NCCL says Ring, whose bytes cross the network once each: this rate is not the network's" "$csv" ||
	{ cat "$csv"; fail "Ring above the line rate: the note does not doubt the rate"; }
pass "Ring above the line rate: the rate is doubted, no algorithm blamed"

# 100 Tb/s: not flagged.
SIMNCCL_NIC_MBPS=100000000 run "$(bed_hosts 2)"
flagged && { cat "$csv"; fail "busbw below a 100 Tb/s NIC flagged"; }
pass "2 nodes, a 100 Tb/s NIC: not flagged"

# No speed in NCCL's log, none in sysfs: not flagged, nothing claimed.
run "$(bed_hosts 2)"
flagged && { cat "$csv"; fail "flagged with no line rate known"; }
grep -q 'line rate' "$csv" && { cat "$csv"; fail "a line rate claimed where none is known"; }
pass "no rate in NCCL's log or sysfs: not flagged, nothing claimed"

# No speed in NCCL's log (NCCL before 2.27): the port's rate from sysfs, said so.
mkdir -p "$WORK/sys/class/infiniband/mlx5_0/ports/1"
echo '0.1 Gb/sec (1X SDR)' >"$WORK/sys/class/infiniband/mlx5_0/ports/1/rate"
GDRB_TEST_HOOKS=1 GDRB_INJECT_SYSFS_ROOT=$WORK/sys run "$(bed_hosts 2)"
grep -q 'above the line rate 0.013 GB/s (NIC mlx5_0:1 of NCCL.s connections at 0.1 Gb/s on gdrbn1, from sysfs)' "$csv" ||
	{ cat "$csv"; fail "the port's rate from sysfs not used, or its source not said"; }
pass "no speed in NCCL's log: the port's rate from sysfs, said so"

# One node: the network is not what busbw crossed alone, never flagged.
SIMNCCL_NIC_MBPS=100 run gdrbn1:2
csv_has "$csv" hosts=1 || { cat "$csv"; fail "not one host"; }
flagged && { cat "$csv"; fail "a one-node row flagged"; }
pass "one node: not flagged"
