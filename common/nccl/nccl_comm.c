/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's communicator, environment and log (nccl_int.h). */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrb_coll_opts.h"
#include "gdrb_counters.h"
#include "gdrb_inject.h"
#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_nccl_log.h"
#include "gdrb_size.h"
#include "gdrb_sysfs.h"
#include "gdrb_transports.h"
#include "gdrb_watchdog.h"
#include "nccl_int.h"

extern char **environ;

static struct gdrb_nccl the;

const struct gdrb_nccl *gdrb_nccl(void)
{
	return &the;
}

/* What the test suite's simulated NCCL exports (tests/support/simnccl): never real NCCL. */
#define SIMNCCL_MARKER "gdrb_simnccl_simulated"

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
static void clean(char *dst, size_t len, const char *src, size_t max)
{
	size_t i;

	for (i = 0; src[i] && i < max && i + 1 < len; i++) {
		unsigned char ch = (unsigned char)src[i];

		dst[i] = ch < 0x20 || ch > 0x7e || ch == ';' ? '_' : (char)ch;
	}
	if (len)
		dst[i] = '\0';
}

void gdrb_nccl_bench(struct gdrb_bench *b, const char *name, const char *summary,
		     const struct gdrb_opt_use *groups)
{
	*b = (struct gdrb_bench){
		.name = name,
		.layer = "nccl",
		.summary = summary,
		.metric = GDRB_METRIC_LAT,
		.traffic = GDRB_TRAFFIC_COLLECTIVE,
		.opt_core = GDRB_OPTG_MEM | GDRB_OPTG_NO_STAGING,
		.opt_groups = groups,
		.opt_known = gdrb_opt_catalog,
		.default_mem = GDRB_MEM_DEVICE,
		.paths = gdrb_nccl_path,
		.preflight = gdrb_nccl_preflight,
		.end = gdrb_nccl_end,
	};
}

size_t gdrb_nccl_path(const struct gdrb_ctx *c, struct gdrb_variant *v)
{
	int gdr = gdrb_nccl_params(c->p)->gdr;

	v->label = gdr == GDRB_NCCL_GDR_OFF ? "staged" : "direct";
	v->path = v->label;
	v->mem = gdrb_mem_kind_name(c->p->mem);
	v->reg = "nccl";
	v->how = gdr == GDRB_NCCL_GDR_OFF ?
		 "NCCL with GPUDirect RDMA off (NCCL_NET_GDR_LEVEL=LOC): its network connections stage through host memory" :
		 gdr == GDRB_NCCL_GDR_ON ?
		 "NCCL with GPUDirect RDMA allowed at any GPU-NIC distance (NCCL_NET_GDR_LEVEL=SYS); the transport columns say whether it was used" :
		 "NCCL as it chooses (GPUDirect RDMA where the GPU and NIC are close enough); the transport columns say whether it was used";
	v->supported = true;
	v->staged = false;      /* NCCL stages on its own: no bounce buffer of the driver's */
	return 1;
}

int gdrb_nccl_check_mem(const struct gdrb_ctx *c)
{
	if (c->p->mem == GDRB_MEM_HOST) {
		gdrb_usage_err("--mem host: NCCL's kernels read and write GPU-accessible memory only; accepted: device (the default), pinned");
		return GDRB_ERR_USAGE;
	}
	if (!gdrb_mem_kind(c->p->mem)->on_gpu && c->p->mem != GDRB_MEM_PINNED) {
		gdrb_usage_err("--mem %s: NCCL takes device or pinned memory; accepted: device (the default), pinned",
			       gdrb_mem_kind_name(c->p->mem));
		return GDRB_ERR_USAGE;
	}
#if !HAVE_DECL_NCCLBFLOAT16
	if (gdrb_coll_params(c->p) && gdrb_coll_params(c->p)->dtype == GDRB_BFLOAT16) {
		gdrb_usage_err("--dtype bfloat16: the NCCL this was built with (%s) has no bfloat16; accepted: int8, int32, int64, float, double, half",
			       GDRB_NCCL_VERSION_STRING);
		return GDRB_ERR_USAGE;
	}
#endif
	return 0;
}

/* ---- the environment ---- */

/* NCCL_DEBUG's levels that print INFO lines. */
static bool debug_info(const char *level)
{
	return level && (!strcasecmp(level, "INFO") || !strcasecmp(level, "TRACE"));
}

