/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI layer's options: --mpi-cuda. No MPI header, so every binary can refuse it by name. */
#include "config.h"

#include <stddef.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_opts.h"

static const struct gdrb_opt mpi_table[] = {
	{ .name = "mpi-cuda", .arg = "MODE",
	  .help = "whether MPI is handed device pointers: auto (MPIX_Query_cuda_support(), else MPIX_CUDA_AWARE_SUPPORT), yes or no; yes on an MPI that is not CUDA-aware crashes with --mem device (default auto)",
	  .when = GDRB_MPI_OPT_CUDA, .parse = gdrb_opt_enum, .names = gdrb_mpi_cuda_names,
	  .nnames = GDRB_MPI_CUDA_COUNT, .what = "value" },
};

static void mpi_defaults(void *params)
{
	((struct gdrb_mpi_params *)params)->cuda = GDRB_MPI_CUDA_AUTO;
}

const struct gdrb_opt_group gdrb_mpi_opts = {
	.name = "mpi",
	.opts = mpi_table,
	.nopts = sizeof(mpi_table) / sizeof(mpi_table[0]),
	.size = sizeof(struct gdrb_mpi_params),
	.defaults = mpi_defaults,
};
