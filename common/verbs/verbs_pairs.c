/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All pairs over RDMA writes (bench/gdrb_write_pairs): the transfers of
 * common/core/pairs/pairs.c on one protection domain and one completion queue per
 * rank, and one RC QP per peer met in the rounds run, connected through the
 * bootstrap. Device, port, GID, queue limits and registration are the point-
 * to-point setup's (verbs_setup.c).
 *
 * A message is an RDMA write into the peer's receive buffer at the offset it
 * has in this rank's send buffer (the bounce buffers into the bounce buffers).
 * Only the last piece of a window carries an immediate: RC keeps a QP's
 * writes in order, so that one receive completion says the whole window
 * landed, as in gdrb_write_bw, and a window costs the receiver one completion
 * whatever its length. Ready and acknowledgement are
 * zero-byte sends with immediate. Every QP keeps its receives (zero bytes:
 * immediates carry no data) posted, each put back as it is used.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "gdrb_log.h"
#include "gdrb_pairs.h"
#include "gdrb_reg.h"
#include "gdrb_size.h"
#include "gdrb_verbs.h"
#include "gdrb_watchdog.h"

#include "verbs_int.h"
#include "verbs_post.h"
#include "verbs_setup.h"

#define RX_CREDITS 16           /* receives kept posted per QP: a peer is never more than 4 messages ahead */
#define SIGNALED_MAX 4          /* signaled sends a QP may have unreaped (gdrb_verbs_post_send) */
#define WR_RECV (UINT64_C(1) << 63)

/*
 * What an immediate says; each is counted per peer, so their order across
 * kinds does not matter. None is 0: a write's immediate of 0 is none.
 */
enum { MSG_READY = 1, MSG_ACK, MSG_WINDOW, MSG_DATA, MSG_BEGIN, MSG_KINDS };

/* Receive regions of a peer: its receive buffer (direct path) and its bounce buffer (staged). */
enum { REG_DIRECT, REG_BOUNCE, NREG };

struct peer {
	int rank;
	struct qp_state s;      /* tag: its index in peers */
	uint32_t psn;
	uint64_t got[MSG_KINDS], used[MSG_KINDS];
	uint64_t addr[NREG];
	uint32_t rkey[NREG];
};

struct vpairs {
	struct gdrb_verbs v;    /* device, PD, the CQ (v.send_cq), MRs: what verbs_setup.c sets up */
	const struct gdrb_verbs_params *vp;
	struct gdrb_boot *boot;
	struct gdrb_pairs_bufs bufs;
	struct peer *peers;
	unsigned npeers;
	int *slot;              /* slot[rank]: its index in peers, -1 if not met */
	unsigned cqe;
	bool device, gdr, cpu_reads;
	char gdr_why[768];
};

/* The exchange record of a rank: where its receive buffers are, then its QP for each rank. */
struct addr_rec {
	uint32_t lid, mtu;
	uint8_t gid[16];
	uint64_t addr[NREG];
	uint32_t rkey[NREG];
};

struct qp_rec {
	uint32_t qpn, psn;      /* qpn 0: no QP for that rank */
};

static struct peer *peer_of(struct vpairs *x, int rank)
{
	return &x->peers[x->slot[rank]];
}

static const char *host_of(const struct vpairs *x, int rank)
{
	return x->boot->hosts[rank];
}

static int post_recv(const struct peer *pr, unsigned slot)
{
	return gdrb_verbs_post_empty_recv(&pr->s, WR_RECV | slot);
}

