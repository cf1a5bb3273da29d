/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy bandwidth between host and GPU memory, on the copy engines. Timing
 * call (default): what the staged path pays per message, one cudaMemcpy per
 * sample from pageable and from pinned memory, and device to device. Timing
 * events: nvbandwidth's copy-engine tests, batches of copies timed by CUDA
 * events (copy_timed.c), each direction alone and both at once. --p2p: between
 * the node's GPUs instead (or those of --p2p-gpus), every ordered pair direct
 * and staged (copy_p2p.c).
 * One process.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_p2p.h"
#include "copy_timed.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_pattern.h"
#include "gdrb_run.h"
#include "gdrb_transports.h"

enum copy_timing { TIMING_CALL, TIMING_EVENTS, TIMING_COUNT };

static const char *const timing_names[TIMING_COUNT] = { "call", "events" };

/* nvbandwidth's --loopCount: copies per sample under --copy-timing events. */
#define DEF_BATCH 16

struct copy_params {
	int timing;             /* enum copy_timing */
	unsigned batch;         /* 0: DEF_BATCH */
	int p2p;                /* enum copy_p2p_mode */
	uint64_t p2p_gpus;      /* --p2p-gpus: a bit per GPU; 0: every GPU */
};

/* The buffers; the far ones (the opposite direction of a bidirectional copy) hold twice the largest size. */
enum { PAGEABLE, PINNED, DEV_SRC, DEV_DST, PINNED_FAR, DEV_FAR, N_ENDS };

static const enum gdrb_mem_kind end_kind[N_ENDS] = {
	GDRB_MEM_HOST, GDRB_MEM_PINNED, GDRB_MEM_DEVICE, GDRB_MEM_DEVICE, GDRB_MEM_PINNED, GDRB_MEM_DEVICE,
};

static const struct copy {
	const char *label, *mem, *path, *how;
	int timing;
	int src, dst;
	int far_src, far_dst;   /* the opposite direction at once; -1: none */
} copies[] = {
	{ "h2d_pageable", "host", "h2d", "cudaMemcpy pageable host -> device, then cudaStreamSynchronize (the tail lands after it returns)", TIMING_CALL, PAGEABLE, DEV_DST, -1, -1 },
	{ "h2d_pinned", "pinned", "h2d", "cudaMemcpy pinned host -> device", TIMING_CALL, PINNED, DEV_DST, -1, -1 },
	{ "d2h_pageable", "host", "d2h", "cudaMemcpy device -> pageable host", TIMING_CALL, DEV_SRC, PAGEABLE, -1, -1 },
	{ "d2h_pinned", "pinned", "d2h", "cudaMemcpy device -> pinned host", TIMING_CALL, DEV_SRC, PINNED, -1, -1 },
	{ "d2d", "device", "d2d", "cudaMemcpy device -> device, then cudaStreamSynchronize (it returns before the copy ends)", TIMING_CALL, DEV_SRC, DEV_DST, -1, -1 },
	{ "h2d_batch", "pinned", "h2d-batch", "cudaMemcpyAsync pinned host -> device, a batch per sample between CUDA events (nvbandwidth host_to_device_memcpy_ce)", TIMING_EVENTS, PINNED, DEV_DST, -1, -1 },
	{ "d2h_batch", "pinned", "d2h-batch", "cudaMemcpyAsync device -> pinned host, a batch per sample between CUDA events (nvbandwidth device_to_host_memcpy_ce)", TIMING_EVENTS, DEV_SRC, PINNED, -1, -1 },
	{ "h2d_bidir", "pinned", "h2d-bidir", "cudaMemcpyAsync pinned host -> device timed while device -> pinned host runs on a second stream (nvbandwidth host_to_device_bidirectional_memcpy_ce)", TIMING_EVENTS, PINNED, DEV_DST, DEV_FAR, PINNED_FAR },
	{ "d2h_bidir", "pinned", "d2h-bidir", "cudaMemcpyAsync device -> pinned host timed while pinned host -> device runs on a second stream (nvbandwidth device_to_host_bidirectional_memcpy_ce)", TIMING_EVENTS, DEV_SRC, PINNED, PINNED_FAR, DEV_FAR },
	{ "d2d_batch", "device", "d2d-batch", "cudaMemcpyAsync device -> device, a batch per sample between CUDA events (nvbandwidth device_local_copy)", TIMING_EVENTS, DEV_SRC, DEV_DST, -1, -1 },
};

#define N_COPIES (sizeof(copies) / sizeof(copies[0]))

struct copy_bufs {
	struct gdrb_buf end[N_ENDS];
	struct copy_timed timed;
	bool timed_open;
};

