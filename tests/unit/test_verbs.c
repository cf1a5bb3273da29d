/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/verbs/verbs_util.c: work-request splitting, the port a rank
 * uses (PCI distance to its GPU on the fixture sysfs trees of
 * tests/support/data/mk-sysfs-fixtures.sh), the GID a RoCE port uses, and whether
 * scatter-to-CQE is turned off (MLX5_SCATTER_TO_CQE) before the device is opened.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_log.h"
#include "gdrb_sysfs.h"
#include "gdrb_verbs.h"

#include "unit_main.h"

#define GIB ((size_t)1 << 30)

static const char *fixtures;    /* the fixture trees' root (unit_fixtures) */

static const char *sys_of(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s/sys", fixtures, name);
	return path;
}

static void load(const char *name, struct gdrb_topo *t)
{
	ck_assert_int_eq(gdrb_topo_load(sys_of(name), t), 0);
}

START_TEST(test_split)
{
	size_t off, len;

	ck_assert_uint_eq(gdrb_wr_count(0, GIB), 1);
	ck_assert_uint_eq(gdrb_wr_count(8, GIB), 1);
	ck_assert_uint_eq(gdrb_wr_count(GIB, GIB), 1);
	ck_assert_uint_eq(gdrb_wr_count(GIB + 1, GIB), 2);
	ck_assert_uint_eq(gdrb_wr_count(64 << 10, 16 << 10), 4);
	/* 4 GiB and more: never a work request above 2 GiB (ibv_sge.length is 32 bits). */
	ck_assert_uint_eq(gdrb_wr_count(4 * GIB, 0), 2);
	ck_assert_uint_eq(gdrb_wr_count(4 * GIB, 8 * GIB), 2);
	ck_assert_uint_eq(gdrb_wr_count(4 * GIB + 1, 2 * GIB), 3);
	gdrb_wr_chunk(4 * GIB + 1, 2 * GIB, 2, &off, &len);
	ck_assert_uint_eq(off, 4 * GIB);
	ck_assert_uint_eq(len, 1);
	gdrb_wr_chunk(4 * GIB + 1, 2 * GIB, 1, &off, &len);
	ck_assert_uint_eq(off, 2 * GIB);
	ck_assert_uint_eq(len, 2 * GIB);
	gdrb_wr_chunk(5000, 4096, 1, &off, &len);
	ck_assert_uint_eq(off, 4096);
	ck_assert_uint_eq(len, 904);
	/* Every piece together is the whole message. */
	for (size_t total = 0, i = 0; i < gdrb_wr_count(10 * GIB + 3, GIB); i++) {
		gdrb_wr_chunk(10 * GIB + 3, GIB, i, &off, &len);
		ck_assert_uint_eq(off, total);
		total += len;
		if (i + 1 == gdrb_wr_count(10 * GIB + 3, GIB))
			ck_assert_uint_eq(total, 10 * GIB + 3);
	}
}
END_TEST

/* Device limits as rxe (soft-RoCE) and mlx5 report them in ibv_query_device. */
#define RXE_MAX_CQE 32767
#define RXE_MAX_QP_WR 1048576
#define MLX5_MAX_CQE 4194303
#define MLX5_MAX_QP_WR 32768
#define MIB ((size_t)1 << 20)

