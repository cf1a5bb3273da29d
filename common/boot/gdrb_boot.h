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
	/*
	 * Point to point, for the named steps below: send `slen` bytes to rank
	 * `to` and receive `rlen` from rank `from`; a negative rank skips that
	 * half. NULL where the bootstrap has none (one process needs none).
	 */
	int (*sendrecv)(struct gdrb_boot *b, int to, const void *send, size_t slen, int from,
			void *recv, size_t rlen);
	void (*finalize)(struct gdrb_boot *b);
	/* Take every rank down with `code` (after a fatal error on one rank). */
	void (*abort)(struct gdrb_boot *b, int code);
	/* One line for the header on what runs the ranks ("MPI: ..."); NULL: none. */
	void (*describe)(const struct gdrb_boot *b, char *line, size_t len);
	void *priv;
};

extern struct gdrb_boot gdrb_boot_self;

/*
 * Steps of every rank that name a rank that stops answering. A barrier or
 * reduction of the MPI library can only say "the other ranks" when one rank
 * is lost inside it; these are built on sendrecv so that every wait is on one
 * named rank. The barrier and the maximum disseminate: in round k (k = 0, 1,
 * ...; ceil(log2 size) rounds) each rank sends to rank + 2^k and waits for
 * rank - 2^k, at most --timeout. The gather: rank 0 waits on each rank in
 * turn, at most --timeout each; the others wait on rank 0 four times as long.
 * A rank stuck behind the lost one names the rank it waits on too (see
 * gdrb_watchdog_linger()). `what` and `size` say what was going on in the
 * timeout message. Without sendrecv: the bootstrap's own collective, "the
 * other ranks" named.
 */
int gdrb_boot_step_barrier(struct gdrb_boot *b, const char *what, size_t size);
int gdrb_boot_step_max(struct gdrb_boot *b, double *v, const char *what, size_t size);
int gdrb_boot_step_gather(struct gdrb_boot *b, const void *send, size_t len, void *recv,
			  const char *what, size_t size);

/*
 * Every rank's outcome made one, so that all ranks go on or stop alike: each
 * gives its exit code (GDRB_EXIT_*) and all get the largest (unsupported over
 * bad usage over failure over success; the rank that failed has said why). A
 * reduction that fails is a failure.
 */
int gdrb_boot_agree_exit(struct gdrb_boot *b, int code);
/* The same for a return code (0 or GDRB_ERR_*): the worst of every rank's. */
int gdrb_boot_agree(struct gdrb_boot *b, int rc);

/* Fill hosts-derived fields (nhosts, local_rank, local_size) from hosts[]. */
void gdrb_boot_derive_hosts(struct gdrb_boot *b);

/*
 * The rank this process will have under bootstrap b, read from launcher
 * variables before init; 0 if unknown, and always 0 for gdrb_boot_self.
 */
int gdrb_boot_rank_hint(const struct gdrb_boot *b);

#endif
