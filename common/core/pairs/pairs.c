/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All pairs in shifted rounds: layout (shift groups), the schedule, and the
 * measurement of one round on one rank. Output is pairs_out.c's.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gdrb_clock.h"
#include "gdrb_driver.h"
#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_pattern.h"
#include "gdrb_report.h"
#include "gdrb_run.h"
#include "gdrb_size.h"
#include "gdrb_stage.h"
#include "gdrb_watchdog.h"
#include "pairs_int.h"

#define EST_BATCH 10            /* iterations that estimate one where one is under 1% of --time */
#define PAIRS_LINGER_S 10.0     /* most seconds a rank that gave up waits for the ranks stuck with it */

/* Test hook: GDRB_INJECT_HOSTS=h0,h1,... names the ranks' hosts for the layout (one host, many "nodes"). */
static void inject_hosts(struct pairs_run *r)
{
	const char *s = gdrb_inject()->hosts;
	int i;

	for (i = 0; s && *s && i < r->n; i++) {
		size_t len = strcspn(s, ",");

		snprintf(r->members[i].host, GDRB_HOST_MAX, "%.*s", (int)(len < 63 ? len : 63), s);
		s += len + (s[len] == ',');
	}
}

/* Hosts in order of first appearance; local ranks; shift groups. Usage errors: one line. */
static int layout(struct pairs_run *r)
{
	int n = r->n, i, j, nhosts = 0, *host_of, *count;
	int rc = 0;

	host_of = calloc((size_t)n, sizeof(*host_of));
	count = calloc((size_t)n, sizeof(*count));
	r->at = calloc((size_t)n, sizeof(*r->at));
	if (!host_of || !count || !r->at) {
		gdrb_err("out of memory");
		rc = GDRB_ERR;
		goto out;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(r->members[j].host, r->members[i].host); j++)
			;
		host_of[i] = j < i ? host_of[j] : nhosts++;
		r->members[i].local_rank = count[host_of[i]]++;
		r->members[i].rank = i;
	}
	if (n < 2) {
		gdrb_usage_err("%s measures pairs: it needs at least 2 ranks (got %d); run it as 'mpirun -np 2 %s' or more",
			       r->ops->name, n, gdrb_prog());
		rc = GDRB_ERR_USAGE;
		goto out;
	}
	if (r->pp->granularity == GDRB_PAIRS_GRAN_RANK) {
		r->m = (unsigned)n;
		r->ngroups = 1;
		for (i = 0; i < n; i++) {
			r->members[i].pos = i;
			r->at[i] = i;
		}
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (count[host_of[i]] == count[0] && (r->pp->granularity == GDRB_PAIRS_GRAN_RAIL || count[0] == 1))
			continue;
		if (r->pp->granularity == GDRB_PAIRS_GRAN_NODE)
			gdrb_usage_err("--granularity node: one rank per node, but host %s runs %d ranks; start one per node (mpirun --map-by ppr:1:node) or use --granularity rail or rank",
				       r->members[i].host, count[host_of[i]]);
		else
			gdrb_usage_err("--granularity rail: every node must run as many ranks (one per GPU), but host %s runs %d and host %s runs %d",
				       r->members[0].host, count[0], r->members[i].host, count[host_of[i]]);
		rc = GDRB_ERR_USAGE;
		goto out;
	}
	if (nhosts < 2) {
		gdrb_usage_err("--granularity %s pairs ranks of different nodes, and all %d ranks run on %s; use --granularity rank on one node",
			       gdrb_pairs_gran_names[r->pp->granularity], n, r->members[0].host);
		rc = GDRB_ERR_USAGE;
		goto out;
	}
	r->m = (unsigned)nhosts;
	r->ngroups = (unsigned)count[0];
	for (i = 0; i < n; i++) {
		r->members[i].group = r->members[i].local_rank;
		r->members[i].pos = host_of[i];
		r->at[(size_t)r->members[i].group * r->m + (size_t)host_of[i]] = i;
	}
out:
	free(host_of);
	free(count);
	return rc;
}

/* This rank's GPU (opened, or GPU i of its node by PCI order in rail mode) and its nearest NIC. */
static void describe_member(struct pairs_run *r, struct pairs_member *me, const struct gdrb_gpu_info *gpu)
{
	struct gdrb_topo topo;
	size_t g;

	if (gpu)    /* lower case, as sysfs writes it (CUDA writes upper case) */
		for (g = 0; g < sizeof(me->gpu) - 1 && gpu->pci_bus_id[g]; g++)
			me->gpu[g] = (char)tolower((unsigned char)gpu->pci_bus_id[g]);
	if (gdrb_topo_load_parts("/sys", 0, &topo))
		return;
	for (g = 0; g < topo.ngpus; g++) {
		bool match = gpu ? !strcasecmp(topo.gpus[g].pci.bdf, me->gpu) :
			     r->pp->granularity == GDRB_PAIRS_GRAN_RAIL && (int)g == me->local_rank;
		int nic;

		if (!match)
			continue;
		snprintf(me->gpu, sizeof(me->gpu), "%s", topo.gpus[g].pci.bdf);
		nic = gdrb_topo_nearest_nic(&topo, g, false, NULL);
		if (nic >= 0)
			snprintf(me->nic, sizeof(me->nic), "%s", topo.nics[nic].name);
		break;
	}
	gdrb_topo_free(&topo);
}

