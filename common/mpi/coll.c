/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_coll.h"
#include "gdrb_coll_data.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"

/* The MPI side of one size's call: the element type (or a contiguous group of them) and op. */
struct coll_state {
	struct gdrb_coll_geom g;
	size_t group;           /* elements per datatype unit (1, or more above INT_MAX) */
	MPI_Datatype type;
	MPI_Op op;
};

static const struct gdrb_coll *coll;
static const struct gdrb_coll_kind *kind;      /* coll->kind */
static struct coll_state state;
/* What the user-defined reduction of grouped elements applies. */
static enum gdrb_dtype group_dtype;
static enum gdrb_redop group_redop;
static MPI_Op group_op = MPI_OP_NULL;

static bool reduces(void) { return kind->flags & GDRB_COLL_REDUCES; }

/* MPI's type for each --dtype MPI has (half and bfloat16 are refused at setup). */
static MPI_Datatype mpi_type(enum gdrb_dtype t)
{
	static const MPI_Datatype types[] = { MPI_INT8_T, MPI_INT32_T, MPI_INT64_T, MPI_FLOAT,
					      MPI_DOUBLE };
	return types[t];
}

static MPI_Op mpi_op(enum gdrb_redop op)
{
	static const MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX };
	return ops[op];
}

/* Blocked sizes round down to a multiple of ranks x element size, at least one each. */
static size_t coll_adjust_size(const struct gdrb_ctx *c, size_t size)
{
	return gdrb_coll_size(kind, size, gdrb_dtype_sizes[gdrb_coll_params(c->p)->dtype], c->boot->size);
}

/* ---- grouped elements: counts above INT_MAX travel as contiguous groups ---- */

#define APPLY(T, in, io, n, OP) do {                                    \
		const T *x_ = (const T *)(in);                          \
		T *y_ = (T *)(io);                                      \
		size_t i_;                                              \
		for (i_ = 0; i_ < (n); i_++)                            \
			y_[i_] = OP(x_[i_], y_[i_]);                    \
	} while (0)
#define OP_SUM(a, b) ((a) + (b))
#define OP_PROD(a, b) ((a) * (b))
#define OP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define OP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define APPLY_ALL(T, in, io, n) do {                                    \
		switch (group_redop) {                                  \
		case GDRB_SUM: APPLY(T, in, io, n, OP_SUM); break;      \
		case GDRB_PROD: APPLY(T, in, io, n, OP_PROD); break;    \
		case GDRB_MIN: APPLY(T, in, io, n, OP_MIN); break;      \
		default: APPLY(T, in, io, n, OP_MAX); break;            \
		}                                                       \
	} while (0)

/* Predefined ops refuse derived types, so grouped elements get this one. */
static void group_reduce(void *in, void *inout, int *len, MPI_Datatype *type)
{
	int bytes = 0;
	size_t n;

	MPI_Type_size(*type, &bytes);
	n = (size_t)*len * (size_t)bytes / gdrb_dtype_sizes[group_dtype];
	switch (group_dtype) {
	case GDRB_INT8: APPLY_ALL(int8_t, in, inout, n); break;
	case GDRB_INT32: APPLY_ALL(int32_t, in, inout, n); break;
	case GDRB_INT64: APPLY_ALL(int64_t, in, inout, n); break;
	case GDRB_FLOAT: APPLY_ALL(float, in, inout, n); break;
	default: APPLY_ALL(double, in, inout, n); break;
	}
}

/* The smallest power-of-two group that brings a count within int; 0 if none divides it. */
static size_t group_for(size_t count)
{
	size_t g = 1;

	while (count / g > INT_MAX || count % g) {
		if (count % g || g > count)
			return 0;
		g *= 2;
	}
	return g;
}

/* ---- geometry ---- */

