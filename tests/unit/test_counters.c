/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the counters: the sysfs reader and its classification
 * (common/sysinfo/sysfs_counters.c) on the fixture trees mlx5-counters and
 * rxe-counters and on trees each test writes (a directory in place of a
 * counter file, a file that vanishes, garbage, a node without
 * class/infiniband), and the readings around measurements
 * (common/core/counters*.c): rises, resets and wraps, the row note, the
 * counter file and the lines after the table.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrb_boot.h"
#include "gdrb_clock.h"
#include "gdrb_counters.h"
#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_sysfs_counters.h"

#include "unit_main.h"

static char tmp[PATH_MAX];      /* this test's scratch tree */

static const char *fixture(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s/sys", unit_fixtures(), name);
	return path;
}

/* PATH (under tmp) with its directories, holding TEXT; TEXT NULL: a directory. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX + 256], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	for (slash = strchr(path + strlen(tmp) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
		*slash = '/';
	}
	if (!text) {
		ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
		return;
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void drop(const char *rel)
{
	char path[PATH_MAX + 256];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	ck_assert_int_eq(unlink(path), 0);
}

static void setup_tmp(void)
{
	snprintf(tmp, sizeof(tmp), "%s/gdrb-test-counters.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
}

static void teardown_tmp(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
	unsetenv("GDRB_TEST_HOOKS");
	unsetenv("GDRB_INJECT_SYSFS_ROOT");
	unsetenv("GDRB_INJECT_COUNTER");
	gdrb_inject_load();
}

/* The index of the counter (device, source, name) in s, or -1. */
static int find(const struct gdrb_cnt_set *s, const char *device, const char *source, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->id[i].device, device) && !strcmp(s->id[i].source, source) &&
		    !strcmp(s->id[i].name, name))
			return (int)i;
	return -1;
}

