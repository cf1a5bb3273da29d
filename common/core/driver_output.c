/* SPDX-License-Identifier: BSD-3-Clause */
/* What the driver prints: the header, the side-by-side table and the CSV rows. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_int.h"
#include "gdrb_clock.h"
#include "gdrb_figures.h"
#include "gdrb_inject.h"
#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_report.h"
#include "gdrb_size.h"

/* The parts that are not empty, "; " between them: the one part itself, or joined in buf. */
static const char *note_of(char *buf, size_t len, const char *const *part, size_t nparts)
{
	const char *only = "";
	size_t i, at = 0, n = 0;

	buf[0] = '\0';
	for (i = 0; i < nparts; i++) {
		if (!part[i] || !*part[i])
			continue;
		only = part[i];
		n++;
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%.*s", at ? "; " : "",
					       (int)(len / 2), part[i]);
	}
	return n > 1 ? buf : only;
}

void gdrb_drv_csv_row(struct run *r, const struct gdrb_variant *v, size_t size,
		    const char *pair, const struct outcome *o)
{
	struct gdrb_ctx *c = &r->c;
	bool windowed = gdrb_has_window(c->bench);
	const char *label = r->p.label ? r->p.label : "";
	char note[1024];
	struct gdrb_row row = {
		.benchmark = c->bench->name,
		.layer = c->bench->layer,
		.mem = v->mem,
		.path = v->path,
		.reg = v->reg,
		.stage_chunk = v->pipelined ? r->stage_chunk : 0,
		.stage_slots = v->pipelined ? r->stage_slots : 0,
		.window = windowed ? c->window : 0,
		.buffers = windowed ? gdrb_buffers_names[r->p.buffers] : NULL,
		.pair = pair,
		.size = size,
		.iterations = o->iters,
		.lat = o->lat,
		.bw_GBps = o->bw_GBps,
		.algbw_GBps = o->algbw_GBps,
		.busbw_GBps = o->busbw_GBps,
		.cpu_initiator_pct = o->cpu_init_pct,
		.cpu_responder_pct = o->cpu_resp_pct,
		.ranks = c->boot->size,
		.hosts = c->boot->nhosts,
		.gpu = c->have_gpu ? c->gpu.name : "",
		.nic = c->nic ? c->nic : "",
		.link_layer = c->link_layer,
		.link_gbps = c->link_gbps,
		.gpu_nic_dist = c->gpu_nic_dist,
		.status = o->status,
		.errors = o->errors,
		.quality = o->quality,
		/* A path that did not run used no transport. */
		.transport = v->supported ? c->lib_transport : "",
		.gdr_connections = v->supported ? c->lib_gdr : "",
		.library = v->supported ? c->lib_name : "",
		.placement = gdrb_placement_name(c->placement),
		.timing = c->lib_timing,
		.calls_per_sync = c->lib_calls_per_sync,
		.algorithm = c->lib_algo,
		.protocol = c->lib_proto,
		.channels = c->lib_channels,
	};

	char over[512];
	/* An active test hook first, where no cut can drop it; then the label and why. */
	const char *parts[] = {
		gdrb_inject_note(), v->supported ? label : v->why,
		v->supported ? c->window_note : "", over, v->supported ? c->lib_note : "",
		v->supported ? c->gpu_shared : "", v->supported ? r->counters_note : "",
	};

	/* A multi-node busbw above the line rate its bytes crossed: said before the library's note. */
	(void)gdrb_fig_busbw_over_line(v->supported && o->status && !strcmp(o->status, GDRB_ST_OK) ? o->busbw_GBps : NAN,
				       c->lib_line_gbps, c->boot->nhosts, c->lib_line_from, c->lib_line_why,
				       over, sizeof(over));

	row.note = note_of(note, sizeof(note), parts, sizeof(parts) / sizeof(parts[0]));

	if (r->csv && gdrb_csv_append(r->csv, &row))
		r->exit_code = GDRB_EXIT_FAIL;
}

/* A table column: a title and how to read its value from an outcome. */
struct column {
	const char *title;
	double (*get)(const struct run *r, const struct outcome *o);
	int decimals;
};

