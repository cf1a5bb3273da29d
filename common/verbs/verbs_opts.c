/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs layer's options: its table, its params' defaults and the rules
 * between them, --reg's parsing among them. Built into the option catalogue
 * (every binary): it calls nothing of the verbs library.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_opts.h"
#include "gdrb_reg.h"
#include "gdrb_verbs.h"

const char *const gdrb_completion_names[GDRB_COMPLETION_COUNT] = { "auto", "poll", "imm" };
const char *const gdrb_wait_names[GDRB_WAIT_COUNT] = { "auto", "spin", "event" };

int gdrb_reg_mode_parse(const char *text, enum gdrb_reg_mode *mode)
{
	enum gdrb_reg_mode m;

	for (m = GDRB_REG_AUTO; m <= GDRB_REG_PEERMEM; m++)
		if (!strcmp(text, gdrb_reg_mode_name(m))) {
			*mode = m;
			return 0;
		}
	return GDRB_ERR_USAGE;
}

#define VERBS(field) offsetof(struct gdrb_verbs_params, field)

/* "mlx5_0" or "mlx5_0:1". */
static int parse_ib_dev(const struct gdrb_opt *o, const char *arg, void *params)
{
	struct gdrb_verbs_params *v = params;
	const char *colon = strrchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	unsigned long port = 0;
	char *end = NULL;

	(void)o;
	if (colon) {
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
	}
	if (n == 0 || n >= sizeof(v->ib_dev) ||
	    (colon && (errno || !isdigit((unsigned char)colon[1]) || *end || port < 1 || port > 255))) {
		gdrb_usage_err("--ib-dev: expected NAME or NAME:PORT (mlx5_0, mlx5_0:1), got '%s'", arg);
		return GDRB_ERR_USAGE;
	}
	memcpy(v->ib_dev, arg, n);
	v->ib_dev[n] = '\0';
	v->ib_port = (unsigned)port;
	return 0;
}

/* A power of two from 256 to 4096. */
static int parse_mtu(const struct gdrb_opt *o, const char *arg, void *params)
{
	struct gdrb_verbs_params *v = params;

	if (gdrb_opt_int(o, arg, params))
		return GDRB_ERR_USAGE;
	if (v->mtu & (v->mtu - 1)) {
		gdrb_usage_err("--mtu: expected 256, 512, 1024, 2048 or 4096, got '%s'", arg);
		return GDRB_ERR_USAGE;
	}
	return 0;
}

static int parse_reg(const struct gdrb_opt *o, const char *arg, void *params)
{
	enum gdrb_reg_mode mode;

	(void)o;
	if (gdrb_reg_mode_parse(arg, &mode)) {
		gdrb_usage_err("--reg: unknown registration '%s'; accepted: auto, dmabuf, peermem", arg);
		return GDRB_ERR_USAGE;
	}
	((struct gdrb_verbs_params *)params)->reg_mode = (int)mode;
	return 0;
}

