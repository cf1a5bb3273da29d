/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "driver_int.h"
#include "gdrb_clock.h"
#include "gdrb_driver.h"
#include "gdrb_figures.h"
#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_pattern.h"
#include "gdrb_report.h"
#include "gdrb_run.h"
#include "gdrb_stats.h"
#include "gdrb_watchdog.h"

const char *gdrb_placement_name(enum gdrb_placement pl)
{
	return pl == GDRB_PLACEMENT_OUT ? "out-of-place" : pl == GDRB_PLACEMENT_IN ? "in-place" : "";
}

/* What goes between a path's name and the placement's in messages: ", " where the run has placements. */
static const char *placement_sep(const struct gdrb_ctx *c)
{
	return c->placement == GDRB_PLACEMENT_NONE ? "" : ", ";
}

uint64_t gdrb_p2p_seed(size_t size, uint64_t iter, unsigned slot, unsigned role)
{
	return gdrb_pattern_seed(size, iter, slot, role);
}

void gdrb_mismatch(struct gdrb_ctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (c->mismatches_shown++)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gdrb_err("validation: %s (later mismatches at this size are counted, not shown)", msg);
}

int gdrb_stage_out(struct gdrb_ctx *c, size_t off, size_t len)
{
	if (!c->variant->staged || c->variant->pipelined)
		return 0;
	return gdrb_buf_copy(&c->send_bounce, off, &c->send, off, len);
}

int gdrb_stage_in(struct gdrb_ctx *c, size_t off, size_t len)
{
	if (!c->variant->staged || c->variant->pipelined)
		return 0;
	return gdrb_buf_copy(&c->recv, off, &c->recv_bounce, off, len);
}

/*
 * Collectives: time across ranks. avg is the mean of the per-rank means, min
 * and max the fastest and slowest rank's mean; the percentiles and stdev stay
 * those of every rank's samples pooled. algbw = size / avg, busbw = algbw x
 * the benchmark's bus factor.
 */
static void summarise_collective(struct run *r, size_t size, uint64_t n, struct outcome *agg)
{
	struct gdrb_ctx *c = &r->c;
	struct gdrb_fig_coll f;

	gdrb_fig_collective(&r->all_results[0].total_us, sizeof(r->all_results[0]), c->boot->size, n,
			    size, c->bench->bus_factor(c), &f);
	agg->lat.avg = f.avg_us;
	agg->lat.min = f.min_us;
	agg->lat.max = f.max_us;
	agg->algbw_GBps = f.algbw_GBps;
	agg->busbw_GBps = f.busbw_GBps;
	agg->bw_GBps = agg->algbw_GBps;
}

/* *max becomes v where v is larger or *max is not a number yet. */
static void busiest(double *max, double v)
{
	if (!isnan(v) && (isnan(*max) || v > *max))
		*max = v;
}

/* Rank 0: turn gathered results into per-pair and aggregate outcomes. */
void gdrb_drv_summarise(struct run *r, size_t size, uint64_t n, uint64_t want,
		      struct outcome *agg, struct outcome *pairs)
{
	struct gdrb_ctx *c = &r->c;
	int rank, np = c->npairs ? c->npairs : 1;
	double scale = gdrb_fig_sample_scale(c->bench->traffic, c->bench->metric, c->window), *pooled;
	size_t npooled = 0, i;

