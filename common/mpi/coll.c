/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_coll.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"
#include "gdrb_pattern.h"
#include "gdrb_transports.h"
#include "gdrb_watchdog.h"

/* Per-size geometry of the collective on this rank; bytes unless named elements. */
struct coll_state {
	bool valid;
	size_t size;            /* effective size these fields hold for */
	size_t elem;            /* bytes per element */
	size_t total, block;    /* elements in the whole vector and in one block */
	bool in_recv;           /* the input lives in the receive buffer (in place) */
	size_t in_off, in_len;
	size_t out_len;         /* the output is recv[0, out_len) */
	bool send_in_place, recv_in_place;
	size_t per_call;        /* elements per call's count, before grouping */
	size_t group;           /* elements per datatype unit (1, or more above INT_MAX) */
	MPI_Datatype type;      /* the element type, or a contiguous group of them */
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

static size_t elem_size(const struct gdrb_ctx *c)
{
	return gdrb_coll_elem(kind, gdrb_dtype_sizes[gdrb_coll_params(c->p)->dtype]);
}

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

/* Blocked layouts split the vector in one block per rank (the table says which). */
static bool blocked(void)
{
	return gdrb_coll_blocked(kind);
}

/* Blocked sizes round down to a multiple of ranks x element size, at least one each. */
static size_t coll_adjust_size(const struct gdrb_ctx *c, size_t size)
{
	return gdrb_coll_size(kind, size, gdrb_dtype_sizes[gdrb_coll_params(c->p)->dtype], c->boot->size);
}

/*
 * ---- values ----
 * Every value is a small integer, so sums, products, minima and maxima are
 * exact in every type and order, and no integer result overflows: MPI leaves
 * overflow undefined (Open MPI's vectorised int8 sum saturates where scalar
 * code wraps), so a check that depended on it would test the library's
 * arithmetic rather than the transfer.
 */

/* Largest result each type holds exactly: int8 127, float 2^24, ... */
static int64_t exact_limit(enum gdrb_dtype t)
{
	static const int64_t limits[] = { INT8_MAX, INT32_MAX, INT64_MAX, 1 << 24,
					  (int64_t)1 << 53 };
	return limits[t];
}

/* Sums: n values of at most this cannot pass the type's limit (0: too many ranks). */
static uint64_t sum_room(const struct gdrb_ctx *c)
{
	int64_t room = exact_limit(gdrb_coll_params(c->p)->dtype) / c->boot->size;

	return room > 61 ? 61 : (uint64_t)room;
}

static int64_t value(const struct gdrb_ctx *c, int rank, size_t j, uint64_t iter)
{
	uint64_t r = (uint64_t)rank, n = (uint64_t)c->boot->size, room;

	switch (gdrb_coll_params(c->p)->op) {
	case GDRB_SUM:
		room = sum_room(c);
		if (room < 1)
			return rank == 0 ? 1 + (int64_t)((j * 7 + iter * 13) % 61) : 0;
		return 1 + (int64_t)((r * 131 + j * 7 + iter * 13) % room);
	case GDRB_PROD:
		/* Two ranks, chosen by index, contribute factors: products stay at most 15. */
		if (r == (j + iter) % n)
			return 1 + (int64_t)((j + iter) % 5);
		if (n > 1 && r == (j + iter + 1) % n)
			return 1 + (int64_t)(j % 3);
		return 1;
	default:
		return (int64_t)((r * 37 + j * 11 + iter * 5) % 97) - 48;
	}
}

/* Store v as element i of a host array of type t (v fits every type). */
static void store(void *a, enum gdrb_dtype t, size_t i, int64_t v)
{
	switch (t) {
	case GDRB_INT8: ((int8_t *)a)[i] = (int8_t)v; break;
	case GDRB_INT32: ((int32_t *)a)[i] = (int32_t)v; break;
	case GDRB_INT64: ((int64_t *)a)[i] = v; break;
	case GDRB_FLOAT: ((float *)a)[i] = (float)v; break;
	default: ((double *)a)[i] = (double)v; break;
	}
}

/* Values repeat along the vector with this period (sum: its room, min/max: 97, prod: lcm(n, 15)). */
static size_t value_period(const struct gdrb_ctx *c)
{
	size_t n = (size_t)c->boot->size, a = n, b = 15, t;

	switch (gdrb_coll_params(c->p)->op) {
	case GDRB_SUM:
		return sum_room(c) ? sum_room(c) : 61;
	case GDRB_PROD:
		while (b) {
			t = a % b;
			a = b;
			b = t;
		}
		return n / a * 15;
	default:
		return 97;
	}
}

/* The exact result at vector index j: op over every rank's value. */
static int64_t expected(const struct gdrb_ctx *c, size_t j, uint64_t iter)
{
	enum gdrb_redop op = gdrb_coll_params(c->p)->op;
	int64_t acc = op == GDRB_PROD ? 1 : 0;
	int r;

	for (r = 0; r < c->boot->size; r++) {
		int64_t v = value(c, r, j, iter);

		if (op == GDRB_SUM)
			acc += v;
		else if (op == GDRB_PROD)
			acc *= v;
		else if (r == 0 || (op == GDRB_MIN ? v < acc : v > acc))
			acc = v;
	}
	return acc;
}

static double load(const void *a, enum gdrb_dtype t, size_t i)
{
	switch (t) {
	case GDRB_INT8: return ((const int8_t *)a)[i];
	case GDRB_INT32: return ((const int32_t *)a)[i];
	case GDRB_INT64: return (double)((const int64_t *)a)[i];
	case GDRB_FLOAT: return ((const float *)a)[i];
	default: return ((const double *)a)[i];
	}
}

/*
 * One period of this rank's values and of the expected results, for one
 * iteration: filling and checking gigabytes then costs a lookup per element,
 * not a pass over every rank.
 */
static struct {
	uint64_t iter;
	size_t period;
	int64_t *mine, *result;
} tables;

static int build_tables(const struct gdrb_ctx *c, uint64_t iter)
{
	size_t j, period = value_period(c);

	if (tables.mine && tables.period == period && tables.iter == iter)
		return 0;
	if (tables.period != period) {
		free(tables.mine);
		free(tables.result);
		tables.mine = calloc(period, sizeof(int64_t));
		tables.result = calloc(period, sizeof(int64_t));
		tables.period = period;
		if (!tables.mine || !tables.result) {
			gdrb_err("out of memory for %zu expected values", period);
			free(tables.mine);
			tables.mine = NULL;
			tables.period = 0;
			return GDRB_ERR;
		}
	}
	for (j = 0; j < period; j++) {
		tables.mine[j] = value(c, c->boot->rank, j, iter);
		tables.result[j] = expected(c, j, iter);
	}
	tables.iter = iter;
	return 0;
}

/* Integers exactly; floating point within the stated relative tolerance. */
static bool element_ok(const void *a, enum gdrb_dtype t, size_t i, int64_t v)
{
	double want = (double)v;

	switch (t) {
	case GDRB_INT8: return ((const int8_t *)a)[i] == v;
	case GDRB_INT32: return ((const int32_t *)a)[i] == v;
	case GDRB_INT64: return ((const int64_t *)a)[i] == v;
	case GDRB_FLOAT: return fabs(((const float *)a)[i] - want) <= 1e-6 * fabs(want);
	default: return fabs(((const double *)a)[i] - want) <= 1e-12 * fabs(want);
	}
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
	int me = c->boot->rank, n = c->boot->size;
	bool root = !(kind->flags & GDRB_COLL_ROOTED) || me == gdrb_coll_params(c->p)->root;
	bool here;
	MPI_Datatype base;

	if (s->valid && s->size == size)
		return 0;
	if (s->type != MPI_DATATYPE_NULL && s->group > 1)
		MPI_Type_free(&s->type);
	memset(s, 0, sizeof(*s));
	s->valid = true;
	s->size = size;
	s->elem = elem_size(c);
	s->total = size / s->elem;
	s->block = blocked() ? s->total / (size_t)n : s->total;
	here = gdrb_coll_params(c->p)->in_place && (root || !(kind->flags & (GDRB_COLL_ROOT_IN | GDRB_COLL_ROOT_OUT)));
	s->send_in_place = here && !(kind->flags & GDRB_COLL_ROOT_IN);
	s->recv_in_place = here && (kind->flags & GDRB_COLL_ROOT_IN);

	switch (kind->layout) {
	case GDRB_LAYOUT_NONE:
		break;
	case GDRB_LAYOUT_ONE_BUF:
		s->in_recv = true;
		s->in_len = root ? size : 0;
		s->out_len = root ? 0 : size;
		break;
	case GDRB_LAYOUT_FULL:
		s->in_recv = here;
		s->in_len = size;
		s->out_len = root ? size : 0;
		break;
	case GDRB_LAYOUT_GATHER:
		s->in_recv = here;
		s->in_off = here ? (size_t)me * s->block * s->elem : 0;
		s->in_len = s->block * s->elem;
		s->out_len = root ? size : 0;
		break;
	case GDRB_LAYOUT_SCATTER:
		s->in_recv = here && !(kind->flags & GDRB_COLL_ROOT_IN);
		s->in_len = root ? size : 0;
		s->out_len = s->recv_in_place ? 0 : s->block * s->elem;
		break;
	}
	s->per_call = kind->layout == GDRB_LAYOUT_FULL && reduces() ? s->total :
		      kind->layout == GDRB_LAYOUT_ONE_BUF ? s->total : s->block;
	base = reduces() ? mpi_type(gdrb_coll_params(c->p)->dtype) : MPI_BYTE;
	s->op = reduces() ? mpi_op(gdrb_coll_params(c->p)->op) : MPI_OP_NULL;
	s->type = base;
	s->group = group_for(s->per_call);
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
	if (reduces())
		n += snprintf(buf + n, len - (size_t)n, " --op %s --dtype %s;",
			      gdrb_redop_names[gdrb_coll_params(c->p)->op], gdrb_dtype_names[gdrb_coll_params(c->p)->dtype]);
	if (kind->flags & GDRB_COLL_ROOTED)
		n += snprintf(buf + n, len - (size_t)n, " root %d;", gdrb_coll_params(c->p)->root);
	if (kind->flags & GDRB_COLL_IN_PLACE)
		n += snprintf(buf + n, len - (size_t)n, " in-place %s;", gdrb_coll_params(c->p)->in_place ? "yes" : "no");
	if (blocked())
		n += snprintf(buf + n, len - (size_t)n,
			      " size = whole vector, rounded down to a multiple of %d ranks x %zu B (at least one element each);",
			      c->boot->size, elem_size(c));
	if (reduces())
		snprintf(buf + n, len - (size_t)n,
			 " values are small integers chosen so that no result overflows, so results are exact; floats compared within 1e-6 (float) or 1e-12 (double) relative");
}

/*
 * bcast has one buffer. In place, the input moves to the receive buffer,
 * except at the root of scatter (its input stays put) and on the non-roots of
 * reduce and gather (they are not in place).
 */
static bool coll_uses_send(const struct gdrb_ctx *c)
{
	if (kind->layout == GDRB_LAYOUT_ONE_BUF || kind->layout == GDRB_LAYOUT_NONE)
		return false;
	if (!gdrb_coll_params(c->p)->in_place || (kind->flags & GDRB_COLL_ROOT_IN))
		return true;
	return (kind->flags & GDRB_COLL_ROOTED) && c->boot->rank != gdrb_coll_params(c->p)->root;
}

static double coll_bus_factor(const struct gdrb_ctx *c)
{
	return kind->bus_factor(c->boot->size);
}

static int coll_setup(struct gdrb_ctx *c)
{
	size_t i;
	int rc;

	state.type = MPI_DATATYPE_NULL;
	if (kind->flags & GDRB_COLL_ROOTED && gdrb_coll_params(c->p)->root >= c->boot->size) {
		gdrb_usage_err("--root: rank %d does not exist; accepted: 0 to %d", gdrb_coll_params(c->p)->root,
			       c->boot->size - 1);
		return GDRB_ERR_USAGE;
	}
	for (i = 0; reduces() && i < c->p->sizes.n; i++) {
		if (c->p->sizes.v[i] % gdrb_dtype_sizes[gdrb_coll_params(c->p)->dtype] == 0)
			continue;
		gdrb_usage_err("-m: %zu bytes is not a multiple of the %zu-byte %s; sizes must hold whole elements",
			       c->p->sizes.v[i], gdrb_dtype_sizes[gdrb_coll_params(c->p)->dtype],
			       gdrb_dtype_names[gdrb_coll_params(c->p)->dtype]);
		return GDRB_ERR_USAGE;
	}
	for (i = 0; i < c->p->sizes.n && kind->layout != GDRB_LAYOUT_NONE; i++) {
		size_t size = coll_adjust_size(c, c->p->sizes.v[i]);
		size_t per_call = size / elem_size(c) / (blocked() ? (size_t)c->boot->size : 1);

		if (group_for(per_call))
			continue;
		gdrb_usage_err("-m: %zu bytes give %zu elements per call, above INT_MAX and not a multiple of a power of two that brings them within it; use a power-of-two size",
			       size, per_call);
		return GDRB_ERR_USAGE;
	}
	if (reduces()) {
		group_dtype = gdrb_coll_params(c->p)->dtype;
		group_redop = gdrb_coll_params(c->p)->op;
		if (MPI_Op_create(group_reduce, 1, &group_op) != MPI_SUCCESS)
			return GDRB_ERR;
	}
	rc = gdrb_mpi_check_direct(c);
	if (kind->layout == GDRB_LAYOUT_NONE)
		c->variants[0].how = "MPI_Barrier";
	return rc;
}

static int coll_iteration(struct gdrb_ctx *c, size_t size)
{
	struct coll_state *s = &state;
	struct gdrb_coll_call k;
	bool staged = c->variant->staged;

	if (geometry(c, size))
		return GDRB_ERR;
	if (staged && s->in_len &&
	    gdrb_buf_copy(s->in_recv ? &c->recv_bounce : &c->send_bounce, s->in_off,
			  s->in_recv ? &c->recv : &c->send, s->in_off, s->in_len))
		return GDRB_ERR;
	k.send = s->send_in_place ? MPI_IN_PLACE : gdrb_wire_send(c);
	k.recv = s->recv_in_place ? MPI_IN_PLACE : gdrb_wire_recv(c);
	k.count = (int)(s->per_call / s->group);
	k.type = s->type;
	k.op = s->op;
	k.root = gdrb_coll_params(c->p)->root;
	if (coll->call(&k) != MPI_SUCCESS)
		return GDRB_ERR;
	if (staged && s->out_len && gdrb_buf_copy(&c->recv, 0, &c->recv_bounce, 0, s->out_len))
		return GDRB_ERR;
	return 0;
}

/* Validation: every rank writes its input for this iteration (untimed). */
static int coll_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct coll_state *s = &state;
	size_t chunk_len, done, n, i, first;
	enum gdrb_dtype t = gdrb_coll_params(c->p)->dtype;
	struct gdrb_buf *buf;
	void *chunk;

