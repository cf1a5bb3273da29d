/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * After each size, NCCL's log read back on every rank (nccl_int.h's gdrb_nccl_end): the
 * transports of its connections and GPUDirect RDMA on them, the algorithm, protocol and
 * channels it chose, and the line rate its network connections crossed, into the row.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_nccl_log.h"
#include "gdrb_size.h"
#include "gdrb_sysfs.h"
#include "nccl_int.h"

struct log_wire {
	struct gdrb_nccl_links links;
	int32_t readable;
	uint32_t sysfs_rate;    /* bit i: links.nics[i].mbps is the port's rate in sysfs, not NCCL's figure */
	char why[188];
};

/* A port's rate as the kernel writes it, "400 Gb/sec (4X NDR)", in Mb/s; 0 anything else. */
static uint32_t port_rate_mbps(const char *text)
{
	unsigned long whole = 0, frac = 0, scale = 1;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9' && whole < 1000000)
		whole = whole * 10 + (unsigned long)(*p++ - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && scale < 1000; p++, scale *= 10)
			frac = frac * 10 + (unsigned long)(*p - '0');
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, " Gb/sec", 7) || whole >= 100000)
		return 0;
	return (uint32_t)(whole * 1000 + frac * 1000 / scale);
}

/*
 * The NICs NCCL's log named without a speed (NCCL before 2.27 prints none at INFO): the port's
 * rate from sysfs (<root>/class/infiniband/<dev>/ports/<port>/rate), a regular file read without
 * following a link; a merged device ("a+b") is left unknown.
 */
static uint32_t rates_from_sysfs(struct gdrb_nccl_links *l)
{
	const char *root = gdrb_inject()->sysfs_root ? gdrb_inject()->sysfs_root : "/sys";
	uint32_t from = 0;
	unsigned i;

	for (i = 0; i < GDRB_NCCL_NICS; i++) {
		struct gdrb_nccl_nic *nic = &l->nics[i];
		char dev[24], path[512], text[64];
		const char *colon = strrchr(nic->name, ':');
		uint32_t mbps;

		if (nic->mbps || !colon || colon == nic->name || strchr(nic->name, '+') || strchr(nic->name, '?'))
			continue;
		snprintf(dev, sizeof(dev), "%.*s", (int)(colon - nic->name), nic->name);
		if (gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports/%s/rate", dev, colon + 1) ||
		    gdrb_read_text(path, text, sizeof(text)))
			continue;
		if ((mbps = port_rate_mbps(text))) {
			nic->mbps = mbps;
			from |= 1u << i;
		}
	}
	return from;
}

/*
 * Rank 0: the line rate the rows' bytes crossed (c->lib_line_*): on each host, the NICs its
 * ranks' connections used, each counted once, their rates added (a ring's channels spread over
 * a node's NICs); the lowest host's. Not known (0) where a NIC is unnamed or has no rate, or a
 * host used no NET/IB device: nothing is then claimed.
 */
