/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/nccl/nccl_log*.c and nccl_links.c: the counts of every fixture log of
 * tests/support/data/nccl-logs (its README lists them), the older forms of each line, the
 * sum over ranks, the transports' text, the wire form, and hostile input.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrb_nccl_log.h"
#include "nccl_env.h"
#include "unit_main.h"

#define PREFIX "node-a:41207:41207 [0] NCCL INFO "

struct fixture {
	const char *file;
	uint32_t net, gdr, pxn, p2p, shm, other, unparsed, lines, skipped;
	int32_t ring_gdr, ring_pxn;
	const char *nets, *others, *version, *transports;
};

static const struct fixture fixtures[] = {
	{ "nccl-2.18.3-ib-gdr.log", 4, 4, 0, 0, 0, 0, 0, 18, 0, -1, -1, "IB", "",
	  "2.18.3+cuda12.2", "NET/IB" },
	{ "nccl-2.21.5-ib-nogdr.log", 6, 0, 0, 0, 0, 0, 0, 16, 0, -1, -1, "IB", "",
	  "2.21.5+cuda12.4", "NET/IB" },
	{ "nccl-2.23.4-ib-mixed.log", 4, 2, 0, 0, 0, 0, 0, 13, 0, -1, -1, "IB", "",
	  "2.23.4+cuda12.6", "NET/IB" },
	{ "nccl-2.27.7-ib-pxn.log", 4, 4, 2, 1, 0, 0, 0, 12, 0, 1, 1, "IB", "",
	  "2.27.7+cuda12.9", "NET/IB+P2P" },
	{ "nccl-2.27.7-socket.log", 4, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, "Socket", "",
	  "2.27.7+cuda12.9", "NET/Socket" },
	{ "nccl-2.28.9-p2p-shm.log", 0, 0, 0, 4, 2, 0, 0, 13, 0, 1, 0, "", "",
	  "2.28.9+cuda13.0", "P2P+SHM" },
	{ "nccl-2.28.9-noise.log", 3, 3, 0, 0, 0, 1, 2, 20, 2, 1, 0, "IB", "UCCL",
	  "2.28.9+cuda13.0", "NET/IB+UCCL" },
	{ "nccl-2.30.7-ib-p2p-shm.log", 4, 4, 0, 2, 1, 0, 0, 13, 0, 1, 0, "IB", "",
	  "2.30.7+cuda13.0", "NET/IB+P2P+SHM" },
};
#define N_FIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

static void fixture_path(char *path, size_t len, const char *file)
{
	const char *src = getenv("top_srcdir");

	snprintf(path, len, "%s/tests/support/data/nccl-logs/%s", src ? src : ".", file);
}

static void read_fixture(const char *file, struct gdrb_nccl_links *l)
{
	char path[4096], why[512] = "";

	fixture_path(path, sizeof(path), file);
	ck_assert_msg(gdrb_nccl_log_read(path, NULL, l, why, sizeof(why)) == 0, "%s", why);
}

/* A log given as text, parsed from memory. */
static struct gdrb_nccl_links parse_text(const char *text, size_t len)
{
	struct gdrb_nccl_links l;

	gdrb_nccl_links_init(&l);
	gdrb_nccl_log_parse_mem(text, len, NULL, &l);
	return l;
}

#define PARSE(text) parse_text(text, sizeof(text) - 1)

START_TEST(test_fixtures)
{
	const struct fixture *f = &fixtures[_i];
	struct gdrb_nccl_links l;
	char text[128];

	read_fixture(f->file, &l);
#define EQ(field, want) \
	ck_assert_msg(l.field == (want), "%s: " #field " %lld, want %lld", f->file, \
		      (long long)l.field, (long long)(want))
	EQ(net, f->net);
	EQ(net_gdr, f->gdr);
	EQ(net_pxn, f->pxn);
	EQ(p2p, f->p2p);
	EQ(shm, f->shm);
	EQ(other, f->other);
	EQ(unparsed, f->unparsed);
	EQ(lines, f->lines);
	EQ(skipped, f->skipped);
	EQ(ring_gdr, f->ring_gdr);
	EQ(ring_pxn, f->ring_pxn);
	EQ(rings, 1u);
	EQ(collnet, 0u);
#undef EQ
	ck_assert_msg(!strcmp(l.nets, f->nets), "%s: nets '%s'", f->file, l.nets);
	ck_assert_msg(!strcmp(l.others, f->others), "%s: others '%s'", f->file, l.others);
	ck_assert_msg(!strcmp(l.version, f->version), "%s: version '%s'", f->file, l.version);
	gdrb_nccl_transports(&l, text, sizeof(text));
	ck_assert_msg(!strcmp(text, f->transports), "%s: transports '%s', want '%s'", f->file,
		      text, f->transports);
}
END_TEST

/* The fixtures of older NCCLs' SHM and CollNet forms, and of NVLS (README): the counts they
 * hold, nothing unknown, and the transports' text where it says something of its own. */
