/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_clock.h"

struct gdrb_clock gdrb_clock = { 0, 1000.0, "CLOCK_MONOTONIC_RAW" };

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

static double tsc_calibrate(void)
{
	uint64_t t0, t1, c0, c1;

	t0 = gdrb_mono_ns();
	c0 = __rdtsc();
	do {
		t1 = gdrb_mono_ns();
	} while (t1 - t0 < 20000000ull);
	c1 = __rdtsc();
	return (double)(c1 - c0) / ((double)(t1 - t0) / 1000.0);
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
		gdrb_clock.ticks_per_us = tsc_calibrate();
		gdrb_clock.use_tsc = 1;
		snprintf(source, sizeof(source), "invariant TSC, %.3f GHz",
			 gdrb_clock.ticks_per_us / 1000.0);
		gdrb_clock.source = source;
	}
#else
	(void)force_monotonic;
	(void)source;
#endif
}
