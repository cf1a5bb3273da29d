/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Scatter: rank i gets block i of the root's vector */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int scatter_call(const struct gdrb_coll_call *k)
{
	return MPI_Scatter(k->send, k->count, k->type, k->recv, k->count, k->type, k->root, MPI_COMM_WORLD);
}

static const struct gdrb_coll scatter = {
	.kind = &gdrb_coll_scatter,
	.summary = "MPI_Scatter: rank i gets block i of the root's vector",
	.call = scatter_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&scatter, gdrb_opt_catalog, argc, argv);
}
