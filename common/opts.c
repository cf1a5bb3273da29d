/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_boot.h"
#include "gdrb_log.h"
#include "gdrb_opts.h"
#include "gdrb_reg.h"
#include "gdrb_stage.h"

enum {
	OPT_CSV = 0x100,
	OPT_LABEL,
	OPT_MEM,
	OPT_GPU,
	OPT_CLOCK,
	OPT_OP,
	OPT_DTYPE,
	OPT_ROOT,
	OPT_IN_PLACE,
	OPT_IB_DEV,
	OPT_GID_INDEX,
	OPT_MTU,
	OPT_TX_DEPTH,
	OPT_QPS,
	OPT_SL,
	OPT_TCLASS,
	OPT_REG,
	OPT_NO_RELAXED,
	OPT_COMPLETION,
	OPT_MPI_CUDA,
	OPT_STAGING,
	OPT_STAGE_CHUNK,
	OPT_MIN_ITERS,
	OPT_BUFFERS,
	OPT_SYNC,
	OPT_WINDOW_BYTES,
	OPT_WAIT,
	OPT_EVENT,
};

const char *const gdrb_dtype_names[GDRB_DTYPE_COUNT] = { "int8", "int32", "int64", "float", "double" };
const size_t gdrb_dtype_sizes[GDRB_DTYPE_COUNT] = { 1, 4, 8, 4, 8 };
const char *const gdrb_completion_names[GDRB_COMPLETION_COUNT] = { "auto", "poll", "imm" };
const char *const gdrb_redop_names[GDRB_REDOP_COUNT] = { "sum", "prod", "min", "max" };
const char *const gdrb_buffers_names[GDRB_BUFFERS_COUNT] = { "slots", "single" };
const char *const gdrb_sync_names[GDRB_SYNC_COUNT] = { "barrier", "none" };
const char *const gdrb_wait_names[GDRB_WAIT_COUNT] = { "auto", "spin", "event" };

struct opt_desc {
	struct option lo;
	int short_opt;
	unsigned group;
	const char *arg;        /* metavariable, NULL for flags */
	const char *help;       /* "%s" in help is replaced by the default */
};

