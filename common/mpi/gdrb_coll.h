/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI collectives on the common driver. A collective is a descriptor: its
 * buffer layout, whether it reduces, which side the root plays, its
 * bus-bandwidth factor and the one MPI call. This module owns sizes and
 * rounding, data initialisation, the expected result, the staged path and
 * element counts above INT_MAX.
 */
#ifndef GDRB_COLL_H
#define GDRB_COLL_H

#include <stddef.h>

#include <mpi.h>

#include "gdrb_coll_opts.h"
#include "gdrb_figures.h"   /* the bus factors: gdrb_bus_allreduce, _spread, _one */

enum gdrb_coll_layout {
	GDRB_LAYOUT_NONE,       /* no payload (barrier) */
	GDRB_LAYOUT_FULL,       /* size in, size out (allreduce, reduce, alltoall) */
	GDRB_LAYOUT_ONE_BUF,    /* one buffer: the root's in, everyone's out (bcast) */
	GDRB_LAYOUT_GATHER,     /* one block in, n blocks out (allgather, gather) */
	GDRB_LAYOUT_SCATTER,    /* n blocks in, one block out (reduce_scatter, scatter) */
};

enum {
	GDRB_COLL_REDUCES = 1u << 0,    /* takes --op and --dtype */
	GDRB_COLL_ROOTED = 1u << 1,     /* takes --root */
	GDRB_COLL_ROOT_IN = 1u << 2,    /* only the root has input (scatter) */
	GDRB_COLL_ROOT_OUT = 1u << 3,   /* only the root has output (reduce, gather) */
	GDRB_COLL_IN_PLACE = 1u << 4,   /* takes --in-place */
};

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
	const char *name;       /* CSV benchmark column: "mpi_allreduce" */
	const char *summary;
	enum gdrb_coll_layout layout;
	unsigned flags;
	/* algbw -> busbw for n ranks, as nccl-tests defines it. */
	double (*bus_factor)(int n);
	int (*call)(const struct gdrb_coll_call *k);
};

int gdrb_coll_main(const struct gdrb_coll *coll, int argc, char **argv);

#endif
