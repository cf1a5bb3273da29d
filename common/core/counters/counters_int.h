/* SPDX-License-Identifier: BSD-3-Clause */
/* The counters' state, shared by counters.c (reading) and counters_out.c (the run's end). */
#ifndef GDRB_COUNTERS_INT_H
#define GDRB_COUNTERS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "gdrb_counters.h"

/* One counter over the run's readings. */
struct cnt_track {
	uint64_t before;        /* the first reading (when first_state is OK) */
	uint64_t last;          /* the latest good reading (when have_last) */
	uint64_t rise;          /* the increases between good readings, added (saturating) */
	uint8_t first_state, last_state;        /* enum gdrb_cnt_read */
	bool have_last;
	bool unreadable, vanished;      /* at some reading */
	bool reset;             /* a good reading below the one before: a wrap or a reset */
	bool changed;           /* a link value that moved */
};

/* The durations of this many readings are kept for their median. */
#define CNT_TIMED_MAX 1024

struct gdrb_counters {
	struct gdrb_cnt_set set;
	uint64_t *value;        /* one reading, set.n of each */
	uint8_t *state;
	struct cnt_track *track;
	unsigned long readings;
	char run_start[32];     /* UTC, at the first reading */
	uint64_t run_ns;        /* CLOCK_REALTIME in ns at the first reading: the run id's */
	double took_us[CNT_TIMED_MAX];
	size_t ntook;
	char what[1024];        /* the header's line */
	char netdevs[256];      /* the header's RoCE netdevs: "enp0s0np0 31 of 140, ..." */
	unsigned nnetdevs;
	uint64_t last_ns;       /* when the latest reading was taken (gdrb_mono_ns) */
	uint64_t lifespan_ms;   /* the largest hw_counters/lifespan read: the kernel's cache of a reading */
};

/* The run id of the counter file's rows, "HOST:PID:NS": rank 0's host, its pid and the time
 * in ns of its first reading (now, where it read none). Rank 0 writes every rank's rows, so one
 * run's rows share it; no two launches do, even within one second. */
#define GDRB_CNT_RUN_ID_MAX 128
void gdrb_cnt_run_id(const struct gdrb_counters *cs, const char *host, char *buf, size_t len);

/* The state a counter's row gets from its track. */
enum cnt_row_state { ROW_OK, ROW_UNREADABLE, ROW_RESET, ROW_VANISHED };
enum cnt_row_state gdrb_cnt_row_state(const struct cnt_track *t);
const char *gdrb_cnt_row_state_name(enum cnt_row_state s);

#endif
