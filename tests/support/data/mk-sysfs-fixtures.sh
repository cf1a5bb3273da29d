#!/bin/bash
# Generate the sysfs and procfs fixture trees that test_topo and gdrb_doctor's
# tests read:
#
#   mk-sysfs-fixtures.sh OUTDIR
#
# gives OUTDIR/<fixture>/sys and OUTDIR/<fixture>/proc. The trees are laid out
# like the kernel's: /sys/bus/pci/devices/<bdf> are symlinks into
# /sys/devices/pci<domain>:<bus>/..., /sys/class/infiniband/<dev> links into the
# NIC's PCI function, bridges carry a binary "config" (PCIe and ACS
# capabilities). Every fault fixture is a healthy node plus the one fault it is
# named after, so a checker that flags it reacts to that fault alone.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)
S= # sysfs root of the fixture being built
P= # procfs root
gpu_n=0 nic_n=0 group=0
IOMMU_TYPE=identity  # IOMMU group type; "" for no IOMMU
LINK_LAYER=InfiniBand
NETDEV_MTU=9000
ROCE_V2=1

# w FILE TEXT: one line of text, directories made as needed.
w() {
	[[ -d ${1%/*} ]] || mkdir -p "${1%/*}"
	printf '%s\n' "$2" >"$1"
}

# up N: "../" N times.
up() {
	local i r=
	for ((i = 0; i < $1; i++)); do r+=../; done
	printf '%s' "$r"
}

# depth PATH: directory levels from $S/devices/PATH up to $S.
depth() {
	local slashes=${1//[^\/]/}
	echo $((${#slashes} + 2))
}

hex2() { printf '%02x' "$1"; }

# poke FILE OFFSET BYTE...: write bytes (two hex digits each) at OFFSET.
poke() {
	local f=$1 off=$2 b esc=
	shift 2
	for b in "$@"; do esc+="\\x$b"; done
	printf '%b' "$esc" | dd of="$f" bs=1 seek=$((off)) conv=notrunc status=none
}

# cfg_template TYPE ACS: path of a 4 KiB config space of a PCIe bridge: power
# management capability at 0x40, PCI Express (port TYPE) at 0x50, AER at 0x100,
# ACS at 0x148 with capability 0x005f and control ACS. Made once per pair.
cfg_template() {
	local type=$1 acs=$2 f
	f=$out/.config-$type-$acs
	if [[ ! -f $f ]]; then
		head -c 4096 /dev/zero >"$f"
		poke "$f" 0x00 b5 10 34 12                       # vendor 0x10b5, device 0x1234
		poke "$f" 0x06 10 00                             # status: capability list
		poke "$f" 0x0e 01                                # header type 1: bridge
		poke "$f" 0x34 40                                # first capability
		poke "$f" 0x40 01 50 03 00                       # power management, next 0x50
		poke "$f" 0x50 10 00 "$(hex2 $((type << 4 | 2)))" 00  # PCI Express v2, port type
		poke "$f" 0x100 01 00 81 14                      # AER v1, next 0x148
		poke "$f" 0x148 0d 00 01 00                      # ACS v1, last
		poke "$f" 0x14c 5f 00 "$(hex2 $((acs & 0xff)))" "$(hex2 $((acs >> 8)))"
	fi
	echo "$f"
}

# fn PATH CLASS VENDOR DEVICE NUMA: a PCI function at $S/devices/PATH, at
# 32 GT/s x16, with its bus/pci/devices link and an IOMMU group.
fn() {
	local path=$1 d=$S/devices/$1 bdf=${1##*/}
	mkdir -p "$d"
	w "$d/class" "$2"
	w "$d/vendor" "$3"
	w "$d/device" "$4"
	w "$d/numa_node" "$5"
	w "$d/current_link_speed" "32.0 GT/s PCIe"
	w "$d/max_link_speed" "32.0 GT/s PCIe"
	w "$d/current_link_width" 16
	w "$d/max_link_width" 16
	ln -s "../../../devices/$path" "$S/bus/pci/devices/$bdf"
	if [[ -n $IOMMU_TYPE ]]; then
		group=$((group + 1))
		w "$S/kernel/iommu_groups/$group/type" "$IOMMU_TYPE"
		mkdir -p "$S/kernel/iommu_groups/$group/devices"
		ln -s "$(up 4)devices/$path" "$S/kernel/iommu_groups/$group/devices/$bdf"
		ln -s "$(up "$(depth "$path")")kernel/iommu_groups/$group" "$d/iommu_group"
	fi
}

# bridge PATH TYPE NUMA: a root port (4) or switch port (5 up, 6 down), ACS off.
bridge() {
	if [[ $2 == 4 ]]; then
		fn "$1" 0x060400 0x8086 0x347a "$3"
	else
		fn "$1" 0x060400 0x1000 0xc030 "$3"
	fi
	cp "$(cfg_template "$2" 0)" "$S/devices/$1/config"
}

# res START SIZE FLAGS: one line of a PCI function's "resource" (SIZE 0: an
# unused line, all zeros).
res() {
	if (($2)); then
		printf '0x%016x 0x%016x 0x%016x\n' "$1" $(($1 + $2 - 1)) "$3"
	else
		printf '0x%016x 0x%016x 0x%016x\n' 0 0 0
	fi
}

# Resource flags (linux/ioport.h): memory, prefetchable, 64-bit, as the kernel
# prints them for a 32-bit BAR, a 64-bit one (with the BAR's own type bits),
# and the expansion ROM.
MEM32=0x40200 MEM64=0x140204 PREF64=0x14220c ROM=0x46200

# gpu PATH NUMA: a GPU bound to nvidia, of model $GPU_MODEL, with that model's
# BAR layout in "resource" (6 BARs, the ROM, 6 SR-IOV BARs), as lspci -v shows
# it: a100 (A100 40GB): BAR0 16 MiB 32-bit (line 0), BAR1 64 GiB 64-bit
# prefetchable (line 1, line 2 its upper half), BAR3 32 MiB (line 3); h100:
# BAR0 16 MiB 64-bit (lines 0-1), BAR1 128 GiB (line 2), BAR3 32 MiB (line
# 4); h200 and b200: as H100 with a 256 GiB BAR1.
GPU_MODEL=h100
gpu() {
	local d=$S/devices/$1 i bar0 bar1 bar3 start
	bar0=$((0xe0000000 + (gpu_n << 25)))
	start=$(((gpu_n + 1) << 40))
	case $GPU_MODEL in
	a100)
		fn "$1" 0x030200 0x10de 0x20b0 "$2"
		bar1=$((64 << 30))
		bar3=$((start + bar1))
		{
			res "$bar0" $((16 << 20)) $MEM32
			res "$start" "$bar1" $PREF64
			res 0 0
			res "$bar3" $((32 << 20)) $PREF64
			res 0 0
			res 0 0
		} >"$d/resource"
		;;
	h100 | h200 | b200)
		if [[ $GPU_MODEL == h100 ]]; then
			fn "$1" 0x030200 0x10de 0x2330 "$2"
			bar1=$((128 << 30))
		elif [[ $GPU_MODEL == h200 ]]; then
			fn "$1" 0x030200 0x10de 0x2335 "$2"
			bar1=$((256 << 30))
		else
			fn "$1" 0x030200 0x10de 0x2901 "$2"
			bar1=$((256 << 30))
		fi
		bar3=$((start + bar1))
		{
			res "$bar0" $((16 << 20)) $MEM64
			res 0 0
			res "$start" "$bar1" $PREF64
			res 0 0
			res "$bar3" $((32 << 20)) $PREF64
			res 0 0
		} >"$d/resource"
		;;
	*)
		echo "gpu: unknown GPU_MODEL '$GPU_MODEL'" >&2
		exit 1
		;;
	esac
	{
		res $((bar0 + (16 << 20))) $((512 << 10)) $ROM
		for ((i = 7; i < 13; i++)); do res 0 0; done
	} >>"$d/resource"
	ln -s "$(up "$(depth "$1")")bus/pci/drivers/nvidia" "$d/driver"
	gpu_n=$((gpu_n + 1))
}

