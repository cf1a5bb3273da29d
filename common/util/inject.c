/* SPDX-License-Identifier: BSD-3-Clause */
/* The test hooks, read and checked in one place (gdrb_inject.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_size.h"

#define STALL_MAX_US 10000000UL         /* 10 s: longer than any test needs, short of a hang */
#define HOST_MAX_LEN 63                 /* GDRB_HOST_MAX less the terminating byte */
#define NOTE_VALUE_MAX 48               /* a hook's value in the note, at most */

#define HOOKS_OFF { .corrupt_rank = -1, .pairs_stop_rank = -1, .step_stop_rank = -1 }

static const struct gdrb_inject off = HOOKS_OFF;
static struct gdrb_inject hooks = HOOKS_OFF;
static char note[512];

/* A value for the refusal's line: at most 40 bytes, any but printable ASCII as '?'. */
static const char *shown(const char *v, char *buf, size_t len)
{
	size_t i;

	for (i = 0; v[i] && i < 40 && i + 1 < len; i++)
		buf[i] = v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* One hook: its variable and the form it accepts, for the one line of a refusal. */
struct hook {
	const char *env, *form;
	int (*parse)(const char *v, struct gdrb_inject *h);
};

/*
 * A decimal number of digits only (no sign, space, base prefix or exponent)
 * from lo to hi; *end (if given) gets what follows it, else nothing may.
 */
static int decimal(const char *s, unsigned long long lo, unsigned long long hi,
		   unsigned long long *out, const char **end)
{
	char *e;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &e, 10);
	if (errno || *out < lo || *out > hi || (end ? 0 : *e != '\0'))
		return -1;
	if (end)
		*end = e;
	return 0;
}

static int parse_rank(const char *s, int *rank, const char **end)
{
	unsigned long long v;

	if (decimal(s, 0, INT_MAX, &v, end))
		return -1;
	*rank = (int)v;
	return 0;
}

static int parse_corruption(const char *v, struct gdrb_inject *h)
{
	return parse_rank(v, &h->corrupt_rank, NULL);
}

static int parse_stall(const char *v, struct gdrb_inject *h)
{
	unsigned long long us, every = ULONG_MAX;
	const char *rest;

	if (decimal(v, 1, STALL_MAX_US, &us, &rest))
		return -1;
	if (*rest == '/') {
		if (decimal(rest + 1, 1, ULONG_MAX, &every, NULL))
			return -1;
	} else if (*rest) {
		return -1;
	}
	h->stall_us = (unsigned long)us;
	h->stall_every = (unsigned long)every;
	return 0;
}

static int parse_hosts(const char *v, struct gdrb_inject *h)
{
	const char *s = v;

	for (;;) {
		size_t len = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-_");

		if (len == 0 || len > HOST_MAX_LEN)
			return -1;
		s += len;
		if (*s == '\0')
			break;
		if (*s++ != ',')
			return -1;
	}
	h->hosts = v;
	return 0;
}

/* RANK:N, N from 1 to max. */
static int parse_rank_at(const char *v, unsigned long long max, int *rank, unsigned long long *n)
{
	const char *rest;

	if (parse_rank(v, rank, &rest) || *rest != ':')
		return -1;
	return decimal(rest + 1, 1, max, n, NULL);
}

static int parse_pairs_stop(const char *v, struct gdrb_inject *h)
{
	unsigned long long shift;

	if (parse_rank_at(v, UINT_MAX, &h->pairs_stop_rank, &shift))
		return -1;
	h->pairs_stop_shift = (unsigned)shift;
	return 0;
}

static int parse_step_stop(const char *v, struct gdrb_inject *h)
{
	unsigned long long n;

	if (parse_rank_at(v, ULONG_MAX, &h->step_stop_rank, &n))
		return -1;
	h->step_stop_n = (unsigned long)n;
	return 0;
}

static int parse_stage_race(const char *v, struct gdrb_inject *h)
{
	if (strcmp(v, "out") && strcmp(v, "in") && strcmp(v, "all"))
		return -1;
	h->stage_race = v;
	return 0;
}

static int parse_verbs_max_msg(const char *v, struct gdrb_inject *h)
{
	const char *err;
	size_t size;

	if (gdrb_size_parse(v, &size, &err) || size == 0)
		return -1;
	h->verbs_max_msg = size;
	return 0;
}

static int parse_sysfs_root(const char *v, struct gdrb_inject *h)
{
	struct stat st;

	if (strlen(v) >= PATH_MAX / 2 || stat(v, &st) || !S_ISDIR(st.st_mode))
		return -1;
	h->sysfs_root = v;
	return 0;
}

