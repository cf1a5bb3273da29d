/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs context shared by verbs_setup.c (opening, connecting), verbs_post.c
 * (posting, polling), verbs_p2p.c (the point-to-point iterations),
 * verbs_pipe.c (pipelined staging through the rings) and verbs_pairs.c (all
 * pairs). Each of setup, post and pipe declares what it offers the others in
 * a header of its own (verbs_setup.h, verbs_post.h, verbs_pipe.h), and the
 * calls go one way: p2p uses pipe, both use post; pairs uses setup and post;
 * setup uses post (tests/meta/layers.sh checks who includes which).
 */
#ifndef GDRB_VERBS_INT_H
#define GDRB_VERBS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "gdrb_reg.h"
#include "gdrb_stage.h"
#include "gdrb_verbs.h"

#define CTRL_CREDITS 64         /* receives kept posted on the control QP */
#define WRITE_CREDITS 64        /* receives for immediates kept posted on each data QP */
#define INLINE_WANTED 220       /* what perftest asks for on RC */
#define POLL_BATCH 16
#define RX_EXTRA 8              /* receives per QP beyond a send window's (see rx_room) */

/*
 * Control messages: a 0-byte send with immediate on a QP of their own.
 * Pipelined staging adds CTRL_CREDIT (a ring slot of the receiver, or of a
 * read's owner, is free again) and CTRL_FRAG (a read's owner has filled the
 * next fragment's slot).
 */
enum { CTRL_READY = 1, CTRL_ACK = 2, CTRL_DONE = 3, CTRL_CREDIT = 4, CTRL_FRAG = 5, CTRL_KINDS = 6 };

/* A send's wr_id: its queue's tag (struct qp_state) above bit 48, its count below. */
#define WR_TAG_SHIFT 48
#define WR_COUNT_MASK ((UINT64_C(1) << WR_TAG_SHIFT) - 1)

/* Pipelined staging: an immediate naming the receiver's ring slot, a receive posted on one (wr_id). */
#define IMM_RING (UINT32_C(1) << 31)
#define WR_RING (UINT64_C(1) << 63)

/* Memory regions; the bounce buffers (serial staging) and the rings (pipelined) exist only when used. */
enum { BUF_SEND, BUF_RECV, BUF_SEND_BOUNCE, BUF_RECV_BOUNCE, BUF_OUT_RING, BUF_IN_RING, NBUF };

/* What a rank tells its peer, through the bootstrap. */
struct exch {
	uint32_t lid, mtu, nqps, pad;
	uint8_t gid[16];
	uint32_t qpn[GDRB_MAX_QPS + 1], psn[GDRB_MAX_QPS + 1];
	uint64_t addr[NBUF];
	uint32_t rkey[NBUF];
	uint64_t ring_chunk;            /* bytes per ring slot, 0 without rings */
	uint32_t ring_slots, pad2;
};

/* A QP and its send queue's accounting (gdrb_verbs_post_send). */
struct qp_state {
	struct ibv_qp *qp;
	uint64_t posted, completed;     /* send work requests */
	unsigned unsignaled;            /* posted since the last signaled one */
	unsigned tag;                   /* its index in its owner's QPs: the top of its sends' wr_id */
	int peer;                       /* with host set: the rank a posting error names */
	const char *host;               /* NULL: errors name the operation (one peer, named elsewhere) */
};

/* The last work request that reads or fills a ring slot: the slot is busy until it completes. */
struct slot_wr {
	unsigned q;
	uint64_t id;                    /* qp_state.posted when it was posted */
};

/*
 * One direction of a pipelined transfer of a window of messages (verbs_pipe.c).
 * Fragment f travels in slot f % slots of both rings, on QP f % nq.
 */
struct pipe_side {
	struct gdrb_frags fr;
	unsigned nq;
	bool on;
	bool cleared;                   /* send: the receiver has posted the first receives */
	size_t filled, sent;            /* out ring: fragments copied in; posted (read: said ready) */
	size_t posted, landed, freed;   /* in ring: reads posted; arrived, copy out started; slot given back */
};

struct gdrb_verbs {
	enum gdrb_verbs_op op;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq, *recv_cq, *ctrl_cq;
	struct ibv_comp_channel *channel;       /* every CQ's, when this rank sleeps; else NULL */
	bool sleeps;                            /* waits sleep until a completion is reported */
	struct qp_state qp[GDRB_MAX_QPS + 1];   /* data QPs, then the control QP */
	unsigned nqps;                          /* data QPs */
	struct ibv_mr *mr[NBUF];
	struct gdrb_gpu_mr gpu_mr[2];           /* device send and receive buffers */
	uint32_t lkey[NBUF];
	struct exch me, peer;

	char dev[64], rate[64], nic[80], gid_text[48], gid_type[16];
	char scatter_cqe[192];                  /* header line; "" with host memory */
	unsigned port;
	bool ethernet, relaxed, nearest;
	int gid_index, access;
	enum gdrb_topo_dist dist;
	enum ibv_mtu active_mtu, path_mtu;
	size_t max_chunk;
	unsigned tx_depth, rx_depth, max_inline, rd_atom;
	unsigned send_cqe, recv_cqe;            /* CQ entries, within max_cqe */
	int max_qp_wr, max_cqe;                 /* the device's limits (ibv_query_device) */

	/* Progress, cumulative: what arrived and what the iterations consumed. */
	uint64_t recvs, recvs_used, imms, imms_used;
	uint64_t ctrl[CTRL_KINDS], ctrl_used[CTRL_KINDS];
	uint64_t arrived[GDRB_STAGE_SLOTS];     /* in ring: immediates (write) or receives (send) per slot */
	uint64_t arrived_used[GDRB_STAGE_SLOTS];
	bool failed;                            /* a completion error was said: say no more */
	int (*progress)(void *arg);             /* reaps completions while a send queue is full */
	void *progress_arg;
	const struct gdrb_variant *pp_variant;

	/* Write ping-pong polling the receive buffer's last byte (host memory only). */
	bool poll;
	uint8_t expect;                         /* the byte the next message ends with */
	uint8_t held[2];                        /* what this rank's and the peer's last byte hold now */

	/* Pipelined staging: this rank's sending and receiving sides, and the slots' work requests. */
	struct pipe_side tx, rx;
	struct slot_wr out_wr[GDRB_STAGE_SLOTS], in_wr[GDRB_STAGE_SLOTS];
};

static inline int mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

static inline enum ibv_mtu mtu_enum(int bytes)
{
	enum ibv_mtu m = IBV_MTU_256;

	while (m < IBV_MTU_4096 && mtu_bytes(m) < bytes)
		m++;
	return m;
}

#endif
