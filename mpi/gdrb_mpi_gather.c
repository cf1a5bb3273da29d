/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Gather: the root gets every rank's block */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int gather_call(const struct gdrb_coll_call *k)
{
	return MPI_Gather(k->send, k->count, k->type, k->recv, k->count, k->type, k->root, MPI_COMM_WORLD);
}

static const struct gdrb_coll gather = {
	.kind = &gdrb_coll_gather,
	.summary = "MPI_Gather: the root gets every rank's block",
	.call = gather_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&gather, gdrb_opt_catalog, argc, argv);
}
