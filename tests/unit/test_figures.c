/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the figure arithmetic: common/core/report/figures.c's pure functions, the
 * collectives' table (common/core/coll/coll_table.c) at 1 to 8 ranks, the driver's summary
 * of one size (gdrb_drv_summarise) on synthetic samples, and gdrb_main end to end on
 * the single-process bootstrap with fake benchmarks on a fake clock, down to the CSV.
 * Every expected value is worked out by hand in the comment beside it, so a wrong
 * factor (a round trip not halved, a window not divided, both directions not added,
 * pairs averaged instead of summed, a wrong bus factor or blocked choice) fails here;
 * tests/meta/figures_mutants.sh plants each one and checks that it does.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "driver_int.h"
#include "gdrb_clock.h"
#include "gdrb_coll_table.h"
#include "gdrb_figures.h"
#include "gdrb_log.h"
#include "gdrb_transports.h"
#include "unit_main.h"

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

/* ---- the collectives' table: every entry at 1 to 8 ranks ---- */

enum expect_bus { BUS_ALLREDUCE, BUS_SPREAD, BUS_ONE, BUS_NONE };

/* What docs/collectives.md and docs/csv-schema.md say of each, written out here. */
static const struct coll_expect {
	const char *name;
	enum expect_bus bus;
	bool blocked, reduces;
} coll_expect[] = {
	{ "mpi_allreduce", BUS_ALLREDUCE, false, true },
	{ "mpi_allgather", BUS_SPREAD, true, false },
	{ "mpi_reduce_scatter", BUS_SPREAD, true, true },
	{ "mpi_alltoall", BUS_SPREAD, true, false },
	{ "mpi_gather", BUS_SPREAD, true, false },
	{ "mpi_scatter", BUS_SPREAD, true, false },
	{ "mpi_bcast", BUS_ONE, false, false },
	{ "mpi_reduce", BUS_ONE, false, true },
	{ "mpi_barrier", BUS_NONE, false, false },
};
#define NCOLL (sizeof(coll_expect) / sizeof(coll_expect[0]))

static const struct gdrb_coll_kind *coll_kind(const char *name)
{
	size_t i;

	for (i = 0; gdrb_coll_kinds[i]; i++)
		if (!strcmp(gdrb_coll_kinds[i]->name, name))
			return gdrb_coll_kinds[i];
	ck_abort_msg("%s: not in the collectives' table", name);
	return NULL;
}

/* busbw / algbw at n ranks: 2(n-1)/n, (n-1)/n or 1. */
static double expected_factor(enum expect_bus bus, int n)
{
	return bus == BUS_ALLREDUCE ? 2.0 * (n - 1) / n : bus == BUS_SPREAD ? (n - 1.0) / n : 1.0;
}

START_TEST(test_coll_table)
{
	size_t i, count;

	for (count = 0; gdrb_coll_kinds[count]; count++)
		;
	ck_assert_uint_eq(count, NCOLL);
	for (i = 0; i < NCOLL; i++) {
		const struct coll_expect *e = &coll_expect[i];
		const struct gdrb_coll_kind *k = coll_kind(e->name);
		double totals[8];
		int n, r;

		ck_assert_msg(gdrb_coll_blocked(k) == e->blocked, "%s: blocked is %s", e->name,
			      e->blocked ? "false" : "true");
		ck_assert_uint_eq(gdrb_coll_elem(k, 8), e->reduces ? 8 : 1);
		for (n = 1; n <= 8; n++) {
			/* n ranks, 10 calls in 80 us each: avg 8 us. */
			size_t size = gdrb_coll_size(k, 1 << 20, 4, n);
			struct gdrb_fig_coll f;

			for (r = 0; r < n; r++)
				totals[r] = 80;
			gdrb_fig_collective(totals, sizeof(double), n, 10, size, k->bus_factor(n), &f);
			if (e->bus == BUS_NONE) {
				/* The barrier moves nothing: size 0, and no figures, not 0. */
				ck_assert_uint_eq(size, 0);
				ck_assert_msg(isnan(f.algbw_GBps) && isnan(f.busbw_GBps), "%s: busbw at %d ranks",
					      e->name, n);
				continue;
			}
			ck_assert_double_eq_tol(f.algbw_GBps, (double)size / 8 * 1e-3, TOL);
			ck_assert_msg(fabs(f.busbw_GBps - f.algbw_GBps * expected_factor(e->bus, n)) < TOL,
				      "%s at %d ranks: busbw %.9f, expected algbw %.9f x %.6f", e->name, n,
				      f.busbw_GBps, f.algbw_GBps, expected_factor(e->bus, n));
		}
	}
}
END_TEST

