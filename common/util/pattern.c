/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <string.h>

#include "gdrb_pattern.h"

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t gdrb_pattern_seed(size_t size, uint64_t iter, unsigned slot, unsigned sender)
{
	uint64_t s = mix64((uint64_t)size ^ 0x6764726200000000ull);

	s = mix64(s ^ iter);
	s = mix64(s ^ slot);
	s = mix64(s ^ ((uint64_t)sender << 32) ^ 0x5e4d);
	return s;
}

/* Word w of the pattern: a cheap odd-multiplier hash of the word index. */
static inline uint64_t pattern_word(uint64_t seed, uint64_t w)
{
	uint64_t x = seed + w * 0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 32);
}

static inline unsigned char pattern_byte(uint64_t seed, size_t i)
{
	return (unsigned char)(pattern_word(seed, i / 8) >> (8 * (i % 8)));
}

unsigned char gdrb_pattern_byte(uint64_t seed, size_t i)
{
	return pattern_byte(seed, i);
}

void gdrb_pattern_fill_at(void *buf, size_t len, uint64_t seed, size_t base)
{
	unsigned char *p = buf;
	size_t i = 0;

	/* Head bytes up to the next word boundary of the message offset. */
	for (; i < len && (base + i) % 8; i++)
		p[i] = pattern_byte(seed, base + i);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = pattern_word(seed, (base + i) / 8);

		memcpy(p + i, &w, 8);
	}
	for (; i < len; i++)
		p[i] = pattern_byte(seed, base + i);
}

uint64_t gdrb_pattern_check(const void *buf, size_t len, uint64_t seed, size_t base,
			    size_t *first_bad)
{
	const unsigned char *p = buf;
	uint64_t bad = 0;
	size_t i = 0;

	for (; i < len && (base + i) % 8; i++)
		if (p[i] != pattern_byte(seed, base + i) && !bad++)
			*first_bad = base + i;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = pattern_word(seed, (base + i) / 8), got;
		unsigned b;

		memcpy(&got, p + i, 8);
		if (got == w)
			continue;
		for (b = 0; b < 8; b++)
			if ((unsigned char)(got >> (8 * b)) != (unsigned char)(w >> (8 * b)) &&
			    !bad++)
				*first_bad = base + i + b;
	}
	for (; i < len; i++)
		if (p[i] != pattern_byte(seed, base + i) && !bad++)
			*first_bad = base + i;
	return bad;
}
