/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/core/report/report.c: CSV header, rows, quoting, appending; the table;
 * and matrix.c: the three layouts its callers use, character for character.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gdrb_log.h"
#include "gdrb_matrix.h"
#include "gdrb_report.h"
#include "unit_main.h"

/* The CSV schema scripts and plots depend on, from its one definition (common/core/csv_schema.def). */
#define GDRB_CSV_COL(name, type) "," #name
#define GDRB_CSV_VERSION_END(n)
static const char schema_list[] =
#include "csv_schema.def"
	;
#undef GDRB_CSV_COL
#define SCHEMA (schema_list + 1)
#define GDRB_CSV_COL(name, type) +1
enum { SCHEMA_COLS = 0
#include "csv_schema.def"
};
#undef GDRB_CSV_VERSION_END
/* The columns each version adds, in version order: version N's header is the first N terms' sum. */
#define GDRB_CSV_VERSION_END(n) , 0
static const int version_adds[] = { 0
#include "csv_schema.def"
};
#undef GDRB_CSV_COL
#undef GDRB_CSV_VERSION_END
#define SCHEMA_VERSIONS (sizeof(version_adds) / sizeof(version_adds[0]) - 1)

/* BEFORE, the header, AFTER: in one of four static buffers, enough for one assertion. */
static const char *schema_around(const char *before, const char *after)
{
	static char buf[4][4096];
	static unsigned next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "%s%s%s", before, SCHEMA, after);
	return b;
}

#define TS "2026-11-21T04:41:00Z"

static char tmp_dir[PATH_MAX];

static void make_tmp_dir(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmp_dir, sizeof(tmp_dir), "%s/test_report.XXXXXX", base && *base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
}

/* Only what the tests create: plain files directly in tmp_dir. */
static void remove_tmp_dir(void)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *e;
	char path[PATH_MAX + 256];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp_dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(tmp_dir);
}

static char *tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmp_dir, name);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	long len;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = malloc((size_t)len + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	text[len] = '\0';
	fclose(f);
	return text;
}

