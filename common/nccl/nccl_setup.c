/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NCCL's environment before it starts (nccl_int.h): the GPUDirect and network-only switches,
 * NCCL_DEBUG and its subsystems, the log in a private folder removed however the run ends (or
 * the user's NCCL_DEBUG_FILE, judged on every rank before anything is written), the NCCL_*
 * variables in force for the header, and what the user's NCCL_DEBUG would have shown.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrb_counters.h"
#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_nccl_log.h"
#include "gdrb_watchdog.h"
#include "nccl_int.h"

extern char **environ;

/* Variables that look like NCCL's but that NCCL never reads, and the one meant. */
static const struct {
	const char *name, *meant;
} lookalikes[] = {
	{ "NCCL_NET_GDR", "NCCL_NET_GDR_LEVEL" },
	{ "NCCL_GDR_LEVEL", "NCCL_NET_GDR_LEVEL" },
	{ "NCCL_NET_GDR_ENABLE", "NCCL_NET_GDR_LEVEL" },
	{ "NCCL_GDRDMA", "NCCL_NET_GDR_LEVEL" },
	{ "NCCL_P2P_DISABLED", "NCCL_P2P_DISABLE" },
	{ "NCCL_SHM_DISABLED", "NCCL_SHM_DISABLE" },
	{ "NCCL_IB_DISABLED", "NCCL_IB_DISABLE" },
	{ "NCCL_DEBUG_LEVEL", "NCCL_DEBUG" },
};

/* Copy untrusted text (the environment) as printable ASCII, ';' made '_', at most max bytes. */
void gdrb_nccl_clean(char *dst, size_t len, const char *src, size_t max)
{
	size_t i;

	for (i = 0; src[i] && i < max && i + 1 < len; i++) {
		unsigned char ch = (unsigned char)src[i];

		dst[i] = ch < 0x20 || ch > 0x7e || ch == ';' ? '_' : (char)ch;
	}
	if (len)
		dst[i] = '\0';
}

/* ---- the environment ---- */

/* NCCL_DEBUG's levels that print INFO lines. */
static bool debug_info(const char *level)
{
	return level && (!strcasecmp(level, "INFO") || !strcasecmp(level, "TRACE"));
}

/* This host's name as NCCL prints it (getHostName: up to the first dot; "unknown" if none). */
void gdrb_nccl_own_host(char *host, size_t len)
{
	if (gethostname(host, len - 1) != 0)
		snprintf(host, len, "unknown");
	host[len - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
}

/*
 * The file NCCL_DEBUG_FILE names for this process, expanded as NCCL does (debug.cc):
 * %h the host name up to its first dot, %p the process id, %% a percent sign; any
 * other '%' is kept as it is.
 */
static int expand_debug_file(const char *pattern, char *out, size_t len)
{
	char host[256];
	size_t o = 0;
	const char *p;

	gdrb_nccl_own_host(host, sizeof(host));
	for (p = pattern; *p; p++) {
		bool pair = p[0] == '%' && (p[1] == 'h' || p[1] == 'p' || p[1] == '%');
		int n;

		if (pair && p[1] == 'h')
			n = snprintf(out + o, len - o, "%s", host);
		else if (pair && p[1] == 'p')
			n = snprintf(out + o, len - o, "%d", (int)getpid());
		else
			n = snprintf(out + o, len - o, "%c", *p);
		if (n < 0 || (size_t)n >= len - o)
			return -1;
		o += (size_t)n;
		if (pair)
			p++;
	}
	return 0;
}

/* Whether the pattern holds a %p NCCL expands (not the "%p" of "%%p"). */
static bool has_pid(const char *pattern)
{
	const char *p;

	for (p = pattern; *p; p++) {
		if (p[0] != '%' || !p[1])
			continue;
		if (p[1] == 'p')
			return true;
		if (p[1] == '%' || p[1] == 'h')
			p++;
	}
	return false;
}

static int set(const char *name, const char *value)
{
	if (setenv(name, value, 1) == 0)
		return 0;
	gdrb_err("cannot set %s: %s", name, strerror(errno));
	return GDRB_ERR;
}

/* ---- the private log folder: removed however the run ends ---- */

/* The signals that end a process by default and can be caught, where the process has no handler of its own. */
static const int fatal_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE };
static struct sigaction saved[sizeof(fatal_signals) / sizeof(fatal_signals[0])];
static bool guarded[sizeof(fatal_signals) / sizeof(fatal_signals[0])];

/* Async-signal-safe: the folder and the one file NCCL writes in it. */
static void remove_private(void)
{
	const struct gdrb_nccl *n = gdrb_nccl();

	if (n->dir[0]) {
		unlink(n->log);
		rmdir(n->dir);
	}
}

static void on_fatal_signal(int sig)
{
	int saved_errno = errno;

	remove_private();
	errno = saved_errno;
	/* SA_RESETHAND made the disposition the default again: the signal ends the process as it would have. */
	raise(sig);
}

/*
 * Whether a timeout (the watchdog ends the process with _exit), a launcher's SIGTERM
 * or a crash removes the private folder too: on while it exists.
 */
void gdrb_nccl_guard_private(bool on)
{
	size_t i;

	gdrb_watchdog_on_exit(on ? remove_private : NULL);
	for (i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction sa;

		if (on && !guarded[i]) {
			if (sigaction(fatal_signals[i], NULL, &saved[i]) != 0 || saved[i].sa_handler != SIG_DFL ||
			    (saved[i].sa_flags & SA_SIGINFO))
				continue;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_fatal_signal;
			sa.sa_flags = SA_RESETHAND | SA_NODEFER;
			sigemptyset(&sa.sa_mask);
			guarded[i] = sigaction(fatal_signals[i], &sa, NULL) == 0;
		} else if (!on && guarded[i]) {
			/* Put back only our own handler: one set since is left alone. */
			if (sigaction(fatal_signals[i], NULL, &sa) == 0 && sa.sa_handler == on_fatal_signal)
				sigaction(fatal_signals[i], &saved[i], NULL);
			guarded[i] = false;
		}
	}
}

/*
 * NCCL_DEBUG_SUBSYS with what the log is read for: INIT and NET (the connections), TUNING
 * with --nccl-tuning-log or where the user's list has it; a user's list that lacks them
 * gains them (or a "^" list loses them), said once.
 */
static int set_subsys(const struct gdrb_ctx *c, struct gdrb_nccl *n, bool tuning)
{
	const char *user = getenv("NCCL_DEBUG_SUBSYS");
	char want[256], shown[160];

	if (user && !*user)
		user = NULL;
	/* The user's own TUNING (or ALL) is kept and read, at no further cost. */
	if (user && user[0] != '^' && (gdrb_nccl_subsys_has(user, "TUNING") || gdrb_nccl_subsys_has(user, "ALL")))
		tuning = true;
	if (gdrb_nccl_debug_subsys(user, tuning, want, sizeof(want), n->subsys_added, sizeof(n->subsys_added))) {
		gdrb_nccl_clean(shown, sizeof(shown), user ? user : "", 120);
		gdrb_err("NCCL_DEBUG_SUBSYS '%s' is too long to add INIT,NET to (at most %zu bytes)", shown,
			 sizeof(want) - 24);
		return GDRB_ERR;
	}
	n->tuning = tuning;
	if (n->subsys_added[0] && c->boot->rank == 0) {
		gdrb_nccl_clean(shown, sizeof(shown), user, 120);
		gdrb_warn("NCCL_DEBUG_SUBSYS=%s %s %s, so that NCCL's log says which transports (and, with TUNING, which algorithms) it used: NCCL_DEBUG_SUBSYS=%s",
			  shown, user[0] == '^' ? "excludes" : "lacks", n->subsys_added, want);
	}
	return set("NCCL_DEBUG_SUBSYS", want);
}

/*
 * Before NCCL starts: the GPUDirect level, the network-only switches, and the
 * INFO log of the INIT and NET subsystems into a private file, keeping the
 * user's own NCCL_DEBUG* choices (a user's file is read where it is).
 */
int gdrb_nccl_setup_env(const struct gdrb_ctx *c, struct gdrb_nccl *n)
{
	const struct gdrb_nccl_params *np = gdrb_nccl_params(c->p);
	const char *level = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
	const char *old = getenv("NCCL_NET_GDR_LEVEL"), *level_from = NULL;
	const char *file_level = gdrb_nccl_conf_value(&n->conf, "NCCL_NET_GDR_LEVEL", &level_from);
	char from[128] = "";
	int at = 0;

	if (file_level)
		gdrb_nccl_clean(from, sizeof(from), level_from, 120);

	/* Empty, NCCL writes to stdout (the results'): a private file as if unset. */
	if (file && !*file)
		file = NULL;

	if (np->gdr == GDRB_NCCL_GDR_ON || np->gdr == GDRB_NCCL_GDR_OFF) {
		const char *want = np->gdr == GDRB_NCCL_GDR_ON ? "SYS" : "LOC";

		if (old && strcmp(old, want) && c->boot->rank == 0) {
			char shown[64];

			gdrb_nccl_clean(shown, sizeof(shown), old, 40);
			gdrb_warn("--nccl-gdr %s sets NCCL_NET_GDR_LEVEL=%s in place of the environment's %s",
				  gdrb_nccl_gdr_names[np->gdr], want, shown);
		}
		if (set("NCCL_NET_GDR_LEVEL", want))
			return GDRB_ERR;
		at += snprintf(n->setting + at, sizeof(n->setting) - (size_t)at, "--nccl-gdr %s: NCCL_NET_GDR_LEVEL=%s",
			       gdrb_nccl_gdr_names[np->gdr], want);
		/* Set in the environment, it wins over NCCL's files (setenv(..., 0) there). */
		if (!old && file_level && at < (int)sizeof(n->setting)) {
			char shown[64];

			gdrb_nccl_clean(shown, sizeof(shown), file_level, 40);
			at += snprintf(n->setting + at, sizeof(n->setting) - (size_t)at,
				       " in the environment, which wins over %s's %s", from, shown);
		}
	} else if (!old && file_level) {
		char shown[64];

		gdrb_nccl_clean(shown, sizeof(shown), file_level, 40);
		at += snprintf(n->setting + at, sizeof(n->setting) - (size_t)at,
			       "--nccl-gdr auto: NCCL_NET_GDR_LEVEL=%s as %s sets it", shown, from);
	} else {
		at += snprintf(n->setting + at, sizeof(n->setting) - (size_t)at, "--nccl-gdr auto: %s",
			       old ? "NCCL_NET_GDR_LEVEL as the environment sets it" : "NCCL's own GPUDirect rule");
	}
	if (np->net_only) {
		/* NVLink SHARP is not peer-to-peer: NCCL_NVLS_ENABLE (src/transport/nvls.cc) turns it off. */
		if (set("NCCL_P2P_DISABLE", "1") || set("NCCL_SHM_DISABLE", "1") || set("NCCL_NVLS_ENABLE", "0"))
			return GDRB_ERR;
		snprintf(n->setting + at, sizeof(n->setting) - (size_t)at,
			 "; --nccl-net-only: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0");
	}
	/* INFO at least, so that the connection lines are written; the user's TRACE stays. */
	n->echo = file || !level || !*level ? 0 : debug_info(level) ? 2 : 1;
	if (!debug_info(level) && set("NCCL_DEBUG", "INFO"))
		return GDRB_ERR;
	if (set_subsys(c, n, np->tuning_log))
		return GDRB_ERR;
	if (file) {
		if (expand_debug_file(file, n->log, sizeof(n->log))) {
			n->log[0] = '\0';
			if (c->boot->rank == 0)
				gdrb_warn("NCCL_DEBUG_FILE is longer than %zu bytes expanded: NCCL's log is not read back, the transport columns say unknown",
					  sizeof(n->log) - 1);
		}
		return 0;
	}
	{
		const char *tmp = getenv("TMPDIR");
		int len;

		if (!tmp || !*tmp || tmp[0] != '/' || strlen(tmp) > 160)
			tmp = "/tmp";
		len = snprintf(n->dir, sizeof(n->dir), "%s/gdrb-nccl.XXXXXX", tmp);
		if (len < 0 || (size_t)len >= sizeof(n->dir) || !mkdtemp(n->dir)) {
			char shown[192];

			gdrb_nccl_clean(shown, sizeof(shown), tmp, 160);
			gdrb_err("cannot make a private folder for NCCL's log under %s (TMPDIR): %s", shown,
				 strerror(errno));
			n->dir[0] = '\0';
			return GDRB_ERR;
		}
		snprintf(n->log, sizeof(n->log), "%s/nccl.log", n->dir);
		gdrb_nccl_guard_private(true);
	}
	return set("NCCL_DEBUG_FILE", n->log);
}

/* ---- NCCL_DEBUG_FILE, judged before anything is written ---- */

/* path with its folder resolved by the file system (its last name as given); "" if it cannot be. */
static void canonical(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	int n;

	out[0] = '\0';
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (dlen == 0)
		snprintf(dir, sizeof(dir), "/");
	else if (dlen < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)dlen, path);
	else
		return;
	if (!realpath(dir, real))
		return;
	n = snprintf(out, len, "%s/%s", real, slash ? slash + 1 : path);
	if (n < 0 || (size_t)n >= len)
		out[0] = '\0';
}

