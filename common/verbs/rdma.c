/* SPDX-License-Identifier: BSD-3-Clause */
/* libibverbs queries: device list and port attributes. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "gdrb_log.h"
#include "gdrb_rdma.h"

int gdrb_rdma_devices(char (*names)[GDRB_RDMA_NAME_LEN], size_t max, size_t *n,
		      char *why, size_t len)
{
	struct ibv_device **list;
	int i, num = 0;

	*n = 0;
	errno = 0;
	list = ibv_get_device_list(&num);
	if (!list) {
		snprintf(why, len, "ibv_get_device_list: %s", strerror(errno ? errno : ENODEV));
		return GDRB_ERR_UNSUPP;
	}
	for (i = 0; i < num && *n < max; i++)
		snprintf(names[(*n)++], GDRB_RDMA_NAME_LEN, "%s", ibv_get_device_name(list[i]));
	ibv_free_device_list(list);
	return 0;
}

static int mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

int gdrb_rdma_query_port(const char *dev, unsigned port, struct gdrb_rdma_port_attr *attr,
			 char *why, size_t len)
{
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	struct ibv_device **list;
	int i, num = 0, rc = GDRB_ERR;

	memset(attr, 0, sizeof(*attr));
	list = ibv_get_device_list(&num);
	if (!list) {
		snprintf(why, len, "ibv_get_device_list: %s", strerror(errno ? errno : ENODEV));
		return GDRB_ERR;
	}
	for (i = 0; i < num; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			break;
	if (i == num) {
		snprintf(why, len, "libibverbs does not list %s", dev);
		goto out_list;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx) {
		snprintf(why, len, "ibv_open_device(%s): %s", dev, strerror(errno));
		goto out_list;
	}
	rc = ibv_query_port(ctx, (uint8_t)port, &pa);
	if (rc) {
		snprintf(why, len, "ibv_query_port(%s, %u): %s", dev, port, strerror(rc));
		rc = GDRB_ERR;
		goto out_ctx;
	}
	attr->state = (int)pa.state;
	attr->active_mtu = mtu_bytes(pa.active_mtu);
	attr->max_mtu = mtu_bytes(pa.max_mtu);
	attr->ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	rc = 0;
out_ctx:
	ibv_close_device(ctx);
out_list:
	ibv_free_device_list(list);
	return rc;
}
