/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of common/util/size.c: "-m" size forms and size printing. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_size.h"
#include "unit_main.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

struct size_case {
	const char *text;
	size_t want;
};

/* A rejected form: the reason must name the problem (a word of it). */
struct bad_case {
	const char *text;
	const char *reason;
};

static void check_one(const char *text, size_t want)
{
	const char *err = "unset";
	size_t got = 0;
	int rc;

	rc = gdrb_size_parse(text, &got, &err);
	ck_assert_msg(rc == 0, "'%s' rejected: %s", text, err ? err : "(null)");
	ck_assert_msg(err == NULL, "'%s' accepted but err set to '%s'", text, err);
	ck_assert_msg(got == want, "'%s' parsed as %zu, want %zu", text, got, want);
}

static void check_set(const char *text, const size_t *want, size_t n)
{
	struct gdrb_sizes s;
	const char *err = "unset";
	size_t i;

	ck_assert_msg(gdrb_sizes_parse(text, &s, &err) == 0, "'%s' rejected: %s", text,
		      err ? err : "(null)");
	ck_assert_msg(err == NULL, "'%s' accepted but err set", text);
	ck_assert_msg(s.n == n, "'%s' gave %zu sizes, want %zu", text, s.n, n);
	for (i = 0; i < n; i++)
		ck_assert_msg(s.v[i] == want[i], "'%s' size %zu is %zu, want %zu", text, i,
			      s.v[i], want[i]);
}

static void check_bad_set(const struct bad_case *c)
{
	struct gdrb_sizes s;
	const char *err = NULL;

	ck_assert_msg(gdrb_sizes_parse(c->text, &s, &err) == -1, "'%s' accepted", c->text);
	ck_assert_msg(err != NULL && *err, "'%s' rejected without a reason", c->text);
	ck_assert_msg(strstr(err, c->reason) != NULL, "'%s' rejected with '%s', want '%s'",
		      c->text, err, c->reason);
}

