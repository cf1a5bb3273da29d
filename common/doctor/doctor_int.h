/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the doctor's check files share: the fixes it suggests, by name (doctor_fix.c), how a
 * check records what it found (doctor_checks.c), and the checks themselves, one file per concern.
 */
#ifndef DOCTOR_INT_H
#define DOCTOR_INT_H

#include <stddef.h>

#include "gdrb_doctor.h"

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
	GDRB_FIX_NVLINK_SLOW,
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

/* What the check read, one line (the table's evidence column). */
void gdrb_doc_evidence(struct gdrb_doc_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * One finding. The check takes the worst verdict of its items, and the fix of
 * the first item that made it that bad.
 */
void gdrb_doc_add(struct gdrb_doc_check *c, enum gdrb_doc_verdict v, enum gdrb_doc_fix fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* How many of c's items have verdict v. */
int gdrb_doc_count(const struct gdrb_doc_check *c, enum gdrb_doc_verdict v);

/* "1.5 GiB", "64 MiB", "512 KiB" into buf. */
char *gdrb_doc_human_bytes(char *buf, size_t len, double bytes);

/* The checks, in the files named after their concern; each fills c from d. */
/* doctor_rdma.c: 1. RDMA devices and ports, 2. RoCE v2 GID */
void gdrb_doc_check_rdma_ports(struct gdrb_doctor *d, struct gdrb_doc_check *c);
void gdrb_doc_check_roce_gid(struct gdrb_doctor *d, struct gdrb_doc_check *c);
/* doctor_gpu.c: 3. GPUs, driver and runtime (with doctor_nvlink.c's items), 11. BAR1 */
void gdrb_doc_check_gpus(struct gdrb_doctor *d, struct gdrb_doc_check *c);
void gdrb_doc_check_bar1(struct gdrb_doctor *d, struct gdrb_doc_check *c);
/* doctor_nvlink.c: check 3's NVLink items, one per GPU NVML lists */
void gdrb_doc_nvlink_items(struct gdrb_doctor *d, struct gdrb_doc_check *c);
/* The fastest speed of gp's links up in MB/s, 0 none known: a link below it is slower. */
unsigned gdrb_doc_nvlink_fastest(const struct gdrb_nvml_gpu *gp);
/* doctor_registration.c: 4. registration attempted, 5. modules, 6. RLIMIT_MEMLOCK, 7. IOMMU */
void gdrb_doc_check_registration(struct gdrb_doctor *d, struct gdrb_doc_check *c);
void gdrb_doc_check_modules(struct gdrb_doctor *d, struct gdrb_doc_check *c);
void gdrb_doc_check_memlock(struct gdrb_doctor *d, struct gdrb_doc_check *c);
void gdrb_doc_check_iommu(struct gdrb_doctor *d, struct gdrb_doc_check *c);
/* doctor_pcie.c: 8. ACS, 9. GPU-NIC topology, 10. PCIe links */
void gdrb_doc_check_acs(struct gdrb_doctor *d, struct gdrb_doc_check *c);
void gdrb_doc_check_topology(struct gdrb_doctor *d, struct gdrb_doc_check *c);
void gdrb_doc_check_links(struct gdrb_doctor *d, struct gdrb_doc_check *c);

/* Output (doctor_out.c): each check's verdict, and how many of the checks have each verdict. */
void gdrb_doc_verdicts(const struct gdrb_doctor *d, enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS]);
void gdrb_doc_counts(const enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS], int n[4]);

#endif