static const struct opt_desc opt_table[] = {
	{ { "sizes", required_argument, NULL, 'm' }, 'm', GDRB_OPTG_SIZES, "SIZES",
	  "message sizes: MIN:MAX (powers of two) or a list like 8,4K,1M; K,M,G,T or KiB,MiB,GiB,TiB (default " GDRB_DEF_SIZES ")" },
	{ { "iters", required_argument, NULL, 'n' }, 'n', GDRB_OPTG_COMMON, "N",
	  "most timed iterations per size (default " GDRB_STR(GDRB_DEF_ITERS) ")" },
	{ { "min-iters", required_argument, NULL, OPT_MIN_ITERS }, 0, GDRB_OPTG_COMMON, "N",
	  "fewest timed iterations per size, where the warm-up (or the timed rate so far) says they take at most " GDRB_STR(GDRB_MIN_STRETCH) "x the time budget (longer sizes: as many as the budget holds, at least " GDRB_STR(GDRB_FLOOR_ITERS) "); a size that still falls short is flagged few-samples (default " GDRB_STR(GDRB_DEF_MIN_ITERS) ")" },
	{ { "warmup", required_argument, NULL, 'w' }, 'w', GDRB_OPTG_COMMON, "N",
	  "most warm-up iterations per size, in growing batches while they take under a tenth of the time budget; their median (slowest rank's) plans the timed iterations (default " GDRB_STR(GDRB_DEF_WARMUP) ")" },
	{ { "time-per-size", required_argument, NULL, 't' }, 't', GDRB_OPTG_COMMON, "SEC",
	  "time budget of timed iterations per size, checked between batches agreed across ranks; --min-iters may stretch it, never a size (warm-up included) past " GDRB_STR(GDRB_MAX_STRETCH) "x plus one iteration (default " GDRB_STR(GDRB_DEF_TIME_PER_SIZE) ")" },
	{ { "timeout", required_argument, NULL, 'T' }, 'T', GDRB_OPTG_COMMON, "SEC",
	  "give up when a peer makes no progress for SEC seconds at any size; 0: never (default " GDRB_STR(GDRB_DEF_TIMEOUT) ")" },
	{ { "validate", no_argument, NULL, 'c' }, 'c', GDRB_OPTG_COMMON, NULL,
	  "check every received byte against a pattern that changes with size and iteration (outside the timed region)" },
	{ { "csv", required_argument, NULL, OPT_CSV }, 0, GDRB_OPTG_COMMON, "FILE",
	  "append one row per size and path to FILE (header written once; default: none)" },
	{ { "label", required_argument, NULL, OPT_LABEL }, 0, GDRB_OPTG_COMMON, "TEXT",
	  "free text stored in the CSV note column (default: none)" },
	{ { "mem", required_argument, NULL, OPT_MEM }, 0, GDRB_OPTG_MEM, "KIND",
	  "buffer memory: host, pinned or device (default host)" },
	{ { "gpu", required_argument, NULL, OPT_GPU }, 0, GDRB_OPTG_MEM, "N",
	  "CUDA device for --mem device (default: local rank modulo the GPU count)" },
	{ { "staging", required_argument, NULL, OPT_STAGING }, 0, GDRB_OPTG_MEM, "MODE",
	  "the staged path with --mem device: pipelined (fragments, copies overlapped with the transfer), serial (whole-message copies, then the transfer) or both (default pipelined)" },
	{ { "stage-chunk", required_argument, NULL, OPT_STAGE_CHUNK }, 0, GDRB_OPTG_MEM, "SIZE",
	  "fragment size of pipelined staging, 4K to 1G (default " GDRB_DEF_STAGE_CHUNK ", " GDRB_STR(GDRB_STAGE_SLOTS) " bounce slots per direction)" },
	{ { "window", required_argument, NULL, 'W' }, 'W', GDRB_OPTG_WINDOW, "N",
	  "messages in flight per iteration; with --buffers slots reduced where window x size would pass --window-bytes (default " GDRB_STR(GDRB_DEF_WINDOW) ")" },
	{ { "window-bytes", required_argument, NULL, OPT_WINDOW_BYTES }, 0, GDRB_OPTG_WINDOW, "SIZE",
	  "most bytes of a window's slots per buffer: at each size the window is the smaller of -W and SIZE / size (at least 1), whatever the other sizes; the CSV note says where it cut the window (default " GDRB_DEF_WINDOW_BYTES ")" },
	{ { "buffers", required_argument, NULL, OPT_BUFFERS }, 0, GDRB_OPTG_WINDOW, "MODE",
	  "where a window's messages live: slots (one buffer slot per message, as NIC and GPU traffic does) or single (every message from and into one buffer, as the OSU Micro-Benchmarks do by default; it stays in cache) (default slots)" },
	{ { "sync", required_argument, NULL, OPT_SYNC }, 0, GDRB_OPTG_SYNC, "MODE",
	  "between two timed calls: barrier (an untimed MPI barrier, so each sample is one call's completion time on that rank, as OMB does) or none (back to back, as nccl-tests does) (default barrier)" },
	{ { "op", required_argument, NULL, OPT_OP }, 0, GDRB_OPTG_REDUCE, "OP",
	  "reduction: sum, prod, min or max (default sum)" },
	{ { "dtype", required_argument, NULL, OPT_DTYPE }, 0, GDRB_OPTG_REDUCE, "TYPE",
	  "element type: int8, int32, int64, float or double (default float); sizes must be multiples of its size" },
	{ { "root", required_argument, NULL, OPT_ROOT }, 0, GDRB_OPTG_ROOT, "N",
	  "root rank (default 0)" },
	{ { "in-place", no_argument, NULL, OPT_IN_PLACE }, 0, GDRB_OPTG_INPLACE, NULL,
	  "MPI_IN_PLACE: the result overwrites the input buffer" },
	{ { "mpi-cuda", required_argument, NULL, OPT_MPI_CUDA }, 0, GDRB_OPTG_MPI, "MODE",
	  "whether MPI is handed device pointers: auto (MPIX_Query_cuda_support(), else MPIX_CUDA_AWARE_SUPPORT), yes or no; yes on an MPI that is not CUDA-aware crashes with --mem device (default auto)" },
	{ { "bidir", no_argument, NULL, 'b' }, 'b', GDRB_OPTG_BIDIR, NULL,
	  "bidirectional: both ranks of a pair send a window to each other at once" },
	{ { "ib-dev", required_argument, NULL, OPT_IB_DEV }, 0, GDRB_OPTG_VERBS, "NAME[:PORT]",
	  "RDMA device and port (default: the active port nearest this rank's GPU, else the first active port)" },
	{ { "gid-index", required_argument, NULL, OPT_GID_INDEX }, 0, GDRB_OPTG_VERBS, "N",
	  "GID index for RoCE (default: a RoCE v2 GID, IPv4-mapped before link-local)" },
	{ { "mtu", required_argument, NULL, OPT_MTU }, 0, GDRB_OPTG_VERBS, "BYTES",
	  "path MTU: 256, 512, 1024, 2048 or 4096 (default: the port's active MTU)" },
	{ { "tx-depth", required_argument, NULL, OPT_TX_DEPTH }, 0, GDRB_OPTG_VERBS, "N",
	  "send queue depth per QP (default " GDRB_STR(GDRB_DEF_TX_DEPTH) ")" },
	{ { "qps", required_argument, NULL, OPT_QPS }, 0, GDRB_OPTG_VERBS, "N",
	  "data QPs per pair; a window's messages go round-robin over them, latency uses the first (default " GDRB_STR(GDRB_DEF_QPS) ")" },
	{ { "sl", required_argument, NULL, OPT_SL }, 0, GDRB_OPTG_VERBS, "N",
	  "service level 0-15 (default 0)" },
	{ { "tclass", required_argument, NULL, OPT_TCLASS }, 0, GDRB_OPTG_VERBS, "N",
	  "traffic class 0-255 of the GRH (RoCE DSCP << 2; default 0)" },
	{ { "reg", required_argument, NULL, OPT_REG }, 0, GDRB_OPTG_VERBS, "MODE",
	  "device memory registration: auto (dma-buf, then peer memory), dmabuf or peermem (default auto)" },
	{ { "no-relaxed-ordering", no_argument, NULL, OPT_NO_RELAXED }, 0, GDRB_OPTG_VERBS, NULL,
	  "register memory without IBV_ACCESS_RELAXED_ORDERING" },
	{ { "completion", required_argument, NULL, OPT_COMPLETION }, 0, GDRB_OPTG_COMPLETION, "MODE",
	  "how the receiver learns a write arrived: poll (spin on the buffer's last byte), imm (write with immediate, receive completion) or auto (poll, imm for device memory; default auto)" },
	{ { "wait", required_argument, NULL, OPT_WAIT }, 0, GDRB_OPTG_VERBS, "MODE",
	  "how a rank waits for completions: spin (poll the completion queues), event (sleep on a completion channel until one is reported) or auto (event for the target of one-way write and read bandwidth, which only waits for the end; spin elsewhere) (default auto)" },
	{ { "event", no_argument, NULL, OPT_EVENT }, 0, GDRB_OPTG_VERBS, NULL,
	  "the same as --wait event (perftest's --use_event)" },
	{ { "clock", required_argument, NULL, OPT_CLOCK }, 0, GDRB_OPTG_COMMON, "SRC",
	  "timer: auto (invariant TSC where present) or monotonic (default auto)" },
	{ { "verbose", no_argument, NULL, 'v' }, 'v', GDRB_OPTG_COMMON, NULL,
	  "progress and per-size details on stderr" },
	{ { "help", no_argument, NULL, 'h' }, 'h', GDRB_OPTG_COMMON, NULL,
	  "print this help and exit" },
	{ { "version", no_argument, NULL, 'V' }, 'V', GDRB_OPTG_COMMON, NULL,
	  "print the version and exit" },
};