static int copy(struct gdrb_buf *dst, const struct gdrb_buf *src, size_t off, size_t len)
{
	return gdrb_buf_copy(dst, off, src, off, len);
}

struct xfer {
	struct pairs_run *r;
	const struct gdrb_variant *path;
	size_t size;
	unsigned count;
	int to, from;           /* bandwidth: both; latency: to (initiator) or from (responder) */
	bool initiator;
};

static char *wire(struct pairs_run *r, const struct gdrb_variant *path, bool out)
{
	return (char *)(out ? (path->staged ? r->send_bounce.ptr : r->send.ptr) :
			      (path->staged ? r->recv_bounce.ptr : r->recv.ptr));
}

/* The staged path's copies of the window in, once it arrived: before it is acknowledged. */
static int received(void *arg)
{
	const struct xfer *x = arg;
	unsigned j;

	for (j = 0; j < x->count; j++)
		if (copy(&x->r->recv, &x->r->recv_bounce, j * x->size, x->size))
			return GDRB_ERR;
	return 0;
}

/*
 * One bandwidth iteration, as mpiGraph times it: the receives posted, a
 * barrier of all ranks, then *secs is this rank's time from its first send
 * (its staging copies included) to the acknowledgement of the window by its
 * destination, which the destination sends as its receives are done (and
 * copied). Without the barrier a rank whose source is slow would post its
 * next receives late and pace its own sender: the ring would run at its
 * slowest link. The barrier is not timed; it is a named step
 * (gdrb_boot_step_barrier), so a rank lost in it is named by the rank that
 * waits on it. The first, untimed iteration of a measurement has none.
 */
static int bw_iteration(const struct xfer *x, bool barrier, double *secs)
{
	struct pairs_run *r = x->r;
	bool st = x->path->staged;
	struct gdrb_pairs_window w = { .to = x->to, .from = x->from, .size = x->size, .count = x->count,
				       .stride = x->size, .send = wire(r, x->path, true),
				       .recv = wire(r, x->path, false), .received = st ? received : NULL,
				       .arg = (void *)x };
	struct gdrb_pairs_done done;
	uint64_t t0;
	unsigned j;

	if (r->ops->post(r->priv, &w))
		return GDRB_ERR;
	if (barrier && gdrb_boot_step_barrier(r->boot, "the barrier of an iteration", x->size))
		return GDRB_ERR;
	t0 = gdrb_ticks();
	for (j = 0; st && j < x->count; j++)
		if (copy(&r->send_bounce, &r->send, j * x->size, x->size))
			return GDRB_ERR;
	if (r->ops->exchange(r->priv, &w, &done))
		return GDRB_ERR;
	*secs = gdrb_ticks_to_us(done.out - t0) * 1e-6;
	return 0;
}

/* One ping-pong: the staging copies are timed with the transfer. */
static int lat_iteration(const struct xfer *x)
{
	struct pairs_run *r = x->r;
	const struct gdrb_pairs_ops *ops = r->ops;
	bool st = x->path->staged;
	size_t sz = x->size;

	if (x->initiator)
		return (st && copy(&r->send_bounce, &r->send, 0, sz)) ||
		       ops->send(r->priv, x->to, wire(r, x->path, true), sz) ||
		       ops->recv(r->priv, x->to, wire(r, x->path, false), sz) ||
		       (st && copy(&r->recv, &r->recv_bounce, 0, sz)) ? GDRB_ERR : 0;
	return ops->recv(r->priv, x->from, wire(r, x->path, false), sz) ||
	       (st && (copy(&r->recv, &r->recv_bounce, 0, sz) ||
		       copy(&r->send_bounce, &r->send, 0, sz))) ||
	       ops->send(r->priv, x->from, wire(r, x->path, true), sz) ? GDRB_ERR : 0;
}

/* An iteration of either metric; bandwidth: *secs its pair's time (every rank takes part). */
static int iteration(const struct xfer *x, bool active, double *secs)
{
	*secs = 0;
	if (x->count)
		return bw_iteration(x, true, secs);
	return active ? lat_iteration(x) : 0;
}

/*
 * How long a peer may be busy without a word to this rank: the pairs of a
 * latency phase time a batch of ping-pongs (a tenth of the budget, planned
 * from the rate so far) while the ranks outside them wait for the agreement
 * after it; the estimate before timing waits on the slowest pair's batch too.
 * A machine that gets busier stretches a batch. As long as the driver lets any
 * size run. Bandwidth iterations end together (each has a barrier).
 */
static double busy_s(const struct pairs_run *r)
{
	return GDRB_MAX_STRETCH * r->p.time_per_size;
}

