/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of common/util/stats.c: summaries and percentiles of known vectors. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_stats.h"
#include "unit_main.h"

#define TOL 1e-9

/* 1..100 in an order that is neither sorted nor reversed. */
static void fill_one_to_hundred_shuffled(double *v)
{
	size_t i;

	/* 37 is coprime with 100, so (i * 37 + 11) mod 100 visits every residue once. */
	for (i = 0; i < 100; i++)
		v[i] = (double)((i * 37 + 11) % 100 + 1);
}

static void check_one_to_hundred(const struct gdrb_stats *st)
{
	ck_assert_uint_eq(st->n, 100);
	ck_assert_double_eq_tol(st->min, 1.0, TOL);
	ck_assert_double_eq_tol(st->max, 100.0, TOL);
	ck_assert_double_eq_tol(st->avg, 50.5, TOL);
	ck_assert_double_eq_tol(st->p50, 50.5, TOL);
	ck_assert_double_eq_tol(st->p99, 99.01, TOL);
	ck_assert_double_eq_tol(st->p999, 99.901, TOL);
	ck_assert_double_eq_tol(st->stdev, 29.011491975882016, TOL);
}

START_TEST(test_known_vector)
{
	struct gdrb_stats st;
	double v[100];
	size_t i;

	for (i = 0; i < 100; i++)
		v[i] = (double)(i + 1);
	gdrb_stats_compute(v, 100, &st);
	check_one_to_hundred(&st);
}
END_TEST

/* Sample (n - 1) stdev, not population stdev: sqrt(32 / 7), not 2. */
START_TEST(test_sample_stdev)
{
	double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	double pair[] = { 3, 1 };
	struct gdrb_stats st;

	gdrb_stats_compute(v, 8, &st);
	ck_assert_double_eq_tol(st.avg, 5.0, TOL);
	ck_assert_double_eq_tol(st.stdev, 2.138089935299395, TOL);

	gdrb_stats_compute(pair, 2, &st);
	ck_assert_double_eq_tol(st.p50, 2.0, TOL);
	ck_assert_double_eq_tol(st.stdev, sqrt(2.0), TOL);
	ck_assert_double_eq_tol(st.p99, 2.98, TOL);
}
END_TEST

/* Samples all equal to X: every figure is X, the deviation 0. */
static void check_all_equal(double *v, size_t n, double x)
{
	struct gdrb_stats st;

	gdrb_stats_compute(v, n, &st);
	ck_assert_uint_eq(st.n, n);
	ck_assert_double_eq_tol(st.min, x, TOL);
	ck_assert_double_eq_tol(st.p50, x, TOL);
	ck_assert_double_eq_tol(st.avg, x, TOL);
	ck_assert_double_eq_tol(st.p99, x, TOL);
	ck_assert_double_eq_tol(st.p999, x, TOL);
	ck_assert_double_eq_tol(st.max, x, TOL);
	ck_assert_double_eq_tol(st.stdev, 0.0, TOL);
}

START_TEST(test_single_sample)
{
	double v[] = { 42.5 };

	check_all_equal(v, 1, 42.5);
}
END_TEST

START_TEST(test_constant_samples)
{
	double v[] = { 7.25, 7.25, 7.25, 7.25, 7.25 };

	check_all_equal(v, 5, 7.25);
}
END_TEST

START_TEST(test_no_samples)
{
	struct gdrb_stats st;

	/* Whatever was in out before must not survive. */
	memset(&st, 0xa5, sizeof(st));
	gdrb_stats_compute(NULL, 0, &st);
	ck_assert_uint_eq(st.n, 0);
	ck_assert_double_eq(st.min, 0.0);
	ck_assert_double_eq(st.p50, 0.0);
	ck_assert_double_eq(st.avg, 0.0);
	ck_assert_double_eq(st.p99, 0.0);
	ck_assert_double_eq(st.p999, 0.0);
	ck_assert_double_eq(st.max, 0.0);
	ck_assert_double_eq(st.stdev, 0.0);
}
END_TEST