#define N_OPTS (sizeof(opt_table) / sizeof(opt_table[0]))

/* Most characters of an argument quoted back in a message. */
#define QUOTE_MAX 48

void gdrb_opts_defaults(struct gdrb_params *p)
{
	const char *err;

	memset(p, 0, sizeof(*p));
	gdrb_sizes_parse(GDRB_DEF_SIZES, &p->sizes, &err);
	p->iters = GDRB_DEF_ITERS;
	p->warmup = GDRB_DEF_WARMUP;
	p->min_iters = GDRB_DEF_MIN_ITERS;
	p->time_per_size = GDRB_DEF_TIME_PER_SIZE;
	p->timeout = GDRB_DEF_TIMEOUT;
	p->mem = GDRB_MEM_HOST;
	p->gpu = -1;
	p->window = GDRB_DEF_WINDOW;
	gdrb_size_parse(GDRB_DEF_WINDOW_BYTES, &p->window_bytes, &err);
	p->op = GDRB_SUM;
	p->dtype = GDRB_FLOAT;
	p->root = 0;
	p->gid_index = -1;
	p->tx_depth = GDRB_DEF_TX_DEPTH;
	p->qps = GDRB_DEF_QPS;
	p->reg_mode = GDRB_REG_AUTO;
	p->relaxed_ordering = true;
	p->staging = GDRB_STAGING_PIPELINED;
	gdrb_size_parse(GDRB_DEF_STAGE_CHUNK, &p->stage_chunk, &err);
	p->mpi_cuda = GDRB_MPI_CUDA_AUTO;
}