/* One completion: a send's tells how far its QP has completed; a receive's immediate is counted and put back. */
static int on_wc(void *arg, const struct ibv_wc *wc)
{
	struct vpairs *x = arg;
	bool recv = wc->wr_id & WR_RECV;
	uint64_t slot = recv ? wc->wr_id & ~WR_RECV : wc->wr_id >> WR_TAG_SHIFT;
	struct peer *pr = slot < x->npeers ? &x->peers[slot] : NULL;
	uint32_t kind;

	if (wc->status != IBV_WC_SUCCESS || !pr)
		return gdrb_verbs_wc_error(&x->v, wc, recv ? "a receive" : "an RDMA write or send",
					   pr ? pr->rank : -1, pr ? host_of(x, pr->rank) : "?");
	if (!recv) {
		pr->s.completed = wc->wr_id & WR_COUNT_MASK;
		return 0;
	}
	kind = ntohl(wc->imm_data);
	if (kind < MSG_KINDS)
		pr->got[kind]++;
	return post_recv(pr, (unsigned)slot);
}

/* Reap what completed; the watchdog is kicked only on progress. */
static int poll_cq(struct vpairs *x)
{
	int n = gdrb_verbs_reap(&x->v, x->v.send_cq, on_wc, x);

	if (n < 0)
		return GDRB_ERR;
	if (n > 0)
		gdrb_watchdog_kick();
	return 0;
}

/* While a send queue is full (struct gdrb_verbs.progress). */
static int progress(void *x)
{
	return poll_cq(x);
}

static bool have(const struct peer *pr, int kind)
{
	return pr->got[kind] != pr->used[kind];
}

/* Wait for a message of kind from rank, naming it to the watchdog. */
static int wait_msg(struct vpairs *x, int rank, int kind, const char *what, size_t size)
{
	struct peer *pr = peer_of(x, rank);

	gdrb_watchdog_context(rank, host_of(x, rank), what, size);
	while (!have(pr, kind))
		if (poll_cq(x))
			return GDRB_ERR;
	pr->used[kind]++;
	return 0;
}

static int send_ctrl(struct vpairs *x, int rank, int kind)
{
	return gdrb_verbs_post_ctrl(&x->v, &peer_of(x, rank)->s, (uint32_t)kind);
}

/* The send region that holds [p, p + len): the peer's matching receive region and the offset. */
static int region_of(const struct vpairs *x, const char *p, size_t len, int *reg, size_t *off)
{
	const struct gdrb_buf *b[NREG] = { x->bufs.send, x->bufs.send_bounce };
	int i;

	for (i = 0; i < NREG; i++)
		if (b[i] && b[i]->ptr && p >= (const char *)b[i]->ptr &&
		    p + len <= (const char *)b[i]->ptr + b[i]->len) {
			*reg = i;
			*off = (size_t)(p - (const char *)b[i]->ptr);
			return 0;
		}
	gdrb_err("all pairs over verbs: a message outside the registered send buffers (a bug)");
	return GDRB_ERR;
}

/*
 * One message of len bytes at p to the same offset of the peer's matching
 * receive region, RDMA writes in pieces of at most max_chunk; the last piece
 * carries the immediate kind (< 0: none) and is signaled when signal.
 */
static int write_msg(struct vpairs *x, int rank, const char *p, size_t len, int kind, bool signal)
{
	struct peer *pr = peer_of(x, rank);
	struct span sp = { .local = p };
	size_t off;
	int reg;

	if (region_of(x, p, len, &reg, &off))
		return GDRB_ERR;
	sp.lkey = x->v.lkey[reg == REG_DIRECT ? BUF_SEND : BUF_SEND_BOUNCE];
	sp.remote = pr->addr[reg] + off;
	sp.rkey = pr->rkey[reg];
	/* Inline only where the CPU may read the buffer: never device memory. */
	sp.cpu_reads = reg == REG_BOUNCE || x->cpu_reads;
	return gdrb_verbs_post_pieces(&x->v, &pr->s, &sp, len, kind < 0 ? 0 : (uint32_t)kind, signal);
}

/* --- the ops ------------------------------------------------------------- */

