/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/sysinfo/topo.c, node.c, sysfs.c, json.c and log.c's cleaning on the fixture
 * trees tests/support/data/mk-sysfs-fixtures.sh generates (make check puts them in
 * $top_builddir/tests/fixtures).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_memroom.h"
#include "gdrb_node.h"
#include "gdrb_sysfs.h"
#include "gdrb_topo.h"

#include "unit_main.h"

#define GIB (1ull << 30)

static const char *fixtures;    /* the fixture trees' root (unit_fixtures) */

static const char *sys_of(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s/sys", fixtures, name);
	return path;
}

static const char *proc_of(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s/proc", fixtures, name);
	return path;
}

static void load(const char *name, struct gdrb_topo *t)
{
	int rc = gdrb_topo_load(sys_of(name), t);

	ck_assert_msg(rc == 0, "gdrb_topo_load(%s): %s", name, strerror(-rc));
}

static void load_node(const char *name, struct gdrb_node *n)
{
	char sys[PATH_MAX + 64];

	snprintf(sys, sizeof(sys), "%s", sys_of(name));
	ck_assert_int_eq(gdrb_node_load(sys, proc_of(name), false, n), 0);
}

static int nic_named(const struct gdrb_topo *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nnics; i++)
		if (!strcmp(t->nics[i].name, name))
			return (int)i;
	return -1;
}

START_TEST(test_load_dgx8)
{
	struct gdrb_topo t;
	const struct gdrb_topo_gpu *g;
	const struct gdrb_topo_nic *n;

	load("dgx8", &t);
	ck_assert_uint_eq(t.ngpus, 8);
	ck_assert_uint_eq(t.nnics, 8);
	ck_assert(t.have_ib_class);
	g = &t.gpus[0];
	ck_assert_str_eq(g->pci.bdf, "0000:13:00.0");
	ck_assert_str_eq(g->pci.host_bridge, "pci0000:10");
	/* root port, switch upstream port, switch downstream port, the GPU */
	ck_assert_int_eq(g->pci.nchain, 4);
	ck_assert_str_eq(g->pci.chain[0], "0000:10:01.0");
	ck_assert_str_eq(g->pci.chain[2], "0000:12:00.0");
	ck_assert_int_eq(g->pci.numa_node, 0);
	ck_assert_uint_eq(g->pci.vendor, 0x10de);
	ck_assert_uint_eq(g->pci.class_code, 0x030200);
	ck_assert_str_eq(g->pci.driver, "nvidia");
	ck_assert_uint_eq(g->bar1_bytes, 128 * GIB);
	ck_assert(g->pci.link.cur_gts == 32.0 && g->pci.link.max_gts == 32.0);
	ck_assert_int_eq(g->pci.link.cur_width, 16);
	ck_assert(g->pci.up_link.max_gts == 32.0);
	ck_assert_int_eq(t.gpus[4].pci.numa_node, 1);
	ck_assert_str_eq(t.gpus[7].pci.bdf, "0000:b4:00.0");

	n = &t.nics[0];
	ck_assert_str_eq(n->name, "mlx5_0");
	ck_assert(n->has_pci);
	ck_assert_str_eq(n->pci.bdf, "0000:15:00.0");
	ck_assert_uint_eq(n->nports, 1);
	ck_assert_uint_eq(n->ports[0].num, 1);
	ck_assert_int_eq(n->ports[0].state, GDRB_PORT_ACTIVE);
	ck_assert_str_eq(n->ports[0].state_name, "ACTIVE");
	ck_assert_str_eq(n->ports[0].phys_state, "LinkUp");
	ck_assert_str_eq(n->ports[0].link_layer, "InfiniBand");
	ck_assert(n->ports[0].rate_gbps == 400.0);
	ck_assert_int_eq(n->ports[0].roce_v2_gid, -1);
	ck_assert_int_eq(n->ports[0].ngids, 1);
	ck_assert_str_eq(t.nics[7].name, "mlx5_7");
	gdrb_topo_free(&t);
	ck_assert_uint_eq(t.ngpus, 0);
}
END_TEST

START_TEST(test_load_errors)
{
	struct gdrb_topo t;

	ck_assert_int_eq(gdrb_topo_load("/nonexistent/gdrb", &t), -ENOENT);
	/* A procfs tree is no sysfs tree. */
	ck_assert_int_eq(gdrb_topo_load(proc_of("dgx8"), &t), -ENOENT);
	/* No RDMA driver: GPUs, no NICs, and no class/infiniband. */
	load("noib", &t);
	ck_assert_uint_eq(t.ngpus, 2);
	ck_assert_uint_eq(t.nnics, 0);
	ck_assert(!t.have_ib_class);
	ck_assert_int_eq(gdrb_topo_nearest_nic(&t, 0, false, NULL), -1);
	gdrb_topo_free(&t);
}
END_TEST

START_TEST(test_distance)
{
	struct gdrb_topo t;
	struct gdrb_pci_fn a, b;

	load("dgx8", &t);
	/* Same switch; other host bridge on the same socket; the other socket. */
	ck_assert_int_eq(gdrb_topo_distance(&t.gpus[0].pci, &t.nics[0].pci), GDRB_DIST_PIX);
	ck_assert_int_eq(gdrb_topo_distance(&t.gpus[0].pci, &t.nics[2].pci), GDRB_DIST_NODE);
	ck_assert_int_eq(gdrb_topo_distance(&t.gpus[0].pci, &t.nics[4].pci), GDRB_DIST_SYS);
	ck_assert_int_eq(gdrb_topo_distance(&t.nics[4].pci, &t.gpus[0].pci), GDRB_DIST_SYS);
	gdrb_topo_free(&t);

	load("phb", &t);
	ck_assert_int_eq(gdrb_topo_distance(&t.gpus[0].pci, &t.nics[0].pci), GDRB_DIST_PHB);
	gdrb_topo_free(&t);

	/* Two switches deep on one side: PXB. */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	strcpy(a.host_bridge, "pci0000:00");
	strcpy(b.host_bridge, "pci0000:00");
	a.nchain = 6;
	strcpy(a.chain[0], "0000:00:01.0");
	strcpy(a.chain[1], "0000:01:00.0");
	strcpy(a.chain[2], "0000:02:00.0");
	strcpy(a.chain[3], "0000:03:00.0");
	strcpy(a.chain[4], "0000:04:00.0");
	strcpy(a.chain[5], "0000:05:00.0");
	b.nchain = 4;
	strcpy(b.chain[0], "0000:00:01.0");
	strcpy(b.chain[1], "0000:01:00.0");
	strcpy(b.chain[2], "0000:02:01.0");
	strcpy(b.chain[3], "0000:06:00.0");
	ck_assert_int_eq(gdrb_topo_distance(&a, &b), GDRB_DIST_PXB);
	/* One switch: PIX. */
	a.nchain = 4;
	strcpy(a.chain[3], "0000:07:00.0");
	ck_assert_int_eq(gdrb_topo_distance(&a, &b), GDRB_DIST_PIX);
	/* Different host bridges, NUMA unknown: NODE, not SYS. */
	strcpy(b.host_bridge, "pci0000:80");
	a.numa_node = -1;
	b.numa_node = 1;
	ck_assert_int_eq(gdrb_topo_distance(&a, &b), GDRB_DIST_NODE);
	b.nchain = 0;
	ck_assert_int_eq(gdrb_topo_distance(&a, &b), GDRB_DIST_UNKNOWN);

	ck_assert_str_eq(gdrb_topo_dist_name(GDRB_DIST_PIX), "PIX");
	ck_assert_str_eq(gdrb_topo_dist_name(GDRB_DIST_SYS), "SYS");
	ck_assert_str_eq(gdrb_topo_dist_what(GDRB_DIST_PHB), "same host bridge");
}
END_TEST

