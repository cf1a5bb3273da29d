/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gdrb_log.h"
#include "gdrb_report.h"

/*
 * The header, from the schema's one definition: ",benchmark,layer,...", shown past the comma.
 * Only this version's: a file of an older one (its header a prefix of this) is refused.
 */
#define GDRB_CSV_COL(name, type) "," #name
#define GDRB_CSV_VERSION_END(n)
static const char csv_header_list[] =
#include "csv_schema.def"
	;
#undef GDRB_CSV_COL
#undef GDRB_CSV_VERSION_END
#define csv_header (csv_header_list + 1)

const char *gdrb_csv_header(void)
{
	return csv_header;
}

#define GDRB_CSV_COL(name, type)
#define GDRB_CSV_VERSION_END(n) n,
static const int csv_versions[] = {
#include "csv_schema.def"
};
#undef GDRB_CSV_COL
#undef GDRB_CSV_VERSION_END

int gdrb_csv_version(void)
{
	return csv_versions[sizeof(csv_versions) / sizeof(csv_versions[0]) - 1];
}

char *gdrb_timestamp(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/*
 * Refuse an existing file we cannot append to cleanly: another header, CRLF
 * line ends, or a last line without its newline (a full disk or a crash left
 * it; a row appended there would be glued onto it). The file is only read.
 */
static int csv_check_existing(int fd, const char *path, off_t size, const struct gdrb_csv_kind *k)
{
	size_t hlen = strlen(k->header);
	char tail[2] = "", *line;
	ssize_t n;
	int rc = 0;

	n = pread(fd, tail, sizeof(tail), size >= 2 ? size - 2 : 0);
	if (n != (size >= 2 ? 2 : 1) || tail[n - 1] != '\n') {
		gdrb_usage_err("%s: '%s' ends in a torn row (its last line has no newline, as a full disk or a crash leaves it); delete that line (sed -i '$d' FILE) or write to a new file",
			       k->what, path);
		return GDRB_ERR_USAGE;
	}
	line = malloc(hlen + 2);
	if (!line) {
		gdrb_err("out of memory");
		return GDRB_ERR;
	}
	n = pread(fd, line, hlen + 2, 0);
	if (n < (ssize_t)hlen + 1 || memcmp(line, k->header, hlen) != 0 ||
	    (line[hlen] != '\n' && (line[hlen] != '\r' || n < (ssize_t)hlen + 2 || line[hlen + 1] != '\n'))) {
		gdrb_usage_err("%s: '%s' holds another header than this gdrbench's; write to a new file",
			       k->what, path);
		rc = GDRB_ERR_USAGE;
	} else if (line[hlen] == '\r' || tail[0] == '\r') {
		gdrb_usage_err("%s: '%s' has CRLF line ends; gdrbench appends LF lines only: convert it (dos2unix) or write to a new file",
			       k->what, path);
		rc = GDRB_ERR_USAGE;
	}
	free(line);
	return rc;
}

/* The outputs this process has open, so that no second output is one of them under another name. */
#define OUTPUTS_MAX 16
static struct output {
	bool used;
	int fd;
	dev_t dev;
	ino_t ino;
	const char *what;
	char path[200];
} outputs[OUTPUTS_MAX];

static void not_regular(const char *what, const char *path)
{
	gdrb_usage_err("%s: '%s' is not a regular file (a FIFO, a device, a socket or a directory); give the path of a regular file or of none",
		       what, path);
}

int gdrb_out_open(const char *path, const char *what, int flags)
{
	struct stat st;
	int fd, i, free_slot = -1;

	/* Judged before it is opened: opening a FIFO or a device can block or act. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISLNK(st.st_mode))
			gdrb_usage_err("%s: '%s' is a symbolic link; gdrbench writes only a file of its own there: remove the link",
				       what, path);
		else
			not_regular(what, path);
		return GDRB_ERR_USAGE;
	}
	/* O_TRUNC waits until the file is known to be no other output's. */
	fd = open(path, (flags & ~O_TRUNC) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
	if (fd < 0 && errno == ELOOP) {
		gdrb_usage_err("%s: '%s' is a symbolic link; gdrbench writes only a file of its own there: remove the link",
			       what, path);
		return GDRB_ERR_USAGE;
	}
	if (fd < 0) {
		gdrb_usage_err("%s: cannot open '%s' for writing: %s; expected a file in an existing, writable directory",
			       what, path, strerror(errno));
		return GDRB_ERR_USAGE;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		not_regular(what, path);
		close(fd);
		return GDRB_ERR_USAGE;
	}
	for (i = 0; i < OUTPUTS_MAX; i++) {
		const struct output *o = &outputs[i];

		if (!o->used) {
			free_slot = free_slot < 0 ? i : free_slot;
		} else if (o->dev == st.st_dev && o->ino == st.st_ino) {
			gdrb_usage_err("%s: '%s' is the same file as %s '%s'; give each output a file of its own",
				       what, path, o->what, o->path);
			close(fd);
			return GDRB_ERR_USAGE;
		}
	}
	if (free_slot < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
	    ((flags & O_TRUNC) && ftruncate(fd, 0) != 0)) {
		gdrb_err("%s: '%s': %s", what, path, free_slot < 0 ? "too many outputs open" : strerror(errno));
		close(fd);
		return GDRB_ERR;
	}
	outputs[free_slot] = (struct output){ true, fd, st.st_dev, st.st_ino, what, "" };
	snprintf(outputs[free_slot].path, sizeof(outputs[free_slot].path), "%s", path);
	return fd;
}

void gdrb_out_forget(int fd)
{
	int i;

	for (i = 0; i < OUTPUTS_MAX; i++)
		if (outputs[i].used && outputs[i].fd == fd)
			outputs[i].used = false;
}

int gdrb_csv_open_kind(const char *path, const struct gdrb_csv_kind *k, struct gdrb_csv **out)
{
	struct gdrb_csv *csv;
	struct stat st;
	int fd, rc;

	*out = NULL;
	fd = gdrb_out_open(path, k->what, O_RDWR | O_APPEND | O_CREAT);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0) {
		gdrb_err("%s: fstat '%s': %s", k->what, path, strerror(errno));
		gdrb_out_forget(fd);
		close(fd);
		return GDRB_ERR;
	}
	if (st.st_size > 0) {
		rc = csv_check_existing(fd, path, st.st_size, k);
		if (rc) {
			gdrb_out_forget(fd);
			close(fd);
			return rc;
		}
	}
	csv = calloc(1, sizeof(*csv));
	if (csv)
		csv->path = strdup(path);
	if (!csv || !csv->path) {
		gdrb_err("out of memory");
		free(csv);
		gdrb_out_forget(fd);
		close(fd);
		return GDRB_ERR;
	}
	csv->fd = fd;
	csv->write = write;
	if (st.st_size == 0) {
		size_t hlen = strlen(k->header);
		char *line = malloc(hlen + 1);

		rc = GDRB_ERR;
		if (line) {
			memcpy(line, k->header, hlen);
			line[hlen] = '\n';
			rc = gdrb_csv_append_line(csv, line, hlen + 1);
			free(line);
		} else {
			gdrb_err("out of memory");
		}
		if (rc) {
			gdrb_csv_close(csv);
			return rc;
		}
	}
	*out = csv;
	return 0;
}

int gdrb_csv_open(const char *path, struct gdrb_csv **out)
{
	const struct gdrb_csv_kind results = { "--csv", csv_header };

	return gdrb_csv_open_kind(path, &results, out);
}

int gdrb_csv_append_line(struct gdrb_csv *csv, const char *line, size_t len)
{
	char why[128], cut[160] = "";
	ssize_t n;
	off_t end;

	if (csv->failed)
		return GDRB_ERR;
	/* One write of the whole line; a short one is not continued, so no other writer's line lands inside it. */
	do
		n = csv->write(csv->fd, line, len);
	while (n < 0 && errno == EINTR);
	if (n >= 0 && (size_t)n == len)
		return 0;
	csv->failed = true;
	if (n < 0)
		snprintf(why, sizeof(why), "%s", strerror(errno));
	else
		snprintf(why, sizeof(why), "only %zd of the %zu bytes of a line were written (file system full, or a file size limit)",
			 n, len);
	/* Cut the part that landed, so that the file ends in a complete line: O_APPEND left the offset just past it. */
	if (n > 0) {
		end = lseek(csv->fd, 0, SEEK_CUR);
		if (end >= n && ftruncate(csv->fd, end - n) == 0)
			snprintf(cut, sizeof(cut), "; the partial line was removed");
		else
			snprintf(cut, sizeof(cut), "; removing the partial line failed too (%s): delete the file's last line before appending to it",
				 strerror(errno));
	}
	gdrb_err("writing results to '%s': %s%s; the complete rows before it are kept, no later row is written",
		 csv->path, why, cut);
	return GDRB_ERR;
}

int gdrb_csv_append(struct gdrb_csv *csv, const struct gdrb_row *row)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (csv->failed)
		return GDRB_ERR;
	f = open_memstream(&line, &len);
	if (!f) {
		gdrb_err("out of memory for a CSV row");
		return GDRB_ERR;
	}
	rc = gdrb_csv_write(f, row);
	if (fclose(f) != 0 && !rc) {
		gdrb_err("out of memory for a CSV row");
		rc = GDRB_ERR;
	}
	if (!rc)
		rc = gdrb_csv_append_line(csv, line, len);
	free(line);
	return rc;
}