/* The window from w->from may land once it says we are ready; w->to's ready is awaited. */
int gdrb_verbs_pairs_post(void *priv, const struct gdrb_pairs_window *w)
{
	struct vpairs *x = priv;

	if (send_ctrl(x, w->from, MSG_READY) ||
	    wait_msg(x, w->to, MSG_READY, "the destination's 'ready' for a window", w->size))
		return GDRB_ERR;
	gdrb_watchdog_kick();
	return 0;
}

/*
 * The window out is posted, then both sides are served as they complete:
 * the window in is acknowledged the moment its immediate arrives (after the
 * staged copies), and this rank's sends never wait for it, nor it for them.
 */
int gdrb_verbs_pairs_exchange(void *priv, const struct gdrb_pairs_window *w, struct gdrb_pairs_done *done)
{
	struct vpairs *x = priv;
	struct peer *to = peer_of(x, w->to), *from = peer_of(x, w->from);
	bool in = false, out = false;
	int named = -1;
	uint64_t last;
	unsigned k;

	gdrb_watchdog_context(w->to, host_of(x, w->to), "sending a window", w->size);
	for (k = 0; k < w->count; k++)
		if (write_msg(x, w->to, w->send + k * w->stride, w->size, k + 1 == w->count ? MSG_WINDOW : -1,
			      k + 1 == w->count))
			return GDRB_ERR;
	last = to->s.posted;
	while (!in || !out) {
		if (!in && have(from, MSG_WINDOW)) {
			from->used[MSG_WINDOW]++;
			done->in = gdrb_ticks();
			in = true;
			if ((w->received && w->received(w->arg)) || send_ctrl(x, w->from, MSG_ACK))
				return GDRB_ERR;
			continue;
		}
		/* Out: acknowledged, and the last write's completion reaped (the send buffer is free). */
		if (!out && have(to, MSG_ACK) && to->s.completed >= last) {
			to->used[MSG_ACK]++;
			done->out = gdrb_ticks();
			out = true;
			continue;
		}
		if (named != (int)in) {
			named = in;
			gdrb_watchdog_context(in ? w->to : w->from, host_of(x, in ? w->to : w->from),
					      in ? "the acknowledgement of a window" : "receiving a window", w->size);
		}
		if (poll_cq(x))
			return GDRB_ERR;
	}
	return 0;
}

int gdrb_verbs_pairs_send(void *priv, int peer, const void *buf, size_t len)
{
	struct vpairs *x = priv;

	gdrb_watchdog_context(peer, host_of(x, peer), "a ping-pong send", len);
	return len ? write_msg(x, peer, buf, len, MSG_DATA, false) : send_ctrl(x, peer, MSG_DATA);
}

/* The message lands where the sender's offset says (write_msg); its immediate says it is whole. */
int gdrb_verbs_pairs_recv(void *priv, int peer, void *buf, size_t len)
{
	(void)buf;
	return wait_msg(priv, peer, MSG_DATA, "a ping-pong receive", len);
}

/* Nobody writes into a buffer its owner is still filling or checking. */
int gdrb_verbs_pairs_begin(void *priv, int to, int from, size_t size)
{
	struct vpairs *x = priv;

	return send_ctrl(x, from, MSG_BEGIN) ||
	       wait_msg(x, to, MSG_BEGIN, "the destination's start of a measurement", size) ? GDRB_ERR : 0;
}

void gdrb_verbs_pairs_teardown(void *priv)
{
	struct vpairs *x = priv;
	unsigned i;

	for (i = 0; x->peers && i < x->npeers; i++)
		if (x->peers[i].s.qp)
			ibv_destroy_qp(x->peers[i].s.qp);
	gdrb_verbs_release(&x->v);
	free(x->peers);
	free(x->slot);
	free(x);
}