START_TEST(test_queue_plan)
{
	struct gdrb_queue_plan q;
	size_t wrs = gdrb_wr_count(512 * MIB, MIB), want = 64 * wrs + 8;

	/* The case: 512 MiB in 1 MiB work requests, a window of 64: 32,776 receives wanted. */
	ck_assert_uint_eq(want, 32776);
	ck_assert_int_eq(gdrb_queue_plan(1, 128, want, RXE_MAX_QP_WR, RXE_MAX_CQE, &q), 0);
	ck_assert_uint_eq(q.recv_cqe, RXE_MAX_CQE);
	ck_assert_uint_le(q.send_cqe, RXE_MAX_CQE);
	ck_assert_uint_eq(q.rx_depth, RXE_MAX_CQE);
	ck_assert_uint_eq(q.tx_depth, 128);
	/* What fits: 63 messages of 512 work requests, 8 receives kept for the rest (as in the VM). */
	ck_assert_uint_eq(gdrb_window_fit(wrs, 1, q.rx_depth - 8), 63);
	/* A device whose queues are shallower than its CQs: max_qp_wr decides. */
	ck_assert_int_eq(gdrb_queue_plan(1, 128, want, 16384, RXE_MAX_CQE, &q), 0);
	ck_assert_uint_eq(q.rx_depth, 16384);
	ck_assert_uint_eq(gdrb_window_fit(wrs, 1, q.rx_depth - 8), 31);
	/* mlx5's queues hold 32,768: 63 such messages; 256 MiB ones keep the window asked for. */
	ck_assert_int_eq(gdrb_queue_plan(1, 128, want, MLX5_MAX_QP_WR, MLX5_MAX_CQE, &q), 0);
	ck_assert_uint_eq(q.rx_depth, MLX5_MAX_QP_WR);
	ck_assert_uint_eq(gdrb_window_fit(wrs, 1, q.rx_depth - 8), 63);
	ck_assert_int_eq(gdrb_queue_plan(1, 128, 64 * 256 + 8, MLX5_MAX_QP_WR, MLX5_MAX_CQE, &q), 0);
	ck_assert_uint_eq(q.rx_depth, 64 * 256 + 8);
	ck_assert_uint_eq(q.recv_cqe, 64 * 256 + 8);
	ck_assert_uint_eq(gdrb_window_fit(256, 1, q.rx_depth - 8), 64);
	/* Several QPs share one CQ: max_cqe is split among them, then the window round-robins. */
	ck_assert_int_eq(gdrb_queue_plan(4, 1024, 20000, RXE_MAX_QP_WR, RXE_MAX_CQE, &q), 0);
	ck_assert_uint_eq(q.rx_depth, RXE_MAX_CQE / 4);
	ck_assert_uint_eq(q.recv_cqe, 4 * (RXE_MAX_CQE / 4));
	ck_assert_uint_eq(q.tx_depth, 1024);
	ck_assert_uint_eq(gdrb_window_fit(512, 4, q.rx_depth - 8), 4 * 15);
	/* The send CQ: 64 QPs plus the control QP at --tx-depth 1024 would pass rxe's max_cqe. */
	ck_assert_int_eq(gdrb_queue_plan(64, 1024, 64, RXE_MAX_QP_WR, RXE_MAX_CQE, &q), 0);
	ck_assert_uint_eq(q.tx_depth, RXE_MAX_CQE / 65);
	ck_assert_uint_le(q.send_cqe, RXE_MAX_CQE);
	/* Never 0-deep; a CQ without an entry per QP is unsupported; nothing fits, 0. */
	ck_assert_int_eq(gdrb_queue_plan(1, 0, 0, RXE_MAX_QP_WR, RXE_MAX_CQE, &q), 0);
	ck_assert_uint_eq(q.tx_depth, 1);
	ck_assert_uint_eq(q.rx_depth, 1);
	ck_assert_int_eq(gdrb_queue_plan(8, 128, 64, RXE_MAX_QP_WR, 8, &q), GDRB_ERR_UNSUPP);
	ck_assert_int_eq(gdrb_queue_plan(1, 128, 64, 0, 0, &q), GDRB_ERR_UNSUPP);
	ck_assert_uint_eq(gdrb_window_fit(32760, 1, 32759), 0);
	ck_assert_uint_eq(gdrb_window_fit(1, 3, 10), 30);
	ck_assert_uint_eq(gdrb_window_fit(1, 64, SIZE_MAX), UINT_MAX);
}
END_TEST

