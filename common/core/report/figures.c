/* SPDX-License-Identifier: BSD-3-Clause */
/* The figure arithmetic (gdrb_figures.h): pure functions, unit-tested in tests/unit/test_figures.c. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "gdrb_figures.h"
#include "gdrb_report.h"

double gdrb_fig_sample_scale(enum gdrb_traffic traffic, enum gdrb_metric metric, unsigned window)
{
	if (traffic == GDRB_TRAFFIC_PINGPONG)
		return 0.5;
	if (traffic == GDRB_TRAFFIC_COLLECTIVE)
		return 1.0;
	if (metric == GDRB_METRIC_BW)
		return 1.0 / (window ? window : 1);
	return 1.0;
}

double gdrb_fig_bytes_per_iter(enum gdrb_traffic traffic, size_t size, unsigned window)
{
	double bytes = (double)size * window;

	if (traffic == GDRB_TRAFFIC_COLLECTIVE)
		return (double)size;
	/* A round trip carries the message both ways; a bidirectional window too. */
	if (traffic == GDRB_TRAFFIC_BIDIR || traffic == GDRB_TRAFFIC_PINGPONG)
		bytes *= 2;
	return bytes;
}

double gdrb_fig_bw_GBps(double bytes_per_iter, uint64_t n, double total_us)
{
	return total_us > 0 ? bytes_per_iter * (double)n / total_us * 1e-3 : 0;
}

void gdrb_fig_collective(const double *total_us, size_t stride, int nranks, uint64_t n,
			 size_t size, double bus_factor, struct gdrb_fig_coll *out)
{
	const char *p = (const char *)total_us;
	double sum = 0, lo = INFINITY, hi = 0;
	int rank;

	for (rank = 0; rank < nranks; rank++, p += stride) {
		double mean = *(const double *)p / (double)n;

		sum += mean;
		lo = mean < lo ? mean : lo;
		hi = mean > hi ? mean : hi;
	}
	out->avg_us = nranks > 0 ? sum / nranks : NAN;
	out->min_us = lo;
	out->max_us = hi;
	out->algbw_GBps = size && out->avg_us > 0 ? (double)size / out->avg_us * 1e-3 : NAN;
	out->busbw_GBps = out->algbw_GBps * bus_factor;
}

double gdrb_bus_allreduce(int n) { return n > 0 ? 2.0 * (n - 1) / n : 0.0; }
double gdrb_bus_spread(int n) { return n > 0 ? (double)(n - 1) / n : 0.0; }
double gdrb_bus_one(int n) { (void)n; return 1.0; }

size_t gdrb_fig_coll_size(size_t size, size_t elem, int nranks, bool blocked)
{
	size_t unit = elem * (blocked && nranks > 0 ? (size_t)nranks : 1);

	return size < unit ? unit : size / unit * unit;
}

const char *gdrb_fig_quality(uint64_t n, uint64_t want, double p50, double p99)
{
	bool few = n < want, noisy = p50 > 0 && p99 > GDRB_NOISY_RATIO * p50;

	return few && noisy ? GDRB_Q_FEW "+" GDRB_Q_NOISY : few ? GDRB_Q_FEW : noisy ? GDRB_Q_NOISY :
	       GDRB_Q_OK;
}

int gdrb_fig_busbw_over_line(double busbw_GBps, double line_gbps, int hosts, const char *from,
			     const char *why, char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	if (hosts < 2 || !(line_gbps > 0) || !isfinite(busbw_GBps) || !(busbw_GBps > line_gbps / 8))
		return 0;
	snprintf(buf, len, "busbw %.3f GB/s above the line rate %.3f GB/s%s%s%s%s%s", busbw_GBps, line_gbps / 8,
		 from && *from ? " (" : "", from ? from : "", from && *from ? ")" : "", why && *why ? ": " : "",
		 why ? why : "");
	return 1;
}
