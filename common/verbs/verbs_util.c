/* SPDX-License-Identifier: BSD-3-Clause */
/* Port, GID, work-request and scatter-to-CQE choices of the verbs benchmarks; no libibverbs needed. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_sysfs.h"
#include "gdrb_verbs.h"

size_t gdrb_wr_count(size_t len, size_t max)
{
	if (max == 0 || max > GDRB_VERBS_MAX_CHUNK)
		max = GDRB_VERBS_MAX_CHUNK;
	return len ? len / max + (len % max != 0) : 1;
}

void gdrb_wr_chunk(size_t len, size_t max, size_t i, size_t *off, size_t *chunk)
{
	if (max == 0 || max > GDRB_VERBS_MAX_CHUNK)
		max = GDRB_VERBS_MAX_CHUNK;
	*off = i * max;
	*chunk = *off >= len ? 0 : len - *off < max ? len - *off : max;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

int gdrb_queue_plan(unsigned nqps, size_t tx_want, size_t rx_want, int max_qp_wr, int max_cqe,
		    struct gdrb_queue_plan *out)
{
	size_t wr = max_qp_wr > 0 ? (size_t)max_qp_wr : 1, cqe = max_cqe > 0 ? (size_t)max_cqe : 0;

	memset(out, 0, sizeof(*out));
	if (!nqps || cqe < (size_t)nqps + 1)
		return GDRB_ERR_UNSUPP;
	/* Every queue holds at least one request, and never more than UINT_MAX. */
	out->tx_depth = (unsigned)min_size(min_size(tx_want ? tx_want : 1, wr),
					   min_size(cqe / (nqps + 1), UINT_MAX));
	out->rx_depth = (unsigned)min_size(min_size(rx_want ? rx_want : 1, wr),
					   min_size(cqe / nqps, UINT_MAX));
	out->send_cqe = (nqps + 1) * out->tx_depth;
	out->recv_cqe = nqps * out->rx_depth;
	return 0;
}

unsigned gdrb_window_fit(size_t wrs, unsigned nqps, size_t room)
{
	size_t per_qp = wrs ? room / wrs : room;

	/* Message k goes to QP k % nqps: each QP takes per_qp of them. */
	if (per_qp > UINT_MAX / (nqps ? nqps : 1))
		return UINT_MAX;
	return (unsigned)per_qp * nqps;
}

/* Append to why, keeping what fits. */
static void append(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *why, size_t len, const char *fmt, ...)
{
	size_t used = strlen(why);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(why + used, len - used, fmt, ap);
	va_end(ap);
}

/* "mlx5_0:1 (ACTIVE), mlx5_1:1 (DOWN)": every port that exists. */
static void list_ports(const struct gdrb_topo *topo, char *why, size_t len)
{
	size_t d, i;
	bool first = true;

	for (d = 0; d < topo->nnics; d++)
		for (i = 0; i < topo->nics[d].nports; i++) {
			const struct gdrb_topo_port *p = &topo->nics[d].ports[i];

			append(why, len, "%s%s:%u (%s)", first ? "" : ", ", topo->nics[d].name,
			       p->num, p->state_name[0] ? p->state_name : "unknown state");
			first = false;
		}
	if (first)
		append(why, len, "none");
}

static int first_active(const struct gdrb_topo_nic *nic)
{
	size_t i;

	for (i = 0; i < nic->nports; i++)
		if (nic->ports[i].state == GDRB_PORT_ACTIVE)
			return (int)nic->ports[i].num;
	return -1;
}

static int named_port(const struct gdrb_topo *topo, const char *dev, unsigned port,
		      struct gdrb_port_choice *out, char *why, size_t len)
{
	const struct gdrb_topo_nic *nic = NULL;
	size_t d, i;