START_TEST(test_port_nearest)
{
	struct gdrb_port_choice pc;
	struct gdrb_topo t;
	char why[512];
	int g;

	/* Two GPUs and two NICs per switch: GPU g uses mlx5_g, one switch away. */
	load("dgx8", &t);
	for (g = 0; g < 8; g++) {
		ck_assert_int_eq(gdrb_verbs_choose_port(&t, NULL, 0, g, &pc, why, sizeof(why)), 0);
		ck_assert_int_eq(pc.nic, g);
		ck_assert_uint_eq(pc.port, 1);
		ck_assert_int_eq(pc.dist, GDRB_DIST_PIX);
		ck_assert(pc.nearest);
	}
	/* No GPU: the first active port, no distance. */
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, NULL, 0, -1, &pc, why, sizeof(why)), 0);
	ck_assert_str_eq(t.nics[pc.nic].name, "mlx5_0");
	ck_assert(!pc.nearest);
	ck_assert_int_eq(pc.dist, GDRB_DIST_UNKNOWN);
	gdrb_topo_free(&t);

	/* mlx5_1, GPU 1's own NIC, is down: the other NIC on its switch. */
	load("portdown", &t);
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, NULL, 0, 1, &pc, why, sizeof(why)), 0);
	ck_assert_str_eq(t.nics[pc.nic].name, "mlx5_0");
	ck_assert_int_eq(pc.dist, GDRB_DIST_PIX);
	gdrb_topo_free(&t);

	/* GPUs on one socket, NICs on the other. */
	load("xsocket", &t);
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, NULL, 0, 1, &pc, why, sizeof(why)), 0);
	ck_assert_str_eq(t.nics[pc.nic].name, "mlx5_1");
	ck_assert_int_eq(pc.dist, GDRB_DIST_SYS);
	gdrb_topo_free(&t);

	load("phb", &t);
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, NULL, 0, 0, &pc, why, sizeof(why)), 0);
	ck_assert_int_eq(pc.dist, GDRB_DIST_PHB);
	gdrb_topo_free(&t);
}
END_TEST

START_TEST(test_port_named)
{
	struct gdrb_port_choice pc;
	struct gdrb_topo t;
	char why[512];

	load("portdown", &t);
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, "mlx5_0", 1, 1, &pc, why, sizeof(why)), 0);
	ck_assert_str_eq(t.nics[pc.nic].name, "mlx5_0");
	ck_assert(!pc.nearest);
	ck_assert_int_eq(pc.dist, GDRB_DIST_PIX);
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, "mlx5_0", 0, -1, &pc, why, sizeof(why)), 0);
	ck_assert_uint_eq(pc.port, 1);

	/* Missing device, missing port, port down: usage errors naming what exists. */
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, "mlx5_9", 0, -1, &pc, why, sizeof(why)),
			 GDRB_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "no such RDMA device"));
	ck_assert_ptr_nonnull(strstr(why, "mlx5_0:1 (ACTIVE), mlx5_1:1 (DOWN)"));
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, "mlx5_0", 2, -1, &pc, why, sizeof(why)),
			 GDRB_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "mlx5_0:2: no such port"));
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, "mlx5_1", 1, -1, &pc, why, sizeof(why)),
			 GDRB_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "port is DOWN"));
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, "mlx5_1", 0, -1, &pc, why, sizeof(why)),
			 GDRB_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "no ACTIVE port"));
	gdrb_topo_free(&t);
}
END_TEST

