/* SPDX-License-Identifier: BSD-3-Clause */
/* Message sizes: parsing "-m" forms and printing sizes as people read them. */
#ifndef GDRB_SIZE_H
#define GDRB_SIZE_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#define GDRB_SIZES_MAX 128
#define GDRB_STR_SIZES_MAX "128"

/*
 * The largest message size: 128 TiB, the user address space of a 64-bit
 * Linux process (4-level page tables), so that no size can wrap the
 * arithmetic on it (page rounding, windows, rings) long before it is refused.
 */
#if SIZE_MAX > 0xffffffffu
#define GDRB_SIZE_LIMIT ((size_t)1 << 47)
#define GDRB_SIZE_LIMIT_TEXT "128TiB"
#else
#define GDRB_SIZE_LIMIT ((size_t)1 << 30)
#define GDRB_SIZE_LIMIT_TEXT "1GiB"
#endif

/* a * b and a + b without wrapping: false (and *out untouched) where they would. */
static inline bool gdrb_size_mul(size_t a, size_t b, size_t *out)
{
	size_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

static inline bool gdrb_size_add(size_t a, size_t b, size_t *out)
{
	size_t r;

	if (__builtin_add_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

/* size rounded up to a multiple of align (a power of two), or false where that wraps. */
static inline bool gdrb_size_round_up(size_t size, size_t align, size_t *out)
{
	size_t r;

	if (__builtin_add_overflow(size, align - 1, &r))
		return false;
	*out = r & ~(align - 1);
	return true;
}

struct gdrb_sizes {
	size_t n;
	size_t v[GDRB_SIZES_MAX];
};

/*
 * One size: a decimal number with an optional binary suffix (K, M, G, T,
 * KiB, MiB, GiB, TiB, case-insensitive) or a plain "B" (8B), at most
 * GDRB_SIZE_LIMIT. "KB" and the like are refused: decimal or binary would be
 * a guess. Fractions, hexadecimal and exponents get a reason of their own.
 * Returns 0, or -1 with a reason in err (never NULL) for "%s".
 */
int gdrb_size_parse(const char *text, size_t *out, const char **err);

/*
 * A size set: "MIN:MAX" (MIN, 2*MIN, ... up to MAX, MAX included) or a
 * comma list "8,4K,1M". Every size is at least 1 byte.
 * Returns 0, or -1 with a reason in err.
 */
int gdrb_sizes_parse(const char *text, struct gdrb_sizes *out, const char **err);

size_t gdrb_sizes_max(const struct gdrb_sizes *s);

/*
 * A bandwidth benchmark's buffers hold a window of distinct slots, so that
 * every message in flight has its own bytes to validate; --window-bytes caps
 * the bytes of one window (per buffer). The default 1 GiB is the largest
 * message of the default sweep (8:1G), so that no size of it has its window cut.
 */
#define GDRB_DEF_WINDOW_BYTES "1G"

/*
 * The window in force at size: min(window, max(1, cap / size)) where the
 * messages have a slot each (windowed), window where they share one buffer
 * (or size is 0). Depends on nothing else: the same size gets the same
 * window whatever the rest of the size list is. 0 stays 0.
 */
unsigned gdrb_window_at(size_t size, unsigned window, size_t cap, bool windowed);

/*
 * Bytes in each buffer a run allocates (send, receive and, with device
 * memory, the two pinned bounce buffers): the largest gdrb_window_at(s) x s
 * over the sizes, or the largest size where not windowed. No overflow:
 * a window of more than one fits the cap.
 */
size_t gdrb_buf_bytes(const struct gdrb_sizes *sizes, unsigned window, size_t cap, bool windowed);

/* "8B", "4KiB", "1GiB", "1536B" (exact: non-round sizes stay in bytes). */
char *gdrb_size_format(size_t size, char *buf, size_t len);

#define GDRB_SIZE_FORMS "MIN:MAX (powers of two) or a list like 8,4K,1M; suffixes K,M,G,T or KiB,MiB,GiB,TiB"

#endif