	memset(agg, 0, sizeof(*agg));
	agg->iters = n;
	agg->cpu_init_pct = agg->cpu_resp_pct = NAN;
	for (i = 0; i < (size_t)np; i++)
		pairs[i].cpu_init_pct = pairs[i].cpu_resp_pct = NAN;
	pooled = r->all_samples;
	for (rank = 0; rank < c->boot->size; rank++) {
		const struct rank_result *rr = &r->all_results[rank];
		struct outcome *o = &pairs[rr->pair % np];

		o->errors += rr->errors;
		agg->errors += rr->errors;
		if (rr->failed)
			o->status = GDRB_ST_FAILED;
		/* Per side, the busiest rank: a pair has one of each; collectives have initiators only. */
		busiest(rr->initiator ? &o->cpu_init_pct : &o->cpu_resp_pct, rr->cpu_pct);
		busiest(rr->initiator ? &agg->cpu_init_pct : &agg->cpu_resp_pct, rr->cpu_pct);
		if (!rr->initiator)
			continue;
		o->iters = n;
		o->bw_GBps = gdrb_fig_bw_GBps(rr->bytes_per_iter, n, rr->total_us);
		agg->bw_GBps += o->bw_GBps;
		/* Pool the initiators' samples, scaled to per-message times. */
		for (i = 0; i < n; i++)
			pooled[npooled + i] = r->all_samples[(size_t)rank * n + i] * scale;
		gdrb_stats_compute(pooled + npooled, n, &o->lat);
		npooled += n;
	}
	gdrb_stats_compute(pooled, npooled, &agg->lat);
	agg->status = GDRB_ST_OK;
	for (i = 0; i < (size_t)np; i++) {
		pairs[i].algbw_GBps = pairs[i].busbw_GBps = NAN;
		if (!pairs[i].status)
			pairs[i].status = pairs[i].errors ? GDRB_ST_INVALID : GDRB_ST_OK;
		if (strcmp(pairs[i].status, GDRB_ST_OK) && !strcmp(agg->status, GDRB_ST_OK))
			agg->status = pairs[i].status;
	}
	agg->algbw_GBps = agg->busbw_GBps = NAN;
	if (c->bench->traffic == GDRB_TRAFFIC_COLLECTIVE)
		summarise_collective(r, size, n, agg);
	agg->quality = gdrb_fig_quality(n, want, agg->lat.p50, agg->lat.p99);
	for (i = 0; i < (size_t)np; i++)
		pairs[i].quality = gdrb_fig_quality(n, want, pairs[i].lat.p50, pairs[i].lat.p99);
}

static int measure_variant(struct run *r, size_t size, const struct gdrb_variant *v,
			   struct outcome *agg, struct outcome *pairs)
{
	struct gdrb_ctx *c = &r->c;
	struct rank_result mine = { 0 };
	uint64_t n = 0, want = 0, errors = 0;
	double total_us = 0, cpu_pct = NAN;
	int rc;

	c->variant = v;
	c->mismatches_shown = 0;
	gdrb_watchdog_context(c->peer, c->peer >= 0 ? c->boot->hosts[c->peer] :
			      c->bench->traffic == GDRB_TRAFFIC_COLLECTIVE ?
			      "the other ranks of the collective" :
			      c->bench->needs_gpu ? "the GPU" : "the transport", v->label, size);
	rc = c->bench->begin && (c->bench->begin(c, size) || c->boot->barrier(c->boot)) ? GDRB_ERR :
	     gdrb_drv_measure(r, size, &n, &want, &errors, &total_us, &cpu_pct);
	if (!rc && c->bench->end)
		rc = c->bench->end(c, size);
	if (rc) {
		/* The peer may be blocked mid-iteration: take every rank down. */
		gdrb_err("%s failed at size %zu on the %s path%s%s", c->bench->name, size, v->label,
			 placement_sep(c), gdrb_placement_name(c->placement));
		fflush(stdout);
		r->aborted = true;
		c->boot->abort(c->boot, GDRB_EXIT_FAIL);
		return GDRB_ERR;
	}
	/* The timed loop and its agreement are over; the rows are not written yet. */
	gdrb_counters_read(r->counters, &mine.rise);
	if (gdrb_verbose() && c->initiator)
		gdrb_info("%s size %zu path %s%s%s: %llu timed iterations (at least %llu planned), %.3f s, %llu wrong bytes; %llu warm-up (the first took %.3f us, the plan's median %.3f us); the size's last batch began at %.3f s, it ended at %.3f s (hard stop %.3f s)",
			  c->bench->name, size, v->label, placement_sep(c), gdrb_placement_name(c->placement),
			  (unsigned long long)n,
			  (unsigned long long)want, total_us * 1e-6, (unsigned long long)errors,
			  (unsigned long long)r->plan_warmup, r->plan_cold_s * 1e6, r->plan_median_s * 1e6,
			  r->plan_last_batch_s, r->plan_size_s,
			  GDRB_MAX_STRETCH * r->p.time_per_size);
	mine.initiator = c->initiator;
	mine.pair = c->pair;
	mine.errors = errors;
	mine.total_us = total_us;
	mine.bytes_per_iter = gdrb_fig_bytes_per_iter(c->bench->traffic, size, c->window);
	mine.cpu_pct = cpu_pct;
	/* Point to point, so that a rank lost here is named, as in every other wait. */
	if (gdrb_boot_step_gather(c->boot, &mine, sizeof(mine), r->all_results, "gathering results", size) ||
	    gdrb_boot_step_gather(c->boot, r->samples, n * sizeof(double), r->all_samples, "gathering results",
				  size))
		return GDRB_ERR;
	if (c->boot->rank == 0) {
		gdrb_drv_summarise(r, size, n, want, agg, pairs);
		gdrb_counters_note(&r->all_results[0].rise, sizeof(r->all_results[0]), c->boot,
				   r->counters_note, sizeof(r->counters_note));
	}
	return 0;
}

