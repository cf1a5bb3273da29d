/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of common/util/pattern.c: the validation pattern and its checker. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_pattern.h"
#include "unit_main.h"

#define LARGE_LEN ((size_t)(1u << 20) + 3)
#define GUARD 16
#define NO_BAD ((size_t)0xdeadbeef)

/* Message offsets that start at, just after and just before word boundaries. */
static const size_t bases[] = { 0, 1, 3, 7, 8, 9, 13, 4096 + 5 };
#define N_BASES (sizeof(bases) / sizeof(bases[0]))

/* A whole message's pattern, from its first byte. */
static void fill(void *buf, size_t len, uint64_t seed)
{
	gdrb_pattern_fill_at(buf, len, seed, 0);
}

static unsigned char *xmalloc(size_t len)
{
	unsigned char *p = malloc(len);

	ck_assert_ptr_nonnull(p);
	return p;
}

static uint64_t test_seed(void)
{
	return gdrb_pattern_seed(4096, 7, 2, 1);
}

START_TEST(test_fill_check_small)
{
	/* +1: also run from an address that is not 8-byte aligned. */
	unsigned char buf[1 + 70 + GUARD];
	uint64_t seed = test_seed();
	size_t len, b, shift;

	for (shift = 0; shift < 2; shift++) {
		for (b = 0; b < N_BASES; b++) {
			for (len = 0; len <= 70; len++) {
				unsigned char *p = buf + shift;
				size_t first_bad = NO_BAD;

				memset(buf, 0xee, sizeof(buf));
				gdrb_pattern_fill_at(p, len, seed, bases[b]);
				ck_assert_msg(gdrb_pattern_check(p, len, seed, bases[b],
								 &first_bad) == 0,
					      "len %zu base %zu: errors after fill", len, bases[b]);
				ck_assert_uint_eq(first_bad, NO_BAD);
				/* Nothing past len is written. */
				ck_assert_msg(p[len] == 0xee && p[len + GUARD - 1] == 0xee,
					      "len %zu base %zu: wrote past the end", len,
					      bases[b]);
				if (shift)
					ck_assert_int_eq(buf[0], 0xee);
			}
		}
	}
}
END_TEST

START_TEST(test_fill_check_large)
{
	unsigned char *buf = xmalloc(LARGE_LEN + 1);
	uint64_t seed = test_seed() ^ 0x55;
	size_t b, first_bad = NO_BAD;

	for (b = 0; b < N_BASES; b++) {
		gdrb_pattern_fill_at(buf, LARGE_LEN, seed, bases[b]);
		ck_assert_uint_eq(gdrb_pattern_check(buf, LARGE_LEN, seed, bases[b], &first_bad),
				  0);
		gdrb_pattern_fill_at(buf + 1, LARGE_LEN, seed, bases[b]);
		ck_assert_uint_eq(gdrb_pattern_check(buf + 1, LARGE_LEN, seed, bases[b],
						     &first_bad), 0);
	}
	fill(buf, LARGE_LEN, seed);
	ck_assert_uint_eq(gdrb_pattern_check(buf, LARGE_LEN, seed, 0, &first_bad), 0);
	ck_assert_uint_eq(first_bad, NO_BAD);
	free(buf);
}
END_TEST

/* A whole message's pattern: byte i is gdrb_pattern_byte(seed, i), and not all one byte. */
START_TEST(test_fill_is_base_zero)
{
	unsigned char whole[256];
	uint64_t seed = test_seed();
	size_t i, same = 0;

	fill(whole, sizeof(whole), seed);
	for (i = 0; i < sizeof(whole); i++)
		ck_assert_uint_eq(whole[i], gdrb_pattern_byte(seed, i));
	for (i = 1; i < sizeof(whole); i++)
		same += whole[i] == whole[i - 1];
	ck_assert_uint_lt(same, 16);
}
END_TEST

START_TEST(test_one_corrupt_byte)
{
	static const size_t at[] = { 0, 1, 5, 7, 8, 15, 16, 33, 63, 64, 68, 69 };
	unsigned char buf[70];
	uint64_t seed = test_seed();
	size_t b, i;

	for (b = 0; b < N_BASES; b++) {
		for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			size_t first_bad = NO_BAD;
			uint64_t bad;

			gdrb_pattern_fill_at(buf, sizeof(buf), seed, bases[b]);
			buf[at[i]] ^= 0x01;
			bad = gdrb_pattern_check(buf, sizeof(buf), seed, bases[b], &first_bad);
			ck_assert_msg(bad == 1, "base %zu byte %zu: %llu errors, want 1", bases[b],
				      at[i], (unsigned long long)bad);
			ck_assert_uint_eq(first_bad, bases[b] + at[i]);
		}
	}
}
END_TEST

