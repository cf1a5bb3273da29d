/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/verbs_util.c: work-request splitting, the port a rank
 * uses (PCI distance to its GPU on the fixture sysfs trees of
 * tests/data/mk-sysfs-fixtures.sh), and the GID a RoCE port uses.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_sysfs.h"
#include "gdrb_verbs.h"

#include "fixture_main.h"

#define GIB ((size_t)1 << 30)

static char fixtures[PATH_MAX];

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

static Suite *verbs_suite(void)
{
	Suite *s = suite_create("verbs");
	TCase *tc = tcase_create("choices");

	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_port_nearest);
	tcase_add_test(tc, test_port_named);
	tcase_add_test(tc, test_port_none);
	tcase_add_test(tc, test_gid);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_with_fixtures("test_verbs", verbs_suite(), fixtures, sizeof(fixtures));
}