	if (geometry(c, size))
		return GDRB_ERR;
	buf = s->in_recv ? &c->recv : &c->send;
	c->check_span = s->out_len;
	if (!s->in_len)
		return 0;
	if (!reduces())
		return gdrb_buf_fill_pattern_at(buf, s->in_off, s->in_len,
						gdrb_pattern_seed(size, iter, 0, (unsigned)c->boot->rank), 0);
	chunk = gdrb_host_chunk(&chunk_len);
	if (!chunk || build_tables(c, iter))
		return GDRB_ERR;
	for (done = 0; done < s->in_len; done += n) {
		size_t k;

		n = s->in_len - done < chunk_len ? s->in_len - done : chunk_len;
		first = done / s->elem;
		for (i = 0, k = first % tables.period; i < n / s->elem; i++) {
			store(chunk, t, i, tables.mine[k]);
			if (++k == tables.period)
				k = 0;
		}
		gdrb_watchdog_kick();   /* gigabytes take seconds: local progress */
		if (buf->ops->from_host(buf, s->in_off + done, chunk, n))
			return GDRB_ERR;
	}
	return 0;
}

/* Reduced output: element i of recv is the result at vector index first + i. */
static uint64_t check_reduced(struct gdrb_ctx *c, size_t first, uint64_t iter)
{
	struct coll_state *s = &state;
	size_t chunk_len, done, n, i;
	enum gdrb_dtype t = gdrb_coll_params(c->p)->dtype;
	uint64_t bad = 0;
	void *chunk = gdrb_host_chunk(&chunk_len);

	if (!chunk || build_tables(c, iter))
		return (uint64_t)-1;
	for (done = 0; done < s->out_len; done += n) {
		size_t k;

		n = s->out_len - done < chunk_len ? s->out_len - done : chunk_len;
		if (c->recv.ops->to_host(chunk, &c->recv, done, n))
			return (uint64_t)-1;
		gdrb_watchdog_kick();
		for (i = 0, k = (first + done / s->elem) % tables.period; i < n / s->elem; i++) {
			int64_t want = tables.result[k];

			if (++k == tables.period)
				k = 0;
			if (element_ok(chunk, t, i, want))
				continue;
			if (!bad++)
				gdrb_mismatch(c, "%s --op %s --dtype %s: element %zu of the result is %g, expected %g",
					      kind->name, gdrb_redop_names[gdrb_coll_params(c->p)->op], gdrb_dtype_names[t],
					      done / s->elem + i, load(chunk, t, i), (double)want);
		}
	}
	return bad;
}