START_TEST(test_corrupt_byte_large)
{
	unsigned char *buf = xmalloc(LARGE_LEN);
	uint64_t seed = test_seed();
	size_t first_bad = NO_BAD;

	fill(buf, LARGE_LEN, seed);
	buf[LARGE_LEN - 1] ^= 0x80;
	ck_assert_uint_eq(gdrb_pattern_check(buf, LARGE_LEN, seed, 0, &first_bad), 1);
	ck_assert_uint_eq(first_bad, LARGE_LEN - 1);
	buf[LARGE_LEN - 1] ^= 0x80;
	buf[777777] = (unsigned char)~buf[777777];
	ck_assert_uint_eq(gdrb_pattern_check(buf, LARGE_LEN, seed, 0, &first_bad), 1);
	ck_assert_uint_eq(first_bad, 777777);
	free(buf);
}
END_TEST

/* Every wrong byte counts, and first_bad is the lowest offset. */
START_TEST(test_many_corrupt_bytes)
{
	unsigned char buf[70];
	uint64_t seed = test_seed();
	size_t first_bad = NO_BAD;

	gdrb_pattern_fill_at(buf, sizeof(buf), seed, 3);
	buf[60] ^= 1;
	buf[2] ^= 1;
	buf[20] ^= 1;
	buf[21] ^= 1;
	buf[69] ^= 1;
	ck_assert_uint_eq(gdrb_pattern_check(buf, sizeof(buf), seed, 3, &first_bad), 5);
	ck_assert_uint_eq(first_bad, 3 + 2);

	fill(buf, sizeof(buf), seed);
	memset(buf + 16, 0, 8);
	/* A zeroed word: some of its bytes could be 0 by chance, never all of them. */
	ck_assert_uint_ge(gdrb_pattern_check(buf, sizeof(buf), seed, 0, &first_bad), 5);
	ck_assert_uint_ge(first_bad, 16);
	ck_assert_uint_lt(first_bad, 24);
}
END_TEST

/* A shifted message (right bytes at the wrong offsets) never passes. */
START_TEST(test_shifted_message)
{
	unsigned char buf[256];
	uint64_t seed = test_seed();
	size_t first_bad = NO_BAD;

	fill(buf, sizeof(buf), seed);
	ck_assert_uint_gt(gdrb_pattern_check(buf, sizeof(buf), seed, 1, &first_bad), 128);
	ck_assert_uint_gt(gdrb_pattern_check(buf, sizeof(buf), seed, 8, &first_bad), 128);
	ck_assert_uint_gt(gdrb_pattern_check(buf + 1, sizeof(buf) - 1, seed, 0, &first_bad), 128);
}
END_TEST

START_TEST(test_seed_inputs)
{
	uint64_t seed = gdrb_pattern_seed(4096, 7, 2, 1);
	const uint64_t other[] = {
		gdrb_pattern_seed(4097, 7, 2, 1),       /* size */
		gdrb_pattern_seed(4096, 8, 2, 1),       /* iteration */
		gdrb_pattern_seed(4096, 7, 3, 1),       /* window slot */
		gdrb_pattern_seed(4096, 7, 2, 0),       /* sender */
		gdrb_pattern_seed(4096, 7, 1, 2),       /* slot and sender swapped */
		gdrb_pattern_seed(4096, 7, 3, 1 ^ 256), /* slot << 8 ^ sender must not alias */
		gdrb_pattern_seed(4096, 7, 2 ^ 1, 1 ^ 256),
	};
	unsigned char buf[4096];
	size_t i, first_bad;

	/* Deterministic: the receiver computes the sender's seed on its own. */
	ck_assert_uint_eq(gdrb_pattern_seed(4096, 7, 2, 1), seed);
	fill(buf, sizeof(buf), seed);
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		uint64_t bad;

		ck_assert_msg(other[i] != seed, "seed input %zu changes nothing", i);
		first_bad = NO_BAD;
		bad = gdrb_pattern_check(buf, sizeof(buf), other[i], 0, &first_bad);
		ck_assert_msg(bad > sizeof(buf) / 2,
			      "seed input %zu: only %llu of %zu bytes differ", i,
			      (unsigned long long)bad, sizeof(buf));
		ck_assert_uint_lt(first_bad, 8);
	}
}
END_TEST