/*
 * The timed ping-pongs of a latency phase, in batches that aim at a tenth of
 * the budget (the first at the estimate `est`, then at the rate so far, at
 * most twice the last): after each, every rank (those outside a pair too)
 * agrees on the slowest pair's ping-pong time so far, or a tenth of the
 * slowest rank's seconds since the phase began (agreements included) where
 * that is more, and all stop alike once it is the budget or -n have run: the
 * budget holds the ping-pongs, as the driver's does, and the phase ends by
 * GDRB_MAX_STRETCH x the budget however long the agreements take (over the
 * VMs' lossy link they took half the budget, and the pairs ran half their
 * iterations). A count planned once from a short batch ran 10 x the budget
 * and more on a machine that got busier during the phase (the sanitizers
 * beside other tests). *secs sums this pair's batch spans, each begun after one
 * untimed ping-pong: the ranks leave an agreement (or the barrier before timing)
 * at different times, a rank whose last message came over a slow link last, and a
 * span begun at once would count its partner's wait for it (over the VMs' lossy
 * link, TCP's retransmissions under the agreements made an innocent pair 20x its
 * best, and all pairs named innocent nodes).
 */
static int lat_batches(struct xfer *x, bool active, double est, uint64_t *iters, double *secs)
{
	struct pairs_run *r = x->r;
	const double budget = r->p.time_per_size;
	const uint64_t n = r->p.iters;
	uint64_t start = gdrb_ticks(), t0, done = 0, batch, i, left;
	double took, per;

	/* A rank outside every pair waits on the pairs' batches, which a loaded machine stretches. */
	gdrb_watchdog_allow(busy_s(r));
	*secs = 0;
	batch = (uint64_t)(budget / 10 / est);
	for (batch = batch < 1 ? 1 : batch < n ? batch : n; batch; ) {
		/* Untimed: the pair meets before its clock starts (see above). */
		if (active && lat_iteration(x))
			return GDRB_ERR;
		t0 = gdrb_ticks();
		for (i = 0; active && i < batch; i++)
			if (lat_iteration(x))
				return GDRB_ERR;
		*secs += gdrb_ticks_to_us(gdrb_ticks() - t0) * 1e-6;
		done += batch;
		/* One agreement for the budget and the hard stop: the larger of the two, in the budget's terms. */
		took = gdrb_ticks_to_us(gdrb_ticks() - start) * 1e-6 / GDRB_MAX_STRETCH;
		took = *secs > took ? *secs : took;
		if (gdrb_boot_step_max(r->boot, &took, "agreeing on the latency phase's next batch", x->size))
			return GDRB_ERR;
		if (done >= n || took >= budget)
			break;
		per = took / (double)done;
		left = (uint64_t)((budget - took) / per) + 1;
		i = (uint64_t)(budget / 10 / per);
		i = i < 1 ? 1 : i < 2 * batch ? i : 2 * batch;
		i = i < left ? i : left;
		batch = i < n - done ? i : n - done;
	}
	gdrb_watchdog_allow(0);
	*iters = done;
	return 0;
}

/*
 * Warm-up and timed iterations; every rank runs the same counts (a
 * bandwidth iteration has a barrier of all ranks; latency phases end
 * together), agreed from the slowest rank's second iteration: the first
 * one pays for the connection to a peer met for the first time (TCP and
 * most transports connect lazily), which would make a pair of the first
 * round read low and its count small. Bandwidth: *secs sums the pair's
 * times; latency: the spans of its batches (lat_batches). active: this rank has
 * a part (latency phases leave some idle).
 */
static int run_timed(struct xfer *x, bool active, uint64_t *iters, double *secs)
{
	struct pairs_run *r = x->r;
	double est, budget = r->p.time_per_size, s;
	uint64_t t0, warm, n, i, batch;

	/* Until all agree, a peer may still be timing the last latency phase's pairs. */
	gdrb_watchdog_allow(busy_s(r));
	if (x->count) {         /* the connection needs one message, not the window */
		struct xfer first = *x;

		first.count = 1;
		if (bw_iteration(&first, false, &s))
			return GDRB_ERR;
	} else if (iteration(x, active, &s)) {
		return GDRB_ERR;
	}
	/* One iteration, then (where it is short) a batch: one sample misjudged small sizes 2x. */
	for (batch = 1, est = 0; batch; batch = est < budget / 100 && batch == 1 ? (uint64_t)EST_BATCH : 0) {
		t0 = gdrb_ticks();
		for (i = 0; i < batch; i++)
			if (iteration(x, active, &s))
				return GDRB_ERR;
		est = active ? gdrb_ticks_to_us(gdrb_ticks() - t0) * 1e-6 / (double)batch : 0;
		if (gdrb_boot_step_max(r->boot, &est, "agreeing on iteration counts", x->size))
			return GDRB_ERR;
		gdrb_watchdog_allow(0);
		if (est <= 0)
			est = 1e-9;
	}
	warm = (uint64_t)(0.1 * budget / est);
	warm = warm < r->p.warmup ? warm : r->p.warmup;
	n = (uint64_t)(budget / est);
	n = n < 1 ? 1 : n > r->p.iters ? r->p.iters : n;
	for (i = 0; i < warm; i++)
		if (iteration(x, active, &s))
			return GDRB_ERR;
	if (x->count) {
		*iters = n;
		*secs = 0;
		for (i = 0; i < n; i++) {
			if (iteration(x, active, &s))
				return GDRB_ERR;
			*secs += s;
		}
		return 0;
	}
	if (gdrb_boot_step_barrier(r->boot, "the barrier before timing", x->size))
		return GDRB_ERR;
	return lat_batches(x, active, est, iters, secs);
}