START_TEST(test_classify)
{
	static const struct {
		const char *name;
		enum gdrb_cnt_class cls;
	} cases[] = {
		/* IB PortCounters (counters/) */
		{ "symbol_error", GDRB_CNT_ERROR }, { "link_downed", GDRB_CNT_ERROR },
		{ "port_rcv_errors", GDRB_CNT_ERROR }, { "VL15_dropped", GDRB_CNT_ERROR },
		{ "port_xmit_wait", GDRB_CNT_CONGESTION }, { "port_xmit_data", GDRB_CNT_TRAFFIC },
		{ "port_rcv_packets", GDRB_CNT_TRAFFIC },
		/* mlx5 */
		{ "out_of_sequence", GDRB_CNT_ERROR }, { "local_ack_timeout_err", GDRB_CNT_ERROR },
		{ "req_cqe_error", GDRB_CNT_ERROR }, { "rx_icrc_encapsulated", GDRB_CNT_ERROR },
		{ "np_cnp_sent", GDRB_CNT_CONGESTION }, { "rp_cnp_handled", GDRB_CNT_CONGESTION },
		{ "np_ecn_marked_roce_packets", GDRB_CNT_CONGESTION },
		{ "rx_write_requests", GDRB_CNT_TRAFFIC }, { "rdma_tx_packets", GDRB_CNT_TRAFFIC },
		{ "vport_out_of_sequence", GDRB_CNT_ERROR }, { "lifespan", GDRB_CNT_OTHER },
		/* rxe */
		{ "completer_retry_err", GDRB_CNT_ERROR }, { "rcvd_seq_err", GDRB_CNT_ERROR },
		{ "out_of_seq_request", GDRB_CNT_ERROR }, { "duplicate_request", GDRB_CNT_ERROR },
		{ "sent_pkts", GDRB_CNT_TRAFFIC }, { "ack_deferred", GDRB_CNT_OTHER },
		/* efa */
		{ "rx_drops", GDRB_CNT_ERROR }, { "impaired_remote_conn_events", GDRB_CNT_ERROR },
		{ "tx_pkts", GDRB_CNT_TRAFFIC },
		/* anything else */
		{ "a_counter_of_2030", GDRB_CNT_OTHER }, { "", GDRB_CNT_OTHER }, { "vport_", GDRB_CNT_OTHER },
		{ "Symbol_Error", GDRB_CNT_OTHER },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(gdrb_cnt_classify(cases[i].name) == cases[i].cls, "%s: class %s, expected %s",
			      cases[i].name, gdrb_cnt_class_name(gdrb_cnt_classify(cases[i].name)),
			      gdrb_cnt_class_name(cases[i].cls));
	ck_assert_str_eq(gdrb_cnt_class_name(GDRB_CNT_LINK), "link");
	ck_assert_str_eq(gdrb_cnt_class_name(99), "other");
}
END_TEST

START_TEST(test_parse)
{
	static const char *const bad[] = { "", "-1", "+1", " 1", "1 2", "1e3", "0x10", "N/A (no PMA)",
					   "18446744073709551616", "99999999999999999999999", "1\n\n", "\n" };
	char names[4][GDRB_CNT_NAME_LEN], shown[8];
	uint64_t v, counts[4];
	size_t i;

	ck_assert_int_eq(gdrb_cnt_parse_u64("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(gdrb_cnt_parse_u64("12\n", &v), 0);
	ck_assert_uint_eq(v, 12);
	ck_assert_int_eq(gdrb_cnt_parse_u64("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(gdrb_cnt_parse_u64(bad[i], &v) == -EINVAL, "'%s' taken", bad[i]);

	/* AER: a line of another form, a bad count, a name too long are skipped; max holds. */
	ck_assert_uint_eq(gdrb_cnt_parse_aer("RxErr 3\nBad TLP 1\nBadDLLP x\nTimeout -1\n"
					     "AVeryLongNameThatNoKernelPrintsForAnAERLineOfItsOwn 1\n"
					     "TOTAL_ERR_COR 3\nRollover 0\nHeaderOF 9", names, counts, 3), 3);
	ck_assert_str_eq(names[0], "RxErr");
	ck_assert_uint_eq(counts[0], 3);
	ck_assert_str_eq(names[1], "TOTAL_ERR_COR");
	ck_assert_str_eq(names[2], "Rollover");
	ck_assert_uint_eq(gdrb_cnt_parse_aer("", names, counts, 4), 0);

	gdrb_cnt_name(shown, sizeof(shown), "a b\x1b[2J");
	ck_assert_str_eq(shown, "a?b??2J");
	gdrb_cnt_name(shown, sizeof(shown), "a b\x1b[2Jxyz");
	ck_assert_str_eq(shown, "a?b??2~");
	gdrb_cnt_name(shown, sizeof(shown), "mlx5_0");
	ck_assert_str_eq(shown, "mlx5_0");
}
END_TEST

START_TEST(test_mlx5_fixture)
{
	struct gdrb_cnt_set s = { 0 };
	uint64_t *v;
	uint8_t *st;
	size_t i;
	int k;

	ck_assert_int_eq(gdrb_cnt_add_port(&s, fixture("mlx5-counters"), "mlx5_0", 1), 0);
	/* 20 PortCounters (extended width) and 32 of mlx5's hw_counters, lifespan included. */
	ck_assert_uint_eq(s.n, 52);
	ck_assert_int_eq(gdrb_cnt_add_pci(&s, fixture("mlx5-counters"), "GPU", "0000:3b:00.0", "0000:3a:00.0"), 0);
	ck_assert_uint_eq(s.ports, 1);
	ck_assert_uint_eq(s.pci, 1);
	v = calloc(s.n, sizeof(*v));
	st = calloc(s.n, sizeof(*st));
	gdrb_cnt_read(&s, v, st);
	for (i = 0; i < s.n; i++)
		ck_assert_msg(st[i] == GDRB_CNT_READ_OK, "%s/%s unreadable", s.id[i].source, s.id[i].name);

	k = find(&s, "mlx5_0", "counters", "symbol_error");
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_ERROR);
	ck_assert_str_eq(s.id[k].port, "1");
	ck_assert(!s.id[k].pcie);
	k = find(&s, "mlx5_0", "counters", "link_downed");
	ck_assert_uint_eq(v[k], 1);
	k = find(&s, "mlx5_0", "counters", "port_xmit_data");
	ck_assert_uint_eq(v[k], 1000003);
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_TRAFFIC);
	k = find(&s, "mlx5_0", "hw_counters", "np_ecn_marked_roce_packets");
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_CONGESTION);
	k = find(&s, "mlx5_0", "hw_counters", "out_of_sequence");
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_ERROR);
	k = find(&s, "mlx5_0", "hw_counters", "lifespan");
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_OTHER);

	/* The GPU's link: x8 of x16 at 32 GT/s, both ends' maxima; AER as the kernel prints it. */
	k = find(&s, "GPU", "link", "current_link_width");
	ck_assert_int_ge(k, 0);
	ck_assert(s.id[k].pcie);
	ck_assert_str_eq(s.id[k].port, "0000:3b:00.0");
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_LINK);
	ck_assert_uint_eq(v[k], 8);
	ck_assert_uint_eq(v[find(&s, "GPU", "link", "max_link_width")], 16);
	ck_assert_uint_eq(v[find(&s, "GPU", "link", "upstream_max_link_width")], 16);
	ck_assert_uint_eq(v[find(&s, "GPU", "link", "current_link_speed")], 32000);
	ck_assert_uint_eq(v[find(&s, "GPU", "link", "upstream_max_link_speed")], 32000);
	k = find(&s, "GPU", "aer_dev_correctable", "BadTLP");
	ck_assert_uint_eq(v[k], 5);
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_ERROR);
	k = find(&s, "GPU", "aer_dev_correctable", "TOTAL_ERR_COR");
	ck_assert_uint_eq(v[k], 7);
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_OTHER);
	ck_assert_int_ge(find(&s, "GPU", "aer_dev_fatal", "TOTAL_ERR_FATAL"), 0);
	free(v);
	free(st);
	gdrb_cnt_set_free(&s);
	ck_assert_uint_eq(s.n, 0);
}
END_TEST