static int check_params(const struct gdrb_params *p, const void *params)
{
	const struct copy_params *cp = params;

	(void)p;
	if (cp->p2p && (cp->timing != TIMING_CALL || cp->batch)) {
		gdrb_usage_err("--p2p: GPU-to-GPU copies are timed per copy on the host clock; leave out --copy-timing and --copy-batch");
		return GDRB_ERR_USAGE;
	}
	if (cp->p2p_gpus && !cp->p2p) {
		gdrb_usage_err("--p2p-gpus: chooses the GPUs of --p2p; add --p2p (or leave out --p2p-gpus)");
		return GDRB_ERR_USAGE;
	}
	if (cp->p2p_gpus && !(cp->p2p_gpus & (cp->p2p_gpus - 1))) {
		gdrb_usage_err("--p2p-gpus: names one GPU; GPU-to-GPU copies need two or more, like 0,2,5 or 0-3");
		return GDRB_ERR_USAGE;
	}
	if (cp->batch && cp->timing != TIMING_EVENTS) {
		gdrb_usage_err("--copy-batch: counts the copies of a sample under --copy-timing events; with --copy-timing call a sample is one copy");
		return GDRB_ERR_USAGE;
	}
	return 0;
}

static void copy_defaults(void *params)
{
	*(struct copy_params *)params = (struct copy_params){ .timing = TIMING_CALL };
}

static const struct gdrb_opt copy_table[] = {
	{ .name = "copy-timing", .arg = "MODE",
	  .help = "call: one cudaMemcpy per sample, timed on the host clock to its end (the staged path's per-message cost; rows h2d, d2h, d2d); events: nvbandwidth's copy-engine shape, the stream held until a batch of cudaMemcpyAsync is enqueued and the batch timed by CUDA events (rows h2d-batch, d2h-batch, h2d-bidir, d2h-bidir, d2d-batch, pinned and device memory) (default call)",
	  .when = 1, .parse = gdrb_opt_enum, .off = offsetof(struct copy_params, timing),
	  .names = timing_names, .nnames = TIMING_COUNT, .what = "mode" },
	{ .name = "copy-batch", .arg = "N",
	  .help = "timed copies per sample under --copy-timing events, from 1 to 1024 (default " GDRB_STR(DEF_BATCH) ", nvbandwidth's --loopCount)",
	  .when = 1, .parse = gdrb_opt_uint, .off = offsetof(struct copy_params, batch), .min = 1, .max = 1024 },
	{ .name = "p2p", .arg = "DIRS",
	  .help = "copies between the node's GPUs instead, every ordered pair (the CSV pair gpuI->gpuJ), direct with peer access enabled (rows p2p-direct) and through pinned host memory (p2p-staged), and a matrix per size: uni (one direction at a time), bidir (both at once: p2p-direct-bidir, p2p-staged-bidir) or both (the default of a bare --p2p); a pair without peer access has its direct rows n/a with CUDA's answer; needs two GPUs (else exit 77)",
	  .when = 1, .parse = gdrb_opt_enum, .off = offsetof(struct copy_params, p2p),
	  .names = copy_p2p_mode_names, .nnames = P2P_MODES, .what = "direction set",
	  .value = P2P_BOTH, .flags = GDRB_OPT_VALUE_OPTIONAL },
	{ .name = "p2p-gpus", .arg = "LIST",
	  .help = "with --p2p: only the pairs among these GPUs, numbered as CUDA numbers them (after CUDA_VISIBLE_DEVICES), as a list like 0,2,5 or a range like 0-3 (or both: 0-2,5), each GPU once, two or more, every one on the node (default: every GPU)",
	  .when = 1, .parse = gdrb_opt_index_set, .off = offsetof(struct copy_params, p2p_gpus), .max = 63,
	  .what = "GPU numbers" },
};

static const struct gdrb_opt_group copy_opts = {
	.name = "copy",
	.opts = copy_table,
	.nopts = sizeof(copy_table) / sizeof(copy_table[0]),
	.size = sizeof(struct copy_params),
	.defaults = copy_defaults,
	.check = check_params,
};

static const struct copy_params *params_of(const struct gdrb_ctx *c)
{
	return gdrb_group_params(c->p, &copy_opts);
}

static unsigned batch_of(const struct gdrb_ctx *c)
{
	return params_of(c)->batch ? params_of(c)->batch : DEF_BATCH;
}

static const struct copy *copy_of(const struct gdrb_ctx *c)
{
	return &copies[c->variant->id];
}

static bool bidir(const struct copy *k)
{
	return k->far_src >= 0;
}

