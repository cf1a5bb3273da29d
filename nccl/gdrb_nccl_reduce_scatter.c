/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclReduceScatter: rank i gets block i of the reduction of every rank's vector */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_nccl.h"
#include "gdrb_transports.h"

static ncclResult_t reduce_scatter_call(const struct gdrb_nccl_call *k)
{
	return ncclReduceScatter(k->send, k->recv, k->count, k->type, k->op, k->comm, k->stream);
}

static const struct gdrb_nccl_coll reduce_scatter = {
	.kind = &gdrb_coll_reduce_scatter,
	.name = "nccl_reduce_scatter",
	.no_flags = 0,
	.summary = "ncclReduceScatter: rank i gets block i of the reduction of every rank's vector",
	.call = reduce_scatter_call,
};

int main(int argc, char **argv)
{
	return gdrb_nccl_coll_main(&reduce_scatter, &gdrb_boot_mpi, gdrb_opt_catalog, argc, argv);
}