int gdrb_csv_close(struct gdrb_csv *csv)
{
	int rc = 0;

	if (!csv)
		return 0;
	gdrb_out_forget(csv->fd);
	if (close(csv->fd) != 0 && !csv->failed) {
		gdrb_err("writing results to '%s': close: %s", csv->path, strerror(errno));
		rc = GDRB_ERR;
	}
	if (csv->failed)
		rc = GDRB_ERR;
	free(csv->path);
	free(csv);
	return rc;
}

bool gdrb_csv_formula(const char *s)
{
	return s && *s && strchr(GDRB_CSV_FORMULA_LEAD, *s);
}

void gdrb_csv_field(FILE *f, const char *s)
{
	const char *p;

	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		if (gdrb_csv_formula(s))
			fputc('\'', f);
		fputs(s, f);
		return;
	}
	fputc('"', f);
	if (gdrb_csv_formula(s))
		fputc('\'', f);
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

/* A count, empty where it is 0 (none, or not known). */
static void csv_count(FILE *f, unsigned n)
{
	fputc(',', f);
	if (n)
		fprintf(f, "%u", n);
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
	csv_str(f, r->transport ? r->transport : "");
	csv_str(f, r->gdr_connections ? r->gdr_connections : "");
	csv_str(f, r->library ? r->library : "");
	csv_str(f, r->placement ? r->placement : "");
	csv_str(f, r->timing ? r->timing : "");
	csv_count(f, r->calls_per_sync);
	csv_str(f, r->algorithm ? r->algorithm : "");
	csv_str(f, r->protocol ? r->protocol : "");
	csv_count(f, r->channels);
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

/* stdout's write error is said once: every later row would only repeat it. */
static bool stdout_failed;

/*
 * Call right after printing: stdio may have dropped its buffer after a write
 * failed inside a print, and then only errno still says why.
 */
int gdrb_stdout_flush(void)
{
	int err = errno;

	if (fflush(stdout) != 0)
		err = errno;
	else if (!ferror(stdout))
		return 0;
	if (!stdout_failed) {
		if (err)
			gdrb_err("writing results to stdout: %s", strerror(err));
		else
			gdrb_err("writing results to stdout failed");
	}
	stdout_failed = true;
	return GDRB_ERR;
}

int gdrb_stdout_close(void)
{
	int rc = gdrb_stdout_flush();

	/* The last chance to see an error (NFS reports some only at close); EBADF after a clean flush: stdout was closed and nothing was lost. */
	if (fclose(stdout) != 0 && !rc && errno != EBADF) {
		gdrb_err("writing results to stdout: close: %s", strerror(errno));
		rc = GDRB_ERR;
	}
	return rc;
}
