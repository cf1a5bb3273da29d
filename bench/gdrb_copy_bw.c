/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy bandwidth between host and GPU memory: what the staged path pays per
 * message. Host to device and device to host from pageable and from pinned
 * memory, and device to device, side by side. One process, no MPI.
 */
#include "config.h"

#include <stdlib.h>

#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_pattern.h"
#include "gdrb_transports.h"

enum { H2D_PAGEABLE, H2D_PINNED, D2H_PAGEABLE, D2H_PINNED, D2D, N_COPIES };

struct copy_bufs {
	struct gdrb_buf pageable, pinned, dev_src, dev_dst;
};

static const struct {
	const char *label, *mem, *path, *how;
} copies[N_COPIES] = {
	[H2D_PAGEABLE] = { "h2d_pageable", "host", "h2d", "cudaMemcpy pageable host -> device, then cudaStreamSynchronize (the tail lands after it returns)" },
	[H2D_PINNED] = { "h2d_pinned", "pinned", "h2d", "cudaMemcpy pinned host -> device" },
	[D2H_PAGEABLE] = { "d2h_pageable", "host", "d2h", "cudaMemcpy device -> pageable host" },
	[D2H_PINNED] = { "d2h_pinned", "pinned", "d2h", "cudaMemcpy device -> pinned host" },
	[D2D] = { "d2d", "device", "d2d", "cudaMemcpy device -> device, then cudaStreamSynchronize (it returns before the copy ends)" },
};

static void endpoints(struct gdrb_ctx *c, struct gdrb_buf **src, struct gdrb_buf **dst)
{
	struct copy_bufs *b = c->priv;

	switch (c->variant->id) {
	case H2D_PAGEABLE: *src = &b->pageable; *dst = &b->dev_dst; break;
	case H2D_PINNED: *src = &b->pinned; *dst = &b->dev_dst; break;
	case D2H_PAGEABLE: *src = &b->dev_src; *dst = &b->pageable; break;
	case D2H_PINNED: *src = &b->dev_src; *dst = &b->pinned; break;
	default: *src = &b->dev_src; *dst = &b->dev_dst; break;
	}
}

static int copy_setup(struct gdrb_ctx *c)
{
	size_t max = gdrb_sizes_max(&c->p->sizes);
	const char *why;
	struct copy_bufs *b;
	int i;

	b = calloc(1, sizeof(*b));
	if (!b)
		return GDRB_ERR;
	c->priv = b;
	c->bufsize = max;
	if (gdrb_buf_alloc(&b->pageable, gdrb_mem_ops_get(GDRB_MEM_HOST, &why), max) ||
	    gdrb_buf_alloc(&b->pinned, gdrb_mem_ops_get(GDRB_MEM_PINNED, &why), max) ||
	    gdrb_buf_alloc(&b->dev_src, gdrb_mem_ops_get(GDRB_MEM_DEVICE, &why), max) ||
	    gdrb_buf_alloc(&b->dev_dst, gdrb_mem_ops_get(GDRB_MEM_DEVICE, &why), max) ||
	    gdrb_buf_fill_pattern(&b->pageable, 0, max, 1) ||
	    gdrb_buf_fill_pattern(&b->pinned, 0, max, 2) ||
	    gdrb_buf_fill_pattern(&b->dev_src, 0, max, 3) ||
	    gdrb_buf_fill_pattern(&b->dev_dst, 0, max, 4))
		return GDRB_ERR;
	for (i = 0; i < N_COPIES; i++)
		c->variants[i] = (struct gdrb_variant){ .label = copies[i].label,
			.mem = copies[i].mem, .path = copies[i].path, .reg = "none",
			.how = copies[i].how, .supported = true, .id = i };
	c->nvariants = N_COPIES;
	return 0;
}

static int copy_iteration(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_buf *src, *dst;

	endpoints(c, &src, &dst);
	return gdrb_buf_copy(dst, 0, src, 0, size);
}

static int copy_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct gdrb_buf *src, *dst;

	endpoints(c, &src, &dst);
	return gdrb_buf_fill_pattern(src, 0, size, gdrb_p2p_seed(size, iter, 0, 0));
}

static uint64_t copy_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct gdrb_buf *src, *dst;
	size_t first = 0;
	uint64_t bad;

	endpoints(c, &src, &dst);
	bad = gdrb_buf_check_pattern(dst, 0, size, gdrb_p2p_seed(size, iter, 0, 0), &first);
	if (bad && bad != (uint64_t)-1)
		gdrb_mismatch(c, "%llu wrong byte(s) after %s at size %zu, first at byte %zu",
			      (unsigned long long)bad, c->variant->label, size, first);
	return bad;
}

static void copy_teardown(struct gdrb_ctx *c)
{
	struct copy_bufs *b = c->priv;

	if (!b)
		return;
	gdrb_buf_free(&b->pageable);
	gdrb_buf_free(&b->pinned);
	gdrb_buf_free(&b->dev_src);
	gdrb_buf_free(&b->dev_dst);
	free(b);
	c->priv = NULL;
}

static const struct gdrb_bench copy_bw = {
	.name = "copy_bw",
	.layer = "local",
	.summary = "host<->GPU copy bandwidth, pageable against pinned host memory (the staged path's cost)",
	.metric = GDRB_METRIC_BW,
	.traffic = GDRB_TRAFFIC_LOCAL,
	.opt_core = 0,
	.opt_known = gdrb_opt_catalog,
	.own_buffers = true,
	.needs_gpu = true,
	.setup = copy_setup,
	.iteration = copy_iteration,
	.prepare = copy_prepare,
	.check = copy_check,
	.teardown = copy_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&copy_bw, &gdrb_boot_self, argc, argv);
}
