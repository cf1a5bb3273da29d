/* SPDX-License-Identifier: BSD-3-Clause */
/* The all-pairs options (--rounds, --seed, --granularity, --metric): a table, no transport. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_pairs.h"

const char *const gdrb_pairs_gran_names[GDRB_PAIRS_GRAN_COUNT] = { "rank", "node", "rail" };

static gdrb_opt_parse_fn parse_metric, parse_seed;

#define PAIRS(field) offsetof(struct gdrb_pairs_params, field)

static const struct gdrb_opt pairs_table[] = {
	{ .name = "rounds", .arg = "K",
	  .help = "measure K rounds of random distinct shifts from 1..m-1 (m: ranks in a shift group), chosen by --seed, instead of all m-1 (default: all)",
	  .when = GDRB_PAIRS_OPTS, .parse = gdrb_opt_uint, .off = PAIRS(rounds), .min = 1,
	  .max = 1u << 20 },
	{ .name = "seed", .arg = "N",
	  .help = "seed of the --rounds sample, printed in the header and the CSV note (default: from the time)",
	  .when = GDRB_PAIRS_OPTS, .parse = parse_seed, .off = PAIRS(seed), .min = 0,
	  .max = UINT64_MAX },
	{ .name = "granularity", .arg = "G",
	  .help = "rank: every rank a row; node: one rank per node; rail: one rank per GPU, local rank i on GPU i and its nearest NIC, paired only with local rank i of the other nodes (default rank)",
	  .when = GDRB_PAIRS_OPTS, .parse = gdrb_opt_enum, .off = PAIRS(granularity),
	  .names = gdrb_pairs_gran_names, .nnames = GDRB_PAIRS_GRAN_COUNT, .what = "granularity" },
	{ .name = "start-at", .arg = "EPOCH",
	  .help = "before the first round every rank waits until this wall-clock second (since 1970, date +%s), then for the others: jobs started apart measure together, as gdrb rails starts one per rail (default: at once)",
	  .when = GDRB_PAIRS_OPTS, .parse = gdrb_opt_u64, .off = PAIRS(start_at), .min = 1,
	  .max = 99999999999ull },
	{ .name = "round-every", .arg = "SEC",
	  .help = "with --start-at: round i (from 0) begins at --start-at + i x SEC, so that the rounds of jobs started together stay together (default: each round at once after the one before)",
	  .when = GDRB_PAIRS_OPTS, .parse = gdrb_opt_seconds, .off = PAIRS(round_every), .min = 1 },
	{ .name = "metric", .arg = "LIST",
	  .help = "bw (a window each way, all pairs of a round at once), lat (ping-pong, one-way = round trip / 2, in phases where a rank is in one pair) or bw,lat (default bw)",
	  .when = GDRB_PAIRS_OPTS, .parse = parse_metric, .off = PAIRS(metrics) },
};

static int parse_seed(const struct gdrb_opt *o, const char *arg, void *params)
{
	if (gdrb_opt_u64(o, arg, params))
		return GDRB_ERR_USAGE;
	((struct gdrb_pairs_params *)params)->seed_given = true;
	return 0;
}

static int parse_metric(const struct gdrb_opt *o, const char *arg, void *params)
{
	unsigned bits = 0;
	const char *s = arg;

	while (*s) {
		size_t len = strcspn(s, ",");

		if (len == 2 && !strncmp(s, "bw", 2))
			bits |= GDRB_PAIRS_BW;
		else if (len == 3 && !strncmp(s, "lat", 3))
			bits |= GDRB_PAIRS_LAT;
		else
			break;
		s += len;
		if (*s == ',' && *++s == '\0')
			break;
	}
	if (*s || !bits) {
		gdrb_usage_err("--metric: unknown metric list '%s'; accepted: bw, lat or bw,lat", arg);
		return GDRB_ERR_USAGE;
	}
	*(unsigned *)((char *)params + o->off) = bits;
	return 0;
}

static void pairs_defaults(void *params)
{
	struct gdrb_pairs_params *pp = params;

	memset(pp, 0, sizeof(*pp));
	pp->granularity = GDRB_PAIRS_GRAN_RANK;
	pp->metrics = GDRB_PAIRS_BW;
}

const struct gdrb_opt_group gdrb_pairs_opts = {
	.name = "pairs",
	.opts = pairs_table,
	.nopts = sizeof(pairs_table) / sizeof(pairs_table[0]),
	.size = sizeof(struct gdrb_pairs_params),
	.defaults = pairs_defaults,
};