/* Index of text in names[n], or -1. */
static int lookup(const char *text, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(text, names[i]) == 0)
			return i;
	return -1;
}

/* COMMON always applies, and sizes unless the benchmark has none. */
static unsigned effective_groups(unsigned groups)
{
	groups |= GDRB_OPTG_COMMON;
	if (!(groups & GDRB_OPTG_NO_SIZES))
		groups |= GDRB_OPTG_SIZES;
	return groups;
}

void gdrb_opts_usage(FILE *out, unsigned groups, const char *summary)
{
	size_t i;

	groups = effective_groups(groups);
	fprintf(out, "Usage: %s [OPTION]...\n%s\n\n", gdrb_prog(), summary);
	for (i = 0; i < N_OPTS; i++) {
		const struct opt_desc *d = &opt_table[i];
		char lhs[64];

		if (!(d->group & groups))
			continue;
		if (d->short_opt)
			snprintf(lhs, sizeof(lhs), "-%c, --%s%s%s", d->short_opt, d->lo.name,
				 d->arg ? " " : "", d->arg ? d->arg : "");
		else
			snprintf(lhs, sizeof(lhs), "    --%s%s%s", d->lo.name, d->arg ? " " : "",
				 d->arg ? d->arg : "");
		fprintf(out, "  %-26s %s\n", lhs, d->help);
	}
	fprintf(out, "\nExit status: 0 ok, 1 failure or invalid data, 2 bad usage, 77 unsupported on this node.\n");
}

static const struct opt_desc *find_desc(int code)
{
	size_t i;

	for (i = 0; i < N_OPTS; i++)
		if (opt_table[i].lo.val == code)
			return &opt_table[i];
	return NULL;
}

