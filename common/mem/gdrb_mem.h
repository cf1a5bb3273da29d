/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory kinds: host (page-aligned, pageable), pinned (cudaMallocHost where
 * CUDA works, else mlock'ed host memory) and device (cudaMalloc on the
 * selected GPU). Each kind is a table (struct gdrb_mem_kind_ops) of what its
 * callers need to know about it and of the backend ops that serve it on this
 * node (struct gdrb_mem_ops); callers ask the table and never compare kinds.
 * Nothing outside the backends names CUDA.
 */
#ifndef GDRB_MEM_H
#define GDRB_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The built-in kinds; gdrb_mem_kind_register() numbers further ones after them. */
enum gdrb_mem_kind {
	GDRB_MEM_HOST,
	GDRB_MEM_PINNED,
	GDRB_MEM_DEVICE,
};

/* How many kinds, built-in and registered, a process may have. */
#define GDRB_MEM_KINDS_MAX 8

struct gdrb_buf;

struct gdrb_mem_ops {
	const char *name;       /* "host", "pinned", "device" (the CSV mem column) */
	const char *how;        /* how it is allocated, for the report header */
	bool host_accessible;   /* the CPU may load and store it directly */
	bool pageable;          /* host memory CUDA does not know: copies from it are staged by CUDA */
	int (*alloc)(struct gdrb_buf *buf, size_t len);
	void (*free)(struct gdrb_buf *buf);
	/* Synchronous copies between this memory and host memory. */
	int (*to_host)(void *dst, const struct gdrb_buf *src, size_t off, size_t len);
	int (*from_host)(struct gdrb_buf *dst, size_t off, const void *src, size_t len);
	/* Make writes a NIC made into this memory visible before it is read back; NULL: nothing to do. */
	int (*flush_remote_writes)(const struct gdrb_buf *buf);
};

/* A memory kind: what callers need to know of it, and the ops that serve it on this node. */
struct gdrb_mem_kind_ops {
	const char *name;       /* the --mem value and the CSV mem column */
	/*
	 * A run opens a GPU (gdrb_gpu_open) for it; without one, a kind that
	 * does not need it falls back (pinned: mlock), and one that needs it is
	 * unsupported on the node (exit 77).
	 */
	bool opens_gpu, needs_gpu;
	/*
	 * The buffers live in GPU memory: a transport reaches them only through
	 * a GPU path of its own (GPU memory registered with the NIC, CUDA-aware
	 * MPI), the CPU never polls them, and they take no host memory.
	 */
	bool on_gpu;
	/*
	 * A transport that cannot read it directly gets staged paths: the driver
	 * copies each message through pinned bounce buffers (--staging).
	 */
	bool staged;
	/*
	 * The backend ops for it on this node, given whether a GPU was opened;
	 * NULL with *why saying why when there is none.
	 */
	const struct gdrb_mem_ops *(*resolve)(bool gpu_opened, const char **why);
};

struct gdrb_buf {
	void *ptr;
	size_t len;
	const struct gdrb_mem_ops *ops;
};

struct gdrb_gpu_info {
	int index;              /* CUDA device ordinal */
	int count;              /* visible CUDA devices */
	char name[128];
	char pci_bus_id[32];    /* "0000:17:00.0" */
	int runtime_version, driver_version;
	bool simulated;         /* the test suite's simulated GPU (its name says so) */
	int mps;                /* contexts shared through MPS: 1 yes, 0 no, -1 unknown (CUDA before 13) */
};

/* Parse a kind's name ("host", "pinned", ...); on failure *hint may name a likely meant kind. */
int gdrb_mem_kind_parse(const char *text, enum gdrb_mem_kind *kind, const char **hint);
const char *gdrb_mem_kind_name(enum gdrb_mem_kind kind);
/* The kind's table: what it is (on the GPU, needs a GPU, staged). */
const struct gdrb_mem_kind_ops *gdrb_mem_kind(enum gdrb_mem_kind kind);
/* How many kinds --mem accepts, built-in and registered: they are numbered from 0. */
unsigned gdrb_mem_kind_count(void);
/* "host, pinned, device": every kind --mem accepts, in order. */
char *gdrb_mem_kind_list(char *buf, size_t len);
/*
 * Add a kind (its table must outlive the process's use of it); returns its
 * number, or GDRB_ERR when the name is taken or GDRB_MEM_KINDS_MAX reached.
 */
int gdrb_mem_kind_register(const struct gdrb_mem_kind_ops *kind);

/*
 * The ops for a kind on this node. Pinned memory resolves to cudaMallocHost
 * when a GPU is usable and to mlock otherwise. Device memory needs
 * gdrb_gpu_open() first; without it (or without a GPU) this returns NULL and
 * *why says why.
 */
const struct gdrb_mem_ops *gdrb_mem_ops_get(enum gdrb_mem_kind kind, const char **why);
/* The ops of the bounce buffers and staging slots of staged paths (pinned memory). */
const struct gdrb_mem_ops *gdrb_mem_bounce_ops(void);

/* Select the GPU: `want` >= 0 forces it, otherwise local_rank modulo count. */
int gdrb_gpu_open(int want, int local_rank, struct gdrb_gpu_info *info, char *why, size_t len);
/* Whether a GPU was opened by gdrb_gpu_open in this process. */
bool gdrb_gpu_ready(void);

int gdrb_buf_alloc(struct gdrb_buf *buf, const struct gdrb_mem_ops *ops, size_t len);
void gdrb_buf_free(struct gdrb_buf *buf);

