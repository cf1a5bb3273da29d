/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The option framework: the core's table, the binary's option groups, one
 * getopt_long over all of them, table-driven parsing (each entry names its
 * parser), --help in table order, and the one-line usage errors.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_opts.h"
#include "gdrb_stage.h"

const char *const gdrb_buffers_names[GDRB_BUFFERS_COUNT] = { "slots", "single" };
const char *const gdrb_validate_names[GDRB_VALIDATE_COUNT] = { "no", "untimed", "every" };

static gdrb_opt_parse_fn parse_sizes, parse_csv, parse_mem, parse_clock, parse_verbose, parse_timeout;

#define CORE(field) offsetof(struct gdrb_params, field)

static const struct gdrb_opt core_table[] = {
	{ .name = "sizes", .short_opt = 'm', .arg = "SIZES",
	  .help = "message sizes: MIN:MAX (powers of two) or a list like 8,4K,1M; K,M,G,T or KiB,MiB,GiB,TiB (default " GDRB_DEF_SIZES ")",
	  .when = GDRB_OPTG_SIZES, .parse = parse_sizes, .off = CORE(sizes) },
	{ .name = "iters", .short_opt = 'n', .arg = "N",
	  .help = "most timed iterations per size (default " GDRB_STR(GDRB_DEF_ITERS) ")",
	  .when = GDRB_OPTG_COMMON, .parse = gdrb_opt_u64, .off = CORE(iters), .min = 1,
	  .max = UINT64_C(1) << 24 },
	{ .name = "min-iters", .arg = "N",
	  .help = "fewest timed iterations per size, where the warm-up (or the timed rate so far) says they take at most " GDRB_STR(GDRB_MIN_STRETCH) "x the time budget (longer sizes: as many as the budget holds, at least " GDRB_STR(GDRB_FLOOR_ITERS) "); a size that still falls short is flagged few-samples (default " GDRB_STR(GDRB_DEF_MIN_ITERS) ")",
	  .when = GDRB_OPTG_COMMON, .parse = gdrb_opt_u64, .off = CORE(min_iters), .min = 1,
	  .max = UINT64_C(1) << 24 },
	{ .name = "warmup", .short_opt = 'w', .arg = "N",
	  .help = "most warm-up iterations per size, in growing batches while they take under a tenth of the time budget; their median (slowest rank's) plans the timed iterations (default " GDRB_STR(GDRB_DEF_WARMUP) ")",
	  .when = GDRB_OPTG_COMMON, .parse = gdrb_opt_u64, .off = CORE(warmup), .min = 0,
	  .max = UINT64_C(1) << 32 },
	{ .name = "time-per-size", .short_opt = 't', .arg = "SEC",
	  .help = "time budget of timed iterations per size, checked between batches agreed across ranks; --min-iters may stretch it, never a size (warm-up included) past " GDRB_STR(GDRB_MAX_STRETCH) "x plus one iteration (default " GDRB_STR(GDRB_DEF_TIME_PER_SIZE) ")",
	  .when = GDRB_OPTG_COMMON, .parse = gdrb_opt_seconds, .off = CORE(time_per_size),
	  .min = 1 },
	{ .name = "timeout", .short_opt = 'T', .arg = "SEC",
	  .help = "give up when a peer makes no progress for SEC seconds at any size, at least " GDRB_STR(GDRB_MIN_TIMEOUT) "; 0: never (default " GDRB_STR(GDRB_DEF_TIMEOUT) ")",
	  .when = GDRB_OPTG_COMMON, .parse = parse_timeout, .off = CORE(timeout), .min = 0 },
	{ .name = "validate", .short_opt = 'c', .arg = "WHEN",
	  .help = "check every received byte against a pattern that changes with size and iteration, outside the timed region: untimed (what -c alone means) checks every warm-up iteration and one more after the timed ones, which run untouched; every checks the timed ones too, filling before and checking after each (on a real GPU that made NCCL calls of 1 MiB and more 1.5 to 2.7x slower); no (default no)",
	  .when = GDRB_OPTG_COMMON, .parse = gdrb_opt_enum, .off = CORE(validate),
	  .names = gdrb_validate_names, .nnames = GDRB_VALIDATE_COUNT, .what = "mode",
	  .value = GDRB_VALIDATE_UNTIMED, .flags = GDRB_OPT_VALUE_OPTIONAL },
	{ .name = "csv", .arg = "FILE",
	  .help = "append one row per size and path to FILE (header written once; default: none)",
	  .when = GDRB_OPTG_COMMON, .parse = parse_csv, .off = CORE(csv_path) },
	{ .name = "label", .arg = "TEXT",
	  .help = "free text stored in the CSV note column (default: none)",
	  .when = GDRB_OPTG_COMMON, .parse = gdrb_opt_string, .off = CORE(label) },
	{ .name = "mem", .arg = "KIND",
	  .help = "buffer memory: host, pinned or device (default host)",
	  .when = GDRB_OPTG_MEM, .parse = parse_mem, .off = CORE(mem) },
	{ .name = "gpu", .arg = "N",
	  .help = "CUDA device for --mem device (default: local rank modulo the GPU count)",
	  .when = GDRB_OPTG_MEM, .parse = gdrb_opt_int, .off = CORE(gpu), .min = 0, .max = 1023,
	  .flags = GDRB_OPT_GPU_MEM, .needs = "it picks the GPU of device and pinned memory" },
	{ .name = "staging", .arg = "MODE",
	  .help = "the staged path with --mem device: pipelined (fragments, copies overlapped with the transfer), serial (whole-message copies, then the transfer) or both (default pipelined)",
	  .when = GDRB_OPTG_STAGING, .parse = gdrb_opt_enum, .off = CORE(staging),
	  .names = gdrb_staging_names, .nnames = GDRB_STAGING_COUNT, .what = "mode",
	  .flags = GDRB_OPT_DEVICE, .needs = "only --mem device has a staged path" },
	{ .name = "stage-chunk", .arg = "SIZE",
	  .help = "fragment size of pipelined staging, 4K to 1G (default: chosen at setup from the measured copy and wire rates, 64K to 4M; docs/staging.md)",
	  .when = GDRB_OPTG_STAGING, .parse = gdrb_opt_size, .off = CORE(stage_chunk),
	  .min = GDRB_STAGE_CHUNK_MIN, .max = GDRB_STAGE_CHUNK_MAX,
	  .what = "from 4K to 1G (512K, 1M)", .flags = GDRB_OPT_DEVICE,
	  .needs = "only --mem device has a staged path" },
	{ .name = "stage-slots", .arg = "N",
	  .help = "pinned bounce slots per direction of pipelined staging, " GDRB_STR(GDRB_STAGE_SLOTS_MIN) " to " GDRB_STR(GDRB_STAGE_SLOTS) " (default: chosen with the fragment)",
	  .when = GDRB_OPTG_STAGING, .parse = gdrb_opt_uint, .off = CORE(stage_slots),
	  .min = GDRB_STAGE_SLOTS_MIN, .max = GDRB_STAGE_SLOTS, .flags = GDRB_OPT_DEVICE,
	  .needs = "only --mem device has a staged path" },
	{ .name = "window", .short_opt = 'W', .arg = "N",
	  .help = "messages in flight per iteration; with --buffers slots reduced where window x size would pass --window-bytes (default " GDRB_STR(GDRB_DEF_WINDOW) ")",
	  .when = GDRB_OPTG_WINDOW, .parse = gdrb_opt_uint, .off = CORE(window), .min = 1,
	  .max = 1u << 16 },
	{ .name = "window-bytes", .arg = "SIZE",
	  .help = "most bytes of a window's slots per buffer: at each size the window is the smaller of -W and SIZE / size (at least 1), whatever the other sizes; the CSV note says where it cut the window (default " GDRB_DEF_WINDOW_BYTES ")",
	  .when = GDRB_OPTG_WINDOW, .parse = gdrb_opt_size, .off = CORE(window_bytes), .min = 1,
	  .max = SIZE_MAX, .what = "from 1 byte (64M, 1G, 4G)" },
	{ .name = "buffers", .arg = "MODE",
	  .help = "where a window's messages live: slots (one buffer slot per message, as NIC and GPU traffic does) or single (every message from and into one buffer, as the OSU Micro-Benchmarks do by default; it stays in cache) (default slots)",
	  .when = GDRB_OPTG_WINDOW, .parse = gdrb_opt_enum, .off = CORE(buffers),
	  .names = gdrb_buffers_names, .nnames = GDRB_BUFFERS_COUNT, .what = "mode" },
	{ .name = "bidir", .short_opt = 'b',
	  .help = "bidirectional: both ranks of a pair send a window to each other at once",
	  .when = GDRB_OPTG_BIDIR, .parse = gdrb_opt_set_bool, .off = CORE(bidir), .value = 1 },
	{ .name = "clock", .arg = "SRC",
	  .help = "timer: auto (invariant TSC where present) or monotonic (default auto)",
	  .when = GDRB_OPTG_COMMON, .parse = parse_clock, .off = CORE(monotonic_clock),
	  .flags = GDRB_OPT_LAST },
	{ .name = "verbose", .short_opt = 'v',
	  .help = "progress and per-size details on stderr",
	  .when = GDRB_OPTG_COMMON, .parse = parse_verbose, .off = CORE(verbose),
	  .flags = GDRB_OPT_LAST | GDRB_OPT_REPEAT },
	{ .name = "describe",
	  .help = "print what this binary is as JSON (benchmark, layer, options, memory kinds and their paths; docs/describe.md) and exit",
	  .when = GDRB_OPTG_COMMON, .parse = gdrb_opt_set_bool, .off = CORE(describe), .value = 1,
	  .flags = GDRB_OPT_LAST },
	{ .name = "help", .short_opt = 'h',
	  .help = "print this help and exit",
	  .when = GDRB_OPTG_COMMON, .flags = GDRB_OPT_LAST },
	{ .name = "version", .short_opt = 'V',
	  .help = "print the version and exit",
	  .when = GDRB_OPTG_COMMON, .flags = GDRB_OPT_LAST },
};

