/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-wide settings GPUDirect RDMA depends on, from sysfs and procfs under
 * their roots: the IOMMU mode, kernel modules, the NVIDIA kernel driver and
 * its flavour, the kernel release, and RLIMIT_MEMLOCK. Nothing is logged.
 */
#ifndef GDRB_NODE_H
#define GDRB_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gdrb_iommu_mode {
	GDRB_IOMMU_OFF,             /* no IOMMU translating DMA */
	GDRB_IOMMU_PASSTHROUGH,     /* identity mapping (iommu=pt) */
	GDRB_IOMMU_TRANSLATED,      /* DMA addresses are translated */
};

struct gdrb_node {
	char cmdline[4096];
	char kernel[64];                /* "6.8.0-45-generic"; "" unknown */

	/* IOMMU */
	int iommu_units;                /* entries of <sys>/class/iommu */
	int iommu_groups;               /* entries of <sys>/kernel/iommu_groups */
	int groups_identity;            /* groups of type "identity" */
	int groups_dma;                 /* groups of type "DMA" or "DMA-FQ" */
	char iommu_args[256];           /* the IOMMU words of the command line */
	enum gdrb_iommu_mode iommu;
	char iommu_why[256];            /* how the mode was decided */

	/* Kernel modules (<proc>/modules, else <sys>/module/<name>) */
	bool modules_readable;
	bool mod_nvidia, mod_nvidia_peermem, mod_nv_peer_mem, mod_ib_uverbs;

	/* NVIDIA kernel driver: <proc>/driver/nvidia/version, else <sys>/module/nvidia */
	char nv_version[32];            /* "570.86.15"; "" unknown */
	int nv_major;                   /* 570; 0 unknown */
	int nv_open;                    /* 1 open kernel modules, 0 proprietary, -1 unknown */

	/* RLIMIT_MEMLOCK: getrlimit for the live /proc, else <proc>/self/limits */
	bool memlock_known;
	bool memlock_unlimited;
	uint64_t memlock_bytes;
	char memlock_why[48];           /* not known: why ("missing", "its soft limit is out of range") */
	bool cap_ipc_lock;              /* exempt from the limit (<proc>/self/status CapEff) */
};

/*
 * Load everything above. live: the roots are the running system's, so
 * getrlimit(2) answers for this process. Returns 0 or -ENOMEM; missing files
 * leave their fields unknown.
 */
int gdrb_node_load(const char *sysfs_root, const char *procfs_root, bool live,
		   struct gdrb_node *node);

/* Only the RLIMIT_MEMLOCK fields, for this process (getrlimit, /proc/self/status). */
void gdrb_node_memlock_self(struct gdrb_node *node);

const char *gdrb_iommu_mode_name(enum gdrb_iommu_mode mode);

/* The value of key= on a command line (last one wins); NULL when absent. */
const char *gdrb_cmdline_value(const char *cmdline, const char *key, char *buf, size_t len);

/*
 * "Max locked memory  65536  65536  bytes" from a limits text: 0 and the
 * soft limit, *unlimited set for "unlimited"; -ENOENT without that line or
 * value, -EINVAL for a soft limit of anything but decimal digits, -ERANGE
 * for one of 2^64 - 1 or more (never cut to a smaller number, never taken
 * as unlimited). On an error *bytes is 0 and *unlimited false.
 */
int gdrb_parse_memlock(const char *limits, uint64_t *bytes, bool *unlimited);

/* Kernel release "5.15.0-105-generic" against major.minor: 1 at least, 0 older, -1 unknown. */
int gdrb_kernel_at_least(const char *release, int major, int minor);

#endif