# gid PORTDIR INDEX GID TYPE NETDEV
gid() {
	w "$1/gids/$2" "$3"
	w "$1/gid_attrs/types/$2" "$4"
	[[ -z $5 ]] || w "$1/gid_attrs/ndevs/$2" "$5"
}

# nic PATH NUMA: a ConnectX-7 function with RDMA device mlx5_<n>, port 1
# ACTIVE, link layer $LINK_LAYER; for Ethernet a netdev of MTU $NETDEV_MTU and
# RoCE v1 GIDs, plus RoCE v2 ones when $ROCE_V2 is 1.
nic() {
	local path=$1 d=$S/devices/$1 name=mlx5_$nic_n ib port guid ifname n idx
	ib=$d/infiniband/$name
	port=$ib/ports/1
	n=$((nic_n + 1))
	if [[ $LINK_LAYER == InfiniBand ]]; then
		fn "$path" 0x020700 0x15b3 0x1021 "$2"
	else
		fn "$path" 0x020000 0x15b3 0x1021 "$2"
	fi
	mkdir -p "$port/gids" "$S/class/infiniband"
	ln -s ../.. "$ib/device"
	ln -s "../../devices/$path/infiniband/$name" "$S/class/infiniband/$name"
	w "$port/state" "4: ACTIVE"
	w "$port/phys_state" "5: LinkUp"
	w "$port/rate" "400 Gb/sec (4X NDR)"
	w "$port/link_layer" "$LINK_LAYER"
	guid=$(printf 'b83f:d203:00%02x:%04x' "$nic_n" "$n")
	if [[ $LINK_LAYER == InfiniBand ]]; then
		gid "$port" 0 "fe80:0000:0000:0000:$guid" "IB/RoCE v1" ""
	else
		ifname=enp${nic_n}s0np0
		w "$d/net/$ifname/mtu" "$NETDEV_MTU"
		mkdir -p "$S/class/net"
		ln -s "../../devices/$path/net/$ifname" "$S/class/net/$ifname"
		gid "$port" 0 "fe80:0000:0000:0000:$guid" "IB/RoCE v1" "$ifname"
		gid "$port" 2 "0000:0000:0000:0000:0000:ffff:0a00:$(printf %04x "$n")" "IB/RoCE v1" "$ifname"
		if [[ $ROCE_V2 == 1 ]]; then
			gid "$port" 1 "fe80:0000:0000:0000:$guid" "RoCE v2" "$ifname"
			gid "$port" 3 "0000:0000:0000:0000:0000:ffff:0a00:$(printf %04x "$n")" "RoCE v2" "$ifname"
		fi
	fi
	# Unused GID entries read as zeros.
	for idx in 4 5 6 7; do
		w "$port/gids/$idx" "0000:0000:0000:0000:0000:0000:0000:0000"
	done
	nic_n=$((nic_n + 1))
}