START_TEST(test_rxe_fixture)
{
	struct gdrb_cnt_set s = { 0 };
	uint64_t v[32];
	uint8_t st[32];
	int k;

	ck_assert_int_eq(gdrb_cnt_add_port(&s, fixture("rxe-counters"), "rxe0", 1), 0);
	/* rxe has no PMA: hw_counters/ only. */
	ck_assert_uint_eq(s.n, 16);
	ck_assert_int_eq(find(&s, "rxe0", "counters", "symbol_error"), -1);
	gdrb_cnt_read(&s, v, st);
	k = find(&s, "rxe0", "hw_counters", "completer_retry_err");
	ck_assert_uint_eq(v[k], 13);
	ck_assert_uint_eq(s.id[k].cls, GDRB_CNT_ERROR);
	ck_assert_uint_eq(s.id[find(&s, "rxe0", "hw_counters", "sent_pkts")].cls, GDRB_CNT_TRAFFIC);
	ck_assert_uint_eq(s.id[find(&s, "rxe0", "hw_counters", "link_downed")].cls, GDRB_CNT_ERROR);
	ck_assert_uint_eq(s.id[find(&s, "rxe0", "hw_counters", "ack_deferred")].cls, GDRB_CNT_OTHER);
	gdrb_cnt_set_free(&s);
	/* A port that is not there: nothing, not an error. */
	ck_assert_int_eq(gdrb_cnt_add_port(&s, fixture("rxe-counters"), "rxe1", 1), 0);
	ck_assert_uint_eq(s.n, 0);
	gdrb_cnt_set_free(&s);
}
END_TEST

#define PORT "class/infiniband/mlx5_0/ports/1/"

/* Counter files of the port as "DIR/NAME=VALUE ..." (DIR counters or hw_counters), each a line. */
static void put_port(const char *files)
{
	char rel[256] = PORT, text[64];
	const char *at = files;
	int used;

	while (sscanf(at, " %200[^= ]=%40s%n", rel + strlen(PORT), text, &used) == 2) {
		strcat(text, "\n");
		put(rel, text);
		at += used;
	}
	ck_assert_msg(!*at, "put_port: '%s' is not DIR/NAME=VALUE", at);
}