static double col_iters(const struct run *r, const struct outcome *o) { (void)r; return (double)o->iters; }
static double col_window(const struct run *r, const struct outcome *o) { (void)o; return r->c.window; }
static double col_min(const struct run *r, const struct outcome *o) { (void)r; return o->lat.min; }
static double col_p50(const struct run *r, const struct outcome *o) { (void)r; return o->lat.p50; }
static double col_avg(const struct run *r, const struct outcome *o) { (void)r; return o->lat.avg; }
static double col_p99(const struct run *r, const struct outcome *o) { (void)r; return o->lat.p99; }
static double col_p999(const struct run *r, const struct outcome *o) { (void)r; return o->lat.p999; }
static double col_max(const struct run *r, const struct outcome *o) { (void)r; return o->lat.max; }
static double col_stdev(const struct run *r, const struct outcome *o) { (void)r; return o->lat.stdev; }
static double col_bw(const struct run *r, const struct outcome *o) { (void)r; return o->bw_GBps; }
static double col_algbw(const struct run *r, const struct outcome *o) { (void)r; return o->algbw_GBps; }
static double col_busbw(const struct run *r, const struct outcome *o) { (void)r; return o->busbw_GBps; }
static double col_rate(const struct run *r, const struct outcome *o)
{
	(void)r;
	return o->lat.avg > 0 ? 1.0 / o->lat.avg : NAN;
}

/* Columns of a one-path table, and of each path in a side-by-side table. */
static const struct column lat_one[] = {
	{ "iters", col_iters, 0 }, { "min_us", col_min, 2 }, { "p50_us", col_p50, 2 },
	{ "avg_us", col_avg, 2 }, { "p99_us", col_p99, 2 }, { "p99.9_us", col_p999, 2 },
	{ "max_us", col_max, 2 }, { "stdev_us", col_stdev, 2 }, { NULL, NULL, 0 },
};
static const struct column bw_one[] = {
	{ "iters", col_iters, 0 }, { "window", col_window, 0 }, { "bw_GBps", col_bw, 3 },
	{ "Mmsg/s", col_rate, 3 }, { "avg_us", col_avg, 2 }, { NULL, NULL, 0 },
};
static const struct column coll_one[] = {
	{ "iters", col_iters, 0 }, { "avg_us", col_avg, 2 }, { "min_us", col_min, 2 },
	{ "max_us", col_max, 2 }, { "p50_us", col_p50, 2 }, { "p99_us", col_p99, 2 },
	{ "algbw_GBps", col_algbw, 3 }, { "busbw_GBps", col_busbw, 3 }, { NULL, NULL, 0 },
};
static const struct column lat_each[] = {
	{ "p50_us", col_p50, 2 }, { "p99_us", col_p99, 2 }, { NULL, NULL, 0 },
};
static const struct column bw_each[] = { { "GBps", col_bw, 3 }, { NULL, NULL, 0 } };
static const struct column coll_each[] = {
	{ "avg_us", col_avg, 2 }, { "busbw_GBps", col_busbw, 3 }, { NULL, NULL, 0 },
};

static const struct column *table_columns(const struct gdrb_ctx *c)
{
	bool one = c->nvariants == 1;

	if (c->bench->traffic == GDRB_TRAFFIC_COLLECTIVE)
		return one ? coll_one : coll_each;
	if (c->bench->metric == GDRB_METRIC_BW)
		return one ? bw_one : bw_each;
	return one ? lat_one : lat_each;
}

/* The speedup of the first path over the second: time ratio or bandwidth ratio. */
static double speedup(const struct gdrb_ctx *c, const struct outcome *o)
{
	if (!o[0].status || !o[1].status || strcmp(o[0].status, GDRB_ST_OK) ||
	    strcmp(o[1].status, GDRB_ST_OK))
		return NAN;
	if (c->bench->traffic == GDRB_TRAFFIC_COLLECTIVE)
		return o[1].lat.avg / o[0].lat.avg;
	if (c->bench->metric == GDRB_METRIC_BW)
		return o[0].bw_GBps / o[1].bw_GBps;
	return o[1].lat.p50 / o[0].lat.p50;
}

