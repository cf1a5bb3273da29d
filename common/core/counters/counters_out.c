/* SPDX-License-Identifier: BSD-3-Clause */
/* The counters at a run's end: every rank's readings to rank 0, the counter file, the lines after the table. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "counters_int.h"
#include "gdrb_counters.h"
#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_report.h"
#include "gdrb_stats.h"

#define LISTED 4                /* items a line after the table names, then "and N more" */

/* The header, from the schema's one definition: ",run_start,...", shown past the comma. */
#define GDRB_COUNTERS_COL(name, type) "," #name
#define GDRB_CSV_VERSION_END(n)
static const char header_list[] =
#include "counters_schema.def"
	;
#undef GDRB_CSV_VERSION_END
#undef GDRB_COUNTERS_COL

const char *gdrb_counters_header(void)
{
	return header_list + 1;
}

int gdrb_counters_path(const char *csv_path, char *buf, size_t len)
{
	const char *slash = strrchr(csv_path, '/'), *base = slash ? slash + 1 : csv_path;
	size_t stem = strlen(csv_path);

	if (strlen(base) > 4 && !strcmp(base + strlen(base) - 4, ".csv"))
		stem -= 4;
	if ((size_t)snprintf(buf, len, "%.*s.counters.csv", (int)stem, csv_path) >= len)
		return -ENAMETOOLONG;
	return 0;
}

struct gdrb_counters_file {
	struct gdrb_csv *csv;   /* NULL until there is a row to write, where the file was not there */
	char path[4096];
};

static struct gdrb_csv_kind file_kind(void)
{
	return (struct gdrb_csv_kind){ "counter file", gdrb_counters_header() };
}