START_TEST(test_port_none)
{
	struct gdrb_port_choice pc;
	struct gdrb_topo t;
	char why[512];

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, NULL, 0, -1, &pc, why, sizeof(why)),
			 GDRB_ERR_UNSUPP);
	ck_assert_str_eq(why, "no RDMA device found; run gdrb_doctor");
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, "rxe0", 0, -1, &pc, why, sizeof(why)),
			 GDRB_ERR_UNSUPP);

	/* Every port down: unsupported, with the ports named. */
	load("portdown", &t);
	t.nics[0].ports[0].state = GDRB_PORT_DOWN;
	snprintf(t.nics[0].ports[0].state_name, sizeof(t.nics[0].ports[0].state_name), "DOWN");
	ck_assert_int_eq(gdrb_verbs_choose_port(&t, NULL, 0, 0, &pc, why, sizeof(why)),
			 GDRB_ERR_UNSUPP);
	ck_assert_ptr_nonnull(strstr(why, "mlx5_0:1 (DOWN)"));
	gdrb_topo_free(&t);
}
END_TEST

START_TEST(test_gid)
{
	struct gdrb_gid_entry gids[16];
	char why[512];
	size_t n = 0;
	int idx = -1;

	/* RoCE: v1 at 0 and 2, v2 link-local at 1, v2 IPv4-mapped at 3. */
	ck_assert_int_eq(gdrb_gid_list(sys_of("roce"), "mlx5_0", 1, gids, 16, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(gdrb_gid_choose(gids, n, -1, &idx, why, sizeof(why)), 0);
	ck_assert_int_eq(idx, 3);
	ck_assert_int_eq(gdrb_gid_choose(gids, n, 1, &idx, why, sizeof(why)), 0);
	ck_assert_int_eq(idx, 1);
	/* Out of range, or an entry that is not set (4 reads as zeros). */
	ck_assert_int_eq(gdrb_gid_choose(gids, n, 9, &idx, why, sizeof(why)), GDRB_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "0 (IB/RoCE v1), 1 (RoCE v2), 2 (IB/RoCE v1), 3 (RoCE v2)"));
	ck_assert_int_eq(gdrb_gid_choose(gids, n, 4, &idx, why, sizeof(why)), GDRB_ERR_USAGE);

	/* Without the IPv4-mapped one, the link-local RoCE v2 GID beats RoCE v1. */
	gids[3] = gids[2];
	ck_assert_int_eq(gdrb_gid_choose(gids, 3, -1, &idx, why, sizeof(why)), 0);
	ck_assert_int_eq(idx, 1);

	/* No RoCE v2 at all: the first GID. */
	ck_assert_int_eq(gdrb_gid_list(sys_of("roce-nov2"), "mlx5_0", 1, gids, 16, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(gdrb_gid_choose(gids, n, -1, &idx, why, sizeof(why)), 0);
	ck_assert_int_eq(idx, 0);
	ck_assert_int_eq(gdrb_gid_choose(gids, 0, -1, &idx, why, sizeof(why)), GDRB_ERR_UNSUPP);
	ck_assert_int_eq(gdrb_gid_choose(gids, 0, 0, &idx, why, sizeof(why)), GDRB_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "none"));
	ck_assert_int_lt(gdrb_gid_list(sys_of("roce"), "mlx5_7", 1, gids, 16, &n), 0);
}
END_TEST

/* What ibv_query_gid_table gives, written as sysfs shows it, in sysfs's order. */
START_TEST(test_gid_entry)
{
	static const unsigned char v4[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 0, [14] = 2, [15] = 15 };
	static const unsigned char ll[16] = { 0xfe, 0x80, [8] = 0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x01 };
	static const unsigned char zero[16] = { 0 };
	struct gdrb_gid_entry gids[3];
	char why[512];
	int idx = -1;

	ck_assert(gdrb_gid_entry_set(&gids[0], 3, v4, true));
	ck_assert_str_eq(gids[0].gid, "0000:0000:0000:0000:0000:ffff:0a00:020f");
	ck_assert_str_eq(gids[0].type, "RoCE v2");
	ck_assert(gdrb_gid_entry_set(&gids[1], 1, ll, false));
	ck_assert_str_eq(gids[1].gid, "fe80:0000:0000:0000:5054:00ff:fe12:3401");
	ck_assert_str_eq(gids[1].type, "IB/RoCE v1");
	ck_assert(gdrb_gid_entry_set(&gids[2], 0, ll, true));
	ck_assert(!gdrb_gid_entry_set(&gids[2], 0, zero, true));
	ck_assert(gdrb_gid_entry_set(&gids[2], 0, ll, true));
	gdrb_gid_sort(gids, 3);
	ck_assert_int_eq(gids[0].index, 0);
	ck_assert_int_eq(gids[1].index, 1);
	ck_assert_int_eq(gids[2].index, 3);
	/* The same choice and message as from sysfs. */
	ck_assert_int_eq(gdrb_gid_choose(gids, 3, -1, &idx, why, sizeof(why)), 0);
	ck_assert_int_eq(idx, 3);
	ck_assert_int_eq(gdrb_gid_choose(gids, 3, 2, &idx, why, sizeof(why)), GDRB_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(why, "set GIDs: 0 (RoCE v2), 1 (IB/RoCE v1), 3 (RoCE v2)"));
}
END_TEST

#define SCQE "MLX5_SCATTER_TO_CQE"

START_TEST(test_scatter_cqe_choose)
{
	static const char *const on[] = { "1", "", "00", "no", " 0" };
	char line[256];
	size_t i;

	/* Host receive buffers: the provider's default, whatever the environment says. */
	ck_assert_int_eq(gdrb_scatter_cqe_choose(false, NULL, line, sizeof(line)), GDRB_SCQE_LEFT);
	ck_assert_str_eq(line, "");
	ck_assert_int_eq(gdrb_scatter_cqe_choose(false, "1", line, sizeof(line)), GDRB_SCQE_LEFT);
	ck_assert_str_eq(line, "");
	ck_assert_int_eq(gdrb_scatter_cqe_choose(false, "0", line, sizeof(line)), GDRB_SCQE_LEFT);
	ck_assert_str_eq(line, "");

	/* Device receive buffers: turned off, and the header says so and why. */
	ck_assert_int_eq(gdrb_scatter_cqe_choose(true, NULL, line, sizeof(line)), GDRB_SCQE_SET_OFF);
	ck_assert_str_eq(line, "scatter-to-CQE: off (MLX5_SCATTER_TO_CQE=0, device receive buffers)");
	/* The user's 0 is the same setting, said to be theirs. */
	ck_assert_int_eq(gdrb_scatter_cqe_choose(true, "0", line, sizeof(line)), GDRB_SCQE_USER_OFF);
	ck_assert_str_eq(line, "scatter-to-CQE: off (MLX5_SCATTER_TO_CQE=0 from the environment, device receive buffers)");
	/* libmlx5 turns it off for exactly "0": anything else is on, kept, and named. */
	for (i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		char want[160];

		ck_assert_int_eq(gdrb_scatter_cqe_choose(true, on[i], line, sizeof(line)), GDRB_SCQE_USER_ON);
		snprintf(want, sizeof(want),
			 "scatter-to-CQE: on (MLX5_SCATTER_TO_CQE=%s from the environment, kept; receives of up to 64 B into device memory may crash libmlx5)",
			 on[i]);
		ck_assert_str_eq(line, want);
	}
	/* A short line is cut, never overrun. */
	memset(line, 'x', sizeof(line));
	ck_assert_int_eq(gdrb_scatter_cqe_choose(true, NULL, line, 8), GDRB_SCQE_SET_OFF);
	ck_assert_str_eq(line, "scatter");
	ck_assert_int_eq(line[8], 'x');
}
END_TEST

/* What apply wrote on stderr; fd 2 goes to a file meanwhile. */
static enum gdrb_scatter_cqe apply_quiet(bool device, char *line, size_t len, char *err, size_t errlen)
{
	FILE *tmp = tmpfile();
	enum gdrb_scatter_cqe got;
	int saved, rc;
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	saved = dup(2);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(tmp), 2), 0);
	rc = gdrb_scatter_cqe_apply(device, &got, line, len);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, errlen - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	ck_assert_int_eq(rc, 0);
	return got;
}

