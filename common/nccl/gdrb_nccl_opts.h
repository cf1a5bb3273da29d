/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NCCL options (nccl_opts.c): --nccl-gdr and --nccl-net-only, and their
 * params. No nccl.h, so that every binary can refuse them by name
 * (common/catalog) and they parse where NCCL is not built.
 */
#ifndef GDRB_NCCL_OPTS_H
#define GDRB_NCCL_OPTS_H

#include <stdbool.h>

#include "gdrb_opts.h"

/*
 * --nccl-gdr: what NCCL_NET_GDR_LEVEL says before NCCL starts. auto leaves
 * NCCL its own choice (GPUDirect where the GPU and NIC are close enough), on
 * allows it at any distance (SYS), off forbids it (LOC: NCCL stages through
 * host memory). both is refused with the way to run both (one setting per process).
 */
enum gdrb_nccl_gdr { GDRB_NCCL_GDR_AUTO, GDRB_NCCL_GDR_ON, GDRB_NCCL_GDR_OFF, GDRB_NCCL_GDR_BOTH,
		     GDRB_NCCL_GDR_COUNT };

extern const char *const gdrb_nccl_gdr_names[GDRB_NCCL_GDR_COUNT];

struct gdrb_nccl_params {
	int gdr;                /* enum gdrb_nccl_gdr */
	bool net_only;          /* NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1, NCCL_NVLS_ENABLE=0 */
	bool tuning_log;        /* NCCL_DEBUG_SUBSYS gains TUNING: what NCCL chose, per call */
};

/* Which of them a binary offers (struct gdrb_opt_use.select): every NCCL binary, both. */
enum { GDRB_NCCL_OPTS = 1u << 0 };

extern const struct gdrb_opt_group gdrb_nccl_opts;

static inline const struct gdrb_nccl_params *gdrb_nccl_params(const struct gdrb_params *p)
{
	return (const struct gdrb_nccl_params *)gdrb_group_params(p, &gdrb_nccl_opts);
}

#endif