/* One output block of `len` bytes at `off` holds rank src's input from byte `base`. */
static uint64_t check_block(struct gdrb_ctx *c, size_t off, size_t len, int src, size_t base,
			    size_t size, uint64_t iter)
{
	size_t first = 0;
	uint64_t bad = gdrb_buf_check_pattern_at(&c->recv, off, len,
						 gdrb_pattern_seed(size, iter, 0, (unsigned)src), base,
						 &first);

	if (bad && bad != (uint64_t)-1)
		gdrb_mismatch(c, "%s: %llu wrong byte(s) in the block from rank %d, first at byte %zu of the result",
			      kind->name, (unsigned long long)bad, src, off + first - base);
	return bad;
}

static uint64_t coll_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct coll_state *s = &state;
	size_t blk = s->block * s->elem, me = (size_t)c->boot->rank;
	uint64_t bad = 0, b;
	int q, n = c->boot->size, root = gdrb_coll_params(c->p)->root;

	if (!s->out_len)
		return 0;
	if (reduces())
		return check_reduced(c, kind->layout == GDRB_LAYOUT_SCATTER ? me * s->block : 0, iter);
	switch (kind->layout) {
	case GDRB_LAYOUT_ONE_BUF:
		return check_block(c, 0, s->out_len, root, 0, size, iter);
	case GDRB_LAYOUT_SCATTER:
		return check_block(c, 0, blk, root, me * blk, size, iter);
	default:
		for (q = 0; q < n; q++) {
			/* alltoall: block q is rank q's block for me; gathers: rank q's input. */
			b = check_block(c, (size_t)q * blk, blk, q,
					kind->layout == GDRB_LAYOUT_FULL ? me * blk : 0, size, iter);
			if (b == (uint64_t)-1)
				return b;
			bad += b;
		}
		return bad;
	}
}