static int parse_u64(const char *opt, const char *text, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	/* strtoull would take a sign or leading blanks: a digit must come first. */
	if (!isdigit((unsigned char)*text))
		goto bad;
	v = strtoull(text, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	gdrb_usage_err("--%s: expected an integer from %llu to %llu, got '%s'", opt,
		       (unsigned long long)min, (unsigned long long)max, text);
	return GDRB_ERR_USAGE;
}

static int parse_seconds(const char *opt, const char *text, bool zero_ok, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(v) || v < 0.0 || (!zero_ok && v == 0.0) ||
	    v > 1e6) {
		gdrb_usage_err("--%s: expected seconds, a number %s 0 and at most 1e6, got '%s'",
			       opt, zero_ok ? "at least" : "above", text);
		return GDRB_ERR_USAGE;
	}
	*out = v;
	return 0;
}

/* "mlx5_0" or "mlx5_0:1". */
static int parse_ib_dev(const char *arg, struct gdrb_params *p)
{
	static char name[64];
	const char *colon = strrchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	unsigned long port = 0;
	char *end = NULL;

	if (colon) {
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
	}
	if (n == 0 || n >= sizeof(name) ||
	    (colon && (errno || !isdigit((unsigned char)colon[1]) || *end || port < 1 || port > 255))) {
		gdrb_usage_err("--ib-dev: expected NAME or NAME:PORT (mlx5_0, mlx5_0:1), got '%s'", arg);
		return GDRB_ERR_USAGE;
	}
	memcpy(name, arg, n);
	name[n] = '\0';
	p->ib_dev = name;
	p->ib_port = (unsigned)port;
	return 0;
}