START_TEST(test_nearest)
{
	enum gdrb_topo_dist d;
	struct gdrb_topo t;
	size_t g;

	/* Two GPUs and two NICs per switch: each GPU gets a NIC of its own. */
	load("dgx8", &t);
	for (g = 0; g < t.ngpus; g++) {
		ck_assert_int_eq(gdrb_topo_nearest_nic(&t, g, false, &d), (int)g);
		ck_assert_int_eq(d, GDRB_DIST_PIX);
	}
	ck_assert_int_eq(gdrb_topo_nearest_nic(&t, 99, false, &d), -1);
	gdrb_topo_free(&t);

	load("xsocket", &t);
	ck_assert_int_eq(gdrb_topo_nearest_nic(&t, 0, false, &d), 0);
	ck_assert_int_eq(d, GDRB_DIST_SYS);
	ck_assert_int_eq(gdrb_topo_nearest_nic(&t, 1, false, &d), 1);
	gdrb_topo_free(&t);

	/* mlx5_1 is down: the active NIC wins when only active ones count. */
	load("portdown", &t);
	ck_assert_int_eq(gdrb_topo_nearest_nic(&t, 1, false, &d), nic_named(&t, "mlx5_1"));
	ck_assert_int_eq(gdrb_topo_nearest_nic(&t, 1, true, &d), nic_named(&t, "mlx5_0"));
	ck_assert_int_eq(d, GDRB_DIST_PIX);
	gdrb_topo_free(&t);
}
END_TEST

/* Each rail (a GPU and its nearest NIC) tied to the switch they share. */
START_TEST(test_shared_bridge)
{
	char bdf[GDRB_BDF_LEN];
	struct gdrb_topo t;
	int n0, n1;

	load("dgx8", &t);
	/* GPU 0000:13:00.0 and mlx5_0 0000:15:00.0 meet at the switch's upstream port. */
	ck_assert_int_eq(gdrb_topo_shared_bridge(&t.gpus[0].pci, &t.nics[0].pci, bdf), 2);
	ck_assert_str_eq(bdf, "0000:11:00.0");
	ck_assert_int_eq(gdrb_topo_shared_bridge(&t.gpus[7].pci, &t.nics[7].pci, bdf), 2);
	ck_assert_str_eq(bdf, "0000:b1:00.0");
	/* Under different host bridges: nothing shared. */
	ck_assert_int_eq(gdrb_topo_shared_bridge(&t.gpus[0].pci, &t.nics[7].pci, bdf), 0);
	ck_assert_str_eq(bdf, "");
	gdrb_topo_free(&t);

	/* One NIC per switch: GPUs 0 and 1 have the same nearest NIC, under their switch. */
	load("hgx-4nic", &t);
	ck_assert_uint_eq(t.ngpus, 8);
	ck_assert_uint_eq(t.nnics, 4);
	n0 = gdrb_topo_nearest_nic(&t, 0, false, NULL);
	n1 = gdrb_topo_nearest_nic(&t, 1, false, NULL);
	ck_assert_int_eq(n0, 0);
	ck_assert_int_eq(n1, 0);
	ck_assert_int_eq(gdrb_topo_nearest_nic(&t, 2, false, NULL), 1);
	ck_assert_int_eq(gdrb_topo_shared_bridge(&t.gpus[1].pci, &t.nics[n1].pci, bdf), 2);
	ck_assert_str_eq(bdf, "0000:11:00.0");
	gdrb_topo_free(&t);
}
END_TEST

START_TEST(test_path)
{
	char bdfs[8][GDRB_BDF_LEN];
	struct gdrb_topo t;
	size_t n;

	load("dgx8", &t);
	n = gdrb_topo_path(&t.gpus[0].pci, &t.nics[0].pci, bdfs, 8);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(bdfs[0], "0000:12:00.0");
	ck_assert_str_eq(bdfs[1], "0000:12:02.0");
	/* Across host bridges: both whole chains, up and then down. */
	n = gdrb_topo_path(&t.gpus[0].pci, &t.nics[4].pci, bdfs, 8);
	ck_assert_uint_eq(n, 6);
	ck_assert_str_eq(bdfs[0], "0000:12:00.0");
	ck_assert_str_eq(bdfs[2], "0000:10:01.0");
	ck_assert_str_eq(bdfs[3], "0000:90:01.0");
	ck_assert_str_eq(bdfs[5], "0000:92:02.0");
	/* Bounded by max. */
	ck_assert_uint_eq(gdrb_topo_path(&t.gpus[0].pci, &t.nics[4].pci, bdfs, 3), 3);
	gdrb_topo_free(&t);
}
END_TEST

START_TEST(test_acs_fixtures)
{
	struct gdrb_acs acs;
	char flags[128];

	ck_assert_int_eq(gdrb_topo_acs(sys_of("acs"), "0000:12:00.0", &acs), 0);
	ck_assert(acs.readable && acs.pcie && acs.present);
	ck_assert_int_eq(acs.port_type, GDRB_PCIE_DOWNSTREAM);
	ck_assert_uint_eq(acs.cap, 0x5f);
	ck_assert_uint_eq(acs.ctrl, 0x1d);
	ck_assert(acs.ctrl & GDRB_ACS_P2P_REDIRECT);
	ck_assert_str_eq(gdrb_acs_flags(acs.ctrl, flags, sizeof(flags)),
			 "SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+");
	/* The other GPU's port is clean. */
	ck_assert_int_eq(gdrb_topo_acs(sys_of("acs"), "0000:12:01.0", &acs), 0);
	ck_assert(acs.present && acs.ctrl == 0);
	ck_assert_str_eq(gdrb_acs_flags(acs.ctrl, flags, sizeof(flags)), "none");
	ck_assert_int_eq(gdrb_topo_acs(sys_of("acs"), "0000:10:01.0", &acs), 0);
	ck_assert_int_eq(acs.port_type, GDRB_PCIE_ROOT_PORT);
	ck_assert_str_eq(gdrb_pcie_port_name(acs.port_type), "root port");
	/* 64 bytes, as an unprivileged reader gets them. */
	ck_assert_int_eq(gdrb_topo_acs(sys_of("acs-unreadable"), "0000:12:00.0", &acs), 0);
	ck_assert(!acs.readable);
	/* Endpoints in the fixtures have no config file. */
	ck_assert_int_eq(gdrb_topo_acs(sys_of("acs"), "0000:13:00.0", &acs), -ENOENT);
}
END_TEST

