/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What each collective is, as the driver and the figures need it, in one table
 * with no MPI in it: its CSV name, its buffer layout and root roles, its bus
 * factor, whether its vector is split in one block per rank, and the size it
 * measures. Each binary (mpi/gdrb_mpi_<name>.c) names its entry and adds only
 * the MPI call; tests/unit/test_figures.c links this table without MPI and checks
 * every entry at 1 to 8 ranks.
 */
#ifndef GDRB_COLL_TABLE_H
#define GDRB_COLL_TABLE_H

#include <stdbool.h>
#include <stddef.h>

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

struct gdrb_coll_kind {
	const char *name;       /* CSV benchmark column: "mpi_allreduce" */
	enum gdrb_coll_layout layout;
	unsigned flags;
	/* algbw -> busbw for n ranks, as nccl-tests defines it (gdrb_figures.h's gdrb_bus_*). */
	double (*bus_factor)(int n);
};

extern const struct gdrb_coll_kind gdrb_coll_allreduce, gdrb_coll_allgather,
	gdrb_coll_reduce_scatter, gdrb_coll_alltoall, gdrb_coll_bcast, gdrb_coll_reduce,
	gdrb_coll_gather, gdrb_coll_scatter, gdrb_coll_barrier;

/* Every entry above, ended by NULL. */
extern const struct gdrb_coll_kind *const gdrb_coll_kinds[];

/* Whether the vector is one block per rank: allgather, gather, reduce_scatter, scatter, alltoall. */
bool gdrb_coll_blocked(const struct gdrb_coll_kind *k);

/* Bytes per element: the --dtype's (dtype_size) for a reduction, else 1 (bytes are moved). */
size_t gdrb_coll_elem(const struct gdrb_coll_kind *k, size_t dtype_size);

/* The size measured for a requested size: 0 without payload, else gdrb_fig_coll_size
 * (a blocked one down to a multiple of nranks x the element, at least one each). */
size_t gdrb_coll_size(const struct gdrb_coll_kind *k, size_t size, size_t dtype_size, int nranks);

#endif
