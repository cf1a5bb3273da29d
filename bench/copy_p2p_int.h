/* SPDX-License-Identifier: BSD-3-Clause */
/* gdrb_copy_bw --p2p's state, shared by its copies (copy_p2p.c) and its output (copy_p2p_out.c). */
#ifndef GDRB_COPY_P2P_INT_H
#define GDRB_COPY_P2P_INT_H

#include "copy_p2p.h"
#include "gdrb_mem.h"
#include "gdrb_peer.h"

#define P2P_MAX_GPUS GDRB_PEER_MAX

/* A path's id: whether it stages through host memory, whether the opposite direction runs at once. */
enum { PATH_STAGED = 1, PATH_BIDIR = 2 };

/* One GPU's part: its buffers, its streams (copies it sends, copies into it) and their events. */
struct p2p_gpu {
	struct gdrb_buf src, dst;       /* device memory, the largest size each */
	struct gdrb_buf bounce;         /* pinned: its outgoing staged fragments, P2P_SLOTS x P2P_CHUNK */
	void *out, *in;
	void *out_done[P2P_SLOTS], *in_done[P2P_SLOTS];
};

struct p2p {
	int mode, ngpu;
	unsigned dev[P2P_MAX_GPUS];     /* slot i's CUDA device: every GPU, or those of --p2p-gpus */
	struct p2p_gpu gpu[P2P_MAX_GPUS];
	struct gdrb_peer_map peers;     /* the same slots */
	int from, to;                   /* the pair being measured */
	/* The current size's figures, for the matrices: [path id][from][to]. */
	double bw[4][P2P_MAX_GPUS][P2P_MAX_GPUS];
	const char *status[4][P2P_MAX_GPUS][P2P_MAX_GPUS];
};

static inline struct p2p *copy_p2p_state(const struct gdrb_ctx *c)
{
	return c->priv;
}

#endif
