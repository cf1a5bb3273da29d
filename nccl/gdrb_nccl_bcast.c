/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclBroadcast: every rank gets the root's buffer (in place, one buffer, as MPI_Bcast) */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_nccl.h"
#include "gdrb_transports.h"

static ncclResult_t bcast_call(const struct gdrb_nccl_call *k)
{
	return ncclBroadcast(k->send, k->recv, k->count, k->type, k->root, k->comm, k->stream);
}

static const struct gdrb_nccl_coll bcast = {
	.kind = &gdrb_coll_bcast,
	.name = "nccl_bcast",
	.no_flags = 0,
	.summary = "ncclBroadcast: every rank gets the root's buffer (in place, one buffer, as MPI_Bcast)",
	.call = bcast_call,
};

int main(int argc, char **argv)
{
	return gdrb_nccl_coll_main(&bcast, &gdrb_boot_mpi, gdrb_opt_catalog, argc, argv);
}
