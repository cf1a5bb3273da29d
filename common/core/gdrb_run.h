/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opening every entry point of a run shares: gdrb_main (a benchmark
 * descriptor), gdrb_pairs_main (all pairs), and any further one (a layer with
 * a driver of its own) calls these instead of copying them:
 *   1. gdrb_run_begin: logging, the options, the test hooks, the entry point's
 *      own refusals, the bootstrap and the clock;
 *   2. refusals that need the ranks (layout, CSV file), agreed with
 *      gdrb_boot_agree_exit() (gdrb_boot.h) so that every rank stops alike;
 *   3. gdrb_run_open_gpu: the GPU the --mem kind (or the benchmark) needs;
 *   4. buffers from the kind's ops (gdrb_mem.h: gdrb_mem_ops_get, and the
 *      bounce buffers of its staged paths where gdrb_mem_kind() says it has them).
 * The checkers' fault (GDRB_INJECT_CORRUPTION) is applied by
 * gdrb_run_corrupt() wherever a received buffer is checked.
 */
#ifndef GDRB_RUN_H
#define GDRB_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "gdrb_boot.h"
#include "gdrb_mem.h"
#include "gdrb_opts.h"

/* One way of moving the bytes, measured side by side with the others. */
struct gdrb_variant {
	const char *label;      /* table column prefix: "direct", "staged", "h2d_pinned" */
	const char *mem;        /* CSV mem */
	const char *path;       /* CSV path: direct, staged, or the benchmark's own */
	const char *reg;        /* CSV reg: host, dmabuf, peermem, mpi-cuda, staged, none */
	const char *how;        /* one line for the header: how this path moves the bytes */
	bool staged;            /* bytes pass through pinned bounce memory */
	bool pipelined;         /* staged in fragments through the rings (else whole messages) */
	bool supported;
	char why[768];          /* why not, when !supported */
	int id;                 /* the benchmark's own tag */
};

/* How a staged path moves a message between the GPU and its pinned bounce memory. */
enum gdrb_stage_shape {
	GDRB_SHAPE_MESSAGES,    /* point to point: pipelined fragments or serial, as --staging says */
	GDRB_SHAPE_COLLECTIVE,  /* the whole buffer before and after one collective call */
	GDRB_SHAPE_PAIRS,       /* all pairs: each whole message around its window (serial) */
};

#define GDRB_RUN_PATHS_MAX 3

/*
 * The paths a run measures side by side for its --mem kind, into v (at least
 * GDRB_RUN_PATHS_MAX): "direct", the transport reading and writing the buffer
 * itself (reg host; a transport that takes device memory says so afterwards),
 * then, where the kind is staged, the staged paths the shape allows (`staging`:
 * --staging, for GDRB_SHAPE_MESSAGES). Returns how many.
 */
unsigned gdrb_run_paths(enum gdrb_mem_kind mem, enum gdrb_stage_shape shape, int staging,
			struct gdrb_variant *v);

/*
 * What an entry point is, for --describe (docs/describe.md): the facts the tools read
 * from the binary instead of keeping copies of them.
 */
struct gdrb_run_facts {
	const char *benchmark;          /* the CSV benchmark column */
	const char *bidir_benchmark;    /* ... with -b; NULL: no -b */
	const char *layer;              /* the CSV layer column */
	const char *metric;             /* "latency" or "bandwidth" */
	const char *traffic;            /* "pingpong", "unidir", "bidir", "local", "collective", "pairs" */
	bool all_pairs;                 /* gdrb_pairs_main: the pairs CSV, its rank table and matrices */
	bool needs_gpu;                 /* measures a GPU whatever --mem says */
	/*
	 * The paths a run on p (its --mem kind and the other options) measures, in order, into v
	 * (at most GDRB_MAX_VARIANTS, gdrb_driver.h), with the reg a row of each carries where the run
	 * cannot say more (failed, unsupported); 0: the binary decides them as it runs.
	 */
	size_t (*paths)(const void *entry, const struct gdrb_params *p, struct gdrb_variant *v);
	const void *entry;              /* what paths is given: the entry point's descriptor */
};