static int geometry(const struct gdrb_ctx *c, size_t size)
{
	struct coll_state *s = &state;
	MPI_Datatype base;

	if (s->g.valid && s->g.size == size && s->g.placement == c->placement)
		return 0;
	if (s->type != MPI_DATATYPE_NULL && s->group > 1)
		MPI_Type_free(&s->type);
	gdrb_coll_geometry(c, kind, size, &s->g);
	base = reduces() ? mpi_type(gdrb_coll_params(c->p)->dtype) : MPI_BYTE;
	s->op = reduces() ? mpi_op(gdrb_coll_params(c->p)->op) : MPI_OP_NULL;
	s->type = base;
	s->group = group_for(s->g.per_call);
	if (s->group > 1) {
		if (MPI_Type_contiguous((int)s->group, base, &s->type) != MPI_SUCCESS ||
		    MPI_Type_commit(&s->type) != MPI_SUCCESS)
			return GDRB_ERR;
		if (reduces())
			s->op = group_op;
	}
	return 0;
}

/* ---- driver callbacks ---- */

static void coll_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	int n;

	if (kind->layout == GDRB_LAYOUT_NONE) {
		snprintf(buf, len, "%s: no payload, one row of size 0", kind->name);
		return;
	}
	/* --sync's line first: how calls are timed, then what each call is. */
	n = snprintf(buf, len, "sync %s: %s\n# %s:", gdrb_sync_names[cp->sync],
		     cp->sync == GDRB_SYNC_BARRIER ?
		     "an untimed barrier before every call; a sample is one call on one rank, from leaving the barrier to the call's return" :
		     "calls back to back; a sample is the time between one call's return and the next's on one rank (a root may return before the data arrived)",
		     kind->name);
	if (n > 0 && (size_t)n < len)
		gdrb_coll_describe_call(c, kind, buf + n, len - (size_t)n);
}

static bool coll_uses_send(const struct gdrb_ctx *c)
{
	return gdrb_coll_uses_send(c, kind);
}

static size_t coll_placements(const struct gdrb_ctx *c, enum gdrb_placement *pl)
{
	return gdrb_coll_placements(c, kind, pl);
}

static double coll_bus_factor(const struct gdrb_ctx *c)
{
	return kind->bus_factor(c->boot->size);
}

static int coll_setup(struct gdrb_ctx *c)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	size_t i;
	int rc;

	state.type = MPI_DATATYPE_NULL;
	if (reduces() && (cp->dtype == GDRB_HALF || cp->dtype == GDRB_BFLOAT16)) {
		gdrb_usage_err("--dtype %s: MPI has no such type; accepted here: int8, int32, int64, float, double (half and bfloat16 are for the gdrb_nccl_* binaries)",
			       gdrb_dtype_names[cp->dtype]);
		return GDRB_ERR_USAGE;
	}
	rc = gdrb_coll_check_params(c, kind);
	if (rc)
		return rc;
	for (i = 0; i < c->p->sizes.n && kind->layout != GDRB_LAYOUT_NONE; i++) {
		size_t size = coll_adjust_size(c, c->p->sizes.v[i]);
		size_t per_call = size / gdrb_coll_elem_size(c, kind) / (gdrb_coll_blocked(kind) ? (size_t)c->boot->size : 1);

		if (group_for(per_call))
			continue;
		gdrb_usage_err("-m: %zu bytes give %zu elements per call, above INT_MAX and not a multiple of a power of two that brings them within it; use a power-of-two size",
			       size, per_call);
		return GDRB_ERR_USAGE;
	}
	if (reduces()) {
		group_dtype = cp->dtype;
		group_redop = cp->op;
		if (MPI_Op_create(group_reduce, 1, &group_op) != MPI_SUCCESS)
			return GDRB_ERR;
	}
	rc = gdrb_mpi_check_direct(c);
	if (kind->layout == GDRB_LAYOUT_NONE)
		c->variants[0].how = "MPI_Barrier";
	return rc;
}

/* The vector cut into fragments: kinds whose every rank holds the whole vector, no blocks. */
static bool pipelines(void)
{
	return !gdrb_coll_blocked(kind) &&
	       (kind->layout == GDRB_LAYOUT_FULL || kind->layout == GDRB_LAYOUT_ONE_BUF);
}

