/* SPDX-License-Identifier: BSD-3-Clause */
/* RC verbs point-to-point: the iterations (ping-pong, windows, reads) on verbs_post.c's posting and polling. */
#include "config.h"

#include <stdint.h>

#include <infiniband/verbs.h>

#include "gdrb_log.h"
#include "gdrb_pattern.h"
#include "gdrb_verbs.h"

#include "verbs_int.h"
#include "verbs_pipe.h"
#include "verbs_post.h"

/* Wait until every send work request posted on QP q has completed. */
static int wait_sent(struct gdrb_ctx *c, unsigned q)
{
	struct gdrb_verbs *v = c->priv;

	while (v->qp[q].completed < v->qp[q].posted)
		if (gdrb_verbs_progress(c))
			return GDRB_ERR;
	return 0;
}

/* --- messages ------------------------------------------------------------- */

static int local_buf(const struct gdrb_ctx *c, bool sending)
{
	bool staged = c->variant->staged;

	return sending ? (staged ? BUF_SEND_BOUNCE : BUF_SEND) : (staged ? BUF_RECV_BOUNCE : BUF_RECV);
}

/*
 * One message of len bytes at off of this rank's wire buffer to the same
 * offset of the peer's, split by the largest work request; a write's last
 * piece carries an immediate when imm. signal: signal the last piece.
 */
static int post_msg(struct gdrb_ctx *c, unsigned q, size_t off, size_t len, bool imm, bool signal)
{
	struct gdrb_verbs *v = c->priv;
	bool reading = v->op == GDRB_VERBS_READ;
	int lb = local_buf(c, !reading), rb = reading ? local_buf(c, true) : local_buf(c, false);
	struct span sp = {
		.local = (reading ? gdrb_wire_recv(c) : gdrb_wire_send(c)) + off, .lkey = v->lkey[lb],
		.remote = v->peer.addr[rb] + off, .rkey = v->peer.rkey[rb],
		.cpu_reads = c->variant->staged || c->send.ops->host_accessible,
	};

	return gdrb_verbs_post_pieces(v, &v->qp[q], &sp, len, imm ? 1 : 0, signal);
}

/* Receives for one message of len bytes at off of this rank's wire receive buffer. */
static int post_msg_recvs(struct gdrb_ctx *c, unsigned q, size_t off, size_t len, size_t first)
{
	struct gdrb_verbs *v = c->priv;

	return gdrb_verbs_post_recvs(v, &v->qp[q], gdrb_wire_recv(c) + off, v->lkey[local_buf(c, false)], len,
				     first, 0);
}

/* --- iterations ------------------------------------------------------------ */

/*
 * Send ping-pong keeps one receive for a first piece of up to max_chunk
 * bytes at offset 0 posted ahead (it fits every size), so the peer's next
 * message never waits for it; pieces after the first are posted per message.
 */
static int wait_msg(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_verbs *v = c->priv;

	if (v->op == GDRB_VERBS_WRITE)
		return gdrb_verbs_wait_count(c, &v->imms, &v->imms_used, 1);
	if (gdrb_verbs_wait_count(c, &v->recvs, &v->recvs_used, gdrb_wr_count(size, v->max_chunk)))
		return GDRB_ERR;
	return post_msg_recvs(c, 0, 0, v->max_chunk < c->bufsize ? v->max_chunk : c->bufsize, 0);
}

/*
 * The receive posted ahead points into the previous path's buffer: post one
 * for this path behind it, and let a 0-byte send from each side use up the
 * old one (counted where the old path counts its receives: a pipelined one
 * in ring slot 0). Both ranks switch paths at the same iteration.
 */
static int switch_path(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;
	struct ibv_send_wr flush = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE };
	bool old_ring = v->pp_variant && v->pp_variant->pipelined;

	if ((c->variant->pipelined ? gdrb_verbs_pipe_post_ahead(c) :
	     post_msg_recvs(c, 0, 0, v->max_chunk < c->bufsize ? v->max_chunk : c->bufsize, 0)) ||
	    gdrb_verbs_post_send(v, &v->qp[0], &flush, false) ||
	    (old_ring ? gdrb_verbs_wait_count(c, &v->arrived[0], &v->arrived_used[0], 1) :
	     gdrb_verbs_wait_count(c, &v->recvs, &v->recvs_used, 1)))
		return GDRB_ERR;
	v->pp_variant = c->variant;
	return 0;
}