#define N_CORE (sizeof(core_table) / sizeof(core_table[0]))
#define MAX_OPTS 128
#define FIRST_LONG_CODE 0x100

/* Most characters of an argument quoted back in a message. */
#define QUOTE_MAX 48

/* The field an entry fills. */
#define FIELD(type, params, o) ((type *)(void *)((char *)(params) + (o)->off))

/* ---- the parsers a table entry names ---- */

static int bad_integer(const struct gdrb_opt *o, const char *text)
{
	gdrb_usage_err("--%s: expected an integer from %llu to %llu, got '%s'", o->name,
		       (unsigned long long)o->min, (unsigned long long)o->max, text);
	return GDRB_ERR_USAGE;
}

/* An integer from o->min to o->max, digits only. */
static int integer(const struct gdrb_opt *o, const char *text, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	/* strtoull would take a sign or leading blanks: a digit must come first. */
	if (!isdigit((unsigned char)*text))
		return bad_integer(o, text);
	v = strtoull(text, &end, 10);
	if (errno || *end || v < o->min || v > o->max)
		return bad_integer(o, text);
	*out = v;
	return 0;
}

int gdrb_opt_u64(const struct gdrb_opt *o, const char *arg, void *params)
{
	return integer(o, arg, FIELD(uint64_t, params, o));
}