/* A port of a tree in tmp with the faults sysfs can show. */
START_TEST(test_faults)
{
	struct gdrb_cnt_set s = { 0 };
	char name[64], big[128];
	uint64_t v[512];
	uint8_t st[512];
	int i;

	put(PORT "counters/symbol_error", "7\n");
	put(PORT "counters/port_rcv_errors", NULL);             /* a directory in place of the file */
	put(PORT "counters/VL15_dropped", "N/A (no PMA)\n");
	put(PORT "counters/link_downed", "3\n");
	/* A digit, then more than a counter's text: taken as "5" if the reader stopped at its buffer. */
	memset(big, ' ', sizeof(big) - 1);
	big[0] = '5';
	big[sizeof(big) - 2] = '9';
	big[sizeof(big) - 1] = '\0';
	put(PORT "hw_counters/out_of_sequence", big);
	put(PORT "hw_counters/a b\x1b[2J", "1\n");
	put("bus/pci/devices/0000:01:00.0/current_link_speed", "Unknown\n");
	put("bus/pci/devices/0000:01:00.0/current_link_width", "99\n");
	put("bus/pci/devices/0000:01:00.0/max_link_speed", "16.0 GT/s PCIe\n");
	put("bus/pci/devices/0000:01:00.0/aer_dev_correctable", "RxErr 1\nBadTLP 2\n");
	ck_assert_int_eq(gdrb_cnt_add_port(&s, tmp, "mlx5_0", 1), 0);
	ck_assert_int_eq(gdrb_cnt_add_pci(&s, tmp, "GPU", "0000:01:00.0", NULL), 0);
	ck_assert_uint_eq(s.n, 6 + 3 + 2);
	gdrb_cnt_read(&s, v, st);
	ck_assert_uint_eq(st[find(&s, "mlx5_0", "counters", "symbol_error")], GDRB_CNT_READ_OK);
	ck_assert_uint_eq(st[find(&s, "mlx5_0", "counters", "port_rcv_errors")], GDRB_CNT_READ_UNREADABLE);
	ck_assert_uint_eq(st[find(&s, "mlx5_0", "counters", "VL15_dropped")], GDRB_CNT_READ_UNREADABLE);
	ck_assert_uint_eq(st[find(&s, "mlx5_0", "hw_counters", "out_of_sequence")], GDRB_CNT_READ_UNREADABLE);
	ck_assert_uint_eq(st[find(&s, "mlx5_0", "hw_counters", "a?b??2J")], GDRB_CNT_READ_OK);
	ck_assert_uint_eq(st[find(&s, "GPU", "link", "current_link_speed")], GDRB_CNT_READ_UNREADABLE);
	ck_assert_uint_eq(st[find(&s, "GPU", "link", "current_link_width")], GDRB_CNT_READ_UNREADABLE);
	ck_assert_uint_eq(v[find(&s, "GPU", "link", "max_link_speed")], 16000);

	/* Gone between readings: the file, and an AER line. */
	drop(PORT "counters/link_downed");
	put("bus/pci/devices/0000:01:00.0/aer_dev_correctable", "RxErr 4\n");
	gdrb_cnt_read(&s, v, st);
	ck_assert_uint_eq(st[find(&s, "mlx5_0", "counters", "link_downed")], GDRB_CNT_READ_VANISHED);
	ck_assert_uint_eq(st[find(&s, "GPU", "aer_dev_correctable", "RxErr")], GDRB_CNT_READ_OK);
	ck_assert_uint_eq(v[find(&s, "GPU", "aer_dev_correctable", "RxErr")], 4);
	ck_assert_uint_eq(st[find(&s, "GPU", "aer_dev_correctable", "BadTLP")], GDRB_CNT_READ_UNREADABLE);
	gdrb_cnt_set_free(&s);

	/* A directory of more files than a port has: GDRB_CNT_DIR_MAX taken, the rest counted. */
	for (i = 0; i < GDRB_CNT_DIR_MAX + 5; i++) {
		snprintf(name, sizeof(name), "class/infiniband/x/ports/2/hw_counters/c%d", i);
		put(name, "0\n");
	}
	ck_assert_int_eq(gdrb_cnt_add_port(&s, tmp, "x", 2), 0);
	ck_assert_uint_eq(s.n, GDRB_CNT_DIR_MAX);
	ck_assert_uint_eq(s.dropped, 5);
	gdrb_cnt_set_free(&s);
}
END_TEST

/* The hooks point the counters at tmp; false when the hooks refuse the values. */
static void hooks(const char *counter)
{
	setenv("GDRB_TEST_HOOKS", "1", 1);
	setenv("GDRB_INJECT_SYSFS_ROOT", tmp, 1);
	if (counter)
		setenv("GDRB_INJECT_COUNTER", counter, 1);
	ck_assert_int_eq(gdrb_inject_load(), 0);
}

static struct gdrb_boot *self(void)
{
	static struct gdrb_boot b;
	static bool done;
	int argc = 0;
	char **argv = NULL;

	if (!done) {
		b = gdrb_boot_self;
		ck_assert_int_eq(b.init(&b, &argc, &argv), 0);
		done = true;
	}
	return &b;
}

/* What a stream got: its text, which the caller frees. */
struct capture {
	FILE *f;
	char *text;
	size_t len;
};

static void capture_open(struct capture *c)
{
	c->text = NULL;
	c->f = open_memstream(&c->text, &c->len);
	ck_assert_ptr_nonnull(c->f);
}

static char *capture_close(struct capture *c)
{
	ck_assert_int_eq(fclose(c->f), 0);
	return c->text;
}

