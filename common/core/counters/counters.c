/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters around every measurement: what each rank reads, and what rose (gdrb_counters.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "counters_int.h"
#include "gdrb_clock.h"
#include "gdrb_counters.h"
#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_report.h"
#include "gdrb_sysfs.h"
#include "gdrb_topo.h"

#define PORTS_SHOWN 4           /* ports the header names, then "and N more" */
#define NOTE_SHOWN 2            /* rises a row's note names of each kind */

enum cnt_row_state gdrb_cnt_row_state(const struct cnt_track *t)
{
	if (t->vanished)
		return ROW_VANISHED;
	if (t->unreadable)
		return ROW_UNREADABLE;
	return t->reset ? ROW_RESET : ROW_OK;
}

const char *gdrb_cnt_row_state_name(enum cnt_row_state s)
{
	static const char *const names[] = { "ok", "unreadable", "reset", "vanished" };

	return names[s];
}

/* The PCI function above fn (a bridge's port), or NULL. */
static const char *upstream_of(const struct gdrb_pci_fn *fn)
{
	return fn->nchain >= 2 ? fn->chain[fn->nchain - 2] : NULL;
}

/* "mlx5_0 port 1" onto the header's list of ports (the first PORTS_SHOWN). */
static void list_port(char *list, size_t len, unsigned *shown, const char *dev, unsigned port)
{
	size_t at = strlen(list);
	char name[GDRB_CNT_DEV_LEN];

	if ((*shown)++ >= PORTS_SHOWN || at >= len)
		return;
	gdrb_cnt_name(name, sizeof(name), dev);
	snprintf(list + at, len - at, "%s%s port %u", at ? ", " : "", name, port);
}

/* "enp0s0np0 31 of 140" onto the header's list of netdevs: what its ethtool statistics gave. */
static void list_netdev(struct gdrb_counters *cs, const char *ifname, int rc, size_t found, size_t kept)
{
	size_t at = strlen(cs->netdevs), len = sizeof(cs->netdevs);
	char name[GDRB_CNT_DEV_LEN];

	if (cs->nnetdevs++ >= PORTS_SHOWN || at >= len)
		return;
	gdrb_cnt_name(name, sizeof(name), ifname);
	at += (size_t)snprintf(cs->netdevs + at, len - at, "%s%s ", at ? ", " : "", name);
	if (at >= len)
		return;
	if (rc)
		snprintf(cs->netdevs + at, len - at, "unreadable (%s)", strerror(-rc));
	else if (!found)
		snprintf(cs->netdevs + at, len - at, "none (it has no statistics)");
	else
		snprintf(cs->netdevs + at, len - at, "%zu of %zu", kept, found);
}

/* A RoCE port's netdev: its congestion and error statistics (ethtool_classes.def). */
static int add_port_netdev(struct gdrb_counters *cs, const char *root, const struct gdrb_ethtool *eth,
			   const char *dev, unsigned port)
{
	char ifname[64];
	size_t found = 0, before = cs->set.n;
	int rc;

	gdrb_cnt_port_netdev(root, dev, port, ifname, sizeof(ifname));
	if (!ifname[0])
		return 0;
	rc = gdrb_cnt_add_netdev(&cs->set, eth, ifname, dev, port, &found);
	if (rc == -ENOMEM)
		return rc;
	list_netdev(cs, ifname, rc, found, cs->set.n - before);
	return 0;
}

/* Every active port of the node (and its netdev's statistics), and the PCIe link of each NIC that has one. */
static int add_node_ports(struct gdrb_counters *cs, const char *root, const struct gdrb_ethtool *eth,
			  const struct gdrb_topo *topo, char *list, size_t len, unsigned *nports)
{
	size_t n, p;
	int rc = 0;

	for (n = 0; n < topo->nnics && !rc; n++) {
		const struct gdrb_topo_nic *nic = &topo->nics[n];
		bool active = false;

		for (p = 0; p < nic->nports && !rc; p++) {
			if (nic->ports[p].state != GDRB_PORT_ACTIVE)
				continue;
			active = true;
			list_port(list, len, nports, nic->name, nic->ports[p].num);
			rc = gdrb_cnt_add_port(&cs->set, root, nic->name, nic->ports[p].num);
			if (!rc)
				rc = add_port_netdev(cs, root, eth, nic->name, nic->ports[p].num);
		}
		if (!rc && active && nic->has_pci)
			rc = gdrb_cnt_add_pci(&cs->set, root, nic->name, nic->pci.bdf, upstream_of(&nic->pci));
	}
	return rc;
}

/* The port the transport names, and its NIC's PCIe link where the NIC is a PCI function. */
static int add_named_port(struct gdrb_counters *cs, const char *root, const struct gdrb_ethtool *eth,
			  const struct gdrb_topo *topo, const char *dev, unsigned port)
{
	size_t n;
	int rc = gdrb_cnt_add_port(&cs->set, root, dev, port);

	if (!rc)
		rc = add_port_netdev(cs, root, eth, dev, port);
	for (n = 0; n < topo->nnics && !rc; n++)
		if (!strcmp(topo->nics[n].name, dev) && topo->nics[n].has_pci)
			rc = gdrb_cnt_add_pci(&cs->set, root, dev, topo->nics[n].pci.bdf,
					      upstream_of(&topo->nics[n].pci));
	return rc;
}

static int add_gpu(struct gdrb_counters *cs, const char *root, const struct gdrb_topo *topo,
		   const char *bus_id, char *bdf)
{
	size_t g;

	if (gdrb_pci_bdf_of_bus_id(bus_id, bdf))
		return 0;
	for (g = 0; g < topo->ngpus; g++)
		if (!strcmp(topo->gpus[g].pci.bdf, bdf))
			return gdrb_cnt_add_pci(&cs->set, root, "GPU", bdf, upstream_of(&topo->gpus[g].pci));
	return gdrb_cnt_add_pci(&cs->set, root, "GPU", bdf, NULL);
}

/* The header's line: what rank 0 reads, and why those. */
static void describe(struct gdrb_counters *cs, const struct gdrb_counters_want *w, const char *root,
		     bool have_ib, const char *ports, unsigned nports, const char *gpu_bdf)
{
	char lib[16], dev[GDRB_CNT_DEV_LEN], *s = cs->what;
	size_t len = sizeof(cs->what), at = 0, i, pci_rows = 0, gpu_rows = 0, gpu_aer = 0;

	for (i = 0; i < cs->set.n; i++) {
		bool gpu = !strcmp(cs->set.id[i].device, "GPU");

		pci_rows += cs->set.id[i].pcie && !gpu;
		gpu_rows += cs->set.id[i].pcie && gpu;
		gpu_aer += cs->set.id[i].pcie && gpu && !strncmp(cs->set.id[i].source, "aer", 3);
	}
	for (i = 0; w->library && w->library[i] && i + 1 < sizeof(lib); i++)
		lib[i] = (char)toupper((unsigned char)w->library[i]);
	lib[i] = '\0';
#define PUT(...) (at += (at < len ? (size_t)snprintf(s + at, len - at, __VA_ARGS__) : 0))
	PUT("counters: ");
	if (w->nic_dev) {
		gdrb_cnt_name(dev, sizeof(dev), w->nic_dev);
		PUT("%s port %u, the port this run uses%s%s", dev, w->nic_port,
		    cs->set.ports && cs->set.n > pci_rows ? "" : " (it has no counters/ or hw_counters/)",
		    pci_rows ? ", and its PCIe link" : "");
	} else if (w->library && !have_ib) {
		PUT("no RDMA device on rank 0's node (%s/class/infiniband does not exist): no NIC counter is read",
		    root);
	} else if (w->library && !nports) {
		PUT("no active RDMA port on rank 0's node: no NIC counter is read");
	} else if (w->library) {
		PUT("every active RDMA port of each node, read by the node's first rank (%s does not say which NIC it uses): on rank 0's node %s",
		    lib, ports);
		if (nports > PORTS_SHOWN)
			PUT(" and %u more", nports - PORTS_SHOWN);
		PUT("%s", pci_rows ? ", and their PCIe links" : "");
	} else {
		PUT("no NIC (the benchmark uses none)");
	}
	/* A virtual machine's GPU (the H200 guest of results/gpu-h200) may have no AER files. */
	if (gpu_bdf && gpu_rows)
		PUT("; the PCIe link%s of GPU %s", gpu_aer ? " and AER counts" : " (sysfs has no AER counts for it)",
		    gpu_bdf);
	else if (gpu_bdf)
		PUT("; GPU %s: not in %s/bus/pci/devices", gpu_bdf, root);
	if (cs->nnetdevs) {
		PUT("; of %s netdev%s ethtool statistics, the pause, ECN, discard and error ones: %s",
		    w->nic_dev ? "its" : "their", cs->nnetdevs > 1 ? "s'" : "'s", cs->netdevs);
		if (cs->nnetdevs > PORTS_SHOWN)
			PUT(" and %u more", cs->nnetdevs - PORTS_SHOWN);
	}
	if (cs->set.n)
		PUT("; rank 0 reads %zu counters, %s, outside the timed loops", cs->set.n,
		    w->when ? w->when : "before the first size and after each measured path");
#undef PUT
}

int gdrb_counters_open(const struct gdrb_boot *b, const struct gdrb_counters_want *w,
		       struct gdrb_counters **out)
{
	const char *root = gdrb_inject()->sysfs_root ? gdrb_inject()->sysfs_root : "/sys";
	/* A fixture tree's netdevs are not this machine's: their statistics come from the tree too. */
	const struct gdrb_ethtool eth = gdrb_inject()->sysfs_root ?
		(struct gdrb_ethtool){ gdrb_ethtool_fixture, root } : (struct gdrb_ethtool){ gdrb_ethtool_ioctl, NULL };
	char path[PATH_MAX], ports[256] = "", bdf[GDRB_BDF_LEN];
	struct gdrb_counters *cs;
	struct gdrb_topo topo;
	unsigned nports = 0;
	bool have_ib;
	int rc = 0;

	*out = NULL;
	cs = calloc(1, sizeof(*cs));
	if (!cs) {
		gdrb_err("out of memory for the counters");
		return GDRB_ERR;
	}
	/* A node without PCI devices in sysfs (a container) may still have its RDMA ports. */
	if (gdrb_topo_load_parts(root, 0, &topo))
		memset(&topo, 0, sizeof(topo));
	have_ib = gdrb_path(path, sizeof(path), root, "class/infiniband") == 0 && gdrb_is_dir(path);
	if (w->nic_dev)
		rc = add_named_port(cs, root, &eth, &topo, w->nic_dev, w->nic_port);
	else if (w->library && b->local_rank == 0)
		rc = add_node_ports(cs, root, &eth, &topo, ports, sizeof(ports), &nports);
	if (!rc && w->gpu_bus_id)
		rc = add_gpu(cs, root, &topo, w->gpu_bus_id, bdf);
	gdrb_topo_free(&topo);
	if (!rc) {
		size_t n = cs->set.n ? cs->set.n : 1;

		cs->value = calloc(n, sizeof(*cs->value));
		cs->state = calloc(n, sizeof(*cs->state));
		cs->track = calloc(n, sizeof(*cs->track));
		if (!cs->value || !cs->state || !cs->track)
			rc = -1;
	}
	if (rc) {
		gdrb_err("out of memory for the counters (%zu so far)", cs->set.n);
		gdrb_counters_close(cs);
		return GDRB_ERR;
	}
	describe(cs, w, root, have_ib, ports, nports,
		 w->gpu_bus_id && gdrb_pci_bdf_of_bus_id(w->gpu_bus_id, bdf) == 0 ? bdf : NULL);
	*out = cs;
	return 0;
}

void gdrb_counters_close(struct gdrb_counters *cs)
{
	if (!cs)
		return;
	gdrb_cnt_set_free(&cs->set);
	free(cs->value);
	free(cs->state);
	free(cs->track);
	free(cs);
}

void gdrb_counters_describe(const struct gdrb_counters *cs, char *line, size_t len)
{
	snprintf(line, len, "%s", cs ? cs->what : "counters: none");
}

/* The test hook GDRB_INJECT_COUNTER: the named counters move from its reading on. */
static void inject(struct gdrb_counters *cs)
{
	const struct gdrb_inject *h = gdrb_inject();
	uint64_t delta;
	size_t i;

	if (!h->counter_name[0] || cs->readings < h->counter_from)
		return;
	/* A steady rise: N more at each reading from the K-th (saturating). */
	delta = h->counter_delta;
	if (h->counter_ramp)
		delta = cs->readings - h->counter_from + 1 > UINT64_MAX / delta ? UINT64_MAX :
			delta * (cs->readings - h->counter_from + 1);
	for (i = 0; i < cs->set.n; i++) {
		uint64_t *v = &cs->value[i];

		if (cs->state[i] != GDRB_CNT_READ_OK || strcmp(cs->set.id[i].name, h->counter_name))
			continue;
		if (h->counter_down)
			*v = *v > delta ? *v - delta : 0;
		else
			*v = gdrb_cnt_sum(*v, delta);
	}
}

/* An error counter's rise into *rise, which keeps the largest GDRB_CNT_RISE_ITEMS. */
static void note_rise(struct gdrb_cnt_rise *rise, const struct gdrb_cnt_id *id, uint64_t delta)
{
	struct gdrb_cnt_rise_item *it;
	unsigned k, at;

	rise->errors[id->pcie]++;
	for (at = 0; at < rise->n && rise->item[at].delta >= delta; at++)
		;
	if (at >= GDRB_CNT_RISE_ITEMS)
		return;
	if (rise->n < GDRB_CNT_RISE_ITEMS)
		rise->n++;
	for (k = rise->n - 1; k > at; k--)
		rise->item[k] = rise->item[k - 1];
	it = &rise->item[at];
	memset(it, 0, sizeof(*it));
	if (id->pcie)
		snprintf(it->where, sizeof(it->where), "%s %s", id->device, id->port);
	else
		snprintf(it->where, sizeof(it->where), "%s port %s", id->device, id->port);
	snprintf(it->counter, sizeof(it->counter), "%s", id->name);
	it->delta = delta;
	it->pcie = id->pcie;
}

/* A traffic counter of packets (the denominator of errors per packet; accept's rule too). */
static bool counts_packets(const struct gdrb_cnt_id *id)
{
	size_t n = strlen(id->name);

	return id->cls == GDRB_CNT_TRAFFIC && !id->pcie &&
	       ((n >= 7 && !strcmp(id->name + n - 7, "packets")) || (n >= 4 && !strcmp(id->name + n - 4, "pkts")));
}

/* What a rise of counter id by delta adds to *rise (NULL: nothing). */
static void add_rise(struct gdrb_cnt_rise *rise, const struct gdrb_cnt_id *id, uint64_t delta)
{
	if (!rise)
		return;
	if (id->cls == GDRB_CNT_ERROR) {
		note_rise(rise, id, delta);
		if (!id->pcie)
			rise->error_sum = gdrb_cnt_sum(rise->error_sum, delta);
	} else if (counts_packets(id)) {
		rise->packets = gdrb_cnt_sum(rise->packets, delta);
	}
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void gdrb_cnt_run_id(const struct gdrb_counters *cs, const char *host, char *buf, size_t len)
{
	uint64_t ns = cs && cs->readings ? cs->run_ns : realtime_ns();

	snprintf(buf, len, "%s:%ld:%llu", host ? host : "", (long)getpid(), (unsigned long long)ns);
}

void gdrb_counters_read(struct gdrb_counters *cs, struct gdrb_cnt_rise *rise)
{
	uint64_t t0;
	size_t i;

	if (rise)
		memset(rise, 0, sizeof(*rise));
	if (!cs)
		return;
	t0 = gdrb_mono_ns();
	gdrb_cnt_read(&cs->set, cs->value, cs->state);
	cs->last_ns = gdrb_mono_ns();
	if (cs->ntook < CNT_TIMED_MAX)
		cs->took_us[cs->ntook++] = (double)(cs->last_ns - t0) * 1e-3;
	inject(cs);
	if (cs->readings == 0) {
		gdrb_timestamp(cs->run_start, sizeof(cs->run_start));
		cs->run_ns = realtime_ns();
	}
	if (rise)
		rise->ports = cs->set.ports;
	for (i = 0; i < cs->set.n; i++) {
		struct cnt_track *t = &cs->track[i];
		const struct gdrb_cnt_id *id = &cs->set.id[i];
		uint64_t v = cs->value[i];

		if (cs->readings == 0) {
			t->first_state = cs->state[i];
			t->before = v;
		}
		t->last_state = cs->state[i];
		if (cs->state[i] != GDRB_CNT_READ_OK && rise && !id->pcie &&
		    (id->cls == GDRB_CNT_ERROR || counts_packets(id)))
			rise->unreadable++;
		if (cs->state[i] == GDRB_CNT_READ_VANISHED) {
			t->vanished = true;
			continue;
		}
		if (cs->state[i] != GDRB_CNT_READ_OK) {
			t->unreadable = true;
			continue;
		}
		if (id->cls == GDRB_CNT_OTHER && !id->pcie && !strcmp(id->name, "lifespan") && v > cs->lifespan_ms)
			cs->lifespan_ms = v;
		if (t->have_last && v != t->last) {
			t->changed = true;
			/* A link's speed or width is a value: it may go down; a counter that does was reset. */
			if (v < t->last && id->cls != GDRB_CNT_LINK)
				t->reset = true;
			if (v > t->last && id->cls != GDRB_CNT_LINK) {
				t->rise = gdrb_cnt_sum(t->rise, v - t->last);
				add_rise(rise, id, v - t->last);
			}
		}
		t->last = v;
		t->have_last = true;
	}
	cs->readings++;
}

/* The kernel keeps a hw_counters/ reading this long at most (ms): a larger lifespan is not waited for. */
#define LIFESPAN_WAIT_MAX_MS 100

void gdrb_counters_read_fresh(struct gdrb_counters *cs, struct gdrb_cnt_rise *rise)
{
	if (cs && cs->readings && cs->lifespan_ms) {
		uint64_t wait_ms = cs->lifespan_ms < LIFESPAN_WAIT_MAX_MS ? cs->lifespan_ms + 1 : LIFESPAN_WAIT_MAX_MS;
		uint64_t until = cs->last_ns + wait_ms * 1000000u, now = gdrb_mono_ns();

		if (now < until) {
			struct timespec ts = { 0, (long)(until - now) };

			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
		}
	}
	gdrb_counters_read(cs, rise);
}

/* One rise of the note: where, which counter, how much, on which host (the largest of a host's). */
struct merged {
	const char *host;
	const struct gdrb_cnt_rise_item *item;
};

static int by_delta(const void *a, const void *b)
{
	uint64_t x = ((const struct merged *)a)->item->delta, y = ((const struct merged *)b)->item->delta;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The rises of one kind (NIC or PCIe) onto the note: "NIC errors rose: A +1 (h), B +2 (h) and more". */
static size_t note_kind(char *note, size_t len, size_t at, const struct merged *m, size_t n,
			bool pcie, bool more)
{
	size_t i, shown = 0, of_kind = 0;

	for (i = 0; i < n; i++) {
		if (m[i].item->pcie != pcie)
			continue;
		if (of_kind++ >= NOTE_SHOWN)
			continue;
		if (at < len)
			at += (size_t)snprintf(note + at, len - at, "%s%s%s %s +%llu (%s)",
					       at && !shown ? "; " : "", shown ? ", " : pcie ?
					       "PCIe errors rose: " : "NIC errors rose: ", m[i].item->where,
					       m[i].item->counter, (unsigned long long)m[i].item->delta,
					       m[i].host);
		shown++;
	}
	if (shown && (of_kind > shown || more) && at < len)
		at += (size_t)snprintf(note + at, len - at, " and more");
	return at;
}

void gdrb_counters_note(const struct gdrb_cnt_rise *rises, size_t stride, const struct gdrb_boot *b,
			char *note, size_t len)
{
	struct merged *m;
	bool more[2] = { false, false };
	size_t n = 0, i, at = 0;
	int r;
	unsigned k;

	note[0] = '\0';
	m = calloc((size_t)b->size * GDRB_CNT_RISE_ITEMS, sizeof(*m));
	if (!m)
		return;
	for (r = 0; r < b->size; r++) {
		const struct gdrb_cnt_rise *rise = (const void *)((const char *)rises + (size_t)r * stride);
		unsigned items = rise->n < GDRB_CNT_RISE_ITEMS ? rise->n : GDRB_CNT_RISE_ITEMS;
		uint32_t listed[2] = { 0, 0 };

		for (k = 0; k < items; k++) {
			const struct gdrb_cnt_rise_item *it = &rise->item[k];

			listed[it->pcie != 0]++;

			/* Ranks of one host that read one port saw one rise: the largest is kept. */
			for (i = 0; i < n; i++)
				if (!strcmp(m[i].host, b->hosts[r]) && !strcmp(m[i].item->where, it->where) &&
				    !strcmp(m[i].item->counter, it->counter))
					break;
			if (i == n)
				m[n++] = (struct merged){ b->hosts[r], it };
			else if (it->delta > m[i].item->delta)
				m[i].item = it;
		}
		/* Errors past the ones itemised: the note says there are more. */
		for (k = 0; k < 2; k++)
			more[k] |= rise->errors[k] > listed[k];
	}
	qsort(m, n, sizeof(*m), by_delta);
	at = note_kind(note, len, at, m, n, false, more[0]);
	note_kind(note, len, at, m, n, true, more[1]);
	free(m);
}
