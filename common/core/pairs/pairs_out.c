/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All pairs' output, rank 0 only: the header and a line per round and
 * figure on stdout, the matrices (n <= 16) or their summary at the end; the
 * pairs CSV (common/core/pairs_schema.def), the rank table (pairs_ranks.def)
 * and the matrix files beside it, each matrix written whole (FILE.tmp, rename)
 * after the rounds that finished.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_clock.h"
#include "gdrb_inject.h"
#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_matrix.h"
#include "gdrb_report.h"
#include "gdrb_size.h"
#include "pairs_int.h"

#define MATRIX_SHOW_MAX 16      /* ranks up to which stdout shows the matrix itself */
#define WRITE_EVERY_S 10.0      /* past 256 ranks, matrices are rewritten at most this often */

static const char pairs_header[] =
#define GDRB_PAIRS_COL(name, type) "," #name
#include "pairs_schema.def"
#undef GDRB_PAIRS_COL
	;

/* The rank table's header; the rows below write its columns in this order. */
static const char ranks_header[] =
#define GDRB_RANKS_COL(name, type) "," #name
#include "pairs_ranks.def"
#undef GDRB_RANKS_COL
	;

static const char *status_name[] = { "", "ok", "skipped", "error" };

/* Text fields never hold a comma (the agreed format): each becomes '_'. */
/* Text as one cell, never quoted: what would end the cell or the line is '_'; inert for spreadsheets. */
static void cell(FILE *f, const char *s)
{
	if (gdrb_csv_formula(s))
		fputc('\'', f);
	for (; s && *s; s++)
		fputc(strchr(",\"\r\n", *s) ? '_' : *s, f);
}

static void field(FILE *f, const char *s)
{
	cell(f, s);
	fputc(',', f);
}

/* A figure with at least 3 decimals and 3 significant digits (8 B at 0.000400 GB/s is not 0.000). */
static int decimals(double v)
{
	int d = v > 0 && v < 1 ? 2 - (int)floor(log10(v)) : 3;

	return d < 3 ? 3 : d > 12 ? 12 : d;
}

static void number(FILE *f, double v)
{
	fprintf(f, "%.*f", decimals(v), v);
}

static bool is_bw(const struct pairs_run *r, size_t mi)
{
	return r->metrics[mi] == GDRB_PAIRS_BW;
}

/*
 * A new file that the run writes beside the pairs CSV, opened as every output is
 * (gdrb_out_open: no link, no FIFO, not the pairs CSV itself); NULL after saying why.
 */
