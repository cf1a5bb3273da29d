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

struct gdrb_boot {
	const char *name;               /* "MPI", "single process" */
	int rank, size;
	int local_rank, local_size;     /* among ranks on the same host */
	int nhosts;
	char (*hosts)[GDRB_HOST_MAX];   /* host name of every rank */

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
	/* One line for the header on what runs the ranks ("MPI: ..."); NULL: none. */
	void (*describe)(const struct gdrb_boot *b, char *line, size_t len);
	void *priv;
};

extern struct gdrb_boot gdrb_boot_self;

/* Fill hosts-derived fields (nhosts, local_rank, local_size) from hosts[]. */
void gdrb_boot_derive_hosts(struct gdrb_boot *b);

/* The rank this process will have, read from launcher variables before init; 0 if unknown. */
int gdrb_boot_rank_hint(void);

#endif