START_TEST(test_plain_numbers)
{
	static const struct size_case cases[] = {
		{ "1", 1 },       { "8", 8 },           { "4096", 4096 },
		{ "1000000", 1000000 },                 { "007", 7 },
		{ "8B", 8 },      { "8b", 8 },          { "1536b", 1536 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_one(cases[i].text, cases[i].want);
}
END_TEST

START_TEST(test_suffixes)
{
	static const struct size_case cases[] = {
		{ "1K", KiB },        { "1k", KiB },        { "4KiB", 4 * KiB },
		{ "4kib", 4 * KiB },  { "4KIB", 4 * KiB },  { "1M", MiB },
		{ "1m", MiB },        { "2MiB", 2 * MiB },  { "2mib", 2 * MiB },
		{ "1G", GiB },        { "1g", GiB },        { "3GiB", 3 * GiB },
		{ "3gIb", 3 * GiB },  { "1T", GiB * 1024 }, { "1t", GiB * 1024 },
		{ "2TiB", 2 * GiB * 1024 },                 { "2tib", 2 * GiB * 1024 },
		{ "1536K", 1536 * KiB },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_one(cases[i].text, cases[i].want);
}
END_TEST

/* Sizes above 4 GiB must survive: size_t end to end, no int or unsigned. */
START_TEST(test_large_sizes)
{
	if (SIZE_MAX <= UINT32_MAX) {
		const char *err = NULL;
		size_t v;

		ck_assert_int_eq(gdrb_size_parse("16G", &v, &err), -1);
		return;
	}
	check_one("16G", (size_t)17179869184ull);
	check_one("16GiB", (size_t)17179869184ull);
	check_one("4294967297", (size_t)4294967297ull);
	check_one("5G", (size_t)5 << 30);
	check_one("128T", (size_t)1 << 47);
	check_one("131072G", (size_t)1 << 47);
	check_one("140737488355328", (size_t)1 << 47);
}
END_TEST

/*
 * Sizes the platform cannot allocate are refused when parsed, with the
 * largest accepted: near SIZE_MAX the page rounding of a buffer wrapped to 0.
 */
START_TEST(test_size_limit)
{
	static const char *const too_large[] = {
		"18446744073709551615",      /* SIZE_MAX */
		"18446744073709547520",      /* SIZE_MAX - 4095 */
		"18446744073709551614",
		"9223372036854775808",       /* 2^63 */
		"140737488355329",           /* the limit + 1 */
		"16777215T",                 /* fits 64 bits, too large once multiplied */
		"140737488355328K",          /* the limit, multiplied */
		"137438953472M",
		"134217728G",
		"129T",
	};
	size_t i, v;

	if (SIZE_MAX <= UINT32_MAX)
		return;
	ck_assert_uint_eq(GDRB_SIZE_LIMIT, (size_t)1 << 47);
	for (i = 0; i < sizeof(too_large) / sizeof(too_large[0]); i++) {
		const char *err = NULL;

		v = 12345;
		ck_assert_msg(gdrb_size_parse(too_large[i], &v, &err) == -1, "'%s' accepted as %zu",
			      too_large[i], v);
		ck_assert_msg(err && strstr(err, "largest accepted is 128TiB"),
			      "'%s' rejected with '%s'", too_large[i], err ? err : "(null)");
		ck_assert_uint_eq(v, 12345);
	}
}
END_TEST

/* The checked arithmetic the buffers are sized with, at its edges. */
START_TEST(test_checked_arithmetic)
{
	size_t r = 7;

	ck_assert(gdrb_size_mul(SIZE_MAX / 2, 2, &r) && r == SIZE_MAX - 1);
	r = 7;
	ck_assert(!gdrb_size_mul(SIZE_MAX / 2 + 1, 2, &r) && r == 7);
	ck_assert(!gdrb_size_mul(SIZE_MAX, 1u << 16, &r) && r == 7);
	ck_assert(gdrb_size_mul(0, SIZE_MAX, &r) && r == 0);
	ck_assert(!gdrb_size_add(SIZE_MAX, 1, &r) && r == 0);
	ck_assert(gdrb_size_add(SIZE_MAX - 1, 1, &r) && r == SIZE_MAX);
	/* Page rounding: SIZE_MAX - 4095 is a page multiple, anything above wraps. */
	ck_assert(gdrb_size_round_up(SIZE_MAX - 4095, 4096, &r) && r == SIZE_MAX - 4095);
	r = 7;
	ck_assert(!gdrb_size_round_up(SIZE_MAX - 4094, 4096, &r) && r == 7);
	ck_assert(!gdrb_size_round_up(SIZE_MAX, 4096, &r) && r == 7);
	ck_assert(gdrb_size_round_up(1, 4096, &r) && r == 4096);
	ck_assert(gdrb_size_round_up(4097, 4096, &r) && r == 8192);
	ck_assert(gdrb_size_round_up((size_t)1 << 63, 4096, &r) && r == (size_t)1 << 63);
}
END_TEST

START_TEST(test_bad_single)
{
	static const struct bad_case cases[] = {
		{ "0", "at least 1" },
		{ "0K", "at least 1" },
		{ "", "empty" },
		{ "-1", "decimal number" },
		{ "+1", "decimal number" },
		{ " 8", "decimal number" },
		{ "K", "decimal number" },
		{ "8 ", "blanks" },
		{ "1Q", "suffix" },
		{ "1.5K", "fraction" },
		{ "1.5", "fraction" },
		{ "0x10", "hexadecimal" },
		{ "0X10", "hexadecimal" },
		{ "1e6", "exponent" },
		{ "1E3", "exponent" },
		{ "1KK", "suffix" },
		{ "1Ki", "suffix" },
		{ "99999999999999999999", "too large" },
		{ "18446744073709551616", "too large" },
		{ "16777216T", "too large" },
		{ "17179869184G", "too large" },
		{ "18446744073709551615", "too large" },
	};
	size_t i, v;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *err = NULL;

		v = 12345;
		ck_assert_msg(gdrb_size_parse(cases[i].text, &v, &err) == -1,
			      "'%s' accepted as %zu", cases[i].text, v);
		ck_assert_msg(err != NULL && strstr(err, cases[i].reason),
			      "'%s' rejected with '%s', want '%s'", cases[i].text,
			      err ? err : "(null)", cases[i].reason);
		ck_assert_msg(v == 12345, "'%s' rejected but *out written", cases[i].text);
	}
}
END_TEST

START_TEST(test_range_powers_of_two)
{
	struct gdrb_sizes s;
	const char *err;
	size_t i;

	ck_assert_int_eq(gdrb_sizes_parse("8:1G", &s, &err), 0);
	/* 2^3 .. 2^30 */
	ck_assert_uint_eq(s.n, 28);
	for (i = 0; i < s.n; i++)
		ck_assert_uint_eq(s.v[i], (size_t)8 << i);
	ck_assert_uint_eq(s.v[s.n - 1], GiB);
	ck_assert_uint_eq(gdrb_sizes_max(&s), GiB);

	{
		static const size_t want[] = { KiB, 2 * KiB, 4 * KiB };

		check_set("1K:4KiB", want, 3);
	}
}
END_TEST

START_TEST(test_range_appends_max)
{
	static const size_t want[] = { 3, 6, 12, 24, 48, 96, 100 };
	static const size_t want_odd[] = { 1000, 2000, 4000, 8000, 10000 };

	check_set("3:100", want, sizeof(want) / sizeof(want[0]));
	check_set("1000:10000", want_odd, sizeof(want_odd) / sizeof(want_odd[0]));
}
END_TEST

START_TEST(test_range_single)
{
	static const size_t one[] = { 1 };
	static const size_t four_k[] = { 4 * KiB };

	check_set("1:1", one, 1);
	check_set("4K:4096", four_k, 1);
}
END_TEST

/* A range up to SIZE_MAX must stop doubling before it wraps. */
START_TEST(test_range_large)
{
	struct gdrb_sizes s;
	const char *err;
	size_t i;

	if (SIZE_MAX <= UINT32_MAX)
		return;
	{
		static const size_t want[] = { (size_t)4 << 30, (size_t)8 << 30,
					       (size_t)16 << 30 };

		check_set("4G:16G", want, 3);
	}
	ck_assert_int_eq(gdrb_sizes_parse("1:128T", &s, &err), 0);
	ck_assert_uint_eq(s.n, 48);
	for (i = 0; i < 48; i++)
		ck_assert_uint_eq(s.v[i], (size_t)1 << i);
	ck_assert_int_eq(gdrb_sizes_parse("1:18446744073709551615", &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "largest accepted"));
}
END_TEST

START_TEST(test_list)
{
	static const size_t want[] = { 8, 4 * KiB, MiB };
	static const size_t unsorted[] = { MiB, 8, 64 };
	static const size_t single[] = { 64 };
	struct gdrb_sizes s;
	const char *err;

	check_set("8,4K,1M", want, 3);
	/* A list keeps the order it was given in. */
	check_set("1M,8,64", unsorted, 3);
	check_set("64", single, 1);
	ck_assert_int_eq(gdrb_sizes_parse("1M,8,64", &s, &err), 0);
	ck_assert_uint_eq(gdrb_sizes_max(&s), MiB);
	if (SIZE_MAX > UINT32_MAX) {
		static const size_t big[] = { 8, (size_t)17179869184ull };

		check_set("8,16G", big, 2);
	}
}
END_TEST

START_TEST(test_list_capacity)
{
	char text[GDRB_SIZES_MAX * 4 + 8];
	struct gdrb_sizes s;
	const char *err = NULL;
	size_t i, len = 0;

	for (i = 0; i < GDRB_SIZES_MAX; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%zu", i ? "," : "",
					i + 1);
	ck_assert_int_eq(gdrb_sizes_parse(text, &s, &err), 0);
	ck_assert_uint_eq(s.n, GDRB_SIZES_MAX);
	ck_assert_uint_eq(s.v[GDRB_SIZES_MAX - 1], GDRB_SIZES_MAX);

	snprintf(text + len, sizeof(text) - len, ",1");
	ck_assert_int_eq(gdrb_sizes_parse(text, &s, &err), -1);
	ck_assert_ptr_nonnull(err);
	ck_assert_ptr_nonnull(strstr(err, "too many sizes: at most 128"));
}
END_TEST

START_TEST(test_bad_sets)
{
	static const struct bad_case cases[] = {
		{ "0", "at least 1" },
		{ "", "empty" },
		{ "8,,16", "empty" },
		{ "8,", "empty" },
		{ ",8", "empty" },
		{ "8,0", "at least 1" },
		{ "-1", "decimal number" },
		{ "1Q", "suffix" },
		{ "8,1Q", "suffix" },
		{ "99999999999999999999", "too large" },
		{ "16777216T", "too large" },
		{ "64:8", "larger" },
		{ "8:4:2", "one ':'" },
		{ "8:", "empty" },
		{ ":8", "empty" },
		{ "0:8", "at least 1" },
		{ "8:1Q", "suffix" },
		{ "8,16:32", "no step and no list" },
		{ "8:1G,4", "no step and no list" },
		{ "8:1G,2G", "no step and no list" },
		{ "8,1.5K", "fraction" },
		{ "8,0x10", "hexadecimal" },
		{ "8:99999999999999999999", "too large" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_bad_set(&cases[i]);
}
END_TEST

START_TEST(test_sizes_max)
{
	struct gdrb_sizes s;

	s.n = 0;
	ck_assert_uint_eq(gdrb_sizes_max(&s), 0);
	s.n = 3;
	s.v[0] = 5;
	s.v[1] = 9;
	s.v[2] = 7;
	ck_assert_uint_eq(gdrb_sizes_max(&s), 9);
}
END_TEST

START_TEST(test_format)
{
	static const struct {
		size_t size;
		const char *want;
	} cases[] = {
		{ 0, "0B" },
		{ 1, "1B" },
		{ 8, "8B" },
		{ 1023, "1023B" },
		{ 1024, "1KiB" },
		{ 1536, "1536B" },
		{ 4096, "4KiB" },
		{ 1536 * KiB, "1536KiB" },
		{ MiB, "1MiB" },
		{ GiB, "1GiB" },
		{ GiB + 1, "1073741825B" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_ptr_eq(gdrb_size_format(cases[i].size, buf, sizeof(buf)), buf);
		ck_assert_str_eq(buf, cases[i].want);
	}
	if (SIZE_MAX > UINT32_MAX) {
		ck_assert_str_eq(gdrb_size_format((size_t)3 << 30, buf, sizeof(buf)), "3GiB");
		ck_assert_str_eq(gdrb_size_format((size_t)16 << 30, buf, sizeof(buf)), "16GiB");
		ck_assert_str_eq(gdrb_size_format((size_t)1 << 40, buf, sizeof(buf)), "1TiB");
		/* TiB is the largest unit. */
		ck_assert_str_eq(gdrb_size_format((size_t)1 << 50, buf, sizeof(buf)), "1024TiB");
	}
	/* A short buffer is truncated, never overrun. */
	memset(buf, 'x', sizeof(buf));
	ck_assert_str_eq(gdrb_size_format(4096, buf, 3), "4K");
	ck_assert_int_eq(buf[3], 'x');
}
END_TEST

/* What gdrb_size_format prints, gdrb_size_parse reads back. */
START_TEST(test_format_parse_roundtrip)
{
	struct gdrb_sizes s;
	const char *err;
	char buf[32];
	size_t i, v;

	ck_assert_int_eq(gdrb_sizes_parse("3:1G", &s, &err), 0);
	for (i = 0; i < s.n; i++) {
		gdrb_size_format(s.v[i], buf, sizeof(buf));
		ck_assert_msg(gdrb_size_parse(buf, &v, &err) == 0, "'%s' rejected: %s", buf, err);
		ck_assert_uint_eq(v, s.v[i]);
	}
}
END_TEST

/* The window in force at a size: -W, the cap and that size only. */
START_TEST(test_window_at)
{
	const size_t mib = (size_t)1 << 20, gib = (size_t)1 << 30;

	/* The default cap: 8:1G keeps the windows it always had (64 up to 16 MiB, then halving). */
	ck_assert_uint_eq(gdrb_window_at(8, 64, gib, true), 64);
	ck_assert_uint_eq(gdrb_window_at(4 * mib, 64, gib, true), 64);
	ck_assert_uint_eq(gdrb_window_at(16 * mib, 64, gib, true), 64);
	ck_assert_uint_eq(gdrb_window_at(32 * mib, 64, gib, true), 32);
	ck_assert_uint_eq(gdrb_window_at(512 * mib, 64, gib, true), 2);
	ck_assert_uint_eq(gdrb_window_at(gib, 64, gib, true), 1);
	/* Larger than the cap: still one message. */
	ck_assert_uint_eq(gdrb_window_at(gib + 1, 64, gib, true), 1);
	ck_assert_uint_eq(gdrb_window_at(SIZE_MAX, 64, gib, true), 1);
	ck_assert_uint_eq(gdrb_window_at(SIZE_MAX, 1u << 16, SIZE_MAX, true), 1);
	/* Exactly at the edge, one byte either side; a cap that is not a multiple. */
	ck_assert_uint_eq(gdrb_window_at(mib, 64, 64 * mib, true), 64);
	ck_assert_uint_eq(gdrb_window_at(mib, 64, 64 * mib - 1, true), 63);
	ck_assert_uint_eq(gdrb_window_at(mib + 1, 64, 64 * mib, true), 63);
	ck_assert_uint_eq(gdrb_window_at(3 * mib, 64, 32 * mib, true), 10);
	/* A cap of 1 byte; a cap that holds any window. */
	ck_assert_uint_eq(gdrb_window_at(1, 64, 1, true), 1);
	ck_assert_uint_eq(gdrb_window_at(1, 1u << 16, SIZE_MAX, true), 1u << 16);
	/* One buffer (--buffers single), size 0, a window of 1 or 0: not limited. */
	ck_assert_uint_eq(gdrb_window_at(gib, 64, mib, false), 64);
	ck_assert_uint_eq(gdrb_window_at(0, 64, mib, true), 64);
	ck_assert_uint_eq(gdrb_window_at(gib, 1, mib, true), 1);
	ck_assert_uint_eq(gdrb_window_at(gib, 0, mib, true), 0);
}
END_TEST

/* What each buffer holds: the largest window x size over the sizes, or the largest size. */
START_TEST(test_buf_bytes)
{
	const size_t mib = (size_t)1 << 20, gib = (size_t)1 << 30;
	struct gdrb_sizes s;
	const char *err;

	/* The defaults: 8:1G, window 64, cap 1 GiB. */
	ck_assert_int_eq(gdrb_sizes_parse("8:1G", &s, &err), 0);
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 64, gib, true), gib);
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 64, 32 * mib, true), gib);
	/* 4 MiB alone or in a list: a window of 64 of it. */
	ck_assert_int_eq(gdrb_sizes_parse("4M", &s, &err), 0);
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 64, gib, true), 256 * mib);
	ck_assert_int_eq(gdrb_sizes_parse("8:4M", &s, &err), 0);
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 64, gib, true), 256 * mib);
	/* Not the largest size: 10 x 3 MiB beats 1 x 20 MiB under a 32 MiB cap. */
	ck_assert_int_eq(gdrb_sizes_parse("3M,20M", &s, &err), 0);
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 64, 32 * mib, true), 30 * mib);
	/* One buffer, latency: the largest message. */
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 64, 32 * mib, false), 20 * mib);
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 1, 32 * mib, true), 20 * mib);
	/* No wrap: the window x size product is never past the cap. */
	s.n = 2;
	s.v[0] = SIZE_MAX;
	s.v[1] = SIZE_MAX / 2 + 1;
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 1u << 16, gib, true), SIZE_MAX);
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 1u << 16, SIZE_MAX, true), SIZE_MAX);
	s.n = 1;
	s.v[0] = SIZE_MAX / 2 + 1;
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 1u << 16, SIZE_MAX, true), SIZE_MAX / 2 + 1);
	s.v[0] = 3;
	ck_assert_uint_eq(gdrb_buf_bytes(&s, 1u << 16, SIZE_MAX, true), 3u << 16);
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static Suite *size_suite(void)
{
	Suite *s = suite_create("size");

	add_case(s, "plain_numbers", test_plain_numbers);
	add_case(s, "size_limit", test_size_limit);
	add_case(s, "checked_arithmetic", test_checked_arithmetic);
	add_case(s, "suffixes", test_suffixes);
	add_case(s, "large_sizes", test_large_sizes);
	add_case(s, "bad_single", test_bad_single);
	add_case(s, "range_powers_of_two", test_range_powers_of_two);
	add_case(s, "range_appends_max", test_range_appends_max);
	add_case(s, "range_single", test_range_single);
	add_case(s, "range_large", test_range_large);
	add_case(s, "list", test_list);
	add_case(s, "list_capacity", test_list_capacity);
	add_case(s, "bad_sets", test_bad_sets);
	add_case(s, "sizes_max", test_sizes_max);
	add_case(s, "format", test_format);
	add_case(s, "format_parse_roundtrip", test_format_parse_roundtrip);
	add_case(s, "window_at", test_window_at);
	add_case(s, "buf_bytes", test_buf_bytes);
	return s;
}

const struct unit_test unit_test = { .suite = size_suite };