/* Each collective's size: down to a multiple of its unit (ranks x element if blocked), at least one unit. */
START_TEST(test_coll_table_sizes)
{
	static const size_t asked[] = { 1, 7, 1000, 1024, 4099, (size_t)5 << 30 };
	size_t i, j;
	int n;

	for (i = 0; i < NCOLL; i++) {
		const struct coll_expect *e = &coll_expect[i];
		const struct gdrb_coll_kind *k = coll_kind(e->name);

		for (n = 1; n <= 8; n++) {
			size_t unit = (e->reduces ? 4 : 1) * (e->blocked ? (size_t)n : 1);

			for (j = 0; j < sizeof(asked) / sizeof(asked[0]); j++) {
				size_t got = gdrb_coll_size(k, asked[j], 4, n);

				if (e->bus == BUS_NONE) {
					ck_assert_uint_eq(got, 0);
					continue;
				}
				ck_assert_msg(got % unit == 0 && got >= unit &&
					      (asked[j] < unit ? got == unit : got <= asked[j] && asked[j] - got < unit),
					      "%s at %d ranks: %zu B measured as %zu B, unit %zu B", e->name, n,
					      asked[j], got, unit);
			}
		}
	}
	/* docs/collectives.md's example: 1 KiB over 3 ranks is 1023 B. */
	ck_assert_uint_eq(gdrb_coll_size(&gdrb_coll_allgather, 1024, 4, 3), 1023);
	/* A reduction's blocks hold whole elements: 3 ranks x 4 B. */
	ck_assert_uint_eq(gdrb_coll_size(&gdrb_coll_reduce_scatter, 1024, 4, 3), 1020);
	ck_assert_uint_eq(gdrb_coll_size(&gdrb_coll_allreduce, 1026, 4, 3), 1024);
	ck_assert_uint_eq(gdrb_coll_size(&gdrb_coll_bcast, 1027, 4, 3), 1027);
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
	ck_assert_double_eq_tol(f.agg.lat.p99, 19.85, TOL);     /* rank 0.99 x 3 = 2.97: 15 + 0.97 x 5 */
	ck_assert_double_eq_tol(f.agg.lat.p999, 19.985, TOL);   /* rank 2.997: 15 + 0.997 x 5 */
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
	ck_assert_double_eq_tol(f.pairs[0].lat.p99, 1.99, TOL);  /* 1 and 2: rank 0.99 */
	ck_assert_double_eq_tol(f.pairs[0].lat.p999, 1.999, TOL);
	ck_assert_double_eq_tol(f.pairs[1].lat.p99, 2.0, TOL);
	ck_assert_double_eq_tol(f.agg.lat.avg, 1.75, TOL);      /* the initiators' samples pooled */
	ck_assert_double_eq_tol(f.agg.lat.min, 1.0, TOL);
	ck_assert_double_eq_tol(f.agg.lat.p50, 2.0, TOL);       /* pooled: 1 2 2 2 */
	ck_assert_double_eq_tol(f.agg.lat.p99, 2.0, TOL);
	ck_assert_double_eq_tol(f.agg.lat.p999, 2.0, TOL);
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
	ck_assert_double_eq_tol(f.agg.lat.p99, 125.0, TOL);
	ck_assert_double_eq_tol(f.agg.lat.p999, 125.0, TOL);
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
	ck_assert_double_eq_tol(f.agg.lat.p99, 48.6, TOL);      /* rank 0.99 x 7 = 6.93: 30 + 0.93 x 20 */
	ck_assert_double_eq_tol(f.agg.lat.p999, 49.86, TOL);    /* rank 6.993: 30 + 0.993 x 20 */
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

/*
 * ---- end to end: gdrb_main on the single-process bootstrap, a fake benchmark, a fake clock ----
 *
 * Under --clock monotonic the driver's samples are clock_gettime(CLOCK_MONOTONIC_RAW)
 * differences. This program defines clock_gettime, which the driver's calls reach
 * before the C library's (a definition in the executable comes first): while
 * fake_clock is on, that clock reads fake_ns, which only the fake benchmark's
 * iterations advance, so each sample is exactly its iteration's step, and the CSV
 * figures are known to the last digit. Every other clock goes to the kernel.
 */
static bool fake_clock;
static uint64_t fake_ns = 1000000000000ull;
static const uint64_t *fake_steps_ns;   /* iteration i takes step i % fake_nsteps */
static size_t fake_nsteps, fake_iters;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	uint64_t ns;

	if (!__atomic_load_n(&fake_clock, __ATOMIC_RELAXED) || id != CLOCK_MONOTONIC_RAW)
		return (int)syscall(SYS_clock_gettime, id, ts);
	ns = __atomic_load_n(&fake_ns, __ATOMIC_RELAXED);
	ts->tv_sec = (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
	return 0;
}

/* The fake clock when the first iteration began and when the last one ended. */
static uint64_t fake_first_ns, fake_last_ns;

static int fake_iteration(struct gdrb_ctx *c, size_t size)
{
	(void)c;
	(void)size;
	if (!fake_iters)
		fake_first_ns = __atomic_load_n(&fake_ns, __ATOMIC_RELAXED);
	fake_last_ns = __atomic_add_fetch(&fake_ns, fake_steps_ns[fake_iters++ % fake_nsteps],
					  __ATOMIC_RELAXED);
	return 0;
}

/* A made-up bus factor: the collective row's busbw must be algbw times this. */
static double fake_bus(const struct gdrb_ctx *c) { (void)c; return 1.5; }

/*
 * The single-process bootstrap as rank 0 of two, for the point-to-point shapes: rank 1,
 * the responder, is not there, and what it would gather is zeros (a responder's
 * samples and bytes count in no figure).
 */
static char pair_hosts[2][GDRB_HOST_MAX];

static int pair_init(struct gdrb_boot *b, int *argc, char ***argv)
{
	if (gdrb_boot_self.init(b, argc, argv))
		return GDRB_ERR;
	b->size = 2;
	memcpy(pair_hosts[0], b->hosts[0], GDRB_HOST_MAX);
	memcpy(pair_hosts[1], b->hosts[0], GDRB_HOST_MAX);
	b->hosts = pair_hosts;
	gdrb_boot_derive_hosts(b);
	return 0;
}

static int pair_gather(struct gdrb_boot *b, const void *send, size_t len, void *recv)
{
	(void)b;
	memmove(recv, send, len);
	memset((char *)recv + len, 0, len);
	return 0;
}

#define CSV_MAX 40

/* One CSV row: its cells by the header's column names. */
struct csv_row {
	char header[2048], line[2048];
	char *name[CSV_MAX], *cell[CSV_MAX];
	int n;
};

static int csv_split(char *line, char **cells)
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	while (line && n < CSV_MAX)
		cells[n++] = strsep(&line, ",");
	return n;
}