/* Checking a message chunk by chunk at base offsets equals checking it whole. */
START_TEST(test_chunked_check)
{
	static const size_t chunks[] = { 1, 3, 7, 8, 64, 4093, 65536, LARGE_LEN };
	static const size_t corrupt[] = { 5, 4096, 65537, 700001, LARGE_LEN - 2 };
	unsigned char *buf = xmalloc(LARGE_LEN);
	uint64_t seed = test_seed(), whole;
	size_t c, i, whole_first = NO_BAD;

	fill(buf, LARGE_LEN, seed);
	for (i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++)
		buf[corrupt[i]] ^= 0x10;
	whole = gdrb_pattern_check(buf, LARGE_LEN, seed, 0, &whole_first);
	ck_assert_uint_eq(whole, sizeof(corrupt) / sizeof(corrupt[0]));
	ck_assert_uint_eq(whole_first, corrupt[0]);

	for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		size_t off, first = NO_BAD;
		uint64_t sum = 0;

		for (off = 0; off < LARGE_LEN; off += chunks[c]) {
			size_t n = LARGE_LEN - off < chunks[c] ? LARGE_LEN - off : chunks[c];
			size_t chunk_first = NO_BAD;
			uint64_t bad = gdrb_pattern_check(buf + off, n, seed, off, &chunk_first);

			if (bad && first == NO_BAD)
				first = chunk_first;
			sum += bad;
		}
		ck_assert_msg(sum == whole, "chunk %zu: %llu errors, whole check %llu", chunks[c],
			      (unsigned long long)sum, (unsigned long long)whole);
		ck_assert_uint_eq(first, whole_first);
	}
	free(buf);
}
END_TEST

/* fill_at(base) writes exactly the slice [base, base + len) of a whole fill. */
START_TEST(test_fill_at_slice)
{
	static const struct {
		size_t off, len;
	} slices[] = {
		{ 0, 1 }, { 1, 1 }, { 3, 5 }, { 3, 13 }, { 7, 9 }, { 8, 8 }, { 9, 70 },
		{ 4095, 2 }, { 4093, 4099 }, { 65536, 65536 }, { LARGE_LEN - 11, 11 },
		{ 1, LARGE_LEN - 1 },
	};
	unsigned char *whole = xmalloc(LARGE_LEN), *part = xmalloc(LARGE_LEN + 1);
	uint64_t seed = test_seed();
	size_t i;

	fill(whole, LARGE_LEN, seed);
	for (i = 0; i < sizeof(slices) / sizeof(slices[0]); i++) {
		size_t first_bad = NO_BAD;

		/* Unaligned destination on purpose: only the message offset matters. */
		gdrb_pattern_fill_at(part + 1, slices[i].len, seed, slices[i].off);
		ck_assert_msg(memcmp(part + 1, whole + slices[i].off, slices[i].len) == 0,
			      "slice %zu+%zu differs from the whole fill", slices[i].off,
			      slices[i].len);
		ck_assert_uint_eq(gdrb_pattern_check(whole + slices[i].off, slices[i].len, seed,
						     slices[i].off, &first_bad), 0);
	}
	free(part);
	free(whole);
}
END_TEST

/* gdrb_pattern_byte (what a polling receiver waits for) is the byte the fill writes. */
START_TEST(test_byte_matches_fill)
{
	unsigned char buf[200];
	uint64_t seed = test_seed();
	size_t i;

	fill(buf, sizeof(buf), seed);
	for (i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(gdrb_pattern_byte(seed, i), buf[i]);
	ck_assert_uint_ne(gdrb_pattern_byte(seed, 5), gdrb_pattern_byte(seed + 1, 5));
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static Suite *pattern_suite(void)
{
	Suite *s = suite_create("pattern");

	add_case(s, "fill_check_small", test_fill_check_small);
	add_case(s, "fill_check_large", test_fill_check_large);
	add_case(s, "fill_is_base_zero", test_fill_is_base_zero);
	add_case(s, "one_corrupt_byte", test_one_corrupt_byte);
	add_case(s, "corrupt_byte_large", test_corrupt_byte_large);
	add_case(s, "many_corrupt_bytes", test_many_corrupt_bytes);
	add_case(s, "shifted_message", test_shifted_message);
	add_case(s, "seed_inputs", test_seed_inputs);
	add_case(s, "byte_matches_fill", test_byte_matches_fill);
	add_case(s, "chunked_check", test_chunked_check);
	add_case(s, "fill_at_slice", test_fill_at_slice);
	return s;
}

const struct unit_test unit_test = { .suite = pattern_suite };