	for (d = 0; d < topo->nnics && !nic; d++)
		if (!strcmp(topo->nics[d].name, dev))
			nic = &topo->nics[d];
	if (!nic) {
		snprintf(why, len, "--ib-dev %s: no such RDMA device; ports here: ", dev);
		list_ports(topo, why, len);
		return GDRB_ERR_USAGE;
	}
	out->nic = (int)(nic - topo->nics);
	if (!port) {
		int p = first_active(nic);

		if (p < 0) {
			snprintf(why, len, "--ib-dev %s: no ACTIVE port; ports here: ", dev);
			list_ports(topo, why, len);
			return GDRB_ERR_USAGE;
		}
		out->port = (unsigned)p;
		return 0;
	}
	for (i = 0; i < nic->nports; i++) {
		if (nic->ports[i].num != port)
			continue;
		if (nic->ports[i].state != GDRB_PORT_ACTIVE) {
			snprintf(why, len, "--ib-dev %s:%u: port is %s, not ACTIVE; ports here: ", dev,
				 port, nic->ports[i].state_name[0] ? nic->ports[i].state_name :
				 "in an unknown state");
			list_ports(topo, why, len);
			return GDRB_ERR_USAGE;
		}
		out->port = port;
		return 0;
	}
	snprintf(why, len, "--ib-dev %s:%u: no such port; ports here: ", dev, port);
	list_ports(topo, why, len);
	return GDRB_ERR_USAGE;
}

int gdrb_verbs_choose_port(const struct gdrb_topo *topo, const char *dev, unsigned port, int gpu,
			   struct gdrb_port_choice *out, char *why, size_t len)
{
	size_t d;
	int n;

	memset(out, 0, sizeof(*out));
	out->nic = -1;
	out->dist = GDRB_DIST_UNKNOWN;
	why[0] = '\0';
	if (topo->nnics == 0) {
		snprintf(why, len, "no RDMA device found; run gdrb_doctor");
		return GDRB_ERR_UNSUPP;
	}
	if (dev) {
		int rc = named_port(topo, dev, port, out, why, len);

		if (rc == 0 && gpu >= 0 && (size_t)gpu < topo->ngpus && topo->nics[out->nic].has_pci)
			out->dist = gdrb_topo_distance(&topo->gpus[gpu].pci, &topo->nics[out->nic].pci);
		return rc;
	}
	if (gpu >= 0) {
		n = gdrb_topo_nearest_nic(topo, (size_t)gpu, true, &out->dist);
		if (n >= 0 && out->dist != GDRB_DIST_UNKNOWN) {
			out->nic = n;
			out->port = (unsigned)first_active(&topo->nics[n]);
			out->nearest = true;
			return 0;
		}
		out->dist = GDRB_DIST_UNKNOWN;
	}
	for (d = 0; d < topo->nnics; d++) {
		n = first_active(&topo->nics[d]);
		if (n > 0) {
			out->nic = (int)d;
			out->port = (unsigned)n;
			return 0;
		}
	}
	snprintf(why, len, "no ACTIVE RDMA port; ports here: ");
	list_ports(topo, why, len);
	return GDRB_ERR_UNSUPP;
}

static bool gid_set(const char *gid)
{
	for (; *gid; gid++)
		if (*gid != '0' && *gid != ':')
			return true;
	return false;
}

int gdrb_gid_list(const char *sysfs_root, const char *dev, unsigned port,
		  struct gdrb_gid_entry *gids, size_t max, size_t *n)
{
	char path[PATH_MAX];
	struct gdrb_dir dir;
	size_t i;
	int rc;

	*n = 0;
	rc = gdrb_path(path, sizeof(path), sysfs_root, "class/infiniband/%s/ports/%u/gids", dev, port);
	if (rc || (rc = gdrb_dir_list(path, &dir)))
		return rc;
	for (i = 0; i < dir.n && *n < max; i++) {
		struct gdrb_gid_entry *e = &gids[*n];

		e->index = atoi(dir.names[i]);
		if (gdrb_path(path, sizeof(path), sysfs_root, "class/infiniband/%s/ports/%u/gids/%d",
			      dev, port, e->index) || gdrb_read_text(path, e->gid, sizeof(e->gid)) ||
		    !gid_set(e->gid))
			continue;
		e->type[0] = '\0';
		if (gdrb_path(path, sizeof(path), sysfs_root,
			      "class/infiniband/%s/ports/%u/gid_attrs/types/%d", dev, port,
			      e->index) == 0)
			gdrb_read_text(path, e->type, sizeof(e->type));
		(*n)++;
	}
	gdrb_dir_free(&dir);
	return 0;
}

