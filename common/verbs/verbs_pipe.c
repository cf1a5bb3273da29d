/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipelined staging over RC verbs (path "staged" with --mem device): device
 * memory crosses the wire a fragment at a time through the rings of pinned
 * slots (gdrb_stage.h), each ring's copies on its own stream, overlapping the
 * transfer of other fragments. Fragment f uses slot f % S of both rings.
 *
 * Write and send: the sender copies fragment f device->out slot as soon as the
 * work request that last read that slot has completed, and posts it once the
 * copy has finished: an RDMA write with immediate (IMM_RING | slot) into the
 * peer's in slot, or a send into the receive posted on that slot. Every
 * fragment has a completion of its own, and the receiver copies it
 * slot->device at once. Fragment f >= S needs a credit: the receiver sends one
 * (CTRL_CREDIT) when the copy out of slot f - S has finished (and, for sends,
 * the receive for f is posted). A transfer starts with every slot free: the
 * window's acknowledgement and the ping-pong's answer leave only after the
 * receiver has settled its ring.
 *
 * Read: the owner fills its out slots and says each fragment is ready
 * (CTRL_FRAG); the reader reads it into its in slot once the copy out of that
 * slot has finished, and when the read has completed copies it slot->device
 * and frees the owner's slot for fragment f + S (CTRL_CREDIT).
 *
 * One progress loop drives both sides of a rank, so a rank that sends and
 * receives at once (-b, ping-pong) never blocks one side on the other.
 */
#include "config.h"

#include <string.h>

#include <infiniband/verbs.h>

#include "gdrb_log.h"
#include "gdrb_stage.h"
#include "gdrb_verbs.h"

#include "verbs_int.h"
#include "verbs_pipe.h"
#include "verbs_post.h"

static bool wr_done(const struct gdrb_verbs *v, const struct slot_wr *w)
{
	return v->qp[w->q].completed >= w->id;
}

/* Consume one control message of this kind if one has arrived. */
static bool take_ctrl(struct gdrb_verbs *v, int kind)
{
	if (v->ctrl[kind] == v->ctrl_used[kind])
		return false;
	v->ctrl_used[kind]++;
	return true;
}

static void side_begin(struct pipe_side *p, const struct gdrb_ctx *c, size_t size, unsigned count,
		       size_t chunk, unsigned nq)
{
	memset(p, 0, sizeof(*p));
	gdrb_frags_init(&p->fr, size, count, chunk, c->stride);
	p->nq = nq;
	p->on = true;
	p->cleared = true;
}

/* Fragment f's slot in one of the peer's rings. */
static uint64_t peer_slot(const struct gdrb_verbs *v, int buf, size_t f)
{
	return v->peer.addr[buf] + (f % v->peer.ring_slots) * v->peer.ring_chunk;
}

/* --- write and send: the sending side ------------------------------------------ */

/* Copy fragments device->out slot ahead of sending, as far as slots are free. */
static int out_fill(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct pipe_side *t = &v->tx;
	struct gdrb_ring *r = &c->out_ring;

	while (t->filled < t->fr.total && t->filled < t->sent + r->slots &&
	       wr_done(v, &v->out_wr[t->filled % r->slots])) {
		if (gdrb_ring_copy_frag(r, &t->fr, t->filled, &c->send, true))
			return GDRB_ERR;
		t->filled++;
	}
	return 0;
}

/* Post the next fragment once its copy has finished, past the first S with a credit: 1 posted, 0 not yet. */
static int out_post(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct pipe_side *t = &v->tx;
	struct gdrb_ring *r = &c->out_ring;
	size_t f = t->sent, off, len;
	unsigned s = (unsigned)(f % r->slots), q = (unsigned)(f % t->nq);
	struct span sp = { .local = gdrb_ring_slot(r, f), .lkey = v->lkey[BUF_OUT_RING],
			   .remote = peer_slot(v, BUF_IN_RING, f), .rkey = v->peer.rkey[BUF_IN_RING],
			   .cpu_reads = true };
	int done;

	if (f == t->filled || (!t->cleared && !take_ctrl(v, CTRL_READY)))
		return 0;
	t->cleared = true;
	done = gdrb_ring_done(r, f);
	if (done <= 0 || (f >= r->slots && !take_ctrl(v, CTRL_CREDIT)))
		return done < 0 ? GDRB_ERR : 0;
	gdrb_frag_at(&t->fr, f, &off, &len, NULL);
	if (gdrb_verbs_post_pieces(v, &v->qp[q], &sp, len, v->op == GDRB_VERBS_WRITE ? IMM_RING | s : 0, true))
		return GDRB_ERR;
	v->out_wr[s] = (struct slot_wr){ .q = q, .id = v->qp[q].posted };
	t->sent++;
	return 1;
}

/* --- write and send: the receiving side ---------------------------------------- */

