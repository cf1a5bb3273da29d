/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs queries' twin for builds without libibverbs. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_rdma.h"

#define NOT_BUILT "gdrbench was built without libibverbs; reconfigure with --with-verbs"

int gdrb_rdma_devices(char (*names)[GDRB_RDMA_NAME_LEN], size_t max, size_t *n,
		      char *why, size_t len)
{
	(void)names;
	(void)max;
	*n = 0;
	snprintf(why, len, NOT_BUILT);
	return GDRB_ERR_UNSUPP;
}

int gdrb_rdma_query_port(const char *dev, unsigned port, struct gdrb_rdma_port_attr *attr,
			 char *why, size_t len)
{
	(void)dev;
	(void)port;
	memset(attr, 0, sizeof(*attr));
	snprintf(why, len, NOT_BUILT);
	return GDRB_ERR_UNSUPP;
}