static char *slurp(const char *path)
{
	static char text[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* The row of write_bw's rank 0 on HOST for mlx5_0 port 1's SOURCE,COUNTER ends in REST. */
static void row_is(const char *file, const char *host, const char *counter, const char *rest)
{
	char key[256];
	const char *at;

	snprintf(key, sizeof(key), ",write_bw,%s,0,mlx5_0,1,%s,", host, counter);
	at = strstr(file, key);
	ck_assert_msg(at != NULL, "no row '%s' in:\n%s", key, file);
	ck_assert_msg(!strncmp(at + strlen(key), rest, strlen(rest)), "row '%s': expected '%s', got '%.60s'",
		      key, rest, at + strlen(key));
}

/* Every row of FILE ends in one run id, PREFIX and the ns of a time after 2020 (19 digits). */
static void run_id_is(const char *file, const char *prefix)
{
	const char *line = strchr(file, '\n'), *id = NULL;
	int rows = 0;

	for (; line && line[1]; line = strchr(line + 1, '\n')) {
		const char *end = strchr(line + 1, '\n'), *at = strstr(line + 1, prefix);

		ck_assert_msg(at && end && at < end, "a row without '%s...': %.200s", prefix, line + 1);
		at += strlen(prefix);
		ck_assert_msg(end - at == 19 && strspn(at, "0123456789") == 19, "a run id's ns: '%.*s'",
			      (int)(end - at), at);
		ck_assert_msg(!id || !strncmp(id, at, 19), "two run ids in one run: %.19s and %.19s", id, at);
		id = at;
		rows++;
	}
	ck_assert_int_gt(rows, 0);
}

/* Readings around three measurements: a rise, a reset, a wrap, an unreadable and a vanished counter. */
START_TEST(test_readings)
{
	const struct gdrb_counters_want w = { .nic_dev = "mlx5_0", .nic_port = 1 };
	struct gdrb_counters *cs;
	struct gdrb_cnt_rise rise;
	struct gdrb_boot *b = self();
	struct gdrb_counters_file *file;
	struct capture out;
	char csv[PATH_MAX + 32], path[PATH_MAX + 64], note[512], line[1024], *text, key[256];

	put_port("counters/symbol_error=5 counters/port_rcv_errors=100 "
		 "counters/port_xmit_data=4294967290 counters/link_downed=0 hw_counters/out_of_sequence=2 "
		 "hw_counters/np_cnp_sent=0");
	hooks(NULL);
	ck_assert_int_eq(gdrb_counters_open(b, &w, &cs), 0);
	gdrb_counters_describe(cs, line, sizeof(line));
	ck_assert_msg(strstr(line, "counters: mlx5_0 port 1, the port this run uses; rank 0 reads 6 counters"), "%s", line);

	gdrb_counters_read(cs, NULL);                   /* before the first size */
	put(PORT "counters/symbol_error", "9\n");       /* +4 while the first size ran */
	put(PORT "hw_counters/np_cnp_sent", "12\n");    /* congestion: no note */
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.errors[0], 1);
	ck_assert_uint_eq(rise.errors[1], 0);
	ck_assert_uint_eq(rise.n, 1);
	ck_assert_str_eq(rise.item[0].where, "mlx5_0 port 1");
	ck_assert_str_eq(rise.item[0].counter, "symbol_error");
	ck_assert_uint_eq(rise.item[0].delta, 4);
	gdrb_counters_note(&rise, sizeof(rise), b, note, sizeof(note));
	snprintf(key, sizeof(key), "NIC errors rose: mlx5_0 port 1 symbol_error +4 (%s)", b->hosts[0]);
	ck_assert_str_eq(note, key);

	put(PORT "counters/port_rcv_errors", "3\n");            /* went back: a reset */
	put(PORT "counters/port_xmit_data", "6\n");             /* a 32-bit wrap */
	drop(PORT "hw_counters/out_of_sequence");
	put(PORT "hw_counters/out_of_sequence", NULL);          /* a directory: unreadable from now on */
	drop(PORT "counters/link_downed");
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.errors[0], 0);                   /* neither a reset nor a wrap rose */
	gdrb_counters_note(&rise, sizeof(rise), b, note, sizeof(note));
	ck_assert_str_eq(note, "");
	put(PORT "counters/port_rcv_errors", "5\n");            /* rises after its reset: said per size */
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.errors[0], 1);
	ck_assert_str_eq(rise.item[0].counter, "port_rcv_errors");

	snprintf(csv, sizeof(csv), "%s/results.csv", tmp);
	ck_assert_int_eq(gdrb_counters_file_open(csv, &file), 0);
	capture_open(&out);
	ck_assert_int_eq(gdrb_counters_finish(cs, b, "write_bw", 4096, file, out.f), 0);
	text = capture_close(&out);
	ck_assert_int_eq(gdrb_counters_file_close(file), 0);
	gdrb_counters_close(cs);

	/* After the table: what rose (the reset's later rise not counted), what went back, what could not be read. */
	snprintf(key, sizeof(key), "# NIC errors during the run: mlx5_0 port 1 symbol_error +4 on %s\n", b->hosts[0]);
	ck_assert_msg(strstr(text, key), "%s", text);
	snprintf(key, sizeof(key), "# NIC congestion during the run (reported, not errors): mlx5_0 port 1 np_cnp_sent +12 on %s\n",
		 b->hosts[0]);
	ck_assert_msg(strstr(text, key), "%s", text);
	ck_assert_msg(strstr(text, "# counters that went back during the run (a wrap or a reset; no rise counted): "
			      "mlx5_0 port 1 port_rcv_errors on "), "%s", text);
	ck_assert_msg(strstr(text, "mlx5_0 port 1 port_xmit_data on "), "%s", text);
	ck_assert_msg(strstr(text, "# counters unreadable or gone during the run (no value written for them): "), "%s", text);
	ck_assert_msg(strstr(text, "mlx5_0 port 1 link_downed (vanished)"), "%s", text);
	ck_assert_msg(strstr(text, "mlx5_0 port 1 out_of_sequence (unreadable)"), "%s", text);
	ck_assert_msg(strstr(text, "# counters: a reading of 6 took "), "%s", text);
	free(text);

	/* The file: its header, one row per counter; no value is ever written as 0 for want of one. */
	snprintf(path, sizeof(path), "%s/results.counters.csv", tmp);
	text = slurp(path);
	snprintf(key, sizeof(key), "%s\n", gdrb_counters_header());
	ck_assert_msg(!strncmp(text, key, strlen(key)), "%s", text);
	ck_assert_str_eq(gdrb_counters_header(),
			 "run_start,run_end,benchmark,node,rank,device,port,source,counter,class,before,after,delta,state,"
			 "run_id");
	/* Every row ends in the run's id: rank 0's host, its pid, the first reading's time in ns. */
	snprintf(key, sizeof(key), ",%s:%ld:", b->hosts[0], (long)getpid());
	row_is(text, b->hosts[0], "counters,symbol_error", "error,5,9,4,ok");
	row_is(text, b->hosts[0], "counters,port_rcv_errors", "error,100,5,,reset");
	row_is(text, b->hosts[0], "counters,port_xmit_data", "traffic,4294967290,6,,reset");
	row_is(text, b->hosts[0], "counters,link_downed", "error,0,,,vanished");
	row_is(text, b->hosts[0], "hw_counters,out_of_sequence", "error,2,,,unreadable");
	row_is(text, b->hosts[0], "hw_counters,np_cnp_sent", "congestion,0,12,12,ok");
	run_id_is(text, key);
}
END_TEST

