/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclReduce: the root gets the reduction of every rank's vector */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_nccl.h"
#include "gdrb_transports.h"

static ncclResult_t reduce_call(const struct gdrb_nccl_call *k)
{
	return ncclReduce(k->send, k->recv, k->count, k->type, k->op, k->root, k->comm, k->stream);
}

static const struct gdrb_nccl_coll reduce = {
	.kind = &gdrb_coll_reduce,
	.name = "nccl_reduce",
	.no_flags = 0,
	.summary = "ncclReduce: the root gets the reduction of every rank's vector",
	.call = reduce_call,
};

int main(int argc, char **argv)
{
	return gdrb_nccl_coll_main(&reduce, &gdrb_boot_mpi, gdrb_opt_catalog, argc, argv);
}
