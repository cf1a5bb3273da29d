/* SPDX-License-Identifier: BSD-3-Clause */
/* gdrb_doctor options: the roots to read, the runs to check memlock for, the output form. */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_doctor.h"
#include "gdrb_log.h"
#include "gdrb_opts.h"
#include "gdrb_size.h"
#include "gdrb_sysfs.h"

/* What the table fills: the roots, the output form, and the runs' options as the benchmarks'. */
struct doctor_args {
	struct gdrb_doctor_opts o;
	struct gdrb_params run;
};

#define ARG(field) offsetof(struct doctor_args, field)

/* In --help order; a '\n' in a help text starts a line under the first. */
static const struct gdrb_opt doctor_table[] = {
	{ .name = "sysfs-root", .arg = "DIR",
	  .help = "read sysfs from DIR instead of /sys",
	  .parse = gdrb_opt_string, .off = ARG(o.sysfs_root) },
	{ .name = "procfs-root", .arg = "DIR",
	  .help = "read procfs from DIR instead of /proc\n"
		  "(when either is not the live one, libibverbs and CUDA are\n"
		  "not asked and registration is not attempted)",
	  .parse = gdrb_opt_string, .off = ARG(o.procfs_root) },
	{ .name = "sizes", .short_opt = 'm', .arg = "SIZES",
	  .help = "the benchmarks' message sizes, for the memlock need: the\n"
		  "largest window of them counts (default " GDRB_DEF_SIZES ")",
	  .parse = gdrb_opt_core, .off = ARG(run) },
	{ .name = "window", .short_opt = 'W', .arg = "N",
	  .help = "their window (default " GDRB_STR(GDRB_DEF_WINDOW) ")",
	  .parse = gdrb_opt_core, .off = ARG(run) },
	{ .name = "window-bytes", .arg = "SIZE",
	  .help = "their cap on a window's bytes (default " GDRB_DEF_WINDOW_BYTES ")",
	  .parse = gdrb_opt_core, .off = ARG(run) },
	{ .name = "mem", .arg = "KIND",
	  .help = "their memory: host, pinned or device (default device)",
	  .parse = gdrb_opt_core, .off = ARG(run) },
	{ .name = "json", .short_opt = 'j',
	  .help = "print JSON instead of the table",
	  .parse = gdrb_opt_set_bool, .off = ARG(o.json), .value = 1 },
	{ .name = "fast",
	  .help = "for prologs and health checks: CUDA is not asked (check 3\n"
		  "reads the PCI bus, the driver and NVML's NVLink state only)\n"
		  "and registration is not attempted (check 4 SKIPs)",
	  .parse = gdrb_opt_set_bool, .off = ARG(o.fast), .value = 1 },
	{ .name = "oneline",
	  .help = "print one line instead of the table, for Slurm's\n"
		  "HealthCheckProgram and NHC: 'gdrbench: OK (...)' or\n"
		  "'gdrbench: FAIL CHECK: evidence' (gdrb_doctor only)",
	  .parse = gdrb_opt_set_bool, .off = ARG(o.oneline), .value = 1 },
	{ .name = "help", .short_opt = 'h', .help = "print this help and exit" },
	{ .name = "version", .short_opt = 'V', .help = "print the version and exit" },
};

#define N_DOCTOR_OPTS (sizeof(doctor_table) / sizeof(doctor_table[0]))

/* "  -m, --sizes SIZES  help": the help from column 21, its further lines under it. */
static void usage_line(FILE *f, const struct gdrb_opt *o)
{
	const char *help = o->help, *nl;
	char lhs[64];

	gdrb_opt_usage_lhs(o, "", lhs, sizeof(lhs));
	fprintf(f, "  %-17s  ", lhs);
	while ((nl = strchr(help, '\n'))) {
		fprintf(f, "%.*s\n%21s", (int)(nl - help), help, "");
		help = nl + 1;
	}
	fprintf(f, "%s\n", help);
}

static void usage(FILE *f, const char *summary)
{
	size_t i;

	fprintf(f, "Usage: %s [OPTIONS]\n%s\n\n", gdrb_prog(), summary);
	for (i = 0; i < N_DOCTOR_OPTS; i++)
		usage_line(f, &doctor_table[i]);
	fputs("\n"
	      "Checks: 1 rdma-ports, 2 roce-gid, 3 gpus, 4 gpu-registration, 5 peermem-dmabuf,\n"
	      "6 memlock, 7 iommu, 8 acs, 9 topology, 10 pcie-links, 11 bar1; each PASS, WARN,\n"
	      "FAIL or SKIP with the evidence read and a one-line fix.\n"
	      "Exit status: 0 nothing FAILs, 1 something FAILs, 2 bad usage; the same with\n"
	      "--oneline and --fast (1: the line names the first check that FAILs).\n", f);
}

/* DIR must be a directory holding every one of the entries named (NULL-terminated). */
static int check_root(const char *opt, const char *dir, const char *const *need,
		      const char *kind, const char *like)
{
	char path[PATH_MAX];
	size_t i;

	if (!gdrb_is_dir(dir)) {
		gdrb_usage_err("%s: '%s' is not a directory; expected a directory laid out like %s",
			       opt, dir, like);
		return GDRB_ERR_USAGE;
	}
	for (i = 0; need[i]; i++)
		if (gdrb_path(path, sizeof(path), dir, "%s", need[i]) || !gdrb_exists(path)) {
			gdrb_usage_err("%s: '%s' is not a %s tree (no %s in it); expected a "
				       "directory laid out like %s", opt, dir, kind, need[i], like);
			return GDRB_ERR_USAGE;
		}
	return 0;
}

static bool is_live(const char *dir, const char *live)
{
	char real[PATH_MAX];

	return realpath(dir, real) && !strcmp(real, live);
}

int gdrb_doctor_parse(int argc, char **argv, const char *summary, struct gdrb_doctor_opts *o)
{
	/* As gdrb_doctor always said it: "-m needs a value", the option as typed. */
	static const struct gdrb_opt_tool tool = {
		.opts = doctor_table, .nopts = N_DOCTOR_OPTS, .usage = usage, .name_as_typed = true,
	};
	static const char *const sys_need[] = { "bus", "class", "devices", NULL };
	static const char *const proc_need[] = { "cmdline", NULL };
	struct doctor_args a;
	int rc;

	memset(&a.o, 0, sizeof(a.o));
	a.o.sysfs_root = "/sys";
	a.o.procfs_root = "/proc";
	/* The runs asked about use device memory unless --mem says otherwise. */
	gdrb_opts_defaults(&a.run, NULL);
	a.run.mem = GDRB_MEM_DEVICE;
	rc = gdrb_opts_parse_tool(argc, argv, &tool, summary, &a);
	if (rc)
		return rc;
	if (a.o.json && a.o.oneline) {
		gdrb_usage_err("--json and --oneline: give one output form");
		return GDRB_ERR_USAGE;
	}
	if (check_root("--sysfs-root", a.o.sysfs_root, sys_need, "sysfs", "/sys") ||
	    check_root("--procfs-root", a.o.procfs_root, proc_need, "procfs", "/proc"))
		return GDRB_ERR_USAGE;
	*o = a.o;
	o->live = is_live(o->sysfs_root, "/sys") && is_live(o->procfs_root, "/proc");
	o->sizes = a.run.sizes;
	o->max_size = gdrb_sizes_max(&a.run.sizes);
	o->window = a.run.window;
	o->window_bytes = a.run.window_bytes;
	o->mem = a.run.mem;
	return 0;
}
