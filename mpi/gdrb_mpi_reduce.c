/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Reduce: the root gets the reduction of every rank's vector */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int reduce_call(const struct gdrb_coll_call *k)
{
	return MPI_Reduce(k->send, k->recv, k->count, k->type, k->op, k->root, MPI_COMM_WORLD);
}

static const struct gdrb_coll reduce = {
	.kind = &gdrb_coll_reduce,
	.summary = "MPI_Reduce: the root gets the reduction of every rank's vector",
	.call = reduce_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&reduce, gdrb_opt_catalog, argc, argv);
}
