/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_post.c: posting and polling on RC QPs, for the point-to-point
 * transport (verbs_p2p.c, verbs_pipe.c), its setup and all pairs
 * (verbs_pairs.c). It calls none of them.
 */
#ifndef GDRB_VERBS_POST_H
#define GDRB_VERBS_POST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verbs_int.h"

/* Where a message's pieces come from and go to. */
struct span {
	const char *local;              /* this rank's first byte (read: where it lands) */
	uint32_t lkey;
	uint64_t remote;                /* the peer's first byte (write, read) */
	uint32_t rkey;
	bool cpu_reads;                 /* host memory: small writes and sends go inline */
};

/* Say a completion error once per context (v->failed), naming the peer; GDRB_ERR. */
int gdrb_verbs_wc_error(struct gdrb_verbs *v, const struct ibv_wc *wc, const char *what, int peer,
			const char *host);
/* Reap up to POLL_BATCH completions of cq, each handed to one: how many, or GDRB_ERR. */
int gdrb_verbs_reap(const struct gdrb_verbs *v, struct ibv_cq *cq,
		    int (*one)(void *arg, const struct ibv_wc *wc), void *arg);
/* Keep one 0-byte receive posted (immediates and control messages), as wr_id. */
int gdrb_verbs_post_empty_recv(const struct qp_state *s, uint64_t wr_id);
/*
 * Post one send work request on s, waiting (v->progress) for room in its
 * queue; signaled when signal, and at least every half queue.
 */
int gdrb_verbs_post_send(struct gdrb_verbs *v, struct qp_state *s, struct ibv_send_wr *wr, bool signal);
/* A control message: a 0-byte send with immediate kind. */
int gdrb_verbs_post_ctrl(struct gdrb_verbs *v, struct qp_state *s, uint32_t kind);
/*
 * One message of len bytes of v->op, split by the largest work request; a
 * write's last piece carries imm when it is not 0. signal: signal the last piece.
 */
int gdrb_verbs_post_pieces(struct gdrb_verbs *v, struct qp_state *s, const struct span *sp, size_t len,
			   uint32_t imm, bool signal);
/* Receives for pieces first.. of a message of len bytes at base, each with wr_id. */
int gdrb_verbs_post_recvs(const struct gdrb_verbs *v, const struct qp_state *s, char *base, uint32_t lkey,
			  size_t len, size_t first, uint64_t wr_id);

/* The point-to-point context (c->priv): reap whatever completed; kicks the watchdog on progress only. */
int gdrb_verbs_poll(struct gdrb_ctx *c);
/*
 * Reap whatever completed; a rank that sleeps and found nothing arms the CQs,
 * reaps again (a completion may have come in between) and, still with
 * nothing, sleeps until the channel reports one. The wait loops call it.
 */
int gdrb_verbs_progress(struct gdrb_ctx *c);
/* gdrb_verbs_progress as struct gdrb_verbs.progress: ctx is the struct gdrb_ctx. */
int gdrb_verbs_ctx_progress(void *ctx);
/* Wait (gdrb_verbs_progress) until *have - *used >= n, then consume n. */
int gdrb_verbs_wait_count(struct gdrb_ctx *c, uint64_t *have, uint64_t *used, uint64_t n);
int gdrb_verbs_wait_ctrl(struct gdrb_ctx *c, int kind);
/* A control message on the control QP. */
int gdrb_verbs_send_ctrl(struct gdrb_ctx *c, int kind);

#endif