/* The transport's begin, where it has one: after prepare, before the first message. */
static int begin(struct pairs_run *r, int to, int from, size_t size)
{
	return r->ops->begin ? r->ops->begin(r->priv, to, from, size) : 0;
}

static uint64_t seed_of(size_t size, unsigned k, unsigned slot, int sender)
{
	return gdrb_pattern_seed(size, k, slot, (unsigned)sender);
}

/* Fill the send slots with this rank's pattern, the receive slots with one no peer sends. */
static int prepare(struct pairs_run *r, size_t size, unsigned k, unsigned count)
{
	unsigned j;

	for (j = 0; j < count; j++)
		if (gdrb_buf_fill_pattern(&r->send, j * size, size, seed_of(size, k, j, r->boot->rank)) ||
		    gdrb_buf_fill_pattern(&r->recv, j * size, size, ~seed_of(size, k, j, r->boot->rank)))
			return GDRB_ERR;
	return 0;
}

static uint64_t check(struct pairs_run *r, size_t size, unsigned k, unsigned count, int from)
{
	uint64_t errs = 0, e;
	size_t first = 0;
	unsigned j;

	gdrb_run_corrupt(r->boot, &r->recv, 0, size);
	for (j = 0; j < count; j++) {
		e = gdrb_buf_check_pattern(&r->recv, j * size, size, seed_of(size, k, j, from), &first);
		if (e && !errs)
			gdrb_err("round %u: %llu wrong byte(s) from rank %d (%s) at size %zu, message %u, first at byte %zu",
				 k, (unsigned long long)e, from, r->members[from].host, size, j, first);
		errs += e;
	}
	return errs;
}

static int measure_bw(struct pairs_run *r, unsigned k, size_t size, const struct gdrb_variant *path,
		      struct pairs_slot *s)
{
	struct xfer x = { .r = r, .path = path, .size = size,
			  .to = pairs_peer(r, r->boot->rank, k, true),
			  .from = pairs_peer(r, r->boot->rank, k, false) };
	uint64_t iters;
	double secs;

	x.count = gdrb_window_at(size, r->p.window, r->p.window_bytes, true);
	if (prepare(r, size, k, x.count) || begin(r, x.to, x.from, size) || run_timed(&x, true, &iters, &secs))
		return GDRB_ERR;
	s->iters = iters;
	s->value = secs > 0 ? (double)size * x.count * (double)iters / secs / 1e9 : 0;
	s->in_err = check(r, size, k, x.count, x.from);
	s->status = PAIRS_OK;
	return 0;
}

/* A phase's reading after its ping-pongs: what this rank's ports counted in its pair. */
static void phase_nic(const struct gdrb_cnt_rise *rise, struct pairs_nic *nic)
{
	memset(nic, 0, sizeof(*nic));
	nic->ports = rise->ports;
	nic->errors = rise->error_sum;
	nic->packets = rise->packets;
	nic->unreadable = rise->unreadable;
	/* The items are kept largest first, PCIe's with the ports': the largest of a port's. */
	for (unsigned i = 0; i < rise->n; i++)
		if (!rise->item[i].pcie) {
			nic->top = rise->item[i];
			break;
		}
}

/*
 * Ping-pong per pair, in the phases of gdrb_pairs_phases. No rank is in two
 * pairs of a phase: the counters read around each phase (never inside its
 * timed loop) say what each pair's ends counted (docs/counters.md).
 */
static int measure_lat(struct pairs_run *r, unsigned k, size_t size, const struct gdrb_variant *path,
		       unsigned *phase, unsigned nphases, struct pairs_slot *s)
{
	const struct pairs_member *me = &r->members[r->boot->rank];
	unsigned back = (me->pos + r->m - k) % r->m, ph;
	struct gdrb_cnt_rise rise;

	/* Fresh too: a reading the kernel still caches would hand what rose before to the first pair. */
	gdrb_counters_read_fresh(r->counters, NULL);
	for (ph = 0; ph < nphases; ph++) {
		struct xfer x = { .r = r, .path = path, .size = size,
				  .to = pairs_peer(r, r->boot->rank, k, true),
				  .from = pairs_peer(r, r->boot->rank, k, false) };
		bool responder = phase[back] == ph;
		uint64_t iters;
		double secs;

		x.initiator = phase[me->pos] == ph;
		if (prepare(r, size, k, 1) || begin(r, x.to, x.from, size) ||
		    run_timed(&x, x.initiator || responder, &iters, &secs))
			return GDRB_ERR;
		if (x.initiator || responder)
			gdrb_counters_read_fresh(r->counters, &rise);
		if (x.initiator) {
			s->iters = iters;
			s->value = secs / (double)iters / 2 * 1e6;
			s->out_err = check(r, size, k, 1, x.to);
			s->status = PAIRS_OK;
			phase_nic(&rise, &s->out_nic);
		}
		if (responder) {
			s->in_err = check(r, size, k, 1, x.from);
			phase_nic(&rise, &s->in_nic);
		}
	}
	return 0;
}

