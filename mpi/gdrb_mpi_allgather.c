/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Allgather: every rank gets every rank's block */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int allgather_call(const struct gdrb_coll_call *k)
{
	return MPI_Allgather(k->send, k->count, k->type, k->recv, k->count, k->type, MPI_COMM_WORLD);
}

static const struct gdrb_coll allgather = {
	.kind = &gdrb_coll_allgather,
	.summary = "MPI_Allgather: every rank gets every rank's block",
	.call = allgather_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&allgather, gdrb_opt_catalog, argc, argv);
}
