/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_sysfs.h"
#include "gdrb_topo.h"

#define PCI_CLASS_VGA 0x0300
#define PCI_CLASS_3D 0x0302

/* Config space layout (PCI Local Bus and PCI Express Base specifications). */
#define PCI_STATUS 0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_CAPABILITY_LIST 0x34
#define PCI_CAP_ID_EXP 0x10
#define PCI_CFG_HEADER 0x40
#define PCI_CFG_LEGACY 0x100
#define PCI_CFG_EXTENDED 0x1000
#define PCI_EXT_CAP_ID_ACS 0x000d

/* RoCE headers the kernel takes off the netdev MTU (GRH, UDP, BTH, XRC, AtomicETH, ICRC). */
#define ROCE_HEADER_BYTES (40 + 8 + 12 + 4 + 28 + 4)

static bool is_bdf(const char *s)
{
	unsigned dom, bus, dev, fn;
	int n = 0;

	return sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) == 4 && s[n] == '\0' &&
	       strlen(s) < GDRB_BDF_LEN;
}

int gdrb_pci_bdf_of_bus_id(const char *bus_id, char bdf[GDRB_BDF_LEN])
{
	enum { BDF_CHARS = 12 };        /* "dddd:bb:dd.f" */
	size_t n = strlen(bus_id), i;

	/* CUDA pads the domain to 8 digits: the last 12 characters are sysfs's address. */
	if (n < BDF_CHARS)
		return -EINVAL;
	for (i = 0; i < BDF_CHARS; i++)
		bdf[i] = (char)tolower((unsigned char)bus_id[n - BDF_CHARS + i]);
	bdf[i] = '\0';
	return is_bdf(bdf) ? 0 : -EINVAL;
}

static int fn_long(const char *root, const char *bdf, const char *attr, long *v)
{
	char path[PATH_MAX];
	int rc = gdrb_path(path, sizeof(path), root, "bus/pci/devices/%s/%s", bdf, attr);

	return rc ? rc : gdrb_read_long(path, v);
}

static void fn_text(const char *root, const char *bdf, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];

	buf[0] = '\0';
	if (gdrb_path(path, sizeof(path), root, "bus/pci/devices/%s/%s", bdf, attr) == 0)
		gdrb_read_text(path, buf, len);
}

double gdrb_pci_parse_speed(const char *text)
{
	char *end;
	double v = strtod(text, &end);

	return end == text || v < 0 ? 0 : v;
}

double gdrb_pci_link_speed(const char *text)
{
	size_t n = strspn(text, "0123456789");

	/* Digits, an optional fraction, the unit: no sign, exponent or hex that strtod would take. */
	if (n == 0)
		return 0;
	if (text[n] == '.' && isdigit((unsigned char)text[n + 1]))
		n += 1 + strspn(text + n + 1, "0123456789");
	if (n > 12 || (strcmp(text + n, " GT/s") && strcmp(text + n, " GT/s PCIe")))
		return 0;
	return strtod(text, NULL);
}

double gdrb_pci_link_gbytes(double gts, int width)
{
	double code;

	if (!(gts > 0) || width <= 0)
		return 0;
	code = gts <= 5.0 ? 8.0 / 10 : gts <= 32.0 ? 128.0 / 130 : 236.0 / 256;
	return gts * code * width / 8;
}

int gdrb_pci_gen(double gts)
{
	static const double gen_gts[] = { 2.5, 5, 8, 16, 32, 64, 128 };
	size_t i;

	if (gts <= 0)
		return 0;
	for (i = 0; i < sizeof(gen_gts) / sizeof(gen_gts[0]); i++)
		if (gts < gen_gts[i] * 1.25)
			return (int)i + 1;
	return (int)i;
}

static void read_link(const char *root, const char *bdf, struct gdrb_pci_link *link)
{
	char text[64];
	long v;

	memset(link, 0, sizeof(*link));
	fn_text(root, bdf, "current_link_speed", text, sizeof(text));
	link->cur_gts = gdrb_pci_link_speed(text);
	fn_text(root, bdf, "max_link_speed", text, sizeof(text));
	link->max_gts = gdrb_pci_link_speed(text);
	if (fn_long(root, bdf, "current_link_width", &v) == 0 && v > 0 && v <= 32)
		link->cur_width = (int)v;
	if (fn_long(root, bdf, "max_link_width", &v) == 0 && v > 0 && v <= 32)
		link->max_width = (int)v;
}