static int measure_round(struct pairs_run *r, unsigned k)
{
	unsigned *phase = calloc(r->m, sizeof(*phase)), nphases = phase ? gdrb_pairs_phases(r->m, k, phase) : 0;
	size_t mi, si, pi;
	int rc = 0;

	if (!nphases) {
		free(phase);
		gdrb_err("out of memory for the phases of %u ranks", r->m);
		return GDRB_ERR;
	}
	memset(r->mine, 0, r->nrec * sizeof(*r->mine));
	for (mi = 0; mi < r->nmetrics && !rc; mi++)
		for (si = 0; si < r->p.sizes.n && !rc; si++)
			for (pi = 0; pi < r->paths.n && !rc; pi++) {
				struct pairs_slot *s = &r->mine[pairs_rec(r, mi, si, pi)];
				const struct gdrb_variant *path = &r->paths.v[pi];

				if (!path->supported)
					s->status = PAIRS_SKIPPED;
				else if (r->metrics[mi] == GDRB_PAIRS_BW)
					rc = measure_bw(r, k, r->p.sizes.v[si], path, s);
				else
					rc = measure_lat(r, k, r->p.sizes.v[si], path, phase, nphases, s);
			}
	free(phase);
	return rc;
}

/* Test hook: GDRB_INJECT_PAIRS_STOP=RANK:SHIFT stops that rank (SIGSTOP) as the round of that shift begins. */
static void inject_stop(const struct pairs_run *r, unsigned k)
{
	const struct gdrb_inject *h = gdrb_inject();

	if (h->pairs_stop_rank == r->boot->rank && h->pairs_stop_shift == k)
		raise(SIGSTOP);
}

static int alloc_buffers(struct pairs_run *r, struct gdrb_gpu_info *gpu, bool *have_gpu)
{
	const struct gdrb_mem_kind_ops *kind = gdrb_mem_kind(r->p.mem);
	const struct gdrb_mem_ops *ops, *pinned;
	const char *why = NULL;
	char gwhy[320];
	size_t bytes = gdrb_buf_bytes(&r->p.sizes, r->p.window, r->p.window_bytes, true);
	int rc;

	rc = gdrb_run_open_gpu(r->boot, &r->p, NULL, gpu, gwhy, sizeof(gwhy), have_gpu);
	if (rc)
		return rc;
	/* Rail: local rank i on GPU i, so a node needs a GPU per rank. */
	if (*have_gpu && r->pp->granularity == GDRB_PAIRS_GRAN_RAIL && r->p.gpu < 0 &&
	    gpu->count < r->boot->local_size) {
		/* Said by the first rank of the host that lacks GPUs, which need not be rank 0's. */
		if (r->boot->local_rank == 0)
			gdrb_err("--granularity rail: host %s runs %d ranks but has %d GPU(s); start one rank per GPU",
				 r->boot->hosts[r->boot->rank], r->boot->local_size, gpu->count);
		return GDRB_ERR_USAGE;
	}
	ops = gdrb_mem_ops_get(r->p.mem, &why);
	pinned = gdrb_mem_bounce_ops();
	if (!ops || !pinned) {
		gdrb_err("--mem %s: %s", gdrb_mem_kind_name(r->p.mem), why ? why : "not available");
		return GDRB_ERR_UNSUPP;
	}
	if (gdrb_buf_alloc(&r->send, ops, bytes) || gdrb_buf_alloc(&r->recv, ops, bytes))
		return GDRB_ERR;
	if (kind->staged &&
	    (gdrb_buf_alloc(&r->send_bounce, pinned, bytes) || gdrb_buf_alloc(&r->recv_bounce, pinned, bytes)))
		return GDRB_ERR;
	return 0;
}

static void set_paths(struct pairs_run *r, const struct gdrb_pairs_setup *s)
{
	struct gdrb_variant *direct = &r->paths.v[0];

	r->paths.n = gdrb_run_paths(r->p.mem, GDRB_SHAPE_PAIRS, r->p.staging, r->paths.v);
	if (!gdrb_mem_kind(r->p.mem)->staged)
		return;
	/* Device memory: the direct path is the transport's, as its setup answered. */
	direct->reg = s->direct_reg ? s->direct_reg : "device";
	direct->how = s->direct_how ? s->direct_how : "device pointers handed to the transport";
	direct->supported = s->direct_device;
	snprintf(direct->why, sizeof(direct->why), "%s", s->why);
}

