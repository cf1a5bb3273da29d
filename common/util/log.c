/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_json.h"
#include "gdrb_log.h"

static const char *log_prog = "gdrbench";
static char log_host[256];
static int log_rank = -1;
static int log_leader = 1;
static int log_verbose;

void gdrb_log_init(const char *prog)
{
	const char *slash = strrchr(prog, '/');

	log_prog = slash ? slash + 1 : prog;
	if (gethostname(log_host, sizeof(log_host)) != 0)
		strcpy(log_host, "unknown");
	log_host[sizeof(log_host) - 1] = '\0';
}

void gdrb_log_set_rank(int rank, const char *host)
{
	log_rank = rank;
	if (host && host != log_host)
		snprintf(log_host, sizeof(log_host), "%s", host);
}

const char *gdrb_prog(void) { return log_prog; }
const char *gdrb_host(void) { return log_host; }
int gdrb_log_is_leader(void) { return log_leader; }
void gdrb_log_set_leader(int leader) { log_leader = leader; }
void gdrb_set_verbose(int level) { log_verbose = level; }
int gdrb_verbose(void) { return log_verbose; }

/*
 * One message as one line on stderr. Host names, device names from sysfs,
 * paths and values from the environment or the command line are in it, so it
 * is written as gdrb_text_put() writes text: no control byte or escape
 * sequence reaches the terminal, and an embedded newline cannot fake a line.
 */
static void put_line(const char *line)
{
	char shown[4 * 2048 + 1];

	gdrb_text_clean(shown, sizeof(shown), line);
	/* One write per message keeps lines from several ranks whole. */
	fprintf(stderr, "%s\n", shown);
	fflush(stderr);
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	if (log_rank >= 0)
		n = snprintf(line, sizeof(line), "%s: rank %d (%s): %s", log_prog,
			     log_rank, log_host, level);
	else
		n = snprintf(line, sizeof(line), "%s: %s", log_prog, level);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	put_line(line);
}

void gdrb_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
}

void gdrb_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void gdrb_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void gdrb_usage_err(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (!log_leader)
		return;
	n = snprintf(line, sizeof(line), "%s: ", log_prog);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	put_line(line);
}
