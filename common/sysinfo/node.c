/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "gdrb_node.h"
#include "gdrb_sysfs.h"

#define CAP_IPC_LOCK_BIT 14

/* Next word of a command line; stops at "--" (what follows belongs to init). */
static const char *next_word(const char *s, size_t *len)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	*len = strcspn(s, " \t\n");
	if (*len == 0 || (*len == 2 && !strncmp(s, "--", 2)))
		return NULL;
	return s;
}

const char *gdrb_cmdline_value(const char *cmdline, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key), wl;
	const char *w, *found = NULL;

	for (w = next_word(cmdline, &wl); w; w = next_word(w + wl, &wl))
		if (wl > kl && !strncmp(w, key, kl) && w[kl] == '=') {
			found = w;
			snprintf(buf, len, "%.*s", (int)(wl - kl - 1), w + kl + 1);
		}
	return found ? buf : NULL;
}

static bool value_is(const char *cmdline, const char *key, const char *what)
{
	char value[64];
	const char *v = gdrb_cmdline_value(cmdline, key, value, sizeof(value));
	size_t wl = strlen(what);

	/* intel_iommu takes a comma list: "on,sm_on". */
	for (; v && *v; v += strcspn(v, ",") + (v[strcspn(v, ",")] == ',')) {
		if (!strncmp(v, what, wl) && (v[wl] == ',' || v[wl] == '\0'))
			return true;
	}
	return false;
}

static void iommu_args(struct gdrb_node *n)
{
	static const char *const keys[] = { "iommu", "iommu.passthrough", "iommu.strict",
					    "intel_iommu", "amd_iommu" };
	size_t used = 0, i, wl;
	const char *w;

	n->iommu_args[0] = '\0';
	for (w = next_word(n->cmdline, &wl); w; w = next_word(w + wl, &wl)) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t kl = strlen(keys[i]);
			int m;

			if (wl <= kl || strncmp(w, keys[i], kl) || w[kl] != '=')
				continue;
			m = snprintf(n->iommu_args + used, sizeof(n->iommu_args) - used, "%s%.*s",
				     used ? " " : "", (int)wl, w);
			if (m > 0 && (size_t)m < sizeof(n->iommu_args) - used)
				used += (size_t)m;
		}
	}
}

static void decide_iommu(struct gdrb_node *n)
{
	const char *c = n->cmdline;
	bool pt = value_is(c, "iommu", "pt") || value_is(c, "amd_iommu", "pt") ||
		  value_is(c, "iommu.passthrough", "1") || value_is(c, "iommu.passthrough", "on") ||
		  value_is(c, "iommu.passthrough", "y");
	bool off = value_is(c, "iommu", "off") || value_is(c, "intel_iommu", "off") ||
		   value_is(c, "amd_iommu", "off");

	iommu_args(n);
	if (n->iommu_groups <= 0) {
		n->iommu = GDRB_IOMMU_OFF;
		snprintf(n->iommu_why, sizeof(n->iommu_why), "no IOMMU groups%s%s",
			 n->iommu_units > 0 ? " although IOMMU units exist" : "",
			 off ? " (turned off on the kernel command line)" : "");
	} else if (n->groups_dma > 0) {
		n->iommu = GDRB_IOMMU_TRANSLATED;
		snprintf(n->iommu_why, sizeof(n->iommu_why),
			 "%d of %d IOMMU groups translate DMA (type DMA)", n->groups_dma,
			 n->iommu_groups);
	} else if (n->groups_identity > 0) {
		n->iommu = GDRB_IOMMU_PASSTHROUGH;
		snprintf(n->iommu_why, sizeof(n->iommu_why),
			 "%d IOMMU groups, all identity-mapped", n->iommu_groups);
	} else if (pt) {
		/* Kernels before 5.11 have no group "type": trust the command line. */
		n->iommu = GDRB_IOMMU_PASSTHROUGH;
		snprintf(n->iommu_why, sizeof(n->iommu_why),
			 "%d IOMMU groups, passthrough on the kernel command line", n->iommu_groups);
	} else {
		n->iommu = GDRB_IOMMU_TRANSLATED;
		snprintf(n->iommu_why, sizeof(n->iommu_why),
			 "%d IOMMU groups and no passthrough on the kernel command line",
			 n->iommu_groups);
	}
}

static int count_dir(const char *root, const char *rel)
{
	struct gdrb_dir dir;
	char path[PATH_MAX];
	int n;

	if (gdrb_path(path, sizeof(path), root, "%s", rel) || gdrb_dir_list(path, &dir))
		return 0;
	n = (int)dir.n;
	gdrb_dir_free(&dir);
	return n;
}

