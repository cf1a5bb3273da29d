/* SPDX-License-Identifier: BSD-3-Clause */
/* A collective's data, whatever library moves it (gdrb_coll_data.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_coll_data.h"
#include "gdrb_coll_opts.h"
#include "gdrb_log.h"
#include "gdrb_pattern.h"
#include "gdrb_watchdog.h"

static bool reduces(const struct gdrb_coll_kind *k) { return k->flags & GDRB_COLL_REDUCES; }

static enum gdrb_dtype dtype_of(const struct gdrb_ctx *c)
{
	return (enum gdrb_dtype)gdrb_coll_params(c->p)->dtype;
}

unsigned gdrb_coll_opt_select(const struct gdrb_coll_kind *k)
{
	return (reduces(k) ? GDRB_COLL_OPT_REDUCE : 0) |
	       (k->flags & GDRB_COLL_ROOTED ? GDRB_COLL_OPT_ROOT : 0) |
	       (k->flags & GDRB_COLL_IN_PLACE ? GDRB_COLL_OPT_IN_PLACE : 0);
}

size_t gdrb_coll_placements(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k,
			    enum gdrb_placement *pl)
{
	int mode = gdrb_coll_params(c->p)->in_place;
	size_t n = 0;

	if (!(k->flags & GDRB_COLL_IN_PLACE)) {
		pl[n++] = GDRB_PLACEMENT_NONE;
		return n;
	}
	if (mode != GDRB_IN_PLACE_YES)
		pl[n++] = GDRB_PLACEMENT_OUT;
	if (mode != GDRB_IN_PLACE_NO)
		pl[n++] = GDRB_PLACEMENT_IN;
	return n;
}

size_t gdrb_coll_elem_size(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k)
{
	return gdrb_coll_elem(k, gdrb_dtype_sizes[dtype_of(c)]);
}

/* ---- the 16-bit floating-point types, as bits (round to nearest, ties to even) ---- */