/*
 * Write ping-pong on host memory polls the receive buffer's last byte, as
 * perftest does, instead of taking a receive completion per message. The
 * byte it waits for must differ from what that byte holds until the message
 * lands. In an iteration checked by -c it is the pattern's last byte, and
 * prepare (before the driver's barrier) stores its complement there; in one
 * not checked, the sender stamps the first of 0x55, 0xaa and 0x33 that
 * neither rank's byte holds (begin clears both at each size, before a
 * barrier; after a checked iteration they hold the two patterns' last bytes,
 * which both ranks know).
 */
static uint8_t *last_byte(char *buf, size_t size)
{
	return (uint8_t *)buf + size - 1;
}

int gdrb_verbs_write_lat_begin(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_verbs *v = c->priv;

	v->held[0] = v->held[1] = 0;
	if (v->poll)
		*last_byte(gdrb_wire_recv(c), size) = 0;
	return 0;
}

int gdrb_verbs_write_lat_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct gdrb_verbs *v = c->priv;

	if (gdrb_p2p_prepare(c, size, iter))
		return GDRB_ERR;
	if (v->poll) {
		v->expect = gdrb_pattern_byte(gdrb_p2p_seed(size, iter, 0, c->initiator ? 1 : 0),
					      size - 1);
		*last_byte(gdrb_wire_recv(c), size) = (uint8_t)~v->expect;
		v->held[0] = v->expect;
		v->held[1] = gdrb_pattern_byte(gdrb_p2p_seed(size, iter, 0, c->initiator ? 0 : 1), size - 1);
	}
	return 0;
}

static int post_stamped(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_verbs *v = c->priv;

	if (!c->checking)
		*last_byte(gdrb_wire_send(c), size) = v->expect;
	return post_msg(c, 0, 0, size, false, false);
}

/* Spin on the byte; now and then reap send completions, which free the queue and report errors. */
static int wait_byte(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_verbs *v = c->priv;
	const uint8_t *p = last_byte(gdrb_wire_recv(c), size);
	unsigned spins = 0;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v->expect)
		if (++spins % 256 == 0 && gdrb_verbs_poll(c))
			return GDRB_ERR;
	return 0;
}

static int pingpong_polled(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_verbs *v = c->priv;

	if (!c->checking) {
		static const uint8_t stamps[] = { 0x55, 0xaa, 0x33 };
		size_t i = 0;

		while (stamps[i] == v->held[0] || stamps[i] == v->held[1])
			i++;
		v->expect = v->held[0] = v->held[1] = stamps[i];
	}
	if (c->initiator)
		return post_stamped(c, size) || wait_byte(c, size) ? GDRB_ERR : 0;
	return wait_byte(c, size) || post_stamped(c, size) ? GDRB_ERR : 0;
}

int gdrb_verbs_pingpong(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_verbs *v = c->priv;

	if (v->poll)
		return pingpong_polled(c, size);

	if (v->op == GDRB_VERBS_SEND && v->pp_variant != c->variant && switch_path(c))
		return GDRB_ERR;
	if (c->variant->pipelined)
		return gdrb_verbs_pipe_pingpong(c, size);
	if (v->op == GDRB_VERBS_SEND && post_msg_recvs(c, 0, 0, size, 1))
		return GDRB_ERR;
	if (c->initiator)
		return gdrb_stage_out(c, 0, size) || post_msg(c, 0, 0, size, true, false) ||
		       wait_msg(c, size) || gdrb_stage_in(c, 0, size) ? GDRB_ERR : 0;
	return wait_msg(c, size) || gdrb_stage_in(c, 0, size) || gdrb_stage_out(c, 0, size) ||
	       post_msg(c, 0, 0, size, true, false) ? GDRB_ERR : 0;
}

static int stage_all(struct gdrb_ctx *c, size_t size, bool out)
{
	unsigned k;

	for (k = 0; k < c->window; k++)
		if (out ? gdrb_stage_out(c, gdrb_msg_off(c, k), size) :
			  gdrb_stage_in(c, gdrb_msg_off(c, k), size))
			return GDRB_ERR;
	return 0;
}

static int stream_write(struct gdrb_ctx *c, size_t size, bool sends, bool recvs)
{
	struct gdrb_verbs *v = c->priv;
	unsigned k, used = v->nqps < c->window ? v->nqps : c->window;

	if (sends)
		for (k = 0; k < c->window; k++)
			/* The last message on each QP carries the immediate: RC keeps a QP's writes in order. */
			if (gdrb_stage_out(c, gdrb_msg_off(c, k), size) ||
			    post_msg(c, k % v->nqps, gdrb_msg_off(c, k), size, k + used >= c->window, false))
				return GDRB_ERR;
	if (recvs && (gdrb_verbs_wait_count(c, &v->imms, &v->imms_used, used) ||
		      stage_all(c, size, false) || gdrb_verbs_send_ctrl(c, CTRL_ACK)))
		return GDRB_ERR;
	return sends ? gdrb_verbs_wait_ctrl(c, CTRL_ACK) : 0;
}