/* Send: receives for fragment f in its in slot, pieces first.. of it. */
static int in_post_recvs(struct gdrb_ctx *c, size_t f, size_t first)
{
	struct gdrb_verbs *v = c->priv;
	size_t off, len;

	gdrb_frag_at(&v->rx.fr, f, &off, &len, NULL);
	return gdrb_verbs_post_recvs(v, &v->qp[f % v->rx.nq], gdrb_ring_slot(&c->in_ring, f),
				     v->lkey[BUF_IN_RING], len, first, WR_RING | (f % c->in_ring.slots));
}

/* Send: receives for the fragments that need no credit; skip: pieces of fragment 0 already posted. */
static int in_post_first(struct gdrb_ctx *c, size_t skip)
{
	struct gdrb_verbs *v = c->priv;
	size_t f, n = v->rx.fr.total < c->in_ring.slots ? v->rx.fr.total : c->in_ring.slots;

	for (f = 0; f < n; f++)
		if (in_post_recvs(c, f, f ? 0 : skip))
			return GDRB_ERR;
	return 0;
}

/* Copy the next fragment slot->device once it has arrived: 1 done, 0 not yet. */
static int in_land(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct pipe_side *p = &v->rx;
	size_t f = p->landed, s = f % c->in_ring.slots, off, len;
	uint64_t n;

	if (f == p->fr.total)
		return 0;
	gdrb_frag_at(&p->fr, f, &off, &len, NULL);
	/* A write's immediate comes with its last piece; a send takes a receive per piece. */
	n = v->op == GDRB_VERBS_WRITE ? 1 : gdrb_wr_count(len, v->max_chunk);
	if (v->arrived[s] - v->arrived_used[s] < n)
		return 0;
	v->arrived_used[s] += n;
	if (gdrb_ring_drain(&c->in_ring, f, &c->recv, off, len))
		return GDRB_ERR;
	p->landed++;
	return 1;
}

/* Give a slot back for fragment f + S once the copy out of it has finished: 1 done, 0 not yet. */
static int in_free(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct pipe_side *p = &v->rx;
	size_t f = p->freed, next = f + c->in_ring.slots;
	int done;

	if (f == p->landed)
		return 0;
	done = gdrb_ring_done(&c->in_ring, f);
	if (done <= 0)
		return done;
	if (next < p->fr.total && ((v->op == GDRB_VERBS_SEND && in_post_recvs(c, next, 0)) ||
				   gdrb_verbs_send_ctrl(c, CTRL_CREDIT)))
		return GDRB_ERR;
	p->freed++;
	return 1;
}

/* --- read: the owner's side ------------------------------------------------------ */

/* Fill the next out slot, past the first S once the reader has freed it: 1 done, 0 not yet. */
static int own_fill(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct pipe_side *t = &v->tx;
	size_t f = t->filled;

	if (f == t->fr.total || (f >= c->out_ring.slots && !take_ctrl(v, CTRL_CREDIT)))
		return 0;
	if (gdrb_ring_copy_frag(&c->out_ring, &t->fr, f, &c->send, true))
		return GDRB_ERR;
	t->filled++;
	return 1;
}

/* Tell the reader a fragment is ready once its copy has finished: 1 done, 0 not yet. */
static int own_say(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct pipe_side *t = &v->tx;
	int done;

	if (t->sent == t->filled)
		return 0;
	done = gdrb_ring_done(&c->out_ring, t->sent);
	if (done <= 0)
		return done;
	if (gdrb_verbs_send_ctrl(c, CTRL_FRAG))
		return GDRB_ERR;
	t->sent++;
	return 1;
}

/* --- read: the reader's side ----------------------------------------------------- */

/* Read the next ready fragment once the copy out of its in slot has finished: 1 posted, 0 not yet. */
static int rd_post(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct pipe_side *p = &v->rx;
	struct gdrb_ring *r = &c->in_ring;
	size_t f = p->posted, off, len;
	unsigned s = (unsigned)(f % r->slots), q = (unsigned)(f % p->nq);
	struct span sp = { .local = gdrb_ring_slot(r, f), .lkey = v->lkey[BUF_IN_RING],
			   .remote = peer_slot(v, BUF_OUT_RING, f), .rkey = v->peer.rkey[BUF_OUT_RING] };
	int done = 1;

	if (f == p->fr.total || v->ctrl[CTRL_FRAG] == v->ctrl_used[CTRL_FRAG])
		return 0;
	/* The slot's previous fragment, f - S, must have been copied out. */
	if (f >= r->slots && (p->landed <= f - r->slots || (done = gdrb_ring_done(r, f)) <= 0))
		return done < 0 ? GDRB_ERR : 0;
	v->ctrl_used[CTRL_FRAG]++;
	gdrb_frag_at(&p->fr, f, &off, &len, NULL);
	if (gdrb_verbs_post_pieces(v, &v->qp[q], &sp, len, 0, true))
		return GDRB_ERR;
	v->in_wr[s] = (struct slot_wr){ .q = q, .id = v->qp[q].posted };
	p->posted++;
	return 1;
}