static void put16(uint8_t *p, unsigned v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8 & 0xff;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

START_TEST(test_acs_parse)
{
	static uint8_t cfg[4096];
	struct gdrb_acs acs;

	memset(cfg, 0, sizeof(cfg));
	put16(cfg, 0x10b5);
	/* No capability list: conventional, readable, no ACS. */
	gdrb_pci_acs_parse(cfg, sizeof(cfg), &acs);
	ck_assert(acs.readable && !acs.pcie && !acs.present);
	ck_assert_int_eq(acs.port_type, -1);

	put16(cfg + 0x06, 0x10);
	cfg[0x34] = 0x60;
	cfg[0x60] = 0x10;       /* PCI Express, last */
	put16(cfg + 0x62, 6 << 4 | 2);
	/* ACS third in the extended list. */
	put32(cfg + 0x100, 0x0001 | 1u << 16 | 0x200u << 20);
	put32(cfg + 0x200, 0x000b | 1u << 16 | 0x300u << 20);
	put32(cfg + 0x300, 0x000d | 1u << 16);
	put16(cfg + 0x304, 0x7f);
	put16(cfg + 0x306, 0x0c);
	gdrb_pci_acs_parse(cfg, sizeof(cfg), &acs);
	ck_assert(acs.readable && acs.pcie && acs.present);
	ck_assert_int_eq(acs.port_type, GDRB_PCIE_DOWNSTREAM);
	ck_assert_uint_eq(acs.ctrl, GDRB_ACS_RR | GDRB_ACS_CR);

	/* A list that points back at itself ends, without ACS. */
	put32(cfg + 0x200, 0x000b | 1u << 16 | 0x100u << 20);
	gdrb_pci_acs_parse(cfg, sizeof(cfg), &acs);
	ck_assert(acs.readable && !acs.present);
	/* A standard capability list with a loop ends too. */
	cfg[0x61] = 0x60;
	cfg[0x60] = 0x01;
	gdrb_pci_acs_parse(cfg, sizeof(cfg), &acs);
	ck_assert(!acs.pcie);

	/* Short reads: 64 bytes (unprivileged), 256 bytes of a PCIe function. */
	cfg[0x60] = 0x10;
	cfg[0x34] = 0x60;
	cfg[0x61] = 0;
	gdrb_pci_acs_parse(cfg, 64, &acs);
	ck_assert(!acs.readable);
	gdrb_pci_acs_parse(cfg, 256, &acs);
	ck_assert(acs.pcie && !acs.readable);
	gdrb_pci_acs_parse(cfg, 16, &acs);
	ck_assert(!acs.readable && !acs.pcie);
	/* No device there. */
	put16(cfg, 0xffff);
	gdrb_pci_acs_parse(cfg, sizeof(cfg), &acs);
	ck_assert(!acs.readable && !acs.present);
}
END_TEST

START_TEST(test_links)
{
	struct gdrb_pci_fn fn;
	struct gdrb_topo t;
	double gts;
	int width, n;

	ck_assert(gdrb_pci_parse_speed("16.0 GT/s PCIe") == 16.0);
	ck_assert(gdrb_pci_parse_speed("8 GT/s") == 8.0);
	ck_assert(gdrb_pci_parse_speed("2.5 GT/s PCIe") == 2.5);
	ck_assert(gdrb_pci_parse_speed("Unknown") == 0);
	ck_assert_int_eq(gdrb_pci_gen(2.5), 1);
	ck_assert_int_eq(gdrb_pci_gen(5), 2);
	ck_assert_int_eq(gdrb_pci_gen(8), 3);
	ck_assert_int_eq(gdrb_pci_gen(16), 4);
	ck_assert_int_eq(gdrb_pci_gen(32), 5);
	ck_assert_int_eq(gdrb_pci_gen(64), 6);
	ck_assert_int_eq(gdrb_pci_gen(0), 0);

	/* Link speeds in the kernel's forms only; anything else is not known. */
	ck_assert(gdrb_pci_link_speed("32.0 GT/s PCIe") == 32.0);
	ck_assert(gdrb_pci_link_speed("2.5 GT/s PCIe") == 2.5);
	ck_assert(gdrb_pci_link_speed("8 GT/s") == 8.0);
	ck_assert(gdrb_pci_link_speed("Unknown") == 0);
	ck_assert(gdrb_pci_link_speed("Unknown speed") == 0);
	ck_assert(gdrb_pci_link_speed("") == 0);
	ck_assert(gdrb_pci_link_speed("32.0 GT/s PCIe garbage") == 0);
	ck_assert(gdrb_pci_link_speed("32.0GT/s") == 0);
	ck_assert(gdrb_pci_link_speed("32.0 Gb/s") == 0);
	ck_assert(gdrb_pci_link_speed("-32.0 GT/s PCIe") == 0);
	ck_assert(gdrb_pci_link_speed("3e1 GT/s") == 0);
	ck_assert(gdrb_pci_link_speed("0x20 GT/s") == 0);
	ck_assert(gdrb_pci_link_speed("32. GT/s") == 0);
	ck_assert(gdrb_pci_link_speed("1234567890123 GT/s") == 0);
	/* Data rates: 8b/10b to 5 GT/s, 128b/130b to 32 GT/s, FLIT above. */
	ck_assert_double_eq_tol(gdrb_pci_link_gbytes(2.5, 16), 4.0, 1e-9);
	ck_assert_double_eq_tol(gdrb_pci_link_gbytes(32, 16), 32 * 16 / 8.0 * 128 / 130, 1e-9);
	ck_assert_double_eq_tol(gdrb_pci_link_gbytes(64, 16), 64 * 16 / 8.0 * 236 / 256, 1e-9);
	ck_assert(gdrb_pci_link_gbytes(0, 16) == 0 && gdrb_pci_link_gbytes(32, 0) == 0);

	load("downtrained", &t);
	n = nic_named(&t, "mlx5_1");
	ck_assert_int_eq(t.nics[n].pci.link.cur_width, 8);
	ck_assert_int_eq(t.nics[n].pci.link.max_width, 16);
	ck_assert(t.gpus[1].pci.link.cur_gts == 2.5);
	ck_assert(t.gpus[0].pci.link.cur_gts == 32.0);
	gdrb_topo_free(&t);

	/* The port above limits what the link can train to. */
	memset(&fn, 0, sizeof(fn));
	fn.link = (struct gdrb_pci_link){ .cur_gts = 16, .max_gts = 32, .cur_width = 16,
					  .max_width = 16 };
	fn.up_link = (struct gdrb_pci_link){ .max_gts = 16, .max_width = 8 };
	gdrb_pci_link_target(&fn, &gts, &width);
	ck_assert(gts == 16);
	ck_assert_int_eq(width, 8);
	fn.up_link = (struct gdrb_pci_link){ 0 };
	gdrb_pci_link_target(&fn, &gts, &width);
	ck_assert(gts == 32);
	ck_assert_int_eq(width, 16);
}
END_TEST

static void put(const char *dir, const char *rel, const char *text);

/* GPU gpu's shared uplink with NIC nic in the sysfs tree sys: the return and the link. */
static int uplink_of(const char *sys, size_t gpu, const char *nic, double *gts, int *width)
{
	struct gdrb_topo t;
	int rc, n;

	ck_assert_int_eq(gdrb_topo_load(sys, &t), 0);
	n = nic_named(&t, nic);
	ck_assert_int_ge(n, 0);
	rc = gdrb_topo_shared_uplink(&t.gpus[gpu].pci, &t.nics[n].pci, gts, width);
	gdrb_topo_free(&t);
	return rc;
}

START_TEST(test_shared_uplink)
{
	char dir[] = "/tmp/gdrb-uplink.XXXXXX", cmd[PATH_MAX * 2], sys[PATH_MAX];
	struct gdrb_pci_fn a, b;
	struct gdrb_topo t;
	double gts;
	int width;

	/* One switch: the root port and the switch's upstream port both report the uplink. */
	ck_assert_int_eq(uplink_of(sys_of("healthy"), 0, "mlx5_0", &gts, &width), 1);
	ck_assert(gts == 32.0);
	ck_assert_int_eq(width, 16);
	/* Its uplink down-trained: narrower than the GPU's and the NIC's own links. */
	ck_assert_int_eq(uplink_of(sys_of("uplink-x8"), 1, "mlx5_1", &gts, &width), 1);
	ck_assert(gts == 32.0);
	ck_assert_int_eq(width, 8);
	load("uplink-x8", &t);
	ck_assert_int_eq(t.gpus[0].pci.link.cur_width, 16);
	ck_assert_int_eq(t.nics[nic_named(&t, "mlx5_0")].pci.link.cur_width, 16);
	gdrb_topo_free(&t);
	/* No switch shared: through the host bridge, across sockets. */
	ck_assert_int_eq(uplink_of(sys_of("phb"), 0, "mlx5_0", &gts, &width), 0);
	ck_assert(gts == 0 && width == 0);
	ck_assert_int_eq(uplink_of(sys_of("xsocket"), 0, "mlx5_0", &gts, &width), 0);

	/* Two switches (PXB): the link between them is on the way up; a narrower one there wins. */
	memset(&a, 0, sizeof(a));
	snprintf(a.host_bridge, sizeof(a.host_bridge), "pci0000:00");
	a.nchain = 6;
	for (width = 0; width < a.nchain; width++) {
		snprintf(a.chain[width], GDRB_BDF_LEN, "0000:%02x:00.0", width + 1);
		a.chain_link[width] = (struct gdrb_pci_link){ .cur_gts = 32, .cur_width = 16 };
	}
	b = a;
	snprintf(b.chain[4], GDRB_BDF_LEN, "0000:40:00.0");
	snprintf(b.chain[5], GDRB_BDF_LEN, "0000:41:00.0");
	a.chain_link[2] = b.chain_link[2] = (struct gdrb_pci_link){ .cur_gts = 16, .cur_width = 16 };
	a.chain_link[5].cur_width = 4;  /* the GPU's own link is not the uplink */
	ck_assert_int_eq(gdrb_topo_shared_uplink(&a, &b, &gts, &width), 1);
	ck_assert(gts == 16.0);
	ck_assert_int_eq(width, 16);
	/* Across generations by data rate: Gen3 x8 (7.88 GB/s) under Gen2 x16 (8 GB/s after 8b/10b). */
	a.chain_link[2] = (struct gdrb_pci_link){ .cur_gts = 5, .cur_width = 16 };
	a.chain_link[1] = (struct gdrb_pci_link){ .cur_gts = 8, .cur_width = 8 };
	ck_assert_int_eq(gdrb_topo_shared_uplink(&a, &b, &gts, &width), 1);
	ck_assert(gts == 8.0);
	ck_assert_int_eq(width, 8);

	/* An attribute on the way garbled or missing: not known, never a guess. */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s/sys'", sys_of("healthy"), dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	put(sys, "devices/pci0000:10/0000:10:01.0/current_link_speed", "fast\n");
	ck_assert_int_eq(uplink_of(sys, 0, "mlx5_0", &gts, &width), -ENODATA);
	ck_assert(gts == 0 && width == 0);
	put(sys, "devices/pci0000:10/0000:10:01.0/current_link_speed", "32.0 GT/s PCIe\n");
	ck_assert_int_eq(uplink_of(sys, 0, "mlx5_0", &gts, &width), 1);
	snprintf(cmd, sizeof(cmd), "%s/devices/pci0000:10/0000:10:01.0/0000:11:00.0/current_link_width", sys);
	ck_assert_int_eq(unlink(cmd), 0);
	ck_assert_int_eq(uplink_of(sys, 0, "mlx5_0", &gts, &width), -ENODATA);
	/* The GPU's own link garbled: its speed not known, its width still read. */
	put(sys, "devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/0000:13:00.0/current_link_speed",
	    "32.0 GT/s PCIe\x1b[2J\n");
	put(sys, "devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/0000:13:00.0/current_link_width",
	    "x16\n");
	ck_assert_int_eq(gdrb_topo_load(sys, &t), 0);
	ck_assert(t.gpus[0].pci.link.cur_gts == 0);
	ck_assert_int_eq(t.gpus[0].pci.link.cur_width, 0);
	ck_assert(t.gpus[0].pci.link.max_gts == 32.0);
	gdrb_topo_free(&t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_roce)
{
	const struct gdrb_topo_port *p;
	struct gdrb_topo t;

	load("roce", &t);
	p = &t.nics[0].ports[0];
	ck_assert_str_eq(p->link_layer, "Ethernet");
	ck_assert_str_eq(p->netdev, "enp0s0np0");
	ck_assert_int_eq(p->netdev_mtu, 1500);
	ck_assert_int_eq(p->ngids, 4);
	ck_assert_int_eq(p->nv2, 2);
	/* IPv4-mapped (index 3) is preferred over link-local (index 1). */
	ck_assert_int_eq(p->roce_v2_gid, 3);
	ck_assert_str_eq(p->roce_v2_gid_text, "0000:0000:0000:0000:0000:ffff:0a00:0001");
	gdrb_topo_free(&t);

	load("roce-nov2", &t);
	p = &t.nics[1].ports[0];
	ck_assert_int_eq(p->roce_v2_gid, -1);
	ck_assert_int_eq(p->nv2, 0);
	ck_assert_int_eq(p->ngids, 2);
	ck_assert_int_eq(p->netdev_mtu, 9000);
	gdrb_topo_free(&t);

	/* Without the GID part: the same ports, no GID read (what the benchmarks load). */
	ck_assert_int_eq(gdrb_topo_load_parts(sys_of("roce"), 0, &t), 0);
	p = &t.nics[0].ports[0];
	ck_assert_str_eq(p->link_layer, "Ethernet");
	ck_assert_str_eq(p->state_name, "ACTIVE");
	ck_assert_int_eq(p->ngids, 0);
	ck_assert_int_eq(p->roce_v2_gid, -1);
	ck_assert_str_eq(p->netdev, "");
	gdrb_topo_free(&t);

	ck_assert_int_eq(gdrb_roce_mtu(1500), 1024);
	ck_assert_int_eq(gdrb_roce_mtu(9000), 4096);
	ck_assert_int_eq(gdrb_roce_mtu(4200), 4096);
	ck_assert_int_eq(gdrb_roce_mtu(4000), 2048);
	ck_assert_int_eq(gdrb_roce_mtu(100), 0);
}
END_TEST

/* Where BAR1 sits in "resource" depends on the BARs before it: each layout, and none. */
START_TEST(test_bar1)
{
	static const struct {
		const char *fixture;
		unsigned device;
		uint64_t bar1;
	} layouts[] = {
		{ "a100", 0x20b0, 64 * GIB },           /* 32-bit BAR0: BAR1 on line 1 */
		{ "healthy", 0x2330, 128 * GIB },       /* H100, 64-bit BAR0: line 2 */
		{ "b200", 0x2901, 256 * GIB },          /* as H100 */
	};
	struct gdrb_topo t;
	size_t i, g;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		load(layouts[i].fixture, &t);
		ck_assert_uint_eq(t.ngpus, 2);
		for (g = 0; g < t.ngpus; g++) {
			ck_assert_uint_eq(t.gpus[g].pci.device, layouts[i].device);
			ck_assert_msg(t.gpus[g].bar1_bytes == layouts[i].bar1,
				      "%s GPU %zu: BAR1 %llu bytes, expected %llu", layouts[i].fixture,
				      g, (unsigned long long)t.gpus[g].bar1_bytes,
				      (unsigned long long)layouts[i].bar1);
		}
		gdrb_topo_free(&t);
	}
	/* H100s: a small BAR1 on the first GPU, none assigned on the second. */
	load("smallbar", &t);
	ck_assert_uint_eq(t.gpus[0].bar1_bytes, 256u << 20);
	ck_assert_uint_eq(t.gpus[1].bar1_bytes, 0);
	gdrb_topo_free(&t);
}
END_TEST

#define RES_ZERO "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"

/* The resource text itself: which lines count, and which flags. */
START_TEST(test_bar1_parse)
{
	static const char a100[] =
		"0x00000000e0000000 0x00000000e0ffffff 0x0000000000040200\n"
		"0x0000010000000000 0x0000010fffffffff 0x000000000014220c\n" RES_ZERO
		"0x0000011000000000 0x0000011001ffffff 0x000000000014220c\n" RES_ZERO RES_ZERO;
	static const char h100[] =
		"0x00000000e0000000 0x00000000e0ffffff 0x0000000000140204\n" RES_ZERO
		"0x0000010000000000 0x0000011fffffffff 0x000000000014220c\n" RES_ZERO
		"0x0000012000000000 0x0000012001ffffff 0x000000000014220c\n" RES_ZERO;
	/* BAR1 released (start 0, its size kept, IORESOURCE_UNSET): the 32 MiB BAR is not it. */
	static const char unset[] =
		"0x00000000e0000000 0x00000000e0ffffff 0x0000000000140204\n" RES_ZERO
		"0x0000000000000000 0x0000001fffffffff 0x000000002014220c\n" RES_ZERO
		"0x0000012000000000 0x0000012001ffffff 0x000000000014220c\n" RES_ZERO;
	/* Zeroed (the kernel found no room) after a 32-bit BAR0, BAR3 assigned. */
	static const char zeroed[] =
		"0x00000000e0000000 0x00000000e0ffffff 0x0000000000040200\n" RES_ZERO RES_ZERO
		"0x0000011000000000 0x0000011001ffffff 0x000000000014220c\n" RES_ZERO RES_ZERO;
	static const char disabled[] =
		"0x00000000e0000000 0x00000000e0ffffff 0x0000000000140204\n" RES_ZERO
		"0x0000010000000000 0x0000011fffffffff 0x000000001014220c\n" RES_ZERO RES_ZERO
		RES_ZERO;
	/* BAR0 unassigned: line 1 empty, so BAR1 is on line 2; a non-prefetchable one is no BAR1. */
	static const char no_bar0[] = RES_ZERO RES_ZERO
		"0x0000010000000000 0x0000011fffffffff 0x000000000014220c\n";
	static const char not_prefetchable[] =
		"0x00000000e0000000 0x00000000e0ffffff 0x0000000000040200\n"
		"0x0000010000000000 0x0000010fffffffff 0x0000000000140204\n";
	/* Prefetchable ROM (line 6) and SR-IOV BAR (line 7) larger than any BAR: not BAR1. */
	static const char beyond[] = RES_ZERO RES_ZERO RES_ZERO RES_ZERO RES_ZERO RES_ZERO
		"0x00000000e1000000 0x00000000e107ffff 0x0000000000046200\n"
		"0x0000100000000000 0x00001fffffffffff 0x000000000014220c\n";
	int region = 7;

	ck_assert_uint_eq(gdrb_pci_bar1_bytes(a100, &region), 64 * GIB);
	ck_assert_int_eq(region, 1);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(h100, &region), 128 * GIB);
	ck_assert_int_eq(region, 2);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(unset, &region), 0);
	ck_assert_int_eq(region, -1);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(zeroed, &region), 0);
	ck_assert_int_eq(region, -1);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(disabled, &region), 0);
	ck_assert_int_eq(region, -1);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(no_bar0, &region), 128 * GIB);
	ck_assert_int_eq(region, 2);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(not_prefetchable, &region), 0);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(beyond, &region), 0);
	ck_assert_int_eq(region, -1);
	/* Empty, cut short, unparsable; no newline at the end; region optional. */
	ck_assert_uint_eq(gdrb_pci_bar1_bytes("", &region), 0);
	ck_assert_int_eq(region, -1);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(RES_ZERO "garbage\n", &region), 0);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes("0x0 0xfff 0x200\n0x1000 0x1fff 0x2200", &region),
			  4096);
	ck_assert_int_eq(region, 1);
	ck_assert_uint_eq(gdrb_pci_bar1_bytes(h100, NULL), 128 * GIB);
}
END_TEST

