/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclAllReduce: every rank gets the reduction of every rank's vector */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_nccl.h"
#include "gdrb_transports.h"

static ncclResult_t allreduce_call(const struct gdrb_nccl_call *k)
{
	return ncclAllReduce(k->send, k->recv, k->count, k->type, k->op, k->comm, k->stream);
}

static const struct gdrb_nccl_coll allreduce = {
	.kind = &gdrb_coll_allreduce,
	.name = "nccl_allreduce",
	.no_flags = 0,
	.summary = "ncclAllReduce: every rank gets the reduction of every rank's vector",
	.call = allreduce_call,
};

int main(int argc, char **argv)
{
	return gdrb_nccl_coll_main(&allreduce, &gdrb_boot_mpi, gdrb_opt_catalog, argc, argv);
}