void gdrb_pci_link_target(const struct gdrb_pci_fn *fn, double *gts, int *width)
{
	*gts = fn->link.max_gts;
	*width = fn->link.max_width;
	if (fn->up_link.max_gts > 0 && (*gts <= 0 || fn->up_link.max_gts < *gts))
		*gts = fn->up_link.max_gts;
	if (fn->up_link.max_width > 0 && (*width <= 0 || fn->up_link.max_width < *width))
		*width = fn->up_link.max_width;
}

/* Fill fn from <root>/bus/pci/devices/<bdf>: path, NUMA node, ids, link. */
static int load_pci_fn(const char *root, const char *bdf, struct gdrb_pci_fn *fn)
{
	char path[PATH_MAX], rel[PATH_MAX], *save = NULL, *part;
	long v;
	int rc, i;

	memset(fn, 0, sizeof(*fn));
	fn->numa_node = -1;
	snprintf(fn->bdf, sizeof(fn->bdf), "%s", bdf);
	rc = gdrb_path(path, sizeof(path), root, "bus/pci/devices/%s", bdf);
	if (!rc)
		rc = gdrb_realpath_under(root, path, rel, sizeof(rel));
	if (rc)
		return rc;
	/* devices/pci0000:00/0000:00:01.0/0000:01:00.0/...: bridges, then the function. */
	for (part = strtok_r(rel, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (!strncmp(part, "pci", 3) && !fn->host_bridge[0] && !fn->nchain)
			snprintf(fn->host_bridge, sizeof(fn->host_bridge), "%s", part);
		else if (is_bdf(part) && fn->nchain < GDRB_TOPO_MAX_HOPS)
			snprintf(fn->chain[fn->nchain++], GDRB_BDF_LEN, "%s", part);
	}
	if (!fn->nchain || strcmp(fn->chain[fn->nchain - 1], bdf))
		return -EINVAL;
	if (fn_long(root, bdf, "numa_node", &v) == 0)
		fn->numa_node = (int)v;
	if (fn_long(root, bdf, "vendor", &v) == 0)
		fn->vendor = (unsigned)v;
	if (fn_long(root, bdf, "device", &v) == 0)
		fn->device = (unsigned)v;
	if (fn_long(root, bdf, "class", &v) == 0)
		fn->class_code = (unsigned)v;
	for (i = 0; i < fn->nchain; i++)
		read_link(root, fn->chain[i], &fn->chain_link[i]);
	fn->link = fn->chain_link[fn->nchain - 1];
	if (fn->nchain >= 2)
		fn->up_link = fn->chain_link[fn->nchain - 2];
	if (gdrb_path(path, sizeof(path), root, "bus/pci/devices/%s/driver", bdf) == 0)
		gdrb_link_name(path, fn->driver, sizeof(fn->driver));
	return 0;
}

/* Flags of a resource (linux/ioport.h), as sysfs "resource" prints them. */
#define IORESOURCE_MEM 0x00000200
#define IORESOURCE_PREFETCH 0x00002000
#define IORESOURCE_MEM_64 0x00100000
#define IORESOURCE_DISABLED 0x10000000
#define IORESOURCE_UNSET 0x20000000

uint64_t gdrb_pci_bar1_bytes(const char *resource, int *region)
{
	unsigned long long start[3] = { 0 }, end[3] = { 0 }, flags[3] = { 0 };
	const char *line = resource;
	int i;

	if (region)
		*region = -1;
	for (i = 0; i < 3 && line && *line; i++) {
		if (sscanf(line, "%llx %llx %llx", &start[i], &end[i], &flags[i]) != 3)
			start[i] = end[i] = flags[i] = 0;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	/* A 64-bit BAR0 takes line 1 for its upper half (zeros), so BAR1 is on line 2. */
	i = flags[0] & IORESOURCE_MEM_64 || (!flags[0] && !flags[1]) ? 2 : 1;
	if ((flags[i] & (IORESOURCE_MEM | IORESOURCE_PREFETCH)) !=
		    (IORESOURCE_MEM | IORESOURCE_PREFETCH) ||
	    flags[i] & (IORESOURCE_UNSET | IORESOURCE_DISABLED) || end[i] <= start[i])
		return 0;
	if (region)
		*region = i;
	return end[i] - start[i] + 1;
}

static uint64_t read_bar1(const char *root, const char *bdf, int *region)
{
	/* 17 lines of 57 characters at most (BARs, ROM, SR-IOV BARs, bridge windows). */
	char path[PATH_MAX], text[2048];

	*region = -1;
	if (gdrb_path(path, sizeof(path), root, "bus/pci/devices/%s/resource", bdf) ||
	    gdrb_read_text(path, text, sizeof(text)))
		return 0;
	return gdrb_pci_bar1_bytes(text, region);
}

static void *grow(void *arr, size_t n, size_t elem)
{
	/* Arrays grow by one: a node has tens of devices at most. */
	return realloc(arr, (n + 1) * elem);
}

static int load_gpus(const char *root, struct gdrb_topo *topo)
{
	struct gdrb_dir dir;
	char path[PATH_MAX];
	size_t i;
	int rc;

	rc = gdrb_path(path, sizeof(path), root, "bus/pci/devices");
	if (!rc)
		rc = gdrb_dir_list(path, &dir);
	if (rc)
		return rc;
	for (i = 0; i < dir.n; i++) {
		struct gdrb_topo_gpu *gpus;
		long vendor, class_code;
		unsigned base;

		if (fn_long(root, dir.names[i], "vendor", &vendor) ||
		    fn_long(root, dir.names[i], "class", &class_code))
			continue;
		base = (unsigned)class_code >> 8;
		if (vendor != GDRB_PCI_VENDOR_NVIDIA || (base != PCI_CLASS_VGA && base != PCI_CLASS_3D))
			continue;
		gpus = grow(topo->gpus, topo->ngpus, sizeof(*gpus));
		if (!gpus) {
			rc = -ENOMEM;
			break;
		}
		topo->gpus = gpus;
		if (load_pci_fn(root, dir.names[i], &gpus[topo->ngpus].pci))
			continue;
		gpus[topo->ngpus].bar1_bytes = read_bar1(root, dir.names[i],
							 &gpus[topo->ngpus].bar1_region);
		topo->ngpus++;
	}
	gdrb_dir_free(&dir);
	return rc;
}

static bool gid_is_set(const char *gid)
{
	for (; *gid; gid++)
		if (*gid != '0' && *gid != ':')
			return true;
	return false;
}

static void port_text(const char *root, const char *dev, unsigned port, const char *attr,
		      char *buf, size_t len)
{
	char path[PATH_MAX];

	buf[0] = '\0';
	if (gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports/%u/%s", dev, port,
		      attr) == 0)
		gdrb_read_text(path, buf, len);
}

/* "4: ACTIVE" -> 4 and "ACTIVE". */
static int split_state(const char *text, char *name, size_t len)
{
	const char *colon = strchr(text, ':');
	int num = atoi(text);

	snprintf(name, len, "%s", colon ? colon + 1 + (colon[1] == ' ') : text);
	return num;
}

/* GIDs: count them, find the RoCE v2 one to use and the netdev behind them. */
static void load_gids(const char *root, const char *dev, struct gdrb_topo_port *p)
{
	struct gdrb_dir dir;
	char path[PATH_MAX], attr[64], gid[64], type[32], ndev[32];
	int best_rank = 0;
	size_t i;

	if (gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports/%u/gids", dev,
		      p->num) || gdrb_dir_list(path, &dir))
		return;
	for (i = 0; i < dir.n; i++) {
		int rank, idx = atoi(dir.names[i]);

		snprintf(attr, sizeof(attr), "gids/%d", idx);
		port_text(root, dev, p->num, attr, gid, sizeof(gid));
		if (!gid_is_set(gid))
			continue;
		p->ngids++;
		snprintf(attr, sizeof(attr), "gid_attrs/ndevs/%d", idx);
		port_text(root, dev, p->num, attr, ndev, sizeof(ndev));
		if (ndev[0] && !p->netdev[0])
			snprintf(p->netdev, sizeof(p->netdev), "%s", ndev);
		snprintf(attr, sizeof(attr), "gid_attrs/types/%d", idx);
		port_text(root, dev, p->num, attr, type, sizeof(type));
		if (strcmp(type, "RoCE v2"))
			continue;
		p->nv2++;
		/* IPv4-mapped (::ffff:a.b.c.d) routes across subnets; link-local does not. */
		rank = !strncmp(gid, "0000:0000:0000:0000:0000:ffff:", 30) ? 3 :
		       strncmp(gid, "fe80:", 5) ? 2 : 1;
		if (rank > best_rank) {
			best_rank = rank;
			p->roce_v2_gid = idx;
			snprintf(p->roce_v2_gid_text, sizeof(p->roce_v2_gid_text), "%s", gid);
		}
	}
	gdrb_dir_free(&dir);
}