static const struct old_fixture {
	const char *file;
	uint32_t shm, p2p, net, collnet, collnet_gdr, nvls;
	const char *transports;
} old_fixtures[] = {
	{ "nccl-2.4.8-shm.log", .shm = 2 },
	{ "nccl-2.12.12-shm.log", .shm = 2, .p2p = 1, .transports = "P2P+SHM" },
	{ "nccl-2.8.4-collnet.log", .collnet = 4, .collnet_gdr = 2, .net = 2,
	  .transports = "NET/IB+COLLNET/SHARP" },
	{ "nccl-2.12.12-collnet.log", .collnet = 4, .collnet_gdr = 4 },
	{ "nccl-2.28.9-tuning-nvls.log", .nvls = 1, .transports = "NVLS" },
};
#define N_OLD_FIXTURES (sizeof(old_fixtures) / sizeof(old_fixtures[0]))

START_TEST(test_old_fixtures)
{
	const struct old_fixture *f = &old_fixtures[_i];
	struct gdrb_nccl_links l;
	char text[128];

	read_fixture(f->file, &l);
#define EQ(field) \
	ck_assert_msg(l.field == f->field, "%s: " #field " %lld, want %lld", f->file, \
		      (long long)l.field, (long long)f->field)
	EQ(shm);
	EQ(p2p);
	EQ(net);
	EQ(collnet);
	EQ(collnet_gdr);
	EQ(nvls);
#undef EQ
	ck_assert_msg(l.other + l.unparsed == 0, "%s: %u other, %u unparsed", f->file, l.other, l.unparsed);
	if (f->transports) {
		gdrb_nccl_transports(&l, text, sizeof(text));
		ck_assert_str_eq(text, f->transports);
	}
}
END_TEST

static struct gdrb_nccl_tuning tuning_fixture(const char *file, long long *from)
{
	struct gdrb_nccl_tuning t;
	char path[4096], why[512] = "";

	gdrb_nccl_tuning_init(&t);
	fixture_path(path, sizeof(path), file);
	ck_assert_msg(gdrb_nccl_tuning_read(path, NULL, from, &t, why, sizeof(why)) == 0, "%s", why);
	return t;
}

/* The TUNING line of each format: 2.21 (numbers), 2.23 (with the call), 2.28 (names, channels, symmetric). */
START_TEST(test_tuning_fixtures)
{
	struct gdrb_nccl_tuning t;
	long long from = 0;

	t = tuning_fixture("nccl-2.21.5-tuning.log", &from);
	ck_assert_uint_eq(t.calls, 3);
	ck_assert_str_eq(t.algos, "Ring+Tree");
	ck_assert_str_eq(t.protos, "LL+Simple");
	ck_assert_uint_eq(t.channels, 0);
	ck_assert_uint_eq(t.unparsed, 0);
	/* Read to its end: a second read from there finds nothing new. */
	t = tuning_fixture("nccl-2.21.5-tuning.log", &from);
	ck_assert_uint_eq(t.calls, 0);
	ck_assert_str_eq(t.algos, "");
	from = 0;
	t = tuning_fixture("nccl-2.23.4-tuning.log", &from);
	ck_assert_uint_eq(t.calls, 2);
	ck_assert_str_eq(t.algos, "PAT");
	ck_assert_str_eq(t.protos, "LL128");
	from = 0;
	t = tuning_fixture("nccl-2.28.9-tuning-nvls.log", &from);
	ck_assert_uint_eq(t.calls, 3);
	ck_assert_str_eq(t.algos, "NVLSTree+Ring+Symmetric");
	ck_assert_str_eq(t.protos, "Simple");
	ck_assert_uint_eq(t.channels, 32);
	ck_assert_uint_eq(t.unparsed, 1);      /* channel{9..2}: Hi below Lo */
}
END_TEST

/* A line being written when the log is read is read whole the next time, never half. */
START_TEST(test_tuning_partial)
{
	char path[] = "/tmp/gdrb-tuning-XXXXXX";
	static const char one[] = PREFIX "AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n";
	static const char half[] = PREFIX "AllReduce: 8 Bytes -> Algo TR";
	static const char rest[] = "EE proto LL128 channel{Lo..Hi}={0..3}\n";
	struct gdrb_nccl_tuning t;
	char why[256];
	long long from = 0;
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs(one, f);
	fputs(half, f);
	fflush(f);
	gdrb_nccl_tuning_init(&t);
	ck_assert_int_eq(gdrb_nccl_tuning_read(path, NULL, &from, &t, why, sizeof(why)), 0);
	ck_assert_str_eq(t.algos, "Ring");
	ck_assert_int_eq(from, (long long)sizeof(one) - 1);
	fputs(rest, f);
	fclose(f);
	gdrb_nccl_tuning_init(&t);
	ck_assert_int_eq(gdrb_nccl_tuning_read(path, NULL, &from, &t, why, sizeof(why)), 0);
	ck_assert_str_eq(t.algos, "Tree");
	ck_assert_str_eq(t.protos, "LL128");
	ck_assert_uint_eq(t.channels, 4);
	ck_assert_uint_eq(t.unparsed, 0);
	unlink(path);
}
END_TEST

/* NCCL_DEBUG_SUBSYS made to hold INIT and NET (and TUNING): added to a list, taken out of a "^" one. */
static const struct subsys_case {
	const char *value;
	bool tuning;
	const char *out, *changed;      /* changed NULL: not checked */
} subsys_cases[] = {
	{ NULL, false, "INIT,NET", NULL },
	{ "GRAPH,net", true, "GRAPH,net,INIT,TUNING", "INIT,TUNING" },
	{ "^INIT,GRAPH,net", false, "^GRAPH", "INIT,net" },
	{ "^INIT", false, "ALL", NULL },
	{ "ALL", true, "ALL", "" },
	{ "INITIAL", false, "INITIAL,INIT,NET", NULL },
};

