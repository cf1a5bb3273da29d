/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pieces of verbs_setup.c that all pairs (verbs_pairs.c) shares with the
 * point-to-point setup: device, port and GID, limits, registration, QPs and
 * their connection, release.
 */
#ifndef GDRB_VERBS_SETUP_H
#define GDRB_VERBS_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verbs_int.h"

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

/*
 * The header's NIC line of both verbs drivers (one pair, all pairs): the NIC, its link, MTU (named
 * mtu_what), GID, GPU-NIC distance, then qps (ending in its own separator), tx depth, largest work
 * request and relaxed ordering. Returns the length written.
 */
size_t gdrb_verbs_nic_line(const struct gdrb_verbs *v, const struct gdrb_verbs_params *vp, const char *mtu_what,
			   int mtu, const char *qps, const char *relaxed, char *buf, size_t len);

#endif
