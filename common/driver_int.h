/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver's own state, shared by driver.c (measuring) and driver_output.c (printing). */
#ifndef GDRB_DRIVER_INT_H
#define GDRB_DRIVER_INT_H

#include <stdint.h>
#include <stdio.h>

#include "gdrb_driver.h"
#include "gdrb_report.h"
#include "gdrb_stats.h"

struct rank_result;

/* A size is flagged noisy when its p99 is more than this many times its median. */
#define GDRB_NOISY_RATIO 5.0

/* A measured (or skipped) variant at one size, as rank 0 sees it. */
struct outcome {
	const char *status;
	uint64_t iters, errors;
	const char *quality;    /* GDRB_Q_* (gdrb_report.h); NULL: not measured */
	struct gdrb_stats lat;  /* per message, us */
	double bw_GBps;
	double algbw_GBps, busbw_GBps;  /* collectives; NAN otherwise */
	double cpu_init_pct, cpu_resp_pct; /* busiest initiator's and responder's CPU, % of wall; NAN: none */
};

struct run {
	struct gdrb_ctx c;
	struct gdrb_bench bidir;        /* the descriptor as -b makes it */
	struct gdrb_params p;
	struct gdrb_csv *csv;
	int exit_code;
	int corrupt_rank;       /* fault injection for the checker tests; -1: off */
	/* Load injection for the iteration plan's tests: rank 0 sleeps stall_us before iterations 0, every, 2 x every, ... of each size; 0: off. */
	unsigned long stall_us, stall_every;
	bool window_warned;     /* the transport's window cap was said on stderr */
	double *samples;
	size_t samples_cap;
	double *all_samples;    /* rank 0: every rank's samples */
	struct rank_result *all_results;
	struct gdrb_table table;
};

/* Buffers (driver_buffers.c): the room check before allocating, then allocation and release. */
int gdrb_drv_check_room(struct run *r);
int gdrb_drv_alloc_buffers(struct run *r);
void gdrb_drv_free_buffers(struct gdrb_ctx *c);

/* Rank 0's output: the header, one table line per size (and pair), CSV rows. */
void gdrb_drv_table_setup(struct run *r);
void gdrb_drv_print_header(struct run *r);
void gdrb_drv_table_line(struct run *r, size_t size, const char *pair, const struct outcome *o);
void gdrb_drv_csv_row(struct run *r, const struct gdrb_variant *v, size_t size, const char *pair,
		      const struct outcome *o);

#endif
