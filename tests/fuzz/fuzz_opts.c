/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The option parser (common/core/opts/opts.c) over every option table gdrbench
 * ships: an input is a command line, one argument per line. Parsed three times:
 * by a binary that takes every layer's options, by one that takes the core's
 * only (and refuses the others by name), and by gdrb_doctor's own table. The
 * parser returns run, exit or usage error, and what it accepted is inside the
 * bounds the tables give.
 */
#include "config.h"

#include <stdbool.h>

#include "fuzz.h"
#include "gdrb_boot_mpi.h"
#include "gdrb_coll_opts.h"
#include "gdrb_doctor.h"
#include "gdrb_log.h"
#include "gdrb_opts.h"
#include "gdrb_pairs.h"
#include "gdrb_transports.h"
#include "gdrb_verbs.h"

#define MAX_ARGS 64

static const struct gdrb_opt_use every_group[] = {
	{ &gdrb_verbs_opts, ~0u },
	{ &gdrb_coll_opts, ~0u },
	{ &gdrb_mpi_opts, ~0u },
	{ &gdrb_pairs_opts, ~0u },
	{ NULL, 0 },
};

static const struct gdrb_opt_set every_option = {
	.core = GDRB_OPTG_MEM | GDRB_OPTG_WINDOW | GDRB_OPTG_BIDIR,
	.groups = every_group,
	.known = gdrb_opt_catalog,
};

static const struct gdrb_opt_set core_only = {
	.core = GDRB_OPTG_MEM,
	.known = gdrb_opt_catalog,
	.sizes = "8:4K",
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	gdrb_log_init("gdrb_fuzz_opts");
	return 0;
}

static void parse(int argc, char **argv, const struct gdrb_opt_set *set)
{
	static struct gdrb_params p;
	size_t i;
	int rc;

	rc = gdrb_opts_parse(argc, argv, set, "fuzz", &p);
	if (rc != GDRB_PARSE_RUN && rc != GDRB_PARSE_EXIT && rc != GDRB_ERR_USAGE)
		fuzz_broken("gdrb_opts_parse returned %d", rc);
	if (rc != GDRB_PARSE_RUN)
		return;
	if (p.sizes.n < 1 || p.sizes.n > GDRB_SIZES_MAX)
		fuzz_broken("%zu sizes accepted", p.sizes.n);
	for (i = 0; i < p.sizes.n; i++)
		if (p.sizes.v[i] < 1 || p.sizes.v[i] > GDRB_SIZE_LIMIT)
			fuzz_broken("size %zu accepted", p.sizes.v[i]);
	if (p.iters < 1 || p.window < 1 || !(p.time_per_size > 0) || !(p.timeout >= 0) ||
	    p.window_bytes < 1)
		fuzz_broken("iters %llu, window %u, time %g, timeout %g, window bytes %zu accepted",
			    (unsigned long long)p.iters, p.window, p.time_per_size, p.timeout,
			    p.window_bytes);
}

static void parse_doctor(int argc, char **argv)
{
	struct gdrb_doctor_opts o;
	int rc;

	rc = gdrb_doctor_parse(argc, argv, "fuzz", &o);
	if (rc != GDRB_PARSE_RUN && rc != GDRB_PARSE_EXIT && rc != GDRB_ERR_USAGE)
		fuzz_broken("gdrb_doctor_parse returned %d", rc);
	if (rc == GDRB_PARSE_RUN && (o.sizes.n < 1 || o.sizes.n > GDRB_SIZES_MAX))
		fuzz_broken("gdrb_doctor_parse accepted %zu sizes", o.sizes.n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char prog[] = "gdrb_fuzz_opts";
	char *text = fuzz_string(data, size), *argv[MAX_ARGS + 2], *line = text;
	int argc = 0;

	argv[argc++] = prog;
	while (argc <= MAX_ARGS) {
		char *eol = strchr(line, '\n');

		argv[argc++] = line;
		if (!eol)
			break;
		*eol = '\0';
		line = eol + 1;
		/* A last newline ends the last argument; it starts none. */
		if (!*line)
			break;
	}
	argv[argc] = NULL;
	parse(argc, argv, &every_option);
	parse(argc, argv, &core_only);
	parse_doctor(argc, argv);
	free(text);
	return 0;
}
