/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The common driver. A benchmark is a descriptor plus callbacks; the driver
 * owns options, buffers, the size sweep, the iteration policy (warm-up, count
 * and time budget), timing, validation, both data paths side by side, the
 * timeout and the output.
 */
#ifndef GDRB_DRIVER_H
#define GDRB_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrb_boot.h"
#include "gdrb_mem.h"
#include "gdrb_opts.h"
#include "gdrb_run.h"
#include "gdrb_stage.h"

enum gdrb_metric {
	GDRB_METRIC_LAT,        /* table shows latency percentiles */
	GDRB_METRIC_BW,         /* table shows bandwidth */
};

/* Who sends what in one iteration; drives pairing and the generic validation. */
enum gdrb_traffic {
	GDRB_TRAFFIC_PINGPONG,  /* initiator sends, responder answers; sample = round trip */
	GDRB_TRAFFIC_UNIDIR,    /* initiator sends a window, responder acknowledges */
	GDRB_TRAFFIC_BIDIR,     /* both send a window to each other */
	GDRB_TRAFFIC_LOCAL,     /* one process, no peer (copy benchmarks, a local transport) */
	GDRB_TRAFFIC_COLLECTIVE, /* every rank takes part; times across ranks */
};

#define GDRB_MAX_VARIANTS 8

/*
 * Where a collective's result goes: a second per-size variant beside the path. The
 * driver measures every size on every path in each placement the benchmark names, a row
 * each with its own figures and validation.
 */
enum gdrb_placement {
	GDRB_PLACEMENT_NONE,    /* the benchmark has no such choice: the CSV placement is empty */
	GDRB_PLACEMENT_OUT,     /* out of place: the result in a buffer of its own */
	GDRB_PLACEMENT_IN,      /* in place: the result overwrites the input */
};

#define GDRB_MAX_PLACEMENTS 2

/* The CSV placement and the table's word: "out-of-place", "in-place", "" for none. */
const char *gdrb_placement_name(enum gdrb_placement pl);

struct gdrb_bench;

struct gdrb_ctx {
	const struct gdrb_params *p;
	const struct gdrb_bench *bench;
	struct gdrb_boot *boot;

	int peer;               /* paired rank, -1 for local benchmarks */
	bool initiator;         /* times and reports the pair */
	int pair, npairs;

	size_t bufsize;         /* bytes in each buffer below */
	struct gdrb_buf send, recv;                 /* --mem kind */
	struct gdrb_buf send_bounce, recv_bounce;   /* pinned, whole-message (serial) staging only */
	struct gdrb_ring out_ring, in_ring;         /* pinned slots, pipelined staging only */
	unsigned window;        /* messages per iteration at the current size */
	size_t stride;          /* bytes between a window's messages: the size, 0 with --buffers single */

	struct gdrb_variant variants[GDRB_MAX_VARIANTS];
	size_t nvariants;
	const struct gdrb_variant *variant;         /* the one being measured */
	enum gdrb_placement placements[GDRB_MAX_PLACEMENTS];
	size_t nplacements;
	enum gdrb_placement placement;              /* the one being measured */
	/*
	 * What every size is measured on besides its paths, set by setup (gdrb_copy_bw
	 * --p2p: each ordered pair of GPUs); 0: none. The driver selects each in turn
	 * (the benchmark's select_subject) and names it in the CSV pair column and the
	 * table's pair column.
	 */
	unsigned nsubjects, subject;
	char subject_name[32];
	bool checking;          /* this iteration was filled by prepare and is checked after it (-c) */

	bool have_gpu;
	struct gdrb_gpu_info gpu;
	char gpu_why[320];
	const char *nic;        /* CSV nic column ("" for MPI) */
	/* The RDMA device and port the transport uses (verbs), whose counters are read; NULL: not named. */
	const char *nic_dev;
	unsigned nic_port;
	const char *link_layer; /* CSV link_layer, link_gbps, gpu_nic_dist: verbs only */
	double link_gbps;
	const char *gpu_nic_dist;

	/*
	 * The transport's most messages per window at a size, *why saying what
	 * limits it (NULL: no limit of its own); set by setup.
	 */
	unsigned (*window_cap)(const struct gdrb_ctx *c, size_t size, char *why, size_t len);
	/* Ranks on one GPU (gdrb_run_gpu_sharing), rank 0 only: "" when none share. */
	char gpu_shared[320];
	bool gpu_time_sliced;   /* a shared GPU without MPS */
	/* Each rank's GPU and its nearest NIC (gdrb_run_rails), rank 0 only; "" without a GPU. */
	char rails[2048];
	char window_note[320];  /* why the window is cut at the current size; "" when it is not */