START_TEST(test_subsys)
{
	char out[128], changed[64];
	size_t i;

	for (i = 0; i < sizeof(subsys_cases) / sizeof(subsys_cases[0]); i++) {
		const struct subsys_case *c = &subsys_cases[i];

		ck_assert_int_eq(gdrb_nccl_debug_subsys(c->value, c->tuning, out, sizeof(out), changed,
							sizeof(changed)), 0);
		ck_assert_str_eq(out, c->out);
		if (c->changed)
			ck_assert_str_eq(changed, c->changed);
	}
	/* Too small a buffer: refused, not cut. */
	ck_assert_int_eq(gdrb_nccl_debug_subsys("GRAPH", false, out, 8, changed, sizeof(changed)), -1);
}
END_TEST

/* The forms older and rarer NCCLs print, one line each. */
START_TEST(test_forms)
{
	struct gdrb_nccl_links l;

	/* 2.4.8 net.cc:306: "Ring %02d : %d -> %d [send] via NET/%s/%d%s" */
	l = PARSE(PREFIX "Ring 00 : 0 -> 1 [send] via NET/IB/0/GDRDMA\n");
	ck_assert_uint_eq(l.net, 1);
	ck_assert_uint_eq(l.net_gdr, 1);
	/* 2.11.4 net.cc:120: "Channel %02d : %d[%lx] -> %d[%lx] [send]", bus ids in hex */
	l = PARSE(PREFIX "Channel 00 : 0[7000] -> 1[b000] [receive] via NET/IB/1\n");
	ck_assert_uint_eq(l.net, 1);
	ck_assert_uint_eq(l.net_gdr, 0);
	/* 2.17.1 net.cc:187: PXN with bus ids, and /Shared */
	l = PARSE(PREFIX "Channel 03/1 : 0[7000] -> 9[b000] [send] via NET/IB/2(3)/GDRDMA/Shared\n");
	ck_assert_uint_eq(l.net, 1);
	ck_assert_uint_eq(l.net_gdr, 1);
	ck_assert_uint_eq(l.net_pxn, 1);
	/* 2.11.4 p2p.cc:190 and 2.4.8 p2p.cc:479 */
	l = PARSE(PREFIX "Channel 00 : 0[7000] -> 1[b000] via P2P/IPC/read\n" PREFIX
		  "Ring 00 : 0 -> 1 via P2P/common device\n" PREFIX
		  "Channel 00/1 : 0[0] -> 2[2] via P2P/indirect/1[1]/read\n");
	ck_assert_uint_eq(l.p2p, 3);
	/* 2.28.9 coll_net.cc:182 */
	l = PARSE(PREFIX "CollNet 00/0 : 0 [send] via COLLNET/SHARP/0/GDRDMA\n" PREFIX
		  "CollNet 00/1 : 0 [receive] via COLLNET/SHARP/0\n");
	ck_assert_uint_eq(l.collnet, 2);
	ck_assert_uint_eq(l.collnet_gdr, 1);
	ck_assert_uint_eq(l.net, 0);
	ck_assert_str_eq(l.collnets, "SHARP");
	/* A plugin's name with a space (aws-ofi-nccl), cleaned; CRLF line ends. */
	l = PARSE(PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/AWS Libfabric/0/GDRDMA\r\n");
	ck_assert_uint_eq(l.net_gdr, 1);
	ck_assert_str_eq(l.nets, "AWS_Libfabric");
	/* A negative device (no CUDA device) and a timestamp in front (2.26 on). */
	l = PARSE("[2025-01-01 00:00:00] h:1:2 [-1] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] "
		  "via NET/IB/0\n");
	ck_assert_uint_eq(l.net, 1);
	/* Comment lines are not read. */
	l = PARSE("# " PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\n");
	ck_assert_uint_eq(l.net, 0);
	ck_assert_uint_eq(l.lines, 1);
}
END_TEST

START_TEST(test_merge)
{
	struct gdrb_nccl_links sum, one;
	char text[128];
	size_t i;

	gdrb_nccl_links_init(&sum);
	for (i = 0; i < N_FIXTURES; i++) {
		read_fixture(fixtures[i].file, &one);
		gdrb_nccl_links_add(&sum, &one);
	}
	ck_assert_uint_eq(sum.net, 4 + 6 + 4 + 4 + 4 + 0 + 3 + 4);
	ck_assert_uint_eq(sum.net_gdr, 4 + 0 + 2 + 4 + 0 + 0 + 3 + 4);
	ck_assert_uint_eq(sum.net_pxn, 2);
	ck_assert_uint_eq(sum.p2p, 1 + 4 + 2);
	ck_assert_uint_eq(sum.shm, 2 + 1);
	ck_assert_uint_eq(sum.unparsed, 2);
	ck_assert_uint_eq(sum.skipped, 2);
	ck_assert_uint_eq(sum.rings, N_FIXTURES);
	ck_assert_int_eq(sum.ring_gdr, 0);  /* the Socket log's GDR 0 wins */
	ck_assert_int_eq(sum.ring_pxn, 1);  /* the PXN log's */
	ck_assert_str_eq(sum.nets, "IB+Socket");
	ck_assert_str_eq(sum.version, "mixed");
	gdrb_nccl_transports(&sum, text, sizeof(text));
	ck_assert_str_eq(text, "NET/IB+NET/Socket+P2P+SHM+UCCL");

	/* Ranks of one version keep it; a rank without the line does not change it. */
	gdrb_nccl_links_init(&sum);
	read_fixture("nccl-2.27.7-ib-pxn.log", &one);
	gdrb_nccl_links_add(&sum, &one);
	one.version[0] = '\0';
	gdrb_nccl_links_add(&sum, &one);
	read_fixture("nccl-2.27.7-socket.log", &one);
	gdrb_nccl_links_add(&sum, &one);
	ck_assert_str_eq(sum.version, "2.27.7+cuda12.9");
	ck_assert_uint_eq(sum.net, 12);

	/* Counts saturate instead of wrapping. */
	sum.net = UINT32_MAX - 1;
	gdrb_nccl_links_add(&sum, &one);
	ck_assert_uint_eq(sum.net, UINT32_MAX);
}
END_TEST

START_TEST(test_transports)
{
	struct gdrb_nccl_links l;
	char text[16];

	gdrb_nccl_links_init(&l);
	memset(text, 'x', sizeof(text));
	gdrb_nccl_transports(&l, text, sizeof(text));
	ck_assert_str_eq(text, "");
	read_fixture("nccl-2.30.7-ib-p2p-shm.log", &l);
	gdrb_nccl_transports(&l, text, 7);
	ck_assert_str_eq(text, "NET/IB");
	gdrb_nccl_transports(&l, text, 5);
	ck_assert_str_eq(text, "NET/");
	gdrb_nccl_transports(&l, text, 1);
	ck_assert_str_eq(text, "");
	text[0] = 'x';
	gdrb_nccl_transports(&l, text, 0);
	ck_assert_int_eq(text[0], 'x');
}
END_TEST

START_TEST(test_wire)
{
	struct gdrb_nccl_links l, got, bad;
	unsigned char bytes[GDRB_NCCL_LINKS_WIRE];

	read_fixture("nccl-2.28.9-noise.log", &l);
	memcpy(bytes, &l, sizeof(bytes));
	ck_assert_int_eq(gdrb_nccl_links_from_wire(&got, bytes, sizeof(bytes)), 0);
	ck_assert_int_eq(memcmp(&got, &l, sizeof(l)), 0);
	ck_assert_int_eq(gdrb_nccl_links_from_wire(&got, bytes, sizeof(bytes) - 1), -EINVAL);

	/* Each planted fault is refused and leaves the record as it was. */
	for (int fault = 0; fault < 8; fault++) {
		bad = l;
		switch (fault) {
		case 0: memset(bad.nets, 'A', sizeof(bad.nets)); break;    /* no terminator */
		case 1: bad.net_gdr = bad.net + 1; break;
		case 2: bad.ring_gdr = 7; break;
		case 3: strcpy(bad.others, "a,b"); break;                  /* a CSV comma */
		case 4: strcpy(bad.nets, "IB++x"); break;                   /* an empty name */
		case 5: strcpy(bad.version, "2.28\n"); break;
		case 6: bad.skipped = bad.lines + 1; break;
		case 7: bad.foreign = bad.lines + 1; break;
		}
		memcpy(bytes, &bad, sizeof(bytes));
		memset(&got, 0x5a, sizeof(got));
		ck_assert_msg(gdrb_nccl_links_from_wire(&got, bytes, sizeof(bytes)) == -EINVAL,
			      "planted fault %d accepted", fault);
		ck_assert_msg(((unsigned char *)&got)[0] == 0x5a, "fault %d: record changed", fault);
	}
}
END_TEST

/* The NET/IB devices the connections used: named by the "Using" line, their speed from the device lines. */
START_TEST(test_nics)
{
	static const char log[] =
		PREFIX "NET/IB: [0] mlx5_0:uverbs0:1/IB provider=Mlx5 speed=400000 context=0x55 pciPath=/sys/x ar=1 oooRqSize=0\n"
		PREFIX "NET/IB: [3] mlx5_3:uverbs3:1/RoCE provider=Mlx5 speed=200000 context=0x56 pciPath=/sys/y ar=0 oooRqSize=0\n"
		PREFIX "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/RoCE [2]mlx5_9:1/IB [RO]; OOB ib0:10.0.0.1<0>\n"
		PREFIX "NET/IB : Made virtual device [4] name=mlx5_0+mlx5_3 speed=600000 ndevs=2\n"
		PREFIX "Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/1/GDRDMA\n"
		PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/1/GDRDMA\n"
		PREFIX "Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/2/GDRDMA\n"
		PREFIX "Channel 02/0 : 0[0] -> 1[0] [send] via NET/IB/4(1)/GDRDMA\n"
		PREFIX "Channel 03/0 : 0[0] -> 1[0] [send] via NET/IB/7/GDRDMA\n"
		PREFIX "Channel 04/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n";
	struct gdrb_nccl_links l, got;
	unsigned char bytes[GDRB_NCCL_LINKS_WIRE];

	gdrb_nccl_links_init(&l);
	gdrb_nccl_log_parse_mem(log, sizeof(log) - 1, NULL, &l);
	ck_assert_uint_eq(l.ib_used, (1u << 1) | (1u << 2) | (1u << 4) | (1u << 7));
	/* Device order: 1 (mlx5_3 port 1, its speed by name and port, not by the device line's own number), 2 (named,
	 * no speed line), 4 (merged), then 7 (not named: "?"); the unused mlx5_0 is not listed. */
	ck_assert_str_eq(l.nics[0].name, "mlx5_3:1");
	ck_assert_uint_eq(l.nics[0].mbps, 200000);
	ck_assert_str_eq(l.nics[1].name, "mlx5_9:1");
	ck_assert_uint_eq(l.nics[1].mbps, 0);
	ck_assert_str_eq(l.nics[2].name, "mlx5_0+mlx5_3");
	ck_assert_uint_eq(l.nics[2].mbps, 600000);
	ck_assert_str_eq(l.nics[3].name, "?");
	/* The wire form carries them; a name with a character no device has is refused. */
	memcpy(bytes, &l, sizeof(bytes));
	ck_assert_int_eq(gdrb_nccl_links_from_wire(&got, bytes, sizeof(bytes)), 0);
	ck_assert_str_eq(got.nics[0].name, "mlx5_3:1");
	strcpy(l.nics[1].name, "mlx5,0");
	memcpy(bytes, &l, sizeof(bytes));
	ck_assert_int_eq(gdrb_nccl_links_from_wire(&got, bytes, sizeof(bytes)), -EINVAL);

	/* A log of an NCCL before 2.27 (no device line): named, no speed. */
	read_fixture("nccl-2.18.3-ib-gdr.log", &l);
	ck_assert_str_eq(l.nics[0].name, "mlx5_0:1");
	ck_assert_uint_eq(l.nics[0].mbps, 0);
	ck_assert_str_eq(l.nics[1].name, "");
}
END_TEST

/* NCCL's configuration files, line by line as setEnvFile takes them (src/misc/param.cc). */
START_TEST(test_conf_lines)
{
	static const char text[] =
		"# NCCL_ALGO=Tree\n"            /* a comment */
		"NCCL_PROTO=LL128\r\n"          /* the '\r' dropped */
		"no equals sign\n"
		"=empty name\n"
		"NCCL_IB_HCA = mlx5_0\n"        /* a name with a blank: set, never read */
		"NCCL_PROTO=Simple\n"           /* set before: the first stays */
		"NCCL_SOCKET_IFNAME==eth0\n"    /* the value is all after the first '=' */
		"OMP_NUM_THREADS=4\n"
		"\n"
		"NCCL_ALGO=Ring";                /* no newline at the end */
	struct gdrb_nccl_conf conf;
	const char *from = NULL;

	memset(&conf, 0, sizeof(conf));
	conf.nfiles = 2;
	strcpy(conf.files[0].path, "/home/u/.nccl.conf");
	strcpy(conf.files[1].path, "/etc/nccl.conf");
	gdrb_nccl_conf_parse(&conf, 0, text, sizeof(text) - 1);
	gdrb_nccl_conf_parse(&conf, 1, "NCCL_ALGO=Tree\nNCCL_NET_GDR_LEVEL=PHB\n", 38);
	ck_assert_str_eq(gdrb_nccl_conf_value(&conf, "NCCL_PROTO", &from), "LL128");
	ck_assert_str_eq(from, "/home/u/.nccl.conf");
	ck_assert_str_eq(gdrb_nccl_conf_value(&conf, "NCCL_SOCKET_IFNAME", NULL), "=eth0");
	ck_assert_str_eq(gdrb_nccl_conf_value(&conf, "NCCL_ALGO", &from), "Ring");
	ck_assert_str_eq(from, "/home/u/.nccl.conf");
	ck_assert_str_eq(gdrb_nccl_conf_value(&conf, "NCCL_NET_GDR_LEVEL", &from), "PHB");
	ck_assert_str_eq(from, "/etc/nccl.conf");
	ck_assert_ptr_null(gdrb_nccl_conf_value(&conf, "NCCL_IB_HCA", NULL));
	ck_assert_uint_eq(conf.files[0].settings, 6);
	ck_assert_uint_eq(conf.files[0].others, 1);
	ck_assert_uint_eq(conf.files[0].ignored, 3);
	ck_assert_uint_eq(conf.files[0].blank_names, 1);
	/* The note lists what is in force only: not the second NCCL_PROTO, not /etc's NCCL_ALGO. */
	{
		char note[512];

		unsetenv("NCCL_PROTO");
		unsetenv("NCCL_ALGO");
		unsetenv("NCCL_SOCKET_IFNAME");
		unsetenv("NCCL_NET_GDR_LEVEL");
		gdrb_nccl_conf_note(&conf, note, sizeof(note));
		ck_assert_str_eq(note, "from /home/u/.nccl.conf: NCCL_PROTO=LL128 NCCL_SOCKET_IFNAME==eth0 NCCL_ALGO=Ring; "
				       "from /etc/nccl.conf: NCCL_NET_GDR_LEVEL=PHB");
		/* A variable in the environment wins: its file's value leaves the note. */
		setenv("NCCL_NET_GDR_LEVEL", "SYS", 1);
		gdrb_nccl_conf_note(&conf, note, sizeof(note));
		ck_assert_str_eq(note, "from /home/u/.nccl.conf: NCCL_PROTO=LL128 NCCL_SOCKET_IFNAME==eth0 NCCL_ALGO=Ring");
		unsetenv("NCCL_NET_GDR_LEVEL");
	}
}
END_TEST

/* The files themselves: which are read, in which order; a link, a FIFO, a larger file never read. */
START_TEST(test_conf_files)
{
	char dir[] = "/tmp/gdrb-conf.XXXXXX", path[256], target[256], etc[256];
	struct gdrb_nccl_conf conf;
	FILE *f;
	char *big;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/.nccl.conf", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("NCCL_ALGO=Tree\n", f);
	fclose(f);
	snprintf(etc, sizeof(etc), "%s/etc.conf", dir);
	/* No NCCL_CONF_FILE: ~/.nccl.conf, then the (absent) /etc one. */
	gdrb_nccl_conf_read(&conf, 22809, NULL, dir, etc);
	ck_assert_int_eq(conf.nfiles, 2);
	ck_assert(conf.files[0].read);
	ck_assert_str_eq(gdrb_nccl_conf_value(&conf, "NCCL_ALGO", NULL), "Tree");
	ck_assert(!conf.files[1].read);
	ck_assert_str_eq(conf.files[1].state, "not there");
	/* NCCL_CONF_FILE, a link to that file: not followed, and ~/.nccl.conf not read in its place. */
	snprintf(target, sizeof(target), "%s/link.conf", dir);
	ck_assert_int_eq(symlink(path, target), 0);
	gdrb_nccl_conf_read(&conf, 22809, target, dir, etc);
	ck_assert_str_eq(conf.files[0].via, "NCCL_CONF_FILE");
	ck_assert(!conf.files[0].read);
	ck_assert_ptr_nonnull(strstr(conf.files[0].state, "a symbolic link: not followed"));
	ck_assert_ptr_null(gdrb_nccl_conf_value(&conf, "NCCL_ALGO", NULL));
	/* Before 2.23, NCCL_CONF_FILE is not read: ~/.nccl.conf is, and that is said. */
	gdrb_nccl_conf_read(&conf, 22204, target, dir, etc);
	ck_assert_str_eq(conf.files[0].via, "~/.nccl.conf");
	ck_assert_str_eq(gdrb_nccl_conf_value(&conf, "NCCL_ALGO", NULL), "Tree");
	ck_assert_ptr_nonnull(strstr(conf.conf_file_note, "2.23"));
	/* A FIFO: never opened (the test would hang). */
	snprintf(target, sizeof(target), "%s/fifo.conf", dir);
	ck_assert_int_eq(mkfifo(target, 0600), 0);
	gdrb_nccl_conf_read(&conf, 0, target, NULL, etc);
	ck_assert_ptr_nonnull(strstr(conf.files[0].state, "a FIFO"));
	/* Over 64 KiB: not read. */
	f = fopen(etc, "w");
	ck_assert_ptr_nonnull(f);
	big = calloc(1, GDRB_NCCL_CONF_MAX + 2);
	ck_assert_ptr_nonnull(big);
	memset(big, '#', GDRB_NCCL_CONF_MAX + 1);
	fputs(big, f);
	fclose(f);
	free(big);
	gdrb_nccl_conf_read(&conf, 0, NULL, NULL, etc);
	ck_assert_int_eq(conf.nfiles, 1);
	ck_assert_str_eq(conf.files[0].state, "larger than 64 KiB: not read");
	unlink(etc);
	unlink(target);
	snprintf(target, sizeof(target), "%s/link.conf", dir);
	unlink(target);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_hostile)
{
	static const char conn[] = PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n";
	size_t big = (size_t)1 << 20, i;
	char *text = malloc(big + 2 * sizeof(conn));
	struct gdrb_nccl_links l;

	ck_assert_ptr_nonnull(text);
	/* A 1 MiB line (holding a connection line's text) skipped, the next line read. */
	memset(text, 'x', big);
	memcpy(text + 100, conn, sizeof(conn) - 2);
	text[big] = '\n';
	memcpy(text + big + 1, conn, sizeof(conn) - 1);
	l = parse_text(text, big + sizeof(conn));
	ck_assert_uint_eq(l.lines, 2);
	ck_assert_uint_eq(l.skipped, 1);
	ck_assert_uint_eq(l.net, 1);
	/* The same with no newline at all: one line, cut off, skipped. */
	l = parse_text(text, big);
	ck_assert_uint_eq(l.lines, 1);
	ck_assert_uint_eq(l.skipped, 1);
	ck_assert_uint_eq(l.net, 0);
	free(text);

	/* A NUL inside a connection line: the line is skipped, not half-read. */
	l = parse_text(PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\0/GDRDMA\n",
		       sizeof(PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\0/GDRDMA\n") - 1);
	ck_assert_uint_eq(l.skipped, 1);
	ck_assert_uint_eq(l.net, 0);
	/* Non-UTF-8 bytes in a name are cleaned; in a look-alike prefix the line is not NCCL's. */
	l = PARSE(PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/I\xff\xfe/0\n"
		  "\xc3\x28:1:2 [0] NCCL INFO NCCL version 9.9\xff\n");
	ck_assert_str_eq(l.nets, "I__");
	ck_assert_str_eq(l.version, "9.9_");
	/* Only the prefix; prefixes missing a part. */
	l = PARSE(PREFIX "\n" "node-a:41207:41207 [0] NCCL INFO\n" ":1:2 [0] NCCL INFO NCCL version 1\n"
		  "h:1: [0] NCCL INFO NCCL version 1\n" "h::2 [0] NCCL INFO NCCL version 1\n"
		  "h:1:2 [] NCCL INFO NCCL version 1\n" "h:1:2[0] NCCL INFO NCCL version 1\n"
		  "] NCCL INFO NCCL version 1\n");
	ck_assert_uint_eq(l.lines, 8);
	ck_assert_str_eq(l.version, "");
	ck_assert_uint_eq(l.net + l.p2p + l.shm + l.other + l.unparsed + l.rings, 0);
	/* Numbers out of range, or malformed: counted as unparsed, never as a connection. */
	l = PARSE(PREFIX "Channel 4294967296/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"
		  PREFIX "Channel 00/0 : 9999999999[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"
		  PREFIX "Channel 00/0 : 0[0] -> 1[12345678901234567] [send] via NET/IB/0\n"
		  PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/99999999999\n"
		  PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0(-1)/GDRDMA\n"
		  PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET//0\n"
		  PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDR\n"
		  PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via \n"
		  PREFIX "CollNet 00/0 : 0 [send] via COLLNET/SHARP/x\n"
		  PREFIX "Connected all rings, use ring PXN 2 GDR 5\n"
		  PREFIX "Connected all rings, use ring PXN 0 GDR -1\n");
	ck_assert_uint_eq(l.unparsed, 11);
	ck_assert_uint_eq(l.net + l.collnet + l.other, 0);
	ck_assert_int_eq(l.ring_gdr, -1);
	ck_assert_uint_eq(l.rings, 2);
	/* Many and long names: the sets stay bounded, end in "...", hold no empty name. */
	gdrb_nccl_links_init(&l);
	for (i = 0; i < 40; i++) {
		char line[256];
		int n = snprintf(line, sizeof(line), PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via "
				 "NET/net%zu-with-a-name-longer-than-kept/0\n" PREFIX
				 "Channel 00/0 : 0[0] -> 1[0] via X%zu/y\n", i, i);

		gdrb_nccl_log_parse_mem(line, (size_t)n, NULL, &l);
	}
	ck_assert_uint_eq(l.net, 40);
	ck_assert_uint_eq(l.other, 40);
	ck_assert_uint_le(strlen(l.nets), sizeof(l.nets) - 1);
	ck_assert_str_eq(l.nets, "net0-with-a-name-longer+...");
	ck_assert_str_eq(l.others + strlen(l.others) - 4, "+...");
	ck_assert_ptr_null(strstr(l.others, "++"));
}
END_TEST

/* A log's own lines against another process's and imitations: only the owner's prefix counts. */
START_TEST(test_owner)
{
	static const struct gdrb_nccl_owner me = { "node-a", 41207 }, other = { "node-a", 41208 };
	static const char mixed[] =
		"node-a:41207:41210 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"
		"node-a:41208:41211 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [send] via NET/IB/0\n"
		"node-a:41207:41210 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
		"node-a:41208:41211 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [receive] via NET/IB/0\n";
	static const char *const imitations[] = {
		"node-b:41207:1 [0] NCCL INFO ",                /* another host */
		"Node-a:41207:1 [0] NCCL INFO ",                /* another case */
		"node-a.example.org:41207:1 [0] NCCL INFO ",    /* NCCL cuts the name at its first dot */
		"node-a:041207:1 [0] NCCL INFO ",               /* a leading zero */
		"node-a:412071:1 [0] NCCL INFO ",               /* a longer pid */
		"node-a:4120:1 [0] NCCL INFO ",                 /* a shorter one */
		"x:node-a:41207:1 [0] NCCL INFO ",              /* more before the pid */
		"echo node-a:41207:1 [0] NCCL INFO ",           /* a word before the host */
		"[12:00:00]node-a:41207:1 [0] NCCL INFO ",      /* a timestamp not followed by a blank */
		"[a] [b] node-a:41207:1 [0] NCCL INFO ",        /* two brackets */
		"[a]] node-a:41207:1 [0] NCCL INFO ",
	};
	struct gdrb_nccl_links l, sum;
	size_t i;

	/* Two processes' lines in one file: each reads its own, and the fallback of one stays seen. */
	gdrb_nccl_links_init(&l);
	gdrb_nccl_log_parse_mem(mixed, sizeof(mixed) - 1, &me, &l);
	ck_assert_uint_eq(l.net, 2);
	ck_assert_uint_eq(l.net_gdr, 2);
	ck_assert_uint_eq(l.foreign, 2);
	gdrb_nccl_links_init(&sum);
	gdrb_nccl_links_add(&sum, &l);
	gdrb_nccl_links_init(&l);
	gdrb_nccl_log_parse_mem(mixed, sizeof(mixed) - 1, &other, &l);
	ck_assert_uint_eq(l.net, 2);
	ck_assert_uint_eq(l.net_gdr, 0);
	gdrb_nccl_links_add(&sum, &l);
	ck_assert_uint_eq(sum.net, 4);
	ck_assert_uint_eq(sum.net_gdr, 2);

	/* The owner's line after NCCL's timestamp counts; each imitation does not. */
	l = parse_text("", 0);
	gdrb_nccl_log_parse_mem("[2025-11-27 05:51:02] node-a:41207:41207 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n",
				sizeof("[2025-11-27 05:51:02] node-a:41207:41207 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n") - 1,
				&me, &l);
	ck_assert_uint_eq(l.net_gdr, 1);
	ck_assert_uint_eq(l.foreign, 0);
	for (i = 0; i < sizeof(imitations) / sizeof(imitations[0]); i++) {
		char line[512];
		int n = snprintf(line, sizeof(line), "%sChannel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"
				 "%sNCCL version 2.28.9+cuda13.0\n%sConnected all rings, use ring PXN 0 GDR 1\n",
				 imitations[i], imitations[i], imitations[i]);

		gdrb_nccl_links_init(&l);
		gdrb_nccl_log_parse_mem(line, (size_t)n, &me, &l);
		ck_assert_msg(l.net + l.net_gdr + l.rings == 0 && !l.version[0], "'%s' counted", imitations[i]);
		ck_assert_msg(l.foreign == 3, "'%s': %u foreign lines, expected 3", imitations[i], l.foreign);
	}
	/* NCCL's real logs read alike with their owner named: nothing of theirs is foreign. */
	for (i = 0; i < N_FIXTURES; i++) {
		struct gdrb_nccl_links any, own;
		char path[4096], why[512] = "";

		fixture_path(path, sizeof(path), fixtures[i].file);
		ck_assert_int_eq(gdrb_nccl_log_read(path, NULL, &any, why, sizeof(why)), 0);
		ck_assert_int_eq(gdrb_nccl_log_read(path, &me, &own, why, sizeof(why)), 0);
		ck_assert_msg(own.foreign == 0, "%s: %u lines foreign", fixtures[i].file, own.foreign);
		ck_assert_msg(memcmp(&any, &own, sizeof(any)) == 0, "%s: read otherwise with its owner", fixtures[i].file);
	}
}
END_TEST

/* A line across two of the reader's chunks reads whole; files it refuses. */
START_TEST(test_files)
{
	static const char conn[] = PREFIX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n";
	char dir[] = "/tmp/test_nccl_log.XXXXXX", path[256], why[512];
	struct gdrb_nccl_links l;
	FILE *f = tmpfile();
	size_t at;

	ck_assert_ptr_nonnull(f);
	for (at = 0; at + 100 < 16384 - 20; at += 100)
		fprintf(f, "%099d\n", 0);
	fputs(conn, f);
	rewind(f);
	gdrb_nccl_links_init(&l);
	ck_assert_int_eq(gdrb_nccl_log_parse(f, NULL, &l), 0);
	ck_assert_uint_eq(l.net_gdr, 1);
	ck_assert_uint_eq(l.skipped, 0);
	fclose(f);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing", dir);
	ck_assert_int_eq(gdrb_nccl_log_read(path, NULL, &l, why, sizeof(why)), -ENOENT);
	ck_assert_ptr_null(strchr(why, '\n'));
	ck_assert_ptr_nonnull(strstr(why, "missing"));
	ck_assert_int_eq(gdrb_nccl_log_read(dir, NULL, &l, why, sizeof(why)), -EINVAL);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(gdrb_nccl_log_read(path, NULL, &l, why, sizeof(why)), -EINVAL);
	unlink(path);
	/* Larger than what is read back: refused, not read to its end. */
	snprintf(path, sizeof(path), "%s/big", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ftruncate(fileno(f), (off_t)GDRB_NCCL_LOG_MAX + 1), 0);
	fclose(f);
	ck_assert_int_eq(gdrb_nccl_log_read(path, NULL, &l, why, sizeof(why)), -EFBIG);
	ck_assert_ptr_nonnull(strstr(why, "bytes"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/link", dir);
	ck_assert_int_eq(symlink("/etc/hostname", path), 0);
	ck_assert_int_eq(gdrb_nccl_log_read(path, NULL, &l, why, sizeof(why)), -ELOOP);
	ck_assert_ptr_nonnull(strstr(why, "link"));
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *nccl_log_suite(void)
{
	const struct unit_case cases[] = {
		{ .test = test_fixtures, .loops = (int)N_FIXTURES },
		{ .test = test_forms },
		{ .test = test_old_fixtures, .loops = (int)N_OLD_FIXTURES },
		{ .test = test_subsys },
		{ .test = test_tuning_fixtures },
		{ .test = test_tuning_partial },
		{ .test = test_merge },
		{ .test = test_transports },
		{ .test = test_wire },
		{ .test = test_nics },
		{ .test = test_conf_lines },
		{ .test = test_conf_files },
		{ .test = test_hostile },
		{ .test = test_owner },
		{ .test = test_files },
	};

	return UNIT_SUITE("nccl_log", "core", 0, cases);
}

const struct unit_test unit_test = { .suite = nccl_log_suite };
