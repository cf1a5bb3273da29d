/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double gdrb_percentile_sorted(const double *sorted, size_t n, double p)
{
	double rank, frac;
	size_t lo;

	if (n == 0)
		return 0.0;
	if (p <= 0.0)
		return sorted[0];
	if (p >= 100.0)
		return sorted[n - 1];
	rank = p / 100.0 * (double)(n - 1);
	lo = (size_t)rank;
	frac = rank - (double)lo;
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

void gdrb_stats_compute(double *samples, size_t n, struct gdrb_stats *out)
{
	double sum = 0.0, sq = 0.0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(samples, n, sizeof(*samples), cmp_double);
	for (i = 0; i < n; i++)
		sum += samples[i];
	out->n = n;
	out->avg = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (samples[i] - out->avg) * (samples[i] - out->avg);
	out->stdev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
	out->min = samples[0];
	out->max = samples[n - 1];
	out->p50 = gdrb_percentile_sorted(samples, n, 50.0);
	out->p99 = gdrb_percentile_sorted(samples, n, 99.0);
	out->p999 = gdrb_percentile_sorted(samples, n, 99.9);
}
