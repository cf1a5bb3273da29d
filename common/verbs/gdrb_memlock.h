/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a run registers against RLIMIT_MEMLOCK (memlock.c, always built, no
 * libibverbs): the figure, how it was derived, and the note a registration
 * that failed gets when the limit may be why.
 */
#ifndef GDRB_MEMLOCK_H
#define GDRB_MEMLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrb_mem.h"
#include "gdrb_size.h"

/*
 * What a run registers against RLIMIT_MEMLOCK. ibv_reg_mr pins host memory
 * and charges it to the limit: the send and receive buffers, and with device
 * memory the two pinned bounce buffers as well; the GPU buffers themselves
 * are charged when registered through peer memory (dma-buf is not), so a
 * device run counts 4 buffers and a host or pinned one 2. Each buffer is
 * gdrb_buf_bytes() of the sizes (-m), the window (-W) and --window-bytes.
 */
struct gdrb_memlock_need {
	size_t max_size;                /* the largest message */
	unsigned window;
	size_t window_bytes;            /* --window-bytes */
	bool windowed;                  /* bandwidth benchmarks: a window per buffer */
	enum gdrb_mem_kind mem;
	size_t buf_bytes;               /* each buffer */
	unsigned nbufs;                 /* buffers counted */
	size_t bytes;                   /* nbufs * buf_bytes; SIZE_MAX when it overflows */
	bool overflow;
};

/* 0, or -EOVERFLOW with need->bytes saturated at SIZE_MAX (never wrapped). */
int gdrb_memlock_need(const struct gdrb_sizes *sizes, unsigned window, size_t window_bytes,
		      bool windowed, enum gdrb_mem_kind mem, struct gdrb_memlock_need *need);
/* The need alone: "4GiB", or "more than N bytes" when it overflows. */
char *gdrb_memlock_total_text(const struct gdrb_memlock_need *need, char *buf, size_t len);
/*
 * "need 4GiB for -m 1GiB with --mem device: 4 registered buffers of 1GiB
 * (...); a buffer holds ...": the figure and how it was derived.
 */
void gdrb_memlock_need_text(const struct gdrb_memlock_need *need, char *buf, size_t len);
/*
 * For a registration that failed with errno err, given this process's limit
 * (unlimited, or limit bytes) and whether CAP_IPC_LOCK exempts it: when err
 * is ENOMEM or EAGAIN, or the limit applies and is below the need, "; <need
 * text>; RLIMIT_MEMLOCK <limit>..." in buf (raise it, when it is below the
 * need) and true; otherwise "" and false.
 */
bool gdrb_memlock_note(const struct gdrb_memlock_need *need, int err, bool unlimited,
		       uint64_t limit, bool exempt, char *buf, size_t len);

#endif