static int parse_nccl_etc_conf(const char *v, struct gdrb_inject *h)
{
	if (v[0] != '/' || strlen(v) >= PATH_MAX / 2)
		return -1;
	h->nccl_etc_conf = v;
	return 0;
}

/* NAME+N@K or NAME-N@K: a counter's name, by how much it moves, from which reading on; NAME+N@K+: a rise at each. */
static int parse_counter(const char *v, struct gdrb_inject *h)
{
	size_t len = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	unsigned long long delta, from;
	const char *rest, *end;

	if (len == 0 || len >= sizeof(h->counter_name) || (v[len] != '+' && v[len] != '-') ||
	    decimal(v + len + 1, 1, 1ULL << 62, &delta, &rest) || *rest != '@' ||
	    decimal(rest + 1, 1, ULONG_MAX, &from, &end) ||
	    (strcmp(end, "") && (strcmp(end, "+") || v[len] != '+')))
		return -1;
	memcpy(h->counter_name, v, len);
	h->counter_name[len] = '\0';
	h->counter_ramp = *end == '+';
	h->counter_down = v[len] == '-';
	h->counter_delta = delta;
	h->counter_from = (unsigned long)from;
	return 0;
}

static const struct hook table[] = {
	{ "GDRB_INJECT_CORRUPTION", "RANK, a rank number from 0", parse_corruption },
	{ "GDRB_INJECT_STALL", "US or US/EVERY: microseconds from 1 to 10000000, every EVERY-th iteration from 1",
	  parse_stall },
	{ "GDRB_INJECT_HOSTS", "H0,H1,...: host names of 1 to 63 letters, digits, '.', '-' or '_'", parse_hosts },
	{ "GDRB_INJECT_PAIRS_STOP", "RANK:SHIFT: a rank number from 0, a shift from 1", parse_pairs_stop },
	{ "GDRB_INJECT_STEP_STOP", "RANK:N: a rank number from 0, a step from 1", parse_step_stop },
	{ "GDRB_INJECT_STAGE_RACE", "out, in or all", parse_stage_race },
	{ "GDRB_VERBS_MAX_MSG", "SIZE: a size from 1 byte (16K, 1M)", parse_verbs_max_msg },
	{ "GDRB_INJECT_SYSFS_ROOT", "DIR: an existing directory (a sysfs fixture tree)", parse_sysfs_root },
	{ "GDRB_INJECT_COUNTER", "NAME+N@K, NAME+N@K+ or NAME-N@K: a counter name of letters, digits and '_', N from 1, a reading K from 1",
	  parse_counter },
	{ "GDRB_INJECT_NCCL_ETC_CONF", "PATH: an absolute path, read in place of /etc/nccl.conf", parse_nccl_etc_conf },
};
#define NHOOKS (sizeof(table) / sizeof(table[0]))

int gdrb_inject_load(void)
{
	const char *sw = getenv(GDRB_TEST_HOOKS_ENV), *v;
	struct gdrb_inject h = off;
	char text[sizeof(note)] = "", value[48];
	size_t i, len = 0;

	hooks = off;
	note[0] = '\0';
	if (sw && *sw && strcmp(sw, "1")) {
		gdrb_usage_err("%s: expected 1 (allow the test hooks GDRB_INJECT_*) or nothing, got '%s'",
			       GDRB_TEST_HOOKS_ENV, shown(sw, value, sizeof(value)));
		return GDRB_ERR_USAGE;
	}
	for (i = 0; i < NHOOKS; i++) {
		v = getenv(table[i].env);
		if (!v || !*v)
			continue;
		if (!sw || !*sw) {
			gdrb_usage_err("%s is set: a test hook, which changes what is measured; unset it, or set %s=1 to run a test",
				       table[i].env, GDRB_TEST_HOOKS_ENV);
			return GDRB_ERR_USAGE;
		}
		if (table[i].parse(v, &h)) {
			gdrb_usage_err("%s: expected %s, got '%s'", table[i].env, table[i].form,
				       shown(v, value, sizeof(value)));
			return GDRB_ERR_USAGE;
		}
		if (len < sizeof(text))
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s" GDRB_INJECT_MARK "%s=%.*s%s",
						len ? "; " : "", table[i].env, NOTE_VALUE_MAX, v,
						strlen(v) > NOTE_VALUE_MAX ? "..." : "");
	}
	hooks = h;
	memcpy(note, text, sizeof(note));
	return 0;
}

const struct gdrb_inject *gdrb_inject(void)
{
	return &hooks;
}

bool gdrb_inject_active(void)
{
	return note[0] != '\0';
}

const char *gdrb_inject_note(void)
{
	return note;
}
