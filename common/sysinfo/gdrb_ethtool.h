/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A netdev's driver statistics (what `ethtool -S` shows) through the SIOCETHTOOL
 * ioctl: ETHTOOL_GSSET_INFO for how many ETH_SS_STATS there are, ETHTOOL_GSTRINGS
 * for their names, ETHTOOL_GSTATS for their values. No ethtool binary.
 *
 * The request goes through a transport (struct gdrb_ethtool): the kernel's ioctl,
 * or a fixture that answers the same requests from a file of "NAME VALUE" lines
 * (the sysfs fixture trees of the tests have no real netdev). Everything the
 * transport answers is untrusted: a count past GDRB_ETHTOOL_MAX, a count that
 * changes between the three requests (a driver that reconfigured), or names
 * that do not end within their 32 bytes are refused, never taken as read.
 */
#ifndef GDRB_ETHTOOL_H
#define GDRB_ETHTOOL_H

#include <stddef.h>
#include <stdint.h>

#define GDRB_ETHTOOL_NAME_LEN 32        /* ETH_GSTRING_LEN */
#define GDRB_ETHTOOL_MAX 65536          /* statistics a netdev may claim; more is garbage */

/*
 * One SIOCETHTOOL request on netdev ifname: req is the struct ethtool_* the
 * kernel takes (its cmd first), room its bytes including the data after it.
 * 0 or -errno.
 */
typedef int (*gdrb_ethtool_call)(const char *root, const char *ifname, void *req, size_t room);

struct gdrb_ethtool {
	gdrb_ethtool_call call;
	const char *root;       /* the fixture's sysfs root; NULL for the kernel */
};

/* The kernel's ioctl on an AF_INET datagram socket (root is ignored). */
int gdrb_ethtool_ioctl(const char *root, const char *ifname, void *req, size_t room);

/*
 * The fixture: <root>/class/net/IFNAME/gdrb-ethtool-stats, one "NAME VALUE"
 * line per statistic in the driver's order (VALUE decimal; "-" a value the
 * fixture cannot give: the request fails with EIO). No file: the netdev has no
 * statistics (EOPNOTSUPP, as a driver without them); no netdev directory:
 * ENODEV.
 */
int gdrb_ethtool_fixture(const char *root, const char *ifname, void *req, size_t room);

/*
 * Every ETH_SS_STATS statistic of ifname now: *n names (NUL-terminated, at most
 * 31 characters) and values, malloc'd (free both; NULL where *n is 0). 0; *n = 0
 * where the netdev has none (ETHTOOL_GSSET_INFO answers no ETH_SS_STATS);
 * -ENODEV where there is no such netdev; -EPROTO where the answers are garbage
 * or the count changed twice running; -ENOMEM; another -errno of the ioctl.
 */
int gdrb_ethtool_stats(const struct gdrb_ethtool *e, const char *ifname,
		       char (**names)[GDRB_ETHTOOL_NAME_LEN], uint64_t **values, size_t *n);

#endif
