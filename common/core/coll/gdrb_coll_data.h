/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a collective's buffers hold, whatever library runs it (MPI, NCCL):
 * the per-size geometry of one rank's input and output, the values each rank
 * contributes, the exact expected result, filling the input and checking the
 * output element by element (gdrb_coll_kind: gdrb_coll_table.h; --op,
 * --dtype, --root, --in-place: gdrb_coll_opts.h). A layer adds only its call
 * and its types: common/mpi/coll.c, common/nccl/nccl_coll.c.
 */
#ifndef GDRB_COLL_DATA_H
#define GDRB_COLL_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrb_coll_table.h"
#include "gdrb_driver.h"

/* One rank's view of a collective at one size; bytes unless named elements. */
struct gdrb_coll_geom {
	bool valid;
	size_t size;            /* the effective size these fields hold for */
	enum gdrb_placement placement;  /* ... and the placement (c->placement) */
	size_t elem;            /* bytes per element */
	size_t total, block;    /* elements in the whole vector and in one block */
	bool in_recv;           /* the input lives in the receive buffer (in place) */
	size_t in_off, in_len;
	size_t out_off, out_len; /* the output is recv[out_off, out_off + out_len) */
	bool send_in_place, recv_in_place; /* the library's in-place form for each buffer */
	size_t per_call;        /* elements of the call's count */
};

/* The collectives' options kind k takes (gdrb_coll_opts.h: --op/--dtype, --root, --in-place). */
unsigned gdrb_coll_opt_select(const struct gdrb_coll_kind *k);

/*
 * The placements kind k is measured in (a struct gdrb_bench.placements): as --in-place
 * says (both: out of place, then in place) where k takes it, else none.
 */
size_t gdrb_coll_placements(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k,
			    enum gdrb_placement *pl);

/* Bytes per element of the run's collective: the --dtype's for a reduction, else 1. */
size_t gdrb_coll_elem_size(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k);

/*
 * The geometry of kind k at `size` (already adjusted) on this rank in the placement
 * being measured, with MPI's in-place convention: an in-place output starts at the
 * receive buffer's start (a layer whose library writes it elsewhere moves out_off).
 */
void gdrb_coll_geometry(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k, size_t size,
			struct gdrb_coll_geom *g);

/*
 * The options' rules a collective checks once the ranks are known: --root
 * within them, every size whole elements of the --dtype. 0, or
 * GDRB_ERR_USAGE after one line.
 */
int gdrb_coll_check_params(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k);

/* Whether this rank reads its send buffer in a placement measured (bcast has one buffer; in place, most do not). */
bool gdrb_coll_uses_send(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k);

/* The header's words on the call: --op and --dtype, root, in place, rounding, exactness. */
void gdrb_coll_describe_call(const struct gdrb_ctx *c, const struct gdrb_coll_kind *k, char *buf,
			     size_t len);

/* Validation, untimed: write this rank's input for iteration `iter`; check its output. */
int gdrb_coll_fill(struct gdrb_ctx *c, const struct gdrb_coll_kind *k, const struct gdrb_coll_geom *g,
		   uint64_t iter);
uint64_t gdrb_coll_verify(struct gdrb_ctx *c, const struct gdrb_coll_kind *k,
			  const struct gdrb_coll_geom *g, uint64_t iter);

/* The expected-value tables, freed at teardown. */
void gdrb_coll_data_free(void);

#endif
