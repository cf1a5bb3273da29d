/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics over one sample per iteration, all in double precision. */
#ifndef GDRB_STATS_H
#define GDRB_STATS_H

#include <stddef.h>
#include <stdint.h>

struct gdrb_stats {
	uint64_t n;
	double min, p50, avg, p99, p999, max, stdev;
};

/*
 * Summarise n samples (sorted in place). Percentiles interpolate linearly
 * between the two nearest ranks; stdev is the sample standard deviation
 * (n - 1 in the denominator, 0 for one sample). n == 0 gives all zeros.
 */
void gdrb_stats_compute(double *samples, size_t n, struct gdrb_stats *out);

/* The p-th percentile (0..100) of n sorted samples. */
double gdrb_percentile_sorted(const double *sorted, size_t n, double p);

#endif