int gdrb_opt_uint(const struct gdrb_opt *o, const char *arg, void *params)
{
	uint64_t v;

	if (integer(o, arg, &v))
		return GDRB_ERR_USAGE;
	*FIELD(unsigned, params, o) = (unsigned)v;
	return 0;
}

int gdrb_opt_int(const struct gdrb_opt *o, const char *arg, void *params)
{
	uint64_t v;

	if (integer(o, arg, &v))
		return GDRB_ERR_USAGE;
	*FIELD(int, params, o) = (int)v;
	return 0;
}

int gdrb_opt_size(const struct gdrb_opt *o, const char *arg, void *params)
{
	const char *err;
	size_t v;

	if (gdrb_size_parse(arg, &v, &err) || v < o->min || v > o->max) {
		gdrb_usage_err("--%s: expected a size %s, got '%s'", o->name, o->what, arg);
		return GDRB_ERR_USAGE;
	}
	*FIELD(size_t, params, o) = v;
	return 0;
}

/* Seconds up to 1e6; 0 ("never") only where o->min is 0. */
int gdrb_opt_seconds(const struct gdrb_opt *o, const char *arg, void *params)
{
	bool zero_ok = o->min == 0;
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0.0 || (!zero_ok && v == 0.0) ||
	    v > 1e6) {
		gdrb_usage_err("--%s: expected seconds, a number %s 0 and at most 1e6, got '%s'",
			       o->name, zero_ok ? "at least" : "above", arg);
		return GDRB_ERR_USAGE;
	}
	*FIELD(double, params, o) = v;
	return 0;
}

/* One of o->names, stored as its index; o->value where an optional value was left out. */
int gdrb_opt_enum(const struct gdrb_opt *o, const char *arg, void *params)
{
	char accepted[256];
	size_t n = 0;
	int i;

	if (!arg) {
		*FIELD(int, params, o) = o->value;
		return 0;
	}
	for (i = 0; i < o->nnames; i++)
		if (strcmp(arg, o->names[i]) == 0) {
			*FIELD(int, params, o) = i;
			return 0;
		}
	accepted[0] = '\0';
	for (i = 0; i < o->nnames && n < sizeof(accepted); i++)
		n += (size_t)snprintf(accepted + n, sizeof(accepted) - n, "%s%s", i ? ", " : "",
				      o->names[i]);
	if (o->flags & GDRB_OPT_VALUE_OPTIONAL && n < sizeof(accepted))
		snprintf(accepted + n, sizeof(accepted) - n, " (--%s alone: %s)", o->name,
			 o->names[o->value]);
	gdrb_usage_err("--%s: unknown %s '%s'; accepted: %s", o->name, o->what, arg, accepted);
	return GDRB_ERR_USAGE;
}