START_TEST(test_node)
{
	struct gdrb_node n;

	load_node("dgx8", &n);
	ck_assert_int_eq(n.iommu, GDRB_IOMMU_PASSTHROUGH);
	ck_assert_int_eq(n.iommu_units, 2);
	ck_assert_int_eq(n.iommu_groups, 40);
	ck_assert_int_eq(n.groups_identity, 40);
	ck_assert_str_eq(n.iommu_args, "intel_iommu=on iommu=pt");
	ck_assert(n.modules_readable && n.mod_nvidia && n.mod_nvidia_peermem && n.mod_ib_uverbs);
	ck_assert(!n.mod_nv_peer_mem);
	ck_assert_str_eq(n.nv_version, "570.86.15");
	ck_assert_int_eq(n.nv_major, 570);
	ck_assert_int_eq(n.nv_open, 1);
	ck_assert_str_eq(n.kernel, "6.8.0-45-generic");
	ck_assert(n.memlock_known && n.memlock_unlimited);
	ck_assert(!n.cap_ipc_lock);

	load_node("iommu-dma", &n);
	ck_assert_int_eq(n.iommu, GDRB_IOMMU_TRANSLATED);
	ck_assert_int_eq(n.groups_dma, 10);
	load_node("iommu-off", &n);
	ck_assert_int_eq(n.iommu, GDRB_IOMMU_OFF);
	ck_assert_int_eq(n.iommu_groups, 0);
	ck_assert_str_eq(gdrb_iommu_mode_name(n.iommu), "off");

	load_node("nopeermem", &n);
	ck_assert(!n.mod_nvidia_peermem && n.mod_nvidia && n.mod_ib_uverbs);
	ck_assert_int_eq(n.nv_open, 0);
	ck_assert_int_eq(n.nv_major, 535);
	ck_assert_str_eq(n.kernel, "5.4.0-190-generic");

	load_node("memlock", &n);
	ck_assert(n.memlock_known && !n.memlock_unlimited);
	ck_assert_uint_eq(n.memlock_bytes, 65536);

	load_node("nogpu", &n);
	ck_assert(!n.mod_nvidia && !n.nv_version[0]);
	ck_assert_int_eq(n.nv_open, -1);
}
END_TEST