static void ck_assert_file(const char *path, const char *want)
{
	char *text = slurp(path);

	ck_assert_str_eq(text, want);
	free(text);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Fields of one CSV line, counting commas outside double quotes. */
static size_t csv_fields(const char *line)
{
	size_t n = 1;
	int quoted = 0;

	for (; *line && *line != '\n'; line++) {
		if (*line == '"')
			quoted = !quoted;
		else if (*line == ',' && !quoted)
			n++;
	}
	return n;
}

/* Run f(arg) with stderr going to a buffer; what it printed lands in out. */
static void capture_stderr(void (*fn)(void *), void *arg, char *out, size_t len)
{
	FILE *tmp = tmpfile();
	int saved;
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(tmp), STDERR_FILENO), 0);
	fn(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

struct open_call {
	const char *path;
	struct gdrb_csv *csv;
	int rc;
};

static void call_csv_open(void *arg)
{
	struct open_call *c = arg;

	c->rc = gdrb_csv_open(c->path, &c->csv);
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static void sample_row(struct gdrb_row *r)
{
	memset(r, 0, sizeof(*r));
	r->benchmark = "mpi_latency";
	r->layer = "mpi";
	r->mem = "host";
	r->path = "direct";
	r->reg = "none";
	r->pair = "0-1";
	r->size = 4096;
	r->iterations = 1000;
	r->lat.n = 1000;
	r->lat.min = 1.25;
	r->lat.p50 = 1.5;
	r->lat.avg = 1.625;
	r->lat.p99 = 2.0;
	r->lat.p999 = 3.125;
	r->lat.max = 4.5;
	r->lat.stdev = 0.25;
	r->bw_GBps = 2.5;
	r->algbw_GBps = NAN;
	r->busbw_GBps = NAN;
	r->ranks = 2;
	r->hosts = 1;
	r->gpu = NULL;
	r->nic = "mlx5_0";
	r->link_layer = "InfiniBand";
	r->link_gbps = 400;
	r->gpu_nic_dist = "PIX";
	r->cpu_initiator_pct = 99.5;
	r->cpu_responder_pct = 12.25;
	r->status = GDRB_ST_OK;
	r->errors = 0;
	r->quality = GDRB_Q_OK;
	r->note = "plain";
	r->timestamp = TS;
}

#define SAMPLE_LINE \
	"mpi_latency,mpi,host,direct,none,,,,,0-1,4096,1000," \
	"1.250,1.500,1.625,2.000,3.125,4.500,0.250,2.500000000,,,2,1,,mlx5_0,InfiniBand,400.000,PIX,99.5,12.2,ok,0,ok,plain," \
	TS "," PACKAGE_VERSION ",,,,,,,,,\n"

/* Write one row to a memory stream and return the text (caller frees). */
static char *row_text(const struct gdrb_row *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gdrb_csv_write(f, r), 0);
	fclose(f);
	return text;
}

/* The row as a line of the CSV: after its timestamp, the version then END. */
static void ck_assert_row_end(const struct gdrb_row *r, const char *end)
{
	char *text = row_text(r);
	char want[1024];

	snprintf(want, sizeof(want), "," TS "," PACKAGE_VERSION "%s", end);
	ck_assert_str_eq(strstr(text, "," TS ","), want);
	ck_assert_uint_eq(csv_fields(text), SCHEMA_COLS);
	free(text);
}

START_TEST(test_header)
{
	ck_assert_str_eq(gdrb_csv_header(), SCHEMA);
	ck_assert_int_eq(strncmp(SCHEMA, "benchmark,layer,", 16), 0);
	ck_assert_ptr_null(strstr(SCHEMA, ",,"));
	ck_assert_uint_eq(csv_fields(gdrb_csv_header()), SCHEMA_COLS);
	ck_assert_ptr_null(strchr(gdrb_csv_header(), '\n'));
}
END_TEST

START_TEST(test_row_exact)
{
	struct gdrb_row r;
	char *text, want[64];

	sample_row(&r);
	text = row_text(&r);
	ck_assert_str_eq(text, SAMPLE_LINE);
	ck_assert_uint_eq(csv_fields(text), SCHEMA_COLS);
	free(text);

	/* Sizes past 4 GiB and counters past 2^32 print whole. */
	r.size = SIZE_MAX;
	r.iterations = UINT64_C(1) << 40;
	r.errors = UINT64_C(5000000000);
	snprintf(want, sizeof(want), ",%zu,1099511627776,", (size_t)SIZE_MAX);
	text = row_text(&r);
	ck_assert_ptr_nonnull(strstr(text, want));
	ck_assert_ptr_nonnull(strstr(text, ",ok,5000000000,"));
	free(text);

	/* Pipelined staging names its fragment and slots; nothing else does. */
	r.path = "staged";
	r.stage_chunk = (size_t)512 << 10;
	r.stage_slots = 4;
	text = row_text(&r);
	ck_assert_ptr_nonnull(strstr(text, ",host,staged,none,524288,4,,,0-1,"));
	ck_assert_uint_eq(csv_fields(text), SCHEMA_COLS);
	free(text);

	/* Bandwidth rows name their window and buffer layout; a quality flag stands after errors. */
	r.window = 64;
	r.buffers = "single";
	r.quality = GDRB_Q_FEW "+" GDRB_Q_NOISY;
	text = row_text(&r);
	ck_assert_ptr_nonnull(strstr(text, ",524288,4,64,single,0-1,"));
	ck_assert_ptr_nonnull(strstr(text, ",ok,5000000000,few-samples+noisy,"));
	ck_assert_uint_eq(csv_fields(text), SCHEMA_COLS);
	free(text);
}
END_TEST

START_TEST(test_field_quoting)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ NULL, "" },
		{ "", "" },
		{ "plain text", "plain text" },
		{ "a,b", "\"a,b\"" },
		{ "a,\"b\"", "\"a,\"\"b\"\"\"" },
		{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "two\nlines", "\"two lines\"" },
		{ "cr\r\n", "\"cr  \"" },
		/* What a spreadsheet would run as a formula opens as text. */
		{ "=1+1", "'=1+1" },
		{ "-2", "'-2" },
		{ "+x", "'+x" },
		{ "@SUM(A1)", "'@SUM(A1)" },
		{ "\tx", "'\tx" },
		{ "\rx,y", "\"' x,y\"" },
		{ "=HYPERLINK(\"u\",\"v\")", "\"'=HYPERLINK(\"\"u\"\",\"\"v\"\")\"" },
		{ "a=b-c", "a=b-c" },
		{ "'=already", "'=already" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		ck_assert_ptr_nonnull(f);
		gdrb_csv_field(f, cases[i].in);
		fclose(f);
		ck_assert_str_eq(text, cases[i].out);
		free(text);
	}
}
END_TEST

/* A note with a comma and quotes stays one field of the row. */
START_TEST(test_note_quoted_in_row)
{
	struct gdrb_row r;
	char *text;

	sample_row(&r);
	r.note = "a,\"b\"";
	text = row_text(&r);
	ck_assert_ptr_nonnull(strstr(text, ",ok,0,ok,\"a,\"\"b\"\"\"," TS ","));
	ck_assert_uint_eq(csv_fields(text), SCHEMA_COLS);
	free(text);
}
END_TEST

/* What a library says of its path fills the last three columns, after version, as text. */
START_TEST(test_library_path_columns)
{
	struct gdrb_row r;

	sample_row(&r);
	r.transport = "NET/IB+P2P";
	r.gdr_connections = "16/16";
	r.library = "NCCL 2.28.9 (simulated)";
	ck_assert_row_end(&r, ",NET/IB+P2P,16/16,NCCL 2.28.9 (simulated),,,,,,\n");

	/* Text from a library's log: a comma stays in its field, a formula lead is inert. */
	r.transport = "NET/IB,P2P";
	r.gdr_connections = "";
	r.library = "=NCCL";
	ck_assert_row_end(&r, ",\"NET/IB,P2P\",,'=NCCL,,,,,,\n");
}
END_TEST

