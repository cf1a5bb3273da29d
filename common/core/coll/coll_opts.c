/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives' options: their table and defaults. */
#include "config.h"

#include <stddef.h>

#include "gdrb_coll_opts.h"
#include "gdrb_opts.h"

const char *const gdrb_dtype_names[GDRB_DTYPE_COUNT] = { "int8", "int32", "int64", "float", "double",
							     "half", "bfloat16" };
const size_t gdrb_dtype_sizes[GDRB_DTYPE_COUNT] = { 1, 4, 8, 4, 8, 2, 2 };
const char *const gdrb_redop_names[GDRB_REDOP_COUNT] = { "sum", "prod", "min", "max" };
const char *const gdrb_sync_names[GDRB_SYNC_COUNT] = { "barrier", "none" };
const char *const gdrb_in_place_names[GDRB_IN_PLACE_COUNT] = { "no", "yes", "both" };

#define COLL(field) offsetof(struct gdrb_coll_params, field)

static const struct gdrb_opt coll_table[] = {
	{ .name = "sync", .arg = "MODE",
	  .help = "between two timed calls: barrier (an untimed MPI barrier, so each sample is one call's completion time on that rank, as OMB does) or none (back to back, as nccl-tests does) (default barrier)",
	  .when = GDRB_COLL_OPT_SYNC, .parse = gdrb_opt_enum, .off = COLL(sync),
	  .names = gdrb_sync_names, .nnames = GDRB_SYNC_COUNT, .what = "mode" },
	{ .name = "op", .arg = "OP",
	  .help = "reduction: sum, prod, min or max (default sum)",
	  .when = GDRB_COLL_OPT_REDUCE, .parse = gdrb_opt_enum, .off = COLL(op),
	  .names = gdrb_redop_names, .nnames = GDRB_REDOP_COUNT, .what = "reduction" },
	{ .name = "dtype", .arg = "TYPE",
	  .help = "element type: int8, int32, int64, float, double, half or bfloat16 (the last two NCCL only) (default float); sizes must be multiples of its size",
	  .when = GDRB_COLL_OPT_REDUCE, .parse = gdrb_opt_enum, .off = COLL(dtype),
	  .names = gdrb_dtype_names, .nnames = GDRB_DTYPE_COUNT, .what = "type" },
	{ .name = "root", .arg = "N",
	  .help = "root rank (default 0)",
	  .when = GDRB_COLL_OPT_ROOT, .parse = gdrb_opt_int, .off = COLL(root), .min = 0,
	  .max = 1u << 30 },
	{ .name = "in-place", .arg = "MODE",
	  .help = "where the result goes: yes (what --in-place alone means) overwrites the input buffer (MPI_IN_PLACE, NCCL's in-place form), no puts it in a buffer of its own, both measures each size out of place, then in place: a table line and a CSV row each (the placement column) (default no)",
	  .when = GDRB_COLL_OPT_IN_PLACE, .parse = gdrb_opt_enum, .off = COLL(in_place),
	  .names = gdrb_in_place_names, .nnames = GDRB_IN_PLACE_COUNT, .what = "mode",
	  .value = GDRB_IN_PLACE_YES, .flags = GDRB_OPT_VALUE_OPTIONAL },
};

static void coll_defaults(void *params)
{
	struct gdrb_coll_params *cp = params;

	cp->op = GDRB_SUM;
	cp->dtype = GDRB_FLOAT;
	cp->root = 0;
	cp->sync = GDRB_SYNC_BARRIER;
}

const struct gdrb_opt_group gdrb_coll_opts = {
	.name = "collectives",
	.opts = coll_table,
	.nopts = sizeof(coll_table) / sizeof(coll_table[0]),
	.size = sizeof(struct gdrb_coll_params),
	.defaults = coll_defaults,
};
