/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A low-overhead clock for per-iteration samples: the invariant TSC where the
 * CPU has one (calibrated once against CLOCK_MONOTONIC_RAW), otherwise
 * CLOCK_MONOTONIC_RAW itself.
 */
#ifndef GDRB_CLOCK_H
#define GDRB_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define GDRB_HAVE_TSC 1
#else
#define GDRB_HAVE_TSC 0
#endif

struct gdrb_clock {
	int use_tsc;
	double ticks_per_us;
	const char *source;     /* human description for the report header */
};

extern struct gdrb_clock gdrb_clock;

/* Decide the source and calibrate (about 20 ms when the TSC is used). */
void gdrb_clock_init(int force_monotonic);

static inline uint64_t gdrb_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t gdrb_ticks(void)
{
#if GDRB_HAVE_TSC
	if (gdrb_clock.use_tsc)
		return __rdtsc();
#endif
	return gdrb_mono_ns();
}

static inline double gdrb_ticks_to_us(uint64_t ticks)
{
	return (double)ticks / gdrb_clock.ticks_per_us;
}

/* Seconds since an arbitrary epoch, for budgets and deadlines. */
static inline double gdrb_now_s(void)
{
	return (double)gdrb_mono_ns() * 1e-9;
}

#endif