/* A collective's placement follows the library's columns. */
START_TEST(test_placement_column)
{
	struct gdrb_row r;

	sample_row(&r);
	r.placement = "in-place";
	ck_assert_row_end(&r, ",,,,in-place,,,,,\n");
	ck_assert_ptr_nonnull(strstr(SCHEMA, ",library,placement,"));
}
END_TEST

/* How a library's calls were timed and what it chose: the last five columns, counts empty at 0. */
START_TEST(test_timing_columns)
{
	struct gdrb_row r;
	char *text;

	sample_row(&r);
	r.timing = "batch";
	r.calls_per_sync = 20;
	r.algorithm = "Ring";
	r.protocol = "LL128";
	r.channels = 4;
	ck_assert_row_end(&r, ",,,,,batch,20,Ring,LL128,4\n");
	r.timing = "call";
	r.calls_per_sync = 1;
	r.algorithm = r.protocol = NULL;
	r.channels = 0;
	text = row_text(&r);
	ck_assert_str_eq(strstr(text, "," TS ","), "," TS "," PACKAGE_VERSION ",,,,,call,1,,,\n");
	free(text);
	ck_assert_str_eq(strrchr(SCHEMA, ',') + 1, "channels");
}
END_TEST

/* NAN and "no latency samples" are empty fields, never "nan" or 0. */
START_TEST(test_not_applicable_empty)
{
	struct gdrb_row r;
	char *text;

	sample_row(&r);
	r.lat.n = 0;
	r.bw_GBps = NAN;
	r.status = GDRB_ST_UNSUPPORTED;
	r.quality = NULL;
	r.note = NULL;
	r.cpu_initiator_pct = NAN;
	r.cpu_responder_pct = NAN;
	text = row_text(&r);
	ck_assert_str_eq(text, "mpi_latency,mpi,host,direct,none,,,,,0-1,4096,1000,"
			       ",,,,,,,,,,2,1,,mlx5_0,InfiniBand,400.000,PIX,,,unsupported,0,,," TS "," PACKAGE_VERSION ",,,,,,,,,\n");
	ck_assert_ptr_null(strstr(text, "nan"));
	free(text);

	/* MPI rows: no NIC, link or distance; an unknown rate is empty too. */
	sample_row(&r);
	r.nic = "";
	r.link_layer = NULL;
	r.link_gbps = 0;
	r.gpu_nic_dist = NULL;
	text = row_text(&r);
	ck_assert_ptr_nonnull(strstr(text, ",2,1,,,,,,99.5,12.2,ok,0,ok,plain,"));
	ck_assert_uint_eq(csv_fields(text), SCHEMA_COLS);
	free(text);

	sample_row(&r);
	r.bw_GBps = NAN;
	r.algbw_GBps = 12.5;
	r.busbw_GBps = 18.75;
	text = row_text(&r);
	ck_assert_ptr_nonnull(strstr(text, ",0.250,,12.500000000,18.750000000,2,1,"));
	free(text);
}
END_TEST

/* "YYYY-MM-DDTHH:MM:SSZ" to seconds since the epoch, failing on any other form. */
static time_t parse_timestamp(const char *ts)
{
	struct tm tm;
	int used = 0;

	memset(&tm, 0, sizeof(tm));
	ck_assert_msg(strlen(ts) == 20 && ts[4] == '-' && ts[7] == '-' && ts[10] == 'T' &&
		      ts[13] == ':' && ts[16] == ':' && ts[19] == 'Z',
		      "timestamp '%s' is not ISO 8601 UTC", ts);
	ck_assert_int_eq(sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon,
				&tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used), 6);
	ck_assert_int_eq(used, 20);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return timegm(&tm);
}

START_TEST(test_timestamp)
{
	struct gdrb_row r;
	char ts[32], *text, *field;
	time_t t, now = time(NULL);

	ck_assert_ptr_eq(gdrb_timestamp(ts, sizeof(ts)), ts);
	t = parse_timestamp(ts);
	ck_assert_msg(t >= now - 5 && t <= now + 5, "timestamp '%s' is not now (UTC)", ts);

	/* A row without a timestamp gets the current one. */
	sample_row(&r);
	r.timestamp = NULL;
	text = row_text(&r);
	field = strstr(text, ",plain,");
	ck_assert_ptr_nonnull(field);
	field += strlen(",plain,");
	ck_assert_int_eq(field[20], ',');
	field[20] = '\0';
	t = parse_timestamp(field);
	ck_assert_msg(t >= now - 5 && t <= now + 5, "row timestamp '%s' is not now", field);
	free(text);
}
END_TEST