/* Device memory: set in this process's environment, where libmlx5 reads it when a QP is created. */
START_TEST(test_scatter_cqe_apply_device)
{
	char line[256], err[512];

	ck_assert_int_eq(unsetenv(SCQE), 0);
	ck_assert_int_eq(apply_quiet(true, line, sizeof(line), err, sizeof(err)), GDRB_SCQE_SET_OFF);
	ck_assert_pstr_eq(getenv(SCQE), "0");
	ck_assert_str_eq(err, "");
	ck_assert_ptr_nonnull(strstr(line, "off (MLX5_SCATTER_TO_CQE=0, device"));
}
END_TEST

/* Host memory: the environment is left as it was, set or not. */
START_TEST(test_scatter_cqe_apply_host)
{
	char line[256], err[512];

	ck_assert_int_eq(unsetenv(SCQE), 0);
	ck_assert_int_eq(apply_quiet(false, line, sizeof(line), err, sizeof(err)), GDRB_SCQE_LEFT);
	ck_assert_pstr_eq(getenv(SCQE), NULL);
	ck_assert_str_eq(line, "");
	ck_assert_int_eq(setenv(SCQE, "1", 1), 0);
	ck_assert_int_eq(apply_quiet(false, line, sizeof(line), err, sizeof(err)), GDRB_SCQE_LEFT);
	ck_assert_pstr_eq(getenv(SCQE), "1");
	ck_assert_str_eq(err, "");
}
END_TEST