static FILE *open_beside(const char *path, const char *what)
{
	int fd = gdrb_out_open(path, what, O_WRONLY | O_CREAT | O_TRUNC);
	FILE *f;

	if (fd < 0)
		return NULL;
	gdrb_out_forget(fd);    /* written and closed at once: only the CSV stays open */
	f = fdopen(fd, "w");
	if (!f) {
		gdrb_err("cannot write %s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/* Whether name is one the run gives a file beside the pairs CSV: pairs-ranks.csv, pairs-[lat-]SIZE-... */
static bool name_beside(const char *name)
{
	if (!strcmp(name, "pairs-ranks.csv"))
		return true;
	if (strncmp(name, "pairs-", 6))
		return false;
	name += 6;
	if (!strncmp(name, "lat-", 4))
		name += 4;
	return *name >= '0' && *name <= '9';
}

int gdrb_pairs_out_open(struct pairs_run *r)
{
	char *copy;
	FILE *f;
	int i, fd;

	if (!r->p.csv_path)
		return 0;
	copy = strdup(r->p.csv_path);
	if (!copy)
		return GDRB_ERR;
	snprintf(r->dir, sizeof(r->dir), "%s", dirname(copy));
	free(copy);
	copy = strrchr(r->p.csv_path, '/');
	if (name_beside(copy ? copy + 1 : r->p.csv_path)) {
		gdrb_usage_err("--csv: '%s' is a name the run gives the files it writes beside the pairs CSV (pairs-ranks.csv, pairs-SIZE-PATH.csv, pairs-lat-SIZE-PATH.csv); give another name",
			       r->p.csv_path);
		return GDRB_ERR_USAGE;
	}
	/* Appended to, as the main CSV is: an existing file must hold this schema. */
	fd = gdrb_out_open(r->p.csv_path, "--csv", O_RDWR | O_APPEND | O_CREAT);
	if (fd < 0)
		return fd;
	r->csv = fdopen(fd, "a+");
	if (!r->csv) {
		gdrb_err("--csv %s: %s", r->p.csv_path, strerror(errno));
		gdrb_out_forget(fd);
		close(fd);
		return GDRB_ERR;
	}
	{
		char first[sizeof(pairs_header) + 2] = "";

		rewind(r->csv);
		if (!fgets(first, sizeof(first), r->csv)) {
			fprintf(r->csv, "%s\n", pairs_header + 1);
		} else if (strncmp(first, pairs_header + 1, sizeof(pairs_header) - 2) ||
			   first[sizeof(pairs_header) - 2] != '\n') {
			gdrb_usage_err("--csv %s: the file holds another header than the pairs CSV's; give a new file",
				       r->p.csv_path);
			gdrb_out_forget(fileno(r->csv));
			fclose(r->csv);
			r->csv = NULL;
			return GDRB_ERR_USAGE;
		}
	}
	fflush(r->csv);
	{
		char path[4200];

		snprintf(path, sizeof(path), "%s/pairs-ranks.csv", r->dir);
		f = open_beside(path, "the pairs CSV's rank file");
		if (!f)
			return GDRB_ERR_USAGE;
	}
	fprintf(f, "%s\n", ranks_header + 1);
	for (i = 0; i < r->n; i++) {
		const struct pairs_member *mb = &r->members[i];

		fprintf(f, "%d,", i);
		field(f, mb->host);
		fprintf(f, "%d,", mb->local_rank);
		field(f, mb->gpu);
		cell(f, mb->nic);
		fputc('\n', f);
	}
	return fclose(f) ? GDRB_ERR : 0;
}

void gdrb_pairs_out_header(const struct pairs_run *r)
{
	char line[512], sz[32], *text = NULL;
	size_t i, text_len = 0;
	int len = 0;
	/* Host, GPU and NIC names come from the system: written as inert text. */
	FILE *hdr = open_memstream(&text, &text_len);

	if (!hdr) {
		gdrb_err("cannot build the header: %s", strerror(errno));
		return;
	}

	fprintf(hdr, "# gdrbench %s %s: %s\n", PACKAGE_VERSION, r->ops->name, r->ops->summary);
	if (gdrb_inject_active())
		fprintf(hdr, "# NOTE: %s (" GDRB_TEST_HOOKS_ENV "=1): these rows are a test's, never a measurement\n",
		       gdrb_inject_note());
	if (r->boot->describe) {
		r->boot->describe(r->boot, line, sizeof(line));
		fprintf(hdr, "# %s\n", line);
	}
	if (r->ops->describe && r->priv) {
		char desc[2048];
		const char *at = desc;

		desc[0] = '\0';
		r->ops->describe(r->priv, desc, sizeof(desc));
		while (*at) {
			size_t n = strcspn(at, "\n");

			fprintf(hdr, "# %.*s\n", (int)n, at);
			at += n + (at[n] == '\n');
		}
	}
	if (r->pp->granularity == GDRB_PAIRS_GRAN_RANK)
		fprintf(hdr, "# ranks: %d; granularity rank: one shift group of %u ranks\n", r->n, r->m);
	else
		fprintf(hdr, "# ranks: %d on %u nodes; granularity %s: %u shift group(s) of %u ranks (one per %s)\n",
		       r->n, r->m, gdrb_pairs_gran_names[r->pp->granularity], r->ngroups, r->m,
		       r->pp->granularity == GDRB_PAIRS_GRAN_RAIL ? "local rank: GPU i of each node" : "node");
	for (i = 0; i < r->nshifts && len < 200; i++)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%s%u", i ? "," : "", r->shifts[i]);
	fprintf(hdr, "# rounds: %u of %u, shifts %s%s; seed %llu%s\n", r->nshifts, r->m - 1, line,
	       i < r->nshifts ? ",..." : "", (unsigned long long)r->seed,
	       r->sampled ? " (--rounds: a random sample)" : "");
	if (r->pp->start_at && r->pp->round_every)
		fprintf(hdr, "# start: round i (from 0) at the wall-clock second %llu + i x %g s (--start-at, --round-every), every rank waiting for the others\n",
			(unsigned long long)r->pp->start_at, r->pp->round_every);
	else if (r->pp->start_at)
		fprintf(hdr, "# start: every rank waits for the wall-clock second %llu (--start-at), then for the others, before the first round\n",
			(unsigned long long)r->pp->start_at);
	len = 0;
	for (i = 0; i < r->p.sizes.n; i++)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%s%s", i ? "," : "",
				gdrb_size_format(r->p.sizes.v[i], sz, sizeof(sz)));
	fprintf(hdr, "# sizes: %s; metric:%s%s; window %u messages (at most --window-bytes %s); mem %s\n", line,
	       r->pp->metrics & GDRB_PAIRS_BW ? " bw (GB/s = 1e9 B/s, all pairs of a round at once)" : "",
	       r->pp->metrics & GDRB_PAIRS_LAT ? " lat (us, one way = round trip / 2, ping-pong phases)" : "",
	       r->p.window, gdrb_size_format(r->p.window_bytes, sz, sizeof(sz)), gdrb_mem_kind_name(r->p.mem));
	if (r->gpu_shared[0])
		fprintf(hdr, "# NOTE: %s: %s\n", r->gpu_shared, gdrb_run_gpu_sharing_why(r->gpu_time_sliced));
	if (*r->simulated)
		fprintf(hdr, "# NOTE: the GPU is simulated (the test suite's stand-in for CUDA): these rows prove behaviour, never speed\n");
	if (r->counters) {
		char what[1024];

		gdrb_counters_describe(r->counters, what, sizeof(what));
		fprintf(hdr, "# %s\n", what);
	}
	for (i = 0; i < r->paths.n; i++)
		fprintf(hdr, "# path %s: %s%s\n", r->paths.v[i].label,
		       r->paths.v[i].supported ? r->paths.v[i].how : "n/a: ",
		       r->paths.v[i].supported ? "" : r->paths.v[i].why);
	fprintf(hdr, "# %-5s %5s %-6s %8s %-6s %10s %-11s %10s %10s %-11s %s\n", "round", "shift", "metric",
	       "size", "path", "min", "min_pair", "median", "max", "max_pair", "unit");
	if (fclose(hdr) == 0)
		gdrb_text_lines(stdout, text, text_len);
	free(text);
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Whether a latency pair's ends' counters over its phase (src the initiator, dst the
 * responder), where they are its own: both ends read a port, every counter of
 * those kinds readable, no other pair's rank on the same port.
 */
static bool pair_nic(const struct pairs_run *r, size_t mi, const struct pairs_nic *a, const struct pairs_nic *b)
{
	return !is_bw(r, mi) && r->nic_per_pair && a->ports && b->ports && !a->unreadable && !b->unreadable;
}

/*
 * "NIC errors rose: rxe0 port 1 completer_retry_err +13 (gdrb-vm3) and ..." onto a row's note:
 * each end's largest (a pairs CSV cell never holds a comma).
 */
static void nic_note(const struct pairs_run *r, char *note, size_t len, const struct pairs_nic *end[2],
		     const int rank[2])
{
	size_t at = strlen(note);
	bool first = true;

	for (int i = 0; i < 2; i++) {
		const struct gdrb_cnt_rise_item *t = &end[i]->top;

		if (!t->delta || at >= len)
			continue;
		snprintf(note + at, len - at, "%s%s %s +%llu (%s)", first ? (at ? "; NIC errors rose: " : "NIC errors rose: ") : " and ",
			 t->where, t->counter, (unsigned long long)t->delta, r->members[rank[i]].host);
		first = false;
		at = strlen(note);
	}
}

static void csv_row(struct pairs_run *r, size_t mi, size_t si, size_t pi, unsigned k, int src, int dst,
		    const struct pairs_cell *c, const char *note, const struct pairs_nic *nic[2])
{
	const struct pairs_member *s = &r->members[src], *d = &r->members[dst];
	FILE *f = r->csv;
	char ts[32], row_note[1200];
	const int rank[2] = { src, dst };
	bool have_nic = c->status != PAIRS_SKIPPED && pair_nic(r, mi, nic[0], nic[1]);

	fprintf(f, "%s,%s,%s,%s,", r->ops->name, r->ops->layer, gdrb_mem_kind_name(r->p.mem),
		r->paths.v[pi].label);
	field(f, r->paths.v[pi].reg);
	fprintf(f, "%s,%zu,%u,%d,%d,", is_bw(r, mi) ? "bw" : "lat", r->p.sizes.v[si], k, src, dst);
	field(f, s->host);
	field(f, d->host);
	fprintf(f, "%d,%d,", s->local_rank, d->local_rank);
	field(f, s->gpu);
	field(f, d->gpu);
	field(f, s->nic);
	field(f, d->nic);
	if (c->status == PAIRS_SKIPPED)
		fprintf(f, ",,,");
	else {
		fprintf(f, "%u,%s", c->iters, is_bw(r, mi) ? "" : ",");
		number(f, c->value);
		fprintf(f, ",%s", is_bw(r, mi) ? "," : "");
	}
	fprintf(f, "%s,%u,", status_name[c->status], c->errors);
	snprintf(row_note, sizeof(row_note), "%s", note);
	if (have_nic) {
		fprintf(f, "%llu,%llu,", (unsigned long long)gdrb_cnt_sum(nic[0]->errors, nic[1]->errors),
			(unsigned long long)gdrb_cnt_sum(nic[0]->packets, nic[1]->packets));
		nic_note(r, row_note, sizeof(row_note), nic, rank);
	} else {
		fputs(",,", f);
	}
	field(f, row_note);
	fprintf(f, "%s,%s\n", gdrb_timestamp(ts, sizeof(ts)), PACKAGE_VERSION);
}

/* Store round k's figures, print its line per figure, append its CSV rows. */
void gdrb_pairs_out_round(struct pairs_run *r, unsigned k)
{
	size_t mi, si, pi, n = (size_t)r->n;
	double *v = malloc(n * sizeof(*v));
	char note[1000], sz[32];

	if (!v)
		return;
	for (mi = 0; mi < r->nmetrics; mi++)
		for (si = 0; si < r->p.sizes.n; si++)
			for (pi = 0; pi < r->paths.n; pi++) {
				size_t rec = pairs_rec(r, mi, si, pi), nv = 0, src, lo = 0, hi = 0;

				/* An active test hook first, where no cut can drop it. */
				snprintf(note, sizeof(note), "%s%s%s", gdrb_inject_note(),
					 gdrb_inject_active() && r->p.label ? "; " : "",
					 r->p.label ? r->p.label : "");
				if (!r->paths.v[pi].supported)
					snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%s",
						 *note ? "; " : "", r->paths.v[pi].why);
				if (r->sampled)
					snprintf(note + strlen(note), sizeof(note) - strlen(note),
						 "%srounds %u of %u sampled by seed %llu", *note ? "; " : "",
						 r->nshifts, r->m - 1, (unsigned long long)r->seed);
				if (r->gpu_shared[0] && r->paths.v[pi].supported)
					snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%s",
						 *note ? "; " : "", r->gpu_shared);
				/* As the main CSV's gpu column: gdrb accept never passes such a row. */
				if (*r->simulated)
					snprintf(note + strlen(note), sizeof(note) - strlen(note),
						 "%ssimulated GPU: %s", *note ? "; " : "", r->simulated);
				for (src = 0; src < n; src++) {
					const struct pairs_slot *s = &r->all[src * r->nrec + rec];
					int dst = pairs_peer(r, (int)src, k, true);
					struct pairs_cell *c = &r->cells[(rec * n + src) * n + (size_t)dst];

					if (!s->status)
						continue;
					c->value = (float)s->value;
					c->iters = (uint32_t)s->iters;
					c->errors = (uint32_t)(s->out_err + r->all[(size_t)dst * r->nrec + rec].in_err);
					c->round = (uint16_t)k;
					c->status = (uint8_t)(c->errors ? PAIRS_ERROR : s->status);
					if (c->errors)
						r->invalid = true;
					if (r->csv) {
						const struct pairs_nic *nic[2] = {
							&s->out_nic, &r->all[(size_t)dst * r->nrec + rec].in_nic };

						csv_row(r, mi, si, pi, k, (int)src, dst, c, note, nic);
					}
					if (c->status != PAIRS_OK)
						continue;
					if (!nv || s->value < r->all[lo * r->nrec + rec].value)
						lo = src;
					if (!nv || s->value > r->all[hi * r->nrec + rec].value)
						hi = src;
					v[nv++] = s->value;
				}
				if (!nv) {
					printf("  %-5u %5u %-6s %8s %-6s %10s\n", r->rounds_done, k,
					       is_bw(r, mi) ? "bw" : "lat",
					       gdrb_size_format(r->p.sizes.v[si], sz, sizeof(sz)),
					       r->paths.v[pi].label, "n/a");
					continue;
				}
				qsort(v, nv, sizeof(*v), cmp_double);
				{
					char lp[24], hp[24];

					snprintf(lp, sizeof(lp), "%zu->%d", lo, pairs_peer(r, (int)lo, k, true));
					snprintf(hp, sizeof(hp), "%zu->%d", hi, pairs_peer(r, (int)hi, k, true));
					printf("  %-5u %5u %-6s %8s %-6s %10.3f %-11s %10.3f %10.3f %-11s %s\n",
					       r->rounds_done, k, is_bw(r, mi) ? "bw" : "lat",
					       gdrb_size_format(r->p.sizes.v[si], sz, sizeof(sz)),
					       r->paths.v[pi].label, v[0], lp,
					       nv % 2 ? v[nv / 2] : (v[nv / 2 - 1] + v[nv / 2]) / 2,
					       v[nv - 1], hp, is_bw(r, mi) ? "GB/s" : "us");
				}
			}
	free(v);
	if (r->csv)
		fflush(r->csv);
	fflush(stdout);
	/* The rounds so far are kept on disk should a later one never finish. */
	if (r->n <= 256 || gdrb_now_s() - r->last_write > WRITE_EVERY_S) {
		gdrb_pairs_out_matrices(r);
		r->last_write = gdrb_now_s();
	}
}

/* A matrix's cells: the record's (metric, size, path) of every source and destination. */
struct pairs_matrix {
	const struct pairs_run *r;
	size_t rec;
};

static const struct pairs_cell *cell_of(const struct pairs_matrix *m, size_t i, size_t j)
{
	size_t n = (size_t)m->r->n;

	return &m->r->cells[(m->rec * n + i) * n + j];
}

/* The matrix file's cell: the figure, or empty. */
static void file_cell(const void *arg, size_t i, size_t j, char *buf, size_t len)
{
	const struct pairs_cell *c = cell_of(arg, i, j);

	if (c->status == PAIRS_OK)
		snprintf(buf, len, "%.*f", decimals(c->value), c->value);
}

/* stdout's cell: the figure, or what stands for it. */
static void shown_cell(const void *arg, size_t i, size_t j, char *buf, size_t len)
{
	const struct pairs_cell *c = cell_of(arg, i, j);

	if (c->status == PAIRS_OK)
		snprintf(buf, len, "%.3f", c->value);
	else
		snprintf(buf, len, "%s", i == j ? "-" : c->status == PAIRS_ERROR ? "error" : "");
}

static int write_matrix(const struct pairs_run *r, size_t mi, size_t si, size_t pi)
{
	const struct pairs_matrix arg = { r, pairs_rec(r, mi, si, pi) };
	const struct gdrb_matrix m = { .n = (size_t)r->n, .prefix = "", .corner = "src\\dst", .name = "",
		.sep = ",", .cell = file_cell, .arg = &arg };
	char path[4300], tmp[4310];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pairs-%s%zu-%s.csv", r->dir, is_bw(r, mi) ? "" : "lat-",
		 r->p.sizes.v[si], r->paths.v[pi].label);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = open_beside(tmp, "a pairs matrix");
	if (!f)
		return GDRB_ERR;
	gdrb_matrix_print(f, &m);
	if (fclose(f) || rename(tmp, path)) {
		gdrb_err("cannot write %s: %s", path, strerror(errno));
		return GDRB_ERR;
	}
	return 0;
}