static int apply(int code, const char *arg, struct gdrb_params *p)
{
	const char *err, *hint;
	uint64_t v;
	size_t v64;
	int i;

	switch (code) {
	case 'm':
		if (gdrb_sizes_parse(arg, &p->sizes, &err)) {
			/* A long list is quoted by its head only: one line, not kilobytes. */
			if (strlen(arg) > QUOTE_MAX)
				gdrb_usage_err("-m/--sizes: %s in '%.*s...' (%zu characters); accepted: %s",
					       err, QUOTE_MAX, arg, strlen(arg), GDRB_SIZE_FORMS);
			else
				gdrb_usage_err("-m/--sizes: %s in '%s'; accepted: %s", err, arg,
					       GDRB_SIZE_FORMS);
			return GDRB_ERR_USAGE;
		}
		return 0;
	case 'n':
		return parse_u64("iters", arg, 1, UINT64_C(1) << 24, &p->iters);
	case 'w':
		return parse_u64("warmup", arg, 0, UINT64_C(1) << 32, &p->warmup);
	case OPT_MIN_ITERS:
		return parse_u64("min-iters", arg, 1, UINT64_C(1) << 24, &p->min_iters);
	case OPT_BUFFERS:
		i = lookup(arg, gdrb_buffers_names, GDRB_BUFFERS_COUNT);
		if (i < 0) {
			gdrb_usage_err("--buffers: unknown mode '%s'; accepted: slots, single", arg);
			return GDRB_ERR_USAGE;
		}
		p->buffers = i;
		return 0;
	case OPT_SYNC:
		i = lookup(arg, gdrb_sync_names, GDRB_SYNC_COUNT);
		if (i < 0) {
			gdrb_usage_err("--sync: unknown mode '%s'; accepted: barrier, none", arg);
			return GDRB_ERR_USAGE;
		}
		p->sync = i;
		return 0;
	case 'W':
		if (parse_u64("window", arg, 1, 1u << 16, &v))
			return GDRB_ERR_USAGE;
		p->window = (unsigned)v;
		return 0;
	case OPT_WINDOW_BYTES:
		if (gdrb_size_parse(arg, &v64, &err) || v64 == 0) {
			gdrb_usage_err("--window-bytes: expected a size from 1 byte (64M, 1G, 4G), got '%s'", arg);
			return GDRB_ERR_USAGE;
		}
		p->window_bytes = v64;
		return 0;
	case OPT_GPU:
		if (parse_u64("gpu", arg, 0, 1023, &v))
			return GDRB_ERR_USAGE;
		p->gpu = (int)v;
		return 0;
	case 't':
		return parse_seconds("time-per-size", arg, false, &p->time_per_size);
	case 'T':
		return parse_seconds("timeout", arg, true, &p->timeout);
	case 'c':
		p->validate = true;
		return 0;
	case OPT_CSV:
		if (!*arg) {
			gdrb_usage_err("--csv: expected a file name");
			return GDRB_ERR_USAGE;
		}
		p->csv_path = arg;
		return 0;
	case OPT_LABEL:
		p->label = arg;
		return 0;
	case OPT_MEM:
		if (gdrb_mem_kind_parse(arg, &p->mem, &hint)) {
			gdrb_usage_err("--mem: unknown memory kind '%s'; accepted: host, pinned, device%s%s%s",
				       arg, hint ? " (did you mean '" : "", hint ? hint : "",
				       hint ? "'?)" : "");
			return GDRB_ERR_USAGE;
		}
		return 0;
	case OPT_STAGING:
		i = lookup(arg, gdrb_staging_names, GDRB_STAGING_COUNT);
		if (i < 0) {
			gdrb_usage_err("--staging: unknown mode '%s'; accepted: pipelined, serial, both", arg);
			return GDRB_ERR_USAGE;
		}
		p->staging = i;
		return 0;
	case OPT_STAGE_CHUNK:
		if (gdrb_size_parse(arg, &v64, &err) || v64 < GDRB_STAGE_CHUNK_MIN ||
		    v64 > GDRB_STAGE_CHUNK_MAX) {
			gdrb_usage_err("--stage-chunk: expected a size from 4K to 1G (512K, 1M), got '%s'", arg);
			return GDRB_ERR_USAGE;
		}
		p->stage_chunk = v64;
		return 0;
	case OPT_OP:
		i = lookup(arg, gdrb_redop_names, GDRB_REDOP_COUNT);
		if (i < 0) {
			gdrb_usage_err("--op: unknown reduction '%s'; accepted: sum, prod, min, max", arg);
			return GDRB_ERR_USAGE;
		}
		p->op = (enum gdrb_redop)i;
		return 0;
	case OPT_DTYPE:
		i = lookup(arg, gdrb_dtype_names, GDRB_DTYPE_COUNT);
		if (i < 0) {
			gdrb_usage_err("--dtype: unknown type '%s'; accepted: int8, int32, int64, float, double",
				       arg);
			return GDRB_ERR_USAGE;
		}
		p->dtype = (enum gdrb_dtype)i;
		return 0;
	case OPT_ROOT:
		if (parse_u64("root", arg, 0, 1u << 30, &v))
			return GDRB_ERR_USAGE;
		p->root = (int)v;
		return 0;
	case OPT_IN_PLACE:
		p->in_place = true;
		return 0;
	case 'b':
		p->bidir = true;
		return 0;
	case OPT_IB_DEV:
		return parse_ib_dev(arg, p);
	case OPT_GID_INDEX:
		if (parse_u64("gid-index", arg, 0, 255, &v))
			return GDRB_ERR_USAGE;
		p->gid_index = (int)v;
		return 0;
	case OPT_MTU:
		if (parse_u64("mtu", arg, 256, 4096, &v))
			return GDRB_ERR_USAGE;
		if (v & (v - 1)) {
			gdrb_usage_err("--mtu: expected 256, 512, 1024, 2048 or 4096, got '%s'", arg);
			return GDRB_ERR_USAGE;
		}
		p->mtu = (int)v;
		return 0;
	case OPT_TX_DEPTH:
		if (parse_u64("tx-depth", arg, 2, 1u << 15, &v))
			return GDRB_ERR_USAGE;
		p->tx_depth = (unsigned)v;
		return 0;
	case OPT_QPS:
		if (parse_u64("qps", arg, 1, GDRB_MAX_QPS, &v))
			return GDRB_ERR_USAGE;
		p->qps = (unsigned)v;
		return 0;
	case OPT_SL:
		if (parse_u64("sl", arg, 0, 15, &v))
			return GDRB_ERR_USAGE;
		p->sl = (unsigned)v;
		return 0;
	case OPT_TCLASS:
		if (parse_u64("tclass", arg, 0, 255, &v))
			return GDRB_ERR_USAGE;
		p->tclass = (unsigned)v;
		return 0;
	case OPT_REG: {
		enum gdrb_reg_mode mode;

		if (gdrb_reg_mode_parse(arg, &mode)) {
			gdrb_usage_err("--reg: unknown registration '%s'; accepted: auto, dmabuf, peermem", arg);
			return GDRB_ERR_USAGE;
		}
		p->reg_mode = (int)mode;
		return 0;
	}
	case OPT_NO_RELAXED:
		p->relaxed_ordering = false;
		return 0;
	case OPT_COMPLETION: {
		int m = lookup(arg, gdrb_completion_names, GDRB_COMPLETION_COUNT);

		if (m < 0) {
			gdrb_usage_err("--completion: unknown mode '%s'; accepted: auto, poll, imm", arg);
			return GDRB_ERR_USAGE;
		}
		p->completion = m;
		return 0;
	}
	case OPT_WAIT:
		i = lookup(arg, gdrb_wait_names, GDRB_WAIT_COUNT);
		if (i < 0) {
			gdrb_usage_err("--wait: unknown mode '%s'; accepted: auto, spin, event", arg);
			return GDRB_ERR_USAGE;
		}
		p->wait = i;
		return 0;
	case OPT_EVENT:
		p->wait = GDRB_WAIT_EVENT;
		return 0;
	case OPT_MPI_CUDA:
		i = lookup(arg, gdrb_mpi_cuda_names, GDRB_MPI_CUDA_COUNT);
		if (i < 0) {
			gdrb_usage_err("--mpi-cuda: unknown value '%s'; accepted: auto, yes, no", arg);
			return GDRB_ERR_USAGE;
		}
		p->mpi_cuda = i;
		return 0;
	case OPT_CLOCK:
		if (strcmp(arg, "auto") && strcmp(arg, "monotonic")) {
			gdrb_usage_err("--clock: unknown clock '%s'; accepted: auto, monotonic", arg);
			return GDRB_ERR_USAGE;
		}
		p->monotonic_clock = strcmp(arg, "monotonic") == 0;
		return 0;
	case 'v':
		p->verbose++;
		return 0;
	}
	return GDRB_ERR_USAGE;
}