static int load_iommu(const char *sys, struct gdrb_node *n)
{
	char path[PATH_MAX], type[32];
	struct gdrb_dir dir;
	size_t i;

	n->iommu_units = count_dir(sys, "class/iommu");
	if (gdrb_path(path, sizeof(path), sys, "kernel/iommu_groups") == 0 &&
	    gdrb_dir_list(path, &dir) == 0) {
		n->iommu_groups = (int)dir.n;
		for (i = 0; i < dir.n; i++) {
			if (gdrb_path(path, sizeof(path), sys, "kernel/iommu_groups/%s/type",
				      dir.names[i]) || gdrb_read_text(path, type, sizeof(type)))
				continue;
			if (!strcmp(type, "identity"))
				n->groups_identity++;
			else if (!strncmp(type, "DMA", 3))
				n->groups_dma++;
		}
		gdrb_dir_free(&dir);
	}
	decide_iommu(n);
	return 0;
}

static bool module_in(const char *modules, const char *name)
{
	size_t nl = strlen(name);
	const char *line;

	for (line = modules; *line; line++) {
		if (!strncmp(line, name, nl) && line[nl] == ' ')
			return true;
		line = strchr(line, '\n');
		if (!line)
			break;
	}
	return false;
}

static bool module_loaded(const char *sys, const char *modules, const char *name)
{
	char path[PATH_MAX];

	if (modules && module_in(modules, name))
		return true;
	return gdrb_path(path, sizeof(path), sys, "module/%s", name) == 0 && gdrb_is_dir(path);
}

static int load_modules(const char *sys, const char *proc, struct gdrb_node *n)
{
	char path[PATH_MAX], *modules;
	size_t got;
	bool have_list = false;

	modules = malloc(1 << 20);
	if (!modules)
		return -ENOMEM;
	if (gdrb_path(path, sizeof(path), proc, "modules") == 0 &&
	    gdrb_read_bin(path, modules, (1 << 20) - 1, &got) == 0) {
		modules[got] = '\0';
		have_list = true;
	}
	n->modules_readable = have_list ||
		(gdrb_path(path, sizeof(path), sys, "module") == 0 && gdrb_is_dir(path));
	n->mod_nvidia = module_loaded(sys, have_list ? modules : NULL, "nvidia");
	n->mod_nvidia_peermem = module_loaded(sys, have_list ? modules : NULL, "nvidia_peermem");
	n->mod_nv_peer_mem = module_loaded(sys, have_list ? modules : NULL, "nv_peer_mem");
	n->mod_ib_uverbs = module_loaded(sys, have_list ? modules : NULL, "ib_uverbs");
	free(modules);
	return 0;
}

/* The first word that is a dotted version: "570.86.15". */
static void find_version(const char *text, char *buf, size_t len)
{
	const char *w;
	size_t wl;

	buf[0] = '\0';
	for (w = next_word(text, &wl); w; w = next_word(w + wl, &wl))
		if (isdigit((unsigned char)w[0]) && strspn(w, "0123456789.") == wl &&
		    memchr(w, '.', wl)) {
			snprintf(buf, len, "%.*s", (int)wl, w);
			return;
		}
}

static void load_nvidia(const char *sys, const char *proc, struct gdrb_node *n)
{
	char path[PATH_MAX], text[512];

	n->nv_open = -1;
	if (gdrb_path(path, sizeof(path), proc, "driver/nvidia/version") == 0 &&
	    gdrb_read_text(path, text, sizeof(text)) == 0) {
		text[strcspn(text, "\n")] = '\0';
		find_version(text, n->nv_version, sizeof(n->nv_version));
		if (strstr(text, "Open Kernel Module"))
			n->nv_open = 1;
		else if (strstr(text, "Kernel Module"))
			n->nv_open = 0;
	}
	if (!n->nv_version[0] &&
	    gdrb_path(path, sizeof(path), sys, "module/nvidia/version") == 0 &&
	    gdrb_read_text(path, text, sizeof(text)) == 0)
		find_version(text, n->nv_version, sizeof(n->nv_version));
	/* The proprietary module taints the kernel with 'P'; the open one does not. */
	if (n->nv_open < 0 && gdrb_path(path, sizeof(path), sys, "module/nvidia/taint") == 0 &&
	    gdrb_read_text(path, text, sizeof(text)) == 0)
		n->nv_open = strchr(text, 'P') ? 0 : 1;
	n->nv_major = atoi(n->nv_version);
}