static void load_netdev(const char *root, const char *dev, struct gdrb_topo_port *p)
{
	char path[PATH_MAX];
	struct gdrb_dir dir;
	long mtu;

	/* Without an IP address there is no GID naming it: fall back to the function's netdev. */
	if (!p->netdev[0] &&
	    gdrb_path(path, sizeof(path), root, "class/infiniband/%s/device/net", dev) == 0 &&
	    gdrb_dir_list(path, &dir) == 0) {
		if (dir.n)
			snprintf(p->netdev, sizeof(p->netdev), "%s", dir.names[0]);
		gdrb_dir_free(&dir);
	}
	if (p->netdev[0] &&
	    gdrb_path(path, sizeof(path), root, "class/net/%s/mtu", p->netdev) == 0 &&
	    gdrb_read_long(path, &mtu) == 0 && mtu > 0 && mtu < INT_MAX)
		p->netdev_mtu = (int)mtu;
}

static int load_ports(const char *root, unsigned parts, struct gdrb_topo_nic *nic)
{
	char path[PATH_MAX], text[64];
	struct gdrb_dir dir;
	size_t i;
	int rc;

	rc = gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports", nic->name);
	if (!rc)
		rc = gdrb_dir_list(path, &dir);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	nic->ports = calloc(dir.n ? dir.n : 1, sizeof(*nic->ports));
	if (!nic->ports) {
		gdrb_dir_free(&dir);
		return -ENOMEM;
	}
	for (i = 0; i < dir.n; i++) {
		struct gdrb_topo_port *p = &nic->ports[nic->nports];
		int num = atoi(dir.names[i]);

		if (num <= 0)
			continue;
		p->num = (unsigned)num;
		port_text(root, nic->name, p->num, "state", text, sizeof(text));
		p->state = split_state(text, p->state_name, sizeof(p->state_name));
		port_text(root, nic->name, p->num, "phys_state", text, sizeof(text));
		split_state(text, p->phys_state, sizeof(p->phys_state));
		port_text(root, nic->name, p->num, "rate", p->rate, sizeof(p->rate));
		p->rate_gbps = gdrb_pci_parse_speed(p->rate);
		port_text(root, nic->name, p->num, "link_layer", p->link_layer,
			  sizeof(p->link_layer));
		p->roce_v2_gid = -1;
		if (parts & GDRB_TOPO_GIDS) {
			load_gids(root, nic->name, p);
			if (!strcmp(p->link_layer, "Ethernet"))
				load_netdev(root, nic->name, p);
		}
		nic->nports++;
	}
	gdrb_dir_free(&dir);
	return 0;
}