/* A number of an index list, 0..max in decimal digits only; the end of its digits in *end. */
static bool list_number(const char *s, uint64_t max, uint64_t *v, const char **end)
{
	*v = 0;
	for (*end = s; **end >= '0' && **end <= '9'; (*end)++) {
		*v = *v * 10 + (uint64_t)(**end - '0');
		if (*v > max)
			return false;
	}
	return *end > s;
}

/*
 * Numbers 0..o->max (at most 63) as "0,2,5", "0-3" or both ("0-2,5"), a bit each in a
 * uint64_t; each named once. o->what: what a number is ("GPU numbers").
 */
int gdrb_opt_index_set(const struct gdrb_opt *o, const char *arg, void *params)
{
	uint64_t set = 0, lo, hi, max = o->max < 63 ? o->max : 63, i;
	const char *at = arg;
	bool twice = false;

	for (;;) {
		if (!list_number(at, max, &lo, &at))
			break;
		hi = lo;
		if (*at == '-' && (!list_number(at + 1, max, &hi, &at) || hi < lo))
			break;
		for (i = lo; i <= hi; i++) {
			twice |= (set >> i) & 1;
			set |= UINT64_C(1) << i;
		}
		if (twice || (*at != ',' && *at))
			break;
		if (!*at++) {
			*FIELD(uint64_t, params, o) = set;
			return 0;
		}
	}
	gdrb_usage_err("--%s: expected %s like 0,2,5 or 0-3 (from 0 to %llu, each once), got '%.*s%s'%s",
		       o->name, o->what, (unsigned long long)max, QUOTE_MAX, arg,
		       strlen(arg) > QUOTE_MAX ? "..." : "", twice ? ": a number named twice" : "");
	return GDRB_ERR_USAGE;
}

int gdrb_opt_string(const struct gdrb_opt *o, const char *arg, void *params)
{
	*FIELD(const char *, params, o) = arg;
	return 0;
}

int gdrb_opt_set_int(const struct gdrb_opt *o, const char *arg, void *params)
{
	(void)arg;
	*FIELD(int, params, o) = o->value;
	return 0;
}

int gdrb_opt_set_bool(const struct gdrb_opt *o, const char *arg, void *params)
{
	(void)arg;
	*FIELD(bool, params, o) = o->value != 0;
	return 0;
}

/* Seconds, 0 (never) or at least GDRB_MIN_TIMEOUT. */
static int parse_timeout(const struct gdrb_opt *o, const char *arg, void *params)
{
	int rc = gdrb_opt_seconds(o, arg, params);
	double v = *FIELD(double, params, o);

	if (rc == 0 && v > 0 && v < GDRB_MIN_TIMEOUT) {
		gdrb_usage_err("--%s: expected 0 (never) or at least %.0f second (the ranks' answers can take that long on a loaded node), got '%s'",
			       o->name, GDRB_MIN_TIMEOUT, arg);
		return GDRB_ERR_USAGE;
	}
	return rc;
}

static int parse_sizes(const struct gdrb_opt *o, const char *arg, void *params)
{
	const char *err;

	if (!gdrb_sizes_parse(arg, FIELD(struct gdrb_sizes, params, o), &err))
		return 0;
	/* A long list is quoted by its head only: one line, not kilobytes. */
	if (strlen(arg) > QUOTE_MAX)
		gdrb_usage_err("-m/--sizes: %s in '%.*s...' (%zu characters); accepted: %s", err,
			       QUOTE_MAX, arg, strlen(arg), GDRB_SIZE_FORMS);
	else
		gdrb_usage_err("-m/--sizes: %s in '%s'; accepted: %s", err, arg, GDRB_SIZE_FORMS);
	return GDRB_ERR_USAGE;
}

static int parse_csv(const struct gdrb_opt *o, const char *arg, void *params)
{
	if (!*arg) {
		gdrb_usage_err("--csv: expected a file name");
		return GDRB_ERR_USAGE;
	}
	return gdrb_opt_string(o, arg, params);
}

