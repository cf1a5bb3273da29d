/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Alltoall: block j of rank i goes to rank j */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int alltoall_call(const struct gdrb_coll_call *k)
{
	return MPI_Alltoall(k->send, k->count, k->type, k->recv, k->count, k->type, MPI_COMM_WORLD);
}

static const struct gdrb_coll alltoall = {
	.kind = &gdrb_coll_alltoall,
	.summary = "MPI_Alltoall: block j of rank i goes to rank j",
	.call = alltoall_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&alltoall, gdrb_opt_catalog, argc, argv);
}