static int load_nics(const char *root, unsigned parts, struct gdrb_topo *topo)
{
	char path[PATH_MAX], rel[PATH_MAX];
	struct gdrb_dir dir;
	size_t i;
	int rc;

	rc = gdrb_path(path, sizeof(path), root, "class/infiniband");
	if (!rc)
		rc = gdrb_dir_list(path, &dir);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	topo->have_ib_class = true;
	for (i = 0; i < dir.n; i++) {
		struct gdrb_topo_nic *nics, *nic;
		const char *bdf;

		nics = grow(topo->nics, topo->nnics, sizeof(*nics));
		if (!nics) {
			rc = -ENOMEM;
			break;
		}
		topo->nics = nics;
		nic = &nics[topo->nnics++];
		memset(nic, 0, sizeof(*nic));
		snprintf(nic->name, sizeof(nic->name), "%s", dir.names[i]);
		/* device -> the PCI function; software devices (rxe) have none. */
		if (gdrb_path(path, sizeof(path), root, "class/infiniband/%s/device", nic->name) == 0 &&
		    gdrb_realpath_under(root, path, rel, sizeof(rel)) == 0) {
			bdf = strrchr(rel, '/');
			bdf = bdf ? bdf + 1 : rel;
			nic->has_pci = is_bdf(bdf) && load_pci_fn(root, bdf, &nic->pci) == 0;
		}
		rc = load_ports(root, parts, nic);
		if (rc)
			break;
	}
	gdrb_dir_free(&dir);
	return rc;
}

