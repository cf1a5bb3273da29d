/* SPDX-License-Identifier: BSD-3-Clause */
/* What the doctor's check files share: the fixes it suggests, by name. */
#ifndef DOCTOR_INT_H
#define DOCTOR_INT_H

/* A fix a check can name; GDRB_FIX_NONE where there is nothing to do. */
enum gdrb_doc_fix {
	GDRB_FIX_NONE,
	/* check 1: RDMA devices and ports */
	GDRB_FIX_RDMA_DRIVER,
	GDRB_FIX_RDMA_PROVIDER,
	GDRB_FIX_PORT_DOWN,
	GDRB_FIX_ROCE_MTU,
	GDRB_FIX_IB_MTU,
	/* check 2: RoCE v2 GID */
	GDRB_FIX_ROCE_GID,
	/* check 3: GPUs, driver, runtime, NVLink */
	GDRB_FIX_GPU_MISSING,
	GDRB_FIX_GPU_DRIVER,
	GDRB_FIX_CUDA_DRIVER,
	GDRB_FIX_CUDA_VISIBLE,
	GDRB_FIX_NVLINK_DOWN,
	GDRB_FIX_NVLINK_ALL_DOWN,
	GDRB_FIX_NVLINK_UNREAD,
	/* check 4: GPU memory registration */
	GDRB_FIX_GPU_REGISTRATION,
	/* check 5: nvidia_peermem, dma-buf */
	GDRB_FIX_PEERMEM_OR_DMABUF,
	GDRB_FIX_PEERMEM,
	/* check 6: RLIMIT_MEMLOCK (the check adds the size this node needs) */
	GDRB_FIX_MEMLOCK,
	/* check 7: IOMMU */
	GDRB_FIX_IOMMU,
	/* check 8: ACS */
	GDRB_FIX_ACS_REDIRECT,
	GDRB_FIX_ACS_ROOT,
	/* check 9: GPU-NIC topology */
	GDRB_FIX_GPU_NIC_FAR,
	GDRB_FIX_GPU_NIC_SOCKET,
	GDRB_FIX_SHARED_NIC,
	/* check 10: PCIe links */
	GDRB_FIX_PCIE_DOWN,
	GDRB_FIX_PCIE_IDLE,
	GDRB_FIX_PCIE_SLOT,
	/* check 11: BAR1 */
	GDRB_FIX_BAR1_NONE,
	GDRB_FIX_BAR1_SMALL,
	GDRB_FIX_COUNT
};

/* The fix's one line for the user: "" for GDRB_FIX_NONE. */
const char *gdrb_doc_fix_text(enum gdrb_doc_fix fix);

#endif
