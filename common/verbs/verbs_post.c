/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting and polling on RC QPs, for the point-to-point transport (verbs_p2p.c
 * and its pipelined staging, verbs_pipe.c) and for all pairs (verbs_pairs.c):
 * a send queue's accounting, a message split into work requests, control
 * messages, 0-byte receives, reaping a completion queue and what a completion
 * error says. Then the point-to-point context's own reaping of its three CQs
 * and its waits.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <poll.h>
#include <infiniband/verbs.h>

#include "gdrb_log.h"
#include "gdrb_verbs.h"
#include "gdrb_watchdog.h"

#include "verbs_int.h"
#include "verbs_post.h"

static const char *op_name(enum gdrb_verbs_op op)
{
	return op == GDRB_VERBS_WRITE ? "RDMA write" : op == GDRB_VERBS_READ ? "RDMA read" : "send";
}

/* --- shared: completions ------------------------------------------------- */

int gdrb_verbs_wc_error(struct gdrb_verbs *v, const struct ibv_wc *wc, const char *what, int peer,
			const char *host)
{
	if (!v->failed)
		gdrb_err("work completion error on %s: %s (status %d, vendor error 0x%x), QP 0x%x, peer rank %d (%s); "
			 "a peer that exited, a link that went down or a remote access error ends a RC connection",
			 what, ibv_wc_status_str(wc->status), (int)wc->status, wc->vendor_err,
			 wc->qp_num, peer, host);
	v->failed = true;
	return GDRB_ERR;
}

int gdrb_verbs_reap(const struct gdrb_verbs *v, struct ibv_cq *cq,
		    int (*one)(void *arg, const struct ibv_wc *wc), void *arg)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = ibv_poll_cq(cq, POLL_BATCH, wc), i;

	if (n < 0) {
		gdrb_err("ibv_poll_cq(%s): %d", v->nic, n);
		return GDRB_ERR;
	}
	for (i = 0; i < n; i++)
		if (one(arg, &wc[i]))
			return GDRB_ERR;
	return n;
}

/* --- shared: posting ----------------------------------------------------- */

static int recv_error(const struct qp_state *s, int rc)
{
	if (s->host)
		gdrb_err("ibv_post_recv (QP with rank %d): %s", s->peer, strerror(rc));
	else
		gdrb_err("ibv_post_recv: %s", strerror(rc));
	return GDRB_ERR;
}

int gdrb_verbs_post_empty_recv(const struct qp_state *s, uint64_t wr_id)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = NULL, .num_sge = 0 }, *bad;
	int rc = ibv_post_recv(s->qp, &wr, &bad);

	return rc ? recv_error(s, rc) : 0;
}

int gdrb_verbs_post_send(struct gdrb_verbs *v, struct qp_state *s, struct ibv_send_wr *wr, bool signal)
{
	struct ibv_send_wr *bad;
	int rc;

	/* A signaled request at least every half queue, so space always comes back. */
	while (s->posted - s->completed >= v->tx_depth)
		if (v->progress(v->progress_arg))
			return GDRB_ERR;
	s->posted++;
	if (signal || ++s->unsignaled >= v->tx_depth / 2) {
		wr->send_flags |= IBV_SEND_SIGNALED;
		s->unsignaled = 0;
	}
	wr->wr_id = ((uint64_t)s->tag << WR_TAG_SHIFT) | s->posted;
	rc = ibv_post_send(s->qp, wr, &bad);
	if (!rc)
		return 0;
	if (s->host)
		gdrb_err("ibv_post_send (QP with rank %d, %s): %s", s->peer, s->host, strerror(rc));
	else
		gdrb_err("ibv_post_send (%s): %s", op_name(v->op), strerror(rc));
	return GDRB_ERR;
}

int gdrb_verbs_post_ctrl(struct gdrb_verbs *v, struct qp_state *s, uint32_t kind)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htonl(kind),
				  .send_flags = IBV_SEND_INLINE };

	return gdrb_verbs_post_send(v, s, &wr, false);
}

