/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collectives' options (coll_opts.c): --sync, --op, --dtype, --root,
 * --in-place, and their params. No MPI header, so that every binary can
 * refuse them by name.
 */
#ifndef GDRB_COLL_OPTS_H
#define GDRB_COLL_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "gdrb_opts.h"

/* half and bfloat16 are NCCL's (MPI has no such type and refuses them). */
enum gdrb_dtype { GDRB_INT8, GDRB_INT32, GDRB_INT64, GDRB_FLOAT, GDRB_DOUBLE, GDRB_HALF, GDRB_BFLOAT16,
		  GDRB_DTYPE_COUNT };
enum gdrb_redop { GDRB_SUM, GDRB_PROD, GDRB_MIN, GDRB_MAX, GDRB_REDOP_COUNT };
/* What separates two timed calls of a collective. */
enum gdrb_sync { GDRB_SYNC_BARRIER, GDRB_SYNC_NONE, GDRB_SYNC_COUNT };
/* --in-place: where the result goes; both measures each size out of place, then in place. */
enum gdrb_in_place { GDRB_IN_PLACE_NO, GDRB_IN_PLACE_YES, GDRB_IN_PLACE_BOTH, GDRB_IN_PLACE_COUNT };

extern const char *const gdrb_dtype_names[GDRB_DTYPE_COUNT];
extern const size_t gdrb_dtype_sizes[GDRB_DTYPE_COUNT];
extern const char *const gdrb_redop_names[GDRB_REDOP_COUNT];
extern const char *const gdrb_sync_names[GDRB_SYNC_COUNT];
extern const char *const gdrb_in_place_names[GDRB_IN_PLACE_COUNT];

struct gdrb_coll_params {
	int op;                 /* enum gdrb_redop: reducing collectives */
	int dtype;              /* enum gdrb_dtype */
	int root;               /* rooted collectives */
	int in_place;           /* enum gdrb_in_place */
	int sync;               /* enum gdrb_sync */
};

/* Which of the collectives' options a binary offers (struct gdrb_opt_use.select). */
enum {
	GDRB_COLL_OPT_SYNC = 1u << 0,           /* --sync: collectives that move data */
	GDRB_COLL_OPT_REDUCE = 1u << 1,         /* --op, --dtype */
	GDRB_COLL_OPT_ROOT = 1u << 2,           /* --root */
	GDRB_COLL_OPT_IN_PLACE = 1u << 3,       /* --in-place */
};

extern const struct gdrb_opt_group gdrb_coll_opts;

static inline const struct gdrb_coll_params *gdrb_coll_params(const struct gdrb_params *p)
{
	return (const struct gdrb_coll_params *)gdrb_group_params(p, &gdrb_coll_opts);
}

#endif