START_TEST(test_cmdline)
{
	static const char line[] = "BOOT_IMAGE=/vmlinuz ro intel_iommu=on,sm_on iommu=pt "
				   "quiet -- iommu=off";
	char buf[32];
	uint64_t bytes;
	bool unlimited;

	/* After "--" the words belong to init: iommu=off there is not the kernel's. */
	ck_assert_str_eq(gdrb_cmdline_value(line, "iommu", buf, sizeof(buf)), "pt");
	ck_assert_str_eq(gdrb_cmdline_value(line, "intel_iommu", buf, sizeof(buf)), "on,sm_on");
	ck_assert_ptr_null(gdrb_cmdline_value(line, "amd_iommu", buf, sizeof(buf)));
	ck_assert_ptr_null(gdrb_cmdline_value(line, "quiet", buf, sizeof(buf)));

	ck_assert_int_eq(gdrb_kernel_at_least("5.4.0-190-generic", 5, 12), 0);
	ck_assert_int_eq(gdrb_kernel_at_least("5.12.0", 5, 12), 1);
	ck_assert_int_eq(gdrb_kernel_at_least("6.1.0-28-amd64", 5, 12), 1);
	ck_assert_int_eq(gdrb_kernel_at_least("4.18.0-553.el8", 5, 12), 0);
	ck_assert_int_eq(gdrb_kernel_at_least("", 5, 12), -1);

	ck_assert_int_eq(gdrb_parse_memlock("Max locked memory  8388608  8388608  bytes\n",
					    &bytes, &unlimited), 0);
	ck_assert_uint_eq(bytes, 8388608);
	ck_assert(!unlimited);
	ck_assert_int_eq(gdrb_parse_memlock("Max locked memory unlimited unlimited bytes",
					    &bytes, &unlimited), 0);
	ck_assert(unlimited);
	ck_assert_int_eq(gdrb_parse_memlock("Max open files 1024 1024 files", &bytes, &unlimited),
			 -ENOENT);
	ck_assert_int_eq(gdrb_parse_memlock("Max locked memory 18446744073709551614 0 bytes",
					    &bytes, &unlimited), 0);
	ck_assert_uint_eq(bytes, 18446744073709551614ull);
}
END_TEST

