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

/* Calibration: the span timed, the widest clock bracket a counter reading may
 * have, and how many readings are tried at each end before giving up. */
#define GDRB_CAL_SPAN_NS 20000000ull
#define GDRB_CAL_BRACKET_NS 5000ull
#define GDRB_CAL_TRIES 200

/* The clocks a calibration reads; the unit tests give it fake ones. */
struct gdrb_clock_src {
	uint64_t (*mono_ns)(void *ctx);
	uint64_t (*ticks)(void *ctx);
	void *ctx;
};

/*
 * Counter ticks per microsecond of src->mono_ns over span_ns, each end read
 * between two clock reads no more than GDRB_CAL_BRACKET_NS apart (so the rate
 * is off by at most GDRB_CAL_BRACKET_NS / span_ns); 0 when an end could not be
 * read undisturbed.
 */
double gdrb_clock_rate(const struct gdrb_clock_src *src, uint64_t span_ns);

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