static const struct gdrb_opt verbs_table[] = {
	{ .name = "ib-dev", .arg = "NAME[:PORT]",
	  .help = "RDMA device and port (default: the active port nearest this rank's GPU, else the first active port)",
	  .when = GDRB_VERBS_OPTS, .parse = parse_ib_dev, .off = VERBS(ib_dev) },
	{ .name = "gid-index", .arg = "N",
	  .help = "GID index for RoCE (default: a RoCE v2 GID, IPv4-mapped before link-local)",
	  .when = GDRB_VERBS_OPTS, .parse = gdrb_opt_int, .off = VERBS(gid_index), .min = 0,
	  .max = 255 },
	{ .name = "mtu", .arg = "BYTES",
	  .help = "path MTU: 256, 512, 1024, 2048 or 4096 (default: the port's active MTU)",
	  .when = GDRB_VERBS_OPTS, .parse = parse_mtu, .off = VERBS(mtu), .min = 256, .max = 4096 },
	{ .name = "tx-depth", .arg = "N",
	  .help = "send queue depth per QP (default " GDRB_STR(GDRB_DEF_TX_DEPTH) ")",
	  .when = GDRB_VERBS_OPTS, .parse = gdrb_opt_uint, .off = VERBS(tx_depth), .min = 2,
	  .max = 1u << 15 },
	{ .name = "qps", .arg = "N",
	  .help = "data QPs per pair; a window's messages go round-robin over them, latency uses the first (default " GDRB_STR(GDRB_DEF_QPS) ")",
	  .when = GDRB_VERBS_OPT_P2P, .parse = gdrb_opt_uint, .off = VERBS(qps), .min = 1,
	  .max = GDRB_MAX_QPS },
	{ .name = "sl", .arg = "N",
	  .help = "service level 0-15 (default 0)",
	  .when = GDRB_VERBS_OPTS, .parse = gdrb_opt_uint, .off = VERBS(sl), .min = 0, .max = 15 },
	{ .name = "tclass", .arg = "N",
	  .help = "traffic class 0-255 of the GRH (RoCE DSCP << 2; default 0)",
	  .when = GDRB_VERBS_OPTS, .parse = gdrb_opt_uint, .off = VERBS(tclass), .min = 0,
	  .max = 255 },
	{ .name = "reg", .arg = "MODE",
	  .help = "device memory registration: auto (dma-buf, then peer memory), dmabuf or peermem (default auto)",
	  .when = GDRB_VERBS_OPTS, .parse = parse_reg, .off = VERBS(reg_mode),
	  .flags = GDRB_OPT_DEVICE, .needs = "it chooses how GPU memory is registered" },
	{ .name = "no-relaxed-ordering",
	  .help = "register memory without IBV_ACCESS_RELAXED_ORDERING",
	  .when = GDRB_VERBS_OPTS, .parse = gdrb_opt_set_bool, .off = VERBS(relaxed_ordering),
	  .value = 0 },
	{ .name = "completion", .arg = "MODE",
	  .help = "how the receiver learns a write arrived: poll (spin on the buffer's last byte), imm (write with immediate, receive completion) or auto (poll, imm for device memory; default auto)",
	  .when = GDRB_VERBS_OPT_COMPLETION, .parse = gdrb_opt_enum, .off = VERBS(completion),
	  .names = gdrb_completion_names, .nnames = GDRB_COMPLETION_COUNT, .what = "mode" },
	{ .name = "wait", .arg = "MODE",
	  .help = "how a rank waits for completions: spin (poll the completion queues), event (sleep on a completion channel until one is reported) or auto (event for the target of one-way write and read bandwidth, which only waits for the end; spin elsewhere) (default auto)",
	  .when = GDRB_VERBS_OPT_P2P, .parse = gdrb_opt_enum, .off = VERBS(wait),
	  .names = gdrb_wait_names, .nnames = GDRB_WAIT_COUNT, .what = "mode" },
	{ .name = "event",
	  .help = "the same as --wait event (perftest's --use_event)",
	  .when = GDRB_VERBS_OPT_P2P, .parse = gdrb_opt_set_int, .off = VERBS(wait),
	  .value = GDRB_WAIT_EVENT },
};

static void verbs_defaults(void *params)
{
	struct gdrb_verbs_params *v = params;

	v->gid_index = -1;
	v->tx_depth = GDRB_DEF_TX_DEPTH;
	v->qps = GDRB_DEF_QPS;
	v->reg_mode = GDRB_REG_AUTO;
	v->relaxed_ordering = true;
}

static int verbs_check(const struct gdrb_params *p, const void *params)
{
	const struct gdrb_verbs_params *v = params;

	if (v->completion == GDRB_COMPLETION_POLL && gdrb_mem_kind(p->mem)->on_gpu) {
		gdrb_usage_err("--completion poll: the CPU never polls GPU memory; with --mem device use imm or auto");
		return GDRB_ERR_USAGE;
	}
	if (v->completion == GDRB_COMPLETION_POLL && v->wait == GDRB_WAIT_EVENT) {
		gdrb_usage_err("--completion poll: a rank spinning on the buffer cannot sleep; with --wait event (--event) use imm or auto");
		return GDRB_ERR_USAGE;
	}
	return 0;
}

const struct gdrb_opt_group gdrb_verbs_opts = {
	.name = "verbs",
	.opts = verbs_table,
	.nopts = sizeof(verbs_table) / sizeof(verbs_table[0]),
	.size = sizeof(struct gdrb_verbs_params),
	.defaults = verbs_defaults,
	.check = verbs_check,
};