int gdrb_parse_memlock(const char *limits, uint64_t *bytes, bool *unlimited)
{
	static const char key[] = "Max locked memory";
	const char *line = strstr(limits, key), *soft;
	unsigned long long v;
	size_t len, i;

	*bytes = 0;
	*unlimited = false;
	if (!line)
		return -ENOENT;
	soft = line + sizeof(key) - 1;
	soft += strspn(soft, " \t");
	len = strcspn(soft, " \t\n");
	if (len == 0)
		return -ENOENT;
	if (len == 9 && !strncmp(soft, "unlimited", 9)) {
		*unlimited = true;
		return 0;
	}
	/* Decimal digits only; the kernel writes RLIM_INFINITY as "unlimited", never as a number. */
	for (i = 0; i < len; i++)
		if (!isdigit((unsigned char)soft[i]))
			return -EINVAL;
	errno = 0;
	v = strtoull(soft, NULL, 10);
	if (errno == ERANGE || v >= UINT64_MAX)
		return -ERANGE;
	*bytes = v;
	return 0;
}

/* Why <proc>/self/limits gave no memlock limit, for the doctor's evidence. */
static const char *memlock_why(int rc)
{
	switch (rc) {
	case -ENOENT: return "no 'Max locked memory' line";
	case -EINVAL: return "its soft limit is not a number";
	case -ERANGE: return "its soft limit is out of range";
	default: return "unreadable";
	}
}

static const char *read_why(int rc)
{
	switch (rc) {
	case -ENOENT: return "missing";
	case -EINVAL: return "not a regular file";
	case -ELOOP: return "a symbolic link";
	default: return strerror(-rc);
	}
}

static void load_memlock(const char *proc, bool live, struct gdrb_node *n)
{
	char path[PATH_MAX], text[4096];
	const char *cap;
	struct rlimit rl;
	int rc;

	if (live && getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		n->memlock_known = true;
		n->memlock_unlimited = rl.rlim_cur == RLIM_INFINITY;
		n->memlock_bytes = n->memlock_unlimited ? 0 : (uint64_t)rl.rlim_cur;
	} else if (gdrb_path(path, sizeof(path), proc, "self/limits") == 0) {
		rc = gdrb_read_text(path, text, sizeof(text));
		if (rc) {
			snprintf(n->memlock_why, sizeof(n->memlock_why), "%s", read_why(rc));
		} else {
			rc = gdrb_parse_memlock(text, &n->memlock_bytes, &n->memlock_unlimited);
			n->memlock_known = rc == 0;
			if (rc)
				snprintf(n->memlock_why, sizeof(n->memlock_why), "%s", memlock_why(rc));
		}
	}
	if (gdrb_path(path, sizeof(path), proc, "self/status") == 0 &&
	    gdrb_read_text(path, text, sizeof(text)) == 0 && (cap = strstr(text, "CapEff:")))
		n->cap_ipc_lock = strtoull(cap + 7, NULL, 16) >> CAP_IPC_LOCK_BIT & 1;
}

void gdrb_node_memlock_self(struct gdrb_node *node)
{
	memset(node, 0, sizeof(*node));
	load_memlock("/proc", true, node);
}

int gdrb_kernel_at_least(const char *release, int major, int minor)
{
	int ma, mi;

	if (sscanf(release, "%d.%d", &ma, &mi) != 2)
		return -1;
	return ma > major || (ma == major && mi >= minor);
}

int gdrb_node_load(const char *sysfs_root, const char *procfs_root, bool live,
		   struct gdrb_node *node)
{
	char path[PATH_MAX];

	memset(node, 0, sizeof(*node));
	if (gdrb_path(path, sizeof(path), procfs_root, "cmdline") == 0)
		gdrb_read_text(path, node->cmdline, sizeof(node->cmdline));
	if (gdrb_path(path, sizeof(path), procfs_root, "sys/kernel/osrelease") == 0)
		gdrb_read_text(path, node->kernel, sizeof(node->kernel));
	load_iommu(sysfs_root, node);
	load_nvidia(sysfs_root, procfs_root, node);
	load_memlock(procfs_root, live, node);
	return load_modules(sysfs_root, procfs_root, node);
}

const char *gdrb_iommu_mode_name(enum gdrb_iommu_mode mode)
{
	switch (mode) {
	case GDRB_IOMMU_OFF:
		return "off";
	case GDRB_IOMMU_PASSTHROUGH:
		return "passthrough";
	default:
		return "translated";
	}
}