/* A row written under capture_stderr: appended to csv where set, else written to f. */
struct csv_call {
	FILE *f;
	struct gdrb_csv *csv;
	const struct gdrb_row *row;
	int rc;
};

static void call_csv(void *arg)
{
	struct csv_call *c = arg;

	c->rc = c->csv ? gdrb_csv_append(c->csv, c->row) : gdrb_csv_write(c->f, c->row);
}

/* A full disk is an error, logged once, not a silently short file. */
START_TEST(test_write_error)
{
	struct csv_call call = { 0 };
	struct gdrb_row r;
	char err[1024];

	call.f = fopen("/dev/full", "w");
	if (!call.f) {
		fprintf(stderr, "test_report: write_error: skipped, no /dev/full\n");
		return;
	}
	sample_row(&r);
	call.row = &r;
	capture_stderr(call_csv, &call, err, sizeof(err));
	ck_assert_int_eq(call.rc, GDRB_ERR);
	ck_assert_uint_eq(count_char(err, '\n'), 1);
	ck_assert_ptr_nonnull(strstr(err, "CSV"));
	fclose(call.f);
}
END_TEST

static struct gdrb_csv *open_ok(const char *path)
{
	struct gdrb_csv *csv = NULL;

	ck_assert_int_eq(gdrb_csv_open(path, &csv), 0);
	ck_assert_ptr_nonnull(csv);
	return csv;
}

START_TEST(test_open_new_file)
{
	char path[PATH_MAX + 32];
	struct gdrb_csv *csv;
	struct gdrb_row r;

	csv = open_ok(tmp_path(path, sizeof(path), "new.csv"));
	sample_row(&r);
	ck_assert_int_eq(gdrb_csv_append(csv, &r), 0);
	ck_assert_int_eq(gdrb_csv_close(csv), 0);
	ck_assert_file(path, schema_around("", "\n" SAMPLE_LINE));
}
END_TEST

START_TEST(test_open_empty_file)
{
	char path[PATH_MAX + 32];

	write_text(tmp_path(path, sizeof(path), "empty.csv"), "");
	ck_assert_int_eq(gdrb_csv_close(open_ok(path)), 0);
	ck_assert_file(path, schema_around("", "\n"));
}
END_TEST

/* A second run appends its rows under the first run's header. */
START_TEST(test_open_appends)
{
	char path[PATH_MAX + 32], *text;
	struct gdrb_csv *csv;
	struct gdrb_row r;

	tmp_path(path, sizeof(path), "runs.csv");
	sample_row(&r);
	csv = open_ok(path);
	ck_assert_int_eq(gdrb_csv_append(csv, &r), 0);
	ck_assert_int_eq(gdrb_csv_close(csv), 0);

	ck_assert_int_eq(gdrb_csv_close(open_ok(path)), 0);

	csv = open_ok(path);
	r.size = 8192;
	ck_assert_int_eq(gdrb_csv_append(csv, &r), 0);
	ck_assert_int_eq(gdrb_csv_close(csv), 0);

	text = slurp(path);
	ck_assert_uint_eq(count_char(text, '\n'), 3);
	ck_assert_str_eq(strstr(text, schema_around("", "\n")), text);
	ck_assert_ptr_null(strstr(text + 1, SCHEMA));
	ck_assert_ptr_nonnull(strstr(text, "\nmpi_latency,mpi,host,direct,none,,,,,0-1,4096,"));
	ck_assert_ptr_nonnull(strstr(text, "\nmpi_latency,mpi,host,direct,none,,,,,0-1,8192,"));
	free(text);
}
END_TEST

static void check_rejected(const char *name, const char *contents)
{
	char path[PATH_MAX + 32], err[1024];
	struct open_call call;

	call.path = tmp_path(path, sizeof(path), name);
	write_text(path, contents);
	capture_stderr(call_csv_open, &call, err, sizeof(err));
	ck_assert_msg(call.csv == NULL, "%s: a file we cannot append to was accepted", name);
	ck_assert_int_eq(call.rc, GDRB_ERR_USAGE);
	ck_assert_uint_eq(count_char(err, '\n'), 1);
	ck_assert_ptr_nonnull(strstr(err, "--csv: "));
	ck_assert_ptr_nonnull(strstr(err, path));
	/* The file is left as it was. */
	ck_assert_file(path, contents);
}

/* The length of the first `cols` fields of a line, without the comma after them. */
static int fields_len(const char *line, int cols)
{
	const char *p = line;

	while (cols-- > 0 && (p = strchr(p, ',')) != NULL)
		p++;
	return p ? (int)(p - line - 1) : (int)strcspn(line, "\n");
}

