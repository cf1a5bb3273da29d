/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --describe: what a binary is, as one JSON object on stdout, for the tools that
 * would otherwise keep copies of it (docs/describe.md). Every fact comes from where the
 * run itself takes it: the entry point's descriptor, the option tables, the memory
 * kinds' tables (registered ones included) and the paths the driver would measure.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_driver.h"
#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_report.h"
#include "gdrb_run.h"

/* The version of the document's shape: a reader refuses another. */
#define DESCRIBE_FORMAT 1

static void describe_paths(struct gdrb_json *j, const struct gdrb_run_facts *f,
			   const struct gdrb_params *p, enum gdrb_mem_kind mem)
{
	struct gdrb_variant v[GDRB_MAX_VARIANTS];
	struct gdrb_params run = *p;
	size_t n, i;

	run.mem = mem;
	memset(v, 0, sizeof(v));
	n = f->paths ? f->paths(f->entry, &run, v) : 0;
	if (!n) {
		gdrb_json_string(j, "paths", NULL);     /* decided as it runs */
		return;
	}
	gdrb_json_open_array(j, "paths");
	for (i = 0; i < n && i < GDRB_MAX_VARIANTS; i++) {
		gdrb_json_open_object(j, NULL);
		gdrb_json_string(j, "path", v[i].path);
		gdrb_json_string(j, "label", v[i].label);
		gdrb_json_string(j, "reg", v[i].reg);
		gdrb_json_bool(j, "staged", v[i].staged);
		gdrb_json_bool(j, "pipelined", v[i].pipelined);
		gdrb_json_close_object(j);
	}
	gdrb_json_close_array(j);
}

/* Every kind --mem accepts (none where the binary takes no --mem), with what the run asks of it. */
static void describe_kinds(struct gdrb_json *j, const struct gdrb_run_args *args,
			   const struct gdrb_params *p)
{
	bool takes_mem = args->opts && (args->opts->core & GDRB_OPTG_MEM);
	unsigned k;

	gdrb_json_string(j, "default_mem", takes_mem ? gdrb_mem_kind_name(args->opts->mem) : NULL);
	gdrb_json_open_array(j, "mem_kinds");
	for (k = 0; takes_mem && k < gdrb_mem_kind_count(); k++) {
		const struct gdrb_mem_kind_ops *kind = gdrb_mem_kind((enum gdrb_mem_kind)k);

		gdrb_json_open_object(j, NULL);
		gdrb_json_string(j, "name", kind->name);
		gdrb_json_bool(j, "opens_gpu", kind->opens_gpu);
		gdrb_json_bool(j, "needs_gpu", kind->needs_gpu);
		gdrb_json_bool(j, "on_gpu", kind->on_gpu);
		gdrb_json_bool(j, "staged", kind->staged);
		describe_paths(j, args->facts, p, (enum gdrb_mem_kind)k);
		gdrb_json_close_object(j);
	}
	gdrb_json_close_array(j);
}

int gdrb_run_describe(const struct gdrb_run_args *args, const struct gdrb_params *p)
{
	const struct gdrb_run_facts *f = args->facts;
	struct gdrb_json j;

	if (!gdrb_log_is_leader())
		return 0;
	if (!f) {
		gdrb_err("internal: %s has no --describe facts", gdrb_prog());
		return GDRB_ERR;
	}
	gdrb_json_init(&j, stdout);
	gdrb_json_open_object(&j, NULL);
	gdrb_json_int(&j, "describe_format", DESCRIBE_FORMAT);
	gdrb_json_string(&j, "binary", gdrb_prog());
	gdrb_json_string(&j, "package", PACKAGE_NAME);
	gdrb_json_string(&j, "version", PACKAGE_VERSION);
	gdrb_json_int(&j, "csv_schema", gdrb_csv_version());
	gdrb_json_string(&j, "benchmark", f->benchmark);
	gdrb_json_string(&j, "bidir_benchmark", f->bidir_benchmark);
	gdrb_json_string(&j, "layer", f->layer);
	gdrb_json_string(&j, "summary", args->summary);
	gdrb_json_string(&j, "metric", f->metric);
	gdrb_json_string(&j, "traffic", f->traffic);
	gdrb_json_bool(&j, "all_pairs", f->all_pairs);
	gdrb_json_bool(&j, "needs_gpu", f->needs_gpu);
	describe_kinds(&j, args, p);
	gdrb_opts_describe(&j, args->opts);
	gdrb_json_close_object(&j);
	fputc('\n', stdout);
	return 0;
}
