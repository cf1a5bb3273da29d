/* SPDX-License-Identifier: BSD-3-Clause */
/* What a run registers against RLIMIT_MEMLOCK, and the note a failed registration gets. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gdrb_memlock.h"
#include "gdrb_size.h"

int gdrb_memlock_need(const struct gdrb_sizes *sizes, unsigned window, size_t window_bytes,
		      bool windowed, enum gdrb_mem_kind mem, struct gdrb_memlock_need *need)
{
	memset(need, 0, sizeof(*need));
	need->max_size = gdrb_sizes_max(sizes);
	need->window = window;
	need->window_bytes = window_bytes;
	need->windowed = windowed;
	need->mem = mem;
	need->buf_bytes = gdrb_buf_bytes(sizes, window, window_bytes, windowed);
	/* Send and receive; device memory adds the two pinned bounce buffers. */
	need->nbufs = gdrb_mem_kind(mem)->staged ? 4 : 2;
	if (need->buf_bytes > SIZE_MAX / need->nbufs) {
		need->bytes = SIZE_MAX;
		need->overflow = true;
		return -EOVERFLOW;
	}
	need->bytes = need->buf_bytes * need->nbufs;
	return 0;
}

char *gdrb_memlock_total_text(const struct gdrb_memlock_need *need, char *buf, size_t len)
{
	if (need->overflow)
		snprintf(buf, len, "more than %zu bytes", (size_t)SIZE_MAX);
	else
		gdrb_size_format(need->bytes, buf, len);
	return buf;
}

void gdrb_memlock_need_text(const struct gdrb_memlock_need *need, char *buf, size_t len)
{
	char total[48], max[32], each[32], cap[32], window[96] = "";

	gdrb_memlock_total_text(need, total, sizeof(total));
	if (need->windowed)
		snprintf(window, sizeof(window), ", or a window (-W %u) of smaller ones up to %s (--window-bytes)",
			 need->window, gdrb_size_format(need->window_bytes, cap, sizeof(cap)));
	snprintf(buf, len, "need %s for -m %s with --mem %s: %u registered buffers of %s (%s); "
		 "a buffer holds the largest message%s", total,
		 gdrb_size_format(need->max_size, max, sizeof(max)), gdrb_mem_kind_name(need->mem),
		 need->nbufs, gdrb_size_format(need->buf_bytes, each, sizeof(each)),
		 gdrb_mem_kind(need->mem)->on_gpu ?
			 "send and receive in GPU memory, charged when registered through peer "
			 "memory, not through dma-buf, and their 2 pinned bounce buffers" :
			 "send and receive", window);
}

bool gdrb_memlock_note(const struct gdrb_memlock_need *need, int err, bool unlimited,
		       uint64_t limit, bool exempt, char *buf, size_t len)
{
	bool below = !unlimited && !exempt && (need->overflow || limit < need->bytes);
	char text[512], lim[32];
	int n;

	buf[0] = '\0';
	if (err != ENOMEM && err != EAGAIN && !below)
		return false;
	gdrb_memlock_need_text(need, text, sizeof(text));
	if (unlimited)
		snprintf(lim, sizeof(lim), "unlimited");
	else
		gdrb_size_format((size_t)(limit < SIZE_MAX ? limit : SIZE_MAX), lim, sizeof(lim));
	n = snprintf(buf, len, "; %s; RLIMIT_MEMLOCK %s%s", text, lim,
		     below ? ": raise it (ulimit -l unlimited; LimitMEMLOCK=infinity under systemd)" :
		     exempt ? ", CAP_IPC_LOCK exempts this process: not the limit" :
			      ": not the limit");
	return n > 0;
}
