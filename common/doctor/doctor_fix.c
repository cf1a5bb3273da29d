/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fixes gdrb_doctor suggests, one line each, named by the checks that find their cause:
 * read together here, they stay consistent in wording and commands.
 */
#include "config.h"

#include "doctor_int.h"

static const char *const fixes[GDRB_FIX_COUNT] = {
	[GDRB_FIX_NONE] = "",
	/* check 1: RDMA devices and ports */
	[GDRB_FIX_RDMA_DRIVER] =
		"load the NIC's RDMA driver and ib_uverbs (modprobe mlx5_ib ib_uverbs; install "
		"rdma-core); 'ibv_devices' must list the NIC",
	[GDRB_FIX_RDMA_PROVIDER] =
		"install the NIC's user-space provider (Debian: ibverbs-providers, RHEL: "
		"libibverbs; both from rdma-core)",
	[GDRB_FIX_PORT_DOWN] =
		"bring the port up: check the cable and the switch port ('ibstat', 'ip link', "
		"'rdma link')",
	[GDRB_FIX_ROCE_MTU] =
		"set MTU 9000 (at least 4200) on the netdev and its switch ports so that RoCE "
		"uses a 4096-byte RDMA MTU",
	[GDRB_FIX_IB_MTU] =
		"set the subnet manager's MTU to 4096 (opensm: mtu 5 in the partition config)",
	/* check 2: RoCE v2 GID */
	[GDRB_FIX_ROCE_GID] =
		"give the netdev an IP address (RoCE v2 GIDs are made from its addresses) and "
		"check the RoCE mode: 'cma_roce_mode -d DEV -p PORT' should say RoCE v2",
	/* check 3: GPUs, driver, runtime, NVLink */
	[GDRB_FIX_GPU_MISSING] =
		"install the GPU or pass it through to this VM or container; 'nvidia-smi -L' must "
		"list it",
	[GDRB_FIX_GPU_DRIVER] =
		"install and load the NVIDIA driver (modprobe nvidia); the GPU must be bound to "
		"'nvidia', not vfio-pci",
	[GDRB_FIX_CUDA_DRIVER] =
		"install an NVIDIA driver at least as new as the CUDA runtime gdrbench was built "
		"with, and check CUDA_VISIBLE_DEVICES",
	[GDRB_FIX_CUDA_VISIBLE] =
		"unset CUDA_VISIBLE_DEVICES (or check 'nvidia-smi')",
	[GDRB_FIX_NVLINK_DOWN] =
		"drain the node: a link down on an NVLink board is a hardware fault; 'nvidia-smi nvlink "
		"-s' shows each link, a GPU reset or reboot retrains them, a link that stays down "
		"needs the vendor",
	[GDRB_FIX_NVLINK_ALL_DOWN] =
		"on an NVLink board (HGX, DGX) drain the node as for one link down; a PCIe card without "
		"an NVLink bridge has no link up and needs nothing",
	[GDRB_FIX_NVLINK_UNREAD] =
		"check 'nvidia-smi nvlink -s' and the driver's messages (dmesg)",
	[GDRB_FIX_NVLINK_SLOW] =
		"a link slower than its GPU's others trained down: 'nvidia-smi nvlink -s' shows each "
		"link's speed; a GPU reset or reboot retrains it, a link that stays slow needs the vendor",
	/* check 4: GPU memory registration */
	[GDRB_FIX_GPU_REGISTRATION] =
		"load nvidia_peermem for peer memory; for dma-buf use the NVIDIA open kernel "
		"modules (r515+) on Linux >= 5.12; see checks 5 and 6",
	/* check 5: nvidia_peermem, dma-buf */
	[GDRB_FIX_PEERMEM_OR_DMABUF] =
		"modprobe nvidia_peermem (and list it in /etc/modules-load.d), or use the NVIDIA "
		"open kernel modules (r515+) on Linux >= 5.12 for dma-buf",
	[GDRB_FIX_PEERMEM] =
		"modprobe nvidia_peermem for software that registers GPU memory as peer memory "
		"(MPI, UCX or NCCL builds without dma-buf)",
	/* check 6: RLIMIT_MEMLOCK (the check adds the size this node needs) */
	[GDRB_FIX_MEMLOCK] =
		"'* - memlock unlimited' in /etc/security/limits.conf, LimitMEMLOCK=infinity for "
		"systemd services and slurmd",
	/* check 7: IOMMU */
	[GDRB_FIX_IOMMU] =
		"boot with iommu=pt (Intel: intel_iommu=on iommu=pt), or turn the IOMMU off in the "
		"firmware: GPUDirect RDMA needs untranslated peer addresses",
	/* check 8: ACS */
	[GDRB_FIX_ACS_REDIRECT] =
		"clear ACS redirect on those ports ('setpci -s BDF ECAP_ACS+0x6.w=0000' at every "
		"boot) or disable ACS in the firmware; keep it only where VMs need isolation",
	[GDRB_FIX_ACS_ROOT] =
		"run gdrb_doctor as root: ACS lives in extended config space",
	/* check 9: GPU-NIC topology */
	[GDRB_FIX_GPU_NIC_FAR] =
		"put each GPU and its NIC under one PCIe switch (move a card), or pick the nearest "
		"NIC per GPU (NCCL_IB_HCA, UCX_NET_DEVICES)",
	[GDRB_FIX_GPU_NIC_SOCKET] =
		"install a NIC on each GPU's socket: GPUDirect RDMA across the socket "
		"interconnect is slow or refused",
	[GDRB_FIX_SHARED_NIC] =
		"give each GPU a NIC under its own PCIe switch; until then a rail's GPUDirect bandwidth "
		"under load is the NIC's divided among its GPUs ('gdrb rails' measures it)",
	/* check 10: PCIe links */
	[GDRB_FIX_PCIE_DOWN] =
		"reseat the card, its riser or cable; check the slot's speed and bifurcation in "
		"the firmware; 'lspci -vv' LnkSta must equal LnkCap",
	[GDRB_FIX_PCIE_IDLE] =
		"GPUs lower the link speed when idle: re-check under load ('nvidia-smi -q -d "
		"PCI' shows the current generation)",
	[GDRB_FIX_PCIE_SLOT] =
		"move the card to a slot (or switch port) that runs at the card's own maximum",
	/* check 11: BAR1 */
	[GDRB_FIX_BAR1_NONE] =
		"enable 'Above 4G decoding' (and Resizable BAR) in the firmware so that BAR1 is "
		"assigned",
	[GDRB_FIX_BAR1_SMALL] =
		"enable Resizable BAR / large BAR1 in the firmware ('nvidia-smi -q -d MEMORY' shows "
		"BAR1): GPUDirect maps GPU memory through BAR1",
};

const char *gdrb_doc_fix_text(enum gdrb_doc_fix fix)
{
	return fix > GDRB_FIX_NONE && fix < GDRB_FIX_COUNT ? fixes[fix] : "";
}