static size_t coll_paths(const struct gdrb_ctx *c, struct gdrb_variant *v)
{
	size_t i, n;

	if (!pipelines())
		return gdrb_run_paths(c->p->mem, GDRB_SHAPE_COLLECTIVE, c->p->staging, v);
	n = gdrb_run_paths(c->p->mem, GDRB_SHAPE_MESSAGES, c->p->staging, v);
	for (i = 1; i < n; i++)
		v[i].how = v[i].pipelined ?
			"pipelined: the vector cut into fragments, one collective call per fragment on pinned slots; the copies device->pinned of the next fragments and pinned->device of the last one's result (cudaMemcpyAsync, a stream per direction) overlap the call, copies timed; the MPI call runs at the fragment's size" :
			"serial: cudaMemcpy of the whole buffer to pinned memory before the collective and back after it, copies timed";
	return n;
}

/* Wait for the slot of fragment f, then start copying fragment f of src into it. */
static int pipe_fill(struct gdrb_ring *r, size_t f, size_t frag, const struct gdrb_buf *src,
		     size_t off, size_t len)
{
	size_t at = f * frag, n = len - at < frag ? len - at : frag;

	return gdrb_ring_wait(r, f) || gdrb_ring_fill(r, f, src, off + at, n) ? GDRB_ERR : 0;
}

/*
 * Pipelined staging of a collective: fragment k's call runs while the copies of
 * the next fragments into their slots and of fragment k-1's result out of its
 * slot proceed on the rings' streams. The input's ring is the receive ring when
 * the input lives in the receive buffer (in place, bcast): it holds fragments
 * in flight both ways, so it reads one fragment less ahead.
 */
static int coll_pipe(struct gdrb_ctx *c)
{
	const struct coll_state *s = &state;
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	struct gdrb_ring *in = s->g.in_recv ? &c->in_ring : &c->out_ring, *res = &c->in_ring;
	const struct gdrb_buf *src = s->g.in_recv ? &c->recv : &c->send;
	size_t len = s->g.in_len ? s->g.in_len : s->g.out_len, frag = res->chunk / s->g.elem * s->g.elem;
	size_t nf = (len + frag - 1) / frag, ahead = res->slots - (in == res ? 2 : 1), issued = 0, k;
	struct gdrb_coll_call call;

	call.type = reduces() ? mpi_type(cp->dtype) : MPI_BYTE;
	call.op = reduces() ? mpi_op(cp->op) : MPI_OP_NULL;
	call.root = cp->root;
	for (k = 0; k < nf; k++) {
		size_t n = len - k * frag < frag ? len - k * frag : frag;

		for (; s->g.in_len && issued < nf && issued <= k + ahead; issued++)
			if (pipe_fill(in, issued, frag, src, s->g.in_off, len))
				return GDRB_ERR;
		/*
		 * Fragment k's input in its slot, and its result slot free of the copy out of
		 * fragment k - slots: where the input has its own ring, or no input is filled
		 * here (a bcast's non-root receives into the slot), that copy is waited for now.
		 */
		if ((s->g.in_len && gdrb_ring_wait(in, k)) ||
		    ((in != res || !s->g.in_len) && gdrb_ring_wait(res, k)))
			return GDRB_ERR;
		call.send = s->g.send_in_place ? MPI_IN_PLACE : gdrb_ring_slot(in, k);
		call.recv = s->g.recv_in_place ? MPI_IN_PLACE : gdrb_ring_slot(res, k);
		call.count = (int)(n / s->g.elem);
		if (coll->call(&call) != MPI_SUCCESS)
			return GDRB_ERR;
		if (s->g.out_len && gdrb_ring_drain(res, k, &c->recv, s->g.out_off + k * frag, n))
			return GDRB_ERR;
	}
	/* The last slots' copies to the device (gdrb_ring_wait: the test hook can remove this wait). */
	for (k = nf > res->slots ? nf - res->slots : 0; k < nf; k++)
		if (gdrb_ring_wait(res, k))
			return GDRB_ERR;
	return 0;
}