/* The benchmark's placements, or the one without a choice. */
static void default_placements(struct gdrb_ctx *c)
{
	c->nplacements = c->bench->placements ? c->bench->placements(c, c->placements) : 0;
	if (!c->nplacements) {
		c->placements[0] = GDRB_PLACEMENT_NONE;
		c->nplacements = 1;
	}
	c->placement = c->placements[0];
}

/*
 * The default variants for the --mem kind: direct, and for a kind with staged
 * paths (device memory) the ones --staging asks for. Collectives stage whole buffers only.
 */
static void default_variants(struct gdrb_ctx *c)
{
	memset(c->variants, 0, sizeof(c->variants));
	if (c->bench->paths) {
		c->nvariants = c->bench->paths(c, c->variants);
		return;
	}
	c->nvariants = gdrb_run_paths(c->p->mem, c->bench->traffic == GDRB_TRAFFIC_COLLECTIVE ?
					   GDRB_SHAPE_COLLECTIVE : GDRB_SHAPE_MESSAGES,
					   c->p->staging, c->variants);
}

static int check_layout(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	int n = c->boot->size;

	if (c->bench->traffic == GDRB_TRAFFIC_LOCAL) {
		c->peer = -1;
		c->initiator = true;
		c->npairs = 1;
		if (n != 1)
			gdrb_warn("%s runs in one process; %d ranks each measure on their own",
				  c->bench->name, n);
		return 0;
	}
	if (c->bench->traffic == GDRB_TRAFFIC_COLLECTIVE) {
		c->peer = -1;
		c->initiator = true;
		c->npairs = 1;
		return 0;
	}
	if (n < 2 || n % 2) {
		gdrb_usage_err("%s is point-to-point: it needs an even number of ranks, at least 2 (got %d); run it as 'mpirun -np 2 %s'",
			       c->bench->name, n, gdrb_prog());
		return GDRB_ERR_USAGE;
	}
	c->npairs = n / 2;
	c->initiator = c->boot->rank < c->npairs;
	c->pair = c->boot->rank % c->npairs;
	c->peer = c->initiator ? c->boot->rank + c->npairs : c->boot->rank - c->npairs;
	return 0;
}

static int open_gpu(struct run *r)
{
	struct gdrb_ctx *c = &r->c;

	return gdrb_run_open_gpu(c->boot, &r->p, c->bench->needs_gpu ? c->bench->name : NULL, &c->gpu,
				 c->gpu_why, sizeof(c->gpu_why), &c->have_gpu);
}

/* The window of a size: -W, or what --window-bytes holds; never a function of the other sizes. */
unsigned gdrb_window_in_force(const struct gdrb_ctx *c, size_t size)
{
	if (!gdrb_has_window(c->bench))
		return 1;
	return gdrb_window_at(size, c->p->window, c->p->window_bytes, gdrb_windowed(c->bench, c->p));
}