/* The user's value is respected; one that leaves it on gets one warning naming it and the fix. */
START_TEST(test_scatter_cqe_apply_user)
{
	char line[256], err[512];

	ck_assert_int_eq(setenv(SCQE, "0", 1), 0);
	ck_assert_int_eq(apply_quiet(true, line, sizeof(line), err, sizeof(err)), GDRB_SCQE_USER_OFF);
	ck_assert_pstr_eq(getenv(SCQE), "0");
	ck_assert_str_eq(err, "");

	ck_assert_int_eq(setenv(SCQE, "1", 1), 0);
	ck_assert_int_eq(apply_quiet(true, line, sizeof(line), err, sizeof(err)), GDRB_SCQE_USER_ON);
	ck_assert_pstr_eq(getenv(SCQE), "1");
	ck_assert_ptr_nonnull(strstr(line, "on (MLX5_SCATTER_TO_CQE=1 from the environment, kept"));
	ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "not one line: '%s'", err);
	ck_assert_ptr_nonnull(strstr(err, "warning: MLX5_SCATTER_TO_CQE=1"));
	ck_assert_ptr_nonnull(strstr(err, "set it to 0"));
}
END_TEST

static Suite *verbs_suite(void)
{
	Suite *s = suite_create("verbs");
	TCase *tc = tcase_create("choices");

	fixtures = unit_fixtures();
	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_gid_entry);
	tcase_add_test(tc, test_queue_plan);
	tcase_add_test(tc, test_port_nearest);
	tcase_add_test(tc, test_port_named);
	tcase_add_test(tc, test_port_none);
	tcase_add_test(tc, test_gid);
	suite_add_tcase(s, tc);
	/* Each test first sets or unsets the variable itself. */
	tc = tcase_create("scatter_to_cqe");
	tcase_add_test(tc, test_scatter_cqe_choose);
	tcase_add_test(tc, test_scatter_cqe_apply_device);
	tcase_add_test(tc, test_scatter_cqe_apply_host);
	tcase_add_test(tc, test_scatter_cqe_apply_user);
	suite_add_tcase(s, tc);
	return s;
}

const struct unit_test unit_test = { .suite = verbs_suite };