/* This host's name as NCCL prints it (getHostName: up to the first dot; "unknown" if none). */
static void own_host(char *host, size_t len)
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

	own_host(host, sizeof(host));
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
	if (the.dir[0]) {
		unlink(the.log);
		rmdir(the.dir);
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
static void guard_private(bool on)
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
		clean(shown, sizeof(shown), user ? user : "", 120);
		gdrb_err("NCCL_DEBUG_SUBSYS '%s' is too long to add INIT,NET to (at most %zu bytes)", shown,
			 sizeof(want) - 24);
		return GDRB_ERR;
	}
	n->tuning = tuning;
	if (n->subsys_added[0] && c->boot->rank == 0) {
		clean(shown, sizeof(shown), user, 120);
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
static int setup_env(const struct gdrb_ctx *c, struct gdrb_nccl *n)
{
	const struct gdrb_nccl_params *np = gdrb_nccl_params(c->p);
	const char *level = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
	const char *old = getenv("NCCL_NET_GDR_LEVEL"), *level_from = NULL;
	const char *file_level = gdrb_nccl_conf_value(&n->conf, "NCCL_NET_GDR_LEVEL", &level_from);
	char from[128] = "";
	int at = 0;

	if (file_level)
		clean(from, sizeof(from), level_from, 120);

	/* Empty, NCCL writes to stdout (the results'): a private file as if unset. */
	if (file && !*file)
		file = NULL;

	if (np->gdr == GDRB_NCCL_GDR_ON || np->gdr == GDRB_NCCL_GDR_OFF) {
		const char *want = np->gdr == GDRB_NCCL_GDR_ON ? "SYS" : "LOC";

		if (old && strcmp(old, want) && c->boot->rank == 0) {
			char shown[64];

			clean(shown, sizeof(shown), old, 40);
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

			clean(shown, sizeof(shown), file_level, 40);
			at += snprintf(n->setting + at, sizeof(n->setting) - (size_t)at,
				       " in the environment, which wins over %s's %s", from, shown);
		}
	} else if (!old && file_level) {
		char shown[64];

		clean(shown, sizeof(shown), file_level, 40);
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

			clean(shown, sizeof(shown), tmp, 160);
			gdrb_err("cannot make a private folder for NCCL's log under %s (TMPDIR): %s", shown,
				 strerror(errno));
			n->dir[0] = '\0';
			return GDRB_ERR;
		}
		snprintf(n->log, sizeof(n->log), "%s/nccl.log", n->dir);
		guard_private(true);
	}
	return set("NCCL_DEBUG_FILE", n->log);
}

/* ---- NCCL_DEBUG_FILE, judged before anything is written ---- */

/* One line per rank that failed, gathered so that rank 0 says the first one once. */
struct fail_note {
	int32_t failed;
	char text[472];
};

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
	struct fail_note mine = { 0 }, *all = NULL;
	char path[sizeof(the.log)], per_rank[sizeof(the.log)], why[320] = "";
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
static void read_env(const struct gdrb_ctx *c, struct gdrb_nccl *n)
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
			clean(n->env_version, sizeof(n->env_version), eq + 1, 24);
			continue;
		}
		for (i = 0; i < sizeof(lookalikes) / sizeof(lookalikes[0]); i++)
			if ((size_t)(eq - *e) == strlen(lookalikes[i].name) &&
			    !strncmp(*e, lookalikes[i].name, (size_t)(eq - *e)))
				gdrb_warn("%s is not a variable NCCL reads; %s is", lookalikes[i].name,
					  lookalikes[i].meant);
		clean(item, sizeof(item), *e, 120);
		if (at + strlen(item) + 2 < sizeof(n->env))
			at += (size_t)snprintf(n->env + at, sizeof(n->env) - at, "%s%s", at ? " " : "", item);
	}
}

/*
 * NCCL_VERSION (set by container images, "2.28.3-1") names another NCCL than the
 * one loaded: say so once, since it is what a reader of the environment trusts.
 */
static void env_version_differs(const struct gdrb_nccl *n)
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

/* How many RDMA devices sysfs lists here (-1: cannot tell). */
static int rdma_devices(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *de;
	int k = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			k++;
	closedir(d);
	return k;
}

/* ---- the communicator ---- */

