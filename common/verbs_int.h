/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs context shared by verbs_setup.c (opening, connecting) and verbs_p2p.c (posting, polling). */
#ifndef GDRB_VERBS_INT_H
#define GDRB_VERBS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "gdrb_reg.h"
#include "gdrb_verbs.h"

#define CTRL_CREDITS 64         /* receives kept posted on the control QP */
#define WRITE_CREDITS 64        /* receives for immediates kept posted on each data QP */
#define INLINE_WANTED 220       /* what perftest asks for on RC */
#define POLL_BATCH 16

/* Control messages: a 0-byte send with immediate on a QP of their own. */
enum { CTRL_READY = 1, CTRL_ACK = 2, CTRL_DONE = 3, CTRL_KINDS = 4 };

enum { BUF_SEND, BUF_RECV, BUF_SEND_BOUNCE, BUF_RECV_BOUNCE, NBUF };

/* What a rank tells its peer, through the bootstrap. */
struct exch {
	uint32_t lid, mtu, nqps, pad;
	uint8_t gid[16];
	uint32_t qpn[GDRB_MAX_QPS + 1], psn[GDRB_MAX_QPS + 1];
	uint64_t addr[NBUF];
	uint32_t rkey[NBUF];
};

struct qp_state {
	struct ibv_qp *qp;
	uint64_t posted, completed;     /* send work requests */
	unsigned unsignaled;            /* posted since the last signaled one */
};

struct gdrb_verbs {
	enum gdrb_verbs_op op;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq, *recv_cq, *ctrl_cq;
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

	/* Progress, cumulative: what arrived and what the iterations consumed. */
	uint64_t recvs, recvs_used, imms, imms_used;
	uint64_t ctrl[CTRL_KINDS], ctrl_used[CTRL_KINDS];
	bool failed;
	const struct gdrb_variant *pp_variant;

	/* Write ping-pong polling the receive buffer's last byte (host memory only). */
	bool poll;
	uint8_t expect;                         /* the byte the next message ends with */
	uint64_t seq;                           /* messages at this size, without validation */  /* send ping-pong: where the receive ahead points */
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

/* Keep one receive posted on a QP (0-byte: immediates and control messages). */
int gdrb_verbs_post_empty_recv(struct ibv_qp *qp);

#endif