/* The ranks this rank sends to or receives from in the rounds chosen, each once (calloc'd; NULL: out of memory). */
static int *peers_met(const struct pairs_run *r, unsigned *n)
{
	int *peers = calloc(2 * (size_t)r->nshifts + 1, sizeof(*peers));
	unsigned i, j;

	*n = 0;
	if (!peers) {
		gdrb_err("out of memory");
		return NULL;
	}
	for (i = 0; i < 2 * r->nshifts; i++) {
		int p = pairs_peer(r, r->boot->rank, r->shifts[i / 2], i % 2 == 0);

		for (j = 0; j < *n && peers[j] != p; j++)
			;
		if (j == *n)
			peers[(*n)++] = p;
	}
	return peers;
}

/*
 * The counters of the NIC this rank uses ("dev:port" where the transport names
 * it; else every active port of the node, as for a library that picks its own)
 * and of its GPU, read before the first round and after the last.
 */
static int open_counters(struct pairs_run *r, const char *nic, const struct gdrb_gpu_info *gpu)
{
	char dev[64] = "";
	unsigned port = 0;
	const char *colon = strrchr(nic, ':');
	struct gdrb_counters_want w = {
		.gpu_bus_id = gpu && gdrb_mem_kind(r->p.mem)->on_gpu ? gpu->pci_bus_id : NULL,
		.when = "before the first round, after each latency phase it takes part in, and after the last round",
	};

	if (colon && colon != nic && (size_t)(colon - nic) < sizeof(dev) && sscanf(colon + 1, "%u", &port) == 1) {
		memcpy(dev, nic, (size_t)(colon - nic));
		dev[colon - nic] = '\0';
		w.nic_dev = dev;
		w.nic_port = port;
	} else {
		w.library = r->ops->layer;
	}
	return gdrb_counters_open(r->boot, &w, &r->counters);
}

/*
 * Rank 0: whether a latency phase's counter rises are its pairs': no two ranks
 * of a host read one port. A rank that names its port ("dev:port", verbs)
 * reads that one; the others every port of the node (by its first rank). The
 * hosts the ranks really run on, not GDRB_INJECT_HOSTS's names.
 */
static bool nic_per_pair(const struct pairs_run *r)
{
	int i, j;

	for (i = 0; i < r->n; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(r->boot->hosts[i], r->boot->hosts[j]) &&
			    (!strchr(r->members[i].nic, ':') || !strchr(r->members[j].nic, ':') ||
			     !strcmp(r->members[i].nic, r->members[j].nic)))
				return false;
	return true;
}

