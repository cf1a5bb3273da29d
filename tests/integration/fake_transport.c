/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A transport that exists only in the tests: the worked example of
 * docs/architecture.md, "How to add a transport". It owns its option group
 * (--fake-delay), its params and its state, and runs a benchmark through
 * gdrb_main on the single-process bootstrap, with no edit to a core file:
 * it includes public headers only. An iteration "moves" a message by
 * spinning for the delay, so the reported latency proves the option arrived.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gdrb_boot.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_opts.h"
#include "gdrb_transports.h"

/* 1. The transport's params, filled by the core's parser from its table. */
struct fake_params {
	unsigned delay_us;      /* how long one message takes */
};

/* 2. Its option group: a table, defaults, and which options a binary offers. */
enum { FAKE_OPTS = 1u << 0 };

static const struct gdrb_opt fake_table[] = {
	{ .name = "fake-delay", .arg = "US",
	  .help = "microseconds one message of the fake transport takes (default 50)",
	  .when = FAKE_OPTS, .parse = gdrb_opt_uint, .off = offsetof(struct fake_params, delay_us),
	  .min = 0, .max = 1000000 },
};

static void fake_defaults(void *params)
{
	((struct fake_params *)params)->delay_us = 50;
}

static const struct gdrb_opt_group fake_opts = {
	.name = "fake",
	.opts = fake_table,
	.nopts = sizeof(fake_table) / sizeof(fake_table[0]),
	.size = sizeof(struct fake_params),
	.defaults = fake_defaults,
};

/* 3. Its state, owned through c->priv, and its callbacks. */
struct fake_state {
	double delay_s;
	unsigned long messages;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fake_setup(struct gdrb_ctx *c)
{
	const struct fake_params *fp = gdrb_group_params(c->p, &fake_opts);
	struct fake_state *s = calloc(1, sizeof(*s));

	if (!s) {
		gdrb_err("out of memory");
		return GDRB_ERR;
	}
	s->delay_s = fp->delay_us * 1e-6;
	c->priv = s;
	c->variants[0].how = "a spin of --fake-delay per message";
	return 0;
}

static int fake_iteration(struct gdrb_ctx *c, size_t size)
{
	struct fake_state *s = c->priv;
	double end = now_s() + s->delay_s;

	(void)size;
	while (now_s() < end)
		;
	s->messages++;
	return 0;
}

static void fake_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	const struct fake_params *fp = gdrb_group_params(c->p, &fake_opts);

	snprintf(buf, len, "fake transport: %u us per message (--fake-delay)", fp->delay_us);
}

static void fake_teardown(struct gdrb_ctx *c)
{
	free(c->priv);
	c->priv = NULL;
}

/* 4. The binary: a descriptor naming the groups it takes, and a one-line main. */
static const struct gdrb_opt_use fake_groups[] = { { &fake_opts, FAKE_OPTS }, { NULL, 0 } };

static const struct gdrb_bench fake_latency = {
	.name = "fake_latency",
	.layer = "fake",
	.summary = "Latency of the test-only fake transport (one process, a spin per message)",
	.metric = GDRB_METRIC_LAT,
	.traffic = GDRB_TRAFFIC_LOCAL,          /* one process, no peer; no GPU unless --mem asks */
	.opt_core = GDRB_OPTG_MEM,
	.opt_groups = fake_groups,
	.opt_known = gdrb_opt_catalog,
	.setup = fake_setup,
	.describe = fake_describe,
	.iteration = fake_iteration,
	.teardown = fake_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&fake_latency, &gdrb_boot_self, argc, argv);
}
