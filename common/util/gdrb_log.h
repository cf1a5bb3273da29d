/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Diagnostics: every message goes to stderr with the program name and, once
 * known, the rank and host, so lines from many ranks stay attributable.
 * stdout is reserved for results.
 */
#ifndef GDRB_LOG_H
#define GDRB_LOG_H

#include <stdarg.h>

/* Exit codes shared by every binary and script. */
enum {
	GDRB_EXIT_OK = 0,
	GDRB_EXIT_FAIL = 1,
	GDRB_EXIT_USAGE = 2,
	GDRB_EXIT_UNSUPPORTED = 77,
};

/* Negative return codes of common/ functions (0 is success). */
enum {
	GDRB_ERR = -1,          /* failure, already logged */
	GDRB_ERR_USAGE = -2,    /* bad input, already logged */
	GDRB_ERR_UNSUPP = -77,  /* not available on this node, already logged */
};

/* The exit code of a return code (0 or GDRB_ERR_*), and back. */
static inline int gdrb_exit_code(int rc)
{
	return rc == 0 ? GDRB_EXIT_OK : rc == GDRB_ERR_USAGE ? GDRB_EXIT_USAGE :
	       rc == GDRB_ERR_UNSUPP ? GDRB_EXIT_UNSUPPORTED : GDRB_EXIT_FAIL;
}

static inline int gdrb_err_code(int code)
{
	return code == GDRB_EXIT_OK ? 0 : code == GDRB_EXIT_USAGE ? GDRB_ERR_USAGE :
	       code == GDRB_EXIT_UNSUPPORTED ? GDRB_ERR_UNSUPP : GDRB_ERR;
}

/* What every CUDA entry of a build without CUDA says (memory, inventory). */
#define GDRB_NO_CUDA "gdrbench was built without CUDA; reconfigure with --with-cuda"

void gdrb_log_init(const char *prog);
void gdrb_log_set_rank(int rank, const char *host);
const char *gdrb_prog(void);
const char *gdrb_host(void);

/* Whether this process prints rank-0-only messages (usage errors, skips). */
int gdrb_log_is_leader(void);
void gdrb_log_set_leader(int leader);

void gdrb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gdrb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gdrb_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: one line "prog: msg", printed by the leader only. */
void gdrb_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void gdrb_set_verbose(int level);
int gdrb_verbose(void);

#endif