int gdrb_topo_load(const char *sysfs_root, struct gdrb_topo *topo)
{
	return gdrb_topo_load_parts(sysfs_root, GDRB_TOPO_GIDS, topo);
}

int gdrb_topo_load_parts(const char *sysfs_root, unsigned parts, struct gdrb_topo *topo)
{
	char path[PATH_MAX];
	int rc;

	memset(topo, 0, sizeof(*topo));
	rc = gdrb_path(path, sizeof(path), sysfs_root, "bus/pci/devices");
	if (rc)
		return rc;
	if (!gdrb_is_dir(path))
		return -ENOENT;
	rc = load_gpus(sysfs_root, topo);
	if (!rc)
		rc = load_nics(sysfs_root, parts, topo);
	if (rc)
		gdrb_topo_free(topo);
	return rc;
}

void gdrb_topo_free(struct gdrb_topo *topo)
{
	size_t i;

	for (i = 0; i < topo->nnics; i++)
		free(topo->nics[i].ports);
	free(topo->nics);
	free(topo->gpus);
	memset(topo, 0, sizeof(*topo));
}

/* Leading chain entries a and b share (0 when their host bridges differ). */
static int common_prefix(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b)
{
	int i;

	if (strcmp(a->host_bridge, b->host_bridge))
		return 0;
	for (i = 0; i < a->nchain && i < b->nchain; i++)
		if (strcmp(a->chain[i], b->chain[i]))
			break;
	return i;
}

enum gdrb_topo_dist gdrb_topo_distance(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b)
{
	int common, below_a, below_b;

	if (!a->nchain || !b->nchain)
		return GDRB_DIST_UNKNOWN;
	if (strcmp(a->host_bridge, b->host_bridge)) {
		if (a->numa_node >= 0 && b->numa_node >= 0 && a->numa_node != b->numa_node)
			return GDRB_DIST_SYS;
		return GDRB_DIST_NODE;
	}
	common = common_prefix(a, b);
	if (common == 0)
		return GDRB_DIST_PHB;
	/* Bridges between the lowest common one and each function. */
	below_a = a->nchain - 1 - common;
	below_b = b->nchain - 1 - common;
	return below_a <= 1 && below_b <= 1 ? GDRB_DIST_PIX : GDRB_DIST_PXB;
}

const char *gdrb_topo_dist_name(enum gdrb_topo_dist d)
{
	static const char *const names[] = { "PIX", "PXB", "PHB", "NODE", "SYS", "unknown" };

	return (unsigned)d < sizeof(names) / sizeof(names[0]) ? names[d] : "unknown";
}

const char *gdrb_topo_dist_what(enum gdrb_topo_dist d)
{
	static const char *const what[] = {
		"same PCIe switch",
		"PCIe switches, no host bridge",
		"same host bridge",
		"different host bridges, same NUMA node",
		"across sockets",
		"unknown (no PCI function)",
	};

	return (unsigned)d < sizeof(what) / sizeof(what[0]) ? what[d] : what[GDRB_DIST_UNKNOWN];
}