static int parse_mem(const struct gdrb_opt *o, const char *arg, void *params)
{
	const char *hint;
	char kinds[128];

	if (gdrb_mem_kind_parse(arg, FIELD(enum gdrb_mem_kind, params, o), &hint) == 0)
		return 0;
	gdrb_usage_err("--mem: unknown memory kind '%s'; accepted: %s%s%s%s", arg,
		       gdrb_mem_kind_list(kinds, sizeof(kinds)),
		       hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
	return GDRB_ERR_USAGE;
}

static int parse_clock(const struct gdrb_opt *o, const char *arg, void *params)
{
	if (strcmp(arg, "auto") && strcmp(arg, "monotonic")) {
		gdrb_usage_err("--clock: unknown clock '%s'; accepted: auto, monotonic", arg);
		return GDRB_ERR_USAGE;
	}
	*FIELD(bool, params, o) = strcmp(arg, "monotonic") == 0;
	return 0;
}

static int parse_verbose(const struct gdrb_opt *o, const char *arg, void *params)
{
	(void)arg;
	(*FIELD(int, params, o))++;
	return 0;
}

/* ---- the options of one binary ---- */

/* Every option a binary knows, in --help order, with where its value goes. */
struct entry {
	const struct gdrb_opt *o;
	void *params;           /* the core's params or a group's */
	const char *group;      /* "core" or the group's name */
	bool offered;           /* the binary takes it (else refused by name) */
	int code;               /* getopt_long's value */
};

struct table {
	struct entry e[MAX_OPTS];
	size_t n;
};

/* COMMON always applies, sizes unless the benchmark has none, staging with memory unless it stages itself. */
static unsigned core_bits(const struct gdrb_opt_set *set)
{
	unsigned bits = (set ? set->core : 0) | GDRB_OPTG_COMMON;

	if (!(bits & GDRB_OPTG_NO_SIZES))
		bits |= GDRB_OPTG_SIZES;
	if ((bits & GDRB_OPTG_MEM) && !(bits & GDRB_OPTG_NO_STAGING))
		bits |= GDRB_OPTG_STAGING;
	return bits;
}

static void *group_store(struct gdrb_params *p, size_t i)
{
	return p->store + p->group_off[i];
}

const void *gdrb_group_params(const struct gdrb_params *p, const struct gdrb_opt_group *g)
{
	size_t i;

	for (i = 0; i < p->ngroups; i++)
		if (p->group[i] == g)
			return p->store + p->group_off[i];
	return NULL;
}

static int add_group(struct gdrb_params *p, const struct gdrb_opt_group *g)
{
	size_t off = 0, i;

	if (gdrb_group_params(p, g))
		return 0;
	if (p->ngroups)
		off = p->group_off[p->ngroups - 1] + p->group[p->ngroups - 1]->size;
	off = (off + 15) & ~(size_t)15;
	if (p->ngroups == GDRB_MAX_OPT_GROUPS || off + g->size > sizeof(p->store)) {
		gdrb_err("internal: option group %s does not fit (%zu groups, %zu bytes)", g->name,
			 p->ngroups, off + g->size);
		return GDRB_ERR;
	}
	i = p->ngroups++;
	p->group[i] = g;
	p->group_off[i] = off;
	if (g->defaults)
		g->defaults(p->store + off);
	return 0;
}

int gdrb_opts_defaults(struct gdrb_params *p, const struct gdrb_opt_set *set)
{
	const struct gdrb_opt_use *u;
	const struct gdrb_opt_group *const *k;
	const char *err;

	memset(p, 0, sizeof(*p));
	gdrb_sizes_parse(set && set->sizes ? set->sizes : GDRB_DEF_SIZES, &p->sizes, &err);
	p->iters = GDRB_DEF_ITERS;
	p->warmup = GDRB_DEF_WARMUP;
	p->min_iters = GDRB_DEF_MIN_ITERS;
	p->time_per_size = GDRB_DEF_TIME_PER_SIZE;
	p->timeout = GDRB_DEF_TIMEOUT;
	p->mem = GDRB_MEM_HOST;
	if (set && set->mem)
		p->mem = set->mem;
	p->gpu = -1;
	p->window = GDRB_DEF_WINDOW;
	gdrb_size_parse(GDRB_DEF_WINDOW_BYTES, &p->window_bytes, &err);
	p->staging = GDRB_STAGING_PIPELINED;
	/* Known groups get their defaults too: a layer may read what its options did not set. */
	for (u = set ? set->groups : NULL; u && u->group; u++)
		if (add_group(p, u->group))
			return GDRB_ERR;
	for (k = set ? set->known : NULL; k && *k; k++)
		if (add_group(p, *k))
			return GDRB_ERR;
	return 0;
}

static int add_entries(struct table *t, const struct gdrb_opt *opts, size_t n, void *params,
		       const char *group, unsigned select, int last)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct entry *e;

		if (last >= 0 && !!(opts[i].flags & GDRB_OPT_LAST) != last)
			continue;
		if (t->n == MAX_OPTS) {
			gdrb_err("internal: more than %d options", MAX_OPTS);
			return GDRB_ERR;
		}
		e = &t->e[t->n];
		e->o = &opts[i];
		e->params = params;
		e->group = group;
		e->offered = (opts[i].when & select) != 0;
		e->code = opts[i].short_opt ? opts[i].short_opt : FIRST_LONG_CODE + (int)t->n;
		t->n++;
	}
	return 0;
}