static int alloc_ends(struct copy_bufs *b, int timing, size_t max)
{
	bool used[N_ENDS] = { false };
	const char *why;
	size_t i;

	for (i = 0; i < N_COPIES; i++) {
		if (copies[i].timing != timing)
			continue;
		used[copies[i].src] = used[copies[i].dst] = true;
		if (bidir(&copies[i]))
			used[copies[i].far_src] = used[copies[i].far_dst] = true;
	}
	for (i = 0; i < N_ENDS; i++) {
		size_t len = i == PINNED_FAR || i == DEV_FAR ? 2 * max : max;

		if (used[i] && (gdrb_buf_alloc(&b->end[i], gdrb_mem_ops_get(end_kind[i], &why), len) ||
				gdrb_buf_fill_pattern(&b->end[i], 0, len, 1 + i)))
			return GDRB_ERR;
	}
	return 0;
}

static int copy_setup(struct gdrb_ctx *c)
{
	int timing = params_of(c)->timing;
	struct copy_bufs *b;
	size_t i;

	if (params_of(c)->p2p)
		return copy_p2p_setup(c, params_of(c)->p2p, params_of(c)->p2p_gpus);
	b = calloc(1, sizeof(*b));
	if (!b)
		return GDRB_ERR;
	c->priv = b;
	c->bufsize = gdrb_sizes_max(&c->p->sizes);
	if (alloc_ends(b, timing, c->bufsize))
		return GDRB_ERR;
	if (timing == TIMING_EVENTS) {
		b->timed_open = true;
		if (copy_timed_open(&b->timed))
			return GDRB_ERR;
	}
	c->nvariants = 0;
	for (i = 0; i < N_COPIES; i++)
		if (copies[i].timing == timing)
			c->variants[c->nvariants++] = (struct gdrb_variant){ .label = copies[i].label,
				.mem = copies[i].mem, .path = copies[i].path, .reg = "none",
				.how = copies[i].how, .supported = true, .id = (int)i };
	return 0;
}

static int copy_begin(struct gdrb_ctx *c, size_t size)
{
	struct copy_bufs *b = c->priv;
	bool events;

	(void)size;
	if (params_of(c)->p2p) {
		copy_p2p_begin(c);
		return 0;
	}
	events = copy_of(c)->timing == TIMING_EVENTS;
	c->calls_per_iter = events ? batch_of(c) : 1;
	b->timed.samples = b->timed.alone = 0;
	if (events)
		snprintf(c->lib_note, sizeof(c->lib_note), "copy engine: %u cudaMemcpyAsync per sample between CUDA events",
			 batch_of(c));
	else
		snprintf(c->lib_note, sizeof(c->lib_note), "copy engine: one cudaMemcpy per sample, host clock");
	return 0;
}

/* A bidirectional row whose opposite direction ended before the measured one in some samples says so. */
static int copy_end(struct gdrb_ctx *c, size_t size)
{
	struct copy_bufs *b = c->priv;
	size_t len = strlen(c->lib_note);

	(void)size;
	if (!params_of(c)->p2p && b->timed.alone)
		snprintf(c->lib_note + len, sizeof(c->lib_note) - len,
			 "; the opposite direction ended first in %llu of %llu samples, warm-up included (the measured one then ran alone at the end)",
			 (unsigned long long)b->timed.alone, (unsigned long long)b->timed.samples);
	return 0;
}

static void legs(struct gdrb_ctx *c, size_t size, struct copy_leg *measured, struct copy_leg *far)
{
	struct copy_bufs *b = c->priv;
	const struct copy *k = copy_of(c);

	*measured = (struct copy_leg){ &b->end[k->src], &b->end[k->dst], size };
	*far = bidir(k) ? (struct copy_leg){ &b->end[k->far_src], &b->end[k->far_dst], 2 * size } :
	       (struct copy_leg){ NULL, NULL, 0 };
}

static int copy_iteration(struct gdrb_ctx *c, size_t size)
{
	struct copy_bufs *b = c->priv;
	struct copy_leg measured, far;
	/* A validated iteration holds one copy (the driver's rule), and no warm-up. */
	unsigned n = c->checking ? 1 : batch_of(c), warm = c->checking ? 0 : COPY_WARM;

	if (params_of(c)->p2p)
		return copy_p2p_iteration(c, size);
	legs(c, size, &measured, &far);
	if (copy_of(c)->timing == TIMING_CALL)
		return gdrb_buf_copy(measured.dst, 0, measured.src, 0, size);
	return copy_timed_sample(&b->timed, &measured, bidir(copy_of(c)) ? &far : NULL, warm, n,
				 &c->device_us);
}