static uint16_t half_from(float f)
{
	uint32_t x, sign, mant;
	int exp;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000u;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffffu;
	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00u);
	if (exp <= 0) {
		uint32_t m, shift, r;

		if (exp < -10)
			return (uint16_t)sign;
		m = mant | 0x800000u;
		shift = (uint32_t)(14 - exp);
		r = m >> shift;
		if ((m & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
		    ((m & ((1u << shift) - 1)) == (1u << (shift - 1)) && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1fffu;

		if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
			h++;    /* a carry into the exponent is the right rounding */
		return (uint16_t)h;
	}
}

static float half_to(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
	float f;

	if (exp == 0) {
		f = ldexpf((float)mant, -24);
		return sign ? -f : f;
	}
	if (exp == 31)
		x = sign | 0x7f800000u | (mant << 13);
	else
		x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
	memcpy(&f, &x, sizeof(f));
	return f;
}

static uint16_t bf16_from(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);    /* NaN stays NaN */
	x += 0x7fffu + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

static float bf16_to(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

/*
 * ---- values ----
 * Every value is a small integer, so sums, products, minima and maxima are
 * exact in every type and order, and no integer result overflows: MPI leaves
 * overflow undefined (Open MPI's vectorised int8 sum saturates where scalar
 * code wraps), so a check that depended on it would test the library's
 * arithmetic rather than the transfer.
 */

/* Largest result each type holds exactly: int8 127, float 2^24, half 2^11, bfloat16 2^8... */
static int64_t exact_limit(enum gdrb_dtype t)
{
	static const int64_t limits[GDRB_DTYPE_COUNT] = { INT8_MAX, INT32_MAX, INT64_MAX, 1 << 24,
							  (int64_t)1 << 53, 1 << 11, 1 << 8 };
	return limits[t];
}

/* Sums: n values of at most this cannot pass the type's limit (0: too many ranks). */
static uint64_t sum_room(const struct gdrb_ctx *c)
{
	int64_t room = exact_limit(dtype_of(c)) / c->boot->size;

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
	case GDRB_HALF: ((uint16_t *)a)[i] = half_from((float)v); break;
	case GDRB_BFLOAT16: ((uint16_t *)a)[i] = bf16_from((float)v); break;
	default: ((double *)a)[i] = (double)v; break;
	}
}

static double load(const void *a, enum gdrb_dtype t, size_t i)
{
	switch (t) {
	case GDRB_INT8: return ((const int8_t *)a)[i];
	case GDRB_INT32: return ((const int32_t *)a)[i];
	case GDRB_INT64: return (double)((const int64_t *)a)[i];
	case GDRB_FLOAT: return ((const float *)a)[i];
	case GDRB_HALF: return half_to(((const uint16_t *)a)[i]);
	case GDRB_BFLOAT16: return bf16_to(((const uint16_t *)a)[i]);
	default: return ((const double *)a)[i];
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

/*
 * One period of this rank's values and of the expected results, for one
 * iteration: filling and checking gigabytes then costs a lookup per element,
 * not a pass over every rank. Each period is also stored in the run's type and
 * repeated to at least IMAGE_BYTES (an image): a fill copies the image a piece
 * at a time, and a check compares it a piece at a time (element by element only
 * in a piece that differs), instead of converting every element (2 GiB of int8:
 * seconds per pass, a minute a check under ASan).
 */
#define IMAGE_BYTES 4096

static struct {
	uint64_t iter;
	size_t period, reps;    /* values per period; periods per image */
	enum gdrb_dtype type;
	int64_t *result;
	unsigned char *mine_img, *result_img;
} tables;

static void free_tables(void)
{
	free(tables.result);
	free(tables.mine_img);
	free(tables.result_img);
	memset(&tables, 0, sizeof(tables));
}

static int build_tables(const struct gdrb_ctx *c, uint64_t iter)
{
	enum gdrb_dtype t = dtype_of(c);
	size_t j, r, es = gdrb_dtype_sizes[t], period = value_period(c);

	if (tables.result && tables.period == period && tables.type == t && tables.iter == iter)
		return 0;
	if (!tables.result || tables.period != period || tables.type != t) {
		free_tables();
		tables.reps = (IMAGE_BYTES + period * es - 1) / (period * es);
		tables.result = calloc(period, sizeof(int64_t));
		tables.mine_img = malloc(tables.reps * period * es);
		tables.result_img = malloc(tables.reps * period * es);
		if (!tables.result || !tables.mine_img || !tables.result_img) {
			gdrb_err("out of memory for %zu expected values", period);
			free_tables();
			return GDRB_ERR;
		}
		tables.period = period;
		tables.type = t;
	}
	for (j = 0; j < period; j++) {
		int64_t mine = value(c, c->boot->rank, j, iter);

		tables.result[j] = expected(c, j, iter);
		for (r = 0; r < tables.reps; r++) {
			store(tables.mine_img, t, r * period + j, mine);
			store(tables.result_img, t, r * period + j, tables.result[j]);
		}
	}
	tables.iter = iter;
	return 0;
}

/* The next piece of an image from vector index j: its start in the image and its length in
 * elements, at most count (the image holds whole periods: the piece after one starts at 0). */
static size_t image_piece(size_t j, size_t count, size_t *start)
{
	size_t span = tables.reps * tables.period;

	*start = j % tables.period;
	return span - *start < count ? span - *start : count;
}

void gdrb_coll_data_free(void)
{
	free_tables();
}

/* Integers exactly; floating point within the type's relative tolerance (results are exact). */
static bool element_ok(const void *a, enum gdrb_dtype t, size_t i, int64_t v)
{
	double want = (double)v;

	switch (t) {
	case GDRB_INT8: return ((const int8_t *)a)[i] == v;
	case GDRB_INT32: return ((const int32_t *)a)[i] == v;
	case GDRB_INT64: return ((const int64_t *)a)[i] == v;
	case GDRB_FLOAT: return fabs(((const float *)a)[i] - want) <= 1e-6 * fabs(want);
	case GDRB_HALF: return fabs(load(a, t, i) - want) <= 1e-3 * fabs(want);
	case GDRB_BFLOAT16: return fabs(load(a, t, i) - want) <= 1e-2 * fabs(want);
	default: return fabs(((const double *)a)[i] - want) <= 1e-12 * fabs(want);
	}
}

/* ---- geometry and the options' rules ---- */

void gdrb_coll_geometry(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k, size_t size,
			struct gdrb_coll_geom *g)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	int me = c->boot->rank, n = c->boot->size;
	bool root = !(k->flags & GDRB_COLL_ROOTED) || me == cp->root;
	bool here;

	memset(g, 0, sizeof(*g));
	g->valid = true;
	g->size = size;
	g->placement = c->placement;
	g->elem = gdrb_coll_elem_size(c, k);
	g->total = size / g->elem;
	g->block = gdrb_coll_blocked(k) ? g->total / (size_t)n : g->total;
	here = c->placement == GDRB_PLACEMENT_IN &&
	       (root || !(k->flags & (GDRB_COLL_ROOT_IN | GDRB_COLL_ROOT_OUT)));
	g->send_in_place = here && !(k->flags & GDRB_COLL_ROOT_IN);
	g->recv_in_place = here && (k->flags & GDRB_COLL_ROOT_IN);

	switch (k->layout) {
	case GDRB_LAYOUT_NONE:
		break;
	case GDRB_LAYOUT_ONE_BUF:
		g->in_recv = true;
		g->in_len = root ? size : 0;
		g->out_len = root ? 0 : size;
		break;
	case GDRB_LAYOUT_FULL:
		g->in_recv = here;
		g->in_len = size;
		g->out_len = root ? size : 0;
		break;
	case GDRB_LAYOUT_GATHER:
		g->in_recv = here;
		g->in_off = here ? (size_t)me * g->block * g->elem : 0;
		g->in_len = g->block * g->elem;
		g->out_len = root ? size : 0;
		break;
	case GDRB_LAYOUT_SCATTER:
		g->in_recv = here && !(k->flags & GDRB_COLL_ROOT_IN);
		g->in_len = root ? size : 0;
		g->out_len = g->recv_in_place ? 0 : g->block * g->elem;
		break;
	}
	g->per_call = k->layout == GDRB_LAYOUT_FULL && reduces(k) ? g->total :
		      k->layout == GDRB_LAYOUT_ONE_BUF ? g->total : g->block;
}

int gdrb_coll_check_params(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	size_t i, es = gdrb_dtype_sizes[cp->dtype];

	if (k->flags & GDRB_COLL_ROOTED && cp->root >= c->boot->size) {
		gdrb_usage_err("--root: rank %d does not exist; accepted: 0 to %d", cp->root, c->boot->size - 1);
		return GDRB_ERR_USAGE;
	}
	for (i = 0; reduces(k) && i < c->p->sizes.n; i++) {
		if (c->p->sizes.v[i] % es == 0)
			continue;
		gdrb_usage_err("-m: %zu bytes is not a multiple of the %zu-byte %s; sizes must hold whole elements",
			       c->p->sizes.v[i], es, gdrb_dtype_names[cp->dtype]);
		return GDRB_ERR_USAGE;
	}
	return 0;
}

/*
 * bcast has one buffer. In place, the input moves to the receive buffer,
 * except at the root of scatter (its input stays put) and on the non-roots of
 * reduce and gather (they are not in place); out of place, every rank reads it.
 */
bool gdrb_coll_uses_send(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);

	if (k->layout == GDRB_LAYOUT_ONE_BUF || k->layout == GDRB_LAYOUT_NONE)
		return false;
	if (!(k->flags & GDRB_COLL_IN_PLACE) || cp->in_place != GDRB_IN_PLACE_YES ||
	    (k->flags & GDRB_COLL_ROOT_IN))
		return true;
	return (k->flags & GDRB_COLL_ROOTED) && c->boot->rank != cp->root;
}

void gdrb_coll_describe_call(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k, char *buf,
			     size_t len)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	int n = 0;

	if (len)
		buf[0] = '\0';
	if (reduces(k))
		n += snprintf(buf + n, len - (size_t)n, " --op %s --dtype %s;",
			      gdrb_redop_names[cp->op], gdrb_dtype_names[cp->dtype]);
	if (k->flags & GDRB_COLL_ROOTED && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " root %d;", cp->root);
	if (k->flags & GDRB_COLL_IN_PLACE && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " in-place %s;", gdrb_in_place_names[cp->in_place]);
	if (gdrb_coll_blocked(k) && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      " size = whole vector, rounded down to a multiple of %d ranks x %zu B (at least one element each);",
			      c->boot->size, gdrb_coll_elem_size(c, k));
	if (reduces(k) && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 " values are small integers chosen so that no result overflows, so results are exact; floats compared within 1e-6 (float), 1e-12 (double), 1e-3 (half) or 1e-2 (bfloat16) relative");
}

/* ---- filling and checking ---- */

int gdrb_coll_fill(struct gdrb_ctx *c, const struct gdrb_coll_kind *k, const struct gdrb_coll_geom *g,
		   uint64_t iter)
{
	size_t chunk_len, done, n, i, m, start;
	struct gdrb_buf *buf = g->in_recv ? &c->recv : &c->send;
	void *chunk;

	c->check_span = g->out_len;
	if (!g->in_len)
		return 0;
	if (!reduces(k))
		return gdrb_buf_fill_pattern_at(buf, g->in_off, g->in_len,
						gdrb_pattern_seed(g->size, iter, 0, (unsigned)c->boot->rank), 0);
	chunk = gdrb_host_chunk(&chunk_len);
	if (!chunk || build_tables(c, iter))
		return GDRB_ERR;
	for (done = 0; done < g->in_len; done += n) {
		n = g->in_len - done < chunk_len ? g->in_len - done : chunk_len;
		for (i = 0; i < n / g->elem; i += m) {
			m = image_piece(done / g->elem + i, n / g->elem - i, &start);
			memcpy((unsigned char *)chunk + i * g->elem, tables.mine_img + start * g->elem,
			       m * g->elem);
		}
		gdrb_watchdog_kick();   /* gigabytes take seconds: local progress */
		if (buf->ops->from_host(buf, g->in_off + done, chunk, n))
			return GDRB_ERR;
	}
	return 0;
}

/* Reduced output: element i of the output is the result at vector index first + i. A piece
 * equal to the image byte for byte is right; one that differs is checked element by element,
 * floating point within its type's tolerance. */
static uint64_t check_reduced(struct gdrb_ctx *c, const struct gdrb_coll_kind *k,
			      const struct gdrb_coll_geom *g, size_t first, uint64_t iter)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	size_t chunk_len, done, n, i, m, x, start, es = g->elem;
	enum gdrb_dtype t = dtype_of(c);
	uint64_t bad = 0;
	unsigned char *chunk = gdrb_host_chunk(&chunk_len);

	if (!chunk || build_tables(c, iter))
		return (uint64_t)-1;
	for (done = 0; done < g->out_len; done += n) {
		n = g->out_len - done < chunk_len ? g->out_len - done : chunk_len;
		if (c->recv.ops->to_host(chunk, &c->recv, g->out_off + done, n))
			return (uint64_t)-1;
		gdrb_watchdog_kick();
		for (i = 0; i < n / es; i += m) {
			m = image_piece(first + done / es + i, n / es - i, &start);
			if (!memcmp(chunk + i * es, tables.result_img + start * es, m * es))
				continue;
			for (x = i; x < i + m; x++) {
				int64_t want = tables.result[(start + x - i) % tables.period];

				if (element_ok(chunk, t, x, want))
					continue;
				if (!bad++)
					gdrb_mismatch(c, "%s --op %s --dtype %s: element %zu of the result is %g, expected %g",
						      k->name, gdrb_redop_names[cp->op], gdrb_dtype_names[t],
						      done / es + x, load(chunk, t, x), (double)want);
			}
		}
	}
	return bad;
}

