/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdrb_doctor_mpi: gdrb_doctor on every node of an mpirun or srun job. The
 * first rank of each host runs the checks; rank 0 prints one summary line per
 * node (or JSON with every check's verdict per node). The exit status is 1
 * when any node FAILs a check.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_doctor.h"
#include "gdrb_json.h"
#include "gdrb_log.h"
#include "gdrb_report.h"

/* What each rank sends to rank 0; ran == 0 for ranks that are not the first on their host. */
struct node_result {
	char host[GDRB_HOST_MAX];
	int32_t ran;
	int32_t load_err;               /* -errno when the trees could not be read */
	int32_t v[GDRB_DOC_NCHECKS];
};

static void print_json(const struct node_result *all, int n, enum gdrb_doc_verdict worst)
{
	enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS];
	struct gdrb_json j;
	int r, i;

	gdrb_json_init(&j, stdout);
	gdrb_json_open_object(&j, NULL);
	gdrb_json_string(&j, "tool", "gdrb_doctor_mpi");
	gdrb_json_string(&j, "version", PACKAGE_VERSION);
	gdrb_json_string(&j, "verdict", gdrb_doc_verdict_name(worst));
	gdrb_json_open_array(&j, "nodes");
	for (r = 0; r < n; r++) {
		char line[1024];

		if (!all[r].ran)
			continue;
		for (i = 0; i < GDRB_DOC_NCHECKS; i++)
			v[i] = (enum gdrb_doc_verdict)all[r].v[i];
		gdrb_doctor_summary_of(all[r].host, v, line, sizeof(line));
		gdrb_json_open_object(&j, NULL);
		gdrb_json_string(&j, "host", all[r].host);
		gdrb_json_int(&j, "rank", r);
		gdrb_json_string(&j, "summary", line);
		gdrb_json_open_object(&j, "checks");
		for (i = 0; i < GDRB_DOC_NCHECKS; i++)
			gdrb_json_string(&j, gdrb_doctor_check_name(i + 1), gdrb_doc_verdict_name(v[i]));
		gdrb_json_close_object(&j);
		gdrb_json_close_object(&j);
	}
	gdrb_json_close_array(&j);
	gdrb_json_close_object(&j);
}

static enum gdrb_doc_verdict print_nodes(const struct node_result *all, int n, bool json)
{
	enum gdrb_doc_verdict worst = GDRB_DOC_PASS, v[GDRB_DOC_NCHECKS];
	int r, i, nodes = 0, failed = 0;
	char line[1024];

	for (r = 0; r < n; r++) {
		enum gdrb_doc_verdict node = GDRB_DOC_PASS;

		if (!all[r].ran)
			continue;
		nodes++;
		for (i = 0; i < GDRB_DOC_NCHECKS; i++) {
			v[i] = (enum gdrb_doc_verdict)all[r].v[i];
			if (v[i] > node)
				node = v[i];
		}
		failed += node == GDRB_DOC_FAIL;
		if (node > worst)
			worst = node;
		if (json)
			continue;
		/* Host names are text from each node: for the terminal, as the doctor's table. */
		if (all[r].load_err) {
			gdrb_text_put(stdout, all[r].host);
			printf(": FAIL (cannot read sysfs or procfs: %s)\n", strerror(-all[r].load_err));
		} else {
			gdrb_doctor_summary_of(all[r].host, v, line, sizeof(line));
			gdrb_text_put(stdout, line);
			putchar('\n');
		}
	}
	if (json)
		print_json(all, n, worst);
	else
		printf("# %d node%s, %d with a FAIL: %s\n", nodes, nodes == 1 ? "" : "s", failed,
		       gdrb_doc_verdict_name(worst));
	return worst;
}

int main(int argc, char **argv)
{
	struct gdrb_boot *b = &gdrb_boot_mpi;
	struct node_result mine, *all = NULL;
	struct gdrb_doctor_opts o;
	uint64_t code = GDRB_EXIT_OK;
	int rc, i;

	gdrb_log_init(argv[0]);
	if (b->init(b, &argc, &argv))
		return GDRB_EXIT_FAIL;
	gdrb_log_set_rank(b->rank, b->hosts[b->rank]);
	gdrb_log_set_leader(b->rank == 0);
	rc = gdrb_doctor_parse(argc, argv, "Check the preconditions of GPUDirect RDMA on every node of "
			  "an MPI job; rank 0 prints one line per node.", &o);
	if (!rc && o.oneline) {
		gdrb_usage_err("--oneline: gdrb_doctor_mpi prints one line per node already; a health "
			       "check runs gdrb_doctor --oneline on its node");
		rc = GDRB_ERR_USAGE;
	}
	if (rc) {
		b->finalize(b);
		return rc < 0 ? GDRB_EXIT_USAGE : gdrb_stdout_close() ? GDRB_EXIT_FAIL : GDRB_EXIT_OK;
	}
	memset(&mine, 0, sizeof(mine));
	snprintf(mine.host, sizeof(mine.host), "%s", b->hosts[b->rank]);
	if (b->local_rank == 0) {
		struct gdrb_doctor d;

		mine.ran = 1;
		mine.load_err = gdrb_doctor_load(&d, &o);
		if (mine.load_err) {
			for (i = 0; i < GDRB_DOC_NCHECKS; i++)
				mine.v[i] = GDRB_DOC_FAIL;
		} else {
			gdrb_doctor_run(&d);
			for (i = 0; i < GDRB_DOC_NCHECKS; i++)
				mine.v[i] = (int32_t)d.checks[i].v;
		}
		gdrb_doctor_free(&d);
	}
	if (b->rank == 0) {
		all = calloc((size_t)b->size, sizeof(*all));
		if (!all)
			b->abort(b, GDRB_EXIT_FAIL);
	}
	if (b->gather(b, &mine, sizeof(mine), all))
		b->abort(b, GDRB_EXIT_FAIL);
	if (b->rank == 0) {
		code = print_nodes(all, b->size, o.json) == GDRB_DOC_FAIL ? GDRB_EXIT_FAIL : GDRB_EXIT_OK;
		if (gdrb_stdout_flush())
			code = GDRB_EXIT_FAIL;
	}
	/* Every rank exits with the job's verdict, so launchers agree with rank 0. */
	b->allreduce_u64(b, &code, 1, GDRB_OP_MAX);
	free(all);
	b->finalize(b);
	if (gdrb_stdout_close() && code == GDRB_EXIT_OK)
		code = GDRB_EXIT_FAIL;
	return (int)code;
}
