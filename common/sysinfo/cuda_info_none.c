/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA inventory's twin for builds without CUDA. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_cuda_info.h"
#include "gdrb_log.h"

int gdrb_cuda_inventory(struct gdrb_cuda_inventory *inv, char *why, size_t len)
{
	memset(inv, 0, sizeof(*inv));
	snprintf(why, len, "%s", GDRB_NO_CUDA);
	return GDRB_ERR_UNSUPP;
}