static const char *csv_get(const struct csv_row *row, const char *name)
{
	int i;

	for (i = 0; i < row->n; i++)
		if (!strcmp(row->name[i], name))
			return row->cell[i];
	ck_abort_msg("no column %s in the CSV", name);
	return NULL;
}

#define ck_assert_cell(row, col, want) ck_assert_str_eq(csv_get(row, col), want)

/* A new empty file in $TMPDIR (or /tmp) for a run's CSV: its name in path. */
static void temp_csv(char *path, size_t len)
{
	const char *base = getenv("TMPDIR");
	int fd;

	snprintf(path, len, "%s/test_figures.XXXXXX", base && *base ? base : "/tmp");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

/* The header and first row of the CSV at path into *row; the file removed. */
static void first_row(const char *path, struct csv_row *row)
{
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(row->header, sizeof(row->header), f));
	ck_assert_ptr_nonnull(fgets(row->line, sizeof(row->line), f));
	fclose(f);
	unlink(path);
	row->n = csv_split(row->header, row->name);
	ck_assert_int_eq(csv_split(row->line, row->cell), row->n);
}

/*
 * gdrb_main on bench and boot with 4 timed iterations of the steps (us), no warm-up,
 * at size (and window); the first row of its CSV into *row.
 */
static void run_fake(const struct gdrb_bench *bench, struct gdrb_boot *boot, const char *size,
		     const char *window, const uint64_t *steps_us, struct csv_row *row)
{
	char path[4096];
	const char *argv[] = { "test_figures", "-m", size, "-n", "4", "-w", "0", "-t", "10",
			       "-T", "0", "--clock", "monotonic", "--csv", path,
			       window ? "-W" : NULL, window, NULL };
	uint64_t steps_ns[4];
	int argc = 0, i;

	for (i = 0; i < 4; i++)
		steps_ns[i] = steps_us[i] * 1000;
	fake_steps_ns = steps_ns;
	fake_nsteps = 4;
	fake_iters = 0;
	temp_csv(path, sizeof(path));
	while (argv[argc])
		argc++;

	/* The CSV is what is checked: the table on stdout would only fill the log. */
	ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout));
	__atomic_store_n(&fake_clock, true, __ATOMIC_RELAXED);
	ck_assert_msg(gdrb_mono_ns() == fake_ns,
		      "this program's clock_gettime does not stand in for the C library's");
	ck_assert_int_eq(gdrb_main(bench, boot, argc, (char **)argv), GDRB_EXIT_OK);
	__atomic_store_n(&fake_clock, false, __ATOMIC_RELAXED);
	ck_assert_uint_eq(fake_iters, 4);

	first_row(path, row);
	ck_assert_cell(row, "status", "ok");
	ck_assert_cell(row, "pair", "all");
	ck_assert_cell(row, "iterations", "4");
	ck_assert_cell(row, "size_bytes", size);
}