int gdrb_pairs_out_matrices(const struct pairs_run *r)
{
	size_t mi, si, pi;
	int rc = 0;

	if (!r->p.csv_path || !r->cells)
		return 0;
	for (mi = 0; mi < r->nmetrics; mi++)
		for (si = 0; si < r->p.sizes.n; si++)
			for (pi = 0; pi < r->paths.n; pi++)
				if (r->paths.v[pi].supported && write_matrix(r, mi, si, pi))
					rc = GDRB_ERR;
	return rc;
}

/* The matrices themselves up to 16 ranks, else what they hold. */
void gdrb_pairs_out_end(const struct pairs_run *r)
{
	size_t mi, si, pi, n = (size_t)r->n, i, j;
	char sz[32];

	if (!r->cells)
		return;
	for (mi = 0; mi < r->nmetrics; mi++)
		for (si = 0; si < r->p.sizes.n; si++)
			for (pi = 0; pi < r->paths.n; pi++) {
				const struct pairs_matrix arg = { r, pairs_rec(r, mi, si, pi) };
				const struct gdrb_matrix m = { .n = n, .prefix = "", .corner = "src\\dst", .name = "",
					.sep = " ", .label_width = 8, .width = 8, .cell = shown_cell, .arg = &arg };
				size_t filled = 0, bad = 0;
				double lo = INFINITY, hi = 0, sum = 0;

				if (!r->paths.v[pi].supported)
					continue;
				printf("# matrix %s %s %s (%s), rows = sources, columns = destinations, after %u of %u rounds\n",
				       is_bw(r, mi) ? "bw" : "lat",
				       gdrb_size_format(r->p.sizes.v[si], sz, sizeof(sz)), r->paths.v[pi].label,
				       is_bw(r, mi) ? "GB/s" : "us", r->rounds_done, r->nshifts);
				if (n <= MATRIX_SHOW_MAX)
					gdrb_matrix_print(stdout, &m);
				for (i = 0; i < n; i++)
					for (j = 0; j < n; j++) {
						const struct pairs_cell *c = cell_of(&arg, i, j);

						if (c->status == PAIRS_OK) {
							filled++;
							sum += c->value;
							lo = c->value < lo ? c->value : lo;
							hi = c->value > hi ? c->value : hi;
						}
						bad += c->status == PAIRS_ERROR;
					}
				printf("# %zu of %zu pairs measured, %zu with wrong bytes; min %.3f mean %.3f max %.3f\n",
				       filled, n * (r->m - 1), bad, filled ? lo : 0.0, filled ? sum / (double)filled : 0.0,
				       hi);
			}
}

int gdrb_pairs_out_close(struct pairs_run *r)
{
	int rc = 0;

	if (r->csv)
		gdrb_out_forget(fileno(r->csv));
	if (r->csv && fclose(r->csv)) {
		gdrb_err("cannot write %s: %s", r->p.csv_path, strerror(errno));
		rc = GDRB_ERR;
	}
	r->csv = NULL;
	return rc;
}
