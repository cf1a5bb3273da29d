/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NCCL on the common driver (docs/nccl.md). One communicator and one
 * non-blocking stream per rank, bootstrapped through the run's bootstrap
 * (rank 0's ncclGetUniqueId, broadcast); NCCL's environment set before it
 * starts (--nccl-gdr, --nccl-net-only, its INFO log into a private file); a
 * sample is a batch of calls and one synchronisation, timed on the host as
 * nccl-tests times its calls (--nccl-timing, nccl_batch.h); after every size each rank's log is read back and
 * rank 0 puts the transports NCCL used, its GPUDirect connections and its
 * version into the rows. A collective is a descriptor: its entry of the
 * collectives' table (gdrb_coll_table.h), its CSV name and the one NCCL call.
 */
#ifndef GDRB_NCCL_H
#define GDRB_NCCL_H

#include <stddef.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "gdrb_boot.h"
#include "gdrb_coll_table.h"

/* The arguments of one call; counts are in units of type. */
struct gdrb_nccl_call {
	const void *send;       /* in place: where NCCL wants the input inside recv */
	void *recv;
	size_t count;           /* per call as NCCL counts it: allgather's sendcount, reduce_scatter's recvcount */
	size_t elem;            /* bytes of one element of type */
	ncclDataType_t type;
	ncclRedOp_t op;
	int root;
	int nranks;
	ncclComm_t comm;
	cudaStream_t stream;
};

struct gdrb_nccl_coll {
	const struct gdrb_coll_kind *kind;      /* layout, roles, bus factor */
	const char *name;                       /* CSV benchmark column: "nccl_allreduce" */
	unsigned no_flags;                      /* the kind's flags NCCL's call lacks (alltoall: in place) */
	const char *summary;
	ncclResult_t (*call)(const struct gdrb_nccl_call *k);
};

/*
 * Run a collective under the bootstrap boot (the MPI one); known: the option groups refused
 * by name (the binary's main passes gdrb_opt_catalog, which this layer may not name).
 * Returns the exit code.
 */
int gdrb_nccl_coll_main(const struct gdrb_nccl_coll *coll, struct gdrb_boot *boot,
			const struct gdrb_opt_group *const *known, int argc, char **argv);

/* gdrb_nccl_sendrecv: rank i and rank i + n/2 exchange a message each way per call. */
int gdrb_nccl_sendrecv_main(struct gdrb_boot *boot, const struct gdrb_opt_group *const *known,
			    int argc, char **argv);

#endif