static int coll_iteration(struct gdrb_ctx *c, size_t size)
{
	struct coll_state *s = &state;
	struct gdrb_coll_call k;
	bool staged = c->variant->staged;

	if (geometry(c, size))
		return GDRB_ERR;
	if (c->variant->pipelined && (s->g.in_len || s->g.out_len))
		return coll_pipe(c);
	if (staged && s->g.in_len &&
	    gdrb_buf_copy(s->g.in_recv ? &c->recv_bounce : &c->send_bounce, s->g.in_off,
			  s->g.in_recv ? &c->recv : &c->send, s->g.in_off, s->g.in_len))
		return GDRB_ERR;
	k.send = s->g.send_in_place ? MPI_IN_PLACE : gdrb_wire_send(c);
	k.recv = s->g.recv_in_place ? MPI_IN_PLACE : gdrb_wire_recv(c);
	k.count = (int)(s->g.per_call / s->group);
	k.type = s->type;
	k.op = s->op;
	k.root = gdrb_coll_params(c->p)->root;
	if (coll->call(&k) != MPI_SUCCESS)
		return GDRB_ERR;
	if (staged && s->g.out_len && gdrb_buf_copy(&c->recv, 0, &c->recv_bounce, 0, s->g.out_len))
		return GDRB_ERR;
	return 0;
}

/* Validation: every rank writes its input for this iteration (untimed). */
static int coll_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	if (geometry(c, size))
		return GDRB_ERR;
	return gdrb_coll_fill(c, kind, &state.g, iter);
}

static uint64_t coll_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	(void)size;
	return gdrb_coll_verify(c, kind, &state.g, iter);
}

static void coll_teardown(struct gdrb_ctx *c)
{
	(void)c;
	if (state.group > 1 && state.type != MPI_DATATYPE_NULL)
		MPI_Type_free(&state.type);
	state.group = 0;
	state.g.valid = false;
	if (group_op != MPI_OP_NULL)
		MPI_Op_free(&group_op);
	gdrb_coll_data_free();
}

/* Collectives under --sync barrier: an untimed barrier before every call. */
static bool coll_barrier_each(const struct gdrb_ctx *c)
{
	return kind->layout != GDRB_LAYOUT_NONE && gdrb_coll_params(c->p)->sync == GDRB_SYNC_BARRIER;
}

int gdrb_coll_main(const struct gdrb_coll *desc, const struct gdrb_opt_group *const *known,
		   int argc, char **argv)
{
	static struct gdrb_opt_use groups[] = {
		{ &gdrb_coll_opts, GDRB_COLL_OPT_SYNC },
		{ &gdrb_mpi_opts, GDRB_MPI_OPT_CUDA },
		{ NULL, 0 },
	};
	unsigned core = GDRB_OPTG_MEM;
	struct gdrb_bench bench;

	coll = desc;
	kind = desc->kind;
	groups[0].select |= gdrb_coll_opt_select(kind);
	if (kind->layout == GDRB_LAYOUT_NONE) {
		core = GDRB_OPTG_NO_SIZES;
		groups[0].select = 0;
		groups[1].select = 0;
	}
	bench = (struct gdrb_bench){
		.name = kind->name,
		.layer = "mpi",
		.gpu_reg = GDRB_MPI_GPU_REG,
		.boot_is_wire = true,
		.summary = desc->summary,
		.metric = GDRB_METRIC_LAT,
		.traffic = GDRB_TRAFFIC_COLLECTIVE,
		.opt_core = core,
		.opt_groups = groups,
		.opt_known = known,
		.barrier_each = coll_barrier_each,
		.bus_factor = coll_bus_factor,
		.adjust_size = coll_adjust_size,
		.describe = coll_describe,
		.uses_send = coll_uses_send,
		.placements = coll_placements,
		.paths = coll_paths,
		.setup = coll_setup,
		.iteration = coll_iteration,
		.end = gdrb_mpi_transport_end,
		.prepare = coll_prepare,
		.check = coll_check,
		.teardown = coll_teardown,
	};
	return gdrb_main(&bench, &gdrb_boot_mpi_ucx, argc, argv);
}