/* Rank 0: one table line for a size (aggregate or one pair) across variants. */
void gdrb_drv_table_line(struct run *r, size_t size, const char *pair, const struct outcome *o)
{
	struct gdrb_ctx *c = &r->c;
	const struct column *cols = table_columns(c), *col;
	char cells[GDRB_TABLE_MAX_COLS][32], sz[32];
	const char *cell[GDRB_TABLE_MAX_COLS];
	size_t k = 0, i;

	cell[k++] = gdrb_size_format(size, sz, sizeof(sz));
	if (c->npairs > 1 || c->nsubjects)
		cell[k++] = pair;
	if (c->nplacements > 1)
		cell[k++] = gdrb_placement_name(c->placement);
	for (i = 0; i < c->nvariants; i++) {
		const char *st = o[i].status;

		for (col = cols; col->title && k < GDRB_TABLE_MAX_COLS; col++, k++) {
			if (!st || !strcmp(st, GDRB_ST_UNSUPPORTED))
				cell[k] = "n/a";
			else if (!strcmp(st, GDRB_ST_INVALID))
				cell[k] = "INVALID";
			else if (strcmp(st, GDRB_ST_OK))
				cell[k] = st;
			else
				cell[k] = gdrb_fmt_num(cells[k], sizeof(cells[k]), col->get(r, &o[i]),
						       col->decimals);
		}
	}
	if (c->nvariants >= 2 && k < GDRB_TABLE_MAX_COLS) {
		cell[k] = gdrb_fmt_num(cells[k], sizeof(cells[k]), speedup(c, o), 2);
		k++;
	}
	gdrb_table_print_row(stdout, &r->table, cell);
	if (gdrb_stdout_flush())
		r->exit_code = GDRB_EXIT_FAIL;
}

/* The pair column as wide as the longest subject's name; the paths as setup left them. */
static void widen_to_subjects(struct run *r, size_t col)
{
	struct gdrb_ctx *c = &r->c;
	struct gdrb_variant paths[GDRB_MAX_VARIANTS];
	unsigned k;

	memcpy(paths, c->variants, sizeof(paths));
	for (k = 0; k < c->nsubjects; k++)
		if (!c->bench->select_subject(c, k) && r->table.width[col] < (int)strlen(c->subject_name))
			r->table.width[col] = (int)strlen(c->subject_name);
	memcpy(c->variants, paths, sizeof(paths));
}

void gdrb_drv_table_setup(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	static char titles[GDRB_TABLE_MAX_COLS][48];
	const struct column *cols = table_columns(c), *col;
	const char *t[GDRB_TABLE_MAX_COLS];
	size_t k = 0, i, placement_col = 0, pair_col = 0;

	t[k++] = "size";
	if (c->npairs > 1 || c->nsubjects) {
		pair_col = k;
		t[k++] = "pair";
	}
	if (c->nplacements > 1) {
		placement_col = k;
		t[k++] = "placement";
	}
	for (i = 0; i < c->nvariants; i++) {
		for (col = cols; col->title && k < GDRB_TABLE_MAX_COLS; col++, k++) {
			if (c->nvariants == 1) {
				t[k] = col->title;
				continue;
			}
			snprintf(titles[k], sizeof(titles[k]), "%s_%s", c->variants[i].label,
				 col->title);
			t[k] = titles[k];
		}
	}
	if (c->nvariants >= 2 && k < GDRB_TABLE_MAX_COLS)
		t[k++] = "speedup";
	gdrb_table_init(&r->table, k, t);
	/* The column is as wide as its longest word, not its title. */
	if (placement_col && r->table.width[placement_col] < (int)strlen("out-of-place"))
		r->table.width[placement_col] = (int)strlen("out-of-place");
	if (pair_col && c->nsubjects)
		widen_to_subjects(r, pair_col);
}

/* The header's lines, each group in its own step; host, GPU, NIC and library names come from
 * the system: the lines are written as inert text (gdrb_text_lines). */