/* The core's options, the groups' in the binary's order, then the core's last ones. */
static int build_table(struct table *t, const struct gdrb_opt_set *set, struct gdrb_params *p)
{
	const struct gdrb_opt_use *u;
	unsigned core = core_bits(set);
	size_t i;

	t->n = 0;
	if (add_entries(t, core_table, N_CORE, p, "core", core, 0))
		return GDRB_ERR;
	for (i = 0; i < p->ngroups; i++) {
		unsigned select = 0;

		for (u = set ? set->groups : NULL; u && u->group; u++)
			if (u->group == p->group[i])
				select = u->select;
		if (add_entries(t, p->group[i]->opts, p->group[i]->nopts, group_store(p, i), p->group[i]->name,
				select, -1))
			return GDRB_ERR;
	}
	return add_entries(t, core_table, N_CORE, p, "core", core, 1);
}

void gdrb_opt_usage_lhs(const struct gdrb_opt *o, const char *long_pad, char *buf, size_t size)
{
	bool optional = o->flags & GDRB_OPT_VALUE_OPTIONAL;
	const char *before = !o->arg ? "" : optional ? "[=" : " ", *after = optional ? "]" : "";

	if (o->short_opt)
		snprintf(buf, size, "-%c, --%s%s%s%s", o->short_opt, o->name, before,
			 o->arg ? o->arg : "", after);
	else
		snprintf(buf, size, "%s--%s%s%s%s", long_pad, o->name, before, o->arg ? o->arg : "",
			 after);
}

/*
 * A binary with its own default sizes or memory kind: that default, where the core's help
 * names the core's; *keep is how much of the help comes before "(default ". NULL: none.
 */
static const char *own_default(const struct gdrb_opt *o, const struct gdrb_opt_set *set, int *keep)
{
	const char *at = strstr(o->help, "(default ");

	*keep = at ? (int)(at - o->help) : 0;
	if (!at || !set)
		return NULL;
	if (o->parse == parse_sizes && set->sizes)
		return set->sizes;
	if (o->parse == parse_mem && set->mem)
		return gdrb_mem_kind_name(set->mem);
	return NULL;
}

void gdrb_opts_usage(FILE *out, const struct gdrb_opt_set *set, const char *summary)
{
	static struct gdrb_params p;    /* only for the table's layout */
	static struct table t;
	size_t i;

	if (gdrb_opts_defaults(&p, set) || build_table(&t, set, &p))
		return;
	fprintf(out, "Usage: %s [OPTION]...\n%s\n\n", gdrb_prog(), summary);
	for (i = 0; i < t.n; i++) {
		const struct gdrb_opt *o = t.e[i].o;
		const char *own;
		char lhs[64];
		int keep;

		if (!t.e[i].offered)
			continue;
		gdrb_opt_usage_lhs(o, "    ", lhs, sizeof(lhs));
		own = own_default(o, set, &keep);
		if (own)
			fprintf(out, "  %-26s %.*s(default %s)\n", lhs, keep, o->help, own);
		else
			fprintf(out, "  %-26s %s\n", lhs, o->help);
	}
	fprintf(out, "\nExit status: 0 ok, 1 failure or invalid data, 2 bad usage, 77 unsupported on this node.\n");
}

/* The default a help text states: what follows its last "(default " or "(default: ", to its ')'. */
static void stated_default(const char *help, char *buf, size_t len)
{
	const char *at = NULL, *s, *end;
	int depth = 0;

	for (s = help; (s = strstr(s, "(default")) != NULL; s++)
		at = s;
	buf[0] = '\0';
	if (!at)
		return;
	at += strlen("(default");
	at += *at == ':' ? 1 : 0;
	at += *at == ' ' ? 1 : 0;
	for (end = at; *end && (*end != ')' || depth); end++)
		depth += *end == '(' ? 1 : *end == ')' ? -1 : 0;
	/* "(default: none)": the option has no default value. */
	if (end - at != 4 || strncmp(at, "none", 4))
		snprintf(buf, len, "%.*s", (int)(end - at), at);
}