/* The hook's rise lands in the reading it names, on every counter of that name. */
START_TEST(test_inject)
{
	const struct gdrb_counters_want w = { .nic_dev = "mlx5_0", .nic_port = 1 };
	struct gdrb_counters *cs;
	struct gdrb_cnt_rise rise;

	put(PORT "counters/symbol_error", "5\n");
	put(PORT "hw_counters/out_of_sequence", "2\n");
	hooks("symbol_error+1532@2");
	ck_assert_int_eq(gdrb_counters_open(self(), &w, &cs), 0);
	gdrb_counters_read(cs, NULL);
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.errors[0], 0);
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.errors[0], 1);
	ck_assert_uint_eq(rise.item[0].delta, 1532);
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.errors[0], 0);
	gdrb_counters_close(cs);
}
END_TEST

/*
 * What a reading sums for the all-pairs latency phases: the port's error rises and the
 * packets it moved (traffic counters named *packets or *pkts; not its data words), the
 * counters it could not read; the hook's steady rise (NAME+N@K+) at every reading from K;
 * and a fresh reading waits out the kernel's lifespan since the one before.
 */
START_TEST(test_rise_sums)
{
	const struct gdrb_counters_want w = { .nic_dev = "mlx5_0", .nic_port = 1 };
	struct gdrb_counters *cs;
	struct gdrb_cnt_rise rise;
	uint64_t t0;

	put_port("counters/symbol_error=5 counters/port_xmit_packets=100 counters/port_xmit_data=1000 "
		 "hw_counters/rx_pkts=7 hw_counters/out_of_sequence=2 hw_counters/lifespan=30");
	hooks("symbol_error+3@2+");
	ck_assert_int_eq(gdrb_counters_open(self(), &w, &cs), 0);
	gdrb_counters_read(cs, NULL);
	/* The wait counts from the last reading, which began after t0: on a loaded machine the
	 * lines between may take the lifespan themselves, and then there is rightly nothing to wait. */
	t0 = gdrb_mono_ns();
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.ports, 1);
	ck_assert_uint_eq(rise.error_sum, 0);
	put_port("counters/port_xmit_packets=150 counters/port_xmit_data=9000 hw_counters/rx_pkts=17 "
		 "hw_counters/out_of_sequence=6");
	gdrb_counters_read_fresh(cs, &rise);
	ck_assert_msg(gdrb_mono_ns() - t0 >= 30000000u,
		      "a fresh reading came sooner than the 30 ms lifespan after the last");
	ck_assert_uint_eq(rise.error_sum, 3 + 4);
	ck_assert_uint_eq(rise.packets, 50 + 10);
	ck_assert_uint_eq(rise.unreadable, 0);
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.error_sum, 3);
	ck_assert_uint_eq(rise.item[0].delta, 3);
	put(PORT "hw_counters/out_of_sequence", "x\n");
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.unreadable, 1);
	gdrb_counters_close(cs);
	gdrb_counters_read(NULL, &rise);
	ck_assert_uint_eq(rise.ports, 0);
}
END_TEST