/* What runs where: the benchmark, a test hook's note, the layer, memory, ranks and hosts. */
static void header_run(FILE *hdr, const struct run *r)
{
	const struct gdrb_ctx *c = &r->c;
	const struct gdrb_params *p = &r->p;
	const struct gdrb_bench *b = c->bench;

	fprintf(hdr, "# gdrbench %s %s: %s\n", PACKAGE_VERSION, b->name, b->summary);
	if (gdrb_inject_active())
		fprintf(hdr, "# NOTE: %s (" GDRB_TEST_HOOKS_ENV "=1): these rows are a test's, never a measurement\n",
		       gdrb_inject_note());
	if (b->traffic == GDRB_TRAFFIC_LOCAL && (b->opt_core & GDRB_OPTG_MEM))
		fprintf(hdr, "# layer %s, mem %s (%s), one process on %s\n", b->layer,
		       gdrb_mem_kind_name(p->mem), c->send.ops ? c->send.ops->how : "-",
		       c->boot->hosts[0]);
	else if (b->traffic == GDRB_TRAFFIC_LOCAL)
		fprintf(hdr, "# layer %s, one process on %s\n", b->layer, c->boot->hosts[0]);
	else if (b->traffic == GDRB_TRAFFIC_COLLECTIVE)
		fprintf(hdr, "# layer %s, mem %s (%s), %d ranks on %d host(s)\n", b->layer,
		       gdrb_mem_kind_name(p->mem), c->send.ops ? c->send.ops->how : "-",
		       c->boot->size, c->boot->nhosts);
	else
		fprintf(hdr, "# layer %s, mem %s (%s), %d ranks on %d host(s), %d pair(s): rank i with rank i+%d\n",
		       b->layer, gdrb_mem_kind_name(p->mem), c->send.ops ? c->send.ops->how : "-",
		       c->boot->size, c->boot->nhosts, c->npairs, c->npairs);
	if (c->boot->describe) {
		char line[512];

		c->boot->describe(c->boot, line, sizeof(line));
		fprintf(hdr, "# %s\n", line);
	}
}

/* The GPU, or why none, its sharing, and the counters read around the run. */
static void header_gpu(FILE *hdr, const struct run *r)
{
	const struct gdrb_ctx *c = &r->c;

	if (c->have_gpu)
		fprintf(hdr, "# GPU: %s, PCI %s (rank 0: device %d of %d), CUDA runtime %d.%d, driver %d.%d\n",
		       c->gpu.name, c->gpu.pci_bus_id, c->gpu.index, c->gpu.count,
		       c->gpu.runtime_version / 1000, c->gpu.runtime_version % 1000 / 10,
		       c->gpu.driver_version / 1000, c->gpu.driver_version % 1000 / 10);
	if (c->have_gpu && c->rails[0])
		fprintf(hdr, "# rails (each rank's GPU, and the NIC nearest it by PCI distance): %s\n", c->rails);
	if (c->gpu_shared[0])
		fprintf(hdr, "# NOTE: %s: %s\n", c->gpu_shared, gdrb_run_gpu_sharing_why(c->gpu_time_sliced));
	if (c->have_gpu && c->gpu.simulated)
		fprintf(hdr, "# NOTE: the GPU is simulated (the test suite's stand-in for CUDA): these rows prove behaviour, never speed\n");
	if (!c->have_gpu)
		fprintf(hdr, "# GPU: none used (%s)\n", c->gpu_why[0] ? c->gpu_why : "host memory run");
	if (r->counters) {
		char line[1024];

		gdrb_counters_describe(r->counters, line, sizeof(line));
		fprintf(hdr, "# %s\n", line);
	}
}

/* Each path, how it moves the bytes and its registration, or why it cannot run. */
static void header_paths(FILE *hdr, const struct run *r)
{
	const struct gdrb_ctx *c = &r->c;
	char sz[32];
	size_t i;

	for (i = 0; i < c->nvariants; i++) {
		const struct gdrb_variant *v = &c->variants[i];

		if (v->supported)
			fprintf(hdr, "# path %s: %s (reg %s)\n", v->label, v->how, v->reg);
		if (v->supported && v->pipelined)
			fprintf(hdr, "# staging: %s fragments, %u pinned slots per direction: %s; a message of one fragment is copied, then sent\n",
			       gdrb_size_format(r->stage_chunk, sz, sizeof(sz)), r->stage_slots, r->stage_why);
		if (!v->supported)
			fprintf(hdr, "# path %s: n/a: %s\n", v->label, v->why);
	}
}