void gdrb_opts_describe(struct gdrb_json *j, const struct gdrb_opt_set *set)
{
	static struct gdrb_params p;
	static struct table t;
	size_t i;

	gdrb_json_open_array(j, "options");
	if (gdrb_opts_defaults(&p, set) || build_table(&t, set, &p)) {
		gdrb_json_close_array(j);
		return;
	}
	for (i = 0; i < t.n; i++) {
		const struct gdrb_opt *o = t.e[i].o;
		char text[256], shortname[2] = { (char)o->short_opt, '\0' };
		const char *own;
		int keep;

		if (!t.e[i].offered)
			continue;
		gdrb_json_open_object(j, NULL);
		gdrb_json_string(j, "name", o->name);
		gdrb_json_string(j, "short", o->short_opt ? shortname : NULL);
		gdrb_json_string(j, "arg", o->arg);
		gdrb_json_bool(j, "value_optional", o->flags & GDRB_OPT_VALUE_OPTIONAL);
		gdrb_json_bool(j, "repeat", o->flags & GDRB_OPT_REPEAT);
		gdrb_json_string(j, "group", t.e[i].group);
		own = own_default(o, set, &keep);
		if (!own)
			stated_default(o->help, text, sizeof(text));
		gdrb_json_string(j, "default", own ? own : text[0] ? text : NULL);
		gdrb_json_string(j, "help", o->help);
		gdrb_json_close_object(j);
	}
	gdrb_json_close_array(j);
}

static const struct entry *find_code(const struct table *t, int code)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].code == code)
			return &t->e[i];
	return NULL;
}

/* A tool's entry for a core option: the core's parser of that name, into a struct gdrb_params. */
int gdrb_opt_core(const struct gdrb_opt *o, const char *arg, void *params)
{
	size_t i;

	for (i = 0; i < N_CORE; i++)
		if (!strcmp(core_table[i].name, o->name) && core_table[i].parse)
			return core_table[i].parse(&core_table[i], arg,
						   FIELD(struct gdrb_params, params, o));
	gdrb_err("internal: gdrb_opt_core: no core option --%s", o->name);
	return GDRB_ERR;
}

/*
 * An option that has no effect with the memory asked for is refused, not
 * ignored: "--gpu 5" on host memory would otherwise measure no GPU at all
 * under a command line that names one.
 */
static int device_only_options(const struct table *t, const bool *given, const struct gdrb_params *p)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct gdrb_opt *o = t->e[i].o;
		const struct gdrb_mem_kind_ops *kind = gdrb_mem_kind(p->mem);
		bool pinned_too = o->flags & GDRB_OPT_GPU_MEM;

		if (!given[i] || !(o->flags & (GDRB_OPT_DEVICE | GDRB_OPT_GPU_MEM)) || kind->on_gpu ||
		    (pinned_too && kind->opens_gpu))
			continue;
		gdrb_usage_err("--%s has no effect with --mem %s (%s): add --mem device%s, or drop --%s",
			       o->name, gdrb_mem_kind_name(p->mem), o->needs,
			       pinned_too ? " or pinned" : "", o->name);
		return GDRB_ERR_USAGE;
	}
	return 0;
}

/* One option as getopt_long returned it: refused, given twice, or parsed. */
static int take(const struct table *t, const struct entry *e, bool *given, const char *arg)
{
	const struct gdrb_opt *o = e->o;

	if (!e->offered) {
		gdrb_usage_err("--%s does not apply to %s; run '%s --help' for its options", o->name,
			       gdrb_prog(), gdrb_prog());
		return GDRB_ERR_USAGE;
	}
	/* The last of two values silently winning hides a typo in a long command line. */
	if (given[e - t->e] && !(o->flags & GDRB_OPT_REPEAT)) {
		if (o->short_opt)
			gdrb_usage_err("-%c/--%s given twice; give each option once", o->short_opt,
				       o->name);
		else
			gdrb_usage_err("--%s given twice; give each option once", o->name);
		return GDRB_ERR_USAGE;
	}
	given[e - t->e] = true;
	return o->parse(o, arg, e->params) ? GDRB_ERR_USAGE : 0;
}

/*
 * An optional value given as the next word ("--in-place both"): taken where it is
 * one of the option's words; any other word stays where it is (an operand, refused).
 */
static const char *spaced_value(const struct gdrb_opt *o, int argc, char **argv)
{
	int i;

	if (!(o->flags & GDRB_OPT_VALUE_OPTIONAL) || optind >= argc)
		return NULL;
	for (i = 0; i < o->nnames; i++)
		if (!strcmp(argv[optind], o->names[i]))
			return argv[optind++];
	return NULL;
}

/* What the option loop found: --help is printed by its caller (the benchmarks' or a tool's). */
#define PARSE_HELP 2

/*
 * getopt_long over every option of t, each refused, found given twice or parsed; --version
 * printed. GDRB_PARSE_RUN, GDRB_PARSE_EXIT, PARSE_HELP or GDRB_ERR_USAGE after one line.
 */
