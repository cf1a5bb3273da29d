/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The arithmetic that turns measured samples into the reported figures, as pure
 * functions (tests/unit/test_figures.c checks each factor): what one sample means per
 * message, the bytes one iteration moves, bandwidth, the collectives' geometry and
 * bus factors, the blocked collectives' size rounding, and the quality column.
 */
#ifndef GDRB_FIGURES_H
#define GDRB_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrb_driver.h"

/* Per-message time of one sample: half a round trip (ping-pong), a window's share (bandwidth). */
double gdrb_fig_sample_scale(enum gdrb_traffic traffic, enum gdrb_metric metric, unsigned window);

/* Payload bytes one iteration moves: window x size, both ways for a round trip or a
 * bidirectional window; a collective's whole vector once. */
double gdrb_fig_bytes_per_iter(enum gdrb_traffic traffic, size_t size, unsigned window);

/* GB/s (1e9 B/s) of n iterations of bytes_per_iter in total_us; 0 when no time passed. */
double gdrb_fig_bw_GBps(double bytes_per_iter, uint64_t n, double total_us);

/* A collective across ranks: avg is the mean of the per-rank means, min and max the
 * fastest and slowest rank's mean; algbw = size / avg, busbw = algbw x bus_factor. */
struct gdrb_fig_coll {
	double avg_us, min_us, max_us;
	double algbw_GBps, busbw_GBps;  /* NAN for size 0 (the barrier) */
};

/* total_us: each rank's total time of n calls, one every stride bytes (an array of
 * doubles: sizeof(double); a field of an array of structs: the struct's size). */
void gdrb_fig_collective(const double *total_us, size_t stride, int nranks, uint64_t n,
			 size_t size, double bus_factor, struct gdrb_fig_coll *out);

/* The bus factors (nccl-tests' convention): 2(n-1)/n, (n-1)/n, 1; which collective takes
 * which: the collectives' table, common/mpi/coll_table.c. */
double gdrb_bus_allreduce(int n);
double gdrb_bus_spread(int n);
double gdrb_bus_one(int n);

/* A blocked collective's size: down to a multiple of ranks x element size (else of the
 * element size), at least one unit. */
size_t gdrb_fig_coll_size(size_t size, size_t elem, int nranks, bool blocked);

/*
 * A multi-node collective's busbw against the line rate its bytes crossed: on more than
 * one host, a busbw above line_gbps / 8 GB/s is more than a ring (each byte through the
 * network once) can move. Then buf gets "busbw X GB/s above the line rate Y GB/s (from):
 * why" and 1 is returned; else 0 and "" (one host, no rate, no busbw, not above).
 */
int gdrb_fig_busbw_over_line(double busbw_GBps, double line_gbps, int hosts, const char *from,
			     const char *why, char *buf, size_t len);

/* Above this many times the median, a p99 makes the row "noisy". */
#define GDRB_NOISY_RATIO 5.0

/* The quality column: fewer samples than planned, a spread-out tail, both, or ok. */
const char *gdrb_fig_quality(uint64_t n, uint64_t want, double p50, double p99);

#endif
