/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI ping-pong latency: the initiator sends, the responder answers; half the round trip. */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"
#include "gdrb_transports.h"

/* Pipelined staging: the message goes out in fragments, the answer comes back in fragments. */
static int pipelined_iteration(struct gdrb_ctx *c, size_t size)
{
	bool first = c->initiator;

	return gdrb_mpi_pipe(c, size, 1, first, !first) || gdrb_mpi_pipe(c, size, 1, !first, first) ?
	       GDRB_ERR : 0;
}

static int latency_iteration(struct gdrb_ctx *c, size_t size)
{
	if (c->variant->pipelined)
		return pipelined_iteration(c, size);
	if (c->initiator) {
		if (gdrb_stage_out(c, 0, size) ||
		    gdrb_mpi_send(gdrb_wire_send(c), size, c->peer, GDRB_TAG_DATA) ||
		    gdrb_mpi_recv(gdrb_wire_recv(c), size, c->peer, GDRB_TAG_DATA) ||
		    gdrb_stage_in(c, 0, size))
			return GDRB_ERR;
		return 0;
	}
	if (gdrb_mpi_recv(gdrb_wire_recv(c), size, c->peer, GDRB_TAG_DATA) ||
	    gdrb_stage_in(c, 0, size) || gdrb_stage_out(c, 0, size) ||
	    gdrb_mpi_send(gdrb_wire_send(c), size, c->peer, GDRB_TAG_DATA))
		return GDRB_ERR;
	return 0;
}

static const struct gdrb_bench mpi_latency = {
	.name = "mpi_latency",
	.layer = "mpi",
	.gpu_reg = GDRB_MPI_GPU_REG,
	.boot_is_wire = true,
	.summary = "MPI ping-pong latency (MPI_Send/MPI_Recv, half round trip)",
	.metric = GDRB_METRIC_LAT,
	.traffic = GDRB_TRAFFIC_PINGPONG,
	.opt_core = GDRB_OPTG_MEM,
	.opt_groups = (const struct gdrb_opt_use[]){ { &gdrb_mpi_opts, GDRB_MPI_OPT_CUDA }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = gdrb_mpi_p2p_setup,
	.iteration = latency_iteration,
	.end = gdrb_mpi_transport_end,
	.teardown = gdrb_mpi_p2p_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&mpi_latency, &gdrb_boot_mpi_ucx, argc, argv);
}