static int setup(struct pairs_run *r)
{
	struct pairs_member me;
	struct gdrb_pairs_bufs bufs;
	struct gdrb_pairs_setup ts = { .direct_device = true };
	struct gdrb_gpu_info gpu;
	bool have_gpu = false;
	int rc, code, i;
	uint64_t seed;

	r->n = r->boot->size;
	r->members = calloc((size_t)r->n, sizeof(*r->members));
	if (!r->members)
		return GDRB_EXIT_FAIL;
	for (i = 0; i < r->n; i++)
		snprintf(r->members[i].host, GDRB_HOST_MAX, "%s", r->boot->hosts[i]);
	inject_hosts(r);
	rc = layout(r);
	if (!rc && r->pp->rounds && r->pp->rounds > r->m - 1) {
		gdrb_usage_err("--rounds %u: accepted 1..%u (distinct shifts of the %u ranks of a shift group), or leave it out for all",
			       r->pp->rounds, r->m - 1, r->m);
		rc = GDRB_ERR_USAGE;
	}
	code = gdrb_boot_agree_exit(r->boot, gdrb_exit_code(rc));
	if (code)
		return code;
	seed = r->pp->seed_given ? r->pp->seed : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (r->boot->bcast(r->boot, &seed, sizeof(seed), 0))
		return GDRB_EXIT_FAIL;
	r->seed = seed;
	r->sampled = r->pp->rounds != 0;
	r->shifts = calloc(r->m, sizeof(*r->shifts));
	if (!r->shifts)
		return GDRB_EXIT_FAIL;
	r->nshifts = (unsigned)gdrb_pairs_shifts(r->m, r->pp->rounds, seed, r->shifts);

	code = gdrb_boot_agree_exit(r->boot, gdrb_exit_code(alloc_buffers(r, &gpu, &have_gpu)));
	if (code)
		return code;
	bufs = (struct gdrb_pairs_bufs){ &r->send, &r->recv, &r->send_bounce, &r->recv_bounce };
	ts.bufs = &bufs;
	ts.max_msgs = gdrb_window_at(gdrb_sizes_max(&r->p.sizes), r->p.window, r->p.window_bytes, true);
	ts.gpu = have_gpu ? &gpu : NULL;
	ts.peers = r->peers = peers_met(r, &ts.npeers);
	rc = ts.peers ? 0 : GDRB_ERR;
	if (!rc && r->ops->setup)
		rc = r->ops->setup(&r->p, r->boot, &ts, &r->priv);
	code = gdrb_boot_agree_exit(r->boot, gdrb_exit_code(rc));
	if (code)
		return code;
	set_paths(r, &ts);
	{       /* A simulated GPU on any rank: every figure of the run proves behaviour, never speed. */
		uint64_t sim = have_gpu && gpu.simulated;

		if (r->boot->allreduce_u64(r->boot, &sim, 1, GDRB_OP_MAX))
			return GDRB_EXIT_FAIL;
		if (sim)
			snprintf(r->simulated, sizeof(r->simulated), "%s",
				 have_gpu && gpu.simulated ? gpu.name : "a simulated GPU");
	}
	if (gdrb_mem_kind(r->p.mem)->on_gpu) {     /* the same on every rank: the options */
		code = gdrb_boot_agree_exit(r->boot, gdrb_exit_code(gdrb_run_gpu_sharing(
			r->boot, &gpu, have_gpu, r->gpu_shared, sizeof(r->gpu_shared),
			&r->gpu_time_sliced)));
		if (code)
			return code;
	}
	me = r->members[r->boot->rank];
	describe_member(r, &me, have_gpu && gdrb_mem_kind(r->p.mem)->on_gpu ? &gpu : NULL);
	if (ts.nic[0])     /* the transport knows the NIC it uses: no guess */
		snprintf(me.nic, sizeof(me.nic), "%s", ts.nic);
	if (r->boot->gather(r->boot, &me, sizeof(me), r->members))
		return GDRB_EXIT_FAIL;
	if (r->boot->rank == 0) {
		r->members[0] = me;
		r->nic_per_pair = nic_per_pair(r);
	}
	r->metrics[0] = r->pp->metrics & GDRB_PAIRS_BW ? GDRB_PAIRS_BW : GDRB_PAIRS_LAT;
	r->nmetrics = 1;
	if (r->pp->metrics == (GDRB_PAIRS_BW | GDRB_PAIRS_LAT))
		r->metrics[r->nmetrics++] = GDRB_PAIRS_LAT;
	r->nrec = r->nmetrics * r->p.sizes.n * r->paths.n;
	r->mine = calloc(r->nrec, sizeof(*r->mine));
	if (r->boot->rank == 0) {
		r->all = calloc(r->nrec * (size_t)r->n, sizeof(*r->all));
		r->cells = calloc(r->nrec * (size_t)r->n * (size_t)r->n, sizeof(*r->cells));
		rc = r->mine && r->all && r->cells ? gdrb_pairs_out_open(r) : GDRB_ERR;
		if (!r->mine || !r->all || !r->cells)
			gdrb_err("out of memory for the matrices of %d ranks", r->n);
		if (!rc && r->p.csv_path)
			rc = gdrb_counters_file_open(r->p.csv_path, &r->counter_file);
	} else {
		rc = r->mine ? 0 : GDRB_ERR;
	}
	if (!rc)
		rc = open_counters(r, ts.nic, have_gpu ? &gpu : NULL);
	return gdrb_boot_agree_exit(r->boot, gdrb_exit_code(rc));
}

static void teardown(struct pairs_run *r)
{
	if (r->ops->teardown && r->priv)
		r->ops->teardown(r->priv);
	gdrb_buf_free(&r->send);
	gdrb_buf_free(&r->recv);
	gdrb_buf_free(&r->send_bounce);
	gdrb_buf_free(&r->recv_bounce);
	free(r->members);
	free(r->at);
	free(r->shifts);
	free(r->peers);
	free(r->mine);
	free(r->all);
	free(r->cells);
	gdrb_counters_file_close(r->counter_file);
	gdrb_counters_close(r->counters);
}

/*
 * --start-at (and --round-every): this rank sleeps until round ri's wall-clock
 * start, then waits for the others. Rank 0 says when a round begins late.
 */
static int wait_start(struct pairs_run *r, unsigned ri)
{
	double at = (double)r->pp->start_at + ri * r->pp->round_every, wait;
	struct timespec now, left;

	if (!r->pp->start_at || (ri && !r->pp->round_every))
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	wait = at - ((double)now.tv_sec + (double)now.tv_nsec / 1e9);
	if (wait > 0) {
		left.tv_sec = (time_t)wait;
		left.tv_nsec = (long)((wait - (double)left.tv_sec) * 1e9);
		while (nanosleep(&left, &left) && errno == EINTR)
			;
	} else if (r->boot->rank == 0 && wait < -1.0) {
		gdrb_warn("round %u began %.1f s after its start (--start-at%s): it overlapped the jobs started with it less",
			  ri + 1, -wait, r->pp->round_every ? ", --round-every" : "");
	}
	return r->boot->barrier(r->boot);
}

static void rounds(struct pairs_run *r)
{
	unsigned ri;

	for (ri = 0; ri < r->nshifts; ri++) {
		unsigned k = r->shifts[ri];

		inject_stop(r, k);
		if (wait_start(r, ri) || measure_round(r, k)) {
			gdrb_err("round %u (shift %u) failed; the rounds before it are kept", ri + 1, k);
			r->failed = true;
			r->boot->abort(r->boot, GDRB_EXIT_FAIL);
			return;
		}
		gdrb_watchdog_allow(busy_s(r));
		if (gdrb_boot_step_gather(r->boot, r->mine, r->nrec * sizeof(*r->mine), r->all,
					  "gathering the round's figures", 0)) {
			r->failed = true;
			return;
		}
		r->rounds_done = ri + 1;
		if (r->boot->rank == 0)
			gdrb_pairs_out_round(r, k);
	}
}