# switch_block HB BUS RP NUMA NGPU NNIC: below host bridge pci0000:HB, root
# port HB:RP.0, then a PCIe switch (upstream port on bus BUS, downstream ports on
# BUS+1) with NGPU GPUs and then NNIC NICs, each on a port of its own.
switch_block() {
	local hb=$1 bus=$((16#$2)) rp=$3 numa=$4 ngpu=$5 nnic=$6 rpath usp i ep
	rpath=pci0000:$hb/0000:$hb:$rp.0
	usp=$rpath/0000:$(hex2 "$bus"):00.0
	bridge "$rpath" 4 "$numa"
	bridge "$usp" 5 "$numa"
	for ((i = 0; i < ngpu + nnic; i++)); do
		bridge "$usp/0000:$(hex2 $((bus + 1))):$(hex2 "$i").0" 6 "$numa"
		ep=$usp/0000:$(hex2 $((bus + 1))):$(hex2 "$i").0/0000:$(hex2 $((bus + 2 + i))):00.0
		if ((i < ngpu)); then
			gpu "$ep" "$numa"
		else
			nic "$ep" "$numa"
		fi
	done
}

# port_counters PORTDIR SEED: an mlx5 port's counters/ (the InfiniBand PortCounters, extended
# width) and hw_counters/ (mlx5's names, drivers/infiniband/hw/mlx5/counters.c), with values
# made from SEED; link_downed 1 (a link that went down once before the run), every other
# error counter 0.
port_counters() {
	local d=$1 n=$2 c
	for c in symbol_error link_error_recovery port_rcv_errors port_rcv_remote_physical_errors \
		port_rcv_switch_relay_errors port_xmit_discards port_xmit_constraint_errors \
		port_rcv_constraint_errors local_link_integrity_errors excessive_buffer_overrun_errors \
		VL15_dropped; do
		w "$d/counters/$c" 0
	done
	w "$d/counters/link_downed" 1
	w "$d/counters/port_xmit_data" $((n * 1000003))
	w "$d/counters/port_rcv_data" $((n * 1000033))
	w "$d/counters/port_xmit_packets" $((n * 4003))
	w "$d/counters/port_rcv_packets" $((n * 4013))
	w "$d/counters/unicast_xmit_packets" $((n * 4001))
	w "$d/counters/unicast_rcv_packets" $((n * 4011))
	w "$d/counters/multicast_xmit_packets" 2
	w "$d/counters/multicast_rcv_packets" 3
	for c in rx_write_requests rx_read_requests rx_atomic_requests rx_dct_connect; do
		w "$d/hw_counters/$c" $((n * 17))
	done
	for c in out_of_buffer out_of_sequence duplicate_request rnr_nak_retry_err packet_seq_err \
		implied_nak_seq_err local_ack_timeout_err resp_local_length_error resp_cqe_error \
		req_cqe_error req_remote_invalid_request req_remote_access_errors \
		resp_remote_access_errors resp_cqe_flush_error req_cqe_flush_error \
		req_transport_retries_exceeded req_rnr_retries_exceeded roce_adp_retrans \
		roce_adp_retrans_to roce_slow_restart roce_slow_restart_cnps roce_slow_restart_trans \
		rx_icrc_encapsulated rp_cnp_ignored rp_cnp_handled np_ecn_marked_roce_packets np_cnp_sent; do
		w "$d/hw_counters/$c" 0
	done
	w "$d/hw_counters/lifespan" 10
}

# aer PCIDIR CORRECTABLE: the AER files of a PCI function, as the kernel prints them; the
# correctable ones' counts from CORRECTABLE ("RxErr BadTLP BadDLLP"), all others 0.
aer() {
	local d=$1 rx bad dllp kind
	read -r rx bad dllp <<<"$2"
	printf '%s\n' "RxErr $rx" "BadTLP $bad" "BadDLLP $dllp" "Rollover 0" "Timeout 0" "NonFatalErr 0" \
		"CorrIntErr 0" "HeaderOF 0" "TOTAL_ERR_COR $((rx + bad + dllp))" >"$d/aer_dev_correctable"
	for kind in nonfatal fatal; do
		printf '%s 0\n' Undefined DLP SDES TLP FCP CmpltTO CmpltAbrt UnxCmplt RxOF MalfTLP ECRC UnsupReq \
			ACSViol UncorrIntErr BlockedTLP AtomicOpBlocked TLPBlockedErr PoisonTLPBlocked >"$d/aer_dev_$kind"
		if [[ $kind == fatal ]]; then echo "TOTAL_ERR_FATAL 0"; else echo "TOTAL_ERR_NONFATAL 0"; fi \
			>>"$d/aer_dev_$kind"
	done
}

# drop_module NAME: as if NAME were not loaded.
drop_module() {
	sed -i "s/$1,//g; /^$1 /d" "$P/modules"
}

limits() {
	printf '%-26s%-21s%-21s%-10s\n' "Limit" "Soft Limit" "Hard Limit" "Units"
	printf '%-26s%-21s%-21s%-10s\n' "Max cpu time" unlimited unlimited seconds
	printf '%-26s%-21s%-21s%-10s\n' "Max locked memory" "$1" "$1" bytes
	printf '%-26s%-21s%-21s%-10s\n' "Max open files" 1048576 1048576 files
}

# node_begin NAME: an empty healthy node: kernel 6.8 with iommu=pt, NVIDIA
# 570 open kernel modules, nvidia_peermem loaded, memlock unlimited.
node_begin() {
	S=$out/$1/sys
	P=$out/$1/proc
	gpu_n=0 nic_n=0 group=0
	rm -rf "${out:?}/$1"
	mkdir -p "$S/bus/pci/devices" "$S/bus/pci/drivers/nvidia" "$S/class/net" "$S/kernel" \
		"$S/module/nvidia" "$P/sys/kernel" "$P/self"
	if [[ -n $IOMMU_TYPE ]]; then
		mkdir -p "$S/class/iommu/dmar0" "$S/class/iommu/dmar1"
	fi
	w "$S/module/nvidia/version" "570.86.15"
	w "$P/cmdline" "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/nvme0n1p2 ro intel_iommu=on iommu=pt"
	w "$P/sys/kernel/osrelease" "6.8.0-45-generic"
	w "$P/driver/nvidia/version" "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 20:34:04 UTC 2025"
	printf '%s\n' \
		"nvidia_peermem 16384 0 - Live 0x0000000000000000" \
		"mlx5_ib 462848 0 - Live 0x0000000000000000" \
		"ib_uverbs 188416 2 nvidia_peermem,mlx5_ib, Live 0x0000000000000000" \
		"nvidia_uvm 4956160 0 - Live 0x0000000000000000 (POE)" \
		"nvidia 11509760 2 nvidia_peermem,nvidia_uvm, Live 0x0000000000000000 (POE)" \
		"mlx5_core 2494464 1 mlx5_ib, Live 0x0000000000000000" >"$P/modules"
	limits unlimited >"$P/self/limits"
	printf 'Name:\tgdrb_doctor\nCapEff:\t0000000000000000\n' >"$P/self/status"
}

# small NAME: one socket, one PCIe switch with 2 GPUs and 2 NICs.
small() {
	node_begin "$1"
	switch_block 10 11 01 0 2 2
}

# --- the healthy reference: 2 sockets, 4 switches of 2 GPUs and 2 NICs each
node_begin dgx8
switch_block 10 11 01 0 2 2
switch_block 30 31 01 0 2 2
switch_block 90 91 01 1 2 2
switch_block b0 b1 01 1 2 2

small healthy

# An HGX H200 node as gdrb inventory --sku h200 expects it (docs/skus.md): dgx8's layout (2
# sockets, 4 PCIe switches of 2 GPUs and 2 NDR NICs each) with H200 SXM 141GB GPUs. LAST
# ("2 2" by default) is the last switch's GPUs and NICs: the variants lose one of either.
hgx_h200() {
	GPU_MODEL=h200
	node_begin "$1"
	switch_block 10 11 01 0 2 2
	switch_block 30 31 01 0 2 2
	switch_block 90 91 01 1 2 2
	# shellcheck disable=SC2086 # LAST is two words on purpose
	switch_block b0 b1 01 1 ${2:-2 2}
	GPU_MODEL=h100
}
hgx_h200 hgx-h200
# GPU 0000:34:00.0 trained to x8 of x16.
hgx_h200 hgx-h200-downtrained
w "$S/bus/pci/devices/0000:34:00.0/current_link_width" 8
# One GPU gone from the bus (fell off, or not enumerated): 7 GPUs.
hgx_h200 hgx-h200-nogpu "1 2"
# One NIC gone from the bus: 7 NICs.
hgx_h200 hgx-h200-nonic "2 1"

# An HGX node with one NIC per PCIe switch, 4 for 8 GPUs: each NIC is the nearest of two GPUs,
# whose rails then share it.
node_begin hgx-4nic
switch_block 10 11 01 0 2 1
switch_block 30 31 01 0 2 1
switch_block 90 91 01 1 2 1
switch_block b0 b1 01 1 2 1

# Two GPUs and only a software RDMA device (rxe0, no PCI function): the nearest NIC of both,
# yet no GPU's own, so not named as shared.
node_begin rxe-gpus
switch_block 10 11 01 0 2 0
mkdir -p "$S/devices/virtual/infiniband/rxe0/ports/1" "$S/class/infiniband"
ln -s ../../devices/virtual/infiniband/rxe0 "$S/class/infiniband/rxe0"
w "$S/devices/virtual/infiniband/rxe0/ports/1/state" "4: ACTIVE"
w "$S/devices/virtual/infiniband/rxe0/ports/1/link_layer" Ethernet

# ACS redirect on the two switch ports between GPU 0000:13:00.0 and mlx5_0.
small acs
for port in 0000:12:00.0 0000:12:02.0; do
	cp "$(cfg_template 6 0x1d)" "$S/bus/pci/devices/$port/config"
done

# Config space as an unprivileged reader sees it: the first 64 bytes only.
small acs-unreadable
for f in "$S"/bus/pci/devices/*/config; do
	head -c 64 "$(readlink -f "$f")" >"$f.short"
	mv "$f.short" "$(readlink -f "$f")"
done

# mlx5_1 trained to x8 of x16 (a fault); the second GPU at 2.5 GT/s (idle or fault).
small downtrained
w "$S/bus/pci/devices/0000:16:00.0/current_link_width" 8
w "$S/bus/pci/devices/0000:14:00.0/current_link_speed" "2.5 GT/s PCIe"

# The switch's uplink to the root port trained to x8 of x16, as both its ends report it: GPU and
# NIC links at their maximum, but staging through host memory crosses the narrow link twice.
small uplink-x8
for port in 0000:10:01.0 0000:11:00.0; do
	w "$S/bus/pci/devices/$port/current_link_width" 8
done

# No peer memory module, and no dma-buf: proprietary 535 driver on Linux 5.4.
small nopeermem
drop_module nvidia_peermem
w "$P/sys/kernel/osrelease" "5.4.0-190-generic"
w "$P/driver/nvidia/version" "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024"
w "$S/module/nvidia/version" "535.183.01"

# No peer memory module, but dma-buf works (open modules, Linux 6.8).
small dmabuf-only
drop_module nvidia_peermem

# RoCE with a RoCE v2 GID (index 3, IPv4-mapped) but netdev MTU 1500.
LINK_LAYER=Ethernet NETDEV_MTU=1500 small roce

# RoCE without any RoCE v2 GID.
LINK_LAYER=Ethernet ROCE_V2=0 small roce-nov2

# mlx5_1's only port is down.
small portdown
w "$S/class/infiniband/mlx5_1/ports/1/state" "1: DOWN"
w "$S/class/infiniband/mlx5_1/ports/1/phys_state" "3: Disabled"

# The IOMMU translates DMA (intel_iommu=on without iommu=pt).
IOMMU_TYPE=DMA-FQ small iommu-dma
w "$P/cmdline" "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/nvme0n1p2 ro intel_iommu=on"

# No IOMMU at all.
IOMMU_TYPE='' small iommu-off
w "$P/cmdline" "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/nvme0n1p2 ro intel_iommu=off"

# GPUs on socket 0, NICs on socket 1.
node_begin xsocket
switch_block 10 11 01 0 2 0
switch_block 90 91 01 1 0 2

# GPUs and NICs behind different root ports of one host bridge.
node_begin phb
switch_block 10 11 01 0 2 0
switch_block 10 21 02 0 0 2

# The healthy node with older and newer GPUs: BAR1 on another line of "resource".
GPU_MODEL=a100 small a100
GPU_MODEL=b200 small b200

# H100s with a BAR1 of 256 MiB on the first GPU; not assigned on the second (the
# kernel zeroes a BAR it found no room for).
small smallbar
sed -i '3s/.*/0x0000010000000000 0x000001000fffffff 0x000000000014220c/' \
	"$S/bus/pci/devices/0000:13:00.0/resource"
sed -i '3s/.*/0x0000000000000000 0x0000000000000000 0x0000000000000000/' \
	"$S/bus/pci/devices/0000:14:00.0/resource"

# RLIMIT_MEMLOCK of 64 KiB for an unprivileged process.
small memlock
limits 65536 >"$P/self/limits"

# RLIMIT_MEMLOCK of 2 GiB: enough for host memory at -m 1G, not for device memory.
small memlock-2g
limits $((2 << 30)) >"$P/self/limits"

# GPUs only: no RDMA driver loaded.
node_begin noib
switch_block 10 11 01 0 2 0
for m in nvidia_peermem ib_uverbs mlx5_ib mlx5_core; do drop_module "$m"; done

# Counters (docs/counters.md): one PCIe switch with GPU 0000:3b:00.0 (the simulated GPU's
# default address) trained to x8 of x16, with correctable AER errors counted before the run,
# and NICs mlx5_0 (0000:3c:00.0) and mlx5_1 (0000:3d:00.0), each port 1 ACTIVE with mlx5's
# counters/ and hw_counters/.
node_begin mlx5-counters
switch_block 30 39 01 0 1 2
w "$S/bus/pci/devices/0000:3b:00.0/current_link_width" 8
aer "$S/bus/pci/devices/0000:3b:00.0" "2 5 0"
for nic_i in 0 1; do
	port_counters "$S/class/infiniband/mlx5_$nic_i/ports/1" $((nic_i + 1))
	aer "$S/bus/pci/devices/0000:3$(printf %x $((12 + nic_i))):00.0" "0 0 0"
done

# Soft-RoCE: rxe0, a software device on eth0 (a virtio NIC: no RDMA PCI function), its port
# with hw_counters/ only (rxe has no PMA, so no counters/), rxe's names
# (drivers/infiniband/sw/rxe/rxe_hw_counters.c) as a run left them: retransmissions counted.
node_begin rxe-counters
d=$S/devices/virtual/infiniband/rxe0
mkdir -p "$d/ports/1/hw_counters" "$S/class/infiniband"
ln -s ../../devices/virtual/infiniband/rxe0 "$S/class/infiniband/rxe0"
w "$d/ports/1/state" "4: ACTIVE"
w "$d/ports/1/phys_state" "5: LinkUp"
w "$d/ports/1/rate" "2.5 Gb/sec (1X SDR)"
w "$d/ports/1/link_layer" Ethernet
for c in sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_rnr_err send_rnr_err rcvd_seq_err \
	ack_deferred retry_exceeded_err retry_rnr_exceeded_err completer_retry_err send_err link_downed \
	rdma_sends rdma_recvs lifespan; do
	w "$d/ports/1/hw_counters/$c" 0
done
w "$d/ports/1/hw_counters/sent_pkts" 52117
w "$d/ports/1/hw_counters/rcvd_pkts" 52090
w "$d/ports/1/hw_counters/completer_retry_err" 13
w "$d/ports/1/hw_counters/ack_deferred" 4
w "$d/ports/1/hw_counters/lifespan" 10

# NICs only: no GPU, no NVIDIA driver.
node_begin nogpu
switch_block 10 11 01 0 0 2
rm -rf "$P/driver" "$S/module/nvidia"
for m in nvidia_peermem nvidia_uvm nvidia; do drop_module "$m"; done

# ethtool_stats NETDEVDIR SEED: the ETH_SS_STATS of an mlx5 netdev as `ethtool -S` lists them,
# for the fixture transport of common/sysinfo/ethtool.c (a file no kernel has: gdrb-ethtool-stats,
# "NAME VALUE" lines in the driver's order). The names and their order are mlx5's, from
# drivers/net/ethernet/mellanox/mlx5/core/en_stats.c (torvalds/linux at commit 01dd74246c75):
# a few software counters, the queue counter, the IEEE 802.3, RFC 2863 and 2819 port groups,
# the physical layer, the receive buffer, the per-priority traffic and, with PFC on priority 3
# only (as RoCE is usually set up), that priority's pause counters; then the per-priority
# buffer and congestion counters, and one channel's. Pause frames and ECN marks counted
# before the run; every discard and error 0.
ethtool_stats() {
	local d=$1 n=$2 p
	{
		printf '%s\n' "rx_packets $((n * 5003))" "rx_bytes $((n * 700001))" "tx_packets $((n * 4999))" \
			"tx_bytes $((n * 690001))" "rx_ecn_mark $((n * 3))" "rx_out_of_buffer 0" "rx_if_down_packets 0"
		printf '%s\n' "tx_packets_phy $((n * 91003))" "rx_packets_phy $((n * 91013))" "rx_crc_errors_phy 0" \
			"tx_bytes_phy $((n * 9100003))" "rx_bytes_phy $((n * 9100013))" "rx_symbol_err_phy 0" \
			"rx_pause_ctrl_phy $((n * 1201))" "tx_pause_ctrl_phy $((n * 1103))"
		printf '%s\n' "rx_discards_phy 0" "tx_discards_phy 0" "tx_errors_phy 0"
		printf '%s\n' "rx_undersize_pkts_phy 0" "rx_fragments_phy 0" "rx_jabbers_phy 0" "rx_64_bytes_phy $((n * 17))"
		printf '%s\n' "link_down_events_phy 1" "rx_pcs_symbol_err_phy 0" "rx_corrected_bits_phy $((n * 5))"
		printf '%s\n' "rx_buffer_passed_thres_phy $((n * 4))"
		for p in 0 1 2 3 4 5 6 7; do
			printf '%s\n' "rx_prio${p}_bytes $((p == 3 ? n * 9000007 : 0))" \
				"rx_prio${p}_packets $((p == 3 ? n * 90001 : 0))" "rx_prio${p}_discards 0" \
				"tx_prio${p}_bytes $((p == 3 ? n * 8900007 : 0))" "tx_prio${p}_packets $((p == 3 ? n * 89001 : 0))"
		done
		printf '%s\n' "rx_prio3_pause $((n * 1200))" "rx_prio3_pause_duration $((n * 36011))" \
			"tx_prio3_pause $((n * 1100))" "tx_prio3_pause_duration $((n * 33013))" "rx_prio3_pause_transition $((n * 600))"
		printf '%s\n' "module_unplug 0" "module_bus_stuck 0" "module_high_temp 0" "module_bad_shorted 0"
		for p in 0 1 2 3 4 5 6 7; do
			printf '%s\n' "rx_prio${p}_buf_discard 0" "rx_prio${p}_cong_discard 0" \
				"rx_prio${p}_marked $((p == 3 ? n * 7 : 0))"
		done
		printf '%s\n' "ch0_events $((n * 101))" "ch0_poll $((n * 103))" "rx0_packets $((n * 5003))" \
			"rx0_ecn_mark $((n * 3))" "tx0_packets $((n * 4999))"
	} >"$d/gdrb-ethtool-stats"
}

# RoCE counters: the mlx5-counters node with Ethernet ports (RoCE v2), each port's netdev
# (enp0s0np0 of mlx5_0, enp1s0np0 of mlx5_1) with mlx5's ethtool statistics.
LINK_LAYER=Ethernet node_begin roce-counters
LINK_LAYER=Ethernet switch_block 30 39 01 0 1 2
for nic_i in 0 1; do
	port_counters "$S/class/infiniband/mlx5_$nic_i/ports/1" $((nic_i + 1))
	ethtool_stats "$S/class/net/enp${nic_i}s0np0" $((nic_i + 1))
done

rm -f "$out"/.config-*
