/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory kinds that exist only in the tests: the worked example of
 * docs/architecture.md, "Adding a memory kind". Each is a struct
 * gdrb_mem_kind_ops registered before gdrb_main, and the driver runs them end
 * to end with no edit to a core file: it includes public headers only.
 *   fake        host memory behind the kind's own ops, no GPU, no staged path
 *   fakestaged  the same ops, marked as GPU memory with staged paths: the
 *               driver adds them, --staging applies, the bounce buffers come
 *   fakegpu     needs a GPU: without one the run is unsupported (exit 77)
 * The ops count their allocations, and the benchmark's describe line says
 * how many buffers of the kind the driver took, proving the kind's ops served
 * them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_boot.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_mem.h"
#include "gdrb_transports.h"

static unsigned allocs;

static int fake_alloc(struct gdrb_buf *buf, size_t len)
{
	buf->ptr = malloc(len);
	if (!buf->ptr) {
		gdrb_err("fake memory: cannot allocate %zu bytes", len);
		return GDRB_ERR;
	}
	allocs++;
	return 0;
}

static void fake_free(struct gdrb_buf *buf)
{
	free(buf->ptr);
}

static int fake_to_host(void *dst, const struct gdrb_buf *src, size_t off, size_t len)
{
	memcpy(dst, (const char *)src->ptr + off, len);
	return 0;
}

static int fake_from_host(struct gdrb_buf *dst, size_t off, const void *src, size_t len)
{
	memcpy((char *)dst->ptr + off, src, len);
	return 0;
}

static const struct gdrb_mem_ops fake_ops = {
	.name = "fake",
	.how = "malloc behind the test's own memory kind",
	.host_accessible = true,
	.pageable = true,
	.alloc = fake_alloc,
	.free = fake_free,
	.to_host = fake_to_host,
	.from_host = fake_from_host,
};

static const struct gdrb_mem_ops *fake_resolve(bool gpu_opened, const char **why)
{
	(void)gpu_opened;
	*why = NULL;
	return &fake_ops;
}

static const struct gdrb_mem_ops *fakegpu_resolve(bool gpu_opened, const char **why)
{
	*why = gpu_opened ? NULL : "no usable GPU was opened";
	return gpu_opened ? &fake_ops : NULL;
}

static const struct gdrb_mem_kind_ops fake_kinds[] = {
	{ .name = "fake", .resolve = fake_resolve },
	{ .name = "fakestaged", .on_gpu = true, .staged = true, .resolve = fake_resolve },
	{ .name = "fakegpu", .opens_gpu = true, .needs_gpu = true, .on_gpu = true,
	  .resolve = fakegpu_resolve },
};

/* One message: out through the staged path's bounce buffer where it has one, back in. */
static int fake_iteration(struct gdrb_ctx *c, size_t size)
{
	if (gdrb_stage_out(c, 0, size))
		return GDRB_ERR;
	if (c->variant->staged && !c->variant->pipelined)
		memcpy(c->recv_bounce.ptr, c->send_bounce.ptr, size);
	else
		memcpy(c->recv.ptr, c->send.ptr, size);
	return gdrb_stage_in(c, 0, size);
}

static void fake_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	(void)c;
	snprintf(buf, len, "fake memory: %u buffer(s) allocated by the kind's ops", allocs);
}

static const struct gdrb_bench fake_mem_copy = {
	.name = "fake_mem_copy",
	.layer = "fake",
	.summary = "A copy within one process on the test-only memory kinds",
	.metric = GDRB_METRIC_LAT,
	.traffic = GDRB_TRAFFIC_LOCAL,
	.opt_core = GDRB_OPTG_MEM,
	.opt_known = gdrb_opt_catalog,
	.describe = fake_describe,
	.iteration = fake_iteration,
};

int main(int argc, char **argv)
{
	size_t i;

	for (i = 0; i < sizeof(fake_kinds) / sizeof(fake_kinds[0]); i++)
		if (gdrb_mem_kind_register(&fake_kinds[i]) < 0)
			return GDRB_EXIT_FAIL;
	return gdrb_main(&fake_mem_copy, &gdrb_boot_self, argc, argv);
}
