/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL collectives on the common driver (gdrb_nccl.h), on the collectives' data (gdrb_coll_data.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_coll_data.h"
#include "gdrb_coll_opts.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_nccl.h"
#include "nccl_batch.h"
#include "nccl_int.h"

static const struct gdrb_nccl_coll *coll;
static struct gdrb_coll_kind kind;      /* the table's entry with NCCL's name and flags */
static struct gdrb_coll_geom geom;

static bool reduces(void) { return kind.flags & GDRB_COLL_REDUCES; }

static ncclDataType_t nccl_type(enum gdrb_dtype t)
{
	switch (t) {
	case GDRB_INT8: return ncclInt8;
	case GDRB_INT32: return ncclInt32;
	case GDRB_INT64: return ncclInt64;
	case GDRB_FLOAT: return ncclFloat32;
	case GDRB_HALF: return ncclFloat16;
#if HAVE_DECL_NCCLBFLOAT16
	case GDRB_BFLOAT16: return ncclBfloat16;
#endif
	default: return ncclFloat64;
	}
}

static ncclRedOp_t nccl_op(enum gdrb_redop op)
{
	static const ncclRedOp_t ops[] = { ncclSum, ncclProd, ncclMin, ncclMax };

	return ops[op];
}

static size_t nccl_adjust_size(const struct gdrb_ctx *c, size_t size)
{
	return gdrb_coll_size(&kind, size, gdrb_dtype_sizes[gdrb_coll_params(c->p)->dtype], c->boot->size);
}

static double nccl_bus_factor(const struct gdrb_ctx *c)
{
	return kind.bus_factor(c->boot->size);
}

static bool nccl_uses_send(const struct gdrb_ctx *c)
{
	return gdrb_coll_uses_send(c, &kind);
}

static size_t nccl_placements(const struct gdrb_ctx *c, enum gdrb_placement *pl)
{
	return gdrb_coll_placements(c, &kind, pl);
}

/*
 * The geometry at size, in NCCL's in-place convention: the input where the
 * MPI convention puts it, but reduce_scatter's output at this rank's block of
 * the buffer (recvbuff == sendbuff + rank x recvcount).
 */
static void geometry(const struct gdrb_ctx *c, size_t size)
{
	if (geom.valid && geom.size == size && geom.placement == c->placement)
		return;
	gdrb_coll_geometry(c, &kind, size, &geom);
	if (kind.layout == GDRB_LAYOUT_SCATTER && geom.send_in_place)
		geom.out_off = (size_t)c->boot->rank * geom.block * geom.elem;
}

static void nccl_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	int n;

	gdrb_nccl_timing_describe(c, buf, len);
	n = (int)strlen(buf);
	if ((size_t)n + 4 < len)
		n += snprintf(buf + n, len - (size_t)n, "\n# %s:", kind.name);
	if (n > 0 && (size_t)n < len)
		gdrb_coll_describe_call(c, &kind, buf + n, len - (size_t)n);
	n = (int)strlen(buf);
	if ((size_t)n + 4 < len) {
		snprintf(buf + n, len - (size_t)n, "\n# ");
		gdrb_nccl_describe(c, buf + n + 3, len - (size_t)n - 3);
	}
}

static int nccl_setup(struct gdrb_ctx *c)
{
	int rc = gdrb_nccl_check_mem(c);

	if (!rc)
		rc = gdrb_coll_check_params(c, &kind);
	if (rc)
		return rc;
	return gdrb_nccl_open(c);
}

/* One call, both buffers `shift` bytes further on (the rotation of nccl_batch.h). */
static int nccl_issue(struct gdrb_ctx *c, size_t size, size_t shift)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	struct gdrb_nccl_call k;

	geometry(c, size);
	k.send = (const char *)(geom.in_recv ? c->recv.ptr : c->send.ptr) + shift + geom.in_off;
	k.recv = (char *)c->recv.ptr + shift + geom.out_off;
	k.count = geom.per_call;
	k.elem = geom.elem;
	k.type = reduces() ? nccl_type(cp->dtype) : ncclInt8;
	k.op = nccl_op(cp->op);
	k.root = cp->root;
	k.nranks = c->boot->size;
	k.comm = gdrb_nccl()->comm;
	k.stream = gdrb_nccl()->stream;
	return gdrb_nccl_check(c, coll->call(&k), kind.name, size);
}

static int nccl_begin(struct gdrb_ctx *c, size_t size)
{
	return gdrb_nccl_timing_begin(c, size, nccl_issue, kind.name);
}

static int nccl_iteration(struct gdrb_ctx *c, size_t size)
{
	return gdrb_nccl_timing_iteration(c, size, nccl_issue, kind.name);
}

/* The geometry of the validated call: both buffers at its rotated offset. */
static struct gdrb_coll_geom checked_geometry(struct gdrb_ctx *c, size_t size, int prepare)
{
	struct gdrb_coll_geom g;
	size_t shift = gdrb_nccl_checked_shift(c, size, prepare);

	geometry(c, size);
	g = geom;
	g.in_off += shift;
	g.out_off += shift;
	c->check_off = g.out_off;
	return g;
}

static int nccl_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct gdrb_coll_geom g = checked_geometry(c, size, 1);

	return gdrb_coll_fill(c, &kind, &g, iter);
}

static uint64_t nccl_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct gdrb_coll_geom g = checked_geometry(c, size, 0);

	return gdrb_coll_verify(c, &kind, &g, iter);
}

static void nccl_teardown(struct gdrb_ctx *c)
{
	(void)c;
	gdrb_nccl_timing_release();
	gdrb_nccl_close();
	gdrb_coll_data_free();
	geom.valid = false;
}

int gdrb_nccl_coll_main(const struct gdrb_nccl_coll *desc, struct gdrb_boot *boot,
			const struct gdrb_opt_group *const *known, int argc, char **argv)
{
	static struct gdrb_opt_use groups[] = {
		{ &gdrb_coll_opts, 0 },
		{ &gdrb_nccl_opts, GDRB_NCCL_OPTS },
		{ NULL, 0 },
	};
	struct gdrb_bench bench;

	coll = desc;
	kind = *desc->kind;
	kind.name = desc->name;
	kind.flags &= ~desc->no_flags;
	groups[0].select = gdrb_coll_opt_select(&kind);
	gdrb_nccl_bench(&bench, kind.name, desc->summary, groups, known);
	bench.bus_factor = nccl_bus_factor;
	bench.adjust_size = nccl_adjust_size;
	bench.describe = nccl_describe;
	bench.uses_send = nccl_uses_send;
	bench.placements = nccl_placements;
	bench.setup = nccl_setup;
	bench.begin = nccl_begin;
	bench.iteration = nccl_iteration;
	bench.prepare = nccl_prepare;
	bench.check = nccl_check;
	bench.teardown = nccl_teardown;
	return gdrb_main(&bench, boot, argc, argv);
}