/* Whether NCCL's file (st: what lstat found there, NULL: nothing) is the output at out. */
static bool same_file(const char *path, const struct stat *st, const char *out)
{
	char a[PATH_MAX + 256], b[PATH_MAX + 256];
	struct stat o;

	if (!strcmp(path, out))
		return true;
	if (st && stat(out, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
		return true;
	canonical(path, a, sizeof(a));
	canonical(out, b, sizeof(b));
	return a[0] && !strcmp(a, b);
}

/*
 * What NCCL would open for writing (fopen "w": it follows a link, blocks on a FIFO,
 * truncates what is there): 0 where it is a regular file or nothing yet and no output
 * of the run, or -1 and why.
 */
static int judge_file(const struct gdrb_ctx *c, const char *path, char *why, size_t len)
{
	const char *csv = c->p->csv_path, *kind = NULL;
	char counters[PATH_MAX];
	struct stat st;
	bool there = lstat(path, &st) == 0;

	if (there && S_ISLNK(st.st_mode))
		kind = "a symbolic link (not followed)";
	else if (there && S_ISFIFO(st.st_mode))
		kind = "a FIFO (NCCL would wait on it forever)";
	else if (there && S_ISDIR(st.st_mode))
		kind = "a directory";
	else if (there && !S_ISREG(st.st_mode))
		kind = "not a regular file (a device or a socket)";
	else if (csv && same_file(path, there ? &st : NULL, csv))
		kind = "the --csv file (NCCL would overwrite the results)";
	else if (csv && !gdrb_counters_path(csv, counters, sizeof(counters)) &&
		 same_file(path, there ? &st : NULL, counters))
		kind = "the counter file beside the --csv file";
	if (!kind)
		return 0;
	snprintf(why, len, "'%s' is %s", path, kind);
	return -1;
}

/*
 * Every rank's NCCL_DEBUG_FILE, before any output is opened: expanded as NCCL will
 * (%h, %p) and judged; one without %p would be one file for every rank of the host
 * (and NCCL truncates it as each starts), so each rank is given its own,
 * NAME.%p, said once. One line from rank 0 naming the first rank refused, exit 2.
 */
int gdrb_nccl_preflight(struct gdrb_ctx *c)
{
	struct gdrb_boot *b = c->boot;
	const char *file = getenv("NCCL_DEBUG_FILE");
	struct gdrb_nccl_fail_note mine = { 0 }, *all = NULL;
	char path[GDRB_NCCL_LOG_LEN], per_rank[GDRB_NCCL_LOG_LEN], why[320] = "";
	bool add_pid = file && *file && !has_pid(file);
	int r, rc;

	if (file && *file) {
		if (expand_debug_file(file, path, sizeof(path)))
			snprintf(why, sizeof(why), "longer than %zu bytes once expanded", sizeof(path) - 1);
		else if (!judge_file(c, path, why, sizeof(why)) && add_pid) {
			int n = snprintf(per_rank, sizeof(per_rank), "%s.%%p", file);

			if (n < 0 || (size_t)n >= sizeof(per_rank) || expand_debug_file(per_rank, path, sizeof(path)))
				snprintf(why, sizeof(why), "longer than %zu bytes once expanded", sizeof(path) - 1);
			else
				(void)judge_file(c, path, why, sizeof(why));
		}
	}
	if (why[0]) {
		mine.failed = 1;
		snprintf(mine.text, sizeof(mine.text), "%s", why);
	}
	if (b->rank == 0 && !(all = calloc((size_t)b->size, sizeof(*all))))
		return GDRB_ERR;
	if (gdrb_boot_step_gather(b, &mine, sizeof(mine), all, "checking NCCL_DEBUG_FILE", GDRB_WATCHDOG_NO_SIZE)) {
		free(all);
		return GDRB_ERR;
	}
	for (r = 0; b->rank == 0 && r < b->size; r++) {
		all[r].text[sizeof(all[r].text) - 1] = '\0';
		if (!all[r].failed)
			continue;
		gdrb_usage_err("NCCL_DEBUG_FILE: on rank %d (%s) %s; accepted: a regular file or a path not there yet, not a link, not an output of the run (--csv, its counter file); %%h and %%p expand to the host and the process id",
			       r, b->hosts[r], all[r].text);
		break;
	}
	free(all);
	rc = gdrb_boot_agree(b, why[0] ? GDRB_ERR_USAGE : 0);
	if (rc || !add_pid)
		return rc;
	if (set("NCCL_DEBUG_FILE", per_rank))
		return GDRB_ERR;
	if (b->rank == 0)
		gdrb_warn("NCCL_DEBUG_FILE '%s' has no %%p, so every rank would write one file: each rank writes its own, '%s.%%p' (%%p: its process id)",
			  file, file);
	return 0;
}

/* Rank 0's NCCL_* variables in force, and a warning for each lookalike NCCL ignores. */
void gdrb_nccl_read_env(const struct gdrb_ctx *c, struct gdrb_nccl *n)
{
	char **e;
	size_t at = 0, i;

	n->env[0] = '\0';
	if (c->boot->rank != 0)
		return;
	for (e = environ; e && *e; e++) {
		char item[160];
		const char *eq = strchr(*e, '=');

		if (strncmp(*e, "NCCL_", 5) || !eq)
			continue;
		/* The private log's path says nothing and is gone after the run. */
		if (n->dir[0] && !strncmp(*e, "NCCL_DEBUG_FILE=", 16))
			continue;
		/* NVIDIA's container images set it for the NCCL they were built with; NCCL reads no such variable. */
		if (!strncmp(*e, "NCCL_VERSION=", 13)) {
			gdrb_nccl_clean(n->env_version, sizeof(n->env_version), eq + 1, 24);
			continue;
		}
		for (i = 0; i < sizeof(lookalikes) / sizeof(lookalikes[0]); i++)
			if ((size_t)(eq - *e) == strlen(lookalikes[i].name) &&
			    !strncmp(*e, lookalikes[i].name, (size_t)(eq - *e)))
				gdrb_warn("%s is not a variable NCCL reads; %s is", lookalikes[i].name,
					  lookalikes[i].meant);
		gdrb_nccl_clean(item, sizeof(item), *e, 120);
		if (at + strlen(item) + 2 < sizeof(n->env))
			at += (size_t)snprintf(n->env + at, sizeof(n->env) - at, "%s%s", at ? " " : "", item);
	}
}

/*
 * NCCL_VERSION (set by container images, "2.28.3-1") names another NCCL than the
 * one loaded: say so once, since it is what a reader of the environment trusts.
 */
void gdrb_nccl_env_version_differs(const struct gdrb_nccl *n)
{
	const char *lib = n->library + 5;       /* past "NCCL " */
	size_t len = strcspn(lib, " ");

	if (!n->env_version[0] || !n->version)
		return;
	if (!strncmp(n->env_version, lib, len) && (n->env_version[len] == '\0' || n->env_version[len] == '-'))
		return;
	gdrb_warn("NCCL_VERSION=%s in the environment (a container's label; NCCL reads no such variable) is not the NCCL loaded: %.*s",
		  n->env_version, (int)len, lib);
}

/* What the user's NCCL_DEBUG would have shown on stdout, from the private log onto stderr. */
void gdrb_nccl_echo(const struct gdrb_nccl *n)
{
	FILE *f;
	char line[1024];

	if (!n->dir[0] || !(f = fopen(n->log, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char shown[sizeof(line)];

		if (n->echo != 2 && !(n->echo == 1 && strstr(line, " NCCL WARN ")))
			continue;
		/* Host and device names come from the system: no control character reaches the terminal. */
		line[strcspn(line, "\n")] = '\0';
		gdrb_text_clean(shown, sizeof(shown), line);
		fprintf(stderr, "%s\n", shown);
	}
	fclose(f);
}