/* The transport's own limit on the window (its queues): the row's note says so, stderr once. */
static void cap_window(struct run *r, size_t size)
{
	struct gdrb_ctx *c = &r->c;
	char why[160] = "", bytes[32];
	unsigned cap;
	int len = 0;

	c->window_note[0] = '\0';
	/* A window --window-bytes cut is part of what the row measured: said in the row (only
	 * where there is a window: latency and collectives run one message, and -W is not theirs). */
	if (gdrb_has_window(c->bench) && c->window < c->p->window)
		len = snprintf(c->window_note, sizeof(c->window_note), "window %u of -W %u: --window-bytes %s",
			       c->window, c->p->window,
			       gdrb_size_format(c->p->window_bytes, bytes, sizeof(bytes)));
	if (!c->window_cap || (cap = c->window_cap(c, size, why, sizeof(why))) >= c->window || !cap)
		return;
	snprintf(c->window_note + len, sizeof(c->window_note) - (size_t)len, "%swindow %u, not %u: %s",
		 len ? "; " : "", cap, c->window, why);
	if (!r->window_warned && c->boot->rank == 0)
		gdrb_warn("%s: window %u, not %u, at %zu B: %s (the CSV note says so at each size cut)",
			  c->bench->name, cap, c->window, size, why);
	r->window_warned = true;
	c->window = cap;
}

/*
 * The size actually measured for the s-th size asked, its stride and window set;
 * false when rounding mapped it onto the size before (measured once).
 */
static bool size_prepare(struct run *r, size_t s, size_t *size_out)
{
	struct gdrb_ctx *c = &r->c;
	size_t size = r->p.sizes.v[s];

	if (c->bench->adjust_size) {
		size = c->bench->adjust_size(c, r->p.sizes.v[s]);
		if (s > 0 && size == c->bench->adjust_size(c, r->p.sizes.v[s - 1]))
			return false;
	}
	c->stride = r->p.buffers == GDRB_BUFFERS_SINGLE ? 0 : size;
	c->window = gdrb_window_in_force(c, size);
	cap_window(r, size);
	*size_out = size;
	return true;
}

static const struct outcome unsupported = {
	.status = GDRB_ST_UNSUPPORTED, .bw_GBps = NAN, .algbw_GBps = NAN, .busbw_GBps = NAN,
	.cpu_init_pct = NAN, .cpu_resp_pct = NAN,
};

/* Rank 0: the CSV rows of one path at one size, the `all` row and one per pair. */
static void csv_rows(struct run *r, const struct gdrb_variant *v, size_t size,
		     const struct outcome *all, const struct outcome *per_pair, int np)
{
	char label[32];
	int q;

	gdrb_drv_csv_row(r, v, size, r->c.nsubjects ? r->c.subject_name : "all", all);
	if (!v->supported)
		return;         /* said in the row; not a failure */
	if (strcmp(all->status, GDRB_ST_OK))
		r->exit_code = GDRB_EXIT_FAIL;
	for (q = 0; q < np && np > 1; q++) {
		snprintf(label, sizeof(label), "%d:%d", q, q + np);
		gdrb_drv_csv_row(r, v, size, label, &per_pair[q]);
	}
}

/* Rank 0: the table lines of one size (every path side by side), then its wrong bytes. */
static void table_lines(struct run *r, size_t size, const struct outcome *agg,
			const struct outcome *pairs, int np)
{
	struct gdrb_ctx *c = &r->c;
	struct outcome line[GDRB_MAX_VARIANTS];
	char label[32];
	size_t i;
	int q;

	gdrb_drv_table_line(r, size, c->nsubjects ? c->subject_name : "all", agg);
	for (i = 0; i < c->nvariants && c->bench->reported; i++)
		c->bench->reported(c, size, i, agg[i].status, agg[i].bw_GBps);
	/* Under its line, as in its CSV note: a multi-node busbw above the line rate it crossed. */
	for (i = 0; i < c->nvariants; i++) {
		char over[512], sz[32];

		if (c->variants[i].supported && agg[i].status && !strcmp(agg[i].status, GDRB_ST_OK) &&
		    gdrb_fig_busbw_over_line(agg[i].busbw_GBps, c->lib_line_gbps, c->boot->nhosts, c->lib_line_from,
					     c->lib_line_why, over, sizeof(over)))
			printf("# %s%s%s: %s\n", gdrb_size_format(size, sz, sizeof(sz)), placement_sep(c),
			       gdrb_placement_name(c->placement), over);
	}
	for (q = 0; q < np && np > 1; q++) {
		for (i = 0; i < c->nvariants; i++)
			line[i] = c->variants[i].supported ? pairs[i * (size_t)np + q] : agg[i];
		snprintf(label, sizeof(label), "%d:%d", q, q + np);
		gdrb_drv_table_line(r, size, label, line);
	}
	for (i = 0; i < c->nvariants; i++)
		if (agg[i].errors)
			gdrb_err("%s: %llu wrong byte(s) at size %zu on the %s path%s%s (status invalid-data)",
				 c->bench->name, (unsigned long long)agg[i].errors, size,
				 c->variants[i].label, placement_sep(c), gdrb_placement_name(c->placement));
}