/* One output block of `len` bytes at `off` holds rank src's input from byte `base`. */
static uint64_t check_block(struct gdrb_ctx *c, const struct gdrb_coll_kind *k, size_t off, size_t len,
			    int src, size_t base, size_t size, uint64_t iter)
{
	size_t first = 0;
	uint64_t bad = gdrb_buf_check_pattern_at(&c->recv, off, len,
						 gdrb_pattern_seed(size, iter, 0, (unsigned)src), base,
						 &first);

	if (bad && bad != (uint64_t)-1)
		gdrb_mismatch(c, "%s: %llu wrong byte(s) in the block from rank %d, first at byte %zu of the result",
			      k->name, (unsigned long long)bad, src, off + first - base);
	return bad;
}

uint64_t gdrb_coll_verify(struct gdrb_ctx *c, const struct gdrb_coll_kind *k,
			  const struct gdrb_coll_geom *g, uint64_t iter)
{
	size_t blk = g->block * g->elem, me = (size_t)c->boot->rank;
	uint64_t bad = 0, b;
	int q, n = c->boot->size, root = gdrb_coll_params(c->p)->root;

	if (!g->out_len)
		return 0;
	if (reduces(k))
		return check_reduced(c, k, g, k->layout == GDRB_LAYOUT_SCATTER ? me * g->block : 0, iter);
	switch (k->layout) {
	case GDRB_LAYOUT_ONE_BUF:
		return check_block(c, k, g->out_off, g->out_len, root, 0, g->size, iter);
	case GDRB_LAYOUT_SCATTER:
		return check_block(c, k, g->out_off, blk, root, me * blk, g->size, iter);
	default:
		for (q = 0; q < n; q++) {
			/* alltoall: block q is rank q's block for me; gathers: rank q's input. */
			b = check_block(c, k, g->out_off + (size_t)q * blk, blk, q,
					k->layout == GDRB_LAYOUT_FULL ? me * blk : 0, g->size, iter);
			if (b == (uint64_t)-1)
				return b;
			bad += b;
		}
		return bad;
	}
}