/* The core options of the driver's sweep that all pairs does not have a meaning for. */
static int refuse_core(const struct gdrb_params *p)
{
	const struct gdrb_pairs_params *pp;

	if (p->staging == GDRB_STAGING_BOTH || p->stage_chunk || p->stage_slots || p->buffers != GDRB_BUFFERS_SLOTS) {
		gdrb_usage_err("--staging both, --stage-chunk, --stage-slots and --buffers single do not apply to all pairs: its staged path copies whole messages (--staging serial) into one slot per message");
		return GDRB_ERR_USAGE;
	}
	pp = gdrb_group_params(p, &gdrb_pairs_opts);
	if (pp && pp->round_every > 0 && !pp->start_at) {
		gdrb_usage_err("--round-every: needs --start-at EPOCH, the wall-clock second of the first round");
		return GDRB_ERR_USAGE;
	}
	return 0;
}

/* --describe's paths of a run on p: set_paths()'s before the transport answers (reg "none" on GPU memory). */
static size_t describe_paths(const void *entry, const struct gdrb_params *p, struct gdrb_variant *v)
{
	size_t n = gdrb_run_paths(p->mem, GDRB_SHAPE_PAIRS, p->staging, v);

	(void)entry;
	if (gdrb_mem_kind(p->mem)->staged)
		v[0].reg = "none";
	return n;
}

int gdrb_pairs_main(const struct gdrb_pairs_ops *ops, struct gdrb_boot *boot, int argc, char **argv)
{
	struct gdrb_opt_use groups[GDRB_MAX_OPT_GROUPS] = { { &gdrb_pairs_opts, GDRB_PAIRS_OPTS } };
	const struct gdrb_opt_set set = { GDRB_OPTG_MEM | GDRB_OPTG_WINDOW, groups, ops->opt_known,
					  GDRB_PAIRS_DEF_SIZES, GDRB_MEM_HOST };
	const struct gdrb_run_facts facts = {
		.benchmark = ops->name, .layer = ops->layer, .metric = "bandwidth", .traffic = "pairs",
		.all_pairs = true, .paths = describe_paths, .entry = ops,
	};
	const struct gdrb_run_args args = { &set, ops->summary, refuse_core, &facts };
	struct pairs_run *r;
	size_t g = 1;
	int rc, code;

	for (; ops->opt_groups && ops->opt_groups[g - 1].group && g < GDRB_MAX_OPT_GROUPS - 1; g++)
		groups[g] = ops->opt_groups[g - 1];
	r = calloc(1, sizeof(*r));
	if (!r)
		return GDRB_EXIT_FAIL;
	r->ops = ops;
	r->boot = boot;
	if (!gdrb_run_begin(&args, boot, argc, argv, &r->p, &code)) {
		free(r);
		return code;
	}
	r->pp = gdrb_group_params(&r->p, &gdrb_pairs_opts);

	code = setup(r);
	if (code)
		goto out;
	if (boot->rank == 0)
		gdrb_pairs_out_header(r);
	/* Ranks wait on each other in chains: the ranks stuck behind a lost one name theirs too. */
	gdrb_watchdog_linger(r->p.timeout < PAIRS_LINGER_S ? r->p.timeout : PAIRS_LINGER_S);
	if (gdrb_watchdog_start(r->p.timeout)) {
		code = GDRB_EXIT_FAIL;
		goto out;
	}
	gdrb_counters_read(r->counters, NULL);
	rounds(r);
	/* What rose over the rounds, after the rounds' table; every rank's readings in the counter file. */
	rc = r->failed ? GDRB_ERR : 0;
	if (!rc)
		gdrb_counters_read(r->counters, NULL);     /* no row to note a rise in: the file says it */
	if (!rc && gdrb_counters_finish(r->counters, boot, ops->name, gdrb_sizes_max(&r->p.sizes),
					r->counter_file, stdout))
		rc = GDRB_ERR;
	gdrb_watchdog_stop();
	if (boot->rank == 0) {
		if (gdrb_pairs_out_matrices(r))
			rc = GDRB_ERR;
		gdrb_pairs_out_end(r);
		if (gdrb_pairs_out_close(r) || gdrb_stdout_flush() || gdrb_counters_file_close(r->counter_file))
			rc = GDRB_ERR;
		r->counter_file = NULL;
		if (r->invalid)
			rc = GDRB_ERR;
	}
	code = gdrb_boot_agree_exit(boot, gdrb_exit_code(rc));
out:
	if (boot->rank == 0)
		gdrb_pairs_out_close(r);
	teardown(r);
	free(r);
	return gdrb_run_end(boot, code);
}