static struct gdrb_bench fake_bench(const char *name, enum gdrb_traffic traffic, enum gdrb_metric metric)
{
	return (struct gdrb_bench){
		.name = name, .layer = "fake", .summary = "figures end to end",
		.metric = metric, .traffic = traffic,
		.opt_core = GDRB_OPTG_MEM | (metric == GDRB_METRIC_BW ? GDRB_OPTG_WINDOW : 0),
		.opt_known = gdrb_opt_catalog,
		.bus_factor = fake_bus,
		.iteration = fake_iteration,
	};
}

static struct gdrb_boot pair_boot(void)
{
	struct gdrb_boot b = gdrb_boot_self;

	b.init = pair_init;
	b.gather = pair_gather;
	return b;
}

/* Round trips of 10, 20, 30, 40 us: one way 5, 10, 15, 20; 8 B both ways per round trip. */
START_TEST(test_e2e_pingpong)
{
	static const uint64_t rtt[] = { 10, 20, 30, 40 };
	struct gdrb_bench b = fake_bench("fake_latency", GDRB_TRAFFIC_PINGPONG, GDRB_METRIC_LAT);
	struct gdrb_boot boot = pair_boot();
	struct csv_row row;

	run_fake(&b, &boot, "8", NULL, rtt, &row);
	ck_assert_cell(&row, "ranks", "2");
	ck_assert_cell(&row, "lat_min_us", "5.000");
	ck_assert_cell(&row, "lat_p50_us", "12.500");
	ck_assert_cell(&row, "lat_avg_us", "12.500");
	ck_assert_cell(&row, "lat_p99_us", "19.850");   /* 15 + 0.97 x 5 */
	ck_assert_cell(&row, "lat_p999_us", "19.985");  /* 15 + 0.997 x 5 */
	ck_assert_cell(&row, "lat_max_us", "20.000");
	ck_assert_cell(&row, "lat_stdev_us", "6.455");  /* sqrt(125 / 3) */
	ck_assert_cell(&row, "bw_GBps", "0.000640000"); /* 4 x 16 B in 100 us */
	ck_assert_cell(&row, "algbw_GBps", "");
	ck_assert_cell(&row, "busbw_GBps", "");
}
END_TEST

