/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of common/pairs.c's schedule: the --rounds shifts and the ping-pong phases. */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_pairs.h"
#include "unit_main.h"

#define MAX_M 64

START_TEST(test_all_shifts)
{
	unsigned out[MAX_M], m, i;

	for (m = 2; m <= MAX_M; m++) {
		/* K = 0 (no --rounds) and K = m - 1 both give every shift in order. */
		ck_assert_int_eq(gdrb_pairs_shifts(m, 0, 1, out), (int)m - 1);
		for (i = 0; i < m - 1; i++)
			ck_assert_uint_eq(out[i], i + 1);
		ck_assert_int_eq(gdrb_pairs_shifts(m, m - 1, 99, out), (int)m - 1);
		for (i = 0; i < m - 1; i++)
			ck_assert_uint_eq(out[i], i + 1);
	}
	ck_assert_int_eq(gdrb_pairs_shifts(1, 0, 1, out), GDRB_ERR_USAGE);
	ck_assert_int_eq(gdrb_pairs_shifts(4, 4, 1, out), GDRB_ERR_USAGE);
}
END_TEST

START_TEST(test_sampled_shifts)
{
	unsigned out[MAX_M], again[MAX_M], other[MAX_M], k, i, m = 40;
	bool differs = false;

	for (k = 1; k < m - 1; k++) {
		ck_assert_int_eq(gdrb_pairs_shifts(m, k, 7, out), (int)k);
		for (i = 0; i < k; i++) {
			ck_assert(out[i] >= 1 && out[i] <= m - 1);
			if (i)  /* sorted, so distinct */
				ck_assert_uint_lt(out[i - 1], out[i]);
		}
		ck_assert_int_eq(gdrb_pairs_shifts(m, k, 7, again), (int)k);
		ck_assert_mem_eq(out, again, k * sizeof(*out));
		gdrb_pairs_shifts(m, k, 8, other);
		differs |= memcmp(out, other, k * sizeof(*out)) != 0;
	}
	ck_assert_msg(differs, "seeds 7 and 8 chose the same shifts at every K");
}
END_TEST

START_TEST(test_phases)
{
	unsigned phase[MAX_M], m, k, i, j, n;

	for (m = 2; m <= MAX_M; m++)
		for (k = 1; k < m; k++) {
			n = gdrb_pairs_phases(m, k, phase);
			ck_assert_uint_ge(n, 1);
			ck_assert_uint_le(n, 3);
			/* No rank in two pairs (i, i + k) of one phase. */
			for (i = 0; i < m; i++)
				for (j = i + 1; j < m; j++) {
					unsigned a = i, b = (i + k) % m, c = j, d = (j + k) % m;

					/* ck_abort_msg only on a failure: every ck_assert records its line
					 * (Check's mark point), seconds over these 2 million pairs. */
					if (phase[i] == phase[j] && (a == c || a == d || b == c || b == d))
						ck_abort_msg("m %u k %u: pairs %u and %u share a rank in phase %u",
							     m, k, i, j, phase[i]);
				}
			for (i = 0; i < m; i++)
				ck_assert_uint_lt(phase[i], n);
		}
}
END_TEST

static Suite *pairs_suite(void)
{
	/* The schedules of every m up to 64: seconds on a loaded machine, past Check's 4 s default. */
	const struct unit_case cases[] = {
		{ .test = test_all_shifts },
		{ .test = test_sampled_shifts },
		{ .test = test_phases },
	};

	return UNIT_SUITE("pairs", "schedule", 120, cases);
}

const struct unit_test unit_test = { .suite = pairs_suite };
