/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Results: CSV rows (schema in results/README.md) and the human table. The
 * library formats; only the driver decides what to print and where.
 */
#ifndef GDRB_REPORT_H
#define GDRB_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gdrb_stats.h"

/* Row status values. */
#define GDRB_ST_OK "ok"
#define GDRB_ST_UNSUPPORTED "unsupported"
#define GDRB_ST_FAILED "failed"
#define GDRB_ST_INVALID "invalid-data"

/* Quality values: "few-samples", "noisy", both joined by '+', or "ok" (results/README.md). */
#define GDRB_Q_OK "ok"
#define GDRB_Q_FEW "few-samples"
#define GDRB_Q_NOISY "noisy"

struct gdrb_row {
	const char *benchmark, *layer, *mem, *path, *reg, *pair;
	size_t stage_chunk;             /* pipelined staging: fragment bytes; 0: not pipelined */
	unsigned stage_slots;           /* pipelined staging: bounce slots per direction */
	unsigned window;                /* bandwidth: messages per iteration; 0: not windowed */
	const char *buffers;            /* bandwidth: "slots" or "single"; NULL: not windowed */
	size_t size;
	uint64_t iterations;
	struct gdrb_stats lat;          /* microseconds */
	double bw_GBps;                 /* NAN: not applicable */
	double algbw_GBps, busbw_GBps;  /* collectives only; NAN otherwise */
	/* User + system CPU time over the timed part, % of its wall time (threads add up); NAN: none. */
	double cpu_initiator_pct, cpu_responder_pct;
	int ranks, hosts;
	const char *gpu, *nic;
	const char *link_layer;         /* "InfiniBand", "Ethernet"; NULL or "": none */
	double link_gbps;               /* port rate; 0: none or unknown */
	const char *gpu_nic_dist;       /* "PIX" ... "SYS", "unknown"; NULL or "": none */
	const char *status;
	uint64_t errors;
	const char *quality;            /* GDRB_Q_*; NULL: not measured */
	const char *note;
	const char *timestamp;          /* NULL: now */
};

/* The CSV header line, without newline. */
const char *gdrb_csv_header(void);

/*
 * Open FILE for appending. A new or empty file gets the header; an existing
 * one must start with the same header. Returns NULL after one line naming
 * the problem (missing directory, other header, permissions).
 */
FILE *gdrb_csv_open(const char *path);

/* One row, newline-terminated, flushed to the kernel at once. */
int gdrb_csv_write(FILE *f, const struct gdrb_row *row);

/* Write s as one CSV field (quoted only when it needs to be). */
void gdrb_csv_field(FILE *f, const char *s);

/* UTC ISO 8601 timestamp "2026-11-21T04:41:00Z". */
char *gdrb_timestamp(char *buf, size_t len);

/*
 * Table rows: cells are right-aligned in columns whose widths are those of
 * the titles (at least GDRB_TABLE_MIN_WIDTH).
 */
#define GDRB_TABLE_MIN_WIDTH 10
#define GDRB_TABLE_MAX_COLS 16

struct gdrb_table {
	size_t ncols;
	const char *titles[GDRB_TABLE_MAX_COLS];
	int width[GDRB_TABLE_MAX_COLS];
};

void gdrb_table_init(struct gdrb_table *t, size_t ncols, const char *const *titles);
void gdrb_table_print_header(FILE *f, const struct gdrb_table *t);
void gdrb_table_print_row(FILE *f, const struct gdrb_table *t, const char *const *cells);

/* Number formatting for cells: "n/a" for NAN, fixed decimals otherwise. */
char *gdrb_fmt_num(char *buf, size_t len, double v, int decimals);

#endif
