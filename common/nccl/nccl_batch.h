/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How an NCCL benchmark's calls are timed (nccl_batch.c, docs/nccl.md), as
 * --nccl-timing says: a batch of --nccl-batch calls and one synchronisation
 * per sample (nccl-tests' default), one call and its synchronisation (-z 2),
 * or the batch captured once in a CUDA graph and launched per sample (-G 1).
 * Call k of a size runs at nccl-tests' rotated offset into both buffers. A
 * benchmark gives the one call (issue), and fills and checks at the offset
 * gdrb_nccl_checked_shift() names.
 */
#ifndef GDRB_NCCL_BATCH_H
#define GDRB_NCCL_BATCH_H

#include <stddef.h>

#include "gdrb_driver.h"

/* Issue one call (or group) at `shift` bytes into both buffers; no synchronisation. 0 or GDRB_ERR. */
typedef int gdrb_nccl_issue_fn(struct gdrb_ctx *c, size_t size, size_t shift);

/* The bytes call k at size starts at (nccl-tests' startColl): size x (k mod (bufsize / size)). */
size_t gdrb_nccl_shift(const struct gdrb_ctx *c, size_t size, unsigned long long k);

/*
 * The driver's `begin` for a size and placement: the calls counted from 0,
 * c->calls_per_iter and the CSV's timing and calls_per_sync set; in graph
 * timing one call and its synchronisation, untimed, then the batch captured.
 */
int gdrb_nccl_timing_begin(struct gdrb_ctx *c, size_t size, gdrb_nccl_issue_fn *issue, const char *what);

/* One timed iteration: a validated one (c->checking) is one call at gdrb_nccl_checked_shift(). */
int gdrb_nccl_timing_iteration(struct gdrb_ctx *c, size_t size, gdrb_nccl_issue_fn *issue,
			       const char *what);

/* Where the next validated call reads and writes; prepare calls it first, check after. */
size_t gdrb_nccl_checked_shift(const struct gdrb_ctx *c, size_t size, int prepare);

/* The captured graph released (teardown). */
void gdrb_nccl_timing_release(void);

/*
 * The header's lines on the timing, the rotation and the nccl-tests command
 * whose figures are comparable (without the leading "# " of the first).
 */
void gdrb_nccl_timing_describe(const struct gdrb_ctx *c, char *buf, size_t len);

#endif
