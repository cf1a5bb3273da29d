/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the figure arithmetic: common/core/figures.c's pure functions, and the
 * driver's summary of one size (gdrb_drv_summarise) on synthetic samples from fake
 * benchmarks. Every expected value is worked out by hand in the comment beside it, so
 * a wrong factor (a round trip not halved, a window not divided, both directions not
 * added, pairs averaged instead of summed, a wrong bus factor) fails here.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver_int.h"
#include "gdrb_figures.h"

#define TOL 1e-9

START_TEST(test_sample_scale)
{
	/* A ping-pong sample is a round trip: one message is half of it. */
	ck_assert_double_eq_tol(gdrb_fig_sample_scale(GDRB_TRAFFIC_PINGPONG, GDRB_METRIC_LAT, 1), 0.5, TOL);
	/* A bandwidth sample is a window: one message is its share. */
	ck_assert_double_eq_tol(gdrb_fig_sample_scale(GDRB_TRAFFIC_UNIDIR, GDRB_METRIC_BW, 64), 1.0 / 64, TOL);
	ck_assert_double_eq_tol(gdrb_fig_sample_scale(GDRB_TRAFFIC_BIDIR, GDRB_METRIC_BW, 8), 1.0 / 8, TOL);
	/* A collective's sample is one call; a local latency sample one operation. */
	ck_assert_double_eq_tol(gdrb_fig_sample_scale(GDRB_TRAFFIC_COLLECTIVE, GDRB_METRIC_LAT, 64), 1.0, TOL);
	ck_assert_double_eq_tol(gdrb_fig_sample_scale(GDRB_TRAFFIC_LOCAL, GDRB_METRIC_LAT, 1), 1.0, TOL);
}
END_TEST

START_TEST(test_bytes_per_iter)
{
	/* One way: window x size. */
	ck_assert_double_eq_tol(gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_UNIDIR, 4096, 64), 262144.0, TOL);
	/* Both ways at once: twice that. */
	ck_assert_double_eq_tol(gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_BIDIR, 4096, 64), 524288.0, TOL);
	/* A round trip carries the message there and back. */
	ck_assert_double_eq_tol(gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_PINGPONG, 8, 1), 16.0, TOL);
	/* A collective moves its vector once per call, whatever the window. */
	ck_assert_double_eq_tol(gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_COLLECTIVE, 1 << 20, 64), 1048576.0, TOL);
	ck_assert_double_eq_tol(gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_LOCAL, 1 << 20, 1), 1048576.0, TOL);
	/* Sizes past 4 GiB stay exact. */
	ck_assert_double_eq_tol(gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_UNIDIR, (size_t)5 << 30, 2),
				10737418240.0, TOL);
}
END_TEST

START_TEST(test_bw)
{
	/* 1 MB per iteration, 1000 iterations in 1 s: 1e9 B/s = 1 GB/s (not GiB/s). */
	ck_assert_double_eq_tol(gdrb_fig_bw_GBps(1e6, 1000, 1e6), 1.0, TOL);
	/* 64 KiB in 2 us: 32.768 GB/s. */
	ck_assert_double_eq_tol(gdrb_fig_bw_GBps(65536, 1, 2.0), 32.768, TOL);
	ck_assert_double_eq_tol(gdrb_fig_bw_GBps(65536, 10, 0), 0.0, TOL);
}
END_TEST

START_TEST(test_bus_factors)
{
	ck_assert_double_eq_tol(gdrb_bus_allreduce(2), 1.0, TOL);      /* 2(n-1)/n */
	ck_assert_double_eq_tol(gdrb_bus_allreduce(8), 1.75, TOL);
	ck_assert_double_eq_tol(gdrb_bus_spread(2), 0.5, TOL);         /* (n-1)/n */
	ck_assert_double_eq_tol(gdrb_bus_spread(8), 0.875, TOL);
	ck_assert_double_eq_tol(gdrb_bus_one(8), 1.0, TOL);
	ck_assert_double_eq_tol(gdrb_bus_allreduce(1), 0.0, TOL);      /* one rank moves nothing */
}
END_TEST

