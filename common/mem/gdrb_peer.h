/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which of a node's GPUs may map each other's memory (peer access), with the
 * access enabled where CUDA grants it: what a benchmark between GPUs needs
 * before its direct copies, and the reason to give for a pair without it.
 * Slots 0..n-1 name CUDA devices (dev[]), so that a chosen subset of the node's
 * GPUs keeps their own numbers in every message.
 */
#ifndef GDRB_PEER_H
#define GDRB_PEER_H

#include <stdbool.h>
#include <stddef.h>

#define GDRB_PEER_MAX 16

struct gdrb_peer_map {
	int n;
	unsigned dev[GDRB_PEER_MAX];                         /* slot i's CUDA device */
	bool can[GDRB_PEER_MAX][GDRB_PEER_MAX];              /* cudaDeviceCanAccessPeer(dev[i], dev[j]) */
	bool enabled[GDRB_PEER_MAX][GDRB_PEER_MAX];          /* dev[i] maps dev[j]'s memory */
	char *refused[GDRB_PEER_MAX][GDRB_PEER_MAX];         /* CUDA's answer where enabling failed */
};

/*
 * m for the n (at most GDRB_PEER_MAX) devices dev: peer access enabled, one way
 * at a time, for every ordered pair CUDA can map; where CUDA refuses one (too
 * many peers), its answer is kept. The current device is left changed.
 * 0, or GDRB_ERR (CUDA failed, no memory): gdrb_peer_close still applies.
 */
int gdrb_peer_open(struct gdrb_peer_map *m, const unsigned *dev, int n);

/* The ordered pairs CUDA can map. */
int gdrb_peer_count(const struct gdrb_peer_map *m);

/* Why slot a cannot map slot b's memory (enabled[a][b] false), for a row's note. */
void gdrb_peer_why(const struct gdrb_peer_map *m, int a, int b, char *buf, size_t len);

/* Peer access disabled where it was enabled, CUDA's answers freed. */
void gdrb_peer_close(struct gdrb_peer_map *m);

#endif
