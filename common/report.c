/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gdrb_log.h"
#include "gdrb_report.h"

static const char csv_header[] =
	"benchmark,layer,mem,path,reg,stage_chunk,stage_slots,window,buffers,pair,size_bytes,iterations,"
	"lat_min_us,lat_p50_us,lat_avg_us,lat_p99_us,lat_p999_us,lat_max_us,lat_stdev_us,"
	"bw_GBps,algbw_GBps,busbw_GBps,ranks,hosts,gpu,nic,link_layer,link_gbps,gpu_nic_dist,"
	"cpu_initiator_pct,cpu_responder_pct,status,errors,quality,note,timestamp,version";

const char *gdrb_csv_header(void)
{
	return csv_header;
}

char *gdrb_timestamp(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

FILE *gdrb_csv_open(const char *path)
{
	char line[sizeof(csv_header) + 8];
	struct stat st;
	FILE *f;

	f = fopen(path, "a+");
	if (!f) {
		gdrb_usage_err("--csv: cannot open '%s' for appending: %s; expected a file in an existing, writable directory",
			       path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		gdrb_usage_err("--csv: '%s' is not a regular file", path);
		fclose(f);
		return NULL;
	}
	rewind(f);
	if (!fgets(line, sizeof(line), f)) {
		fprintf(f, "%s\n", csv_header);
		fflush(f);
		return f;
	}
	line[strcspn(line, "\r\n")] = '\0';
	if (strcmp(line, csv_header) != 0) {
		gdrb_usage_err("--csv: '%s' holds another header than this gdrbench's; write to a new file",
			       path);
		fclose(f);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	return f;
}

void gdrb_csv_field(FILE *f, const char *s)
{
	const char *p;

	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
	}
	fputc('"', f);
}

static void csv_num(FILE *f, double v, int decimals)
{
	fputc(',', f);
	if (!isnan(v))
		fprintf(f, "%.*f", decimals, v);
}

static void csv_str(FILE *f, const char *s)
{
	fputc(',', f);
	gdrb_csv_field(f, s);
}

int gdrb_csv_write(FILE *f, const struct gdrb_row *r)
{
	const struct gdrb_stats *l = &r->lat;
	bool have_lat = r->lat.n > 0;
	char ts[32];

	gdrb_csv_field(f, r->benchmark);
	csv_str(f, r->layer);
	csv_str(f, r->mem);
	csv_str(f, r->path);
	csv_str(f, r->reg);
	if (r->stage_chunk)
		fprintf(f, ",%zu,%u", r->stage_chunk, r->stage_slots);
	else
		fputs(",,", f);
	if (r->window)
		fprintf(f, ",%u", r->window);
	else
		fputc(',', f);
	csv_str(f, r->buffers ? r->buffers : "");
	csv_str(f, r->pair);
	fprintf(f, ",%zu,%llu", r->size, (unsigned long long)r->iterations);
	csv_num(f, have_lat ? l->min : NAN, 3);
	csv_num(f, have_lat ? l->p50 : NAN, 3);
	csv_num(f, have_lat ? l->avg : NAN, 3);
	csv_num(f, have_lat ? l->p99 : NAN, 3);
	csv_num(f, have_lat ? l->p999 : NAN, 3);
	csv_num(f, have_lat ? l->max : NAN, 3);
	csv_num(f, have_lat ? l->stdev : NAN, 3);
	csv_num(f, r->bw_GBps, 9);
	csv_num(f, r->algbw_GBps, 9);
	csv_num(f, r->busbw_GBps, 9);
	fprintf(f, ",%d,%d", r->ranks, r->hosts);
	csv_str(f, r->gpu);
	csv_str(f, r->nic);
	csv_str(f, r->link_layer ? r->link_layer : "");
	csv_num(f, r->link_gbps > 0 ? r->link_gbps : NAN, 3);
	csv_str(f, r->gpu_nic_dist ? r->gpu_nic_dist : "");
	csv_num(f, r->cpu_initiator_pct, 1);
	csv_num(f, r->cpu_responder_pct, 1);
	csv_str(f, r->status);
	fprintf(f, ",%llu", (unsigned long long)r->errors);
	csv_str(f, r->quality ? r->quality : "");
	csv_str(f, r->note);
	csv_str(f, r->timestamp ? r->timestamp : gdrb_timestamp(ts, sizeof(ts)));
	csv_str(f, PACKAGE_VERSION);
	fputc('\n', f);
	if (fflush(f) != 0 || ferror(f)) {
		gdrb_err("writing the CSV failed: %s", strerror(errno));
		return GDRB_ERR;
	}
	return 0;
}

void gdrb_table_init(struct gdrb_table *t, size_t ncols, const char *const *titles)
{
	size_t i;

	if (ncols > GDRB_TABLE_MAX_COLS)
		ncols = GDRB_TABLE_MAX_COLS;
	t->ncols = ncols;
	for (i = 0; i < ncols; i++) {
		/* The first title is preceded by '#' in the header line. */
		int w = (int)strlen(titles[i]) + (i == 0);

		t->titles[i] = titles[i];
		t->width[i] = w < GDRB_TABLE_MIN_WIDTH ? GDRB_TABLE_MIN_WIDTH : w;
	}
}

void gdrb_table_print_header(FILE *f, const struct gdrb_table *t)
{
	size_t i;

	fputc('#', f);
	for (i = 0; i < t->ncols; i++)
		fprintf(f, "%*s%s", t->width[i] - (i == 0), t->titles[i],
			i + 1 < t->ncols ? " " : "\n");
}

void gdrb_table_print_row(FILE *f, const struct gdrb_table *t, const char *const *cells)
{
	size_t i;

	for (i = 0; i < t->ncols; i++)
		fprintf(f, "%*s%s", t->width[i], cells[i], i + 1 < t->ncols ? " " : "\n");
	fflush(f);
}

char *gdrb_fmt_num(char *buf, size_t len, double v, int decimals)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.*f", decimals, v);
	return buf;
}
