/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of a netdev's ethtool statistics (common/sysinfo/ethtool.c) and of their rows
 * in the counters (sysfs_counters.c): the classification of ethtool_classes.def; the
 * kernel's SIOCETHTOOL on this machine's own netdevs (lo and the like answer no statistics:
 * said so, never a figure); a scripted transport that answers what a driver or a broken one
 * may (a count that changes, a garbage count, a name without its end, a failed request);
 * a statistic that vanishes between readings, a netdev that goes away, a value that cannot
 * be read; and the fixture transport of the sysfs fixture trees.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrb_ethtool.h"
#include "gdrb_log.h"
#include "gdrb_sysfs.h"
#include "gdrb_sysfs_counters.h"

#include "unit_main.h"

START_TEST(test_classify)
{
	static const struct {
		const char *name;
		int cls;        /* -1: not read */
	} cases[] = {
		{ "rx_prio3_pause", GDRB_CNT_CONGESTION }, { "tx_prio3_pause", GDRB_CNT_CONGESTION },
		{ "rx_prio0_pause_duration", GDRB_CNT_CONGESTION }, { "tx_prio7_pause_duration", GDRB_CNT_CONGESTION },
		{ "rx_prio5_pause_transition", GDRB_CNT_CONGESTION }, { "rx_pause_ctrl_phy", GDRB_CNT_CONGESTION },
		{ "tx_pause_ctrl_phy", GDRB_CNT_CONGESTION }, { "rx_global_pause", GDRB_CNT_CONGESTION },
		{ "rx_prio3_marked", GDRB_CNT_CONGESTION }, { "rx_ecn_mark", GDRB_CNT_CONGESTION },
		{ "rx_discards_phy", GDRB_CNT_ERROR }, { "rx_out_of_buffer", GDRB_CNT_ERROR },
		{ "rx_prio3_discards", GDRB_CNT_ERROR }, { "rx_prio3_buf_discard", GDRB_CNT_ERROR },
		{ "rx_crc_errors_phy", GDRB_CNT_ERROR }, { "link_down_events_phy", GDRB_CNT_ERROR },
		{ "tx_pause_storm_error_events", GDRB_CNT_ERROR },
		/* per queue, traffic, and what only looks like a priority */
		{ "rx_packets", -1 }, { "rx_prio3_packets", -1 }, { "ch0_events", -1 }, { "rx0_ecn_mark", -1 },
		{ "rx_prio8_pause", -1 }, { "rx_prioN_pause", -1 }, { "rx_prio33_pause", -1 },
		{ "rx_prio3_pause_", -1 }, { "rx_prio", -1 }, { "", -1 }, { "np_cnp_sent", -1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum gdrb_cnt_class cls = GDRB_CNT_OTHER;
		bool read = gdrb_cnt_ethtool_classify(cases[i].name, &cls);

		ck_assert_msg(read == (cases[i].cls >= 0), "%s: %s", cases[i].name, read ? "read" : "not read");
		ck_assert_msg(!read || (int)cls == cases[i].cls, "%s: class %s", cases[i].name, gdrb_cnt_class_name(cls));
	}
}
END_TEST

/* The kernel's ioctl on every netdev of this machine: an answer or a clear error, never garbage. */
START_TEST(test_kernel)
{
	const struct gdrb_ethtool kernel = { gdrb_ethtool_ioctl, NULL };
	char (*names)[GDRB_ETHTOOL_NAME_LEN];
	uint64_t *values;
	struct gdrb_dir dir;
	size_t n, i, j;
	int rc;

	/* The loopback device's driver has no statistics: none, not a failure. */
	ck_assert_int_eq(gdrb_ethtool_stats(&kernel, "lo", &names, &values, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(names);
	ck_assert_int_eq(gdrb_ethtool_stats(&kernel, "gdrbnosuch0", &names, &values, &n), -ENODEV);
	ck_assert_int_eq(gdrb_ethtool_stats(&kernel, "a-name-longer-than-ifnamsiz", &names, &values, &n), -ENODEV);
	if (gdrb_dir_list("/sys/class/net", &dir))
		return;
	for (i = 0; i < dir.n; i++) {
		rc = gdrb_ethtool_stats(&kernel, dir.names[i], &names, &values, &n);
		ck_assert_msg(rc == 0 || rc == -ENODEV || rc == -EPERM, "%s: %s", dir.names[i], strerror(-rc));
		for (j = 0; j < n; j++)
			ck_assert_uint_lt(strlen(names[j]), GDRB_ETHTOOL_NAME_LEN);
		printf("# %s: %zu ethtool statistics%s%s\n", dir.names[i], n, n ? ", the first " : "", n ? names[0] : "");
		free(names);
		free(values);
		/* The veth of tests/integration/ethtool_veth.sh: statistics, none of them one gdrbench reads. */
		if (!strcmp(dir.names[i], "gdrbveth0")) {
			struct gdrb_cnt_set s = { 0 };
			size_t found = 0;

			ck_assert_int_eq(gdrb_cnt_add_netdev(&s, &kernel, "gdrbveth0", "rxe0", 1, &found), 0);
			ck_assert_uint_gt(found, 0);
			ck_assert_uint_eq(s.n, 0);
			printf("# gdrbveth0: the kernel's ioctl gave %zu statistics, none of pause, ECN or discards\n", found);
			gdrb_cnt_set_free(&s);
		}
	}
	gdrb_dir_free(&dir);
}
END_TEST

/* A scripted driver: its statistics, and what goes wrong at which request. */
static struct {
	const char *names[8];
	uint64_t values[8];
	size_t n;
	int fail;               /* -errno every request answers */
	uint32_t garbage_count; /* GSSET_INFO's count, where not 0 */
	int grow_after_info;    /* GSTRINGS counts this many more than GSSET_INFO did, that many times */
	bool no_end;            /* the first name fills its 32 bytes */
	unsigned requests;
} drv;

static int scripted(const char *root, const char *ifname, void *req, size_t room)
{
	uint32_t cmd;
	size_t i, n = drv.n;

	(void)root;
	drv.requests++;
	if (strcmp(ifname, "eth7"))
		return -ENODEV;
	if (drv.fail)
		return drv.fail;
	memcpy(&cmd, req, sizeof(cmd));
	if (cmd == ETHTOOL_GSSET_INFO) {
		struct ethtool_sset_info *info = req;

		info->sset_mask = n || drv.garbage_count ? 1ull << ETH_SS_STATS : 0;
		info->data[0] = drv.garbage_count ? drv.garbage_count : (uint32_t)n;
		return 0;
	}
	if (drv.grow_after_info > 0) {
		drv.grow_after_info--;
		n++;
	}
	if (cmd == ETHTOOL_GSTRINGS) {
		struct ethtool_gstrings *gs = req;

		ck_assert_uint_ge(room, sizeof(*gs) + n * ETH_GSTRING_LEN);
		gs->len = (uint32_t)n;
		memset(gs->data, 0, n * ETH_GSTRING_LEN);
		for (i = 0; i < n && i < drv.n; i++)
			snprintf((char *)gs->data + i * ETH_GSTRING_LEN, ETH_GSTRING_LEN, "%s", drv.names[i]);
		if (drv.no_end)
			memset(gs->data, 'x', ETH_GSTRING_LEN);
		return 0;
	}
	if (cmd == ETHTOOL_GSTATS) {
		struct ethtool_stats *st = req;

		ck_assert_uint_ge(room, sizeof(*st) + n * sizeof(uint64_t));
		st->n_stats = (uint32_t)n;
		for (i = 0; i < n && i < drv.n; i++)
			st->data[i] = drv.values[i];
		return 0;
	}
	return -EOPNOTSUPP;
}

static void drv_reset(void)
{
	memset(&drv, 0, sizeof(drv));
	drv.names[0] = "rx_packets";
	drv.names[1] = "rx_prio3_pause";
	drv.names[2] = "rx_discards_phy";
	drv.names[3] = "ch0_events";
	drv.names[4] = "tx_prio3_pause";
	drv.values[0] = 1000;
	drv.values[1] = 7;
	drv.values[2] = 2;
	drv.values[3] = 9;
	drv.values[4] = 11;
	drv.n = 5;
}

static const struct gdrb_ethtool script = { scripted, NULL };

START_TEST(test_answers)
{
	char (*names)[GDRB_ETHTOOL_NAME_LEN];
	uint64_t *values;
	size_t n;

	drv_reset();
	ck_assert_int_eq(gdrb_ethtool_stats(&script, "eth7", &names, &values, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(names[1], "rx_prio3_pause");
	ck_assert_uint_eq(values[4], 11);
	free(names);
	free(values);

	/* A count that changed between the requests once (channels reconfigured): asked again. */
	drv.grow_after_info = 1;
	drv.requests = 0;
	ck_assert_int_eq(gdrb_ethtool_stats(&script, "eth7", &names, &values, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(drv.requests, 5);
	free(names);
	free(values);
	/* ... and at every request: refused, nothing read. */
	drv.grow_after_info = 100;
	ck_assert_int_eq(gdrb_ethtool_stats(&script, "eth7", &names, &values, &n), -EPROTO);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(names);
	drv_reset();
	/* A count past any driver's: refused at once, nothing allocated for it or asked after it. */
	drv.garbage_count = GDRB_ETHTOOL_MAX + 1;
	ck_assert_int_eq(gdrb_ethtool_stats(&script, "eth7", &names, &values, &n), -EPROTO);
	ck_assert_uint_eq(drv.requests, 1);
	drv_reset();
	drv.no_end = true;
	ck_assert_int_eq(gdrb_ethtool_stats(&script, "eth7", &names, &values, &n), -EPROTO);
	drv_reset();
	drv.fail = -EIO;
	ck_assert_int_eq(gdrb_ethtool_stats(&script, "eth7", &names, &values, &n), -EIO);
	drv_reset();
	drv.n = 0;
	ck_assert_int_eq(gdrb_ethtool_stats(&script, "eth7", &names, &values, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* The index of counter name in s, or -1. */
static int find(const struct gdrb_cnt_set *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->id[i].name, name))
			return (int)i;
	return -1;
}

/* Rows of the statistics ethtool_classes.def names, and their states reading after reading. */
START_TEST(test_rows)
{
	struct gdrb_cnt_set s = { 0 };
	uint64_t value[8];
	uint8_t state[8];
	size_t found;
	int pause, discards;

	drv_reset();
	ck_assert_int_eq(gdrb_cnt_add_netdev(&s, &script, "eth7", "mlx5_0", 1, &found), 0);
	ck_assert_uint_eq(found, 5);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_int_lt(find(&s, "rx_packets"), 0);
	pause = find(&s, "rx_prio3_pause");
	discards = find(&s, "rx_discards_phy");
	ck_assert_int_ge(pause, 0);
	ck_assert_str_eq(s.id[pause].device, "mlx5_0");
	ck_assert_str_eq(s.id[pause].port, "1");
	ck_assert_str_eq(s.id[pause].source, "ethtool");
	ck_assert_int_eq(s.id[pause].cls, GDRB_CNT_CONGESTION);
	ck_assert_int_eq(s.id[discards].cls, GDRB_CNT_ERROR);
	ck_assert(!s.id[pause].pcie);

	gdrb_cnt_read(&s, value, state);
	ck_assert_int_eq(state[pause], GDRB_CNT_READ_OK);
	ck_assert_uint_eq(value[pause], 7);
	ck_assert_uint_eq(value[discards], 2);

	/* The driver moved its statistics about: each is found by its name. */
	drv.names[1] = "rx_discards_phy";
	drv.names[2] = "rx_prio3_pause";
	drv.values[1] = 3;
	drv.values[2] = 70;
	gdrb_cnt_read(&s, value, state);
	ck_assert_uint_eq(value[pause], 70);
	ck_assert_uint_eq(value[discards], 3);

	/* One statistic gone: that one vanished, the others read. */
	drv.names[2] = "rx_prio4_pause";
	gdrb_cnt_read(&s, value, state);
	ck_assert_int_eq(state[pause], GDRB_CNT_READ_VANISHED);
	ck_assert_int_eq(state[discards], GDRB_CNT_READ_OK);
	/* A failed request: every one unreadable, never 0 taken as read. */
	drv.fail = -EIO;
	gdrb_cnt_read(&s, value, state);
	ck_assert_int_eq(state[pause], GDRB_CNT_READ_UNREADABLE);
	ck_assert_int_eq(state[discards], GDRB_CNT_READ_UNREADABLE);
	/* Garbage answers: unreadable too. */
	drv.fail = 0;
	drv.garbage_count = 1u << 30;
	gdrb_cnt_read(&s, value, state);
	ck_assert_int_eq(state[discards], GDRB_CNT_READ_UNREADABLE);
	/* The netdev gone: every one vanished. */
	drv.garbage_count = 0;
	drv.fail = -ENODEV;
	gdrb_cnt_read(&s, value, state);
	ck_assert_int_eq(state[pause], GDRB_CNT_READ_VANISHED);
	ck_assert_int_eq(state[discards], GDRB_CNT_READ_VANISHED);
	gdrb_cnt_set_free(&s);

	/* A netdev with statistics, none of them one gdrbench reads; one with none; one not there. */
	drv_reset();
	drv.names[1] = drv.names[2] = drv.names[4] = "rx_bytes";
	ck_assert_int_eq(gdrb_cnt_add_netdev(&s, &script, "eth7", "rxe0", 1, &found), 0);
	ck_assert_uint_eq(found, 5);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_uint_eq(s.nfiles, 0);
	drv.n = 0;
	ck_assert_int_eq(gdrb_cnt_add_netdev(&s, &script, "eth7", "rxe0", 1, &found), 0);
	ck_assert_uint_eq(found, 0);
	ck_assert_int_eq(gdrb_cnt_add_netdev(&s, &script, "eth8", "rxe0", 1, &found), -ENODEV);
	ck_assert_uint_eq(s.n, 0);
	gdrb_cnt_set_free(&s);
}
END_TEST

static char tmp[PATH_MAX];

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX + 256], cmd[PATH_MAX + 300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* The fixture transport: the file's lines as a driver's statistics; its faults as a driver's. */
START_TEST(test_fixture)
{
	const struct gdrb_ethtool fx = { gdrb_ethtool_fixture, tmp };
	char (*names)[GDRB_ETHTOOL_NAME_LEN], cmd[PATH_MAX + 16];
	struct gdrb_cnt_set s = { 0 };
	uint64_t *values, value[4];
	uint8_t state[4];
	size_t n, found;

	snprintf(tmp, sizeof(tmp), "%s/gdrb-test-ethtool.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	put("class/net/eth2/mtu", "9000\n");
	put("class/net/eth3/gdrb-ethtool-stats", "rx_packets 5\nrx_prio3_pause 12\nrx_discards_phy 0\n");
	ck_assert_int_eq(gdrb_ethtool_stats(&fx, "eth2", &names, &values, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(gdrb_ethtool_stats(&fx, "eth9", &names, &values, &n), -ENODEV);
	ck_assert_int_eq(gdrb_ethtool_stats(&fx, "../eth3", &names, &values, &n), -ENODEV);
	ck_assert_int_eq(gdrb_ethtool_stats(&fx, "eth3", &names, &values, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(names[2], "rx_discards_phy");
	ck_assert_uint_eq(values[1], 12);
	free(names);
	free(values);

	ck_assert_int_eq(gdrb_cnt_add_netdev(&s, &fx, "eth3", "mlx5_1", 1, &found), 0);
	ck_assert_uint_eq(s.n, 2);
	gdrb_cnt_read(&s, value, state);
	ck_assert_int_eq(state[0], GDRB_CNT_READ_OK);
	ck_assert_uint_eq(value[0], 12);
	/* "-": a value the driver could not give; a malformed line: the file is not a fixture. */
	put("class/net/eth3/gdrb-ethtool-stats", "rx_packets 5\nrx_prio3_pause -\nrx_discards_phy 0\n");
	gdrb_cnt_read(&s, value, state);
	ck_assert_int_eq(state[0], GDRB_CNT_READ_UNREADABLE);
	ck_assert_int_eq(state[1], GDRB_CNT_READ_UNREADABLE);
	put("class/net/eth3/gdrb-ethtool-stats", "rx_prio3_pause 12x\n");
	ck_assert_int_eq(gdrb_ethtool_stats(&fx, "eth3", &names, &values, &n), -EINVAL);
	put("class/net/eth3/gdrb-ethtool-stats", "rx_prio3_pause 99999999999999999999999\n");
	ck_assert_int_eq(gdrb_ethtool_stats(&fx, "eth3", &names, &values, &n), -EINVAL);
	/* rx_discards_phy gone from the driver's list: vanished, the other read. */
	put("class/net/eth3/gdrb-ethtool-stats", "rx_prio3_pause 13\n");
	gdrb_cnt_read(&s, value, state);
	ck_assert_int_eq(state[0], GDRB_CNT_READ_OK);
	ck_assert_uint_eq(value[0], 13);
	ck_assert_int_eq(state[1], GDRB_CNT_READ_VANISHED);
	gdrb_cnt_set_free(&s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The netdev a port names: its first GID's, else its function's; none for InfiniBand. */
START_TEST(test_port_netdev)
{
	char root[PATH_MAX + 64], netdev[32];

	snprintf(root, sizeof(root), "%s/roce-counters/sys", unit_fixtures());
	gdrb_cnt_port_netdev(root, "mlx5_1", 1, netdev, sizeof(netdev));
	ck_assert_str_eq(netdev, "enp1s0np0");
	snprintf(root, sizeof(root), "%s/mlx5-counters/sys", unit_fixtures());
	gdrb_cnt_port_netdev(root, "mlx5_0", 1, netdev, sizeof(netdev));
	ck_assert_str_eq(netdev, "");
}
END_TEST

static Suite *ethtool_suite(void)
{
	Suite *s = suite_create("ethtool");
	TCase *tc = tcase_create("ethtool");

	gdrb_log_init("test_ethtool");
	tcase_add_test(tc, test_classify);
	tcase_add_test(tc, test_kernel);
	tcase_add_test(tc, test_answers);
	tcase_add_test(tc, test_rows);
	tcase_add_test(tc, test_fixture);
	tcase_add_test(tc, test_port_netdev);
	suite_add_tcase(s, tc);
	return s;
}

const struct unit_test unit_test = { ethtool_suite, false };