/* Subject k of the benchmark's (gdrb_ctx.nsubjects) before its placements; a failure ends the sweep. */
static int subject_at(struct run *r, unsigned k)
{
	r->c.subject = k;
	if (!r->c.nsubjects || !r->c.bench->select_subject(&r->c, k))
		return 0;
	r->exit_code = GDRB_EXIT_FAIL;
	return GDRB_ERR;
}

/*
 * Every size, on every subject, in every placement, every path. Each path's CSV rows are written
 * as soon as it is measured (a later path that fails or hangs leaves them in the
 * file); the table lines once a placement of the size is complete.
 */
static void sweep(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	struct outcome agg[GDRB_MAX_VARIANTS], *pairs;
	size_t s, i, j, size;
	int np = c->npairs ? c->npairs : 1;
	unsigned k;

	pairs = calloc((size_t)np * GDRB_MAX_VARIANTS, sizeof(*pairs));
	if (!pairs) {
		gdrb_err("out of memory");
		r->exit_code = GDRB_EXIT_FAIL;
		return;
	}
	for (s = 0; s < r->p.sizes.n; s++) {
		if (!size_prepare(r, s, &size))
			continue;
		for (k = 0; k < (c->nsubjects ? c->nsubjects : 1); k++)
		for (j = 0; j < c->nplacements; j++) {
			if (j == 0 && subject_at(r, k))
				goto out;
			c->placement = c->placements[j];
			memset(agg, 0, sizeof(agg));
			memset(pairs, 0, (size_t)np * GDRB_MAX_VARIANTS * sizeof(*pairs));
			for (i = 0; i < c->nvariants; i++) {
				const struct gdrb_variant *v = &c->variants[i];
				struct outcome *po = pairs + i * (size_t)np;

				if (!v->supported)
					agg[i] = unsupported;
				else if (measure_variant(r, size, v, &agg[i], po)) {
					r->exit_code = GDRB_EXIT_FAIL;
					goto out;
				}
				if (c->boot->rank == 0)
					csv_rows(r, v, size, &agg[i], po, np);
			}
			if (c->boot->rank == 0)
				table_lines(r, size, agg, pairs, np);
		}
	}
out:
	free(pairs);
}

static int setup_results(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	size_t n = r->p.iters;

	r->samples_cap = n;
	r->samples = malloc(n * sizeof(double));
	if (c->boot->rank == 0) {
		r->all_results = calloc((size_t)c->boot->size, sizeof(*r->all_results));
		r->all_samples = malloc((size_t)c->boot->size * n * sizeof(double));
	}
	if (!r->samples || (c->boot->rank == 0 && (!r->all_results || !r->all_samples))) {
		gdrb_err("out of memory for %zu samples per rank; lower --iters", n);
		return GDRB_ERR;
	}
	return 0;
}

/* What the transport says it uses, for the counters read around every measurement. */
static int open_counters(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	const struct gdrb_counters_want w = {
		/* A library that picks its own NIC: every active port of the node. */
		.library = c->bench->traffic == GDRB_TRAFFIC_LOCAL || c->nic_dev ? NULL : c->bench->layer,
		.nic_dev = c->nic_dev,
		.nic_port = c->nic_port,
		.gpu_bus_id = c->have_gpu ? c->gpu.pci_bus_id : NULL,
	};

	return gdrb_counters_open(c->boot, &w, &r->counters);
}

static void report_peak_memory(struct gdrb_boot *b)
{
	struct rusage ru;
	uint64_t kib = 0;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		kib = (uint64_t)ru.ru_maxrss;
	if (b->allreduce_u64(b, &kib, 1, GDRB_OP_MAX) == 0 && b->rank == 0 && gdrb_verbose())
		gdrb_info("peak resident memory of the largest rank: %.1f MiB", (double)kib / 1024.0);
}