void gdrb_verbs_pairs_describe(void *priv, char *buf, size_t len)
{
	const struct vpairs *x = priv;
	const struct gdrb_verbs *v = &x->v;
	char qps[128];
	size_t used;

	snprintf(qps, sizeof(qps), "%u RC QP(s), one per peer met, on one completion queue of %u entries;",
		 x->npeers, x->cqe);
	used = gdrb_verbs_nic_line(v, x->vp, "MTU", mtu_bytes((enum ibv_mtu)v->me.mtu), qps,
				   v->relaxed ? "requested" : "off", buf, len);
	if (used + 1 < len)
		snprintf(buf + used, len - used,
			 "\ncompletion: a window is RDMA writes, the last with immediate (RC keeps a QP's writes in order: one receive completion says all of it landed); ready and acknowledgement are zero-byte sends with immediate; a ping-pong message is an RDMA write with immediate; every rank polls its completion queue");
	used = strlen(buf);
	if (v->scatter_cqe[0] && used + 1 < len)
		snprintf(buf + used, len - used, "\n%s", v->scatter_cqe);
	used = strlen(buf);
	if (used + 1 < len)
		snprintf(buf + used, len - used, "\nGDR: %s%s%s", !x->device ? "n/a (host memory)" :
			 x->gdr ? "yes: GPU memory registered with the NIC through " : "no: ",
			 x->device && x->gdr ? gdrb_reg_mode_name(v->gpu_mr[0].used) : x->device ? x->gdr_why : "",
			 x->device && x->gdr ? " on every rank" : "");
}

/* --- setup --------------------------------------------------------------- */

/*
 * Queue depths within the device's limits, and the one CQ: every QP's
 * receives and its few signaled sends. Too many peers for the CQ: unsupported.
 */
static int plan(struct vpairs *x)
{
	struct gdrb_queue_plan q;
	size_t per, max = x->v.max_cqe > 0 ? (size_t)x->v.max_cqe : 0;

	if (gdrb_queue_plan(x->npeers, x->vp->tx_depth, RX_CREDITS, x->v.max_qp_wr, x->v.max_cqe, &q) ||
	    max / x->npeers < SIGNALED_MAX + 4) {
		gdrb_err("%s allows %d entries per completion queue, too few for %u QPs (one per peer met) of at least %d each; use --rounds to meet fewer peers",
			 x->v.nic, x->v.max_cqe, x->npeers, SIGNALED_MAX + 4);
		return GDRB_ERR_UNSUPP;
	}
	per = max / x->npeers - SIGNALED_MAX;
	x->v.tx_depth = q.tx_depth < 2 ? 2 : q.tx_depth;
	x->v.rx_depth = q.rx_depth < per ? q.rx_depth : (unsigned)per;
	x->cqe = x->npeers * (x->v.rx_depth + SIGNALED_MAX);
	return 0;
}

/* Protection domain, then the buffers: device memory through GPUDirect where it registers. */
static int open_and_register(struct vpairs *x, const struct gdrb_params *p, struct gdrb_pairs_setup *s)
{
	struct gdrb_verbs *v = &x->v;

	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd) {
		gdrb_err("ibv_alloc_pd(%s): %s", v->nic, strerror(errno));
		return GDRB_ERR;
	}
	gdrb_verbs_set_access(x->vp, v);
	if (x->device) {
		x->gdr = gdrb_verbs_reg_device(p, true, x->vp->reg_mode, v, s->bufs->send, s->bufs->recv,
					       x->gdr_why, sizeof(x->gdr_why)) == 0;
	} else if (gdrb_verbs_reg_host(p, true, v, BUF_SEND, s->bufs->send, v->access) ||
		   gdrb_verbs_reg_host(p, true, v, BUF_RECV, s->bufs->recv, v->access)) {
		return GDRB_ERR;
	}
	return gdrb_verbs_reg_host(p, true, v, BUF_SEND_BOUNCE, s->bufs->send_bounce, v->access) ||
	       gdrb_verbs_reg_host(p, true, v, BUF_RECV_BOUNCE, s->bufs->recv_bounce, v->access) ? GDRB_ERR : 0;
}

