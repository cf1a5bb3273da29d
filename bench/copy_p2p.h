/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdrb_copy_bw --p2p (copy_p2p.c): copies between the node's GPUs, every
 * ordered pair a subject of the driver's, each size measured on it direct
 * (peer access enabled, the copy engines reading one GPU and writing the
 * other) and staged (GPU -> pinned host -> GPU, pipelined in fragments), one
 * way and both ways at once. A pair CUDA will not map peer to peer has its
 * direct rows n/a with CUDA's answer. After each size, rank 0 prints the
 * matrices (from GPU in rows, to GPU in columns) as nvbandwidth's
 * device-to-device tests do, with the ratio of direct to staged.
 */
#ifndef GDRB_COPY_P2P_H
#define GDRB_COPY_P2P_H

#include <stddef.h>
#include <stdint.h>

#include "gdrb_driver.h"

/* --p2p: which directions; off: the host<->GPU copies instead. */
enum copy_p2p_mode { P2P_OFF, P2P_UNI, P2P_BIDIR, P2P_BOTH, P2P_MODES };

extern const char *const copy_p2p_mode_names[P2P_MODES];

/* Staged copies' fragment and pinned slots per direction. */
#define P2P_CHUNK ((size_t)1 << 20)
#define P2P_SLOTS 4u

/* gpus: a bit per GPU to measure (--p2p-gpus, within the node's count: copy_p2p_preflight); 0: all. */
int copy_p2p_setup(struct gdrb_ctx *c, int mode, uint64_t gpus);
/* Before any output: gpus' GPUs exist on this node, else one line and GDRB_ERR_USAGE. */
int copy_p2p_preflight(uint64_t gpus);
int copy_p2p_select(struct gdrb_ctx *c, unsigned k);
/* The note of the path's rows at a size. */
void copy_p2p_begin(struct gdrb_ctx *c);
int copy_p2p_iteration(struct gdrb_ctx *c, size_t size);
int copy_p2p_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter);
uint64_t copy_p2p_check(struct gdrb_ctx *c, size_t size, uint64_t iter);
void copy_p2p_describe(const struct gdrb_ctx *c, char *buf, size_t len);
void copy_p2p_reported(struct gdrb_ctx *c, size_t size, size_t variant, const char *status, double bw_GBps);
void copy_p2p_teardown(struct gdrb_ctx *c);

#endif