int gdrb_verbs_post_pieces(struct gdrb_verbs *v, struct qp_state *s, const struct span *sp, size_t len,
			   uint32_t imm, bool signal)
{
	size_t i, n = gdrb_wr_count(len, v->max_chunk);

	for (i = 0; i < n; i++) {
		struct ibv_sge sge;
		struct ibv_send_wr wr = { .sg_list = &sge };
		size_t at, chunk;
		bool last = i + 1 == n;

		gdrb_wr_chunk(len, v->max_chunk, i, &at, &chunk);
		sge.addr = (uintptr_t)(sp->local + at);
		sge.length = (uint32_t)chunk;
		sge.lkey = sp->lkey;
		wr.num_sge = chunk ? 1 : 0;
		wr.opcode = v->op == GDRB_VERBS_SEND ? IBV_WR_SEND :
			    v->op == GDRB_VERBS_READ ? IBV_WR_RDMA_READ :
			    last && imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		if (wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
			wr.imm_data = htonl(imm);
		if (v->op != GDRB_VERBS_SEND) {
			wr.wr.rdma.remote_addr = sp->remote + at;
			wr.wr.rdma.rkey = sp->rkey;
		}
		/* Inline only where the CPU may read the buffer: never device memory. */
		if (sp->cpu_reads && v->op != GDRB_VERBS_READ && chunk <= v->max_inline)
			wr.send_flags = IBV_SEND_INLINE;
		if (gdrb_verbs_post_send(v, s, &wr, signal && last))
			return GDRB_ERR;
	}
	return 0;
}

int gdrb_verbs_post_recvs(const struct gdrb_verbs *v, const struct qp_state *s, char *base, uint32_t lkey,
			  size_t len, size_t first, uint64_t wr_id)
{
	size_t i, n = gdrb_wr_count(len, v->max_chunk);

	for (i = first; i < n; i++) {
		struct ibv_sge sge;
		struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
		size_t at, chunk;
		int rc;

		gdrb_wr_chunk(len, v->max_chunk, i, &at, &chunk);
		sge.addr = (uintptr_t)(base + at);
		sge.length = (uint32_t)chunk;
		sge.lkey = lkey;
		rc = ibv_post_recv(s->qp, &wr, &bad);
		if (rc)
			return recv_error(s, rc);
	}
	return 0;
}

/* --- the point-to-point context: its three CQs ----------------------------- */

static int p2p_wc_error(struct gdrb_ctx *c, const struct ibv_wc *wc, const char *what)
{
	return gdrb_verbs_wc_error(c->priv, wc, what, c->peer, c->boot->hosts[c->peer]);
}

static int qp_index(const struct gdrb_verbs *v, uint32_t qpn)
{
	unsigned i;

	for (i = 0; i <= v->nqps; i++)
		if (v->qp[i].qp->qp_num == qpn)
			return (int)i;
	return 0;
}

/* Sends of the data QPs and of the control QP: how far each queue has completed. */
static int on_send(void *arg, const struct ibv_wc *wc)
{
	struct gdrb_ctx *c = arg;
	struct gdrb_verbs *v = c->priv;

	if (wc->status != IBV_WC_SUCCESS)
		return p2p_wc_error(c, wc, wc->wr_id >> WR_TAG_SHIFT == v->nqps ? "a control send" :
					   op_name(v->op));
	v->qp[wc->wr_id >> WR_TAG_SHIFT].completed = wc->wr_id & WR_COUNT_MASK;
	return 0;
}

/* Receives of the data QPs: immediates (a ring slot's or not) put back as they are used. */
static int on_recv(void *arg, const struct ibv_wc *wc)
{
	struct gdrb_ctx *c = arg;
	struct gdrb_verbs *v = c->priv;

	if (wc->status != IBV_WC_SUCCESS)
		return p2p_wc_error(c, wc, "a receive");
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		uint32_t imm = ntohl(wc->imm_data);

		if (imm & IMM_RING)
			v->arrived[(imm & ~IMM_RING) % GDRB_STAGE_SLOTS]++;
		else
			v->imms++;
		return gdrb_verbs_post_empty_recv(&v->qp[qp_index(v, wc->qp_num)], 0);
	}
	if (wc->wr_id & WR_RING)
		v->arrived[(wc->wr_id & ~WR_RING) % GDRB_STAGE_SLOTS]++;
	else
		v->recvs++;
	return 0;
}