static bool nic_eligible(const struct gdrb_topo_nic *nic, bool active_only)
{
	size_t i;

	if (!active_only)
		return true;
	for (i = 0; i < nic->nports; i++)
		if (nic->ports[i].state == GDRB_PORT_ACTIVE)
			return true;
	return false;
}

static enum gdrb_topo_dist best_distance(const struct gdrb_topo *topo, size_t gpu,
					 bool active_only, int *first)
{
	enum gdrb_topo_dist best = GDRB_DIST_UNKNOWN;
	size_t n;

	*first = -1;
	for (n = 0; n < topo->nnics; n++) {
		enum gdrb_topo_dist d;

		if (!nic_eligible(&topo->nics[n], active_only))
			continue;
		d = topo->nics[n].has_pci ?
			gdrb_topo_distance(&topo->gpus[gpu].pci, &topo->nics[n].pci) :
			GDRB_DIST_UNKNOWN;
		if (*first < 0 || d < best) {
			best = d;
			*first = (int)n;
		}
	}
	return best;
}

int gdrb_topo_nearest_nic(const struct gdrb_topo *topo, size_t gpu, bool active_only,
			  enum gdrb_topo_dist *dist)
{
	enum gdrb_topo_dist best;
	size_t g, n, ncand = 0, k = 0, pick;
	int first, other_first;

	if (gpu >= topo->ngpus)
		return -1;
	best = best_distance(topo, gpu, active_only, &first);
	if (dist)
		*dist = best;
	if (first < 0 || best == GDRB_DIST_UNKNOWN)
		return first;
	for (n = 0; n < topo->nnics; n++)
		if (nic_eligible(&topo->nics[n], active_only) && topo->nics[n].has_pci &&
		    gdrb_topo_distance(&topo->gpus[gpu].pci, &topo->nics[n].pci) == best)
			ncand++;
	/* Earlier GPUs with the same nearest NICs take the earlier ones. */
	for (g = 0; g < gpu; g++)
		if (best_distance(topo, g, active_only, &other_first) == best &&
		    other_first == first)
			k++;
	pick = k % ncand;
	for (n = 0; n < topo->nnics; n++)
		if (nic_eligible(&topo->nics[n], active_only) && topo->nics[n].has_pci &&
		    gdrb_topo_distance(&topo->gpus[gpu].pci, &topo->nics[n].pci) == best &&
		    pick-- == 0)
			return (int)n;
	return first;
}

int gdrb_topo_shared_uplink(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b, double *gts,
			    int *width)
{
	int common = a->nchain && b->nchain ? common_prefix(a, b) : 0, i;
	double narrowest = 0;

	*gts = 0;
	*width = 0;
	/* chain[0 .. common - 1]: the root port down to the lowest function both sit below. */
	for (i = 0; i < common; i++) {
		const struct gdrb_pci_link *l = &a->chain_link[i];
		double gbytes = gdrb_pci_link_gbytes(l->cur_gts, l->cur_width);

		if (gbytes <= 0) {
			*gts = 0;
			*width = 0;
			return -ENODATA;
		}
		if (narrowest <= 0 || gbytes < narrowest) {
			narrowest = gbytes;
			*gts = l->cur_gts;
			*width = l->cur_width;
		}
	}
	return common > 0;
}

int gdrb_topo_shared_bridge(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b,
			    char bdf[GDRB_BDF_LEN])
{
	int common = a->nchain && b->nchain ? common_prefix(a, b) : 0;

	/* A function is never its own bridge: a chain's last entry is the function itself. */
	if (common >= a->nchain || common >= b->nchain)
		common = (a->nchain < b->nchain ? a->nchain : b->nchain) - 1;
	if (common <= 0) {
		bdf[0] = '\0';
		return 0;
	}
	memcpy(bdf, a->chain[common - 1], GDRB_BDF_LEN);
	return common;
}

size_t gdrb_topo_path(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b,
		      char (*bdfs)[GDRB_BDF_LEN], size_t max)
{
	int common = common_prefix(a, b), i;
	size_t n = 0;

	/* Up from a, then down to b; the functions themselves are not bridges. */
	for (i = a->nchain - 2; i >= common && n < max; i--)
		memcpy(bdfs[n++], a->chain[i], GDRB_BDF_LEN);
	for (i = common; i <= b->nchain - 2 && n < max; i++)
		memcpy(bdfs[n++], b->chain[i], GDRB_BDF_LEN);
	return n;
}