/* How each size is measured: the clock, sizes, iterations, validation, buffers, the benchmark's own words. */
static void header_method(FILE *hdr, const struct run *r)
{
	const struct gdrb_ctx *c = &r->c;
	const struct gdrb_params *p = &r->p;
	const struct gdrb_bench *b = c->bench;
	char lo[32], hi[32];

	fprintf(hdr, "# clock %s; sizes %s..%s (%zu); up to %llu iterations and %.2f s per size, %llu warm-up; validation %s; timeout %s\n",
	       gdrb_clock.source, gdrb_size_format(p->sizes.v[0], lo, sizeof(lo)),
	       gdrb_size_format(p->sizes.v[p->sizes.n - 1], hi, sizeof(hi)), p->sizes.n,
	       (unsigned long long)p->iters, p->time_per_size, (unsigned long long)p->warmup,
	       p->validate == GDRB_VALIDATE_EVERY ? "on every iteration, the timed ones filled before and checked after each" :
	       p->validate ? "on the warm-up's iterations and one after the timed ones (untimed; the timed ones run untouched)" :
	       "off", p->timeout > 0 ? "on" : "off");
	fprintf(hdr, "# iterations: warm-up in growing batches (at most %llu, a tenth of the budget once %d are in), the slowest rank's median warm-up iteration plans the rest; at least %llu timed (--min-iters) where that takes at most %dx the budget, else what the budget holds (at least %d); a size, warm-up and the agreements between ranks included, never past %dx the budget by more than an iteration, or the one timed iteration a row needs; quality: few-samples (fewer than planned), noisy (p99 > %.0fx p50)\n",
	       (unsigned long long)p->warmup, GDRB_WARMUP_MEDIAN_MIN,
	       (unsigned long long)(p->min_iters < p->iters ? p->min_iters : p->iters), GDRB_MIN_STRETCH,
	       GDRB_FLOOR_ITERS, GDRB_MAX_STRETCH, GDRB_NOISY_RATIO);
	if (gdrb_has_window(b) && p->buffers == GDRB_BUFFERS_SINGLE)
		fprintf(hdr, "# buffers single: every message of a window is sent from one buffer and received into one, as the OSU Micro-Benchmarks do by default (it stays in cache: not what NIC or GPU traffic sees)\n");
	else if (gdrb_has_window(b))
		fprintf(hdr, "# buffers slots: each message of a window has its own slot of the buffers; at each size the window is the smaller of -W %u and --window-bytes %s / size (the CSV window column; the note says where it is less than -W)\n",
		       p->window, gdrb_size_format(p->window_bytes, lo, sizeof(lo)));
	if (b->describe) {
		char line[4096];

		b->describe(c, line, sizeof(line));
		fprintf(hdr, "# %s\n", line);
	}
}

/* What the figures mean: their units, the placements, the speedup. */
static void header_units(FILE *hdr, const struct run *r)
{
	const struct gdrb_ctx *c = &r->c;
	const struct gdrb_bench *b = c->bench;
	size_t i;

	if (b->traffic == GDRB_TRAFFIC_COLLECTIVE)
		fprintf(hdr, "# time per call in us: avg = mean of the per-rank means, min/max = fastest/slowest rank's mean, p50/p99 over every rank's samples; algbw = size / avg, busbw = algbw x %.3f (GB/s = 1e9 B/s)\n",
		       b->bus_factor(c));
	else if (b->metric == GDRB_METRIC_LAT)
		fprintf(hdr, "# latency in us per message%s; percentiles over iterations\n",
		       b->traffic == GDRB_TRAFFIC_PINGPONG ? " (half round trip)" : "");
	else
		fprintf(hdr, "# bandwidth in GB/s (1e9 B/s) over the timed iterations%s\n",
		       b->traffic == GDRB_TRAFFIC_BIDIR ? ", both directions added" : "");
	if (c->nplacements > 1) {
		fprintf(hdr, "# placements:");
		for (i = 0; i < c->nplacements; i++)
			fprintf(hdr, "%s %s", i ? ", then" : "", gdrb_placement_name(c->placements[i]));
		fprintf(hdr, ": each size is measured on every path in each, a table line and a CSV row (placement) each\n");
	}
	if (c->nvariants >= 2)
		fprintf(hdr, "# speedup: %s\n", b->traffic == GDRB_TRAFFIC_COLLECTIVE ?
		       "second path's avg / first path's avg" : b->metric == GDRB_METRIC_BW ?
		       "first path's bandwidth / second path's" :
		       "second path's p50 / first path's p50");
}

void gdrb_drv_print_header(struct run *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *hdr = open_memstream(&text, &len);

	if (!hdr) {
		gdrb_err("cannot build the header: %s", strerror(errno));
		r->exit_code = GDRB_EXIT_FAIL;
		return;
	}
	header_run(hdr, r);
	header_gpu(hdr, r);
	header_paths(hdr, r);
	header_method(hdr, r);
	header_units(hdr, r);
	gdrb_table_print_header(hdr, &r->table);
	if (fclose(hdr) == 0)
		gdrb_text_lines(stdout, text, len);
	free(text);
	if (gdrb_stdout_flush())
		r->exit_code = GDRB_EXIT_FAIL;
}