START_TEST(test_open_other_header)
{
	char older[4096], name[32];
	size_t v;
	int cols = 0;

	check_rejected("other.csv", "size,latency\n8,1.0\n");
	/* Every older version's file: its header a prefix of this one's, its rows as short. */
	ck_assert_uint_ge(SCHEMA_VERSIONS, 3);
	for (v = 0; v + 1 < SCHEMA_VERSIONS; v++) {
		cols += version_adds[v];
		ck_assert_int_lt(cols, SCHEMA_COLS);
		snprintf(older, sizeof(older), "%.*s\n", fields_len(SCHEMA, cols), SCHEMA);
		snprintf(name, sizeof(name), "v%zu.csv", v + 1);
		check_rejected(name, older);
		snprintf(older, sizeof(older), "%.*s\n%.*s\n", fields_len(SCHEMA, cols), SCHEMA,
			 fields_len(SAMPLE_LINE, cols), SAMPLE_LINE);
		snprintf(name, sizeof(name), "v%zu-rows.csv", v + 1);
		check_rejected(name, older);
	}
	ck_assert_int_eq(cols + version_adds[v], SCHEMA_COLS);
	check_rejected("extra.csv", schema_around("", ",extra_column\n"));
	check_rejected("fewer.csv", "benchmark,layer,mem\n");
	check_rejected("noheader.csv", schema_around("\n", "\n"));
	check_rejected("newline.csv", "\n");
	check_rejected("cr.csv", schema_around("", "\rx\n"));
}
END_TEST

/* A last line without its newline (a full disk, a crash) is never appended to. */
START_TEST(test_open_torn)
{
	check_rejected("torn-row.csv", schema_around("", "\n" SAMPLE_LINE "mpi_latency,mpi,ho"));
	check_rejected("torn-header.csv", SCHEMA);
	check_rejected("torn-half-header.csv", "benchmark,lay");
	check_rejected("torn-one.csv", "b");
}
END_TEST

/* CRLF files are refused rather than given LF rows. */
START_TEST(test_open_crlf)
{
	check_rejected("crlf-header.csv", schema_around("", "\r\n"));
	check_rejected("crlf-rows.csv", schema_around("", "\r\nmpi_latency\r\n"));
	check_rejected("crlf-last.csv", schema_around("", "\nmpi_latency\r\n"));
}
END_TEST

/* Writers standing in for write(2). */
static int fake_calls;
static ssize_t write_half(int fd, const void *buf, size_t len)
{
	fake_calls++;
	return write(fd, buf, len / 2);
}

static ssize_t write_enospc(int fd, const void *buf, size_t len)
{
	(void)fd;
	(void)buf;
	(void)len;
	fake_calls++;
	errno = ENOSPC;
	return -1;
}

static ssize_t write_eintr_once(int fd, const void *buf, size_t len)
{
	if (fake_calls++ == 0) {
		errno = EINTR;
		return -1;
	}
	return write(fd, buf, len);
}

/*
 * A short write: the part that landed is cut off, the error said once, later
 * rows dropped; the file ends in the last complete line.
 */
START_TEST(test_append_short)
{
	char path[PATH_MAX + 32], err[1024];
	struct csv_call call = { 0 };
	struct gdrb_row r;

	sample_row(&r);
	call.row = &r;
	call.csv = open_ok(tmp_path(path, sizeof(path), "short.csv"));
	ck_assert_int_eq(gdrb_csv_append(call.csv, &r), 0);
	fake_calls = 0;
	call.csv->write = write_half;
	capture_stderr(call_csv, &call, err, sizeof(err));
	ck_assert_int_eq(call.rc, GDRB_ERR);
	ck_assert_int_eq(fake_calls, 1);
	ck_assert_uint_eq(count_char(err, '\n'), 1);
	ck_assert_ptr_nonnull(strstr(err, "writing results to '"));
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, "the partial line was removed"));
	ck_assert_file(path, schema_around("", "\n" SAMPLE_LINE));

	/* Said once: the next row is dropped without a word, and without a write. */
	call.csv->write = write;
	capture_stderr(call_csv, &call, err, sizeof(err));
	ck_assert_int_eq(call.rc, GDRB_ERR);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(gdrb_csv_close(call.csv), GDRB_ERR);
	ck_assert_file(path, schema_around("", "\n" SAMPLE_LINE));
}
END_TEST

START_TEST(test_append_enospc)
{
	char path[PATH_MAX + 32], err[1024];
	struct csv_call call = { 0 };
	struct gdrb_row r;

	sample_row(&r);
	call.row = &r;
	call.csv = open_ok(tmp_path(path, sizeof(path), "full.csv"));
	fake_calls = 0;
	call.csv->write = write_enospc;
	capture_stderr(call_csv, &call, err, sizeof(err));
	ck_assert_int_eq(call.rc, GDRB_ERR);
	ck_assert_int_eq(fake_calls, 1);
	ck_assert_uint_eq(count_char(err, '\n'), 1);
	ck_assert_ptr_nonnull(strstr(err, "No space left on device"));
	ck_assert_ptr_nonnull(strstr(err, path));
	capture_stderr(call_csv, &call, err, sizeof(err));
	ck_assert_int_eq(call.rc, GDRB_ERR);
	ck_assert_int_eq(fake_calls, 1);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(gdrb_csv_close(call.csv), GDRB_ERR);
	ck_assert_file(path, schema_around("", "\n"));
}
END_TEST