static int stream_send(struct gdrb_ctx *c, size_t size, bool sends, bool recvs)
{
	struct gdrb_verbs *v = c->priv;
	uint64_t pieces = (uint64_t)c->window * gdrb_wr_count(size, v->max_chunk);
	unsigned k;

	if (recvs) {
		for (k = 0; k < c->window; k++)
			if (post_msg_recvs(c, k % v->nqps, gdrb_msg_off(c, k), size, 0))
				return GDRB_ERR;
		/* The sender starts once every receive is posted: no receiver-not-ready retries. */
		if (gdrb_verbs_send_ctrl(c, CTRL_READY))
			return GDRB_ERR;
	}
	if (sends) {
		if (gdrb_verbs_wait_ctrl(c, CTRL_READY))
			return GDRB_ERR;
		for (k = 0; k < c->window; k++)
			if (gdrb_stage_out(c, gdrb_msg_off(c, k), size) ||
			    post_msg(c, k % v->nqps, gdrb_msg_off(c, k), size, false, false))
				return GDRB_ERR;
	}
	if (recvs && (gdrb_verbs_wait_count(c, &v->recvs, &v->recvs_used, pieces) ||
		      stage_all(c, size, false) || gdrb_verbs_send_ctrl(c, CTRL_ACK)))
		return GDRB_ERR;
	return sends ? gdrb_verbs_wait_ctrl(c, CTRL_ACK) : 0;
}

/* Reads: the reader fetches the owner's buffer; the owner learns when it may change it. */
static int stream_read(struct gdrb_ctx *c, size_t size, bool reads, bool owns)
{
	struct gdrb_verbs *v = c->priv;
	bool staged = c->variant->staged;
	unsigned k, q, used = v->nqps < c->window ? v->nqps : c->window;

	if (owns && staged && (stage_all(c, size, true) || gdrb_verbs_send_ctrl(c, CTRL_READY)))
		return GDRB_ERR;
	if (reads) {
		if (staged && gdrb_verbs_wait_ctrl(c, CTRL_READY))
			return GDRB_ERR;
		for (k = 0; k < c->window; k++)
			if (post_msg(c, k % v->nqps, gdrb_msg_off(c, k), size, false,
				     k + used >= c->window))
				return GDRB_ERR;
		for (q = 0; q < used; q++)
			if (wait_sent(c, q))
				return GDRB_ERR;
		if (stage_all(c, size, false) || gdrb_verbs_send_ctrl(c, CTRL_DONE))
			return GDRB_ERR;
	}
	return owns ? gdrb_verbs_wait_ctrl(c, CTRL_DONE) : 0;
}

int gdrb_verbs_stream(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_verbs *v = c->priv;
	bool bidir = c->bench->traffic == GDRB_TRAFFIC_BIDIR;
	bool active = bidir || c->initiator, passive = bidir || !c->initiator;

	if (c->variant->pipelined)
		return gdrb_verbs_pipe_stream(c, size, active, passive);
	if (v->op == GDRB_VERBS_READ)
		return stream_read(c, size, active, passive);
	if (v->op == GDRB_VERBS_SEND)
		return stream_send(c, size, active, passive);
	return stream_write(c, size, active, passive);
}

int gdrb_verbs_read_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	unsigned k;

	c->check_span = size;
	if (c->initiator && c->bench->traffic != GDRB_TRAFFIC_BIDIR)
		return 0;
	for (k = 0; k < gdrb_msg_slots(c); k++)
		if (gdrb_buf_fill_pattern(&c->send, gdrb_msg_off(c, k), size,
					  gdrb_p2p_seed(size, iter, k, c->initiator ? 0 : 1)))
			return GDRB_ERR;
	return 0;
}

uint64_t gdrb_verbs_read_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	uint64_t bad = 0;
	unsigned k;

	if (!c->initiator && c->bench->traffic != GDRB_TRAFFIC_BIDIR)
		return 0;
	for (k = 0; k < gdrb_msg_slots(c); k++) {
		size_t first = 0;
		uint64_t b = gdrb_buf_check_pattern(&c->recv, gdrb_msg_off(c, k), size,
						    gdrb_p2p_seed(size, iter, k, c->initiator ? 1 : 0),
						    &first);

		if (b == (uint64_t)-1)
			return b;
		if (b)
			gdrb_mismatch(c, "%llu wrong byte(s) read from rank %d at size %zu, iteration %llu, slot %u, first at byte %zu",
				      (unsigned long long)b, c->peer, size, (unsigned long long)iter,
				      k, first);
		bad += b;
	}
	return bad;
}
