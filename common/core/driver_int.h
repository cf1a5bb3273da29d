/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's own state, shared by driver.c (setup and the sweep of sizes and
 * paths), driver_timing.c (the timed part of a measurement), driver_buffers.c
 * and driver_output.c (printing).
 */
#ifndef GDRB_DRIVER_INT_H
#define GDRB_DRIVER_INT_H

#include <stdint.h>
#include <stdio.h>

#include "gdrb_counters.h"
#include "gdrb_driver.h"
#include "gdrb_figures.h"
#include "gdrb_report.h"
#include "gdrb_stats.h"

/* What each rank reports to rank 0 after one size and variant. */
struct rank_result {
	int32_t initiator;
	int32_t pair;
	int32_t failed;
	int32_t pad;
	uint64_t errors;
	double total_us;        /* sum of timed samples */
	double bytes_per_iter;  /* payload bytes this rank's pair moves per iteration */
	double cpu_pct;         /* user + system CPU time over the timed batches, % of their wall time */
	struct gdrb_cnt_rise rise;      /* the error counters that rose while it was measured */
};

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
	/* Load injection for the iteration plan's tests: rank 0 sleeps stall_us before iterations 0, every, 2 x every, ... of each size; 0: off. */
	unsigned long stall_us, stall_every;
	bool window_warned;     /* the transport's window cap was said on stderr */
	/* The last size's plan as it ran, for -v: warm-up iterations; the slowest rank's first
	 * (cold) warm-up iteration and its median warm-up iteration, which plans the minimum, in
	 * seconds; and its seconds since the size began when its last timed batch began and at
	 * its end. */
	uint64_t plan_warmup;
	double plan_cold_s, plan_median_s, plan_last_batch_s, plan_size_s;
	double *samples;
	size_t samples_cap;
	double *all_samples;    /* rank 0: every rank's samples */
	struct rank_result *all_results;
	struct gdrb_table table;
	struct gdrb_counters *counters; /* read around every measurement (gdrb_counters.h) */
	struct gdrb_counters_file *counter_file; /* rank 0, with --csv: beside the CSV */
	char counters_note[512];        /* rank 0: the note of the rows being written */
	bool aborted;                   /* a measurement failed and took every rank down */
	size_t stage_chunk;             /* pipelined staging as it runs: fragment bytes, slots */
	unsigned stage_slots;
	char stage_why[384];            /* the header's words on where they came from */
};

/* Buffers (driver_buffers.c): the room check before allocating, then allocation and release. */
int gdrb_drv_check_room(struct run *r);
/* Whether a staged path runs that is pipelined (or, false, serial). */
bool gdrb_drv_any_variant(const struct gdrb_ctx *c, bool pipelined);
int gdrb_drv_alloc_buffers(struct run *r);
/*
 * Pipelined staging's fragment and slots (the options', or chosen from rates
 * measured here on every rank, untimed: collective, call it on every rank or
 * none), then its rings. 0 where no pipelined path runs.
 */
int gdrb_drv_stage_open(struct run *r);
void gdrb_drv_free_buffers(struct gdrb_ctx *c);

/*
 * The timed part of one size and variant on this rank (driver_timing.c): warm-up,
 * then the timed batches, the ranks agreeing between batches; -c's checks where
 * --validate puts them. The timed iterations in *n, the fewest planned in *min,
 * wrong bytes added to *errors, the samples in r->samples, their sum in *total_us,
 * this thread's CPU over the timed batches in *cpu_pct. 0 or a negative code.
 */
int gdrb_drv_measure(struct run *r, size_t size, uint64_t *n, uint64_t *min, uint64_t *errors,
		     double *total_us, double *cpu_pct);

/* Rank 0: the gathered results and samples of one size and variant (r->all_results,
 * r->all_samples: n samples per rank) into the aggregate and per-pair outcomes. */
void gdrb_drv_summarise(struct run *r, size_t size, uint64_t n, uint64_t want,
			struct outcome *agg, struct outcome *pairs);

/* Rank 0's output: the header, one table line per size (and pair), CSV rows. */
void gdrb_drv_table_setup(struct run *r);
void gdrb_drv_print_header(struct run *r);
void gdrb_drv_table_line(struct run *r, size_t size, const char *pair, const struct outcome *o);
void gdrb_drv_csv_row(struct run *r, const struct gdrb_variant *v, size_t size, const char *pair,
		      const struct outcome *o);

#endif
