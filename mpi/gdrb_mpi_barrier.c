/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Barrier latency */
#include "config.h"

#include "gdrb_coll.h"
#include "gdrb_transports.h"

static int barrier_call(const struct gdrb_coll_call *k)
{
	(void)k;
	return MPI_Barrier(MPI_COMM_WORLD);
}

static const struct gdrb_coll barrier = {
	.kind = &gdrb_coll_barrier,
	.summary = "MPI_Barrier latency",
	.call = barrier_call,
};

int main(int argc, char **argv)
{
	return gdrb_coll_main(&barrier, gdrb_opt_catalog, argc, argv);
}
