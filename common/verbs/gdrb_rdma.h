/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What libibverbs itself says about RDMA devices (sysfs alone cannot tell
 * whether a user-space provider is installed, nor the active MTU). Backend
 * rdma.c, or rdma_none.c when built without verbs.
 */
#ifndef GDRB_RDMA_H
#define GDRB_RDMA_H

#include <stdbool.h>
#include <stddef.h>

#define GDRB_RDMA_NAME_LEN 64

struct gdrb_rdma_port_attr {
	int state;                      /* GDRB_PORT_* of gdrb_topo.h */
	int active_mtu, max_mtu;        /* bytes */
	bool ethernet;                  /* link layer */
};

/*
 * Devices libibverbs lists (at most max names). 0, or GDRB_ERR_UNSUPP with
 * *why when libibverbs cannot list devices (no kernel support, not built).
 */
int gdrb_rdma_devices(char (*names)[GDRB_RDMA_NAME_LEN], size_t max, size_t *n,
		      char *why, size_t len);

/* ibv_query_port on device dev. 0, or GDRB_ERR with *why. */
int gdrb_rdma_query_port(const char *dev, unsigned port, struct gdrb_rdma_port_attr *attr,
			 char *why, size_t len);

#endif