/* Where the communicator stands, for the watchdog's thread (atomic). */
enum { COMM_NONE, COMM_CREATING, COMM_READY };
static int comm_state;
static int comm_rank = -1;

/*
 * The watchdog's abort after a timeout, on its own thread while the main thread is still
 * stuck. A communicator that exists is aborted: ncclCommAbort raises the abort flags that
 * NCCL's proxy thread and kernels poll, so that a collective waiting on a lost peer ends
 * and the network connections are torn down before the process leaves. One still inside a
 * blocking ncclCommInitRank is not: NCCL hands it over only when the call returns (on an
 * error the call frees it itself), so aborting it from another thread would free it under
 * the initialisation still running; the non-blocking creation NCCL lets another thread
 * abort would make every later collective a background thread's job (group.cc), which
 * would change the timing. That rank's process ends, which closes NCCL's bootstrap sockets.
 */
static void abort_comm(void)
{
	int state = __atomic_load_n(&comm_state, __ATOMIC_ACQUIRE);

	if (state == COMM_READY) {
		__atomic_store_n(&comm_state, COMM_NONE, __ATOMIC_RELEASE);
		gdrb_warn("rank %d: timeout: aborting NCCL's communicator (ncclCommAbort) before exiting", comm_rank);
		(void)ncclCommAbort(the.comm);
	} else if (state == COMM_CREATING) {
		gdrb_warn("rank %d: timeout inside ncclCommInitRank: no communicator to abort yet (NCCL hands it over only when the call returns); exiting",
			  comm_rank);
	}
}

/* NCCL's last error ("" where it has none): the logger cleans it for the terminal. */
static const char *last_error(ncclComm_t comm)
{
	const char *e = ncclGetLastError(comm);

	return e ? e : "";
}

