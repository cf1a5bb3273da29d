/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU registration twin for builds without verbs or without CUDA. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_reg.h"

#define NOT_BUILT "not built: GPU registration needs both libibverbs and CUDA at build time; " \
		  "reconfigure with --with-verbs and --with-cuda"

bool gdrb_reg_built(void)
{
	return false;
}

void *gdrb_cuda_driver_entry(const char *symbol, const char **how)
{
	(void)symbol;
	*how = "none";
	return NULL;
}

static void not_built(struct gdrb_reg_attempt *att, enum gdrb_reg_mode mode)
{
	memset(att, 0, sizeof(*att));
	att->mode = mode;
	att->err = EOPNOTSUPP;
	snprintf(att->why, sizeof(att->why), NOT_BUILT);
}

static int sync_memops(void *ptr, struct gdrb_reg_attempt *att)
{
	(void)ptr;
	not_built(att, att->mode);
	return GDRB_ERR_UNSUPP;
}

static int reg_not_built(struct ibv_pd *pd, void *ptr, size_t len, int access,
			 struct gdrb_gpu_mr *m, struct gdrb_reg_attempt *att)
{
	(void)pd;
	(void)ptr;
	(void)len;
	(void)access;
	(void)m;
	not_built(att, att->mode);
	return GDRB_ERR_UNSUPP;
}

const struct gdrb_reg_ops gdrb_reg_backend_ops = {
	.sync_memops = sync_memops,
	.dmabuf = reg_not_built,
	.peermem = reg_not_built,
};

void gdrb_reg_gpu_release(struct gdrb_gpu_mr *m)
{
	m->mr = NULL;
	m->dmabuf_fd = -1;
}

int gdrb_reg_probe(const char *ibdev, int gpu, size_t len, enum gdrb_reg_mode mode,
		   struct gdrb_reg_attempt *att)
{
	(void)ibdev;
	(void)gpu;
	(void)len;
	not_built(att, mode);
	return GDRB_ERR;
}