/* The CQ and a QP per peer met. */
static int create_qps(struct vpairs *x)
{
	struct gdrb_verbs *v = &x->v;
	unsigned i;

	v->send_cq = ibv_create_cq(v->ctx, (int)x->cqe, NULL, NULL, 0);
	if (!v->send_cq) {
		gdrb_err("ibv_create_cq(%s, %u entries; the device allows %d): %s", v->nic, x->cqe, v->max_cqe,
			 strerror(errno));
		return GDRB_ERR;
	}
	for (i = 0; i < x->npeers; i++) {
		x->peers[i].s.qp = gdrb_verbs_create_qp(v, v->send_cq, v->rx_depth);
		if (!x->peers[i].s.qp)
			return GDRB_ERR;
		x->peers[i].s.tag = i;
		x->peers[i].s.peer = x->peers[i].rank;
		x->peers[i].s.host = host_of(x, x->peers[i].rank);
		x->peers[i].psn = (uint32_t)lrand48() & 0xffffff;
	}
	return 0;
}

/*
 * Every rank's record (its receive buffers, its QP for each rank) reaches
 * every rank: gathered to rank 0, broadcast. n x (n x 8 + 48) bytes: 34 MB
 * at 2048 ranks, once.
 */
static int connect_peers(struct vpairs *x)
{
	struct gdrb_boot *b = x->boot;
	size_t rec = sizeof(struct addr_rec) + (size_t)b->size * sizeof(struct qp_rec);
	char *mine = calloc(1, rec), *all = malloc(rec * (size_t)b->size);
	struct addr_rec *a = (struct addr_rec *)mine;
	struct qp_rec *q = (struct qp_rec *)(mine + sizeof(*a));
	unsigned i;
	int rc = GDRB_ERR;

	if (!mine || !all) {
		gdrb_err("out of memory for the QP numbers of %d ranks", b->size);
		goto out;
	}
	*a = (struct addr_rec){ .lid = x->v.me.lid, .mtu = x->v.me.mtu,
				.addr = { x->v.me.addr[BUF_RECV], x->v.me.addr[BUF_RECV_BOUNCE] },
				.rkey = { x->v.me.rkey[BUF_RECV], x->v.me.rkey[BUF_RECV_BOUNCE] } };
	memcpy(a->gid, x->v.me.gid, sizeof(a->gid));
	for (i = 0; i < x->npeers; i++)
		q[x->peers[i].rank] = (struct qp_rec){ x->peers[i].s.qp->qp_num, x->peers[i].psn };
	if (b->gather(b, mine, rec, all) || b->bcast(b, all, rec * (size_t)b->size, 0))
		goto out;
	for (i = 0; i < x->npeers; i++) {
		struct peer *pr = &x->peers[i];
		const struct addr_rec *pa = (const struct addr_rec *)(all + rec * (size_t)pr->rank);
		const struct qp_rec *pq = (const struct qp_rec *)((const char *)pa + sizeof(*pa)) + b->rank;
		struct gdrb_verbs_remote remote = { .lid = pa->lid, .mtu = pa->mtu, .qpn = pq->qpn,
						    .psn = pq->psn, .gid = pa->gid };

		if (!pq->qpn) {
			gdrb_err("rank %d (%s) has no QP for rank %d: the ranks disagree on the rounds", pr->rank,
				 host_of(x, pr->rank), b->rank);
			goto out;
		}
		memcpy(pr->addr, pa->addr, sizeof(pr->addr));
		memcpy(pr->rkey, pa->rkey, sizeof(pr->rkey));
		if (gdrb_verbs_connect_qp(&x->v, x->vp, pr->s.qp, pr->psn, &remote, pr->rank, host_of(x, pr->rank)))
			goto out;
	}
	rc = 0;
out:
	free(mine);
	free(all);
	return rc;
}