int gdrb_nccl_open(struct gdrb_ctx *c)
{
	struct gdrb_nccl *n = &the;
	struct gdrb_boot *b = c->boot;
	struct fail_note mine = { 0 }, *all = NULL;
	ncclUniqueId id;
	ncclResult_t nr = ncclSuccess;
	int rc, rc2, v = 0, r, nfailed = 0;

	memset(n, 0, sizeof(*n));
	own_host(n->host, sizeof(n->host));
	n->pid = (long)getpid();
	n->simulated = dlsym(RTLD_DEFAULT, SIMNCCL_MARKER) != NULL;
	if (ncclGetVersion(&v) == ncclSuccess) {
		n->version = v;
		/* NCCL_VERSION_CODE: X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z since. */
		if (v >= 10000)
			snprintf(n->library, sizeof(n->library), "NCCL %d.%d.%d%s", v / 10000, v / 100 % 100,
				 v % 100, n->simulated ? " (simulated)" : "");
		else
			snprintf(n->library, sizeof(n->library), "NCCL %d.%d.%d%s", v / 1000, v / 100 % 10,
				 v % 100, n->simulated ? " (simulated)" : "");
	} else {
		snprintf(n->library, sizeof(n->library), "NCCL (version unknown)%s",
			 n->simulated ? " (simulated)" : "");
	}
	/* NCCL's files, before gdrbench sets its own variables: what a file gives and what the environment overrides. */
	if (b->rank == 0)
		gdrb_nccl_conf_read(&n->conf, n->version, getenv("NCCL_CONF_FILE"), getenv("HOME"),
				    gdrb_inject()->nccl_etc_conf ? gdrb_inject()->nccl_etc_conf : "/etc/nccl.conf");
	rc = setup_env(c, n);
	rc = gdrb_boot_agree(b, rc);
	if (rc)
		return rc;
	read_env(c, n);
	n->rdma_devices = b->rank == 0 ? rdma_devices() : -1;
	env_version_differs(n);

	/*
	 * NCCL's bootstrap and initialisation wait on every rank: a rank that never comes, or
	 * one stuck inside NCCL, ends the run after GDRB_WATCHDOG_COLLECTIVE x --timeout; a rank
	 * that returns waits on each of the others, by name, in the gather below.
	 */
	if (gdrb_watchdog_start(c->p->timeout))
		return GDRB_ERR;
	gdrb_watchdog_collective("NCCL's bootstrap and initialisation (ncclGetUniqueId, ncclCommInitRank: every rank must join)",
				 "starting NCCL", GDRB_WATCHDOG_NO_SIZE);
	memset(&id, 0, sizeof(id));
	if (b->rank == 0 && (nr = ncclGetUniqueId(&id)) != ncclSuccess)
		snprintf(mine.text, sizeof(mine.text), "ncclGetUniqueId: %s", ncclGetErrorString(nr));
	rc = gdrb_boot_agree(b, nr == ncclSuccess ? 0 : GDRB_ERR_UNSUPP);
	if (!rc)
		rc = b->bcast(b, &id, sizeof(id), 0) ? GDRB_ERR : 0;
	if (!rc) {
		cudaError_t ce = cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking);

		if (ce != cudaSuccess) {
			snprintf(mine.text, sizeof(mine.text), "cudaStreamCreateWithFlags: %s",
				 cudaGetErrorString(ce));
			nr = ncclUnhandledCudaError;
		} else {
			n->have_stream = true;
			comm_rank = b->rank;
			__atomic_store_n(&comm_state, COMM_CREATING, __ATOMIC_RELEASE);
			gdrb_watchdog_on_abort(abort_comm);
			nr = ncclCommInitRank(&n->comm, b->size, id, b->rank);
			__atomic_store_n(&comm_state, nr == ncclSuccess ? COMM_READY : COMM_NONE, __ATOMIC_RELEASE);
			if (nr == ncclSuccess)
				n->have_comm = true;
			else
				snprintf(mine.text, sizeof(mine.text), "ncclCommInitRank: %s (%s)",
					 ncclGetErrorString(nr), last_error(NULL));
		}
		rc = nr == ncclSuccess ? 0 : GDRB_ERR_UNSUPP;
	}
	mine.failed = rc != 0;
	if (b->rank == 0 && !(all = calloc((size_t)b->size, sizeof(*all)))) {
		gdrb_watchdog_stop();
		return GDRB_ERR;
	}
	rc2 = gdrb_boot_step_gather(b, &mine, sizeof(mine), all, "starting NCCL", GDRB_WATCHDOG_NO_SIZE);
	gdrb_watchdog_stop();
	if (rc2) {
		free(all);
		return GDRB_ERR;
	}
	if (b->rank == 0) {
		int first = -1;

		for (r = 0; r < b->size; r++) {
			all[r].text[sizeof(all[r].text) - 1] = '\0';
			if (all[r].failed && !nfailed++)
				first = r;
		}
		/* One line: the first rank's cause, how many failed, and a shared GPU where there is one. */
		if (first >= 0)
			gdrb_err("NCCL cannot run here: rank %d (%s): %s (%d of %d ranks failed)%s%s%s", first,
				 b->hosts[first], all[first].text, nfailed, b->size,
				 c->gpu_shared[0] ? "; " : "", c->gpu_shared,
				 c->gpu_shared[0] ? ": NCCL needs a GPU of its own for each rank" : "");
	}
	free(all);
	return gdrb_boot_agree(b, rc);
}

int gdrb_nccl_check(const struct gdrb_ctx *c, ncclResult_t rc, const char *what, size_t size)
{
	struct gdrb_nccl *n = &the;

	if (rc == ncclSuccess)
		return 0;
	n->failed = true;
	gdrb_err("rank %d: NCCL error in %s at size %zu: %s (%s)", c->boot->rank, what, size,
		 ncclGetErrorString(rc), last_error(n->comm));
	return GDRB_ERR;
}

int gdrb_nccl_sync(const struct gdrb_ctx *c, const char *what, size_t size)
{
	struct gdrb_nccl *n = &the;

	for (;;) {
		cudaError_t ce = cudaStreamQuery(n->stream);
		ncclResult_t ar = ncclSuccess;

		if (ce == cudaSuccess)
			return 0;
		if (ce != cudaErrorNotReady) {
			n->failed = true;
			gdrb_err("rank %d: CUDA error waiting for %s at size %zu: %s", c->boot->rank, what, size,
				 cudaGetErrorString(ce));
			return GDRB_ERR;
		}
		if (ncclCommGetAsyncError(n->comm, &ar) != ncclSuccess || (ar != ncclSuccess && ar != ncclInProgress))
			return gdrb_nccl_check(c, ar != ncclSuccess ? ar : ncclInternalError, what, size);
		/* NCCL's proxy thread may share this core (nccl-tests' testStreamSynchronize yields too). */
		sched_yield();
	}
}