static const char *const traffic_names[] = {
	[GDRB_TRAFFIC_PINGPONG] = "pingpong", [GDRB_TRAFFIC_UNIDIR] = "unidir",
	[GDRB_TRAFFIC_BIDIR] = "bidir", [GDRB_TRAFFIC_LOCAL] = "local",
	[GDRB_TRAFFIC_COLLECTIVE] = "collective",
};

/*
 * --describe's paths of a run on p: the ones default_variants() gives it, before the
 * transport looks; the direct path on GPU memory with the registration the transport
 * names before it registers (gpu_reg), else "none" (it decides as it sets up).
 */
static size_t describe_paths(const void *entry, const struct gdrb_params *p, struct gdrb_variant *v)
{
	const struct gdrb_bench *bench = entry;
	struct gdrb_ctx *c = calloc(1, sizeof(*c));
	size_t i, n;

	if (!c || (bench->own_buffers && !bench->paths)) {
		free(c);
		return 0;
	}
	c->p = p;
	c->bench = bench;
	default_variants(c);
	n = c->nvariants;
	memcpy(v, c->variants, n * sizeof(*v));
	free(c);
	for (i = 0; i < n; i++)
		if (!v[i].staged && !strcmp(v[i].reg, "host") && gdrb_mem_kind(p->mem)->on_gpu)
			v[i].reg = bench->gpu_reg ? bench->gpu_reg : "none";
	return n;
}

/* The run's state for BENCH, its options read and checked; NULL with *code the exit status. */
static struct run *run_begin(const struct gdrb_bench *bench, struct gdrb_boot *boot, int argc, char **argv,
			     int *code)
{
	const struct gdrb_opt_set set = { bench->opt_core, bench->opt_groups, bench->opt_known, NULL,
					  bench->default_mem };
	const struct gdrb_run_facts facts = {
		.benchmark = bench->name,
		.bidir_benchmark = !(bench->opt_core & GDRB_OPTG_BIDIR) ? NULL :
				   bench->bidir_name ? bench->bidir_name : bench->name,
		.layer = bench->layer,
		.metric = bench->metric == GDRB_METRIC_BW ? "bandwidth" : "latency",
		.traffic = traffic_names[bench->traffic],
		.needs_gpu = bench->needs_gpu,
		.paths = describe_paths,
		.entry = bench,
	};
	const struct gdrb_run_args args = { &set, bench->summary, NULL, &facts };
	struct run *r = calloc(1, sizeof(*r));
	struct gdrb_ctx *c;

	if (!r) {
		gdrb_err("out of memory");
		*code = GDRB_EXIT_FAIL;
		return NULL;
	}
	if (!gdrb_run_begin(&args, boot, argc, argv, &r->p, code)) {
		free(r);
		return NULL;
	}
	if (r->p.bidir && bench->traffic == GDRB_TRAFFIC_UNIDIR) {
		r->bidir = *bench;
		r->bidir.traffic = GDRB_TRAFFIC_BIDIR;
		if (bench->bidir_name)
			r->bidir.name = bench->bidir_name;
		bench = &r->bidir;
	}
	if (bench->opt_core & GDRB_OPTG_NO_SIZES) {
		r->p.sizes.n = 1;       /* no payload: one row of 0 bytes */
		r->p.sizes.v[0] = 0;
	}
	c = &r->c;
	c->p = &r->p;
	c->bench = bench;
	c->boot = boot;
	r->stall_us = gdrb_inject()->stall_us;
	r->stall_every = gdrb_inject()->stall_every;
	default_placements(c);
	return r;
}