/* A limit the kernel would never write is not known: neither wrapped to a small one nor unlimited. */
START_TEST(test_memlock_malformed)
{
	static const struct {
		const char *text;
		int rc;
	} cases[] = {
		{ "Max locked memory 18446744073709551616 18446744073709551616 bytes", -ERANGE },
		{ "Max locked memory 18446744073709551615 unlimited bytes", -ERANGE },
		{ "Max locked memory 36893488147419103232 0 bytes", -ERANGE },
		{ "Max locked memory 99999999999999999999999999999999999999 0 bytes", -ERANGE },
		{ "Max locked memory 000000000000000000000000000000000018446744073709551616 0 bytes", -ERANGE },
		{ "Max locked memory -1 -1 bytes", -EINVAL },
		{ "Max locked memory +65536 65536 bytes", -EINVAL },
		{ "Max locked memory 0x10000 0x10000 bytes", -EINVAL },
		{ "Max locked memory 65536kB 65536 bytes", -EINVAL },
		{ "Max locked memory unlimitedX unlimited bytes", -EINVAL },
		{ "Max locked memory   \n", -ENOENT },
	};
	uint64_t bytes;
	bool unlimited;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(gdrb_parse_memlock(cases[i].text, &bytes, &unlimited) == cases[i].rc,
			      "'%s' not refused with %d", cases[i].text, cases[i].rc);
		ck_assert(!unlimited);
		ck_assert_uint_eq(bytes, 0);
	}
	/* Leading zeros are still the number they write. */
	ck_assert_int_eq(gdrb_parse_memlock("Max locked memory 0000000000000000000000000000000000065536 0 bytes",
					    &bytes, &unlimited), 0);
	ck_assert_uint_eq(bytes, 65536);
}
END_TEST