/* ---- the log, read back ---- */

struct log_wire {
	struct gdrb_nccl_links links;
	int32_t readable;
	uint32_t sysfs_rate;    /* bit i: links.nics[i].mbps is the port's rate in sysfs, not NCCL's figure */
	char why[188];
};

/* A port's rate as the kernel writes it, "400 Gb/sec (4X NDR)", in Mb/s; 0 anything else. */
static uint32_t port_rate_mbps(const char *text)
{
	unsigned long whole = 0, frac = 0, scale = 1;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9' && whole < 1000000)
		whole = whole * 10 + (unsigned long)(*p++ - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && scale < 1000; p++, scale *= 10)
			frac = frac * 10 + (unsigned long)(*p - '0');
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, " Gb/sec", 7) || whole >= 100000)
		return 0;
	return (uint32_t)(whole * 1000 + frac * 1000 / scale);
}

/*
 * The NICs NCCL's log named without a speed (NCCL before 2.27 prints none at INFO): the port's
 * rate from sysfs (<root>/class/infiniband/<dev>/ports/<port>/rate), a regular file read without
 * following a link; a merged device ("a+b") is left unknown.
 */
static uint32_t rates_from_sysfs(struct gdrb_nccl_links *l)
{
	const char *root = gdrb_inject()->sysfs_root ? gdrb_inject()->sysfs_root : "/sys";
	uint32_t from = 0;
	unsigned i;

	for (i = 0; i < GDRB_NCCL_NICS; i++) {
		struct gdrb_nccl_nic *nic = &l->nics[i];
		char dev[24], path[512], text[64];
		const char *colon = strrchr(nic->name, ':');
		uint32_t mbps;

		if (nic->mbps || !colon || colon == nic->name || strchr(nic->name, '+') || strchr(nic->name, '?'))
			continue;
		snprintf(dev, sizeof(dev), "%.*s", (int)(colon - nic->name), nic->name);
		if (gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports/%s/rate", dev, colon + 1) ||
		    gdrb_read_text(path, text, sizeof(text)))
			continue;
		if ((mbps = port_rate_mbps(text))) {
			nic->mbps = mbps;
			from |= 1u << i;
		}
	}
	return from;
}

/*
 * Rank 0: the line rate the rows' bytes crossed (c->lib_line_*): on each host, the NICs its
 * ranks' connections used, each counted once, their rates added (a ring's channels spread over
 * a node's NICs); the lowest host's. Not known (0) where a NIC is unnamed or has no rate, or a
 * host used no NET/IB device: nothing is then claimed.
 */
static void line_rate(struct gdrb_ctx *c, const struct log_wire *all)
{
	const struct gdrb_boot *b = c->boot;
	double lowest = 0;
	int r, q, low_host = -1, low_nics = 0;
	bool any_sysfs = false, any_log = false;
	char names[32] = "";

	c->lib_line_gbps = 0;
	c->lib_line_from[0] = c->lib_line_why[0] = '\0';
	for (r = 0; r < b->size; r++) {
		const char *counted[64];
		double sum = 0;
		int nics = 0, k;
		unsigned i;
		bool first = true;

		for (q = 0; q < r && first; q++)
			first = strcmp(b->hosts[q], b->hosts[r]) != 0;
		if (!first)
			continue;
		/* Every rank of host r: its NICs, each counted once. */
		for (q = r; q < b->size; q++) {
			if (strcmp(b->hosts[q], b->hosts[r]))
				continue;
			if (!all[q].readable)
				return;
			for (i = 0; i < GDRB_NCCL_NICS && all[q].links.nics[i].name[0]; i++) {
				const struct gdrb_nccl_nic *nic = &all[q].links.nics[i];

				if (!nic->mbps || !strcmp(nic->name, "?"))
					return;
				for (k = 0; k < nics && strcmp(counted[k], nic->name); k++)
					;
				if (k < nics)
					continue;
				if (nics == (int)(sizeof(counted) / sizeof(counted[0])))
					return;
				counted[nics++] = nic->name;
				sum += nic->mbps / 1000.0;
				if (all[q].sysfs_rate & (1u << i))
					any_sysfs = true;
				else
					any_log = true;
			}
		}
		if (!nics)
			return;
		if (low_host < 0 || sum < lowest) {
			lowest = sum;
			low_host = r;
			low_nics = nics;
			snprintf(names, sizeof(names), "%s", counted[0]);
		}
	}
	if (low_host < 0)
		return;
	c->lib_line_gbps = lowest;
	snprintf(c->lib_line_from, sizeof(c->lib_line_from), "%s%s%s at %g Gb/s on %.40s, from %s%s%s",
		 low_nics > 1 ? "the NICs of NCCL's connections, " : "NIC ", low_nics > 1 ? "" : names,
		 low_nics > 1 ? "" : " of NCCL's connections", lowest, b->hosts[low_host],
		 any_log ? "NCCL's log" : "", any_log && any_sysfs ? " and " : "", any_sysfs ? "sysfs" : "");
	if (!strcmp(c->lib_algo, "Ring"))
		snprintf(c->lib_line_why, sizeof(c->lib_line_why),
			 "NCCL says Ring, whose bytes cross the network once each: this rate is not the network's (a NIC not in NCCL's log?)");
	else
		snprintf(c->lib_line_why, sizeof(c->lib_line_why),
			 "tree, NVLS, CollNet or SHARP at work (algorithm %.64s); for network acceptance force NCCL_ALGO=Ring",
			 c->lib_algo[0] ? c->lib_algo : "unknown: --nccl-tuning-log says which");
}

