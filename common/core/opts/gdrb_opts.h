/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options: the core's params struct, filled by getopt_long from the core's
 * table and from the option groups of the layers a binary is made of (verbs,
 * MPI, the collectives, ...), each group with its table and params of its own.
 * A binary names the groups it takes; the core knows none of them.
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

/* The core's own options a binary takes beyond the common ones (struct gdrb_bench.opt_core). */
enum gdrb_opt_core {
	GDRB_OPTG_COMMON = 1u << 0,   /* iterations, time, csv, validate, ...: always */
	GDRB_OPTG_MEM = 1u << 1,      /* --mem, --gpu (and STAGING) */
	GDRB_OPTG_WINDOW = 1u << 2,   /* --window, --window-bytes, --buffers (bandwidth benchmarks) */
	GDRB_OPTG_SIZES = 1u << 3,    /* -m: implied unless GDRB_OPTG_NO_SIZES */
	GDRB_OPTG_NO_SIZES = 1u << 4, /* the benchmark has no message size (barrier) */
	GDRB_OPTG_BIDIR = 1u << 5,    /* -b: both ranks of a pair send at once (UNIDIR made BIDIR) */
	GDRB_OPTG_STAGING = 1u << 6,  /* --staging, --stage-chunk: implied by MEM unless NO_STAGING */
	GDRB_OPTG_NO_STAGING = 1u << 7, /* the library stages on its own (NCCL): no staging options */
};

/* Where the messages of a window live: a slot each, or all in one buffer (OMB's default). */
enum gdrb_buffers { GDRB_BUFFERS_SLOTS, GDRB_BUFFERS_SINGLE, GDRB_BUFFERS_COUNT };

extern const char *const gdrb_buffers_names[GDRB_BUFFERS_COUNT];

/*
 * Which iterations -c checks: none; the warm-up's and one after the timed
 * ones, which run untouched (what -c alone means); or every one, the timed
 * ones too, whose fills and checks between calls then slow the calls.
 */
enum gdrb_validate { GDRB_VALIDATE_NO, GDRB_VALIDATE_UNTIMED, GDRB_VALIDATE_EVERY, GDRB_VALIDATE_COUNT };

extern const char *const gdrb_validate_names[GDRB_VALIDATE_COUNT];

/* Defaults, shown by --help from these same constants. */
#define GDRB_DEF_SIZES "8:1G"
#define GDRB_DEF_ITERS 10000
#define GDRB_DEF_WARMUP 100
#define GDRB_DEF_MIN_ITERS 1000
#define GDRB_FLOOR_ITERS 3          /* timed iterations of a size too long for --min-iters */
#define GDRB_MIN_STRETCH 4          /* --min-iters holds where it takes at most this x the budget */
#define GDRB_MAX_STRETCH 10         /* no size runs past this x the budget (then: few-samples) */
#define GDRB_WARMUP_MEDIAN_MIN 5    /* warm-up iterations the median needs before a tenth of the budget ends it */
#define GDRB_DEF_TIME_PER_SIZE 0.3
#define GDRB_DEF_TIMEOUT 60.0
/*
 * The shortest --timeout but 0 (never): a healthy rank descheduled on a loaded
 * node, or a bootstrap step over TCP, can be silent for hundreds of ms; below
 * a second a watchdog names healthy ranks as lost.
 */
#define GDRB_MIN_TIMEOUT 1.0
#define GDRB_DEF_WINDOW 64

/*
 * One option of a table. Its parser reads the value (NULL for a flag) into
 * the field at off of its group's params, and on a bad value prints one line
 * naming the option and returns GDRB_ERR_USAGE. The gdrb_opt_* parsers below
 * take their bounds, words and messages from the entry.
 */
struct gdrb_opt;
typedef int gdrb_opt_parse_fn(const struct gdrb_opt *o, const char *arg, void *params);

