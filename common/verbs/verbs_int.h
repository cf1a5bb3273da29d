/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs context shared by verbs_setup.c (opening, connecting), verbs_p2p.c
 * (posting, polling) and verbs_pipe.c (pipelined staging through the rings).
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

struct qp_state {
	struct ibv_qp *qp;
	uint64_t posted, completed;     /* send work requests */
	unsigned unsignaled;            /* posted since the last signaled one */
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
	bool failed;
	const struct gdrb_variant *pp_variant;

	/* Write ping-pong polling the receive buffer's last byte (host memory only). */
	bool poll;
	uint8_t expect;                         /* the byte the next message ends with */
	uint64_t seq;                           /* messages at this size, without validation */

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

/* --- verbs_setup.c: the pieces of setup that all pairs (verbs_pairs.c) shares --- */

/*
 * Device, port and GID into v (dev, port, nic, rate, ethernet, dist, nearest,
 * gid_index, gid_text, gid_type): --ib-dev, else the active port nearest this
 * rank's GPU (gpu_bus_id as CUDA gives it, NULL: GPU local_rank of the node's),
 * else the first active port. 0, or the usage or unsupported code (said once).
 */
int gdrb_verbs_choose(const struct gdrb_verbs_params *vp, const char *gpu_bus_id, int local_rank,
		      struct gdrb_verbs *v);
/*
 * Open the chosen device and read the port and device limits into v (me.lid,
 * me.mtu, me.gid, max_chunk, rd_atom, max_qp_wr, max_cqe); scatter-to-CQE is
 * set first for device receive buffers. The context is closed on failure.
 */
int gdrb_verbs_query(const struct gdrb_verbs_params *vp, bool device_mem, struct gdrb_verbs *v);
/* v->access: local and remote read and write, relaxed ordering where asked and built (v->relaxed). */
void gdrb_verbs_set_access(const struct gdrb_verbs_params *vp, struct gdrb_verbs *v);
/* Register a host buffer (skipped when buf->ptr is NULL) as v->mr[which], its lkey and me.addr/rkey. */
int gdrb_verbs_reg_host(const struct gdrb_params *p, bool windowed, struct gdrb_verbs *v, int which,
			const struct gdrb_buf *buf, int access);
/*
 * GPUDirect registration of the device send and receive buffers (BUF_SEND,
 * BUF_RECV): 0, or GDRB_ERR_UNSUPP with why (every attempt's error and the fix).
 */
int gdrb_verbs_reg_device(const struct gdrb_params *p, bool windowed, int reg_mode, struct gdrb_verbs *v,
			  const struct gdrb_buf *send, const struct gdrb_buf *recv, char *why, size_t len);
/* The direct path's header line for a registration through used. */
const char *gdrb_verbs_gdr_how(enum gdrb_reg_mode used);
/* A RC QP on v->pd, sends on v->send_cq, receives on rcq; v->max_inline set. NULL (said) on failure. */
struct ibv_qp *gdrb_verbs_create_qp(struct gdrb_verbs *v, struct ibv_cq *rcq, unsigned rx);

/* The other end of a QP. */
struct gdrb_verbs_remote {
	uint32_t lid, mtu, qpn, psn;
	const uint8_t *gid;
};

/* RC: RESET -> INIT -> RTR (knows the peer) -> RTS; the error names the peer. */
int gdrb_verbs_connect_qp(const struct gdrb_verbs *v, const struct gdrb_verbs_params *vp, struct ibv_qp *qp,
			  uint32_t psn, const struct gdrb_verbs_remote *peer, int peer_rank, const char *peer_host);
/* Destroy what v holds (its QPs, MRs, CQs, PD, device context); v itself stays. */
void gdrb_verbs_release(struct gdrb_verbs *v);

/* The header's NIC line pieces: "GID index N ADDR (TYPE)" (or "no GRH (LID routing)"), and why this port. */
void gdrb_verbs_gid_line(const struct gdrb_verbs *v, char *buf, size_t len);
const char *gdrb_verbs_port_why(const struct gdrb_verbs *v, const struct gdrb_verbs_params *vp);

/* Keep one receive posted on a QP (0-byte: immediates and control messages). */
int gdrb_verbs_post_empty_recv(struct ibv_qp *qp);

/* --- verbs_p2p.c: posting and polling --- */

/* Reap whatever completed; kicks the watchdog on progress only. */
int gdrb_verbs_poll(struct gdrb_ctx *c);
/*
 * Reap whatever completed; a rank that sleeps and found nothing arms the CQs,
 * reaps again (a completion may have come in between) and, still with
 * nothing, sleeps until the channel reports one. The wait loops call it.
 */
int gdrb_verbs_progress(struct gdrb_ctx *c);
/* Wait (gdrb_verbs_progress) until *have - *used >= n, then consume n. */
int gdrb_verbs_wait_count(struct gdrb_ctx *c, uint64_t *have, uint64_t *used, uint64_t n);
int gdrb_verbs_wait_ctrl(struct gdrb_ctx *c, int kind);
int gdrb_verbs_send_ctrl(struct gdrb_ctx *c, int kind);
/* Post one send work request on QP q, waiting for room in its queue. */
int gdrb_verbs_post_wr(struct gdrb_ctx *c, unsigned q, struct ibv_send_wr *wr, bool signal);

/* Where a message's pieces come from and go to. */
struct span {
	char *local;                    /* this rank's first byte (read: where it lands) */
	uint32_t lkey;
	uint64_t remote;                /* the peer's first byte (write, read) */
	uint32_t rkey;
	bool cpu_reads;                 /* host memory: small writes and sends go inline */
};

/*
 * One message of len bytes of the operation, split by the largest work
 * request; a write's last piece carries imm when it is not 0. signal: signal
 * the last piece.
 */
int gdrb_verbs_post_pieces(struct gdrb_ctx *c, unsigned q, const struct span *sp, size_t len,
			   uint32_t imm, bool signal);
/* Receives for pieces first.. of a message of len bytes at base, each with wr_id. */
int gdrb_verbs_post_recvs(struct gdrb_ctx *c, unsigned q, char *base, uint32_t lkey, size_t len,
			  size_t first, uint64_t wr_id);

/* --- verbs_pipe.c --- */

/* The pipelined staged path of gdrb_verbs_stream and gdrb_verbs_pingpong. */
int gdrb_verbs_pipe_stream(struct gdrb_ctx *c, size_t size, bool active, bool passive);
int gdrb_verbs_pipe_pingpong(struct gdrb_ctx *c, size_t size);
/* Send ping-pong: the receive posted ahead, the first piece of any message into slot 0. */
int gdrb_verbs_pipe_post_ahead(struct gdrb_ctx *c);

#endif
