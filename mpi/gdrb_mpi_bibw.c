/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI bidirectional bandwidth: both ranks of a pair send a window to each other at once. */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"
#include "gdrb_transports.h"

static int bibw_iteration(struct gdrb_ctx *c, size_t size)
{
	if (c->variant->pipelined)
		return gdrb_mpi_pipe(c, size, c->window, true, true);
	if (gdrb_mpi_irecv_window(c, size) || gdrb_mpi_isend_window(c, size) || gdrb_mpi_waitall(c) ||
	    gdrb_mpi_stage_in_window(c, size))
		return GDRB_ERR;
	return 0;
}

static const struct gdrb_bench mpi_bibw = {
	.name = "mpi_bibw",
	.layer = "mpi",
	.gpu_reg = GDRB_MPI_GPU_REG,
	.boot_is_wire = true,
	.summary = "MPI bidirectional bandwidth (both ranks of a pair send a window at once)",
	.metric = GDRB_METRIC_BW,
	.traffic = GDRB_TRAFFIC_BIDIR,
	.opt_core = GDRB_OPTG_MEM | GDRB_OPTG_WINDOW,
	.opt_groups = (const struct gdrb_opt_use[]){ { &gdrb_mpi_opts, GDRB_MPI_OPT_CUDA }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = gdrb_mpi_p2p_setup,
	.iteration = bibw_iteration,
	.end = gdrb_mpi_transport_end,
	.teardown = gdrb_mpi_p2p_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&mpi_bibw, &gdrb_boot_mpi_ucx, argc, argv);
}
