/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All pairs (mpiGraph's shifted rounds): in round k every rank i sends to
 * (i + k) mod m and receives from (i - k) mod m at once, m being the ranks of
 * its shift group (all ranks, or one rail: the ranks with the same local rank
 * on every node). The core here owns options, layout, the rounds, staging,
 * validation, timing and the output (pairs CSV, rank table, matrix files,
 * table); a transport gives the transfers as a struct gdrb_pairs_ops
 * (mpi/gdrb_mpi_pairs.c over MPI, common/verbs/verbs_pairs.c over RDMA writes).
 */
#ifndef GDRB_PAIRS_H
#define GDRB_PAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrb_boot.h"
#include "gdrb_mem.h"
#include "gdrb_opts.h"

#define GDRB_PAIRS_DEF_SIZES "8M,8"

/* --granularity: what a row of the matrix is. */
enum gdrb_pairs_gran {
	GDRB_PAIRS_GRAN_RANK,   /* every rank, however many share a node */
	GDRB_PAIRS_GRAN_NODE,   /* one rank per node (refused where a node runs more) */
	GDRB_PAIRS_GRAN_RAIL,   /* one rank per GPU; GPU i of a node only meets GPU i of the others */
	GDRB_PAIRS_GRAN_COUNT
};

/* --metric: bits. */
enum { GDRB_PAIRS_BW = 1u << 0, GDRB_PAIRS_LAT = 1u << 1 };

struct gdrb_pairs_params {
	unsigned rounds;        /* 0: every shift */
	uint64_t seed;
	bool seed_given;
	int granularity;        /* enum gdrb_pairs_gran */
	unsigned metrics;       /* GDRB_PAIRS_BW | GDRB_PAIRS_LAT */
	uint64_t start_at;      /* wall-clock second (since the epoch) the rounds wait for; 0: none */
	double round_every;     /* with start_at: round i begins start_at + i x this seconds; 0: at once */
};

enum { GDRB_PAIRS_OPTS = 1u << 0 };

extern const struct gdrb_opt_group gdrb_pairs_opts;
extern const char *const gdrb_pairs_gran_names[GDRB_PAIRS_GRAN_COUNT];

/* This rank's buffers, for a transport that registers them (verbs): wire pointers lie in them. */
struct gdrb_pairs_bufs {
	struct gdrb_buf *send, *recv;                   /* --mem kind */
	struct gdrb_buf *send_bounce, *recv_bounce;     /* pinned, device memory only (else ptr NULL) */
};

/* What a transport's setup is told, and what it answers. */
struct gdrb_pairs_setup {
	const struct gdrb_pairs_bufs *bufs;
	size_t max_msgs;                /* the largest window, in messages */
	const int *peers;               /* the ranks this rank sends to or receives from in the rounds run */
	unsigned npeers;
	const struct gdrb_gpu_info *gpu;        /* this rank's GPU; NULL without one */
	/* Answers: whether the direct path takes device memory (false: why says why; the path is skipped). */
	bool direct_device;
	char why[768];
	const char *direct_reg;         /* the direct device path's reg column ("peermem"); NULL: the core's */
	const char *direct_how;         /* its header line; NULL: the core's */
	char nic[64];                   /* the NIC this rank uses ("mlx5_0:1"); "": the one nearest its GPU */
};

/*
 * One bandwidth iteration of one rank: its window out and the window in, at once.
 * received (may be NULL) runs once the window in has arrived, before it is
 * acknowledged (the staged path's copies to the device).
 */
struct gdrb_pairs_window {
	int to, from;           /* ranks */
	size_t size;            /* bytes of a message */
	unsigned count;         /* messages each way */
	size_t stride;          /* bytes between messages in the buffers */
	const char *send;       /* wire buffers: device pointers on the direct device path */
	char *recv;
	int (*received)(void *arg);
	void *arg;
};

/* When an exchange's two sides ended (gdrb_ticks()). */
struct gdrb_pairs_done {
	uint64_t out;           /* the window out sent and acknowledged by w->to */
	uint64_t in;            /* the window in received from w->from */
};

/*
 * A transport. Every call blocks until its part is done and returns 0 or
 * GDRB_ERR (said once); before waiting on a peer it names it to the watchdog
 * (gdrb_watchdog_context), so a peer that stops answering is named.
 */
struct gdrb_pairs_ops {
	const char *name;       /* CSV benchmark: "mpi_pairs" */
	const char *layer;      /* "mpi", "verbs" */
	const char *summary;
	const struct gdrb_opt_use *opt_groups;          /* besides gdrb_pairs_opts; ended by { NULL } */
	const struct gdrb_opt_group *const *opt_known;
	/* After the boot and the buffers: the transport's state on *priv; the answers in *s. */
	int (*setup)(const struct gdrb_params *p, struct gdrb_boot *b, struct gdrb_pairs_setup *s, void **priv);
	/* Optional: header lines on its settings (rank 0's, "# " added to each line). */
	void (*describe)(void *priv, char *buf, size_t len);
	/*
	 * Optional: a measurement (a size and path of a round, or a latency phase)
	 * begins, this rank's receive buffers just filled for validation. A
	 * transport that writes into its peers' buffers unasked waits here for its
	 * destination to be as far (to), and tells its source (from).
	 */
	int (*begin)(void *priv, int to, int from, size_t size);
	/*
	 * A bandwidth iteration in two calls, a barrier of all ranks between them
	 * (so a pair's time holds that pair only, as mpiGraph's): post makes ready
	 * to receive the window from w->from and the acknowledgement from w->to
	 * (sending no data; it may wait on w->to being ready too); exchange sends the window to w->to, acknowledges the
	 * window in to w->from once it arrived, and returns when all is done, with
	 * the time each side ended in *done (a side must not wait on the other).
	 */
	int (*post)(void *priv, const struct gdrb_pairs_window *w);
	int (*exchange)(void *priv, const struct gdrb_pairs_window *w, struct gdrb_pairs_done *done);
/* Blocking one-message send and receive (the ping-pong of the latency metric). */
	int (*send)(void *priv, int peer, const void *buf, size_t len);
	int (*recv)(void *priv, int peer, void *buf, size_t len);
	void (*teardown)(void *priv);
};

/* Run all pairs with transport ops; returns the process exit code. */
int gdrb_pairs_main(const struct gdrb_pairs_ops *ops, struct gdrb_boot *boot, int argc, char **argv);

/*
 * The shift schedule, pure (tests/unit/test_pairs.c): the K shifts of 1..m-1 that
 * --rounds K --seed S picks (every shift, in order, for K = 0 or m - 1),
 * sorted; and the ping-pong phase of each pair (i, i + k) of a round, so that
 * no rank is in two pairs of one phase (at most 3 phases).
 */
int gdrb_pairs_shifts(unsigned m, unsigned k, uint64_t seed, unsigned *out);
unsigned gdrb_pairs_phases(unsigned m, unsigned k, unsigned *phase);

#endif
