/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdrb_copy_bw's copies timed on the device (copy_timed.c), in the shape
 * nvbandwidth times its copy-engine tests: per sample the stream is held until
 * a few warm-up copies and a batch of timed ones are enqueued, and the sample
 * is the time between CUDA events around the batch. A bidirectional sample
 * runs the opposite direction at once on a second stream, twice the bytes per
 * copy, started by the measured stream's start event.
 */
#ifndef GDRB_COPY_TIMED_H
#define GDRB_COPY_TIMED_H

#include <stddef.h>
#include <stdint.h>

#include "gdrb_mem.h"

/* Copies enqueued before the start event of each sample (nvbandwidth's WARMUP_COUNT). */
#define COPY_WARM 4
/* How long a held stream waits for its copies to be enqueued before it gives up. */
#define COPY_GATE_TIMEOUT_S 10.0

struct copy_timed {
	void *stream[2];        /* 0: the measured direction, 1: the opposite one (bidirectional) */
	void *start[2], *end[2];
	struct gdrb_cuda_gate gate;
	uint64_t samples, alone;  /* bidirectional samples, and those whose opposite direction ended first */
};

/* One copy of len bytes from src to dst, n times back to back (0: none). */
struct copy_leg {
	struct gdrb_buf *src, *dst;
	size_t len;
};

int copy_timed_open(struct copy_timed *t);
void copy_timed_close(struct copy_timed *t);
/*
 * One sample: `warm` copies, then `n` timed ones of `measured`; where `against`
 * is not NULL, as many of it at once on the second stream. *us: the device's
 * time of the n measured copies.
 */
int copy_timed_sample(struct copy_timed *t, const struct copy_leg *measured,
		      const struct copy_leg *against, unsigned warm, unsigned n, double *us);

#endif