/*
 * Copy between two buffers of any kinds (cudaMemcpyDefault or memcpy). On
 * return the destination holds the bytes, also where CUDA's cudaMemcpy returns
 * earlier (device to device; pageable host to device).
 */
int gdrb_buf_copy(struct gdrb_buf *dst, size_t dst_off, const struct gdrb_buf *src,
		  size_t src_off, size_t len);

/* Pattern fill and verify for any kind; device memory goes through a host chunk. */
int gdrb_buf_fill_pattern(struct gdrb_buf *buf, size_t off, size_t len, uint64_t seed);
/* Returns the number of wrong bytes, or (uint64_t)-1 if the copy back failed. */
uint64_t gdrb_buf_check_pattern(const struct gdrb_buf *buf, size_t off, size_t len,
				uint64_t seed, size_t *first_bad);
/* The same, for a slice that starts `base` bytes into the pattern. */
int gdrb_buf_fill_pattern_at(struct gdrb_buf *buf, size_t off, size_t len, uint64_t seed,
			     size_t base);
uint64_t gdrb_buf_check_pattern_at(const struct gdrb_buf *buf, size_t off, size_t len,
				   uint64_t seed, size_t base, size_t *first_bad);
/* The process's host chunk used to reach device memory (NULL if it cannot be had). */
void *gdrb_host_chunk(size_t *len);

/* Flip one byte (fault injection for tests of the checkers). */
int gdrb_buf_corrupt(struct gdrb_buf *buf, size_t off);

/* --- CUDA backend (mem_cuda.c, or mem_cuda_none.c when built without CUDA) --- */
extern const struct gdrb_mem_ops gdrb_mem_cuda_device_ops;
extern const struct gdrb_mem_ops gdrb_mem_cuda_pinned_ops;
int gdrb_cuda_open(int want, int local_rank, struct gdrb_gpu_info *info, char *why, size_t len);
/* cudaMemcpy; `settle`: wait until the bytes have landed (the cases where cudaMemcpy returns early). */
int gdrb_cuda_copy(void *dst, const void *src, size_t len, bool settle);
bool gdrb_cuda_built(void);

/*
 * Asynchronous copies for pipelined staging: a non-blocking stream of this
 * rank's own, events that say when a copy issued on it has finished.
 * Handles are opaque (cudaStream_t, cudaEvent_t).
 */
int gdrb_cuda_stream_create(void **stream);
void gdrb_cuda_stream_destroy(void *stream);
int gdrb_cuda_event_create(void **event);
void gdrb_cuda_event_destroy(void *event);
/* cudaMemcpyAsync on stream, then record event behind it (NULL: none). */
int gdrb_cuda_copy_async(void *dst, const void *src, size_t len, void *stream, void *event);
/* Block until every copy recorded before event has finished. */
int gdrb_cuda_event_wait(void *event);
/* 1: finished, 0: not yet, GDRB_ERR: failed. */
int gdrb_cuda_event_done(void *event);

/*
 * Copies timed on the device (gdrb_copy_bw): events that keep a time, and a
 * gate that holds a stream until the host opens it, so that the copies behind
 * it are all enqueued before the first starts and the enqueueing stays out of
 * the time between two events. The gate is a host function on the stream
 * (cudaLaunchHostFunc) that waits for `open`; past timeout_s it lets the
 * stream go and sets `expired` (the time it held is then no sample).
 */
struct gdrb_cuda_gate {
	int open;               /* set by gdrb_cuda_gate_open, read by the stream's host function */
	int expired;            /* the host function gave up waiting */
	double timeout_s;
};
/* An event that keeps the time the stream reached it (cudaEventCreate). */
int gdrb_cuda_timed_event_create(void **event);
int gdrb_cuda_event_record(void *event, void *stream);
/* The time between two timed events, both reached, in us. */
int gdrb_cuda_event_elapsed_us(void *start, void *end, double *us);
/* The work enqueued on stream after this waits for event (cudaStreamWaitEvent). */
int gdrb_cuda_stream_wait_event(void *stream, void *event);
int gdrb_cuda_stream_sync(void *stream);
/* Hold stream at this point until gdrb_cuda_gate_open(gate); gate must outlive the wait. */
int gdrb_cuda_stream_hold(void *stream, struct gdrb_cuda_gate *gate);
void gdrb_cuda_gate_open(struct gdrb_cuda_gate *gate);

/*
 * GPU to GPU inside the node (gdrb_copy_bw --p2p). Allocations, streams and
 * events belong to the device current when they are made; set it first.
 */
/* The GPUs CUDA sees (cudaGetDeviceCount), not logged: GDRB_ERR_UNSUPP where it sees none or is not built. */
int gdrb_cuda_count(int *count);
int gdrb_cuda_set_device(int dev);
/* cudaDeviceCanAccessPeer: *can 1 where dev may map peer's memory directly, else 0. */
int gdrb_cuda_peer_can(int dev, int peer, int *can);
/*
 * dev's access to peer's memory (cudaDeviceEnablePeerAccess; one way); already
 * enabled is success. Refused by CUDA (too many peers, a pair it cannot map):
 * GDRB_ERR_UNSUPP, not logged, *why saying CUDA's answer.
 */
int gdrb_cuda_peer_enable(int dev, int peer, char *why, size_t len);
void gdrb_cuda_peer_disable(int dev, int peer);

#endif