/* Windows of 4 x 1 KiB in 32, 64, 32, 128 us: 8, 16, 8, 32 us per message. */
static const uint64_t window_us[] = { 32, 64, 32, 128 };

static void check_window_lat(const struct csv_row *row)
{
	ck_assert_cell(row, "window", "4");
	ck_assert_cell(row, "lat_min_us", "8.000");
	ck_assert_cell(row, "lat_p50_us", "12.000");
	ck_assert_cell(row, "lat_avg_us", "16.000");
	ck_assert_cell(row, "lat_p99_us", "31.520");    /* 16 + 0.97 x 16 */
	ck_assert_cell(row, "lat_p999_us", "31.952");
	ck_assert_cell(row, "lat_max_us", "32.000");
}

/* busbw above the line rate: flagged on several hosts only, with a rate known, strictly above it. */
START_TEST(test_busbw_over_line)
{
	char buf[256];

	/* 200 Gb/s is 25 GB/s: 30 GB/s on 2 hosts is flagged, with where the rate came from and why. */
	ck_assert_int_eq(gdrb_fig_busbw_over_line(30.0, 200.0, 2, "NIC mlx5_0:1, NCCL's log", "tree at work", buf,
						  sizeof(buf)), 1);
	ck_assert_str_eq(buf, "busbw 30.000 GB/s above the line rate 25.000 GB/s (NIC mlx5_0:1, NCCL's log): tree at work");
	ck_assert_int_eq(gdrb_fig_busbw_over_line(24.9, 200.0, 2, "x", "y", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(gdrb_fig_busbw_over_line(25.0, 200.0, 2, "x", "y", buf, sizeof(buf)), 0);
	/* One host (NVLink inside a node is not the network), no rate, no busbw: nothing claimed. */
	ck_assert_int_eq(gdrb_fig_busbw_over_line(30.0, 200.0, 1, "x", "y", buf, sizeof(buf)), 0);
	ck_assert_int_eq(gdrb_fig_busbw_over_line(30.0, 0.0, 2, "x", "y", buf, sizeof(buf)), 0);
	ck_assert_int_eq(gdrb_fig_busbw_over_line(NAN, 200.0, 2, "x", "y", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
}
END_TEST

/* Windows of 4 x 1024 B on a pair, TRAFFIC: the window's latencies and BW_GBPS. */
static void check_window_bw(const char *name, enum gdrb_traffic traffic, const char *bw_gbps)
{
	struct gdrb_bench b = fake_bench(name, traffic, GDRB_METRIC_BW);
	struct gdrb_boot boot = pair_boot();
	struct csv_row row;

	run_fake(&b, &boot, "1024", "4", window_us, &row);
	check_window_lat(&row);
	ck_assert_cell(&row, "bw_GBps", bw_gbps);
}

START_TEST(test_e2e_bw)
{
	check_window_bw("fake_bw", GDRB_TRAFFIC_UNIDIR, "0.064000000"); /* 4 x 4 x 1024 B in 256 us */
}
END_TEST

START_TEST(test_e2e_bidir)
{
	check_window_bw("fake_bibw", GDRB_TRAFFIC_BIDIR, "0.128000000"); /* both ways: twice 0.064 */
}
END_TEST

/* The plain single-process bootstrap: a collective of one rank, calls of 10 to 40 us. */
START_TEST(test_e2e_collective)
{
	static const uint64_t call_us[] = { 10, 20, 30, 40 };
	struct gdrb_bench b = fake_bench("fake_coll", GDRB_TRAFFIC_COLLECTIVE, GDRB_METRIC_LAT);
	struct csv_row row;

	run_fake(&b, &gdrb_boot_self, "4096", NULL, call_us, &row);
	ck_assert_cell(&row, "ranks", "1");
	ck_assert_cell(&row, "lat_avg_us", "25.000");
	ck_assert_cell(&row, "lat_p50_us", "25.000");
	ck_assert_cell(&row, "lat_p99_us", "39.700");
	ck_assert_cell(&row, "lat_p999_us", "39.970");
	ck_assert_cell(&row, "algbw_GBps", "0.163840000");      /* 4096 B / 25 us */
	ck_assert_cell(&row, "busbw_GBps", "0.245760000");      /* x 1.5 */
	ck_assert_cell(&row, "bw_GBps", "0.163840000");
}
END_TEST

/*
 * ---- the hard stop: a size ends at 10 x -t, warm-up and agreements included ----
 *
 * The ranks agree on the time spent after every batch; on a loaded machine that
 * agreement can take longer than the batch itself. Here each agreement advances
 * the fake clock by agree_ns: the size's time, first iteration to last, must stay
 * within the hard stop plus one agreement (the one before the last batch) and one
 * iteration (the one that crosses it), whatever the agreements cost.
 */
static uint64_t agree_ns;
static unsigned agreements;

static int slow_allreduce(struct gdrb_boot *b, double *v, size_t n, enum gdrb_reduce_op op)
{
	if (__atomic_load_n(&fake_clock, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&fake_ns, agree_ns, __ATOMIC_RELAXED);
		agreements++;
	}
	return gdrb_boot_self.allreduce_double(b, v, n, op);
}

/* One size of 8 B at -t budget, every iteration step_us, every agreement agree_us: its seconds. */
static double run_plan(const char *budget, uint64_t step_us, uint64_t agree_us)
{
	const char *argv[] = { "test_figures", "-m", "8", "-t", budget, "-T", "0",
			       "--clock", "monotonic", NULL };
	static uint64_t step_ns;
	struct gdrb_bench b = fake_bench("fake_latency", GDRB_TRAFFIC_PINGPONG, GDRB_METRIC_LAT);
	struct gdrb_boot boot = pair_boot();

	boot.allreduce_double = slow_allreduce;
	step_ns = step_us * 1000;
	fake_steps_ns = &step_ns;
	fake_nsteps = 1;
	fake_iters = 0;
	agree_ns = agree_us * 1000;
	agreements = 0;
	ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout));
	__atomic_store_n(&fake_clock, true, __ATOMIC_RELAXED);
	ck_assert_int_eq(gdrb_main(&b, &boot, 9, (char **)argv), GDRB_EXIT_OK);
	__atomic_store_n(&fake_clock, false, __ATOMIC_RELAXED);
	return (double)(fake_last_ns - fake_first_ns) * 1e-9;
}

/* 1 ms iterations, agreements of 30 ms: 0.2 s + 30 ms + 1 ms at most, not 0.2 s of iterations. */
START_TEST(test_plan_agreements_count)
{
	double took = run_plan("0.02", 1000, 30000);

	ck_assert_msg(took <= 0.2 + 0.030 + 0.001 + 1e-9,
		      "a size of -t 0.02 took %.3f s with %u agreements of 30 ms and %zu iterations: past 10 x -t by more than an agreement and an iteration",
		      took, agreements, fake_iters);
	ck_assert_uint_ge(fake_iters, 3);
}
END_TEST

/*
 * An iteration longer than 10 x -t (300 ms at -t 0.02): the cold one reaches the hard
 * stop, and the timed one a row needs follows it; no other warm-up iteration.
 */
START_TEST(test_plan_long_iteration)
{
	double took = run_plan("0.02", 300000, 0);

	ck_assert_msg(fake_iters == 2, "%zu iterations of 300 ms at -t 0.02 (%.3f s): the cold one and one timed, no more",
		      fake_iters, took);
}
END_TEST

/*
 * One slow first iteration (100 ms), then 500 us ones, at -t 0.25 --min-iters 1000: the
 * budget alone holds 500, and 1000 x 500 us fits 4 x the budget, so 1000 must run. Two
 * things see to it: the warm-up's median plans the minimum (the first iteration left out),
 * and the timed rate raises it. A plan from the first iteration alone, with no raise, gives
 * way to the floor (3) and runs 501: seen by hand, making both faults.
 */
START_TEST(test_plan_slow_first)
{
	static uint64_t steps_ns[8192];
	char path[4096];
	const char *argv[] = { "test_figures", "-m", "8", "-t", "0.25", "--min-iters", "1000",
			       "-n", "5000", "-T", "0", "--clock", "monotonic", "--csv", path, NULL };
	struct gdrb_bench b = fake_bench("fake_latency", GDRB_TRAFFIC_PINGPONG, GDRB_METRIC_LAT);
	struct gdrb_boot boot = pair_boot();
	struct csv_row row;
	size_t i;

	steps_ns[0] = 100000000;
	for (i = 1; i < sizeof(steps_ns) / sizeof(steps_ns[0]); i++)
		steps_ns[i] = 500000;
	fake_steps_ns = steps_ns;
	fake_nsteps = sizeof(steps_ns) / sizeof(steps_ns[0]);
	fake_iters = 0;
	temp_csv(path, sizeof(path));
	ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout));
	__atomic_store_n(&fake_clock, true, __ATOMIC_RELAXED);
	ck_assert_int_eq(gdrb_main(&b, &boot, 15, (char **)argv), GDRB_EXIT_OK);
	__atomic_store_n(&fake_clock, false, __ATOMIC_RELAXED);
	ck_assert_uint_lt(fake_iters, fake_nsteps);
	first_row(path, &row);
	ck_assert_msg(strtoull(csv_get(&row, "iterations"), NULL, 10) >= 1000,
		      "a 100 ms first iteration, then 500 us ones: %s timed iterations at --min-iters 1000 (1000 fit 4 x -t 0.25), quality %s",
		      csv_get(&row, "iterations"), csv_get(&row, "quality"));
	ck_assert_cell(&row, "quality", "ok");
}
END_TEST