/* An interrupted write is tried again: the row lands once, whole. */
START_TEST(test_append_eintr)
{
	char path[PATH_MAX + 32];
	struct gdrb_csv *csv;
	struct gdrb_row r;

	sample_row(&r);
	csv = open_ok(tmp_path(path, sizeof(path), "eintr.csv"));
	fake_calls = 0;
	csv->write = write_eintr_once;
	ck_assert_int_eq(gdrb_csv_append(csv, &r), 0);
	ck_assert_int_eq(fake_calls, 2);
	ck_assert_int_eq(gdrb_csv_close(csv), 0);
	ck_assert_file(path, schema_around("", "\n" SAMPLE_LINE));
}
END_TEST

static void call_stdout_flush(void *arg)
{
	*(int *)arg = gdrb_stdout_flush();
}

static void call_stdout_close(void *arg)
{
	*(int *)arg = gdrb_stdout_close();
}

/* stdout on a full disk: an error, said once however often it is checked. */
START_TEST(test_stdout_full)
{
	struct stat st;
	char err[1024];
	int i, rc;

	/* Check runs each test in a child of its own: stdout is ours to lose. */
	if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode) || !freopen("/dev/full", "w", stdout)) {
		fprintf(stderr, "test_report: stdout_full: skipped, no /dev/full\n");
		return;
	}
	for (i = 0; i < 1000; i++)
		printf("%d: a table row that does not fit anywhere\n", i);
	capture_stderr(call_stdout_flush, &rc, err, sizeof(err));
	ck_assert_int_eq(rc, GDRB_ERR);
	ck_assert_uint_eq(count_char(err, '\n'), 1);
	ck_assert_ptr_nonnull(strstr(err, "writing results to stdout: No space left on device"));
	printf("one more row\n");
	capture_stderr(call_stdout_flush, &rc, err, sizeof(err));
	ck_assert_int_eq(rc, GDRB_ERR);
	ck_assert_str_eq(err, "");
	capture_stderr(call_stdout_close, &rc, err, sizeof(err));
	ck_assert_int_eq(rc, GDRB_ERR);
	ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(test_stdout_ok)
{
	char path[PATH_MAX + 32];

	ck_assert_ptr_nonnull(freopen(tmp_path(path, sizeof(path), "out.txt"), "w", stdout));
	printf("a row\n");
	ck_assert_int_eq(gdrb_stdout_flush(), 0);
	ck_assert_int_eq(gdrb_stdout_close(), 0);
	ck_assert_file(path, "a row\n");
}
END_TEST

START_TEST(test_open_missing_dir)
{
	char path[PATH_MAX + 32], dir[PATH_MAX + 32], err[1024];
	struct open_call call;
	struct stat st;

	call.path = tmp_path(path, sizeof(path), "no/such/dir/out.csv");
	capture_stderr(call_csv_open, &call, err, sizeof(err));
	ck_assert_ptr_null(call.csv);
	ck_assert_int_eq(call.rc, GDRB_ERR_USAGE);
	ck_assert_uint_eq(count_char(err, '\n'), 1);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_int_ne(stat(tmp_path(dir, sizeof(dir), "no"), &st), 0);

	/* A directory is no CSV file either. */
	call.path = tmp_dir;
	capture_stderr(call_csv_open, &call, err, sizeof(err));
	ck_assert_ptr_null(call.csv);
	ck_assert_int_eq(call.rc, GDRB_ERR_USAGE);
	ck_assert_uint_eq(count_char(err, '\n'), 1);
}
END_TEST

static char *table_text(const struct gdrb_table *t, const char *const *cells)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	if (cells)
		gdrb_table_print_row(f, t, cells);
	else
		gdrb_table_print_header(f, t);
	fclose(f);
	return text;
}

START_TEST(test_table_widths)
{
	static const char *const titles[] = {
		"size", "123456789", "1234567890", "lat_avg_us", "busbw_GBps_max",
	};
	static const char *const first_long[] = { "123456789", "size_bytes_x" };
	struct gdrb_table t;

	gdrb_table_init(&t, 5, titles);
	ck_assert_uint_eq(t.ncols, 5);
	ck_assert_int_eq(t.width[0], GDRB_TABLE_MIN_WIDTH);
	ck_assert_int_eq(t.width[1], GDRB_TABLE_MIN_WIDTH);
	ck_assert_int_eq(t.width[2], 10);
	ck_assert_int_eq(t.width[3], 10);
	ck_assert_int_eq(t.width[4], 14);
	ck_assert_str_eq(t.titles[4], "busbw_GBps_max");

	/* The first column also holds the '#' of the header line. */
	gdrb_table_init(&t, 2, first_long);
	ck_assert_int_eq(t.width[0], 10);
	ck_assert_int_eq(t.width[1], 12);
	gdrb_table_init(&t, 1, first_long + 1);
	ck_assert_int_eq(t.width[0], 13);
}
END_TEST