int gdrb_opts_value(const char *name, const char *arg, struct gdrb_params *p)
{
	size_t i;

	for (i = 0; i < N_OPTS; i++)
		if (!strcmp(opt_table[i].lo.name, name))
			return apply(opt_table[i].lo.val, arg, p);
	gdrb_err("gdrb_opts_value: no option --%s", name);
	return GDRB_ERR;
}

/*
 * An option that has no effect with the memory asked for is refused, not
 * ignored: "--gpu 5" on host memory would otherwise measure no GPU at all
 * under a command line that names one.
 */
static int device_only_option(const bool *given, const struct gdrb_params *p)
{
	static const struct {
		int code;
		bool pinned_too;        /* also takes effect with --mem pinned */
		const char *what;
	} rules[] = {
		{ OPT_GPU, true, "it picks the GPU of device and pinned memory" },
		{ OPT_STAGING, false, "only --mem device has a staged path" },
		{ OPT_STAGE_CHUNK, false, "only --mem device has a staged path" },
		{ OPT_REG, false, "it chooses how GPU memory is registered" },
	};
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct opt_desc *d = find_desc(rules[i].code);

		if (!given[d - opt_table] || p->mem == GDRB_MEM_DEVICE ||
		    (rules[i].pinned_too && p->mem == GDRB_MEM_PINNED))
			continue;
		gdrb_usage_err("--%s has no effect with --mem %s (%s): add --mem device%s, or drop --%s",
			       d->lo.name, gdrb_mem_kind_name(p->mem), rules[i].what,
			       rules[i].pinned_too ? " or pinned" : "", d->lo.name);
		return GDRB_ERR_USAGE;
	}
	return 0;
}

