/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdrb_doctor: whether GPUDirect RDMA can work on this node, and why not.
 * Eleven checks, each PASS, WARN, FAIL or SKIP with the evidence read and a
 * one-line fix. Exit 0 when nothing fails, 1 when something does. --fast and
 * --oneline make it a health check (docs/doctor.md).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_doctor.h"
#include "gdrb_log.h"
#include "gdrb_report.h"

int main(int argc, char **argv)
{
	struct gdrb_doctor_opts o;
	struct gdrb_doctor d;
	int rc;

	gdrb_log_init(argv[0]);
	rc = gdrb_doctor_parse(argc, argv, "Check the preconditions of GPUDirect RDMA on this node.", &o);
	if (rc)         /* > 0: --help or --version printed */
		return rc < 0 ? GDRB_EXIT_USAGE : gdrb_stdout_close() ? GDRB_EXIT_FAIL : GDRB_EXIT_OK;
	rc = gdrb_doctor_load(&d, &o);
	if (rc) {
		gdrb_err("reading %s and %s: %s", o.sysfs_root, o.procfs_root, strerror(-rc));
		/* A health check reads stdout: a node whose sysfs cannot be read is not healthy. */
		if (o.oneline)
			printf("gdrbench: FAIL doctor: reading sysfs and procfs: %s\n", strerror(-rc));
		gdrb_doctor_free(&d);
		gdrb_stdout_close();
		return GDRB_EXIT_FAIL;
	}
	gdrb_doctor_run(&d);
	if (o.oneline)
		gdrb_doctor_print_line(&d, stdout);
	else if (o.json)
		gdrb_doctor_print_json(&d, stdout);
	else
		gdrb_doctor_print_table(&d, stdout);
	rc = gdrb_doctor_verdict(&d) == GDRB_DOC_FAIL ? GDRB_EXIT_FAIL : GDRB_EXIT_OK;
	gdrb_doctor_free(&d);
	/* A verdict nobody can read is no verdict. */
	if (gdrb_stdout_close())
		rc = GDRB_EXIT_FAIL;
	return rc;
}
