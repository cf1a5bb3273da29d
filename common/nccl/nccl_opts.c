/* SPDX-License-Identifier: BSD-3-Clause */
/* The NCCL options: their table, defaults and rule (gdrb_nccl_opts.h). */
#include "config.h"

#include <stddef.h>

#include "gdrb_log.h"
#include "gdrb_nccl_opts.h"

const char *const gdrb_nccl_gdr_names[GDRB_NCCL_GDR_COUNT] = { "auto", "on", "off", "both" };
const char *const gdrb_nccl_timing_names[GDRB_NCCL_TIMING_COUNT] = { "batch", "call", "graph" };
const char *const gdrb_nccl_pattern_names[GDRB_NCCL_PATTERN_COUNT] = { "pairs", "ring" };

#define NCCLP(field) offsetof(struct gdrb_nccl_params, field)

static const struct gdrb_opt nccl_table[] = {
	{ .name = "nccl-gdr", .arg = "MODE",
	  .help = "GPUDirect RDMA for NCCL's network connections, set before NCCL starts: auto (NCCL's own choice), on (NCCL_NET_GDR_LEVEL=SYS: allowed at any GPU-NIC distance; the CSV path direct) or off (NCCL_NET_GDR_LEVEL=LOC: NCCL stages through host memory; the CSV path staged); one setting per process, so both paths are two runs (gdrb sweep --profile nccl-gdr pairs them) (default auto)",
	  .when = GDRB_NCCL_OPTS, .parse = gdrb_opt_enum, .off = NCCLP(gdr),
	  .names = gdrb_nccl_gdr_names, .nnames = GDRB_NCCL_GDR_COUNT, .what = "mode" },
	{ .name = "nccl-net-only",
	  .help = "NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1 and NCCL_NVLS_ENABLE=0: ranks on one node talk through the network too, not through NVLink SHARP either (a node's GPUs and NICs tested on their own)",
	  .when = GDRB_NCCL_OPTS, .parse = gdrb_opt_set_bool, .off = NCCLP(net_only), .value = 1 },
	{ .name = "nccl-tuning-log",
	  .help = "NCCL's TUNING log on (NCCL_DEBUG_SUBSYS gains TUNING): the CSV algorithm, protocol and channels say what NCCL chose at each size; NCCL then writes a line per call on rank 0, a cost inside the timed calls, so leave it off for figures set beside nccl-tests' (without it those columns come from NCCL_ALGO and NCCL_PROTO where set, or stay empty)",
	  .when = GDRB_NCCL_OPTS, .parse = gdrb_opt_set_bool, .off = NCCLP(tuning_log), .value = 1 },
	{ .name = "nccl-timing", .arg = "MODE",
	  .help = "what one sample holds: batch (--nccl-batch calls launched back to back, then one synchronisation of the stream; the time per call is the sample over the calls, as nccl-tests times by default), call (one call and its synchronisation, as nccl-tests -z 2) or graph (the batch captured once in a CUDA graph per size, one launch and one synchronisation per sample, as nccl-tests -G 1) (default batch)",
	  .when = GDRB_NCCL_OPTS, .parse = gdrb_opt_enum, .off = NCCLP(timing),
	  .names = gdrb_nccl_timing_names, .nnames = GDRB_NCCL_TIMING_COUNT, .what = "timing mode" },
	{ .name = "nccl-batch", .arg = "N",
	  .help = "calls per synchronisation in batch and graph timing, 1 to 100000 (default 20, nccl-tests' -n)",
	  .when = GDRB_NCCL_OPTS, .parse = gdrb_opt_uint, .off = NCCLP(batch),
	  .min = 1, .max = GDRB_NCCL_BATCH_MAX },
	{ .name = "nccl-pattern", .arg = "PATTERN",
	  .help = "who sends to whom: pairs (rank i and rank i+n/2 exchange a message each way) or ring (rank i sends to i+1 and receives from i-1, nccl-tests' sendrecv_perf) (default pairs)",
	  .when = GDRB_NCCL_OPT_PATTERN, .parse = gdrb_opt_enum, .off = NCCLP(pattern),
	  .names = gdrb_nccl_pattern_names, .nnames = GDRB_NCCL_PATTERN_COUNT, .what = "pattern" },
};

static void nccl_defaults(void *params)
{
	struct gdrb_nccl_params *np = params;

	np->gdr = GDRB_NCCL_GDR_AUTO;
	np->net_only = false;
	np->tuning_log = false;
	np->timing = GDRB_NCCL_TIMING_BATCH;
	np->batch = GDRB_NCCL_BATCH_DEFAULT;
	np->pattern = GDRB_NCCL_PATTERN_PAIRS;
}

static int nccl_check(const struct gdrb_params *p, const void *params)
{
	const struct gdrb_nccl_params *np = params;

	(void)p;
	if (np->gdr != GDRB_NCCL_GDR_BOTH)
		return 0;
	gdrb_usage_err("--nccl-gdr both: NCCL reads its settings once per process, so each path is its own launch; run --nccl-gdr on (or auto) and --nccl-gdr off, or 'gdrb sweep --profile nccl-gdr', which runs both and pairs their rows; accepted here: auto, on, off");
	return GDRB_ERR_USAGE;
}

const struct gdrb_opt_group gdrb_nccl_opts = {
	.name = "nccl",
	.opts = nccl_table,
	.nopts = sizeof(nccl_table) / sizeof(nccl_table[0]),
	.size = sizeof(struct gdrb_nccl_params),
	.defaults = nccl_defaults,
	.check = nccl_check,
};