/* Rank 0: the row's columns and note from every rank's links. */
static void compose(struct gdrb_ctx *c, struct gdrb_nccl *n, struct log_wire *all)
{
	struct gdrb_nccl_links sum;
	char transports[96];
	int r, bad = -1;
	size_t at = 0;
	bool direct = gdrb_nccl_params(c->p)->gdr != GDRB_NCCL_GDR_OFF;
	uint32_t lines;

	gdrb_nccl_links_init(&sum);
	c->lib_note[0] = '\0';
	for (r = 0; r < c->boot->size; r++) {
		struct gdrb_nccl_links one;

		all[r].why[sizeof(all[r].why) - 1] = '\0';
		if (!all[r].readable || gdrb_nccl_links_from_wire(&one, &all[r].links, sizeof(all[r].links))) {
			if (bad < 0)
				bad = r;
			continue;
		}
		gdrb_nccl_links_add(&sum, &one);
	}
	snprintf(c->lib_name, sizeof(c->lib_name), "%s", n->library);
	c->lib_gdr[0] = '\0';
	if (bad >= 0) {
		snprintf(c->lib_transport, sizeof(c->lib_transport), "unknown");
		at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
				       "transport unknown: NCCL's log on rank %d (%s) could not be read: %s", bad,
				       c->boot->hosts[bad], all[bad].readable ? "its counts were not valid" : all[bad].why);
	} else {
		lines = sum.net + sum.collnet + sum.p2p + sum.shm + sum.other;
		gdrb_nccl_transports(&sum, transports, sizeof(transports));
		if (lines) {
			snprintf(c->lib_transport, sizeof(c->lib_transport), "%s", transports);
			snprintf(c->lib_gdr, sizeof(c->lib_gdr), "%u/%u", (unsigned)sum.net_gdr, (unsigned)sum.net);
		} else if (c->boot->size == 1) {
			snprintf(c->lib_transport, sizeof(c->lib_transport), "none");
			snprintf(c->lib_gdr, sizeof(c->lib_gdr), "0/0");
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "one rank: NCCL connects to no one");
		} else {
			snprintf(c->lib_transport, sizeof(c->lib_transport), "unknown");
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "transport unknown: no connection line in NCCL's INFO log (%u lines read; NCCL_DEBUG_SUBSYS must include INIT or NET)",
					       (unsigned)sum.lines);
		}
		if (direct && sum.net_gdr < sum.net && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%sGPUDirect allowed but NCCL used NET/%s without GDRDMA on %u of %u connections",
					       at ? "; " : "", sum.nets[0] ? sum.nets : "?",
					       (unsigned)(sum.net - sum.net_gdr), (unsigned)sum.net);
		if (!direct && sum.net_gdr && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%sGPUDirect switched off but NCCL used GDRDMA on %u of %u connections",
					       at ? "; " : "", (unsigned)sum.net_gdr, (unsigned)sum.net);
		if (strstr(transports, "NET/Socket") && n->rdma_devices > 0 && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%sNCCL used NET/Socket though rank 0's node has %d RDMA device(s) (NCCL_IB_DISABLE, NCCL_NET or the IB plugin?)",
					       at ? "; " : "", n->rdma_devices);
		if (sum.foreign && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%s%u NCCL log line(s) of another process (not the rank's own host:pid prefix) were not counted",
					       at ? "; " : "", (unsigned)sum.foreign);
		if (sum.unparsed && at < sizeof(c->lib_note))
			at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at,
					       "%s%u NCCL log line(s) looked like connections but were not understood",
					       at ? "; " : "", (unsigned)sum.unparsed);
	}
	if (n->choice_note[0] && at < sizeof(c->lib_note))
		at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at, "%s%s", at ? "; " : "", n->choice_note);
	if (n->env[0] && at < sizeof(c->lib_note))
		at += (size_t)snprintf(c->lib_note + at, sizeof(c->lib_note) - at, "%s%.*s", at ? "; " : "",
				       (int)(sizeof(c->lib_note) / 2), n->env);
	/* NCCL's files' settings in force, as NAME=VALUE the tools read as they read the environment's. */
	if (at < sizeof(c->lib_note)) {
		char conf[384];

		gdrb_nccl_conf_note(&n->conf, conf, sizeof(conf));
		if (conf[0])
			snprintf(c->lib_note + at, sizeof(c->lib_note) - at, "%s%s", at ? "; " : "", conf);
	}
}

