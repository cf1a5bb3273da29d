/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters from sysfs under a root directory: every file of an RDMA port's
 * counters/ and hw_counters/ (whatever the provider: mlx5, rxe, efa; siw has
 * neither), the congestion and error statistics of a RoCE port's netdev
 * (ethtool, gdrb_ethtool.h), and a PCI function's PCIe state: its link's current speed and
 * width, their maxima at both ends of the link, and its AER counts
 * (aer_dev_correctable, _nonfatal, _fatal: "NAME COUNT" lines).
 *
 * A set is built once (which files exist), then read as often as wanted:
 * each reading gives a value and a state per counter. Everything in sysfs is
 * untrusted here: names are kept as printable text of bounded length, values
 * must be decimal digits that fit 64 bits (anything else is "unreadable",
 * never 0), a file that fills its buffer is refused, and a directory yields at
 * most GDRB_CNT_DIR_MAX files. Nothing is logged.
 */
#ifndef GDRB_SYSFS_COUNTERS_H
#define GDRB_SYSFS_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrb_ethtool.h"

#define GDRB_CNT_DEV_LEN 32     /* "mlx5_0", "GPU" */
#define GDRB_CNT_PORT_LEN 16    /* "1", or a PCI address "0000:17:00.0" */
#define GDRB_CNT_SOURCE_LEN 24  /* "hw_counters", "aer_dev_correctable", "link" */
#define GDRB_CNT_NAME_LEN 48    /* "np_ecn_marked_roce_packets"; a longer name is cut, ending in '~' */
#define GDRB_CNT_DIR_MAX 256    /* files taken from one counters/ or hw_counters/ */
#define GDRB_CNT_AER_MAX 48     /* lines taken from one AER file */

/* What a counter is (counter_classes.def, docs/counters.md). */
enum gdrb_cnt_class {
	GDRB_CNT_ERROR,         /* a rise means something went wrong */
	GDRB_CNT_CONGESTION,    /* congestion control at work: reported, not an error */
	GDRB_CNT_TRAFFIC,       /* volume: the denominator of per-packet rates */
	GDRB_CNT_OTHER,         /* recorded, not judged */
	GDRB_CNT_LINK,          /* a PCIe link's speed (MT/s) or width (lanes): a value, not a count */
	GDRB_CNT_NCLASSES
};

/* One reading of one counter. */
enum gdrb_cnt_read {
	GDRB_CNT_READ_OK,
	GDRB_CNT_READ_UNREADABLE,       /* a read error, or not a number of its kind */
	GDRB_CNT_READ_VANISHED,         /* the file (or the AER line) is gone */
};

struct gdrb_cnt_id {
	char device[GDRB_CNT_DEV_LEN];  /* RDMA device, or "GPU" for a GPU's PCIe rows */
	char port[GDRB_CNT_PORT_LEN];   /* port number, or the PCI address of PCIe rows */
	char source[GDRB_CNT_SOURCE_LEN]; /* counters, hw_counters, link, aer_dev_* */
	char name[GDRB_CNT_NAME_LEN];
	uint8_t cls;                    /* enum gdrb_cnt_class */
	bool pcie;                      /* a PCIe row (link or AER), not an RDMA port's */
};

struct gdrb_cnt_file;

/* The counters to read; zero it (or = { 0 }) before the first add. */
struct gdrb_cnt_set {
	struct gdrb_cnt_id *id;         /* n counters */
	size_t n;
	struct gdrb_cnt_file *files;    /* how to read them */
	size_t nfiles;
	unsigned ports;                 /* RDMA ports added */
	unsigned pci;                   /* PCI functions added */
	size_t dropped;                 /* files or lines left out past the limits above */
};

/*
 * Add every file of <root>/class/infiniband/DEV/ports/PORT/counters and
 * hw_counters (as their names sort). 0, also where the port has neither;
 * -ENAMETOOLONG, -ENOMEM.
 */
int gdrb_cnt_add_port(struct gdrb_cnt_set *s, const char *root, const char *dev, unsigned port);

/*
 * Add the PCIe state of <root>/bus/pci/devices/BDF, named `device` in the
 * rows: current_link_speed and _width, max_link_speed and _width, the same
 * maxima of `upstream` (the bridge port above it; NULL: none) as
 * upstream_max_link_speed and _width, and each line of the AER files that
 * exist. Speeds are in MT/s (2.5 GT/s: 2500). 0, -ENAMETOOLONG, -ENOMEM.
 */
int gdrb_cnt_add_pci(struct gdrb_cnt_set *s, const char *root, const char *device, const char *bdf,
		     const char *upstream);

/*
 * The netdev of an Ethernet (RoCE) port: its first GID's (gid_attrs/ndevs/0), else the first
 * of the device's function's net/; "" for an InfiniBand port or where none is found.
 */
void gdrb_cnt_port_netdev(const char *root, const char *dev, unsigned port, char *buf, size_t len);

/*
 * Add the statistics of ethtool_classes.def that netdev ifname has now, asked through e,
 * as rows of `device` port `port` with source "ethtool" (the netdev's other statistics,
 * per queue and channel, are not read). *found: how many statistics the netdev has in all.
 * 0, also where it has none or none of those; -ENOMEM; the error of gdrb_ethtool_stats
 * where the netdev could not be asked (nothing added).
 */
int gdrb_cnt_add_netdev(struct gdrb_cnt_set *s, const struct gdrb_ethtool *e, const char *ifname,
			const char *device, unsigned port, size_t *found);

/* One reading of every counter: value[i] and state[i] (enum gdrb_cnt_read) for id[i]. */
void gdrb_cnt_read(const struct gdrb_cnt_set *s, uint64_t *value, uint8_t *state);

void gdrb_cnt_set_free(struct gdrb_cnt_set *s);

/* The class of a counters/ or hw_counters/ file name; GDRB_CNT_OTHER where the table has none. */
enum gdrb_cnt_class gdrb_cnt_classify(const char *name);
/* The class of an ethtool statistic (ethtool_classes.def); false: not one gdrbench reads. */
bool gdrb_cnt_ethtool_classify(const char *name, enum gdrb_cnt_class *cls);
/* "error", "congestion", "traffic", "other", "link". */
const char *gdrb_cnt_class_name(unsigned cls);

/* A counter's text: decimal digits, one trailing newline at most, fitting 64 bits. 0 or -EINVAL. */
int gdrb_cnt_parse_u64(const char *text, uint64_t *value);

/*
 * The lines of an AER file ("RxErr 3\nBadTLP 0\n...TOTAL_ERR_COR 3\n"): up to
 * max names (letters, digits, '_') with their counts; a line of another form
 * is skipped. Returns how many were found.
 */
size_t gdrb_cnt_parse_aer(const char *text, char (*names)[GDRB_CNT_NAME_LEN], uint64_t *counts,
			  size_t max);

/* src as a counter's or device's name in rows and headers: letters, digits, "_.:-", others '?'. */
void gdrb_cnt_name(char *dst, size_t len, const char *src);

#endif
