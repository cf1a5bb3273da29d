/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclAllGather: every rank gets every rank's block */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_nccl.h"
#include "gdrb_transports.h"

static ncclResult_t allgather_call(const struct gdrb_nccl_call *k)
{
	return ncclAllGather(k->send, k->recv, k->count, k->type, k->comm, k->stream);
}

static const struct gdrb_nccl_coll allgather = {
	.kind = &gdrb_coll_allgather,
	.name = "nccl_allgather",
	.no_flags = 0,
	.summary = "ncclAllGather: every rank gets every rank's block",
	.call = allgather_call,
};

int main(int argc, char **argv)
{
	return gdrb_nccl_coll_main(&allgather, &gdrb_boot_mpi, gdrb_opt_catalog, argc, argv);
}