START_TEST(test_collective_geometry)
{
	/* Three ranks, 10 calls each: means 10, 20, 30 us. */
	const double totals[] = { 100, 200, 300 };
	struct gdrb_fig_coll f;

	gdrb_fig_collective(totals, sizeof(double), 3, 10, 3000, gdrb_bus_allreduce(3), &f);
	ck_assert_double_eq_tol(f.avg_us, 20.0, TOL);   /* mean of the means */
	ck_assert_double_eq_tol(f.min_us, 10.0, TOL);   /* the fastest rank's mean */
	ck_assert_double_eq_tol(f.max_us, 30.0, TOL);   /* the slowest rank's mean */
	ck_assert_double_eq_tol(f.algbw_GBps, 0.15, TOL);       /* 3000 B / 20 us */
	ck_assert_double_eq_tol(f.busbw_GBps, 0.2, TOL);        /* x 2(3-1)/3 */
	/* The barrier moves nothing: no bandwidth at all, not 0. */
	gdrb_fig_collective(totals, sizeof(double), 3, 10, 0, 1.0, &f);
	ck_assert(isnan(f.algbw_GBps) && isnan(f.busbw_GBps));
}
END_TEST

START_TEST(test_coll_size)
{
	/* Blocked: a multiple of 4 ranks x 4 B = 16. */
	ck_assert_uint_eq(gdrb_fig_coll_size(1000, 4, 4, true), 992);
	ck_assert_uint_eq(gdrb_fig_coll_size(8, 4, 4, true), 16);      /* at least one element each */
	/* Not blocked: a multiple of the element only. */
	ck_assert_uint_eq(gdrb_fig_coll_size(1002, 4, 4, false), 1000);
	ck_assert_uint_eq(gdrb_fig_coll_size(2, 8, 4, false), 8);
}
END_TEST

START_TEST(test_quality)
{
	ck_assert_str_eq(gdrb_fig_quality(1000, 1000, 1.0, 5.0), "ok");        /* 5x is not above 5x */
	ck_assert_str_eq(gdrb_fig_quality(1000, 1000, 1.0, 5.01), "noisy");
	ck_assert_str_eq(gdrb_fig_quality(999, 1000, 1.0, 2.0), "few-samples");
	ck_assert_str_eq(gdrb_fig_quality(3, 1000, 1.0, 9.0), "few-samples+noisy");
}
END_TEST

/* ---- the driver's summary on synthetic samples ---- */

static double bus_allreduce(const struct gdrb_ctx *c) { return gdrb_bus_allreduce(c->boot->size); }

/* A fake run: nranks ranks, the first npairs of them initiators (rank i pairs with i + npairs). */
struct fake {
	struct run r;
	struct gdrb_bench bench;
	struct gdrb_boot boot;
	struct rank_result res[8];
	double samples[64];
	struct outcome agg, pairs[4];
};

static void fake_init(struct fake *f, enum gdrb_traffic traffic, enum gdrb_metric metric,
		      int nranks, int npairs, unsigned window)
{
	int i;

	memset(f, 0, sizeof(*f));
	f->bench.name = "fake";
	f->bench.traffic = traffic;
	f->bench.metric = metric;
	f->bench.bus_factor = bus_allreduce;
	f->boot.size = nranks;
	f->r.c.bench = &f->bench;
	f->r.c.boot = &f->boot;
	f->r.c.window = window;
	f->r.c.npairs = npairs;
	f->r.all_results = f->res;
	f->r.all_samples = f->samples;
	for (i = 0; i < nranks; i++) {
		f->res[i].initiator = traffic == GDRB_TRAFFIC_COLLECTIVE || i < (npairs ? npairs : 1);
		f->res[i].pair = npairs ? i % npairs : 0;
	}
}