/* What an entry point reads from its command line. */
struct gdrb_run_args {
	const struct gdrb_opt_set *opts;
	const char *summary;            /* the first line of --help */
	/* Its own refusals once every option is read: 0, or GDRB_ERR_USAGE after one line. NULL: none. */
	int (*check)(const struct gdrb_params *p);
	const struct gdrb_run_facts *facts;     /* what --describe prints */
};

/*
 * --describe: args' facts, the options and every memory kind with its properties and the
 * paths a run on it measures, as one JSON object on stdout (the leader's). 0, or GDRB_ERR
 * where stdout could not be written.
 */
int gdrb_run_describe(const struct gdrb_run_args *args, const struct gdrb_params *p);

/*
 * Start a run: the options into *p, the test hooks, args->check, then the
 * bootstrap (rank and host in messages, rank 0 the leader, the clock).
 * true: go on. false: return *code from main (0 after --help, --version or --describe;
 * after bad usage every rank but the leader first waits a while, so that the
 * leader's line is out before a launcher ends the job).
 */
bool gdrb_run_begin(const struct gdrb_run_args *args, struct gdrb_boot *boot, int argc, char **argv,
		    struct gdrb_params *p, int *code);

/*
 * End a run begun with gdrb_run_begin, once the entry point has released what it
 * holds: the bootstrap finalised, then stdout closed. Returns the exit code: `code`,
 * or GDRB_EXIT_FAIL where it was success and a result written to stdout was lost.
 */
int gdrb_run_end(struct gdrb_boot *boot, int code);

/*
 * Open this rank's GPU where the --mem kind opens one, or where `measures`
 * (the benchmark's name) measures a GPU whatever --mem says (NULL: none).
 * *have_gpu says whether one was opened, *gpu what it is and `why` why not.
 * 0: the run goes on (a kind that falls back without a GPU included);
 * otherwise GDRB_ERR_USAGE (a bad --gpu) or the failure, said once by the leader.
 */
int gdrb_run_open_gpu(const struct gdrb_boot *boot, const struct gdrb_params *p, const char *measures,
		      struct gdrb_gpu_info *gpu, char *why, size_t len, bool *have_gpu);

/*
 * Whether ranks on one host run on one GPU (every rank of a run on GPU memory
 * calls it once its GPU is open, with or without one; a run on host memory
 * need not, and skips the gather). Rank 0 gets in `note` one clause per shared
 * GPU ("2 ranks share GPU 0000:17:00.0 on node3 (MPS off)"), "" when none is
 * shared, and in *time_sliced whether a shared GPU runs without MPS: then the
 * GPU time-slices between the ranks' processes and each one's copies can wait
 * for another's (docs/gpu-sharing.md). 0, or GDRB_ERR on rank 0 (no memory).
 */
int gdrb_run_gpu_sharing(struct gdrb_boot *boot, const struct gdrb_gpu_info *gpu, bool have_gpu,
			 char *note, size_t len, bool *time_sliced);
/* What the header says after the note of gdrb_run_gpu_sharing: why it matters, what to do. */
const char *gdrb_run_gpu_sharing_why(bool time_sliced);

/*
 * Each rank's rail (every rank of a run on GPU memory calls it once its GPU is
 * open, with or without one): its GPU and the NIC nearest that GPU by PCI
 * distance in sysfs (the port the verbs layer picks unless --ib-dev names one).
 * Rank 0 gets in `line` one clause per rank, "node1 local rank 0: GPU 0
 * 0000:17:00.0, NIC mlx5_0 (PIX)". 0, or GDRB_ERR on rank 0 (no memory).
 */
int gdrb_run_rails(struct gdrb_boot *boot, const struct gdrb_gpu_info *gpu, bool have_gpu,
		   char *line, size_t len);

/*
 * The checker tests' fault: where GDRB_INJECT_CORRUPTION names this rank, one
 * byte in the middle of the `span` bytes received into buf from byte `off` is
 * flipped before they are checked.
 */
void gdrb_run_corrupt(const struct gdrb_boot *boot, struct gdrb_buf *buf, size_t off, size_t span);

#endif