/* Everything that can be refused, refused before any measurement: the exit status every rank agrees on. */
static int refuse_early(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	const struct gdrb_bench *bench = c->bench;
	struct gdrb_boot *boot = c->boot;
	int rc, code;

	rc = check_layout(r);
	if (!rc && bench->preflight)
		rc = bench->preflight(c);
	if (!rc && boot->rank == 0 && r->p.csv_path) {
		rc = gdrb_csv_open(r->p.csv_path, &r->csv);
		if (!rc)
			rc = gdrb_counters_file_open(r->p.csv_path, &r->counter_file);
	}
	code = gdrb_boot_agree_exit(boot, gdrb_exit_code(rc));
	if (code == GDRB_EXIT_OK)
		code = gdrb_boot_agree_exit(boot, gdrb_exit_code(open_gpu(r)));
	/* The same answer on every rank (the options): only a run on the GPU gathers. */
	if (code == GDRB_EXIT_OK && (gdrb_mem_kind(r->p.mem)->on_gpu || bench->needs_gpu))
		code = gdrb_boot_agree_exit(boot, gdrb_exit_code(gdrb_run_gpu_sharing(
			boot, &c->gpu, c->have_gpu, c->gpu_shared, sizeof(c->gpu_shared),
			&c->gpu_time_sliced)));
	if (code == GDRB_EXIT_OK && (gdrb_mem_kind(r->p.mem)->on_gpu || bench->needs_gpu))
		code = gdrb_boot_agree_exit(boot, gdrb_exit_code(gdrb_run_rails(
			boot, &c->gpu, c->have_gpu, c->rails, sizeof(c->rails))));
	if (code == GDRB_EXIT_OK && !bench->own_buffers) {
		default_variants(c);
		code = gdrb_boot_agree_exit(boot, gdrb_exit_code(gdrb_drv_check_room(r)));
	}
	return code;
}

/* The buffers, the staging, the benchmark's own setup, the samples and the counters. */
static int set_up(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	int rc = 0;

	if (!c->bench->own_buffers) {
		default_variants(c);
		rc = gdrb_drv_alloc_buffers(r);
		/* The staging probe is collective: every rank's buffers first. */
		rc = gdrb_boot_agree(c->boot, rc);
		if (!rc)
			rc = gdrb_drv_stage_open(r);
	}
	if (!rc && c->bench->setup)
		rc = c->bench->setup(c);
	if (!rc)
		rc = setup_results(r);
	if (!rc)
		rc = open_counters(r);
	return gdrb_boot_agree_exit(c->boot, gdrb_exit_code(rc));
}

/* The header, the sweep under the watchdog, the counters' account and the outputs closed. */
static int measure(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	struct gdrb_boot *boot = c->boot;

	c->nic = c->nic ? c->nic : "";
	c->variant = &c->variants[0];
	gdrb_drv_table_setup(r);
	if (boot->rank == 0)
		gdrb_drv_print_header(r);
	if (gdrb_watchdog_start(r->p.timeout))
		return GDRB_EXIT_FAIL;
	gdrb_counters_read(r->counters, NULL);
	sweep(r);
	if (!r->aborted && gdrb_counters_finish(r->counters, boot, c->bench->name,
						r->p.sizes.v[r->p.sizes.n - 1], r->counter_file, stdout))
		r->exit_code = GDRB_EXIT_FAIL;
	gdrb_watchdog_stop();
	report_peak_memory(boot);
	/* Results that could not be written make a failed run (said once, by rank 0). */
	if (boot->rank == 0 && gdrb_stdout_flush())
		r->exit_code = GDRB_EXIT_FAIL;
	if (gdrb_csv_close(r->csv) | gdrb_counters_file_close(r->counter_file))
		r->exit_code = GDRB_EXIT_FAIL;
	r->csv = NULL;
	r->counter_file = NULL;
	return gdrb_boot_agree_exit(boot, r->exit_code);
}

/* Whatever the run holds released, the boot finalised; CODE, or a failure if stdout could not be closed. */
static int run_end(struct run *r, int code)
{
	struct gdrb_ctx *c = &r->c;
	struct gdrb_boot *boot = c->boot;

	if (c->bench->teardown)
		c->bench->teardown(c);
	gdrb_drv_free_buffers(c);
	gdrb_csv_close(r->csv);
	gdrb_counters_file_close(r->counter_file);
	gdrb_counters_close(r->counters);
	free(r->samples);
	free(r->all_samples);
	free(r->all_results);
	free(r);
	return gdrb_run_end(boot, code);
}

int gdrb_main(const struct gdrb_bench *bench, struct gdrb_boot *boot, int argc, char **argv)
{
	int code;
	struct run *r = run_begin(bench, boot, argc, argv, &code);

	if (!r)
		return code;
	code = refuse_early(r);
	if (code == GDRB_EXIT_OK)
		code = set_up(r);
	if (code == GDRB_EXIT_OK)
		code = measure(r);
	return run_end(r, code);
}
