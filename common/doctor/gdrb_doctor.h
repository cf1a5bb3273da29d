/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdrb_doctor: the preconditions of GPUDirect RDMA on one node, checked one
 * by one (in libgdrbench_verbs). doctor_checks.c runs the checks, doctor_out.c prints them; the
 * single-node binary (bench/gdrb_doctor.c) and the MPI one
 * (mpi/gdrb_doctor_mpi.c) share both.
 */
#ifndef GDRB_DOCTOR_H
#define GDRB_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gdrb_cuda_info.h"
#include "gdrb_mem.h"
#include "gdrb_node.h"
#include "gdrb_nvml.h"
#include "gdrb_rdma.h"
#include "gdrb_size.h"
#include "gdrb_topo.h"

/* Ordered so that the worse verdict is the larger; SKIP says nothing. */
enum gdrb_doc_verdict { GDRB_DOC_SKIP, GDRB_DOC_PASS, GDRB_DOC_WARN, GDRB_DOC_FAIL };

#define GDRB_DOC_NCHECKS 11
#define GDRB_DOC_MAX_VERBS_DEVS 64

struct gdrb_doc_item {
	enum gdrb_doc_verdict v;
	char text[448];
};

struct gdrb_doc_check {
	int id;
	const char *name;               /* "rdma-ports": stable, for scripts */
	const char *title;              /* "RDMA devices and ports" */
	enum gdrb_doc_verdict v;
	char evidence[384];             /* one line: what was read */
	char fix[384];                  /* one line: what to do; "" when nothing */
	struct gdrb_doc_item *items;         /* per device or per setting */
	size_t nitems;
};

/* Options shared by gdrb_doctor and gdrb_doctor_mpi. */
struct gdrb_doctor_opts {
	const char *sysfs_root;         /* default "/sys" */
	const char *procfs_root;        /* default "/proc" */
	bool live;                      /* both roots are the running system's */
	bool json;
	bool fast;                      /* --fast: no CUDA, no registration attempt */
	bool oneline;                   /* --oneline: the health check's one line */
	/* The runs to check RLIMIT_MEMLOCK for (-m, -W, --mem). */
	struct gdrb_sizes sizes;        /* default GDRB_DEF_SIZES */
	size_t max_size;                /* the largest of sizes */
	unsigned window;                /* default GDRB_DEF_WINDOW */
	size_t window_bytes;            /* default GDRB_DEF_WINDOW_BYTES */
	enum gdrb_mem_kind mem;         /* default device */
};

struct gdrb_doctor {
	const char *sysfs_root, *procfs_root;
	bool live;                      /* the running system: libibverbs and CUDA are asked too */
	bool fast;                      /* --fast: CUDA not asked, registration not attempted */
	bool ask_cuda;                  /* live and not fast */
	/* The runs check 6 computes the RLIMIT_MEMLOCK need of (gdrb_doctor_opts). */
	const struct gdrb_sizes *sizes;
	size_t max_size;
	unsigned window;
	size_t window_bytes;
	enum gdrb_mem_kind mem;

	struct gdrb_topo topo;
	struct gdrb_node node;

	bool cuda_ok;
	struct gdrb_cuda_inventory cuda;
	char cuda_why[256];

	/* NVLink state per GPU from NVML, asked on the live node only (with --fast too). */
	bool ask_nvml;
	struct gdrb_nvml nvml;

	bool verbs_ok;
	char verbs_devs[GDRB_DOC_MAX_VERBS_DEVS][GDRB_RDMA_NAME_LEN];
	size_t nverbs;
	char verbs_why[256];

	int *nic_of_gpu;                /* nearest NIC per GPU; -1 none */
	enum gdrb_topo_dist *dist_of_gpu;

	struct gdrb_doc_check checks[GDRB_DOC_NCHECKS];
};

/*
 * Parse and check argv. 0: go on; 1: --help or --version printed (exit 0);
 * GDRB_ERR_USAGE after one line naming the option and its accepted form.
 */
int gdrb_doctor_parse(int argc, char **argv, const char *summary, struct gdrb_doctor_opts *o);

/* Read the roots o names, and (o->live) CUDA and libibverbs. 0 or a negative errno. */
int gdrb_doctor_load(struct gdrb_doctor *d, const struct gdrb_doctor_opts *o);
void gdrb_doctor_run(struct gdrb_doctor *d);
void gdrb_doctor_free(struct gdrb_doctor *d);

/* The CUDA device behind the PCI GPU at bdf; -1 when CUDA was not asked or does not see it. */
int gdrb_doctor_cuda_index(const struct gdrb_doctor *d, const char *bdf);

enum gdrb_doc_verdict gdrb_doctor_verdict(const struct gdrb_doctor *d);
const char *gdrb_doc_verdict_name(enum gdrb_doc_verdict v);

void gdrb_doctor_print_table(const struct gdrb_doctor *d, FILE *f);
void gdrb_doctor_print_json(const struct gdrb_doctor *d, FILE *f);
/* "host: FAIL (7 PASS, 1 WARN, 2 FAIL, 1 SKIP) 1:rdma-ports=FAIL ..." */
void gdrb_doctor_summary(const struct gdrb_doctor *d, const char *host, char *buf, size_t len);
/*
 * The one line of --oneline, for health checks (Slurm's HealthCheckProgram, NHC):
 * "gdrbench: OK (9 PASS, 0 WARN, 0 FAIL, 2 SKIP)" or "gdrbench: FAIL acs: <evidence>"
 * with "; also FAIL: NAME..." when more checks fail. Printable ASCII without quotes,
 * backslash, backquote or dollar, at most GDRB_DOC_LINE_MAX bytes, then a newline.
 */
#define GDRB_DOC_LINE_MAX 240
void gdrb_doctor_print_line(const struct gdrb_doctor *d, FILE *f);
/* The same from the verdicts of checks 1..11 alone (what gdrb_doctor_mpi gathers). */
void gdrb_doctor_summary_of(const char *host, const enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS], char *buf,
		       size_t len);
/* The stable name of check id (1..11): "rdma-ports". */
const char *gdrb_doctor_check_name(int id);

#endif