/* Rank `rank`'s n samples and their total. */
static void fake_samples(struct fake *f, int rank, uint64_t n, const double *v, double bytes_per_iter)
{
	uint64_t i;

	f->res[rank].total_us = 0;
	for (i = 0; i < n; i++) {
		f->samples[(size_t)rank * n + i] = v[i];
		f->res[rank].total_us += v[i];
	}
	f->res[rank].bytes_per_iter = bytes_per_iter;
}

START_TEST(test_summary_pingpong)
{
	struct fake f;
	/* Round trips of 10, 20, 30, 40 us: one-way times 5, 10, 15, 20. */
	const double rtt[] = { 10, 20, 30, 40 }, other[] = { 1, 1, 1, 1 };

	fake_init(&f, GDRB_TRAFFIC_PINGPONG, GDRB_METRIC_LAT, 2, 1, 1);
	fake_samples(&f, 0, 4, rtt, gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_PINGPONG, 8, 1));
	fake_samples(&f, 1, 4, other, gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_PINGPONG, 8, 1));
	gdrb_drv_summarise(&f.r, 8, 4, 4, &f.agg, f.pairs);
	ck_assert_str_eq(f.agg.status, "ok");
	ck_assert_uint_eq(f.agg.iters, 4);
	ck_assert_double_eq_tol(f.agg.lat.min, 5.0, TOL);       /* half the shortest round trip */
	ck_assert_double_eq_tol(f.agg.lat.avg, 12.5, TOL);
	ck_assert_double_eq_tol(f.agg.lat.p50, 12.5, TOL);      /* between 10 and 15 */
	ck_assert_double_eq_tol(f.agg.lat.max, 20.0, TOL);
	/* 8 B each way per 25 us round trip on average: 8 B / 12.5 us = 0.00064 GB/s. The
	 * responder's own samples (1 us) count nowhere. */
	ck_assert_double_eq_tol(f.agg.bw_GBps, 0.00064, TOL);
	ck_assert(isnan(f.agg.algbw_GBps));
	ck_assert_str_eq(f.agg.quality, "ok");
}
END_TEST

START_TEST(test_summary_pairs_add_up)
{
	struct fake f;
	/* Two pairs (0-2, 1-3) of one-way windows of 64 x 1 KiB: 65536 B per iteration. */
	const double w0[] = { 64, 128 }, w1[] = { 128, 128 }, resp[] = { 0, 0 };
	double bpi = gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_UNIDIR, 1024, 64);

	fake_init(&f, GDRB_TRAFFIC_UNIDIR, GDRB_METRIC_BW, 4, 2, 64);
	fake_samples(&f, 0, 2, w0, bpi);
	fake_samples(&f, 1, 2, w1, bpi);
	fake_samples(&f, 2, 2, resp, bpi);
	fake_samples(&f, 3, 2, resp, bpi);
	gdrb_drv_summarise(&f.r, 1024, 2, 2, &f.agg, f.pairs);
	/* Pair 0: 2 x 65536 B in 192 us; pair 1: in 256 us. */
	ck_assert_double_eq_tol(f.pairs[0].bw_GBps, 131072.0 / 192 * 1e-3, TOL);
	ck_assert_double_eq_tol(f.pairs[1].bw_GBps, 131072.0 / 256 * 1e-3, TOL);
	/* The pairs run at once: the all row adds them up. */
	ck_assert_double_eq_tol(f.agg.bw_GBps, 131072.0 / 192 * 1e-3 + 131072.0 / 256 * 1e-3, TOL);
	/* Per message, a window's share: pair 0 took 1 and 2 us, pair 1 2 and 2 us. */
	ck_assert_double_eq_tol(f.pairs[0].lat.avg, 1.5, TOL);
	ck_assert_double_eq_tol(f.pairs[1].lat.avg, 2.0, TOL);
	ck_assert_double_eq_tol(f.agg.lat.avg, 1.75, TOL);      /* the initiators' samples pooled */
	ck_assert_double_eq_tol(f.agg.lat.min, 1.0, TOL);
}
END_TEST