START_TEST(test_unsorted_input)
{
	struct gdrb_stats st;
	double v[100];
	size_t i;

	fill_one_to_hundred_shuffled(v);
	ck_assert_double_ne(v[0], 1.0);
	gdrb_stats_compute(v, 100, &st);
	check_one_to_hundred(&st);
	/* Documented: the samples are sorted in place. */
	for (i = 0; i < 100; i++)
		ck_assert_double_eq(v[i], (double)(i + 1));

	for (i = 0; i < 100; i++)
		v[i] = (double)(100 - i);
	gdrb_stats_compute(v, 100, &st);
	check_one_to_hundred(&st);
}
END_TEST

START_TEST(test_negative_and_fractional)
{
	double v[] = { 0.5, -2.0, 1.5, -0.5 };
	struct gdrb_stats st;

	gdrb_stats_compute(v, 4, &st);
	ck_assert_double_eq_tol(st.min, -2.0, TOL);
	ck_assert_double_eq_tol(st.max, 1.5, TOL);
	ck_assert_double_eq_tol(st.avg, -0.125, TOL);
	/* sorted -2, -0.5, 0.5, 1.5: rank 1.5 */
	ck_assert_double_eq_tol(st.p50, 0.0, TOL);
}
END_TEST

START_TEST(test_percentile_interpolation)
{
	static const double v[] = { 10, 20, 30, 40, 50 };

	ck_assert_double_eq_tol(gdrb_percentile_sorted(v, 5, 25.0), 20.0, TOL);
	ck_assert_double_eq_tol(gdrb_percentile_sorted(v, 5, 10.0), 14.0, TOL);
	ck_assert_double_eq_tol(gdrb_percentile_sorted(v, 5, 50.0), 30.0, TOL);
	ck_assert_double_eq_tol(gdrb_percentile_sorted(v, 5, 62.5), 35.0, TOL);
	ck_assert_double_eq_tol(gdrb_percentile_sorted(v, 5, 99.0), 49.6, TOL);
}
END_TEST

START_TEST(test_percentile_edges)
{
	static const double v[] = { -3, 1, 4, 15 };
	static const double one[] = { 9.5 };

	ck_assert_double_eq(gdrb_percentile_sorted(v, 4, 0.0), -3.0);
	ck_assert_double_eq(gdrb_percentile_sorted(v, 4, 100.0), 15.0);
	/* Out-of-range p clamps to the ends. */
	ck_assert_double_eq(gdrb_percentile_sorted(v, 4, -5.0), -3.0);
	ck_assert_double_eq(gdrb_percentile_sorted(v, 4, 150.0), 15.0);
	ck_assert_double_eq_tol(gdrb_percentile_sorted(v, 4, 99.999), 15.0, 1e-3);
	ck_assert_double_eq(gdrb_percentile_sorted(one, 1, 0.0), 9.5);
	ck_assert_double_eq(gdrb_percentile_sorted(one, 1, 50.0), 9.5);
	ck_assert_double_eq(gdrb_percentile_sorted(one, 1, 100.0), 9.5);
	ck_assert_double_eq(gdrb_percentile_sorted(NULL, 0, 50.0), 0.0);
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");

	add_case(s, "known_vector", test_known_vector);
	add_case(s, "sample_stdev", test_sample_stdev);
	add_case(s, "single_sample", test_single_sample);
	add_case(s, "constant_samples", test_constant_samples);
	add_case(s, "no_samples", test_no_samples);
	add_case(s, "unsorted_input", test_unsorted_input);
	add_case(s, "negative_and_fractional", test_negative_and_fractional);
	add_case(s, "percentile_interpolation", test_percentile_interpolation);
	add_case(s, "percentile_edges", test_percentile_edges);
	return s;
}

const struct unit_test unit_test = { .suite = stats_suite };
