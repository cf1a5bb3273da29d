/* SPDX-License-Identifier: BSD-3-Clause */
/* A netdev's ethtool statistics through SIOCETHTOOL, or a fixture's (gdrb_ethtool.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gdrb_ethtool.h"
#include "gdrb_sysfs.h"

#define FIXTURE_FILE "gdrb-ethtool-stats"
#define FIXTURE_BYTES (1u << 20)        /* a fixture of 65536 statistics fits */

int gdrb_ethtool_ioctl(const char *root, const char *ifname, void *req, size_t room)
{
	struct ifreq ifr;
	int fd, rc = 0;

	(void)root;
	(void)room;     /* the kernel writes as many as it counts now: the caller leaves slack */
	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -ENODEV;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = req;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* The fixture's lines: names and values ("-": EIO when asked for values), or why not. */
struct fixture {
	char (*names)[GDRB_ETHTOOL_NAME_LEN];
	uint64_t *values;
	unsigned char *bad;     /* a value the fixture cannot give */
	size_t n;
};

static void fixture_free(struct fixture *fx)
{
	free(fx->names);
	free(fx->values);
	free(fx->bad);
}

static int fixture_line(struct fixture *fx, const char *line, size_t len)
{
	const char *space = memchr(line, ' ', len);
	char value[32];
	size_t name_len, value_len;
	uint64_t v = 0;
	size_t i;

	if (!space || space == line || (name_len = (size_t)(space - line)) >= GDRB_ETHTOOL_NAME_LEN)
		return -EINVAL;
	value_len = len - name_len - 1;
	if (value_len == 0 || value_len >= sizeof(value))
		return -EINVAL;
	memcpy(value, space + 1, value_len);
	value[value_len] = '\0';
	fx->bad[fx->n] = !strcmp(value, "-");
	for (i = 0; !fx->bad[fx->n] && i < value_len; i++) {
		if (value[i] < '0' || value[i] > '9' || v > (UINT64_MAX - (uint64_t)(value[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(value[i] - '0');
	}
	memset(fx->names[fx->n], 0, GDRB_ETHTOOL_NAME_LEN);
	memcpy(fx->names[fx->n], line, name_len);
	fx->values[fx->n++] = v;
	return 0;
}

static int fixture_load(const char *root, const char *ifname, struct fixture *fx)
{
	char path[PATH_MAX], *text;
	size_t got = 0, at, lines = 0, i;
	int rc;

	memset(fx, 0, sizeof(*fx));
	if (strchr(ifname, '/') || gdrb_path(path, sizeof(path), root, "class/net/%s", ifname) ||
	    !gdrb_is_dir(path))
		return -ENODEV;
	if (gdrb_path(path, sizeof(path), root, "class/net/%s/" FIXTURE_FILE, ifname))
		return -ENODEV;
	text = malloc(FIXTURE_BYTES + 1);
	if (!text)
		return -ENOMEM;
	rc = gdrb_read_bin(path, text, FIXTURE_BYTES, &got);
	if (rc == -ENOENT) {
		free(text);
		return 0;       /* a netdev whose driver has no statistics */
	}
	if (!rc && got == FIXTURE_BYTES)
		rc = -EFBIG;
	text[got] = '\0';
	for (i = 0; i < got; i++)
		lines += text[i] == '\n';
	fx->names = calloc(lines + 1, sizeof(*fx->names));
	fx->values = calloc(lines + 1, sizeof(*fx->values));
	fx->bad = calloc(lines + 1, 1);
	if (!rc && (!fx->names || !fx->values || !fx->bad))
		rc = -ENOMEM;
	for (at = 0; !rc && at < got;) {
		size_t len = strcspn(text + at, "\n");

		if (len)
			rc = fixture_line(fx, text + at, len);
		at += len + 1;
	}
	free(text);
	if (rc)
		fixture_free(fx);
	return rc;
}

int gdrb_ethtool_fixture(const char *root, const char *ifname, void *req, size_t room)
{
	struct fixture fx;
	uint32_t cmd;
	size_t i;
	int rc = fixture_load(root, ifname, &fx);

	if (rc)
		return rc;
	memcpy(&cmd, req, sizeof(cmd));
	if (cmd == ETHTOOL_GSSET_INFO) {
		struct ethtool_sset_info *info = req;

		if (room < sizeof(*info) + sizeof(uint32_t))
			rc = -EFAULT;
		else if (info->sset_mask & (1ull << ETH_SS_STATS)) {
			info->sset_mask = fx.n ? 1ull << ETH_SS_STATS : 0;
			info->data[0] = (uint32_t)fx.n;
		} else {
			info->sset_mask = 0;
		}
	} else if (cmd == ETHTOOL_GSTRINGS) {
		struct ethtool_gstrings *gs = req;

		if (gs->string_set != ETH_SS_STATS)
			rc = -EOPNOTSUPP;
		else if (room < sizeof(*gs) + fx.n * GDRB_ETHTOOL_NAME_LEN)
			rc = -EFAULT;
		else {
			gs->len = (uint32_t)fx.n;
			memcpy(gs->data, fx.names, fx.n * GDRB_ETHTOOL_NAME_LEN);
		}
	} else if (cmd == ETHTOOL_GSTATS) {
		struct ethtool_stats *st = req;

		if (room < sizeof(*st) + fx.n * sizeof(uint64_t))
			rc = -EFAULT;
		for (i = 0; !rc && i < fx.n; i++)
			if (fx.bad[i])
				rc = -EIO;
		if (!rc) {
			st->n_stats = (uint32_t)fx.n;
			memcpy(st->data, fx.values, fx.n * sizeof(uint64_t));
		}
	} else {
		rc = -EOPNOTSUPP;
	}
	fixture_free(&fx);
	return rc;
}

/* ETH_SS_STATS's count now: 0 where the driver has none. */
static int stats_count(const struct gdrb_ethtool *e, const char *ifname, size_t *n)
{
	struct {
		struct ethtool_sset_info info;
		uint32_t data[1];
	} req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.info.cmd = ETHTOOL_GSSET_INFO;
	req.info.sset_mask = 1ull << ETH_SS_STATS;
	rc = e->call(e->root, ifname, &req, sizeof(req));
	if (rc == -EOPNOTSUPP) {
		*n = 0;         /* a driver without get_sset_count, on older kernels */
		return 0;
	}
	if (rc)
		return rc;
	if (!(req.info.sset_mask & (1ull << ETH_SS_STATS))) {
		*n = 0;
		return 0;
	}
	if (req.info.sset_mask & ~(1ull << ETH_SS_STATS) || req.info.data[0] > GDRB_ETHTOOL_MAX)
		return -EPROTO;
	*n = req.info.data[0];
	return 0;
}

/* The kernel writes as many as it counts at the request: room for some more, should it have grown. */
static size_t with_slack(size_t n)
{
	return n + n / 4 + 16;
}

/* Names and values of n statistics; -EAGAIN where the driver's count is not n any more. */
static int stats_read(const struct gdrb_ethtool *e, const char *ifname, size_t n,
		      char (*names)[GDRB_ETHTOOL_NAME_LEN], uint64_t *values)
{
	size_t room = with_slack(n), i;
	struct ethtool_gstrings *gs;
	struct ethtool_stats *st;
	int rc;

	gs = calloc(1, sizeof(*gs) + room * GDRB_ETHTOOL_NAME_LEN);
	st = calloc(1, sizeof(*st) + room * sizeof(uint64_t));
	if (!gs || !st) {
		free(gs);
		free(st);
		return -ENOMEM;
	}
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = (uint32_t)n;
	rc = e->call(e->root, ifname, gs, sizeof(*gs) + room * GDRB_ETHTOOL_NAME_LEN);
	if (!rc && gs->len != n)
		rc = -EAGAIN;
	if (!rc) {
		st->cmd = ETHTOOL_GSTATS;
		st->n_stats = (uint32_t)n;
		rc = e->call(e->root, ifname, st, sizeof(*st) + room * sizeof(uint64_t));
	}
	if (!rc && st->n_stats != n)
		rc = -EAGAIN;
	for (i = 0; !rc && i < n; i++) {
		const char *name = (const char *)gs->data + i * GDRB_ETHTOOL_NAME_LEN;

		/* A name that fills its 32 bytes has no end: garbage, not a name to match. */
		if (!memchr(name, '\0', GDRB_ETHTOOL_NAME_LEN)) {
			rc = -EPROTO;
			break;
		}
		memcpy(names[i], name, GDRB_ETHTOOL_NAME_LEN);
		values[i] = st->data[i];
	}
	free(gs);
	free(st);
	return rc;
}

int gdrb_ethtool_stats(const struct gdrb_ethtool *e, const char *ifname,
		       char (**names)[GDRB_ETHTOOL_NAME_LEN], uint64_t **values, size_t *n)
{
	int tries, rc = -EPROTO;

	*names = NULL;
	*values = NULL;
	*n = 0;
	/* A count that changes between the requests (channels reconfigured) is asked again, once. */
	for (tries = 0; tries < 2; tries++) {
		size_t count;

		rc = stats_count(e, ifname, &count);
		if (rc || !count)
			return rc;
		*names = calloc(count, sizeof(**names));
		*values = calloc(count, sizeof(**values));
		rc = *names && *values ? stats_read(e, ifname, count, *names, *values) : -ENOMEM;
		if (!rc) {
			*n = count;
			return 0;
		}
		free(*names);
		free(*values);
		*names = NULL;
		*values = NULL;
		if (rc != -EAGAIN)
			return rc;
	}
	return -EPROTO;
}