START_TEST(test_summary_bidir_doubles)
{
	struct fake f;
	/* One pair, both ways: windows of 8 x 1 MiB in 1000 us each. */
	const double w[] = { 1000, 1000, 1000 };
	double bpi = gdrb_fig_bytes_per_iter(GDRB_TRAFFIC_BIDIR, 1 << 20, 8);

	fake_init(&f, GDRB_TRAFFIC_BIDIR, GDRB_METRIC_BW, 2, 1, 8);
	fake_samples(&f, 0, 3, w, bpi);
	fake_samples(&f, 1, 3, w, bpi);
	gdrb_drv_summarise(&f.r, 1 << 20, 3, 3, &f.agg, f.pairs);
	/* 2 x 8 x 1048576 B per 1000 us: 16.777216 GB/s, both directions added. */
	ck_assert_double_eq_tol(f.agg.bw_GBps, 16.777216, TOL);
	ck_assert_double_eq_tol(f.agg.lat.p50, 125.0, TOL);     /* 1000 us / 8 messages */
}
END_TEST

START_TEST(test_summary_collective)
{
	struct fake f;
	/* Four ranks of an allreduce of 4096 B, 2 calls each: means 10, 10, 20, 40 us. */
	const double a[] = { 10, 10 }, b[] = { 5, 15 }, c[] = { 20, 20 }, d[] = { 30, 50 };

	fake_init(&f, GDRB_TRAFFIC_COLLECTIVE, GDRB_METRIC_LAT, 4, 0, 1);
	fake_samples(&f, 0, 2, a, 4096);
	fake_samples(&f, 1, 2, b, 4096);
	fake_samples(&f, 2, 2, c, 4096);
	fake_samples(&f, 3, 2, d, 4096);
	gdrb_drv_summarise(&f.r, 4096, 2, 2, &f.agg, f.pairs);
	ck_assert_double_eq_tol(f.agg.lat.avg, 20.0, TOL);      /* (10 + 10 + 20 + 40) / 4 */
	ck_assert_double_eq_tol(f.agg.lat.min, 10.0, TOL);
	ck_assert_double_eq_tol(f.agg.lat.max, 40.0, TOL);
	ck_assert_double_eq_tol(f.agg.lat.p50, 17.5, TOL);      /* pooled: 5 10 10 15 20 20 30 50 */
	ck_assert_double_eq_tol(f.agg.algbw_GBps, 0.2048, TOL); /* 4096 B / 20 us */
	ck_assert_double_eq_tol(f.agg.busbw_GBps, 0.3072, TOL); /* x 2(4-1)/4 */
	ck_assert_double_eq_tol(f.agg.bw_GBps, 0.2048, TOL);    /* bw_GBps is algbw for collectives */
}
END_TEST

START_TEST(test_summary_flags_few_samples)
{
	struct fake f;
	const double rtt[] = { 10, 10, 10 };

	fake_init(&f, GDRB_TRAFFIC_PINGPONG, GDRB_METRIC_LAT, 2, 1, 1);
	fake_samples(&f, 0, 3, rtt, 16);
	fake_samples(&f, 1, 3, rtt, 16);
	gdrb_drv_summarise(&f.r, 8, 3, 1000, &f.agg, f.pairs);
	ck_assert_str_eq(f.agg.quality, "few-samples");
}
END_TEST

static Suite *figures_suite(void)
{
	Suite *s = suite_create("figures");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_sample_scale);
	tcase_add_test(tc, test_bytes_per_iter);
	tcase_add_test(tc, test_bw);
	tcase_add_test(tc, test_bus_factors);
	tcase_add_test(tc, test_collective_geometry);
	tcase_add_test(tc, test_coll_size);
	tcase_add_test(tc, test_quality);
	suite_add_tcase(s, tc);
	tc = tcase_create("summary");
	tcase_add_test(tc, test_summary_pingpong);
	tcase_add_test(tc, test_summary_pairs_add_up);
	tcase_add_test(tc, test_summary_bidir_doubles);
	tcase_add_test(tc, test_summary_collective);
	tcase_add_test(tc, test_summary_flags_few_samples);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(figures_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
