/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory kinds as an ops table: host (page-aligned, pageable), pinned
 * (cudaMallocHost where CUDA works, else mlock'ed host memory) and device
 * (cudaMalloc on the selected GPU). Nothing outside the backends names CUDA.
 */
#ifndef GDRB_MEM_H
#define GDRB_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gdrb_mem_kind {
	GDRB_MEM_HOST,
	GDRB_MEM_PINNED,
	GDRB_MEM_DEVICE,
};

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
};

/* Parse "host|pinned|device"; on failure *hint may name a likely meant kind. */
int gdrb_mem_kind_parse(const char *text, enum gdrb_mem_kind *kind, const char **hint);
const char *gdrb_mem_kind_name(enum gdrb_mem_kind kind);

/*
 * The ops for a kind on this node. Pinned memory resolves to cudaMallocHost
 * when a GPU is usable and to mlock otherwise. Device memory needs
 * gdrb_gpu_open() first; without it (or without a GPU) this returns NULL and
 * *why says why.
 */
const struct gdrb_mem_ops *gdrb_mem_ops_get(enum gdrb_mem_kind kind, const char **why);

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
/* cudaMemcpyAsync on stream, then record event behind it. */
int gdrb_cuda_copy_async(void *dst, const void *src, size_t len, void *stream, void *event);
/* Block until every copy recorded before event has finished. */
int gdrb_cuda_event_wait(void *event);
/* 1: finished, 0: not yet, GDRB_ERR: failed. */
int gdrb_cuda_event_done(void *event);

#endif
