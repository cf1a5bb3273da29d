/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options: one params struct filled by getopt_long from option groups that
 * every binary shares. A binary names the groups it takes.
 */
#ifndef GDRB_OPTS_H
#define GDRB_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gdrb_mem.h"
#include "gdrb_size.h"

/* A numeric default as a string, for help texts: GDRB_STR(GDRB_DEF_WINDOW). */
#define GDRB_STR_(x) #x
#define GDRB_STR(x) GDRB_STR_(x)

enum gdrb_opt_group {
	GDRB_OPTG_COMMON = 1u << 0,   /* sizes, iterations, time, csv, validate, ... */
	GDRB_OPTG_MEM = 1u << 1,      /* --mem, --gpu */
	GDRB_OPTG_WINDOW = 1u << 2,   /* --window (bandwidth benchmarks) */
	GDRB_OPTG_REDUCE = 1u << 3,   /* --op, --dtype (reducing collectives) */
	GDRB_OPTG_ROOT = 1u << 4,     /* --root (rooted collectives) */
	GDRB_OPTG_INPLACE = 1u << 5,  /* --in-place */
	GDRB_OPTG_SIZES = 1u << 6,    /* -m: implied unless GDRB_OPTG_NO_SIZES */
	GDRB_OPTG_NO_SIZES = 1u << 7, /* the benchmark has no message size (barrier) */
	GDRB_OPTG_VERBS = 1u << 8,    /* --ib-dev, --gid-index, --mtu, --qps, --reg, ... */
	GDRB_OPTG_BIDIR = 1u << 9,    /* -b: both ranks of a pair send at once */
	GDRB_OPTG_COMPLETION = 1u << 10, /* --completion (RDMA write latency) */
	GDRB_OPTG_MPI = 1u << 11,     /* --mpi-cuda (benchmarks that hand buffers to MPI) */
	GDRB_OPTG_SYNC = 1u << 12,    /* --sync (collectives that move data) */
};

/* Where the messages of a window live: a slot each, or all in one buffer (OMB's default). */
enum gdrb_buffers { GDRB_BUFFERS_SLOTS, GDRB_BUFFERS_SINGLE, GDRB_BUFFERS_COUNT };
/* What separates two timed calls of a collective. */
enum gdrb_sync { GDRB_SYNC_BARRIER, GDRB_SYNC_NONE, GDRB_SYNC_COUNT };

extern const char *const gdrb_buffers_names[GDRB_BUFFERS_COUNT];
extern const char *const gdrb_sync_names[GDRB_SYNC_COUNT];

/* How the receiver of an RDMA write latency test learns that a message arrived. */
enum gdrb_completion {
	GDRB_COMPLETION_AUTO,       /* poll for host and pinned memory, immediate for device memory */
	GDRB_COMPLETION_POLL,       /* spin on the last byte of the receive buffer */
	GDRB_COMPLETION_IMM,        /* an RDMA write with immediate and a receive completion */
	GDRB_COMPLETION_COUNT
};

extern const char *const gdrb_completion_names[GDRB_COMPLETION_COUNT];

/* How a verbs rank waits for completions. */
enum gdrb_wait {
	GDRB_WAIT_AUTO,             /* event for the target of one-way write and read bandwidth, else spin */
	GDRB_WAIT_SPIN,             /* poll the completion queues */
	GDRB_WAIT_EVENT,            /* sleep on a completion channel (ibv_get_cq_event) */
	GDRB_WAIT_COUNT
};

extern const char *const gdrb_wait_names[GDRB_WAIT_COUNT];

enum gdrb_dtype { GDRB_INT8, GDRB_INT32, GDRB_INT64, GDRB_FLOAT, GDRB_DOUBLE, GDRB_DTYPE_COUNT };
enum gdrb_redop { GDRB_SUM, GDRB_PROD, GDRB_MIN, GDRB_MAX, GDRB_REDOP_COUNT };

extern const char *const gdrb_dtype_names[GDRB_DTYPE_COUNT];
extern const size_t gdrb_dtype_sizes[GDRB_DTYPE_COUNT];
extern const char *const gdrb_redop_names[GDRB_REDOP_COUNT];

