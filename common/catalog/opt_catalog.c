/* SPDX-License-Identifier: BSD-3-Clause */
/* The option groups of the layers gdrbench ships; a new transport adds its group here. */
#include "config.h"

#include <stddef.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_coll_opts.h"
#include "gdrb_nccl_opts.h"
#include "gdrb_pairs.h"
#include "gdrb_transports.h"
#include "gdrb_verbs.h"

const struct gdrb_opt_group *const gdrb_opt_catalog[] = {
	&gdrb_verbs_opts,
	&gdrb_coll_opts,
	&gdrb_mpi_opts,
	&gdrb_pairs_opts,
	&gdrb_nccl_opts,
	NULL,
};
