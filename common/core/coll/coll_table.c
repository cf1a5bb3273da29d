/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives' table (gdrb_coll_table.h): no MPI here, so the figure tests link it. */
#include "config.h"

#include "gdrb_coll_table.h"
#include "gdrb_figures.h"

const struct gdrb_coll_kind gdrb_coll_allreduce = {
	.name = "mpi_allreduce",
	.layout = GDRB_LAYOUT_FULL,
	.flags = GDRB_COLL_REDUCES | GDRB_COLL_IN_PLACE,
	.bus_factor = gdrb_bus_allreduce,
};

const struct gdrb_coll_kind gdrb_coll_allgather = {
	.name = "mpi_allgather",
	.layout = GDRB_LAYOUT_GATHER,
	.flags = GDRB_COLL_IN_PLACE,
	.bus_factor = gdrb_bus_spread,
};

const struct gdrb_coll_kind gdrb_coll_reduce_scatter = {
	.name = "mpi_reduce_scatter",
	.layout = GDRB_LAYOUT_SCATTER,
	.flags = GDRB_COLL_REDUCES | GDRB_COLL_IN_PLACE,
	.bus_factor = gdrb_bus_spread,
};

const struct gdrb_coll_kind gdrb_coll_alltoall = {
	.name = "mpi_alltoall",
	.layout = GDRB_LAYOUT_FULL,
	.flags = GDRB_COLL_IN_PLACE,
	.bus_factor = gdrb_bus_spread,
};

const struct gdrb_coll_kind gdrb_coll_bcast = {
	.name = "mpi_bcast",
	.layout = GDRB_LAYOUT_ONE_BUF,
	.flags = GDRB_COLL_ROOTED | GDRB_COLL_ROOT_IN,
	.bus_factor = gdrb_bus_one,
};

const struct gdrb_coll_kind gdrb_coll_reduce = {
	.name = "mpi_reduce",
	.layout = GDRB_LAYOUT_FULL,
	.flags = GDRB_COLL_REDUCES | GDRB_COLL_ROOTED | GDRB_COLL_ROOT_OUT | GDRB_COLL_IN_PLACE,
	.bus_factor = gdrb_bus_one,
};

const struct gdrb_coll_kind gdrb_coll_gather = {
	.name = "mpi_gather",
	.layout = GDRB_LAYOUT_GATHER,
	.flags = GDRB_COLL_ROOTED | GDRB_COLL_ROOT_OUT | GDRB_COLL_IN_PLACE,
	.bus_factor = gdrb_bus_spread,
};

const struct gdrb_coll_kind gdrb_coll_scatter = {
	.name = "mpi_scatter",
	.layout = GDRB_LAYOUT_SCATTER,
	.flags = GDRB_COLL_ROOTED | GDRB_COLL_ROOT_IN | GDRB_COLL_IN_PLACE,
	.bus_factor = gdrb_bus_spread,
};

/* No payload: size 0, so no algbw and no busbw whatever the factor. */
const struct gdrb_coll_kind gdrb_coll_barrier = {
	.name = "mpi_barrier",
	.layout = GDRB_LAYOUT_NONE,
	.flags = 0,
	.bus_factor = gdrb_bus_one,
};

const struct gdrb_coll_kind *const gdrb_coll_kinds[] = {
	&gdrb_coll_allreduce, &gdrb_coll_allgather, &gdrb_coll_reduce_scatter, &gdrb_coll_alltoall,
	&gdrb_coll_bcast, &gdrb_coll_reduce, &gdrb_coll_gather, &gdrb_coll_scatter,
	&gdrb_coll_barrier, NULL,
};

/* alltoall is FULL but not a reduction: each rank's vector is n blocks, one per destination. */
bool gdrb_coll_blocked(const struct gdrb_coll_kind *k)
{
	return k->layout == GDRB_LAYOUT_GATHER || k->layout == GDRB_LAYOUT_SCATTER ||
	       (k->layout == GDRB_LAYOUT_FULL && !(k->flags & GDRB_COLL_REDUCES));
}

size_t gdrb_coll_elem(const struct gdrb_coll_kind *k, size_t dtype_size)
{
	return k->flags & GDRB_COLL_REDUCES ? dtype_size : 1;
}

size_t gdrb_coll_size(const struct gdrb_coll_kind *k, size_t size, size_t dtype_size, int nranks)
{
	if (k->layout == GDRB_LAYOUT_NONE)
		return 0;
	return gdrb_fig_coll_size(size, gdrb_coll_elem(k, dtype_size), nranks, gdrb_coll_blocked(k));
}
