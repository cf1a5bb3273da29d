/* SPDX-License-Identifier: BSD-3-Clause */
/* What pairs.c (layout, rounds, measurement) and pairs_out.c (table, CSV, matrices) share. */
#ifndef GDRB_PAIRS_INT_H
#define GDRB_PAIRS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gdrb_counters.h"
#include "gdrb_mem.h"
#include "gdrb_pairs.h"
#include "gdrb_run.h"
#include "gdrb_topo.h"

/* One rank as the rows name it (the rank table), gathered by every rank. */
struct pairs_member {
	int32_t rank, local_rank, group, pos;   /* group: its rail (0 unless rail); pos in it */
	char host[GDRB_HOST_MAX];
	char gpu[GDRB_BDF_LEN];
	char nic[64];
};

enum { PAIRS_NONE, PAIRS_OK, PAIRS_SKIPPED, PAIRS_ERROR };

/* What this rank's RDMA ports counted over one latency phase, its part in one pair. */
struct pairs_nic {
	uint64_t errors, packets;       /* rises of error counters, packets moved */
	uint32_t ports;                 /* ports read; 0: no reading (not this rank's pair, or no port) */
	uint32_t unreadable;            /* error or packet counters the reading after it could not read */
	struct gdrb_cnt_rise_item top;  /* the error counter that rose most; delta 0: none rose */
};

/* This rank's figures of one round for one (metric, size, path): its out-pair, its in-pair's check. */
struct pairs_slot {
	double value;           /* GB/s or us */
	uint64_t iters, out_err, in_err;
	int32_t status, pad;
	struct pairs_nic out_nic, in_nic;       /* latency: as the initiator of its out-pair, the responder of its in-pair */
};

/* Rank 0's matrix cell: the last round that measured the pair. */
struct pairs_cell {
	float value;
	uint32_t iters, errors;
	uint16_t round;
	uint8_t status, pad;
};

struct pairs_run {
	const struct gdrb_pairs_ops *ops;
	struct gdrb_boot *boot;
	struct gdrb_params p;
	const struct gdrb_pairs_params *pp;
	void *priv;

	int n;                  /* ranks */
	unsigned m, ngroups;    /* ranks per shift group, groups */
	struct pairs_member *members;   /* every rank's, in rank order */
	int *at;                /* at[group * m + pos]: the rank */
	unsigned *shifts, nshifts;
	int *peers;             /* the ranks this rank meets (the transport's setup) */
	uint64_t seed;
	bool sampled;           /* --rounds */
	char simulated[128];    /* the test suite's simulated GPU on some rank: its name; else "" */
	char gpu_shared[320];   /* ranks on one GPU (gdrb_run_gpu_sharing), rank 0 only; else "" */
	bool gpu_time_sliced;

	struct gdrb_buf send, recv, send_bounce, recv_bounce;
	struct gdrb_pairs_path_set {
		struct gdrb_variant v[GDRB_RUN_PATHS_MAX];
		size_t n;
	} paths;
	unsigned metrics[2], nmetrics;
	size_t nrec;            /* metrics x sizes x paths */

	struct pairs_slot *mine;        /* nrec */
	struct pairs_slot *all;         /* rank 0: n x nrec, one round */
	struct pairs_cell *cells;       /* rank 0: nrec x n x n */
	FILE *csv;
	char dir[4096];                 /* where the rank table and matrices go */
	struct gdrb_counters *counters; /* the NIC's and GPU's counters, read around the rounds */
	struct gdrb_counters_file *counter_file;        /* rank 0: beside the CSV; NULL: none */
	bool nic_per_pair;      /* rank 0: no two ranks of a host read one port, so a latency phase's rises are its pairs' */
	unsigned rounds_done;
	double last_write;
	bool failed;            /* a round did not finish */
	bool invalid;           /* a pair's bytes arrived wrong */
};

static inline size_t pairs_rec(const struct pairs_run *r, size_t mi, size_t si, size_t pi)
{
	return (mi * r->p.sizes.n + si) * r->paths.n + pi;
}

static inline int pairs_peer(const struct pairs_run *r, int rank, unsigned k, bool to)
{
	const struct pairs_member *me = &r->members[rank];
	unsigned pos = to ? (me->pos + k) % r->m : (me->pos + r->m - k) % r->m;

	return r->at[(size_t)me->group * r->m + pos];
}

/* pairs_out.c, rank 0 */
int gdrb_pairs_out_open(struct pairs_run *r);
void gdrb_pairs_out_header(const struct pairs_run *r);
void gdrb_pairs_out_round(struct pairs_run *r, unsigned k);
int gdrb_pairs_out_matrices(const struct pairs_run *r);
void gdrb_pairs_out_end(const struct pairs_run *r);
int gdrb_pairs_out_close(struct pairs_run *r);

#endif