bool gdrb_gid_entry_set(struct gdrb_gid_entry *e, int index, const unsigned char raw[16], bool roce_v2)
{
	int i, n = 0;

	e->index = index;
	for (i = 0; i < 16; i += 2)
		n += snprintf(e->gid + n, sizeof(e->gid) - (size_t)n, "%s%02x%02x", i ? ":" : "", raw[i],
			      raw[i + 1]);
	snprintf(e->type, sizeof(e->type), "%s", roce_v2 ? "RoCE v2" : "IB/RoCE v1");
	return gid_set(e->gid);
}

static int by_index(const void *a, const void *b)
{
	const struct gdrb_gid_entry *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

void gdrb_gid_sort(struct gdrb_gid_entry *gids, size_t n)
{
	if (n > 1)
		qsort(gids, n, sizeof(*gids), by_index);
}

/* IPv4-mapped RoCE v2 first (routable), then other RoCE v2, then anything else. */
static int gid_rank(const struct gdrb_gid_entry *e)
{
	if (strcmp(e->type, "RoCE v2"))
		return 1;
	if (!strncmp(e->gid, "0000:0000:0000:0000:0000:ffff:", 30))
		return 4;
	return strncmp(e->gid, "fe80:", 5) ? 3 : 2;
}

int gdrb_gid_choose(const struct gdrb_gid_entry *gids, size_t n, int want, int *index,
		    char *why, size_t len)
{
	size_t i, best = 0;

	why[0] = '\0';
	if (want >= 0) {
		for (i = 0; i < n; i++)
			if (gids[i].index == want) {
				*index = want;
				return 0;
			}
		snprintf(why, len, "--gid-index %d: no such GID on this port; set GIDs: ", want);
		for (i = 0; i < n; i++)
			append(why, len, "%s%d (%s)", i ? ", " : "", gids[i].index,
			       gids[i].type[0] ? gids[i].type : "type unknown");
		if (!n)
			append(why, len, "none");
		return GDRB_ERR_USAGE;
	}
	if (!n) {
		snprintf(why, len, "the port has no GID set (no IP address on its netdev?)");
		return GDRB_ERR_UNSUPP;
	}
	for (i = 1; i < n; i++)
		if (gid_rank(&gids[i]) > gid_rank(&gids[best]))
			best = i;
	*index = gids[best].index;
	return 0;
}

#define SCQE_ENV "MLX5_SCATTER_TO_CQE"

enum gdrb_scatter_cqe gdrb_scatter_cqe_choose(bool device, const char *env, char *line,
					      size_t len)
{
	if (!device) {
		if (len)
			line[0] = '\0';
		return GDRB_SCQE_LEFT;
	}
	if (!env) {
		snprintf(line, len, "scatter-to-CQE: off (" SCQE_ENV "=0, device receive buffers)");
		return GDRB_SCQE_SET_OFF;
	}
	/* libmlx5 compares with "0" exactly: "00" or "" leave it on. */
	if (!strcmp(env, "0")) {
		snprintf(line, len,
			 "scatter-to-CQE: off (" SCQE_ENV "=0 from the environment, device receive buffers)");
		return GDRB_SCQE_USER_OFF;
	}
	snprintf(line, len,
		 "scatter-to-CQE: on (" SCQE_ENV "=%s from the environment, kept; receives of up to 64 B into device memory may crash libmlx5)",
		 env);
	return GDRB_SCQE_USER_ON;
}

int gdrb_scatter_cqe_apply(bool device, enum gdrb_scatter_cqe *choice, char *line, size_t len)
{
	const char *env = getenv(SCQE_ENV);
	enum gdrb_scatter_cqe chosen = gdrb_scatter_cqe_choose(device, env, line, len);

	if (choice)
		*choice = chosen;
	if (chosen == GDRB_SCQE_SET_OFF && setenv(SCQE_ENV, "0", 1)) {
		gdrb_err("setenv(" SCQE_ENV "=0): %s", strerror(errno));
		return GDRB_ERR;
	}
	if (chosen == GDRB_SCQE_USER_ON)
		gdrb_warn(SCQE_ENV "=%s keeps scatter-to-CQE on: mlx5 puts received messages of up to 32 B (64 B with 128-byte CQEs) in the completion and libmlx5 copies them into the device receive buffer with the CPU, which crashes; unset it or set it to 0",
			  env);
	return 0;
}
