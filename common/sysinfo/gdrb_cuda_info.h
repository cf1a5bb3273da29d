/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What CUDA sees on this node: the runtime and driver versions and every
 * visible device with its PCI address and memory. Backend cuda_info.c, or
 * cuda_info_none.c when built without CUDA.
 */
#ifndef GDRB_CUDA_INFO_H
#define GDRB_CUDA_INFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GDRB_CUDA_MAX_DEVS 64

struct gdrb_cuda_dev {
	char name[128];
	char pci_bus_id[32];            /* "0000:17:00.0" */
	uint64_t total_mem;             /* bytes */
	int cc_major, cc_minor;         /* compute capability (9, 0); 0 0: not known */
};

struct gdrb_cuda_inventory {
	int runtime_version;            /* 13000; 0 unknown */
	int driver_version;             /* 0: no driver */
	int count;
	struct gdrb_cuda_dev devs[GDRB_CUDA_MAX_DEVS];
};

/*
 * Fill inv. 0 when at least one device is visible; GDRB_ERR_UNSUPP with
 * *why (no driver, no device, built without CUDA) otherwise. Versions are
 * filled whenever CUDA answers.
 */
int gdrb_cuda_inventory(struct gdrb_cuda_inventory *inv, char *why, size_t len);

/* "13.0" from 13000; "none" for 0. */
static inline char *gdrb_cuda_version_text(int version, char *buf, size_t len)
{
	if (version <= 0)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%d.%d", version / 1000, version % 1000 / 10);
	return buf;
}

#endif