/* Control messages, counted by kind; their receive put back. */
static int on_ctrl(void *arg, const struct ibv_wc *wc)
{
	struct gdrb_ctx *c = arg;
	struct gdrb_verbs *v = c->priv;
	uint32_t kind = ntohl(wc->imm_data);

	if (wc->status != IBV_WC_SUCCESS)
		return p2p_wc_error(c, wc, "a control receive");
	if (kind < CTRL_KINDS)
		v->ctrl[kind]++;
	return gdrb_verbs_post_empty_recv(&v->qp[v->nqps], 0);
}

/*
 * Reap whatever completed. The watchdog is kicked only when something did:
 * a loop that spins without completions lets --timeout expire.
 */
static int poll_cqs(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	int send, recv, ctrl;

	if ((send = gdrb_verbs_reap(v, v->send_cq, on_send, c)) < 0 ||
	    (recv = gdrb_verbs_reap(v, v->recv_cq, on_recv, c)) < 0 ||
	    (ctrl = gdrb_verbs_reap(v, v->ctrl_cq, on_ctrl, c)) < 0)
		return GDRB_ERR;
	if (send + recv + ctrl)
		gdrb_watchdog_kick();
	return send + recv + ctrl;
}

int gdrb_verbs_poll(struct gdrb_ctx *c)
{
	return poll_cqs(c) < 0 ? GDRB_ERR : 0;
}

/* A tenth of a second at most per sleep: the caller's loop then arms and looks again. */
#define SLEEP_MS 100

/* Sleep until the channel reports a completion on an armed CQ; acknowledge every event. */
static int sleep_for_event(struct gdrb_verbs *v)
{
	struct pollfd pfd = { .fd = v->channel->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;
	int rc = poll(&pfd, 1, SLEEP_MS);

	if (rc < 0 && errno != EINTR) {
		gdrb_err("poll on the completion channel: %s", strerror(errno));
		return GDRB_ERR;
	}
	/* The channel's fd is non-blocking: take every event it holds. */
	while (rc > 0 && ibv_get_cq_event(v->channel, &cq, &cq_ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	return 0;
}

int gdrb_verbs_progress(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct ibv_cq *cqs[3] = { v->send_cq, v->recv_cq, v->ctrl_cq };
	int n = poll_cqs(c), i, rc;

	if (n || !v->sleeps)
		return n < 0 ? GDRB_ERR : 0;
	for (i = 0; i < 3; i++)
		if ((rc = ibv_req_notify_cq(cqs[i], 0))) {
			gdrb_err("ibv_req_notify_cq: %s", strerror(rc));
			return GDRB_ERR;
		}
	/* A completion that came before the CQs were armed raises no event: look again. */
	n = poll_cqs(c);
	if (n)
		return n < 0 ? GDRB_ERR : 0;
	return sleep_for_event(v);
}

int gdrb_verbs_ctx_progress(void *ctx)
{
	return gdrb_verbs_progress(ctx);
}

int gdrb_verbs_wait_count(struct gdrb_ctx *c, uint64_t *have, uint64_t *used, uint64_t n)
{
	while (*have - *used < n)
		if (gdrb_verbs_progress(c))
			return GDRB_ERR;
	*used += n;
	return 0;
}

int gdrb_verbs_wait_ctrl(struct gdrb_ctx *c, int kind)
{
	struct gdrb_verbs *v = c->priv;

	return gdrb_verbs_wait_count(c, &v->ctrl[kind], &v->ctrl_used[kind], 1);
}

int gdrb_verbs_send_ctrl(struct gdrb_ctx *c, int kind)
{
	struct gdrb_verbs *v = c->priv;

	return gdrb_verbs_post_ctrl(v, &v->qp[v->nqps], (uint32_t)kind);
}