static int options_loop(int argc, char **argv, const struct table *t, bool *given,
			bool name_as_typed)
{
	struct option longopts[MAX_OPTS + 1];
	char shortopts[3 * MAX_OPTS + 2] = ":";
	const struct entry *e;
	size_t i, s = 1;
	int c;

	/* Every option is known, so one that does not apply gets its own message. */
	for (i = 0; i < t->n; i++) {
		const struct gdrb_opt *o = t->e[i].o;

		longopts[i] = (struct option){ o->name,
					       !o->arg ? no_argument :
					       o->flags & GDRB_OPT_VALUE_OPTIONAL ? optional_argument :
					       required_argument, NULL, t->e[i].code };
		if (o->short_opt) {
			shortopts[s++] = (char)o->short_opt;
			/* An optional value goes with the short form only as the next word (-c every): -cv stays -c -v. */
			if (o->arg && !(o->flags & GDRB_OPT_VALUE_OPTIONAL))
				shortopts[s++] = ':';
		}
	}
	memset(&longopts[t->n], 0, sizeof(longopts[t->n]));
	shortopts[s] = '\0';

	opterr = 0;
	optind = 0;      /* 0, not 1: glibc then also forgets a half-parsed "-xc" */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const char *bad = argv[optind - 1];

		if (c == 'h')
			return PARSE_HELP;
		if (c == 'V') {
			if (gdrb_log_is_leader())
				printf("%s (%s) %s\n", gdrb_prog(), PACKAGE_NAME, PACKAGE_VERSION);
			return GDRB_PARSE_EXIT;
		}
		if (c == '?') {
			/* optopt is a long-only flag's code where "--flag=x" gave it a value. */
			if (optopt && optopt < FIRST_LONG_CODE)
				gdrb_usage_err("unknown option '-%c'; run '%s --help' for the options",
					       optopt, gdrb_prog());
			else
				gdrb_usage_err("unknown option '%s'; run '%s --help' for the options",
					       bad, gdrb_prog());
			return GDRB_ERR_USAGE;
		}
		if (c == ':') {
			e = find_code(t, optopt ? optopt : 0);
			if (e && name_as_typed)
				gdrb_usage_err("%s needs a value: %s", bad, e->o->arg);
			else if (e)
				gdrb_usage_err("--%s needs a value: %s", e->o->name, e->o->arg);
			else
				gdrb_usage_err("option '%s' needs a value; run '%s --help'", bad,
					       gdrb_prog());
			return GDRB_ERR_USAGE;
		}
		e = find_code(t, c);
		if (!e || take(t, e, given, optarg ? optarg : spaced_value(e->o, argc, argv)))
			return GDRB_ERR_USAGE;
	}
	if (optind < argc) {
		gdrb_usage_err("unexpected argument '%s'; run '%s --help' for the options",
			       argv[optind], gdrb_prog());
		return GDRB_ERR_USAGE;
	}
	return GDRB_PARSE_RUN;
}

int gdrb_opts_parse(int argc, char **argv, const struct gdrb_opt_set *set, const char *summary,
		    struct gdrb_params *p)
{
	static struct table t;
	bool given[MAX_OPTS] = { false };
	size_t i;
	int rc;

	if (gdrb_opts_defaults(p, set) || build_table(&t, set, p))
		return GDRB_ERR;
	rc = options_loop(argc, argv, &t, given, false);
	if (rc == PARSE_HELP) {
		if (gdrb_log_is_leader())
			gdrb_opts_usage(stdout, set, summary);
		return GDRB_PARSE_EXIT;
	}
	if (rc)
		return rc;
	if (device_only_options(&t, given, p))
		return GDRB_ERR_USAGE;
	for (i = 0; i < p->ngroups; i++)
		if (p->group[i]->check && p->group[i]->check(p, group_store(p, i)))
			return GDRB_ERR_USAGE;
	gdrb_set_verbose(p->verbose);
	return GDRB_PARSE_RUN;
}

int gdrb_opts_parse_tool(int argc, char **argv, const struct gdrb_opt_tool *tool,
			 const char *summary, void *params)
{
	static struct table t;
	bool given[MAX_OPTS] = { false };
	size_t i;
	int rc;

	t.n = 0;
	if (add_entries(&t, tool->opts, tool->nopts, params, "tool", 0, -1))
		return GDRB_ERR;
	for (i = 0; i < t.n; i++)
		t.e[i].offered = true;
	rc = options_loop(argc, argv, &t, given, tool->name_as_typed);
	if (rc == PARSE_HELP) {
		if (gdrb_log_is_leader())
			tool->usage(stdout, summary);
		return GDRB_PARSE_EXIT;
	}
	return rc;
}