START_TEST(test_table_max_cols)
{
	const char *titles[GDRB_TABLE_MAX_COLS + 4];
	struct gdrb_table t;
	size_t i;

	for (i = 0; i < GDRB_TABLE_MAX_COLS + 4; i++)
		titles[i] = "c";
	gdrb_table_init(&t, GDRB_TABLE_MAX_COLS + 4, titles);
	ck_assert_uint_eq(t.ncols, GDRB_TABLE_MAX_COLS);
}
END_TEST

START_TEST(test_table_print)
{
	static const char *const titles[] = { "size", "lat_avg_us", "busbw_GBps_max" };
	static const char *const cells[] = { "8", "1.23", "n/a" };
	static const char *const wide[] = { "123456789012", "x", "y" };
	static const char *const long_first[] = { "size_bytes_x", "x" };
	static const char *const two[] = { "1", "2" };
	struct gdrb_table t;
	char *header, *row;

	gdrb_table_init(&t, 3, titles);
	header = table_text(&t, NULL);
	row = table_text(&t, cells);
	ck_assert_str_eq(header, "#     size lat_avg_us busbw_GBps_max\n");
	ck_assert_str_eq(row, "         8       1.23            n/a\n");
	/* Columns line up. */
	ck_assert_uint_eq(strlen(header), strlen(row));
	free(row);
	/* A cell wider than its column is printed whole, not cut. */
	row = table_text(&t, wide);
	ck_assert_str_eq(row, "123456789012          x              y\n");
	free(row);
	free(header);

	gdrb_table_init(&t, 2, long_first);
	header = table_text(&t, NULL);
	row = table_text(&t, two);
	ck_assert_str_eq(header, "#size_bytes_x          x\n");
	ck_assert_str_eq(row, "            1          2\n");
	free(row);
	free(header);
}
END_TEST

START_TEST(test_fmt_num)
{
	char buf[32];

	ck_assert_ptr_eq(gdrb_fmt_num(buf, sizeof(buf), NAN, 2), buf);
	ck_assert_str_eq(buf, "n/a");
	ck_assert_str_eq(gdrb_fmt_num(buf, sizeof(buf), -NAN, 0), "n/a");
	ck_assert_str_eq(gdrb_fmt_num(buf, sizeof(buf), 1.23456, 2), "1.23");
	ck_assert_str_eq(gdrb_fmt_num(buf, sizeof(buf), 2.0, 3), "2.000");
	ck_assert_str_eq(gdrb_fmt_num(buf, sizeof(buf), -1.5, 1), "-1.5");
	ck_assert_str_eq(gdrb_fmt_num(buf, sizeof(buf), 1e6, 0), "1000000");
	ck_assert_str_eq(gdrb_fmt_num(buf, sizeof(buf), 0.0, 2), "0.00");
	/* Truncated to the buffer, never overrun. */
	memset(buf, 'x', sizeof(buf));
	ck_assert_str_eq(gdrb_fmt_num(buf, 4, 123.456, 3), "123");
	ck_assert_int_eq(buf[4], 'x');
}
END_TEST

/*
 * Every output is judged before it is opened: a symbolic link (its target not created), a
 * FIFO (at once, not blocking) and a file another open output is under a second name (not
 * truncated) are refused; closing the first output frees its file.
 */
