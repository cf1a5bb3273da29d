/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Allreduce: every rank gets the reduction of every rank's vector */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int allreduce_call(const struct gdrb_coll_call *k)
{
	return MPI_Allreduce(k->send, k->recv, k->count, k->type, k->op, MPI_COMM_WORLD);
}

static const struct gdrb_coll allreduce = {
	.kind = &gdrb_coll_allreduce,
	.summary = "MPI_Allreduce: every rank gets the reduction of every rank's vector",
	.call = allreduce_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&allreduce, gdrb_opt_catalog, argc, argv);
}
