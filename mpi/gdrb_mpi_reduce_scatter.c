/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Reduce_scatter_block: rank i gets block i of the reduction */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int reduce_scatter_call(const struct gdrb_coll_call *k)
{
	return MPI_Reduce_scatter_block(k->send, k->recv, k->count, k->type, k->op, MPI_COMM_WORLD);
}

static const struct gdrb_coll reduce_scatter = {
	.kind = &gdrb_coll_reduce_scatter,
	.summary = "MPI_Reduce_scatter_block: rank i gets block i of the reduction",
	.call = reduce_scatter_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&reduce_scatter, gdrb_opt_catalog, argc, argv);
}
