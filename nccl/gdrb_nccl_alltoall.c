/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclSend/ncclRecv to and from every rank in one group: block j of rank i's vector goes to rank j (as nccl-tests' alltoall) */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_nccl.h"
#include "gdrb_transports.h"

static ncclResult_t alltoall_call(const struct gdrb_nccl_call *k)
{
	size_t blk = k->count * k->elem;
	ncclResult_t rc = ncclGroupStart();
	int q;

	for (q = 0; q < k->nranks && rc == ncclSuccess; q++) {
		rc = ncclSend((const char *)k->send + (size_t)q * blk, k->count, k->type, q, k->comm, k->stream);
		if (rc == ncclSuccess)
			rc = ncclRecv((char *)k->recv + (size_t)q * blk, k->count, k->type, q, k->comm, k->stream);
	}
	/* A group started is ended, whatever failed inside it. */
	return rc == ncclSuccess ? ncclGroupEnd() : (ncclGroupEnd(), rc);
}

static const struct gdrb_nccl_coll alltoall = {
	.kind = &gdrb_coll_alltoall,
	.name = "nccl_alltoall",
	.no_flags = GDRB_COLL_IN_PLACE,
	.summary = "ncclSend/ncclRecv to and from every rank in one group: block j of rank i's vector goes to rank j (as nccl-tests' alltoall)",
	.call = alltoall_call,
};

int main(int argc, char **argv)
{
	return gdrb_nccl_coll_main(&alltoall, &gdrb_boot_mpi, gdrb_opt_catalog, argc, argv);
}