START_TEST(test_open_outputs)
{
	char path[PATH_MAX + 32], target[PATH_MAX + 32], other[PATH_MAX + 32];
	struct gdrb_csv *csv;
	struct stat st;
	int fd;

	tmp_path(target, sizeof(target), "target.csv");
	ck_assert_int_eq(symlink(target, tmp_path(path, sizeof(path), "link.csv")), 0);
	ck_assert_int_eq(gdrb_csv_open(path, &csv), GDRB_ERR_USAGE);
	ck_assert_ptr_null(csv);
	ck_assert_int_ne(stat(target, &st), 0);

	ck_assert_int_eq(mkfifo(tmp_path(path, sizeof(path), "fifo.csv"), 0600), 0);
	ck_assert_int_eq(gdrb_csv_open(path, &csv), GDRB_ERR_USAGE);
	ck_assert_int_eq(gdrb_out_open(path, "--pairs", O_WRONLY | O_CREAT | O_TRUNC), GDRB_ERR_USAGE);

	csv = open_ok(tmp_path(path, sizeof(path), "one.csv"));
	ck_assert_int_eq(link(path, tmp_path(other, sizeof(other), "one.counters.csv")), 0);
	ck_assert_int_eq(gdrb_out_open(other, "counter file", O_WRONLY | O_CREAT | O_TRUNC), GDRB_ERR_USAGE);
	ck_assert_int_eq(gdrb_out_open(path, "--csv", O_RDWR | O_APPEND), GDRB_ERR_USAGE);
	ck_assert_file(path, schema_around("", "\n"));
	ck_assert_int_eq(gdrb_csv_close(csv), 0);
	fd = gdrb_out_open(other, "counter file", O_WRONLY | O_CREAT | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	gdrb_out_forget(fd);
	ck_assert_int_eq(close(fd), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
}
END_TEST

/* A matrix's cells: "-" on the diagonal, one cell (from) the caller's stand-in, else i*10 + j + 0.5. */
static void test_cell(const void *arg, size_t i, size_t j, char *buf, size_t len)
{
	const char *missing = arg;

	if (i == j)
		snprintf(buf, len, "%s", missing[0] == ',' ? "" : "-");
	else if (i == 0 && j == 1)
		snprintf(buf, len, "%s", missing + (missing[0] == ','));
	else
		snprintf(buf, len, "%.2f", (double)(i * 10 + j) + 0.5);
}

static void matrix_is(const struct gdrb_matrix *m, const char *expect)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	gdrb_matrix_print(f, m);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_str_eq(text, expect);
	free(text);
}

START_TEST(test_matrix_layouts)
{
	static const unsigned gpus[] = { 0, 2, 5 };
	/* gdrb_copy_bw --p2p: a comment block, GPUs named by their numbers, names left-aligned. */
	const struct gdrb_matrix p2p = { .n = 3, .prefix = "# ", .corner = "", .name = "gpu", .number = gpus,
		.sep = " ", .label_width = -8, .width = 11, .cell = test_cell, .arg = "n/a" };
	/* The all-pairs matrix on stdout: ranks by index, right-aligned, an unmeasured cell blank. */
	const struct gdrb_matrix pairs = { .n = 3, .prefix = "", .corner = "src\\dst", .name = "",
		.sep = " ", .label_width = 8, .width = 8, .cell = test_cell, .arg = "" };
	/* Its CSV file: nothing padded. */
	const struct gdrb_matrix file = { .n = 3, .prefix = "", .corner = "src\\dst", .name = "",
		.sep = ",", .cell = test_cell, .arg = "," };

	matrix_is(&p2p, "#                 gpu0        gpu2        gpu5\n"
		  "# gpu0               -         n/a        2.50\n"
		  "# gpu2           10.50           -       12.50\n"
		  "# gpu5           20.50       21.50           -\n");
	matrix_is(&pairs, " src\\dst        0        1        2\n"
		  "       0        -              2.50\n"
		  "       1    10.50        -    12.50\n"
		  "       2    20.50    21.50        -\n");
	matrix_is(&file, "src\\dst,0,1,2\n0,,,2.50\n1,10.50,,12.50\n2,20.50,21.50,\n");
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *test, int tmp)
{
	TCase *tc = tcase_create(name);

	if (tmp)
		tcase_add_checked_fixture(tc, make_tmp_dir, remove_tmp_dir);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");

	gdrb_log_init("test_report");
	add_case(s, "header", test_header, 0);
	add_case(s, "row_exact", test_row_exact, 0);
	add_case(s, "field_quoting", test_field_quoting, 0);
	add_case(s, "note_quoted_in_row", test_note_quoted_in_row, 0);
	add_case(s, "library_path_columns", test_library_path_columns, 0);
	add_case(s, "placement_column", test_placement_column, 0);
	add_case(s, "timing_columns", test_timing_columns, 0);
	add_case(s, "not_applicable_empty", test_not_applicable_empty, 0);
	add_case(s, "timestamp", test_timestamp, 0);
	add_case(s, "write_error", test_write_error, 0);
	add_case(s, "open_new_file", test_open_new_file, 1);
	add_case(s, "open_empty_file", test_open_empty_file, 1);
	add_case(s, "open_appends", test_open_appends, 1);
	add_case(s, "open_other_header", test_open_other_header, 1);
	add_case(s, "open_missing_dir", test_open_missing_dir, 1);
	add_case(s, "open_torn", test_open_torn, 1);
	add_case(s, "open_crlf", test_open_crlf, 1);
	add_case(s, "open_outputs", test_open_outputs, 1);
	add_case(s, "append_short", test_append_short, 1);
	add_case(s, "append_enospc", test_append_enospc, 1);
	add_case(s, "append_eintr", test_append_eintr, 1);
	add_case(s, "stdout_full", test_stdout_full, 0);
	add_case(s, "stdout_ok", test_stdout_ok, 1);
	add_case(s, "table_widths", test_table_widths, 0);
	add_case(s, "table_max_cols", test_table_max_cols, 0);
	add_case(s, "table_print", test_table_print, 0);
	add_case(s, "fmt_num", test_fmt_num, 0);
	add_case(s, "matrix_layouts", test_matrix_layouts, 0);
	return s;
}

const struct unit_test unit_test = { .suite = report_suite };