	/*
	 * What a library that picks its own path says it took (NCCL), set by the benchmark's
	 * `end` on rank 0 for the rows of the size: the CSV transport, gdr_connections and
	 * library, and a part of the note; "": none.
	 */
	char lib_transport[96], lib_gdr[32], lib_name[64], lib_note[512];
	/*
	 * How the library's calls were timed (the CSV timing and calls_per_sync: "batch", "call",
	 * "graph"; 0 calls: none) and what it chose at the size (the CSV algorithm, protocol and
	 * channels; "" and 0: not known), set by the benchmark for the rows of the size.
	 */
	char lib_timing[16], lib_algo[64], lib_proto[32];
	unsigned lib_calls_per_sync, lib_channels;
	/*
	 * The network line rate a collective's bytes crossed, set by the benchmark's `end` on
	 * rank 0 for the rows of the size (Gb/s; 0: not known, nothing is claimed): a row on
	 * more than one host whose busbw exceeds it is flagged in its note, naming where the
	 * rate came from (lib_line_from) and what lifts busbw above it (lib_line_why).
	 */
	double lib_line_gbps;
	char lib_line_from[160], lib_line_why[256];

	/*
	 * Calls a timed iteration holds (a library launching a batch before one synchronisation,
	 * NCCL's batch and graph timing), set by the benchmark at `begin`; 0 or 1: one. The driver
	 * divides each sample by it, so every time figure is per call (a percentile is then one of
	 * the batches' mean times per call); an iteration it validates (c->checking) holds one.
	 */
	unsigned calls_per_iter;
	/*
	 * The timed iteration's calls as the device timed them (CUDA events around them), in
	 * us, set by an iteration that times itself so: the sample, in place of the host
	 * clock's time of the whole iteration (which also holds the enqueueing and the wait).
	 * The driver sets it below 0 before each iteration; below 0 after it: the host clock.
	 */
	double device_us;
	unsigned mismatches_shown;  /* at the current size and path */
	size_t check_span;      /* bytes of result this rank checks at this size (fault injection) */
	size_t check_off;       /* ... from this byte of recv (a rotated buffer offset); 0 unless set */
	void *priv;             /* the benchmark's state */
};

/* Where message k of the current window starts in the send and receive buffers. */
static inline size_t gdrb_msg_off(const struct gdrb_ctx *c, unsigned k)
{
	return (size_t)k * c->stride;
}

/* Distinct message buffers of the window: one with --buffers single. */
static inline unsigned gdrb_msg_slots(const struct gdrb_ctx *c)
{
	return c->stride ? c->window : 1;
}

struct gdrb_bench {
	const char *name;       /* CSV benchmark column: "mpi_latency" */
	const char *bidir_name; /* the name with -b (-b, GDRB_OPTG_BIDIR), which makes UNIDIR BIDIR */
	const char *layer;      /* "mpi", "verbs", "local" */
	const char *summary;    /* one line for --help and the header */
	enum gdrb_metric metric;
	enum gdrb_traffic traffic;
	unsigned opt_core;      /* enum gdrb_opt_core bits: the core's options beyond the common ones */
	const struct gdrb_opt_use *opt_groups;          /* its layers' option groups, ended by { NULL } */
	const struct gdrb_opt_group *const *opt_known;  /* more groups refused by name, ended by NULL */
	bool own_buffers;       /* setup allocates; the driver allocates none */
	/*
	 * It measures a GPU whatever --mem says (copy benchmarks): the driver opens one and
	 * exits 77 without. Else a GPU is opened for --mem device (and pinned, which does
	 * without).
	 */
	bool needs_gpu;
	enum gdrb_mem_kind default_mem; /* --mem when the command line gives none (0: host) */
	/*
	 * The CSV reg of the direct path on memory on the GPU where the transport knows it
	 * before it registers anything ("mpi-cuda"); NULL: decided as it sets up (verbs:
	 * dmabuf or peermem), "none" in --describe.
	 */
	const char *gpu_reg;
	/*
	 * The bootstrap's sendrecv travels as the measured bytes do (MPI): pipelined
	 * staging's probe times the wire with it. Else the wire is not measured.
	 */
	bool boot_is_wire;

	/*
	 * The paths it measures, into v (at most GDRB_MAX_VARIANTS), and how many; NULL:
	 * gdrb_run_paths() for the --mem kind. A library that stages on its own (NCCL: its
	 * environment picks one path per process) gives its one path, staged by no bounce
	 * buffer of the driver's.
	 */
	size_t (*paths)(const struct gdrb_ctx *c, struct gdrb_variant *v);
	/*
	 * The placements it measures at every size and path, in this order, into pl (at
	 * most GDRB_MAX_PLACEMENTS), and how many; NULL: one, GDRB_PLACEMENT_NONE. The
	 * callbacks read the one being measured from c->placement.
	 */
	size_t (*placements)(const struct gdrb_ctx *c, enum gdrb_placement *pl);