/* Direct device memory on every rank or on none: the first rank that could not register says why. */
static int agree_gdr(struct vpairs *x, struct gdrb_pairs_setup *s)
{
	struct gdrb_boot *b = x->boot;
	uint64_t first = x->gdr ? (uint64_t)b->size : (uint64_t)b->rank;
	char why[sizeof(x->gdr_why)];

	if (!x->device)         /* host memory: the direct path is the only one */
		return 0;
	if (b->allreduce_u64(b, &first, 1, GDRB_OP_MIN))
		return GDRB_ERR;
	if (first < (uint64_t)b->size) {
		snprintf(why, sizeof(why), "%s", x->gdr_why);
		if (b->bcast(b, why, sizeof(why), (int)first))
			return GDRB_ERR;
		snprintf(x->gdr_why, sizeof(x->gdr_why), "rank %d (%s): %.680s", (int)first,
			 host_of(x, (int)first), why);
		x->gdr = false;
	}
	s->direct_device = x->gdr;
	if (x->gdr) {
		s->direct_reg = gdrb_reg_mode_name(x->v.gpu_mr[0].used);
		s->direct_how = gdrb_verbs_gdr_how(x->v.gpu_mr[0].used);
	} else {
		s->direct_reg = "none";
		snprintf(s->why, sizeof(s->why), "%s", x->gdr_why);
	}
	return 0;
}

int gdrb_verbs_pairs_setup(const struct gdrb_params *p, struct gdrb_boot *b, struct gdrb_pairs_setup *s, void **priv)
{
	struct vpairs *x = calloc(1, sizeof(*x));
	unsigned i;
	int rc;

	if (!x) {
		gdrb_err("out of memory");
		return GDRB_ERR;
	}
	*priv = x;
	x->v.gpu_mr[0].dmabuf_fd = x->v.gpu_mr[1].dmabuf_fd = -1;
	x->v.op = GDRB_VERBS_WRITE;
	x->v.progress = progress;
	x->v.progress_arg = x;
	x->vp = gdrb_group_params(p, &gdrb_verbs_opts);
	x->boot = b;
	x->bufs = *s->bufs;
	x->device = gdrb_mem_kind(p->mem)->on_gpu;
	x->cpu_reads = s->bufs->send->ops->host_accessible;
	x->npeers = s->npeers;
	x->peers = calloc(s->npeers, sizeof(*x->peers));
	x->slot = malloc((size_t)b->size * sizeof(*x->slot));
	if (!x->peers || !x->slot) {
		gdrb_err("out of memory");
		return GDRB_ERR;
	}
	for (i = 0; i < (unsigned)b->size; i++)
		x->slot[i] = -1;
	for (i = 0; i < s->npeers; i++) {
		x->peers[i].rank = s->peers[i];
		x->slot[s->peers[i]] = (int)i;
	}
	srand48((long)getpid() ^ (long)time(NULL));
	rc = gdrb_verbs_choose(x->vp, s->gpu ? s->gpu->pci_bus_id : NULL, b->local_rank, &x->v);
	if (!rc)
		rc = gdrb_verbs_query(x->vp, x->device, &x->v);
	if (!rc)
		rc = plan(x);
	if (!rc)
		rc = open_and_register(x, p, s);
	if (!rc)
		rc = create_qps(x);
	if ((rc = gdrb_boot_agree(b, rc)) || (rc = agree_gdr(x, s)))
		return rc;
	rc = connect_peers(x);
	for (i = 0; !rc && i < x->npeers; i++)
		for (unsigned k = 0; !rc && k < x->v.rx_depth; k++)
			rc = post_recv(&x->peers[i], i);
	snprintf(s->nic, sizeof(s->nic), "%.63s", x->v.nic);
	/* Nobody writes before every receive is posted. */
	if ((rc = gdrb_boot_agree(b, rc)) || b->barrier(b))
		return rc ? rc : GDRB_ERR;
	return 0;
}
