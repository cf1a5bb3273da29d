/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI unidirectional bandwidth: a window of MPI_Isend, the receiver acknowledges it. */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"
#include "gdrb_transports.h"

static int bw_iteration(struct gdrb_ctx *c, size_t size)
{
	if (c->variant->pipelined)
		return gdrb_mpi_pipe(c, size, c->window, c->initiator, !c->initiator) ||
		       (c->initiator ? gdrb_mpi_recv(NULL, 0, c->peer, GDRB_TAG_ACK) :
				       gdrb_mpi_send(NULL, 0, c->peer, GDRB_TAG_ACK)) ? GDRB_ERR : 0;
	if (c->initiator) {
		if (gdrb_mpi_isend_window(c, size) || gdrb_mpi_waitall(c) ||
		    gdrb_mpi_recv(NULL, 0, c->peer, GDRB_TAG_ACK))
			return GDRB_ERR;
		return 0;
	}
	if (gdrb_mpi_irecv_window(c, size) || gdrb_mpi_waitall(c) || gdrb_mpi_stage_in_window(c, size))
		return GDRB_ERR;
	return gdrb_mpi_send(NULL, 0, c->peer, GDRB_TAG_ACK);
}

static const struct gdrb_bench mpi_bw = {
	.name = "mpi_bw",
	.layer = "mpi",
	.gpu_reg = GDRB_MPI_GPU_REG,
	.boot_is_wire = true,
	.summary = "MPI unidirectional bandwidth (window of MPI_Isend/MPI_Irecv, then an acknowledgement)",
	.metric = GDRB_METRIC_BW,
	.traffic = GDRB_TRAFFIC_UNIDIR,
	.opt_core = GDRB_OPTG_MEM | GDRB_OPTG_WINDOW,
	.opt_groups = (const struct gdrb_opt_use[]){ { &gdrb_mpi_opts, GDRB_MPI_OPT_CUDA }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = gdrb_mpi_p2p_setup,
	.iteration = bw_iteration,
	.end = gdrb_mpi_transport_end,
	.teardown = gdrb_mpi_p2p_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&mpi_bw, &gdrb_boot_mpi_ucx, argc, argv);
}