static unsigned le16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void gdrb_pci_acs_parse(const uint8_t *cfg, size_t len, struct gdrb_acs *acs)
{
	unsigned ptr, vendor, guard;

	memset(acs, 0, sizeof(*acs));
	acs->port_type = -1;
	if (len < PCI_CFG_HEADER)
		return;
	vendor = le16(cfg);
	if (vendor == 0xffff || vendor == 0)
		return;
	/* Capability list: find the PCI Express capability (and the port type). */
	if (le16(cfg + PCI_STATUS) & PCI_STATUS_CAP_LIST) {
		ptr = cfg[PCI_CAPABILITY_LIST] & 0xfc;
		for (guard = 0; ptr >= PCI_CFG_HEADER && ptr + 4 <= len && guard < 48; guard++) {
			if (cfg[ptr] == PCI_CAP_ID_EXP) {
				acs->pcie = true;
				acs->port_type = (int)(le16(cfg + ptr + 2) >> 4 & 0xf);
				break;
			}
			ptr = cfg[ptr + 1] & 0xfc;
		}
	}
	/* Unprivileged readers get the first 64 bytes only. */
	if (len < PCI_CFG_LEGACY || (acs->pcie && len < PCI_CFG_LEGACY + 8))
		return;
	acs->readable = true;
	if (!acs->pcie)
		return;
	/* Extended capabilities: a list from 0x100, each header "id:16 version:4 next:12". */
	ptr = PCI_CFG_LEGACY;
	for (guard = 0; ptr >= PCI_CFG_LEGACY && ptr + 8 <= len &&
	     guard < (PCI_CFG_EXTENDED - PCI_CFG_LEGACY) / 8; guard++) {
		uint32_t hdr = le32(cfg + ptr);

		if (hdr == 0 || hdr == 0xffffffffu)
			break;
		if ((hdr & 0xffff) == PCI_EXT_CAP_ID_ACS) {
			acs->present = true;
			acs->cap = (uint16_t)le16(cfg + ptr + 4);
			acs->ctrl = (uint16_t)le16(cfg + ptr + 6);
			break;
		}
		ptr = hdr >> 20 & 0xffc;
	}
}

int gdrb_topo_acs(const char *sysfs_root, const char *bdf, struct gdrb_acs *acs)
{
	uint8_t cfg[PCI_CFG_EXTENDED];
	char path[PATH_MAX];
	size_t got;
	int rc;

	memset(acs, 0, sizeof(*acs));
	acs->port_type = -1;
	rc = gdrb_path(path, sizeof(path), sysfs_root, "bus/pci/devices/%s/config", bdf);
	if (!rc)
		rc = gdrb_read_bin(path, cfg, sizeof(cfg), &got);
	if (rc)
		return rc;
	gdrb_pci_acs_parse(cfg, got, acs);
	return 0;
}

char *gdrb_acs_flags(uint16_t ctrl, char *buf, size_t len)
{
	static const char *const names[] = { "SrcValid", "TransBlk", "ReqRedir", "CmpltRedir",
					     "UpstreamFwd", "EgressCtrl", "DirectTrans" };
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int n;

		if (!(ctrl & (1u << i)))
			continue;
		n = snprintf(buf + used, len - used, "%s%s+", used ? " " : "", names[i]);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "none");
	return buf;
}

const char *gdrb_pcie_port_name(int port_type)
{
	switch (port_type) {
	case GDRB_PCIE_ROOT_PORT:
		return "root port";
	case GDRB_PCIE_UPSTREAM:
		return "switch upstream port";
	case GDRB_PCIE_DOWNSTREAM:
		return "switch downstream port";
	default:
		return "bridge";
	}
}

int gdrb_roce_mtu(int netdev_mtu)
{
	int mtu = netdev_mtu - ROCE_HEADER_BYTES, ib;

	for (ib = 4096; ib >= 256; ib /= 2)
		if (mtu >= ib)
			return ib;
	return 0;
}