/* A completed read: copy it slot->device and free the owner's slot for f + S: 1 done, 0 not yet. */
static int rd_land(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct pipe_side *p = &v->rx;
	struct gdrb_ring *r = &c->in_ring;
	size_t f = p->landed;

	if (f == p->posted || !wr_done(v, &v->in_wr[f % r->slots]))
		return 0;
	if (gdrb_ring_copy_frag(r, &p->fr, f, &c->recv, false) ||
	    (f + r->slots < p->fr.total && gdrb_verbs_send_ctrl(c, CTRL_CREDIT)))
		return GDRB_ERR;
	p->landed++;
	return 1;
}

/* --- progress ---------------------------------------------------------------------- */

/* Call one until it makes no more progress; 0 or GDRB_ERR. */
static int repeat(struct gdrb_ctx *c, int (*one)(struct gdrb_ctx *c))
{
	int rc;

	while ((rc = one(c)) > 0)
		;
	return rc;
}

static int step_out(struct gdrb_ctx *c)
{
	const struct gdrb_verbs *v = c->priv;

	if (v->op == GDRB_VERBS_READ)
		return repeat(c, own_fill) || repeat(c, own_say) ? GDRB_ERR : 0;
	return out_fill(c) || repeat(c, out_post) ? GDRB_ERR : 0;
}

static int step_in(struct gdrb_ctx *c)
{
	const struct gdrb_verbs *v = c->priv;

	if (v->op == GDRB_VERBS_READ)
		return repeat(c, rd_land) || repeat(c, rd_post) ? GDRB_ERR : 0;
	return repeat(c, in_land) || repeat(c, in_free) ? GDRB_ERR : 0;
}

/* Progress until everything is posted (read: said ready) and everything has arrived. */
static int run(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;

	while ((v->tx.on && v->tx.sent < v->tx.fr.total) ||
	       (v->rx.on && v->rx.landed < v->rx.fr.total))
		if ((v->tx.on && step_out(c)) || (v->rx.on && step_in(c)) || gdrb_verbs_poll(c))
			return GDRB_ERR;
	v->tx.on = v->rx.on = false;
	return 0;
}

/* --- iterations ---------------------------------------------------------------------- */

/* The in ring's copies finish in order: once the last fragment's has, everything is in device memory. */
static int in_settle(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;

	return v->rx.landed ? gdrb_ring_wait(&c->in_ring, v->rx.landed - 1) : 0;
}

int gdrb_verbs_pipe_stream(struct gdrb_ctx *c, size_t size, bool active, bool passive)
{
	struct gdrb_verbs *v = c->priv;
	bool reading = v->op == GDRB_VERBS_READ;
	bool out = reading ? passive : active, in = reading ? active : passive;
	int end = reading ? CTRL_DONE : CTRL_ACK;

	if (out) {
		side_begin(&v->tx, c, size, c->window, c->out_ring.chunk, v->nqps);
		v->tx.cleared = v->op != GDRB_VERBS_SEND;
	}
	if (in) {
		side_begin(&v->rx, c, size, c->window, c->in_ring.chunk, v->nqps);
		/* The sender starts once the first receives are posted: no receiver-not-ready retries. */
		if (v->op == GDRB_VERBS_SEND && (in_post_first(c, 0) || gdrb_verbs_send_ctrl(c, CTRL_READY)))
			return GDRB_ERR;
	}
	if (run(c) || (in && (in_settle(c) || gdrb_verbs_send_ctrl(c, end))))
		return GDRB_ERR;
	return out ? gdrb_verbs_wait_ctrl(c, end) : 0;
}

int gdrb_verbs_pipe_post_ahead(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	size_t len = c->in_ring.chunk < v->max_chunk ? c->in_ring.chunk : v->max_chunk;

	return gdrb_verbs_post_recvs(v, &v->qp[0], gdrb_ring_slot(&c->in_ring, 0), v->lkey[BUF_IN_RING], len, 0,
				     WR_RING);
}

/*
 * One message each way on QP 0. The initiator's sides run together; the
 * responder answers once the question has been copied to device memory, which
 * also frees every slot of its in ring for the next question.
 */
int gdrb_verbs_pipe_pingpong(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_verbs *v = c->priv;
	bool sending = v->op == GDRB_VERBS_SEND;

	side_begin(&v->rx, c, size, 1, c->in_ring.chunk, 1);
	/* Piece 0 of fragment 0 is the receive posted ahead. */
	if (sending && in_post_first(c, 1))
		return GDRB_ERR;
	if (c->initiator)
		side_begin(&v->tx, c, size, 1, c->out_ring.chunk, 1);
	if (run(c) || (sending && gdrb_verbs_pipe_post_ahead(c)) || in_settle(c))
		return GDRB_ERR;
	if (c->initiator)
		return 0;
	side_begin(&v->tx, c, size, 1, c->out_ring.chunk, 1);
	return run(c);
}
