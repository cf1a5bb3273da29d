/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NCCL options (nccl_opts.c): --nccl-gdr, --nccl-net-only, --nccl-timing,
 * --nccl-batch and --nccl-pattern, and their params. No nccl.h, so that every binary can refuse them by name
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

/*
 * --nccl-timing: what a sample holds. batch: --nccl-batch calls launched back
 * to back, then one synchronisation (nccl-tests' default); call: one call and
 * its synchronisation (nccl-tests -z 2); graph: the batch captured once in a
 * CUDA graph, one launch and one synchronisation (nccl-tests -G 1).
 */
enum gdrb_nccl_timing { GDRB_NCCL_TIMING_BATCH, GDRB_NCCL_TIMING_CALL, GDRB_NCCL_TIMING_GRAPH,
			GDRB_NCCL_TIMING_COUNT };

extern const char *const gdrb_nccl_timing_names[GDRB_NCCL_TIMING_COUNT];

/* --nccl-pattern (gdrb_nccl_sendrecv): pairs (rank i with i+n/2) or ring (i to i+1, from i-1). */
enum gdrb_nccl_pattern { GDRB_NCCL_PATTERN_PAIRS, GDRB_NCCL_PATTERN_RING, GDRB_NCCL_PATTERN_COUNT };

extern const char *const gdrb_nccl_pattern_names[GDRB_NCCL_PATTERN_COUNT];

/* --nccl-batch: its default (nccl-tests' -n) and bounds. */
#define GDRB_NCCL_BATCH_DEFAULT 20u
#define GDRB_NCCL_BATCH_MAX 100000u

struct gdrb_nccl_params {
	int gdr;                /* enum gdrb_nccl_gdr */
	bool net_only;          /* NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1, NCCL_NVLS_ENABLE=0 */
	bool tuning_log;        /* NCCL_DEBUG_SUBSYS gains TUNING: what NCCL chose, per call */
	int timing;             /* enum gdrb_nccl_timing */
	unsigned batch;         /* calls per synchronisation in batch and graph timing */
	int pattern;            /* enum gdrb_nccl_pattern (sendrecv) */
};

/*
 * Which of them a binary offers (struct gdrb_opt_use.select): every NCCL
 * binary GDRB_NCCL_OPTS; gdrb_nccl_sendrecv GDRB_NCCL_OPT_PATTERN too.
 */
enum { GDRB_NCCL_OPTS = 1u << 0, GDRB_NCCL_OPT_PATTERN = 1u << 1 };

extern const struct gdrb_opt_group gdrb_nccl_opts;

static inline const struct gdrb_nccl_params *gdrb_nccl_params(const struct gdrb_params *p)
{
	return (const struct gdrb_nccl_params *)gdrb_group_params(p, &gdrb_nccl_opts);
}

#endif
