/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI collectives on the common driver. A collective is a descriptor: its
 * entry of the collectives' table (gdrb_coll_table.h: name, buffer layout,
 * whether it reduces, which side the root plays, bus-bandwidth factor), a
 * summary and the one MPI call. This module maps the collective's data
 * (gdrb_coll_data.h: geometry, values, expected results) onto MPI's types and
 * MPI_IN_PLACE, and owns the staged path and element counts above INT_MAX.
 */
#ifndef GDRB_COLL_H
#define GDRB_COLL_H

#include <stddef.h>

#include <mpi.h>

#include "gdrb_coll_opts.h"
#include "gdrb_coll_table.h"

/* The arguments of one call; count is per block, in units of type. */
struct gdrb_coll_call {
	const void *send;       /* MPI_IN_PLACE with --in-place where MPI says so */
	void *recv;
	int count;
	MPI_Datatype type;
	MPI_Op op;
	int root;
};

struct gdrb_coll {
	const struct gdrb_coll_kind *kind;      /* &gdrb_coll_<name>: what the figures need */
	const char *summary;
	int (*call)(const struct gdrb_coll_call *k);
};

/*
 * Run a collective; known: the option groups refused by name (the binary's main passes
 * gdrb_opt_catalog, which this layer may not name). Returns the exit code.
 */
int gdrb_coll_main(const struct gdrb_coll *coll, const struct gdrb_opt_group *const *known,
		   int argc, char **argv);

#endif