/* Defaults, shown by --help from these same constants. */
#define GDRB_DEF_SIZES "8:1G"
#define GDRB_DEF_ITERS 10000
#define GDRB_DEF_WARMUP 100
#define GDRB_DEF_MIN_ITERS 1000
#define GDRB_FLOOR_ITERS 3          /* timed iterations of a size too long for --min-iters */
#define GDRB_MIN_STRETCH 4          /* --min-iters holds where it takes at most this x the budget */
#define GDRB_MAX_STRETCH 10         /* no size runs past this x the budget (then: few-samples) */
#define GDRB_DEF_TIME_PER_SIZE 0.3
#define GDRB_DEF_TIMEOUT 60.0
#define GDRB_DEF_WINDOW 64
#define GDRB_DEF_TX_DEPTH 128
#define GDRB_DEF_QPS 1
#define GDRB_MAX_QPS 64

struct gdrb_params {
	struct gdrb_sizes sizes;
	uint64_t iters;             /* most timed iterations per size */
	uint64_t warmup;            /* most warm-up iterations per size */
	uint64_t min_iters;         /* fewest timed iterations of a size they fit (driver.c) */
	double time_per_size;       /* seconds of timed iterations per size (budget) */
	double timeout;             /* seconds without progress before giving up; 0: never */
	enum gdrb_mem_kind mem;
	int gpu;                    /* -1: local rank modulo GPU count */
	unsigned window;            /* messages in flight per iteration */
	size_t window_bytes;        /* most bytes of a window's slots (gdrb_window_at) */
	bool validate;
	const char *csv_path;       /* NULL: no CSV */
	const char *label;          /* free text copied to the CSV note column */
	int verbose;
	bool monotonic_clock;       /* do not use the TSC */
	enum gdrb_redop op;         /* reducing collectives */
	enum gdrb_dtype dtype;
	int root;                   /* rooted collectives */
	bool in_place;
	/* verbs */
	const char *ib_dev;         /* NULL: the active port nearest this rank's GPU */
	unsigned ib_port;           /* 0: the device's first active port */
	int gid_index;              /* -1: a RoCE v2 GID chosen automatically */
	int mtu;                    /* bytes; 0: the port's active MTU */
	unsigned tx_depth;          /* send queue depth per QP */
	unsigned qps;               /* data QPs per pair */
	unsigned sl, tclass;
	int reg_mode;               /* enum gdrb_reg_mode */
	bool relaxed_ordering;
	int completion;             /* enum gdrb_completion */
	int wait;                   /* enum gdrb_wait */
	bool bidir;                 /* -b */
	int mpi_cuda;               /* enum gdrb_mpi_cuda */
	int staging;                /* enum gdrb_staging */
	size_t stage_chunk;         /* pipelined staging's fragment size */
	int buffers;                /* enum gdrb_buffers */
	int sync;                   /* enum gdrb_sync */
};

struct gdrb_bench;

enum {
	GDRB_PARSE_RUN = 0,         /* go on and measure */
	GDRB_PARSE_EXIT = 1,        /* --help or --version printed: exit 0 */
};

/*
 * Parse argv for a binary taking `groups`. Returns GDRB_PARSE_RUN,
 * GDRB_PARSE_EXIT, or GDRB_ERR_USAGE after printing one line that names the
 * option and its accepted form.
 */
int gdrb_opts_parse(int argc, char **argv, unsigned groups, const char *summary,
		    struct gdrb_params *p);
void gdrb_opts_defaults(struct gdrb_params *p);
/*
 * One option's value, by its long name ("sizes", "window", "mem"), parsed into
 * p as gdrb_opts_parse would, with the same one-line error (GDRB_ERR_USAGE):
 * for tools that take a few of the benchmarks' options (gdrb_doctor).
 */
int gdrb_opts_value(const char *name, const char *arg, struct gdrb_params *p);
void gdrb_opts_usage(FILE *out, unsigned groups, const char *summary);

#endif
