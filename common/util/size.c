/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gdrb_size.h"

static const struct {
	const char *suffix;
	unsigned shift;
} size_suffixes[] = {
	{ "", 0 },    { "b", 0 },    { "k", 10 },   { "kib", 10 },
	{ "m", 20 },  { "mib", 20 }, { "g", 30 },   { "gib", 30 },
	{ "t", 40 },  { "tib", 40 },
};

/* Why text, which has no valid suffix after its number, is not a size. */
static const char *bad_tail(const char *text, const char *end)
{
	if (end - text == 1 && *text == '0' && (*end == 'x' || *end == 'X'))
		return "a size is a decimal number, not hexadecimal (0x10 is 16)";
	if (*end == '.')
		return "a size is a whole number of bytes, not a fraction (1.5K is 1536)";
	if ((*end == 'e' || *end == 'E') && isdigit((unsigned char)end[1]))
		return "a size takes no exponent (1e6 is 1000000)";
	if (isspace((unsigned char)*end))
		return "a size has no blanks";
	return "unknown size suffix";
}

int gdrb_size_parse(const char *text, size_t *out, const char **err)
{
	unsigned long long value;
	const char *p = text;
	char *end;
	size_t i;

	*err = NULL;
	if (!*p) {
		*err = "empty size";
		return -1;
	}
	if (!isdigit((unsigned char)*p)) {
		*err = "a size must start with a decimal number";
		return -1;
	}
	errno = 0;
	value = strtoull(p, &end, 10);
	if (errno == ERANGE || value > GDRB_SIZE_LIMIT) {
		*err = "size too large (the largest accepted is " GDRB_SIZE_LIMIT_TEXT ")";
		return -1;
	}
	for (i = 0; i < sizeof(size_suffixes) / sizeof(size_suffixes[0]); i++) {
		if (strcasecmp(end, size_suffixes[i].suffix) != 0)
			continue;
		if (value > (GDRB_SIZE_LIMIT >> size_suffixes[i].shift)) {
			*err = "size too large (the largest accepted is " GDRB_SIZE_LIMIT_TEXT ")";
			return -1;
		}
		value <<= size_suffixes[i].shift;
		if (value == 0) {
			*err = "size must be at least 1 byte";
			return -1;
		}
		*out = (size_t)value;
		return 0;
	}
	*err = bad_tail(text, end);
	return -1;
}

static int sizes_push(struct gdrb_sizes *s, size_t v, const char **err)
{
	if (s->n == GDRB_SIZES_MAX) {
		*err = "too many sizes: at most " GDRB_STR_SIZES_MAX;
		return -1;
	}
	s->v[s->n++] = v;
	return 0;
}

static int sizes_range(const char *text, const char *colon,
		       struct gdrb_sizes *out, const char **err)
{
	char min_text[64];
	size_t len = (size_t)(colon - text), min, max, v;

	if (strchr(colon + 1, ':')) {
		*err = "a range has exactly one ':'";
		return -1;
	}
	if (strchr(text, ',')) {
		*err = "a range MIN:MAX takes no step and no list: it doubles from MIN to MAX";
		return -1;
	}
	if (len >= sizeof(min_text)) {
		*err = "size too large (the largest accepted is " GDRB_SIZE_LIMIT_TEXT ")";
		return -1;
	}
	memcpy(min_text, text, len);
	min_text[len] = '\0';
	if (gdrb_size_parse(min_text, &min, err) || gdrb_size_parse(colon + 1, &max, err))
		return -1;
	if (min > max) {
		*err = "MIN is larger than MAX";
		return -1;
	}
	for (v = min; v <= max; v *= 2) {
		if (sizes_push(out, v, err))
			return -1;
		if (v > SIZE_MAX / 2)
			break;
	}
	if (out->v[out->n - 1] != max)
		return sizes_push(out, max, err);
	return 0;
}

int gdrb_sizes_parse(const char *text, struct gdrb_sizes *out, const char **err)
{
	const char *colon = strchr(text, ':');
	char item[64];
	const char *p = text;

	out->n = 0;
	*err = NULL;
	if (colon)
		return sizes_range(text, colon, out, err);
	for (;;) {
		size_t len = strcspn(p, ","), v;

		if (len == 0 || len >= sizeof(item)) {
			*err = len ? "size too large (the largest accepted is " GDRB_SIZE_LIMIT_TEXT ")" :
				     "empty size in list";
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (gdrb_size_parse(item, &v, err) || sizes_push(out, v, err))
			return -1;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

size_t gdrb_sizes_max(const struct gdrb_sizes *s)
{
	size_t i, max = 0;

	for (i = 0; i < s->n; i++)
		if (s->v[i] > max)
			max = s->v[i];
	return max;
}

char *gdrb_size_format(size_t size, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && size >= 1024 &&
	       size % 1024 == 0) {
		size /= 1024;
		u++;
	}
	snprintf(buf, len, "%zu%s", size, units[u]);
	return buf;
}

unsigned gdrb_window_at(size_t size, unsigned window, size_t cap, bool windowed)
{
	if (!windowed || size == 0 || window <= 1)
		return window;
	/* window x size only matters up to the cap: compare by division. */
	if (window <= cap / size)
		return window;
	return cap / size > 1 ? (unsigned)(cap / size) : 1;
}

size_t gdrb_buf_bytes(const struct gdrb_sizes *sizes, unsigned window, size_t cap, bool windowed)
{
	size_t i, bytes = 0;

	for (i = 0; i < sizes->n; i++) {
		size_t s = sizes->v[i], w = gdrb_window_at(s, window, cap, windowed);
		/* w > 1 only where w x s <= cap: no wrap. */
		size_t b = windowed && w > 1 ? w * s : s;

		bytes = b > bytes ? b : bytes;
	}
	return bytes;
}