static void line_rate(struct gdrb_ctx *c, const struct log_wire *all)
{
	const struct gdrb_boot *b = c->boot;
	double lowest = 0;
	int r, q, low_host = -1, low_nics = 0;
	bool any_sysfs = false, any_log = false;
	char names[32] = "";

	c->lib_line_gbps = 0;
	c->lib_line_from[0] = c->lib_line_why[0] = '\0';
	for (r = 0; r < b->size; r++) {
		const char *counted[64];
		double sum = 0;
		int nics = 0, k;
		unsigned i;
		bool first = true;

		for (q = 0; q < r && first; q++)
			first = strcmp(b->hosts[q], b->hosts[r]) != 0;
		if (!first)
			continue;
		/* Every rank of host r: its NICs, each counted once. */
		for (q = r; q < b->size; q++) {
			if (strcmp(b->hosts[q], b->hosts[r]))
				continue;
			if (!all[q].readable)
				return;
			for (i = 0; i < GDRB_NCCL_NICS && all[q].links.nics[i].name[0]; i++) {
				const struct gdrb_nccl_nic *nic = &all[q].links.nics[i];

				if (!nic->mbps || !strcmp(nic->name, "?"))
					return;
				for (k = 0; k < nics && strcmp(counted[k], nic->name); k++)
					;
				if (k < nics)
					continue;
				if (nics == (int)(sizeof(counted) / sizeof(counted[0])))
					return;
				counted[nics++] = nic->name;
				sum += nic->mbps / 1000.0;
				if (all[q].sysfs_rate & (1u << i))
					any_sysfs = true;
				else
					any_log = true;
			}
		}
		if (!nics)
			return;
		if (low_host < 0 || sum < lowest) {
			lowest = sum;
			low_host = r;
			low_nics = nics;
			snprintf(names, sizeof(names), "%s", counted[0]);
		}
	}
	if (low_host < 0)
		return;
	c->lib_line_gbps = lowest;
	snprintf(c->lib_line_from, sizeof(c->lib_line_from), "%s%s%s at %g Gb/s on %.40s, from %s%s%s",
		 low_nics > 1 ? "the NICs of NCCL's connections, " : "NIC ", low_nics > 1 ? "" : names,
		 low_nics > 1 ? "" : " of NCCL's connections", lowest, b->hosts[low_host],
		 any_log ? "NCCL's log" : "", any_log && any_sysfs ? " and " : "", any_sysfs ? "sysfs" : "");
	if (!strcmp(c->lib_algo, "Ring"))
		snprintf(c->lib_line_why, sizeof(c->lib_line_why),
			 "NCCL says Ring, whose bytes cross the network once each: this rate is not the network's (a NIC not in NCCL's log?)");
	else
		snprintf(c->lib_line_why, sizeof(c->lib_line_why),
			 "tree, NVLS, CollNet or SHARP at work (algorithm %.64s); for network acceptance force NCCL_ALGO=Ring",
			 c->lib_algo[0] ? c->lib_algo : "unknown: --nccl-tuning-log says which");
}

/* Rank 0's NET/IB devices as its log named them, for the nic column ("?" ones left out). */
static void used_nics(struct gdrb_nccl *n, const struct gdrb_nccl_links *l)
{
	size_t at = 0;
	unsigned i;

	for (i = 0; i < GDRB_NCCL_NICS && l->nics[i].name[0] && at < sizeof(n->nics); i++)
		if (strcmp(l->nics[i].name, "?"))
			at += (size_t)snprintf(n->nics + at, sizeof(n->nics) - at, "%s%s", at ? "+" : "", l->nics[i].name);
}