enum {
	GDRB_OPT_REPEAT = 1u << 0,      /* may be given more than once (-v) */
	GDRB_OPT_DEVICE = 1u << 1,      /* refused unless the --mem kind is on the GPU (device): `needs` says why */
	GDRB_OPT_GPU_MEM = 1u << 2,     /* refused unless the --mem kind opens a GPU (device, pinned) */
	GDRB_OPT_LAST = 1u << 3,        /* listed after every group's options (--help, --version) */
	/*
	 * Its value may be left out (gdrb_opt_enum then stores `value`): --NAME,
	 * --NAME=WORD, or --NAME WORD where WORD is one of `names` (the binaries take
	 * no operands, so a following word that is not one stays an unexpected argument).
	 */
	GDRB_OPT_VALUE_OPTIONAL = 1u << 4,
};

struct gdrb_opt {
	const char *name;       /* long name, without "--" */
	int short_opt;          /* 0: none */
	const char *arg;        /* metavariable; NULL: a flag */
	const char *help;
	unsigned when;          /* the group's selector bits that offer it */
	gdrb_opt_parse_fn *parse;
	size_t off;             /* offsetof its field in the group's params */
	uint64_t min, max;      /* gdrb_opt_u64, _uint, _int, _size; _seconds: min 0 takes 0 */
	const char *const *names;       /* gdrb_opt_enum: the words, in value order */
	int nnames;
	const char *what;       /* gdrb_opt_enum: "mode" in "unknown mode 'x'"; _size: "from 4K to 1G (512K, 1M)" */
	int value;              /* gdrb_opt_set_int, _set_bool, and _enum without its value: what it stores */
	unsigned flags;         /* GDRB_OPT_* */
	const char *needs;      /* GDRB_OPT_DEVICE, _GPU_MEM: why the option needs that memory */
};

/*
 * Field parsers: uint64_t, unsigned, int (all min..max), size_t (min..max), double seconds,
 * int enum, string, flags; and a set of numbers 0..max (at most 63) as a uint64_t of a bit
 * each, from a list like 0,2,5 or 0-3 naming each once (o->what: "GPU numbers").
 */
gdrb_opt_parse_fn gdrb_opt_u64, gdrb_opt_uint, gdrb_opt_int, gdrb_opt_size, gdrb_opt_seconds,
	gdrb_opt_enum, gdrb_opt_string, gdrb_opt_set_int, gdrb_opt_set_bool, gdrb_opt_index_set;
/*
 * The core's option of the entry's long name ("sizes", "window", "mem"), its parser,
 * bounds and error line, into the struct gdrb_params at off: a tool's table taking a
 * few of the benchmarks' options (gdrb_doctor).
 */
gdrb_opt_parse_fn gdrb_opt_core;

struct gdrb_params;

/*
 * A layer's options (a transport's, the collectives'): its table, its own
 * params struct and how to fill it. The core stores the params; the layer
 * reads them back with gdrb_group_params.
 */
struct gdrb_opt_group {
	const char *name;                       /* "verbs" */
	const struct gdrb_opt *opts;
	size_t nopts;
	size_t size;                            /* bytes of its params struct */
	void (*defaults)(void *params);
	/* After every option: rules between options; one line and GDRB_ERR_USAGE. NULL: none. */
	int (*check)(const struct gdrb_params *p, const void *params);
};

/* A group a binary takes: select has the group's bits of the options it offers (0: none, refused by name). */
struct gdrb_opt_use {
	const struct gdrb_opt_group *group;
	unsigned select;
};

/* What a binary takes: core bits, its groups (ended by { NULL }), other groups it refuses by name (ended by NULL). */
struct gdrb_opt_set {
	unsigned core;
	const struct gdrb_opt_use *groups;
	const struct gdrb_opt_group *const *known;
	const char *sizes;      /* the binary's default -m, as --help shows it; NULL: GDRB_DEF_SIZES */
	enum gdrb_mem_kind mem; /* the binary's default --mem (0: host) */
};

#define GDRB_MAX_OPT_GROUPS 8
#define GDRB_OPT_STORE 1024         /* bytes of every group's params together */