/* A node without class/infiniband: one line in the header, nothing read, the run goes on. */
START_TEST(test_no_infiniband)
{
	const struct gdrb_counters_want w = { .library = "mpi" };
	struct gdrb_counters *cs;
	struct gdrb_cnt_rise rise;
	struct capture out;
	char line[1024], *text;

	put("bus/pci/devices", NULL);
	hooks(NULL);
	ck_assert_int_eq(gdrb_counters_open(self(), &w, &cs), 0);
	gdrb_counters_describe(cs, line, sizeof(line));
	ck_assert_msg(strstr(line, "counters: no RDMA device on rank 0's node (") &&
		      strstr(line, "/class/infiniband does not exist): no NIC counter is read"), "%s", line);
	ck_assert_ptr_null(strchr(line, '\n'));
	gdrb_counters_read(cs, NULL);
	gdrb_counters_read(cs, &rise);
	ck_assert_uint_eq(rise.n, 0);
	capture_open(&out);
	ck_assert_int_eq(gdrb_counters_finish(cs, self(), "mpi_latency", 8, NULL, out.f), 0);
	text = capture_close(&out);
	ck_assert_str_eq(text, "");
	free(text);
	gdrb_counters_close(cs);
}
END_TEST

/*
 * A GPU whose PCI function has its link files and no AER ones (the H200 of a virtual machine,
 * results/gpu-h200): the header promises its link only.
 */
START_TEST(test_gpu_without_aer)
{
	const struct gdrb_counters_want w = { .library = "nccl", .gpu_bus_id = "00000000:00:06.0" };
	struct gdrb_counters *cs;
	char line[1024];

	put("bus/pci/devices/0000:00:06.0/current_link_speed", "32.0 GT/s PCIe\n");
	put("bus/pci/devices/0000:00:06.0/max_link_speed", "32.0 GT/s PCIe\n");
	put("bus/pci/devices/0000:00:06.0/current_link_width", "16\n");
	put("bus/pci/devices/0000:00:06.0/max_link_width", "16\n");
	hooks(NULL);
	ck_assert_int_eq(gdrb_counters_open(self(), &w, &cs), 0);
	gdrb_counters_describe(cs, line, sizeof(line));
	ck_assert_msg(strstr(line, "; the PCIe link (sysfs has no AER counts for it) of GPU 0000:00:06.0; rank 0 reads 4 counters"),
		      "%s", line);
	gdrb_counters_close(cs);
}
END_TEST

/* A library's run reads every active port of the node; a down one is left out. */
START_TEST(test_node_ports)
{
	const struct gdrb_counters_want w = { .library = "nccl", .gpu_bus_id = "00000000:3B:00.0" };
	struct gdrb_counters *cs;
	struct capture out;
	char line[1024], *text;

	setenv("GDRB_TEST_HOOKS", "1", 1);
	setenv("GDRB_INJECT_SYSFS_ROOT", fixture("mlx5-counters"), 1);
	ck_assert_int_eq(gdrb_inject_load(), 0);
	ck_assert_int_eq(gdrb_counters_open(self(), &w, &cs), 0);
	gdrb_counters_describe(cs, line, sizeof(line));
	ck_assert_msg(strstr(line, "counters: every active RDMA port of each node, read by the node's first rank (NCCL does not say which NIC it uses): "
			      "on rank 0's node mlx5_0 port 1, mlx5_1 port 1, and their PCIe links; "
			      "the PCIe link and AER counts of GPU 0000:3b:00.0"), "%s", line);
	gdrb_counters_read(cs, NULL);
	gdrb_counters_read(cs, NULL);
	capture_open(&out);
	ck_assert_int_eq(gdrb_counters_finish(cs, self(), "nccl_allreduce", 8, NULL, out.f), 0);
	text = capture_close(&out);
	ck_assert_msg(strstr(text, "# NIC error counters: none rose (mlx5_0 port 1, mlx5_1 port 1 on 1 node, 68 error counters)\n"),
		      "%s", text);
	ck_assert_msg(strstr(text, "# PCIe: GPU 0000:3b:00.0 x8 of x16 (down-trained) on "), "%s", text);
	ck_assert_msg(!strstr(text, "# PCIe: mlx5_"), "%s", text);
	ck_assert_msg(!strstr(text, "AER"), "%s", text);
	free(text);
	gdrb_counters_close(cs);

	/* mlx5_1's only port down: it is not read. */
	setenv("GDRB_INJECT_SYSFS_ROOT", fixture("portdown"), 1);
	ck_assert_int_eq(gdrb_inject_load(), 0);
	ck_assert_int_eq(gdrb_counters_open(self(), &w, &cs), 0);
	gdrb_counters_describe(cs, line, sizeof(line));
	ck_assert_msg(strstr(line, "on rank 0's node mlx5_0 port 1, and their PCIe links") && !strstr(line, "mlx5_1"),
		      "%s", line);
	gdrb_counters_close(cs);

	/* RDMA devices, none with an active port. */
	put("class/infiniband", NULL);
	put("bus/pci/devices", NULL);
	hooks(NULL);
	ck_assert_int_eq(gdrb_counters_open(self(), &w, &cs), 0);
	gdrb_counters_describe(cs, line, sizeof(line));
	ck_assert_msg(strstr(line, "no active RDMA port on rank 0's node"), "%s", line);
	gdrb_counters_close(cs);
}
END_TEST