int gdrb_opts_parse(int argc, char **argv, unsigned groups, const char *summary,
		    struct gdrb_params *p)
{
	struct option longopts[N_OPTS + 1];
	char shortopts[3 * N_OPTS + 2] = ":";
	bool given[N_OPTS] = { false };
	const struct opt_desc *d;
	size_t i, n = 0, s = 1;
	int c;

	gdrb_opts_defaults(p);
	groups = effective_groups(groups);
	/* Every option is known, so one that does not apply gets its own message. */
	for (i = 0; i < N_OPTS; i++) {
		d = &opt_table[i];
		longopts[n++] = d->lo;
		if (d->short_opt) {
			shortopts[s++] = (char)d->short_opt;
			if (d->arg)
				shortopts[s++] = ':';
		}
	}
	memset(&longopts[n], 0, sizeof(longopts[n]));
	shortopts[s] = '\0';

	opterr = 0;
	optind = 0;      /* 0, not 1: glibc then also forgets a half-parsed "-xc" */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const char *bad = argv[optind - 1];

		if (c == 'h') {
			if (gdrb_log_is_leader())
				gdrb_opts_usage(stdout, groups, summary);
			return GDRB_PARSE_EXIT;
		}
		if (c == 'V') {
			if (gdrb_log_is_leader())
				printf("%s (%s) %s\n", gdrb_prog(), PACKAGE_NAME, PACKAGE_VERSION);
			return GDRB_PARSE_EXIT;
		}
		if (c == '?') {
			if (optopt)
				gdrb_usage_err("unknown option '-%c'; run '%s --help' for the options",
					       optopt, gdrb_prog());
			else
				gdrb_usage_err("unknown option '%s'; run '%s --help' for the options",
					       bad, gdrb_prog());
			return GDRB_ERR_USAGE;
		}
		if (c == ':') {
			d = find_desc(optopt ? optopt : 0);

			if (d)
				gdrb_usage_err("--%s needs a value: %s", d->lo.name, d->arg);
			else
				gdrb_usage_err("option '%s' needs a value; run '%s --help'", bad,
					       gdrb_prog());
			return GDRB_ERR_USAGE;
		}
		d = find_desc(c);
		if (d && !(d->group & groups)) {
			gdrb_usage_err("--%s does not apply to %s; run '%s --help' for its options",
				       d->lo.name, gdrb_prog(), gdrb_prog());
			return GDRB_ERR_USAGE;
		}
		/* The last of two values silently winning hides a typo in a long command line. */
		if (d && given[d - opt_table] && c != 'v') {
			if (d->short_opt)
				gdrb_usage_err("-%c/--%s given twice; give each option once", d->short_opt,
					       d->lo.name);
			else
				gdrb_usage_err("--%s given twice; give each option once", d->lo.name);
			return GDRB_ERR_USAGE;
		}
		if (d)
			given[d - opt_table] = true;
		if (apply(c, optarg, p))
			return GDRB_ERR_USAGE;
	}
	if (optind < argc) {
		gdrb_usage_err("unexpected argument '%s'; run '%s --help' for the options",
			       argv[optind], gdrb_prog());
		return GDRB_ERR_USAGE;
	}
	if (device_only_option(given, p))
		return GDRB_ERR_USAGE;
	if (p->completion == GDRB_COMPLETION_POLL && p->mem == GDRB_MEM_DEVICE) {
		gdrb_usage_err("--completion poll: the CPU never polls GPU memory; with --mem device use imm or auto");
		return GDRB_ERR_USAGE;
	}
	if (p->completion == GDRB_COMPLETION_POLL && p->wait == GDRB_WAIT_EVENT) {
		gdrb_usage_err("--completion poll: a rank spinning on the buffer cannot sleep; with --wait event (--event) use imm or auto");
		return GDRB_ERR_USAGE;
	}
	gdrb_set_verbose(p->verbose);
	return GDRB_PARSE_RUN;
}