START_TEST(test_sysfs_helpers)
{
	char path[PATH_MAX], rel[PATH_MAX], text[64];
	struct gdrb_dir dir;
	long v;

	ck_assert_int_eq(gdrb_path(path, sizeof(path), sys_of("dgx8"), "class/infiniband"), 0);
	ck_assert_int_eq(gdrb_dir_list(path, &dir), 0);
	ck_assert_uint_eq(dir.n, 8);
	ck_assert_str_eq(dir.names[0], "mlx5_0");
	gdrb_dir_free(&dir);
	ck_assert_int_eq(gdrb_dir_list("/nonexistent/gdrb", &dir), -ENOENT);
	ck_assert_int_eq(gdrb_path(path, 8, "/sys", "bus/pci/devices"), -ENAMETOOLONG);

	ck_assert_int_eq(gdrb_path(path, sizeof(path), sys_of("dgx8"),
				   "bus/pci/devices/0000:13:00.0/vendor"), 0);
	ck_assert_int_eq(gdrb_read_long(path, &v), 0);
	ck_assert_int_eq(v, 0x10de);
	ck_assert_int_eq(gdrb_read_text(path, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "0x10de");

	ck_assert_int_eq(gdrb_path(path, sizeof(path), sys_of("dgx8"),
				   "bus/pci/devices/0000:13:00.0"), 0);
	ck_assert_int_eq(gdrb_realpath_under(sys_of("dgx8"), path, rel, sizeof(rel)), 0);
	ck_assert_str_eq(rel, "devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/"
			      "0000:13:00.0");
	ck_assert_int_eq(gdrb_realpath_under(sys_of("healthy"), path, rel, sizeof(rel)), -EXDEV);
}
END_TEST

START_TEST(test_json)
{
	struct gdrb_json j;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	gdrb_json_init(&j, f);
	gdrb_json_open_object(&j, NULL);
	gdrb_json_string(&j, "s", "a\"b\\c\nd\x01");
	gdrb_json_int(&j, "i", -3);
	gdrb_json_number(&j, "gts", 2.5);
	gdrb_json_number(&j, "nan", NAN);
	gdrb_json_open_array(&j, "a");
	gdrb_json_bool(&j, NULL, true);
	gdrb_json_string(&j, NULL, NULL);
	gdrb_json_close_array(&j);
	gdrb_json_open_array(&j, "empty");
	gdrb_json_close_array(&j);
	gdrb_json_close_object(&j);
	fclose(f);
	ck_assert_str_eq(text, "{\n"
			       "  \"s\": \"a\\\"b\\\\c\\nd\\u0001\",\n"
			       "  \"i\": -3,\n"
			       "  \"gts\": 2.5,\n"
			       "  \"nan\": null,\n"
			       "  \"a\": [\n"
			       "    true,\n"
			       "    null\n"
			       "  ],\n"
			       "  \"empty\": []\n"
			       "}\n");
	free(text);
}
END_TEST

/* A file under dir, its parent folders made. */
static void put(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = path + strlen(dir) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_meminfo_available)
{
	uint64_t v = 0;

	ck_assert_int_eq(gdrb_meminfo_available("MemTotal:       32000000 kB\n"
						"MemFree:         1000 kB\n"
						"MemAvailable:   22874700 kB\n", &v), 0);
	ck_assert_uint_eq(v, UINT64_C(22874700) * 1024);
	ck_assert_int_eq(gdrb_meminfo_available("MemTotal: 1 kB\nMemFree: 2 kB\n", &v), -1);
	ck_assert_int_eq(gdrb_meminfo_available("", &v), -1);
	/* kB that overflow 64 bits in bytes are not a figure */
	ck_assert_int_eq(gdrb_meminfo_available("MemAvailable: 18014398509481984 kB\n", &v), -1);
}
END_TEST

/* cgroup v2 (the tightest of a cgroup and its ancestors) and v1, on fixture trees. */
START_TEST(test_cgroup_room)
{
	char dir[] = "/tmp/gdrb-cgroup.XXXXXX", where[256], v1[PATH_MAX];
	uint64_t room = 0;
	struct gdrb_mem_room r;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* v2: the parent's limit is tighter than the leaf's */
	put(dir, "user.slice/memory.max", "1073741824\n");
	put(dir, "user.slice/memory.current", "536870912\n");
	put(dir, "user.slice/job/memory.max", "max\n");
	put(dir, "user.slice/job/memory.current", "4096\n");
	ck_assert_int_eq(gdrb_cgroup_room("0::/user.slice/job\n", dir, &room, where, sizeof(where)), 0);
	ck_assert_uint_eq(room, 536870912);
	ck_assert_str_eq(where, "/user.slice");
	put(dir, "user.slice/job/memory.max", "67108864\n");
	ck_assert_int_eq(gdrb_cgroup_room("0::/user.slice/job\n", dir, &room, where, sizeof(where)), 0);
	ck_assert_uint_eq(room, 67108864 - 4096);
	ck_assert_str_eq(where, "/user.slice/job");
	/* usage above the limit: no room, not a wrapped huge one */
	put(dir, "user.slice/job/memory.current", "67108865\n");
	ck_assert_int_eq(gdrb_cgroup_room("0::/user.slice/job\n", dir, &room, where, sizeof(where)), 0);
	ck_assert_uint_eq(room, 0);
	/* no limit anywhere; garbage is no limit either */
	ck_assert_int_eq(gdrb_cgroup_room("0::/other\n", dir, &room, where, sizeof(where)), -1);
	put(dir, "bad/memory.max", "lots\n");
	ck_assert_int_eq(gdrb_cgroup_room("0::/bad\n", dir, &room, where, sizeof(where)), -1);
	ck_assert_int_eq(gdrb_cgroup_room("", dir, &room, where, sizeof(where)), -1);

	/* v1 beside a v2 line with no controllers (hybrid), "unlimited" is 2^63 - 4096 */
	put(dir, "memory/jobs/memory.limit_in_bytes", "9223372036854771712\n");
	put(dir, "memory/jobs/memory.usage_in_bytes", "100\n");
	put(dir, "memory/jobs/7/memory.limit_in_bytes", "268435456\n");
	put(dir, "memory/jobs/7/memory.usage_in_bytes", "268435356\n");
	ck_assert_int_eq(gdrb_cgroup_room("4:memory:/jobs/7\n1:cpu,cpuacct:/\n0::/\n", dir, &room,
					  where, sizeof(where)), 0);
	ck_assert_uint_eq(room, 100);
	ck_assert_str_eq(where, "/jobs/7");
	ck_assert_int_eq(gdrb_cgroup_room("4:cpu,memory:/jobs\n", dir, &room, where, sizeof(where)),
			 -1);
	ck_assert_int_eq(gdrb_cgroup_room("4:pids:/jobs/7\n", dir, &room, where, sizeof(where)), -1);

	/* Both figures from a procfs tree: the smaller counts. */
	snprintf(v1, sizeof(v1), "%s/proc", dir);
	put(dir, "proc/meminfo", "MemAvailable: 1048576 kB\n");
	put(dir, "proc/self/cgroup", "4:memory:/jobs/7\n");
	gdrb_mem_room(v1, dir, &r);
	ck_assert(r.have_available && r.have_cgroup);
	ck_assert_uint_eq(r.available, (uint64_t)1 << 30);
	ck_assert_uint_eq(gdrb_mem_room_bytes(&r), 100);
	put(dir, "proc/self/cgroup", "0::/\n");
	gdrb_mem_room(v1, dir, &r);
	ck_assert(!r.have_cgroup);
	ck_assert_uint_eq(gdrb_mem_room_bytes(&r), (uint64_t)1 << 30);
	snprintf(v1, sizeof(v1), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(v1), 0);
}
END_TEST

/*
 * A FIFO, a directory or a link planted where an attribute belongs is refused at
 * once (a FIFO without a writer used to block the reader for good; the test's
 * timeout catches that), and a regular file is read no further than asked.
 */
START_TEST(test_sysfs_nonblocking)
{
	char dir[] = "/tmp/gdrb-sysfs.XXXXXX", path[PATH_MAX], target[PATH_MAX], text[8];
	uint8_t bin[4];
	size_t got;
	long v;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "state", "4: ACTIVE\n");
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(gdrb_read_text(path, text, sizeof(text)), -EINVAL);
	ck_assert_str_eq(text, "");
	ck_assert_int_eq(gdrb_read_long(path, &v), -EINVAL);
	ck_assert_int_eq(gdrb_read_bin(path, bin, sizeof(bin), &got), -EINVAL);
	ck_assert_uint_eq(got, 0);
	snprintf(path, sizeof(path), "%s/sub", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(gdrb_read_text(path, text, sizeof(text)), -EINVAL);
	snprintf(target, sizeof(target), "%s/state", dir);
	snprintf(path, sizeof(path), "%s/link", dir);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(gdrb_read_text(path, text, sizeof(text)), -ELOOP);
	/* Bounded: 7 bytes of a longer file. */
	ck_assert_int_eq(gdrb_read_text(target, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "4: ACTI");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* A limits file that is a FIFO or holds 2^64: the memlock limit is not known, and says why. */
START_TEST(test_node_memlock_unreadable)
{
	char dir[] = "/tmp/gdrb-proc.XXXXXX", sys[64], proc[64], path[PATH_MAX];
	struct gdrb_node n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	put(dir, "sys/bus/pci/devices/.keep", "");
	put(dir, "proc/cmdline", "quiet\n");
	put(dir, "proc/self/limits", "Max locked memory 18446744073709551616 18446744073709551616 bytes\n");
	ck_assert_int_eq(gdrb_node_load(sys, proc, false, &n), 0);
	ck_assert(!n.memlock_known && !n.memlock_unlimited);
	ck_assert_str_eq(n.memlock_why, "its soft limit is out of range");
	snprintf(path, sizeof(path), "%s/self/limits", proc);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(gdrb_node_load(sys, proc, false, &n), 0);
	ck_assert(!n.memlock_known);
	ck_assert_str_eq(n.memlock_why, "not a regular file");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* One string through a writer (gdrb_json_quote, gdrb_text_put), as text. */
static char *written(void (*writer)(FILE *, const char *), const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	writer(f, s);
	fclose(f);
	return text;
}

/*
 * sysfs strings are bytes: whatever is not valid UTF-8 (RFC 3629) becomes
 * U+FFFD, one per byte, so the document always parses; valid text is kept.
 */
START_TEST(test_json_utf8)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		/* valid: kept as they are */
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "\xe2\x82\xac \xf0\x9f\x98\x80", "\"\xe2\x82\xac \xf0\x9f\x98\x80\"" },
		{ "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf", "\"\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf\"" },
		/* lone continuation bytes */
		{ "a\x80" "b", "\"a\\ufffdb\"" },
		{ "\xbf\xbf", "\"\\ufffd\\ufffd\"" },
		/* overlong forms of '/' and NUL */
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },
		{ "\xc1\xbf", "\"\\ufffd\\ufffd\"" },
		{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"" },
		{ "\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
		/* truncated sequences, at the end and before ASCII */
		{ "x\xc3", "\"x\\ufffd\"" },
		{ "\xe2\x82", "\"\\ufffd\\ufffd\"" },
		{ "\xe2\x82z", "\"\\ufffd\\ufffdz\"" },
		{ "\xf0\x9f\x98", "\"\\ufffd\\ufffd\\ufffd\"" },
		/* UTF-16 surrogates encoded in UTF-8 (CESU), code points above U+10FFFF */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },
		{ "\xed\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\"" },
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
		{ "\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
		{ "\xff\xfe", "\"\\ufffd\\ufffd\"" },
		/* control characters: escaped, DEL is valid JSON as it is */
		{ "\x01\x1f\x7f\b\f", "\"\\u0001\\u001f\x7f\\u0008\\u000c\"" },
		{ "\t\r\n", "\"\\t\\r\\n\"" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = written(gdrb_json_quote, cases[i].in);

		ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu: got %s, want %s", i, got,
			      cases[i].want);
		free(got);
	}
}
END_TEST

/*
 * The same strings for a terminal (gdrb_text_put): valid UTF-8 kept; every
 * control and every byte of no valid sequence as \xHH, so none reaches it raw.
 */
START_TEST(test_text_for_terminal)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
		{ "a\\b", "a\\b" },
		/* OSC retitle, CSI clear, CR, BEL, tab, DEL */
		{ "\x1b]0;x\x07\x1b[2J\r\t\x7f", "\\x1b]0;x\\x07\\x1b[2J\\x0d\\x09\\x7f" },
		/* C1 CSI as UTF-8 (U+009B), U+00A0 (the first after C1) kept, a lone 0x9b */
		{ "\xc2\x9b" "1m\xc2\xa0\x9b", "\\xc2\\x9b1m\xc2\xa0\\x9b" },
		/* invalid sequences: each byte */
		{ "\xc0\xaf\xe2\x82", "\\xc0\\xaf\\xe2\\x82" },
		{ "\n", "\\x0a" },
		{ "", "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = written(gdrb_text_put, cases[i].in);

		ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu: got %s, want %s", i, got,
			      cases[i].want);
		free(got);
	}
}
END_TEST