static Suite *figures_suite(void)
{
	const struct unit_case pure[] = {
		{ .test = test_sample_scale },
		{ .test = test_bytes_per_iter },
		{ .test = test_bw },
		{ .test = test_bus_factors },
		{ .test = test_collective_geometry },
		{ .test = test_coll_size },
		{ .test = test_coll_table },
		{ .test = test_coll_table_sizes },
		{ .test = test_quality },
	};
	const struct unit_case summary[] = {
		{ .test = test_summary_pingpong },
		{ .test = test_summary_pairs_add_up },
		{ .test = test_summary_bidir_doubles },
		{ .test = test_summary_collective },
		{ .test = test_summary_flags_few_samples },
	};
	const struct unit_case end_to_end[] = {
		{ .test = test_e2e_pingpong },
		{ .test = test_e2e_bw },
		{ .test = test_e2e_bidir },
		{ .test = test_e2e_collective },
		{ .test = test_busbw_over_line },
	};
	const struct unit_case plan[] = {
		{ .test = test_plan_agreements_count },
		{ .test = test_plan_long_iteration },
		{ .test = test_plan_slow_first },
	};
	Suite *s = suite_create("figures");

	UNIT_TCASE(s, "pure", 0, pure);
	UNIT_TCASE(s, "summary", 0, summary);
	UNIT_TCASE(s, "end_to_end", 0, end_to_end);
	UNIT_TCASE(s, "plan", 0, plan);
	return s;
}

/* Each end-to-end test runs gdrb_main, which closes stdout: one process per test. */
const struct unit_test unit_test = { .suite = figures_suite, .fork = true };