int gdrb_counters_file_open(const char *csv_path, struct gdrb_counters_file **out)
{
	const struct gdrb_csv_kind kind = file_kind();
	struct gdrb_counters_file *f;
	struct stat st;
	int rc = 0;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f) {
		gdrb_err("out of memory");
		return GDRB_ERR;
	}
	if (gdrb_counters_path(csv_path, f->path, sizeof(f->path))) {
		gdrb_usage_err("--csv: '%.64s...': too long a path for its counter file beside it", csv_path);
		free(f);
		return GDRB_ERR_USAGE;
	}
	/* Anything at the path (a link included) is judged now, before anything is measured. */
	if (lstat(f->path, &st) == 0)
		rc = gdrb_csv_open_kind(f->path, &kind, &f->csv);
	if (rc) {
		free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int gdrb_counters_file_close(struct gdrb_counters_file *file)
{
	int rc;

	if (!file)
		return 0;
	rc = gdrb_csv_close(file->csv);
	free(file);
	return rc;
}

/* One counter of one rank as the file and the lines after the table take it: plain bytes. */
struct record {
	struct gdrb_cnt_id id;          /* id.name[0] == '\0': an unused slot */
	uint64_t before, after, delta;
	uint8_t have_before, have_after, have_delta;
	uint8_t state;                  /* enum cnt_row_state */
	uint8_t changed;
	uint8_t pad[3];
};

static void fill_records(const struct gdrb_counters *cs, struct record *rec)
{
	size_t i;

	for (i = 0; cs && i < cs->set.n; i++) {
		const struct cnt_track *t = &cs->track[i];
		struct record *r = &rec[i];

		r->id = cs->set.id[i];
		r->before = t->before;
		r->after = t->last;
		r->delta = t->rise;
		r->have_before = t->first_state == GDRB_CNT_READ_OK;
		r->have_after = t->last_state == GDRB_CNT_READ_OK;
		r->state = (uint8_t)gdrb_cnt_row_state(t);
		r->have_delta = r->state == ROW_OK && r->id.cls != GDRB_CNT_LINK;
		r->changed = t->changed;
	}
}

static void field_u64(FILE *f, bool have, uint64_t v)
{
	fputc(',', f);
	if (have)
		fprintf(f, "%llu", (unsigned long long)v);
}

static void field_text(FILE *f, const char *s)
{
	fputc(',', f);
	gdrb_csv_field(f, s);
}

/* Rank 0: one line per counter of every rank. */
static int write_file(struct gdrb_counters_file *file, const struct record *all, size_t per_rank,
		      const struct gdrb_boot *b, const char *run_start, const char *run_id, const char *benchmark)
{
	const struct gdrb_csv_kind kind = file_kind();
	char run_end[32], *line = NULL;
	size_t len = 0, i;
	int r, rc = 0;

	/* Made with its header by the run's first rows (refused as at the start, should it be now). */
	if (!file->csv && (rc = gdrb_csv_open_kind(file->path, &kind, &file->csv)))
		return rc;
	gdrb_timestamp(run_end, sizeof(run_end));
	for (r = 0; r < b->size && !rc; r++) {
		for (i = 0; i < per_rank && !rc; i++) {
			const struct record *c = &all[(size_t)r * per_rank + i];
			FILE *f;

			if (!c->id.name[0])
				continue;
			f = open_memstream(&line, &len);
			if (!f) {
				gdrb_err("out of memory for the counter file");
				return GDRB_ERR;
			}
			gdrb_csv_field(f, run_start);
			field_text(f, run_end);
			field_text(f, benchmark);
			field_text(f, b->hosts[r]);
			fprintf(f, ",%d", r);
			field_text(f, c->id.device);
			field_text(f, c->id.port);
			field_text(f, c->id.source);
			field_text(f, c->id.name);
			field_text(f, gdrb_cnt_class_name(c->id.cls));
			field_u64(f, c->have_before, c->before);
			field_u64(f, c->have_after, c->after);
			field_u64(f, c->have_delta, c->delta);
			field_text(f, gdrb_cnt_row_state_name((enum cnt_row_state)c->state));
			field_text(f, run_id);
			fputc('\n', f);
			if (fclose(f)) {
				gdrb_err("out of memory for the counter file");
				rc = GDRB_ERR;
			} else {
				rc = gdrb_csv_append_line(file->csv, line, len);
			}
			free(line);
			line = NULL;
		}
	}
	return rc;
}

/* A counter of the run as the lines after the table see it: ranks of one host reading one port merged. */
struct seen {
	const char *host;
	const struct record *rec;
	uint64_t delta;         /* the largest rise of the merged ranks' */
};

static int seen_cmp(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (!c)
		c = strcmp(x->rec->id.device, y->rec->id.device);
	if (!c)
		c = strcmp(x->rec->id.port, y->rec->id.port);
	if (!c)
		c = strcmp(x->rec->id.source, y->rec->id.source);
	return c ? c : strcmp(x->rec->id.name, y->rec->id.name);
}

static int by_delta(const void *a, const void *b)
{
	uint64_t x = ((const struct seen *)a)->delta, y = ((const struct seen *)b)->delta;

	return x < y ? 1 : x > y ? -1 : seen_cmp(a, b);
}

/* Every used record, one per host and counter: the worst state, the largest rise of ok ones. */
static size_t merge(const struct record *all, size_t per_rank, const struct gdrb_boot *b, struct seen *s)
{
	size_t n = 0, i, out = 0;
	int r;

	for (r = 0; r < b->size; r++)
		for (i = 0; i < per_rank; i++)
			if (all[(size_t)r * per_rank + i].id.name[0]) {
				s[n].host = b->hosts[r];
				s[n].rec = &all[(size_t)r * per_rank + i];
				s[n].delta = s[n].rec->have_delta ? s[n].rec->delta : 0;
				n++;
			}
	qsort(s, n, sizeof(*s), seen_cmp);
	for (i = 0; i < n; i++) {
		if (out && !seen_cmp(&s[out - 1], &s[i])) {
			struct seen *o = &s[out - 1];

			if (s[i].rec->state > o->rec->state)
				o->rec = s[i].rec;
			if (s[i].delta > o->delta)
				o->delta = s[i].delta;
			continue;
		}
		s[out++] = s[i];
	}
	return out;
}

/* Does this merged counter belong in a list? */
typedef bool (*pick_fn)(const struct seen *s);

static bool nic_error(const struct seen *s)
{
	return !s->rec->id.pcie && s->rec->id.cls == GDRB_CNT_ERROR && s->delta;
}

static bool nic_congestion(const struct seen *s)
{
	return !s->rec->id.pcie && s->rec->id.cls == GDRB_CNT_CONGESTION && s->delta;
}

static bool aer_error(const struct seen *s)
{
	return s->rec->id.pcie && s->rec->id.cls == GDRB_CNT_ERROR && s->delta;
}

static bool went_back(const struct seen *s)
{
	return s->rec->state == ROW_RESET;
}

static bool unreadable(const struct seen *s)
{
	return s->rec->state == ROW_UNREADABLE || s->rec->state == ROW_VANISHED;
}

/* "mlx5_0 port 1 symbol_error +12 on n06", "GPU 0000:3b:00.0 BadTLP (aer_dev_correctable) +3 on n06". */
static void put_item(FILE *f, const struct seen *s, bool rise)
{
	const struct gdrb_cnt_id *id = &s->rec->id;

	if (id->pcie)
		fprintf(f, "%s %s %s (%s)", id->device, id->port, id->name, id->source);
	else
		fprintf(f, "%s port %s %s", id->device, id->port, id->name);
	if (rise)
		fprintf(f, " +%llu", (unsigned long long)s->delta);
	else if (s->rec->state != ROW_RESET)
		fprintf(f, " (%s)", gdrb_cnt_row_state_name((enum cnt_row_state)s->rec->state));
	fprintf(f, " on %s", s->host);
}

/* A line listing the merged counters pick() takes, largest rise first; false when there is none. */
static bool list_line(FILE *f, struct seen *s, size_t n, pick_fn pick, const char *title, bool rise,
		      struct seen *scratch)
{
	size_t k = 0, i;

	for (i = 0; i < n; i++)
		if (pick(&s[i]))
			scratch[k++] = s[i];
	if (!k)
		return false;
	qsort(scratch, k, sizeof(*scratch), by_delta);
	fprintf(f, "# %s: ", title);
	for (i = 0; i < k && i < LISTED; i++) {
		fputs(i ? ", " : "", f);
		put_item(f, &scratch[i], rise);
	}
	if (k > LISTED)
		fprintf(f, " and %zu more", k - LISTED);
	fputc('\n', f);
	return true;
}

/* "none rose (rxe0 port 1 on 2 nodes, 37 counters)": what was read, where no NIC error rose. */
static void none_rose(FILE *f, const struct seen *s, size_t n)
{
	size_t i, j, ports = 0, nodes = 0, errors = 0;

	fputs("# NIC error counters: none rose (", f);
	for (i = 0; i < n; i++) {
		bool new_port = true, new_node = true;

		if (s[i].rec->id.pcie)
			continue;
		errors += s[i].rec->id.cls == GDRB_CNT_ERROR;
		for (j = 0; j < i && (new_port || new_node); j++) {
			if (s[j].rec->id.pcie)
				continue;
			if (!strcmp(s[j].host, s[i].host))
				new_node = false;
			if (!strcmp(s[j].rec->id.device, s[i].rec->id.device) &&
			    !strcmp(s[j].rec->id.port, s[i].rec->id.port))
				new_port = false;
		}
		nodes += new_node;
		if (new_port && ports++ < LISTED)
			fprintf(f, "%s%s port %s", ports > 1 ? ", " : "", s[i].rec->id.device, s[i].rec->id.port);
	}
	if (ports > LISTED)
		fprintf(f, " and %zu more", ports - LISTED);
	fprintf(f, " on %zu node%s, %zu error counters)\n", nodes, nodes == 1 ? "" : "s", errors);
}

/* The link value `name` of the merged PCIe rows of one function (s[from..to)), at the last reading. */
static const struct record *link_value(const struct seen *s, size_t from, size_t to, const char *name)
{
	size_t i;

	for (i = from; i < to; i++)
		if (!strcmp(s[i].rec->id.source, "link") && !strcmp(s[i].rec->id.name, name) &&
		    s[i].rec->have_after)
			return s[i].rec;
	return NULL;
}

/* The smaller of a link's maximum at both of its ends. */
static uint64_t target(const struct record *own, const struct record *upstream)
{
	if (!own)
		return upstream ? upstream->after : 0;
	return upstream && upstream->after < own->after ? upstream->after : own->after;
}

/* "# PCIe: GPU 0000:3b:00.0 x8 of x16 (down-trained) on n06" for each link below what it can train to. */
static void pcie_links(FILE *f, const struct seen *s, size_t n)
{
	size_t from, to;

	for (from = 0; from < n; from = to) {
		const struct record *cur_w, *cur_s;
		uint64_t max_w, max_s;

		for (to = from + 1; to < n && !strcmp(s[to].host, s[from].host) &&
		     !strcmp(s[to].rec->id.device, s[from].rec->id.device) &&
		     !strcmp(s[to].rec->id.port, s[from].rec->id.port); to++)
			;
		if (!s[from].rec->id.pcie)
			continue;
		cur_w = link_value(s, from, to, "current_link_width");
		cur_s = link_value(s, from, to, "current_link_speed");
		max_w = target(link_value(s, from, to, "max_link_width"),
			       link_value(s, from, to, "upstream_max_link_width"));
		max_s = target(link_value(s, from, to, "max_link_speed"),
			       link_value(s, from, to, "upstream_max_link_speed"));
		if (cur_w && max_w && cur_w->after < max_w)
			fprintf(f, "# PCIe: %s %s x%llu of x%llu (down-trained%s) on %s\n", s[from].rec->id.device,
				s[from].rec->id.port, (unsigned long long)cur_w->after, (unsigned long long)max_w,
				cur_w->changed ? "; it changed during the run" : "", s[from].host);
		if (cur_s && max_s && cur_s->after < max_s)
			fprintf(f, "# PCIe: %s %s at %.1f of %.1f GT/s (below what the link can train to: power saving while idle, or a fault%s) on %s\n",
				s[from].rec->id.device, s[from].rec->id.port, (double)cur_s->after / 1000,
				(double)max_s / 1000, cur_s->changed ? "; it changed during the run" : "", s[from].host);
	}
}

static double median_us(struct gdrb_counters *cs, double *longest)
{
	struct gdrb_stats st;

	*longest = 0;
	if (!cs || !cs->ntook)
		return 0;
	gdrb_stats_compute(cs->took_us, cs->ntook, &st);
	*longest = st.max;
	return st.p50;
}

/* Rank 0: the lines after the table. */
static void report(FILE *f, struct gdrb_counters *cs, const struct record *all, size_t per_rank,
		   const struct gdrb_boot *b, const char *file)
{
	size_t n, i, nic = 0;
	struct seen *s, *scratch;
	double took, longest;

	s = calloc((size_t)b->size * per_rank, sizeof(*s));
	scratch = calloc((size_t)b->size * per_rank, sizeof(*scratch));
	if (!s || !scratch) {
		gdrb_err("out of memory for the counters' summary");
		free(s);
		free(scratch);
		return;
	}
	n = merge(all, per_rank, b, s);
	for (i = 0; i < n; i++)
		nic += !s[i].rec->id.pcie;
	if (nic && !list_line(f, s, n, nic_error, "NIC errors during the run", true, scratch))
		none_rose(f, s, n);
	list_line(f, s, n, nic_congestion, "NIC congestion during the run (reported, not errors)", true, scratch);
	list_line(f, s, n, went_back, "counters that went back during the run (a wrap or a reset; no rise counted)",
		  false, scratch);
	list_line(f, s, n, unreadable, "counters unreadable or gone during the run (no value written for them)",
		  false, scratch);
	pcie_links(f, s, n);
	list_line(f, s, n, aer_error, "PCIe AER during the run", true, scratch);
	took = median_us(cs, &longest);
	fprintf(f, "# counters: a reading of %zu took %.0f us on rank 0 (median of %zu, longest %.0f us), never inside a timed loop%s%s\n",
		cs ? cs->set.n : 0, took, cs ? cs->ntook : 0, longest,
		file ? "; every rank's first and last readings: " : "", file ? file : "");
	free(s);
	free(scratch);
}

int gdrb_counters_finish(struct gdrb_counters *cs, struct gdrb_boot *b, const char *benchmark,
			 size_t size, struct gdrb_counters_file *file, FILE *out)
{
	struct record *mine = NULL, *all = NULL;
	uint64_t per_rank = cs ? cs->set.n : 0;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (b->allreduce_u64(b, &per_rank, 1, GDRB_OP_MAX))
		return GDRB_ERR;
	if (!per_rank)
		return 0;       /* nothing read anywhere: the header said why */
	mine = calloc(per_rank, sizeof(*mine));
	if (b->rank == 0)
		all = calloc((size_t)b->size * per_rank, sizeof(*all));
	rc = !mine || (b->rank == 0 && !all) ? GDRB_ERR : 0;
	if (rc)
		gdrb_err("out of memory for %llu counters of %d ranks", (unsigned long long)per_rank, b->size);
	rc = gdrb_boot_agree(b, rc);
	if (!rc) {
		fill_records(cs, mine);
		rc = gdrb_boot_step_gather(b, mine, per_rank * sizeof(*mine), all, "gathering the counters",
					   size);
	}
	if (!rc && b->rank == 0) {
		FILE *f = open_memstream(&text, &len);
		char run_id[GDRB_CNT_RUN_ID_MAX];

		gdrb_cnt_run_id(cs, b->hosts[0], run_id, sizeof(run_id));
		if (file)
			rc = write_file(file, all, per_rank, b, cs && cs->readings ? cs->run_start : "", run_id,
					benchmark);
		if (f) {
			report(f, cs, all, per_rank, b, file ? file->path : NULL);
			/* Host and device names come from the system: written as inert text. */
			if (fclose(f) == 0)
				gdrb_text_lines(out, text, len);
		}
		free(text);
	}
	free(mine);
	free(all);
	return rc;
}