/* Whole characters only: a cut never leaves half an escape or half a UTF-8 sequence. */
START_TEST(test_text_clean)
{
	char out[16];

	ck_assert_uint_eq(gdrb_text_clean(out, sizeof(out), "a\x1b[2J\x07" "b"), 13);
	ck_assert_str_eq(out, "a\\x1b[2J\\x07b");
	ck_assert_uint_eq(gdrb_text_clean(out, 7, "ab\x1b[2J"), 6);
	ck_assert_str_eq(out, "ab\\x1b");
	ck_assert_uint_eq(gdrb_text_clean(out, 5, "ab\x1b[2J"), 2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(gdrb_text_clean(out, 4, "ab\xc3\xa9"), 2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(gdrb_text_clean(out, 1, "abc"), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

/*
 * What gdrb_err, gdrb_warn and gdrb_usage_err write to stderr: a host name and a
 * device name carrying terminal escapes (as sysfs or a UTS namespace can hold) come
 * out with each control as \xHH on one line; the numbers of the message unchanged.
 */
START_TEST(test_log_clean)
{
	static const char host[] = "n\x1b]0;pwned\x07", dev[] = "mlx5_0\x1b[2J\x07\r\n\xc2\x9b" "1m";
	char path[] = "/tmp/gdrb-log.XXXXXX", text[1024];
	int fd = mkstemp(path), saved = dup(2);
	size_t got;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(saved, 0);
	fflush(stderr);
	ck_assert_int_eq(dup2(fd, 2), 2);
	gdrb_log_init("/x/gdrb_test");
	gdrb_usage_err("--ib-dev: expected NAME, got '%s'", dev);
	gdrb_log_set_rank(3, host);
	gdrb_warn("port %d of %s: %.1f Gb/s", 1, dev, 400.0);
	gdrb_err("%s", "caf\xc3\xa9\ttab");
	fflush(stderr);
	ck_assert_int_eq(dup2(saved, 2), 2);
	close(saved);
	f = fdopen(fd, "r");
	ck_assert_ptr_nonnull(f);
	rewind(f);
	got = fread(text, 1, sizeof(text) - 1, f);
	text[got] = '\0';
	fclose(f);
	unlink(path);
	ck_assert_str_eq(text,
			 "gdrb_test: --ib-dev: expected NAME, got 'mlx5_0\\x1b[2J\\x07\\x0d\\x0a\\xc2\\x9b1m'\n"
			 "gdrb_test: rank 3 (n\\x1b]0;pwned\\x07): warning: port 1 of "
			 "mlx5_0\\x1b[2J\\x07\\x0d\\x0a\\xc2\\x9b1m: 400.0 Gb/s\n"
			 "gdrb_test: rank 3 (n\\x1b]0;pwned\\x07): error: caf\xc3\xa9\\x09tab\n");
	gdrb_log_set_rank(-1, NULL);
}
END_TEST

static Suite *topo_suite(void)
{
	Suite *s = suite_create("topo");
	TCase *tc;

	fixtures = unit_fixtures();
	tc = tcase_create("load");
	tcase_add_test(tc, test_load_dgx8);
	tcase_add_test(tc, test_load_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("distance");
	tcase_add_test(tc, test_distance);
	tcase_add_test(tc, test_nearest);
	tcase_add_test(tc, test_path);
	tcase_add_test(tc, test_shared_bridge);
	suite_add_tcase(s, tc);
	tc = tcase_create("acs");
	tcase_add_test(tc, test_acs_fixtures);
	tcase_add_test(tc, test_acs_parse);
	suite_add_tcase(s, tc);
	tc = tcase_create("devices");
	tcase_add_test(tc, test_links);
	tcase_add_test(tc, test_shared_uplink);
	tcase_add_test(tc, test_roce);
	tcase_add_test(tc, test_bar1);
	tcase_add_test(tc, test_bar1_parse);
	suite_add_tcase(s, tc);
	tc = tcase_create("node");
	tcase_add_test(tc, test_node);
	tcase_add_test(tc, test_cmdline);
	tcase_add_test(tc, test_memlock_malformed);
	tcase_add_test(tc, test_node_memlock_unreadable);
	suite_add_tcase(s, tc);
	tc = tcase_create("helpers");
	tcase_add_test(tc, test_sysfs_helpers);
	tcase_add_test(tc, test_sysfs_nonblocking);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_json_utf8);
	tcase_add_test(tc, test_text_for_terminal);
	tcase_add_test(tc, test_text_clean);
	tcase_add_test(tc, test_log_clean);
	tcase_add_test(tc, test_meminfo_available);
	tcase_add_test(tc, test_cgroup_room);
	suite_add_tcase(s, tc);
	return s;
}

const struct unit_test unit_test = { .suite = topo_suite };