/* Rank 0: the row's columns and note from every rank's links. */
static void compose(struct gdrb_ctx *c, struct gdrb_nccl *n, struct log_wire *all)
{
	struct gdrb_nccl_links sum;
	char transports[96];
	int r, bad = -1;
	size_t at = 0;
	bool direct = gdrb_nccl_params(c->p)->gdr != GDRB_NCCL_GDR_OFF;
	uint32_t lines;

	gdrb_nccl_links_init(&sum);
	c->lib_note[0] = '\0';
	n->nics[0] = '\0';
	c->nic = n->nics;
	for (r = 0; r < c->boot->size; r++) {
		struct gdrb_nccl_links one;

		all[r].why[sizeof(all[r].why) - 1] = '\0';
		if (!all[r].readable || gdrb_nccl_links_from_wire(&one, &all[r].links, sizeof(all[r].links))) {
			if (bad < 0)
				bad = r;
			continue;
		}
		gdrb_nccl_links_add(&sum, &one);
		if (r == 0)
			used_nics(n, &one);
	}
	snprintf(c->lib_name, sizeof(c->lib_name), "%s", n->library);
	c->lib_gdr[0] = '\0';
	if (bad >= 0) {
		snprintf(c->lib_transport, sizeof(c->lib_transport), "unknown");
		at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
				       "transport unknown: NCCL's log on rank %d (%s) could not be read: %s", bad,
				       c->boot->hosts[bad], all[bad].readable ? "its counts were not valid" : all[bad].why);
	} else {
		lines = sum.net + sum.collnet + sum.p2p + sum.shm + sum.other;
		gdrb_nccl_transports(&sum, transports, sizeof(transports));
		if (lines) {
			snprintf(c->lib_transport, sizeof(c->lib_transport), "%s", transports);
			snprintf(c->lib_gdr, sizeof(c->lib_gdr), "%u/%u", (unsigned)sum.net_gdr, (unsigned)sum.net);
		} else if (c->boot->size == 1) {
			snprintf(c->lib_transport, sizeof(c->lib_transport), "none");
			snprintf(c->lib_gdr, sizeof(c->lib_gdr), "0/0");
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "one rank: NCCL connects to no one");
		} else {
			snprintf(c->lib_transport, sizeof(c->lib_transport), "unknown");
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "transport unknown: no connection line in NCCL's INFO log (%u lines read; NCCL_DEBUG_SUBSYS must include INIT or NET)",
					       (unsigned)sum.lines);
		}
		if (direct && sum.net_gdr < sum.net && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%sGPUDirect allowed but NCCL used NET/%s without GDRDMA on %u of %u connections",
					       at ? "; " : "", sum.nets[0] ? sum.nets : "?",
					       (unsigned)(sum.net - sum.net_gdr), (unsigned)sum.net);
		if (!direct && sum.net_gdr && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%sGPUDirect switched off but NCCL used GDRDMA on %u of %u connections",
					       at ? "; " : "", (unsigned)sum.net_gdr, (unsigned)sum.net);
		if (strstr(transports, "NET/Socket") && n->rdma_devices > 0 && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%sNCCL used NET/Socket though rank 0's node has %d RDMA device(s) (NCCL_IB_DISABLE, NCCL_NET or the IB plugin?)",
					       at ? "; " : "", n->rdma_devices);
		if (sum.foreign && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%s%u NCCL log line(s) of another process (not the rank's own host:pid prefix) were not counted",
					       at ? "; " : "", (unsigned)sum.foreign);
		if (sum.unparsed && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%s%u NCCL log line(s) looked like connections but were not understood",
					       at ? "; " : "", (unsigned)sum.unparsed);
	}
	if (n->choice_note[0] && at < sizeof(c->lib_note))
		at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at, "%s%s", at ? "; " : "", n->choice_note);
	if (n->env[0] && at < sizeof(c->lib_note))
		at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at, "%s%.*s", at ? "; " : "",
				       (int)(sizeof(c->lib_note) / 2), n->env);
	/* NCCL's files' settings in force, as NAME=VALUE the tools read as they read the environment's. */
	if (at < sizeof(c->lib_note)) {
		char conf[384];

		gdrb_nccl_conf_note(&n->conf, conf, sizeof(conf));
		if (conf[0])
			snprintf(c->lib_note + at, sizeof(c->lib_note) - at, "%s%s", at ? "; " : "", conf);
	}
}

/*
 * A plain NCCL_ALGO or NCCL_PROTO value (one name, no per-collective list, no "^") from the
 * environment, else from NCCL's files (*from their path, else NULL), or NULL.
 */