/*
 * A plain NCCL_ALGO or NCCL_PROTO value (one name, no per-collective list, no "^") from the
 * environment, else from NCCL's files (*from their path, else NULL), or NULL.
 */
static const char *plain_setting(const struct gdrb_nccl *n, const char *name, char *buf, size_t len, const char **from)
{
	const char *v = getenv(name);
	size_t i;

	*from = NULL;
	if (!v)
		v = gdrb_nccl_conf_value(&n->conf, name, from);

	if (!v || !*v || strlen(v) >= len)
		return NULL;
	for (i = 0; v[i]; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9')))
			return NULL;
	memcpy(buf, v, i + 1);
	return buf;
}

/*
 * Rank 0: the CSV algorithm, protocol and channels of this size, from the TUNING lines NCCL
 * wrote since the last size, else from NCCL_ALGO/NCCL_PROTO where set to one name; why in
 * note where not known (never a guess).
 */
static void choice(struct gdrb_ctx *c, struct gdrb_nccl *n, char *note, size_t len)
{
	struct gdrb_nccl_tuning t;
	char why[192], algo[32], proto[32], where[200], shown[240];
	const char *a_from, *p_from;
	const char *a = plain_setting(n, "NCCL_ALGO", algo, sizeof(algo), &a_from);
	const char *p = plain_setting(n, "NCCL_PROTO", proto, sizeof(proto), &p_from);

	c->lib_algo[0] = c->lib_proto[0] = '\0';
	c->lib_channels = 0;
	note[0] = '\0';
	gdrb_nccl_tuning_init(&t);
	if (n->tuning && n->log[0] &&
	    gdrb_nccl_tuning_read(n->log, &(struct gdrb_nccl_owner){ n->host, n->pid }, &n->tuning_at, &t, why, sizeof(why)) == 0 &&
	    t.calls) {
		snprintf(c->lib_algo, sizeof(c->lib_algo), "%s", t.algos);
		snprintf(c->lib_proto, sizeof(c->lib_proto), "%s", t.protos);
		c->lib_channels = t.channels;
		if (!t.channels)
			snprintf(note, len, "channels unknown: this NCCL's TUNING line does not give them (2.24 on does)");
		return;
	}
	if (a || p) {
		const char *a_src = a_from ? a_from : "the environment", *p_src = p_from ? p_from : "the environment";

		snprintf(c->lib_algo, sizeof(c->lib_algo), "%s", a ? a : "");
		snprintf(c->lib_proto, sizeof(c->lib_proto), "%s", p ? p : "");
		/* The environment and each file may give one of them: name where each came from. */
		if (a && p && strcmp(a_src, p_src))
			snprintf(where, sizeof(where), "algorithm as set in %.80s, protocol in %.80s", a_src, p_src);
		else
			snprintf(where, sizeof(where), "%s as set in %.120s", a && p ? "algorithm and protocol" : a ? "algorithm" : "protocol",
				 a ? a_src : p_src);
		clean(shown, sizeof(shown), where, sizeof(shown) - 1);
		snprintf(note, len, "%s, not read from NCCL's log", shown);
		return;
	}
	if (n->tuning)
		snprintf(note, len, "algorithm unknown: no TUNING line in NCCL's log at this size (NCCL before 2.20 prints none, send/receive have none)%s",
			 t.unparsed ? "; TUNING lines not understood" : "");
	else
		snprintf(note, len, "algorithm unknown: NCCL's TUNING log is off (--nccl-tuning-log turns it on, a line per call; or set NCCL_ALGO, NCCL_PROTO)");
}

int gdrb_nccl_end(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_nccl *n = &the;
	struct log_wire mine, *all = NULL;
	int rc;

	memset(&mine, 0, sizeof(mine));
	gdrb_nccl_links_init(&mine.links);
	if (!n->log[0])
		snprintf(mine.why, sizeof(mine.why), "NCCL_DEBUG_FILE could not be expanded");
	else
		mine.readable = gdrb_nccl_log_read(n->log, &(struct gdrb_nccl_owner){ n->host, n->pid },
						   &mine.links, mine.why, sizeof(mine.why)) == 0;
	if (mine.readable)
		mine.sysfs_rate = rates_from_sysfs(&mine.links);
	if (c->boot->rank == 0 && !(all = calloc((size_t)c->boot->size, sizeof(*all))))
		return GDRB_ERR;
	rc = gdrb_boot_step_gather(c->boot, &mine, sizeof(mine), all, "reading NCCL's log", size);
	if (!rc && c->boot->rank == 0) {
		char was[sizeof(c->lib_transport) + sizeof(c->lib_gdr)], now[sizeof(was)], sz[32];

		snprintf(was, sizeof(was), "%s %s", c->lib_transport, c->lib_gdr);
		choice(c, n, n->choice_note, sizeof(n->choice_note));
		compose(c, n, all);
		line_rate(c, all);
		snprintf(now, sizeof(now), "%s %s", c->lib_transport, c->lib_gdr);
		/* In the table, where it changes: the connections NCCL made by the end of this size. */
		if (strcmp(was, now))
			printf("# from %s on: transport %s%s%s%s\n", gdrb_size_format(size, sz, sizeof(sz)),
			       c->lib_transport, c->lib_gdr[0] ? ", GPUDirect RDMA on " : "", c->lib_gdr,
			       c->lib_gdr[0] ? " network connections" : "");
	}
	free(all);
	return rc;
}

void gdrb_nccl_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	const struct gdrb_nccl *n = &the;

	char conf[1536];

	gdrb_nccl_conf_describe(&n->conf, conf, sizeof(conf));
	snprintf(buf, len,
		 "%s%s; %s\n"
		 "# NCCL's INFO log: each rank's is read back after every size (%s); the CSV transport column lists the transports of its connections, gdr_connections the network connections that used GPUDirect RDMA (/GDRDMA) of all\n"
		 "# NCCL environment (rank 0): %s\n"
		 "# %s",
		 n->library, n->simulated ? ": the test suite's simulated NCCL (tests/support/simnccl), which proves behaviour, never speed" : "",
		 n->setting, n->dir[0] ? "a private file per rank" : "the file NCCL_DEBUG_FILE names",
		 n->env[0] ? n->env : "none", conf);
	(void)c;
}

/* What the user's NCCL_DEBUG would have shown on stdout, from the private log onto stderr. */
static void echo(const struct gdrb_nccl *n)
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

void gdrb_nccl_close(void)
{
	struct gdrb_nccl *n = &the;

	/* From here the main thread owns the teardown: the watchdog aborts nothing more. */
	gdrb_watchdog_on_abort(NULL);
	__atomic_store_n(&comm_state, COMM_NONE, __ATOMIC_RELEASE);
	if (n->have_comm) {
		if (n->failed)
			ncclCommAbort(n->comm);
		else
			ncclCommDestroy(n->comm);
		n->have_comm = false;
	}
	if (n->have_stream) {
		cudaStreamDestroy(n->stream);
		n->have_stream = false;
	}
	if (n->dir[0]) {
		echo(n);
		guard_private(false);
		unlink(n->log);
		rmdir(n->dir);
		n->dir[0] = '\0';
	}
}
