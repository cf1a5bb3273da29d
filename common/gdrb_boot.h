/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bootstrap: who runs where, and the few collectives the driver needs to
 * agree on iteration counts and gather results. An ops table, so that the
 * driver runs under MPI (boot_mpi.c) or as a single process (boot_self.c,
 * used by local benchmarks and unit tests) without naming either.
 */
#ifndef GDRB_BOOT_H
#define GDRB_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GDRB_HOST_MAX 64

enum gdrb_reduce_op { GDRB_OP_MAX, GDRB_OP_MIN, GDRB_OP_SUM };

/* --mpi-cuda: whether MPI may be handed device pointers (auto: ask MPI). */
enum gdrb_mpi_cuda { GDRB_MPI_CUDA_AUTO, GDRB_MPI_CUDA_YES, GDRB_MPI_CUDA_NO, GDRB_MPI_CUDA_COUNT };

extern const char *const gdrb_mpi_cuda_names[GDRB_MPI_CUDA_COUNT];

/* What an MPI library says of its CUDA support, where it says anything. */
struct gdrb_mpi_cuda_facts {
	bool have_query;        /* MPIX_Query_cuda_support() exists (Open MPI, MPICH >= 4) ... */
	int query;              /* ... and answered this at run time */
	bool have_macro;        /* mpi-ext.h defines MPIX_CUDA_AWARE_SUPPORT (Open MPI) ... */
	int macro;              /* ... to this */
};

/*
 * Whether MPI takes device pointers: --mpi-cuda yes or no decides; auto takes
 * the run-time query's answer, else the compile-time macro's, else no. why
 * (NULL: not wanted) gets "by ...", naming what decided and what was detected.
 */
bool gdrb_mpi_cuda_decide(enum gdrb_mpi_cuda want, const struct gdrb_mpi_cuda_facts *f,
			  char *why, size_t len);

struct gdrb_boot {
	const char *name;               /* "MPI", "single process" */
	int rank, size;
	int local_rank, local_size;     /* among ranks on the same host */
	int nhosts;
	char (*hosts)[GDRB_HOST_MAX];   /* host name of every rank */

	char library[128];              /* "Open MPI v4.1.4" */
	enum gdrb_mpi_cuda cuda_want;   /* --mpi-cuda, set before init */
	bool cuda_aware;                /* device pointers may be handed to it */
	bool cuda_detected;             /* what MPI itself says (--mpi-cuda auto) */
	char cuda_aware_why[256];       /* how that was decided: "by ..." */

	int (*init)(struct gdrb_boot *b, int *argc, char ***argv);
	int (*barrier)(struct gdrb_boot *b);
	int (*allreduce_u64)(struct gdrb_boot *b, uint64_t *v, size_t n, enum gdrb_reduce_op op);
	int (*allreduce_double)(struct gdrb_boot *b, double *v, size_t n, enum gdrb_reduce_op op);
	/* Rank 0 receives every rank's `len` bytes, in rank order. */
	int (*gather)(struct gdrb_boot *b, const void *send, size_t len, void *recv);
	int (*bcast)(struct gdrb_boot *b, void *buf, size_t len, int root);
	void (*finalize)(struct gdrb_boot *b);
	/* Take every rank down with `code` (after a fatal error on one rank). */
	void (*abort)(struct gdrb_boot *b, int code);
	void *priv;
};

extern struct gdrb_boot gdrb_boot_self;

/* Fill hosts-derived fields (nhosts, local_rank, local_size) from hosts[]. */
void gdrb_boot_derive_hosts(struct gdrb_boot *b);

/* The rank this process will have, read from launcher variables before init; 0 if unknown. */
int gdrb_boot_rank_hint(void);

#endif