static const char *plain_setting(const struct gdrb_nccl *n, const char *name, char *buf, size_t len, const char **from)
{
	const char *v = getenv(name);
	size_t i;

	*from = NULL;
	if (!v)
		v = gdrb_nccl_conf_value(&n->conf, name, from);

	if (!v || !*v || strlen(v) >= len)
		return NULL;
	for (i = 0; v[i]; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9')))
			return NULL;
	memcpy(buf, v, i + 1);
	return buf;
}

/*
 * Rank 0: the CSV algorithm, protocol and channels of this size, from the TUNING lines NCCL
 * wrote since the last size, else from NCCL_ALGO/NCCL_PROTO where set to one name; why in
 * note where not known (never a guess).
 */
static void choice(struct gdrb_ctx *c, struct gdrb_nccl *n, char *note, size_t len)
{
	struct gdrb_nccl_tuning t;
	char why[192], algo[32], proto[32], where[200], shown[240];
	const char *a_from, *p_from;
	const char *a = plain_setting(n, "NCCL_ALGO", algo, sizeof(algo), &a_from);
	const char *p = plain_setting(n, "NCCL_PROTO", proto, sizeof(proto), &p_from);

	c->lib_algo[0] = c->lib_proto[0] = '\0';
	c->lib_channels = 0;
	note[0] = '\0';
	gdrb_nccl_tuning_init(&t);
	if (n->tuning && n->log[0] &&
	    gdrb_nccl_tuning_read(n->log, &(struct gdrb_nccl_owner){ n->host, n->pid }, &n->tuning_at, &t, why, sizeof(why)) == 0 &&
	    t.calls) {
		snprintf(c->lib_algo, sizeof(c->lib_algo), "%s", t.algos);
		snprintf(c->lib_proto, sizeof(c->lib_proto), "%s", t.protos);
		c->lib_channels = t.channels;
		if (!t.channels)
			snprintf(note, len, "channels unknown: this NCCL's TUNING line does not give them (2.24 on does)");
		return;
	}
	if (a || p) {
		const char *a_src = a_from ? a_from : "the environment", *p_src = p_from ? p_from : "the environment";

		snprintf(c->lib_algo, sizeof(c->lib_algo), "%s", a ? a : "");
		snprintf(c->lib_proto, sizeof(c->lib_proto), "%s", p ? p : "");
		/* The environment and each file may give one of them: name where each came from. */
		if (a && p && strcmp(a_src, p_src))
			snprintf(where, sizeof(where), "algorithm as set in %.80s, protocol in %.80s", a_src, p_src);
		else
			snprintf(where, sizeof(where), "%s as set in %.120s", a && p ? "algorithm and protocol" : a ? "algorithm" : "protocol",
				 a ? a_src : p_src);
		gdrb_nccl_clean(shown, sizeof(shown), where, sizeof(shown) - 1);
		snprintf(note, len, "%s, not read from NCCL's log", shown);
		return;
	}
	if (n->tuning)
		snprintf(note, len, "algorithm unknown: no TUNING line in NCCL's log at this size (NCCL before 2.20 prints none, send/receive have none)%s",
			 t.unparsed ? "; TUNING lines not understood" : "");
	else
		snprintf(note, len, "algorithm unknown: NCCL's TUNING log is off (--nccl-tuning-log turns it on, a line per call; or set NCCL_ALGO, NCCL_PROTO)");
}

int gdrb_nccl_end(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_nccl *n = gdrb_nccl_mine();
	struct log_wire mine, *all = NULL;
	int rc;

	memset(&mine, 0, sizeof(mine));
	gdrb_nccl_links_init(&mine.links);
	if (!n->log[0])
		snprintf(mine.why, sizeof(mine.why), "NCCL_DEBUG_FILE could not be expanded");
	else
		mine.readable = gdrb_nccl_log_read(n->log, &(struct gdrb_nccl_owner){ n->host, n->pid },
						   &mine.links, mine.why, sizeof(mine.why)) == 0;
	if (mine.readable)
		mine.sysfs_rate = rates_from_sysfs(&mine.links);
	if (c->boot->rank == 0 && !(all = calloc((size_t)c->boot->size, sizeof(*all))))
		return GDRB_ERR;
	rc = gdrb_boot_step_gather(c->boot, &mine, sizeof(mine), all, "reading NCCL's log", size);
	if (!rc && c->boot->rank == 0) {
		char was[sizeof(c->lib_transport) + sizeof(c->lib_gdr)], now[sizeof(was)], sz[32];

		snprintf(was, sizeof(was), "%s %s", c->lib_transport, c->lib_gdr);
		choice(c, n, n->choice_note, sizeof(n->choice_note));
		compose(c, n, all);
		line_rate(c, all);
		snprintf(now, sizeof(now), "%s %s", c->lib_transport, c->lib_gdr);
		/* In the table, where it changes: the connections NCCL made by the end of this size. */
		if (strcmp(was, now))
			printf("# from %s on: transport %s%s%s%s\n", gdrb_size_format(size, sz, sizeof(sz)),
			       c->lib_transport, c->lib_gdr[0] ? ", GPUDirect RDMA on " : "", c->lib_gdr,
			       c->lib_gdr[0] ? " network connections" : "");
	}
	free(all);
	return rc;
}