static int copy_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct copy_leg measured, far;
	uint64_t seed = gdrb_p2p_seed(size, iter, 0, 0);

	if (params_of(c)->p2p)
		return copy_p2p_prepare(c, size, iter);
	legs(c, size, &measured, &far);
	if (gdrb_buf_fill_pattern(measured.src, 0, size, seed))
		return GDRB_ERR;
	return bidir(copy_of(c)) ? gdrb_buf_fill_pattern(far.src, 0, far.len, seed + 1) : 0;
}

static uint64_t check_leg(struct gdrb_ctx *c, const struct copy_leg *leg, uint64_t seed, const char *which)
{
	size_t first = 0;
	uint64_t bad;

	/* The corruption test hook (GDRB_INJECT_CORRUPTION): a byte of each checked copy. */
	gdrb_run_corrupt(c->boot, leg->dst, 0, leg->len);
	bad = gdrb_buf_check_pattern(leg->dst, 0, leg->len, seed, &first);

	if (bad && bad != (uint64_t)-1)
		gdrb_mismatch(c, "%llu wrong byte(s) after %s%s at size %zu, first at byte %zu",
			      (unsigned long long)bad, c->variant->label, which, leg->len, first);
	return bad;
}

static uint64_t copy_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct copy_leg measured, far;
	uint64_t seed = gdrb_p2p_seed(size, iter, 0, 0), bad, far_bad;

	if (params_of(c)->p2p)
		return copy_p2p_check(c, size, iter);
	legs(c, size, &measured, &far);
	bad = check_leg(c, &measured, seed, "");
	if (bad == (uint64_t)-1 || !bidir(copy_of(c)))
		return bad;
	far_bad = check_leg(c, &far, seed + 1, " (its opposite direction)");
	return far_bad == (uint64_t)-1 ? far_bad : bad + far_bad;
}

static void copy_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	if (params_of(c)->p2p) {
		copy_p2p_describe(c, buf, len);
		return;
	}
	if (params_of(c)->timing == TIMING_CALL) {
		snprintf(buf, len, "copies on the copy engines only (cudaMemcpy; no SM copies): one copy per sample, timed on the host clock to its end (--copy-timing call)");
		return;
	}
	snprintf(buf, len, "copies on the copy engines only (cudaMemcpyAsync; no SM copies: nvbandwidth's _sm testcases are not comparable); --copy-timing events: per sample the stream is held by a host function (cudaLaunchHostFunc) until %d warm-up and %u timed copies are enqueued, then released, the sample being the time between CUDA events around the %u timed ones, per copy (nvbandwidth holds its stream with a spin kernel instead); bidir rows: the opposite direction at once on a second stream, twice the bytes per copy, started by the measured stream's start event; bw = size / mean time per copy",
		 COPY_WARM, batch_of(c), batch_of(c));
}

static void copy_teardown(struct gdrb_ctx *c)
{
	struct copy_bufs *b = c->priv;
	int i;

	if (params_of(c)->p2p) {
		copy_p2p_teardown(c);
		return;
	}
	if (!b)
		return;
	if (b->timed_open)
		copy_timed_close(&b->timed);
	for (i = 0; i < N_ENDS; i++)
		gdrb_buf_free(&b->end[i]);
	free(b);
	c->priv = NULL;
}

static int copy_preflight(struct gdrb_ctx *c)
{
	return params_of(c)->p2p ? copy_p2p_preflight(params_of(c)->p2p_gpus) : 0;
}

static const struct gdrb_bench copy_bw = {
	.name = "copy_bw",
	.layer = "local",
	.summary = "host<->GPU copy bandwidth on the copy engines: pageable against pinned host memory (the staged path's cost), or nvbandwidth's batches timed by CUDA events; or (--p2p) GPU to GPU, direct against staged",
	.metric = GDRB_METRIC_BW,
	.traffic = GDRB_TRAFFIC_LOCAL,
	.opt_core = 0,
	.opt_groups = (const struct gdrb_opt_use[]){ { &copy_opts, 1 }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.own_buffers = true,
	.needs_gpu = true,
	.preflight = copy_preflight,
	.setup = copy_setup,
	.describe = copy_describe,
	.begin = copy_begin,
	.iteration = copy_iteration,
	.end = copy_end,
	.prepare = copy_prepare,
	.check = copy_check,
	.teardown = copy_teardown,
	.select_subject = copy_p2p_select,
	.reported = copy_p2p_reported,
};

int main(int argc, char **argv)
{
	return gdrb_main(&copy_bw, &gdrb_boot_self, argc, argv);
}