/* Two ranks of one host that read one port saw one rise: the note names it once, the larger. */
START_TEST(test_note_merge)
{
	char hosts[3][GDRB_HOST_MAX] = { "n01", "n01", "n02" };
	struct gdrb_boot b = { .size = 3, .hosts = hosts };
	struct gdrb_cnt_rise rise[3];
	char note[512];

	memset(rise, 0, sizeof(rise));
	rise[0].errors[0] = rise[0].n = 1;
	snprintf(rise[0].item[0].where, sizeof(rise[0].item[0].where), "rxe0 port 1");
	snprintf(rise[0].item[0].counter, sizeof(rise[0].item[0].counter), "completer_retry_err");
	rise[0].item[0].delta = 12;
	rise[1] = rise[0];
	rise[1].item[0].delta = 13;
	gdrb_counters_note(rise, sizeof(rise[0]), &b, note, sizeof(note));
	ck_assert_str_eq(note, "NIC errors rose: rxe0 port 1 completer_retry_err +13 (n01)");
	/* Another host, and an AER line; more errors than itemised. */
	rise[2] = rise[0];
	rise[2].errors[0] = 5;
	rise[2].errors[1] = 1;
	rise[2].n = 2;
	snprintf(rise[2].item[1].where, sizeof(rise[2].item[1].where), "GPU 0000:3b:00.0");
	snprintf(rise[2].item[1].counter, sizeof(rise[2].item[1].counter), "BadTLP");
	rise[2].item[1].delta = 3;
	rise[2].item[1].pcie = 1;
	gdrb_counters_note(rise, sizeof(rise[0]), &b, note, sizeof(note));
	ck_assert_str_eq(note, "NIC errors rose: rxe0 port 1 completer_retry_err +13 (n01), "
			 "rxe0 port 1 completer_retry_err +12 (n02) and more; "
			 "PCIe errors rose: GPU 0000:3b:00.0 BadTLP +3 (n02)");
}
END_TEST

START_TEST(test_path)
{
	static const char *const cases[][2] = {
		{ "results.csv", "results.counters.csv" },
		{ "out/run1.csv", "out/run1.counters.csv" },
		{ "/r/x", "/r/x.counters.csv" },
		{ "a.csv/b", "a.csv/b.counters.csv" },
		{ "dir/.csv", "dir/.csv.counters.csv" },
		{ "r.CSV", "r.CSV.counters.csv" },
	};
	char buf[64], tiny[8];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(gdrb_counters_path(cases[i][0], buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, cases[i][1]);
	}
	ck_assert_int_eq(gdrb_counters_path("results.csv", tiny, sizeof(tiny)), -ENAMETOOLONG);
}
END_TEST

static Suite *counters_suite(void)
{
	Suite *s = suite_create("counters");
	TCase *tc = tcase_create("sysfs");
	TCase *run = tcase_create("readings");

	gdrb_log_init("test_counters");
	tcase_add_test(tc, test_classify);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_mlx5_fixture);
	tcase_add_test(tc, test_rxe_fixture);
	tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
	tcase_add_test(tc, test_faults);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(run, setup_tmp, teardown_tmp);
	tcase_add_test(run, test_readings);
	tcase_add_test(run, test_inject);
	tcase_add_test(run, test_rise_sums);
	tcase_add_test(run, test_no_infiniband);
	tcase_add_test(run, test_node_ports);
	tcase_add_test(run, test_gpu_without_aer);
	tcase_add_test(run, test_note_merge);
	tcase_add_test(run, test_path);
	suite_add_tcase(s, run);
	return s;
}

const struct unit_test unit_test = { counters_suite, false };
