/* SPDX-License-Identifier: BSD-3-Clause */
/* gdrb_doctor options: the roots to read, the runs to check memlock for, the output form. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_doctor.h"
#include "gdrb_log.h"
#include "gdrb_opts.h"
#include "gdrb_size.h"
#include "gdrb_sysfs.h"

enum { OPT_SYSFS = 0x100, OPT_PROCFS, OPT_MEM, OPT_WINDOW_BYTES };


static void usage(FILE *f, const char *summary)
{
	fprintf(f,
		"Usage: %s [OPTIONS]\n"
		"%s\n"
		"\n"
		"  --sysfs-root DIR   read sysfs from DIR instead of /sys\n"
		"  --procfs-root DIR  read procfs from DIR instead of /proc\n"
		"                     (when either is not the live one, libibverbs and CUDA are\n"
		"                     not asked and registration is not attempted)\n"
		"  -m, --sizes SIZES  the benchmarks' message sizes, for the memlock need: the\n"
		"                     largest window of them counts (default " GDRB_DEF_SIZES ")\n"
		"  -W, --window N     their window (default " GDRB_STR(GDRB_DEF_WINDOW) ")\n"
		"  --window-bytes SIZE  their cap on a window's bytes (default " GDRB_DEF_WINDOW_BYTES ")\n"
		"  --mem KIND         their memory: host, pinned or device (default device)\n"
		"  -j, --json         print JSON instead of the table\n"
		"  -h, --help         print this help and exit\n"
		"  -V, --version      print the version and exit\n"
		"\n"
		"Checks: 1 rdma-ports, 2 roce-gid, 3 gpus, 4 gpu-registration, 5 peermem-dmabuf,\n"
		"6 memlock, 7 iommu, 8 acs, 9 topology, 10 pcie-links, 11 bar1; each PASS, WARN,\n"
		"FAIL or SKIP with the evidence read and a one-line fix.\n"
		"Exit status: 0 nothing FAILs, 1 something FAILs, 2 bad usage.\n",
		gdrb_prog(), summary);
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
	static const struct option longopts[] = {
		{ "sysfs-root", required_argument, NULL, OPT_SYSFS },
		{ "procfs-root", required_argument, NULL, OPT_PROCFS },
		{ "sizes", required_argument, NULL, 'm' },
		{ "window", required_argument, NULL, 'W' },
		{ "window-bytes", required_argument, NULL, OPT_WINDOW_BYTES },
		{ "mem", required_argument, NULL, OPT_MEM },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const sys_need[] = { "bus", "class", "devices", NULL };
	static const char *const proc_need[] = { "cmdline", NULL };
	/* -m, -W and --mem as the benchmarks parse them; the runs asked about use device memory. */
	struct gdrb_params run;
	bool seen[sizeof(longopts) / sizeof(longopts[0])] = { false };
	int c;

	memset(o, 0, sizeof(*o));
	o->sysfs_root = "/sys";
	o->procfs_root = "/proc";
	gdrb_opts_defaults(&run, NULL);
	run.mem = GDRB_MEM_DEVICE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":m:W:jhV", longopts, NULL)) != -1) {
		const char *bad = argv[optind - 1];
		const struct option *lo;

		/* As the benchmarks do: the last of two values silently winning hides a typo. */
		for (lo = longopts; lo->name; lo++) {
			if (lo->val != c)
				continue;
			if (seen[lo - longopts]) {
				if (c < 0x100)
					gdrb_usage_err("-%c/--%s given twice; give each option once", c, lo->name);
				else
					gdrb_usage_err("--%s given twice; give each option once", lo->name);
				return GDRB_ERR_USAGE;
			}
			seen[lo - longopts] = true;
		}
		switch (c) {
		case OPT_SYSFS:
			o->sysfs_root = optarg;
			break;
		case OPT_PROCFS:
			o->procfs_root = optarg;
			break;
		case 'm':
		case 'W':
		case OPT_MEM:
		case OPT_WINDOW_BYTES:
			if (gdrb_opts_value(c == 'm' ? "sizes" : c == 'W' ? "window" :
					    c == OPT_MEM ? "mem" : "window-bytes", optarg, &run))
				return GDRB_ERR_USAGE;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			if (gdrb_log_is_leader())
				usage(stdout, summary);
			return 1;
		case 'V':
			if (gdrb_log_is_leader())
				printf("%s (%s) %s\n", gdrb_prog(), PACKAGE_NAME, PACKAGE_VERSION);
			return 1;
		case ':':
			gdrb_usage_err("%s needs a value: %s", bad,
				       optopt == 'm' ? "SIZES" : optopt == 'W' ? "N" :
				       optopt == OPT_MEM ? "KIND" : optopt == OPT_WINDOW_BYTES ? "SIZE" : "DIR");
			return GDRB_ERR_USAGE;
		default:
			if (optopt && optopt < 0x100)
				gdrb_usage_err("unknown option '-%c'; run '%s --help' for the options",
					       optopt, gdrb_prog());
			else
				gdrb_usage_err("unknown option '%s'; run '%s --help' for the options",
					       bad, gdrb_prog());
			return GDRB_ERR_USAGE;
		}
	}
	if (optind < argc) {
		gdrb_usage_err("unexpected argument '%s'; run '%s --help' for the options",
			       argv[optind], gdrb_prog());
		return GDRB_ERR_USAGE;
	}
	if (check_root("--sysfs-root", o->sysfs_root, sys_need, "sysfs", "/sys") ||
	    check_root("--procfs-root", o->procfs_root, proc_need, "procfs", "/proc"))
		return GDRB_ERR_USAGE;
	o->live = is_live(o->sysfs_root, "/sys") && is_live(o->procfs_root, "/proc");
	o->sizes = run.sizes;
	o->max_size = gdrb_sizes_max(&run.sizes);
	o->window = run.window;
	o->window_bytes = run.window_bytes;
	o->mem = run.mem;
	return 0;
}