struct gdrb_params {
	struct gdrb_sizes sizes;
	uint64_t iters;             /* most timed iterations per size */
	uint64_t warmup;            /* most warm-up iterations per size */
	uint64_t min_iters;         /* fewest timed iterations of a size they fit (driver_timing.c) */
	double time_per_size;       /* seconds of timed iterations per size (budget) */
	double timeout;             /* seconds without progress before giving up; 0: never */
	enum gdrb_mem_kind mem;
	int gpu;                    /* -1: local rank modulo GPU count */
	unsigned window;            /* messages in flight per iteration */
	size_t window_bytes;        /* most bytes of a window's slots (gdrb_window_at) */
	int validate;               /* enum gdrb_validate */
	const char *csv_path;       /* NULL: no CSV */
	const char *label;          /* free text copied to the CSV note column */
	int verbose;
	bool monotonic_clock;       /* do not use the TSC */
	bool bidir;                 /* -b */
	bool describe;              /* --describe: print what the binary is (JSON) and exit */
	int staging;                /* enum gdrb_staging */
	size_t stage_chunk;         /* pipelined staging's fragment size; 0: chosen from measured rates */
	unsigned stage_slots;       /* pipelined staging's slots per direction; 0: chosen likewise */
	int buffers;                /* enum gdrb_buffers */

	/* The option groups' params, at group_off[i] of store (gdrb_group_params). */
	size_t ngroups;
	const struct gdrb_opt_group *group[GDRB_MAX_OPT_GROUPS];
	size_t group_off[GDRB_MAX_OPT_GROUPS];
	_Alignas(16) unsigned char store[GDRB_OPT_STORE];
};

/* The params of group g as parsed (its defaults where the binary only knows it); NULL: not listed. */
const void *gdrb_group_params(const struct gdrb_params *p, const struct gdrb_opt_group *g);

enum {
	GDRB_PARSE_RUN = 0,         /* go on and measure */
	GDRB_PARSE_EXIT = 1,        /* --help or --version printed: exit 0 */
};

/*
 * Parse argv for a binary taking `set`. Returns GDRB_PARSE_RUN,
 * GDRB_PARSE_EXIT, or GDRB_ERR_USAGE after printing one line that names the
 * option and its accepted form.
 */
int gdrb_opts_parse(int argc, char **argv, const struct gdrb_opt_set *set, const char *summary,
		    struct gdrb_params *p);
/* The core's defaults and every group of set's (set NULL: the core's only). */
int gdrb_opts_defaults(struct gdrb_params *p, const struct gdrb_opt_set *set);
void gdrb_opts_usage(FILE *out, const struct gdrb_opt_set *set, const char *summary);

struct gdrb_json;
/*
 * --describe's "options" array: every option the binary takes, in --help order, with its
 * short form, argument, group ("core" or the layer's), default (as --help states it; null
 * where it states none) and help text.
 */
void gdrb_opts_describe(struct gdrb_json *j, const struct gdrb_opt_set *set);
/* An option's left side in --help: "-m, --sizes SIZES", or long_pad then "--name ARG". */
void gdrb_opt_usage_lhs(const struct gdrb_opt *o, const char *long_pad, char *buf, size_t size);

/*
 * A tool outside the benchmarks' option set (gdrb_doctor): one table of its own, every
 * entry offered and filling the tool's params at its off, parsed by the benchmarks' loop
 * with their repeat detection and one-line errors; --help (short 'h') calls usage, the
 * tool's own text; --version (short 'V') prints as the benchmarks do. An entry may take a
 * core option with gdrb_opt_core.
 */
struct gdrb_opt_tool {
	const struct gdrb_opt *opts;
	size_t nopts;
	void (*usage)(FILE *out, const char *summary);
	bool name_as_typed;     /* a missing value names the option as typed ("-m"), not "--sizes" */
};

/* GDRB_PARSE_RUN, GDRB_PARSE_EXIT, or GDRB_ERR_USAGE after one line naming the option. */
int gdrb_opts_parse_tool(int argc, char **argv, const struct gdrb_opt_tool *tool,
			 const char *summary, void *params);

#endif