	/* Collectives: the bus-bandwidth factor for algbw -> busbw (nccl-tests' convention). */
	double (*bus_factor)(const struct gdrb_ctx *c);
	/* The size actually measured for a requested size (rounding); NULL: as asked. */
	size_t (*adjust_size)(const struct gdrb_ctx *c, size_t size);
	/* Whether this rank reads a send buffer; NULL: yes. */
	bool (*uses_send)(const struct gdrb_ctx *c);
	/* Whether an untimed barrier precedes every timed call (a collective's --sync barrier); NULL: no. */
	bool (*barrier_each)(const struct gdrb_ctx *c);
	/* A line for the header describing benchmark-specific settings; NULL: none. */
	void (*describe)(const struct gdrb_ctx *c, char *buf, size_t len);

	/*
	 * Before any output of the run is opened, on every rank (all or none call it): what
	 * the run was given besides its options (the environment), refused with one line
	 * (GDRB_ERR_USAGE) so that nothing is written. NULL: none.
	 */
	int (*preflight)(struct gdrb_ctx *c);
	/* After buffers exist: decide which variants run (direct path support). */
	int (*setup)(struct gdrb_ctx *c);
	/* Before the first iteration of a size on a path, on every rank; a barrier follows. NULL: none. */
	int (*begin)(struct gdrb_ctx *c, size_t size);
	/* One timed iteration of this rank's role at `size`. */
	int (*iteration)(struct gdrb_ctx *c, size_t size);
	/*
	 * After a size on a path is measured, on every rank, untimed: what the library
	 * says it used (c->lib_*). NULL: none. GDRB_ERR only where a rank is lost.
	 */
	int (*end)(struct gdrb_ctx *c, size_t size);
	/* Validation (untimed); NULL: the driver's point-to-point pattern. */
	int (*prepare)(struct gdrb_ctx *c, size_t size, uint64_t iter);
	uint64_t (*check)(struct gdrb_ctx *c, size_t size, uint64_t iter);
	void (*teardown)(struct gdrb_ctx *c);
	/*
	 * With c->nsubjects: make subject k the one measured, its name in c->subject_name
	 * and which paths run on it (c->variants[].supported, and why not); before each
	 * size's placements and paths on it. NULL: no subjects.
	 */
	int (*select_subject)(struct gdrb_ctx *c, unsigned k);
	/* Rank 0, after a size's table line: each path's status and bandwidth (a summary of the benchmark's own). NULL: none. */
	void (*reported)(struct gdrb_ctx *c, size_t size, size_t variant, const char *status, double bw_GBps);
};

/*
 * The window the driver runs at size before the transport's cap (1 for a
 * benchmark without a window): the transport sizes its queues from it.
 */
unsigned gdrb_window_in_force(const struct gdrb_ctx *c, size_t size);

/* Whether an iteration is a window of messages (point-to-point bandwidth). */
static inline bool gdrb_has_window(const struct gdrb_bench *b)
{
	return b->metric == GDRB_METRIC_BW && b->traffic != GDRB_TRAFFIC_LOCAL;
}

/* Whether the buffers hold a window of messages (--buffers slots) or one. */
static inline bool gdrb_windowed(const struct gdrb_bench *b, const struct gdrb_params *p)
{
	return gdrb_has_window(b) && p->buffers == GDRB_BUFFERS_SLOTS;
}

/* Run a benchmark; returns the process exit code. */
int gdrb_main(const struct gdrb_bench *bench, struct gdrb_boot *boot, int argc, char **argv);

/*
 * Buffers of the current variant: what goes on the wire (direct and serial
 * staging; a pipelined variant sends from and receives into ring slots).
 */
static inline char *gdrb_wire_send(const struct gdrb_ctx *c)
{
	return (char *)(c->variant->staged ? c->send_bounce.ptr : c->send.ptr);
}

static inline char *gdrb_wire_recv(const struct gdrb_ctx *c)
{
	return (char *)(c->variant->staged ? c->recv_bounce.ptr : c->recv.ptr);
}

/* Serial staging: device to bounce before sending, bounce to device after receiving (no-ops otherwise). */
int gdrb_stage_out(struct gdrb_ctx *c, size_t off, size_t len);
int gdrb_stage_in(struct gdrb_ctx *c, size_t off, size_t len);

/* A validation mismatch: the first of each size and path is logged, the rest counted. */
void gdrb_mismatch(struct gdrb_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The driver's point-to-point validation fill of this rank's send buffer (a prepare callback). */
int gdrb_p2p_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter);

/* The point-to-point pattern seed of a message (role: 0 initiator, 1 responder). */
uint64_t gdrb_p2p_seed(size_t size, uint64_t iter, unsigned slot, unsigned role);

#endif
