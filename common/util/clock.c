/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_clock.h"

struct gdrb_clock gdrb_clock = { 0, 1000.0, "CLOCK_MONOTONIC_RAW" };

/*
 * One reading of the tick counter placed in CLOCK_MONOTONIC_RAW time: the
 * counter read between two reads of the clock. A reading whose bracket is wider
 * than GDRB_CAL_BRACKET_NS was interrupted (preempted, or a page fault, an SMI)
 * and is thrown away: an interruption between a clock read and the counter read
 * would otherwise be counted as ticks with no time, and every figure of the run
 * scaled by it (a 20 ms preemption in a 20 ms calibration halves them all).
 * The narrowest of up to GDRB_CAL_TRIES readings is kept; 0 when none was
 * narrow enough.
 */
static int place_ticks(const struct gdrb_clock_src *src, double *at_ns, uint64_t *ticks)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < GDRB_CAL_TRIES; i++) {
		uint64_t a = src->mono_ns(src->ctx);
		uint64_t c = src->ticks(src->ctx);
		uint64_t b = src->mono_ns(src->ctx);

		if (b - a < best) {
			best = b - a;
			*at_ns = (double)a + (double)(b - a) / 2;
			*ticks = c;
		}
		/* A few readings even when the first is narrow: the narrowest wins. */
		if (i >= 3 && best <= GDRB_CAL_BRACKET_NS)
			break;
	}
	return best <= GDRB_CAL_BRACKET_NS;
}

double gdrb_clock_rate(const struct gdrb_clock_src *src, uint64_t span_ns)
{
	double t0, t1;
	uint64_t c0, c1;

	if (!place_ticks(src, &t0, &c0))
		return 0;
	while ((double)src->mono_ns(src->ctx) - t0 < (double)span_ns)
		;
	if (!place_ticks(src, &t1, &c1) || c1 <= c0 || t1 <= t0)
		return 0;
	/* Each end is off by at most half its bracket: the rate by at most a bracket in span_ns. */
	return (double)(c1 - c0) / ((t1 - t0) / 1000.0);
}

#if GDRB_HAVE_TSC
#include <cpuid.h>

/* CPUID 0x80000007 EDX bit 8: the TSC ticks at a constant rate in every C/P state. */
static int tsc_is_invariant(void)
{
	unsigned a, b, c, d;

	if (__get_cpuid_max(0x80000000u, NULL) < 0x80000007u)
		return 0;
	__cpuid(0x80000007u, a, b, c, d);
	return (d >> 8) & 1;
}

static uint64_t real_mono_ns(void *ctx)
{
	(void)ctx;
	return gdrb_mono_ns();
}

static uint64_t real_tsc(void *ctx)
{
	(void)ctx;
	return __rdtsc();
}
#endif

void gdrb_clock_init(int force_monotonic)
{
	static char source[96];

	gdrb_clock.use_tsc = 0;
	gdrb_clock.ticks_per_us = 1000.0;
	gdrb_clock.source = "CLOCK_MONOTONIC_RAW";
#if GDRB_HAVE_TSC
	if (!force_monotonic && tsc_is_invariant()) {
		const struct gdrb_clock_src src = { real_mono_ns, real_tsc, NULL };
		double rate = gdrb_clock_rate(&src, GDRB_CAL_SPAN_NS);

		if (rate > 0) {
			gdrb_clock.ticks_per_us = rate;
			gdrb_clock.use_tsc = 1;
			snprintf(source, sizeof(source), "invariant TSC, %.3f GHz",
				 gdrb_clock.ticks_per_us / 1000.0);
		} else {
			/* Never a guessed rate: the clock the TSC could not be placed against. */
			snprintf(source, sizeof(source), "CLOCK_MONOTONIC_RAW (%s)",
				 "the TSC could not be read undisturbed to calibrate it");
		}
		gdrb_clock.source = source;
	}
#else
	(void)force_monotonic;
	(void)source;
#endif
}