static void coll_teardown(struct gdrb_ctx *c)
{
	(void)c;
	if (state.group > 1 && state.type != MPI_DATATYPE_NULL)
		MPI_Type_free(&state.type);
	state.group = 0;
	state.valid = false;
	if (group_op != MPI_OP_NULL)
		MPI_Op_free(&group_op);
	free(tables.mine);
	free(tables.result);
	memset(&tables, 0, sizeof(tables));
}

/* Collectives under --sync barrier: an untimed barrier before every call. */
static bool coll_barrier_each(const struct gdrb_ctx *c)
{
	return kind->layout != GDRB_LAYOUT_NONE && gdrb_coll_params(c->p)->sync == GDRB_SYNC_BARRIER;
}

int gdrb_coll_main(const struct gdrb_coll *desc, int argc, char **argv)
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
	if (kind->flags & GDRB_COLL_REDUCES)
		groups[0].select |= GDRB_COLL_OPT_REDUCE;
	if (kind->flags & GDRB_COLL_ROOTED)
		groups[0].select |= GDRB_COLL_OPT_ROOT;
	if (kind->flags & GDRB_COLL_IN_PLACE)
		groups[0].select |= GDRB_COLL_OPT_IN_PLACE;
	if (kind->layout == GDRB_LAYOUT_NONE) {
		core = GDRB_OPTG_NO_SIZES;
		groups[0].select = 0;
		groups[1].select = 0;
	}
	bench = (struct gdrb_bench){
		.name = kind->name,
		.layer = "mpi",
		.summary = desc->summary,
		.metric = GDRB_METRIC_LAT,
		.traffic = GDRB_TRAFFIC_COLLECTIVE,
		.opt_core = core,
		.opt_groups = groups,
		.opt_known = gdrb_opt_catalog,
		.barrier_each = coll_barrier_each,
		.bus_factor = coll_bus_factor,
		.adjust_size = coll_adjust_size,
		.describe = coll_describe,
		.uses_send = coll_uses_send,
		.setup = coll_setup,
		.iteration = coll_iteration,
		.prepare = coll_prepare,
		.check = coll_check,
		.teardown = coll_teardown,
	};
	return gdrb_main(&bench, &gdrb_boot_mpi, argc, argv);
}
