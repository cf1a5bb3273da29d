/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the TSC calibration (common/util/clock.c's gdrb_clock_rate) on fake
 * clocks: a counter at a known rate and a monotonic clock that both follow one
 * simulated time, every read taking a little of it, and a "preemption" (time
 * passing with no read) injected after any chosen read. A calibration that
 * trusts a counter read it did not bracket tightly is thrown off by such a
 * stall; this one must not be, wherever the stall falls.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "gdrb_clock.h"
#include "unit_main.h"

#define RATE 2500.0             /* fake counter: 2.5 GHz, ticks per us */
#define READ_NS 40              /* each read of either clock takes this long */
#define STALL_NS 20000000ull    /* a 20 ms preemption */

struct fake {
	uint64_t now_ns;        /* simulated time */
	uint64_t reads;         /* reads so far, both clocks */
	uint64_t stall_after;   /* stall once after this read (UINT64_MAX: never) */
	int stall_every_tick;   /* stall after every counter read */
};

static void tick(struct fake *f, int counter)
{
	f->now_ns += READ_NS;
	if (f->reads++ == f->stall_after || (counter && f->stall_every_tick))
		f->now_ns += STALL_NS;
}

static uint64_t fake_mono(void *ctx)
{
	struct fake *f = ctx;
	uint64_t t = f->now_ns + 1000000000ull;  /* an arbitrary epoch */

	tick(f, 0);
	return t;
}

static uint64_t fake_ticks(void *ctx)
{
	struct fake *f = ctx;
	uint64_t c = (uint64_t)((double)f->now_ns * RATE / 1000.0) + 12345;

	tick(f, 1);
	return c;
}

static double calibrate(struct fake *f)
{
	const struct gdrb_clock_src src = { fake_mono, fake_ticks, f };

	return gdrb_clock_rate(&src, GDRB_CAL_SPAN_NS);
}

/* Within 0.05 %: the bound the calibration promises is one 5 us bracket over 20 ms. */
static void assert_rate(double rate)
{
	ck_assert_double_eq_tol(rate, RATE, RATE * 5e-4);
}

START_TEST(test_undisturbed)
{
	struct fake f = { 0, 0, UINT64_MAX, 0 };

	assert_rate(calibrate(&f));
}
END_TEST

/*
 * A 20 ms stall after each of the first and last 64 reads of a calibration
 * (where the ends are read): with the counter read between clock reads taken
 * on trust, a stall there would count 20 ms of ticks against no time, and the
 * rate would come out off by up to a factor of two.
 */
START_TEST(test_stall_anywhere_at_the_ends)
{
	struct fake f = { 0, 0, UINT64_MAX, 0 };
	uint64_t total, k;

	calibrate(&f);
	total = f.reads;
	ck_assert_uint_gt(total, 128);
	for (k = 0; k < total; k++) {
		if (k == 64)
			k = total - 64;
		f = (struct fake){ 0, 0, k, 0 };
		assert_rate(calibrate(&f));
	}
}
END_TEST

/* Every counter read interrupted: no rate at all, never a guessed one. */
START_TEST(test_never_undisturbed)
{
	struct fake f = { 0, 0, UINT64_MAX, 1 };

	ck_assert_double_eq(calibrate(&f), 0);
}
END_TEST

/* The real clocks: a positive rate, or the fallback said in the source line. */
START_TEST(test_real_clock)
{
	gdrb_clock_init(0);
	ck_assert_ptr_nonnull(gdrb_clock.source);
	ck_assert(gdrb_clock.ticks_per_us > 0);
	if (!gdrb_clock.use_tsc)
		ck_assert_double_eq(gdrb_clock.ticks_per_us, 1000.0);
	gdrb_clock_init(1);
	ck_assert_int_eq(gdrb_clock.use_tsc, 0);
}
END_TEST

static Suite *clock_suite(void)
{
	const struct unit_case cases[] = {
		{ .test = test_undisturbed },
		{ .test = test_stall_anywhere_at_the_ends },
		{ .test = test_never_undisturbed },
		{ .test = test_real_clock },
	};

	return UNIT_SUITE("clock", "calibration", 60, cases);
}

const struct unit_test unit_test = { .suite = clock_suite };
