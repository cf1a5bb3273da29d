/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Bcast: every rank gets the root's vector */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int bcast_call(const struct gdrb_coll_call *k)
{
	return MPI_Bcast(k->recv, k->count, k->type, k->root, MPI_COMM_WORLD);
}

static const struct gdrb_coll bcast = {
	.kind = &gdrb_coll_bcast,
	.summary = "MPI_Bcast: every rank gets the root's vector",
	.call = bcast_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&bcast, gdrb_opt_catalog, argc, argv);
}
