/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Results: CSV rows (schema in results/README.md) and the human table. The
 * library formats; only the driver decides what to print and where.
 */
#ifndef GDRB_REPORT_H
#define GDRB_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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
	/* What a library says of the path it took (NCCL); NULL or "": none. */
	const char *transport;          /* "NET/IB+P2P", or "unknown" (the note says why) */
	const char *gdr_connections;    /* "16/16": network connections with GPUDirect RDMA of all */
	const char *library;            /* "NCCL 2.28.9", "NCCL 2.28.9 (simulated)" */
	/* A collective's: "out-of-place" or "in-place" (--in-place); NULL or "": no such choice. */
	const char *placement;
	/*
	 * How a library's calls were timed (NCCL): "batch", "call" or "graph", and the calls per
	 * synchronisation (0: none); NULL or "": not such a library.
	 */
	const char *timing;
	unsigned calls_per_sync;
	/* What NCCL chose at the size: "Ring", "LL128", channels (0: not known); NULL or "": not known. */
	const char *algorithm, *protocol;
	unsigned channels;
};

/* The CSV header line, without newline. */
const char *gdrb_csv_header(void);
/* The CSV schema's version (csv_schema.def's last GDRB_CSV_VERSION_END). */
int gdrb_csv_version(void);

/*
 * A CSV file being appended to. Every line goes in with one write(2) on an
 * O_APPEND descriptor; after the first failed or short write the partial line
 * is cut off, the error is said once, and later rows are dropped, so the file
 * only ever holds complete lines.
 */
struct gdrb_csv {
	int fd;
	char *path;
	bool failed;    /* a write failed (and was said): later rows are dropped */
	/* write(2); the unit tests put a writer here that takes part of a line */
	ssize_t (*write)(int fd, const void *buf, size_t len);
};

/*
 * Open PATH, an output of this run, for writing with FLAGS (O_WRONLY or
 * O_RDWR, O_APPEND, O_CREAT, O_TRUNC): never through a symbolic link, never
 * a FIFO, device, socket or directory (judged before it is opened, so
 * nothing blocks), never a file another output of this process has open
 * under any name (O_TRUNC applies only after that check). Returns the
 * descriptor, or GDRB_ERR_USAGE after one line naming WHAT ("--csv") and
 * PATH. Call gdrb_out_forget(fd) before closing it.
 */
int gdrb_out_open(const char *path, const char *what, int flags);
void gdrb_out_forget(int fd);

/*
 * Open PATH for appending, as gdrb_out_open() opens an output. A new or
 * empty file gets the header; an existing
 * one must start with the same header, end in a newline and use LF line
 * ends. Returns 0; GDRB_ERR_USAGE after one line naming the problem (missing
 * directory, other header, torn last row, CRLF; the file is left as it was);
 * GDRB_ERR when the header could not be written.
 */
int gdrb_csv_open(const char *path, struct gdrb_csv **out);

/*
 * Another file of the same discipline (the counter file): its header and what
 * the refusals call it ("counter file"). Opened by gdrb_out_open(), as every
 * output is: never through a link, never a FIFO or a device.
 */
struct gdrb_csv_kind {
	const char *what;
	const char *header;     /* without newline */
};
int gdrb_csv_open_kind(const char *path, const struct gdrb_csv_kind *kind, struct gdrb_csv **out);

/* One row, or one newline-terminated line, in one write. 0 or GDRB_ERR (said once). */
int gdrb_csv_append(struct gdrb_csv *csv, const struct gdrb_row *row);
int gdrb_csv_append_line(struct gdrb_csv *csv, const char *line, size_t len);

/* Close; GDRB_ERR when a write or the close failed. NULL is a no-op. */
int gdrb_csv_close(struct gdrb_csv *csv);

/* Format one row, newline-terminated, onto f (gdrb_csv_append puts it in the file). */
int gdrb_csv_write(FILE *f, const struct gdrb_row *row);

/*
 * A cell a spreadsheet would take for a formula starts with one of these
 * (OWASP's list); every text cell the binaries write that does (a --label, a
 * host, GPU or NIC name) gets a leading apostrophe, as gdrbtool's csv_text()
 * does, so that it opens as the text it is.
 */
#define GDRB_CSV_FORMULA_LEAD "=+-@\t\r"
bool gdrb_csv_formula(const char *s);

/* Write s as one CSV field (quoted only when it needs to be, inert for spreadsheets). */
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

/*
 * Results on stdout: flush and check for a write error (said once, however
 * often it is seen); close at the end of main. 0 or GDRB_ERR.
 */
int gdrb_stdout_flush(void);
int gdrb_stdout_close(void);

/* Number formatting for cells: "n/a" for NAN, fixed decimals otherwise. */
char *gdrb_fmt_num(char *buf, size_t len, double v, int decimals);

#endif
