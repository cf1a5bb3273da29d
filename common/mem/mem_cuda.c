/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA memory backend, reached through libcudart only (starts without a driver). */
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gdrb_log.h"
#include "gdrb_mem.h"

#define CUDA_CHECK(call, what)                                                     \
	do {                                                                       \
		cudaError_t err_ = (call);                                         \
		if (err_ != cudaSuccess) {                                         \
			gdrb_err("%s: %s (%s)", what, cudaGetErrorString(err_),   \
				 cudaGetErrorName(err_));                          \
			return GDRB_ERR;                                           \
		}                                                                  \
	} while (0)

bool gdrb_cuda_built(void)
{
	return true;
}

static int cuda_device_alloc(struct gdrb_buf *buf, size_t len)
{
	CUDA_CHECK(cudaMalloc(&buf->ptr, len), "cudaMalloc");
	return 0;
}

static void cuda_device_free(struct gdrb_buf *buf)
{
	cudaFree(buf->ptr);
}

static int cuda_pinned_alloc(struct gdrb_buf *buf, size_t len)
{
	CUDA_CHECK(cudaMallocHost(&buf->ptr, len), "cudaMallocHost");
	return 0;
}

static void cuda_pinned_free(struct gdrb_buf *buf)
{
	cudaFreeHost(buf->ptr);
}

int gdrb_cuda_copy(void *dst, const void *src, size_t len, bool settle)
{
	CUDA_CHECK(cudaMemcpy(dst, src, len, cudaMemcpyDefault), "cudaMemcpy");
	/* "API synchronization behavior": device to device and the tail of a pageable copy land later. */
	if (settle)
		CUDA_CHECK(cudaStreamSynchronize(0), "cudaStreamSynchronize");
	return 0;
}

static int cuda_to_host(void *dst, const struct gdrb_buf *src, size_t off, size_t len)
{
	return gdrb_cuda_copy(dst, (const char *)src->ptr + off, len, false);
}

static int cuda_from_host(struct gdrb_buf *dst, size_t off, const void *src, size_t len)
{
	/* The source is pageable: wait for its tail, since a NIC may read the buffer next. */
	return gdrb_cuda_copy((char *)dst->ptr + off, src, len, true);
}

/*
 * GPUDirect RDMA writes may not be visible to the GPU's own copy engines in
 * order (older GPUs, Grace Hopper): flush them to the owner before validation
 * reads the buffer back. Where nothing needs flushing this costs nothing.
 */
static int cuda_flush_remote_writes(const struct gdrb_buf *buf)
{
	cudaError_t err;

	(void)buf;
#if CUDART_VERSION >= 11030
	err = cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
						 cudaFlushGPUDirectRDMAWritesToOwner);
	if (err == cudaErrorNotSupported)
		return 0;       /* this GPU orders them without being asked */
	if (err != cudaSuccess) {
		gdrb_err("cudaDeviceFlushGPUDirectRDMAWrites: %s (%s)", cudaGetErrorString(err),
			 cudaGetErrorName(err));
		return GDRB_ERR;
	}
#else
	(void)err;
#endif
	return 0;
}

static int pinned_to_host(void *dst, const struct gdrb_buf *src, size_t off, size_t len)
{
	memcpy(dst, (const char *)src->ptr + off, len);
	return 0;
}

static int pinned_from_host(struct gdrb_buf *dst, size_t off, const void *src, size_t len)
{
	memcpy((char *)dst->ptr + off, src, len);
	return 0;
}

const struct gdrb_mem_ops gdrb_mem_cuda_device_ops = {
	.name = "device",
	.how = "cudaMalloc",
	.host_accessible = false,
	.alloc = cuda_device_alloc,
	.free = cuda_device_free,
	.to_host = cuda_to_host,
	.from_host = cuda_from_host,
	.flush_remote_writes = cuda_flush_remote_writes,
};

const struct gdrb_mem_ops gdrb_mem_cuda_pinned_ops = {
	.name = "pinned",
	.how = "cudaMallocHost",
	.host_accessible = true,
	.alloc = cuda_pinned_alloc,
	.free = cuda_pinned_free,
	.to_host = pinned_to_host,
	.from_host = pinned_from_host,
};

int gdrb_cuda_open(int want, int local_rank, struct gdrb_gpu_info *info, char *why, size_t len)
{
	struct cudaDeviceProp prop;
	cudaError_t err;
	int count = 0;

	memset(info, 0, sizeof(*info));
	info->index = -1;
	info->mps = -1;
	cudaRuntimeGetVersion(&info->runtime_version);
	cudaDriverGetVersion(&info->driver_version);
	err = cudaGetDeviceCount(&count);
	if (err != cudaSuccess) {
		snprintf(why, len, "no usable GPU: cudaGetDeviceCount: %s (%s)",
			 cudaGetErrorString(err), cudaGetErrorName(err));
		return GDRB_ERR_UNSUPP;
	}
	if (count == 0) {
		snprintf(why, len, "no GPU visible to CUDA (check CUDA_VISIBLE_DEVICES)");
		return GDRB_ERR_UNSUPP;
	}
	if (want >= count) {
		snprintf(why, len, "--gpu %d: this node has %d GPU(s), 0..%d", want, count,
			 count - 1);
		return GDRB_ERR_USAGE;
	}
	info->count = count;
	info->index = want >= 0 ? want : local_rank % count;
	err = cudaSetDevice(info->index);
	if (err == cudaSuccess)
		err = cudaGetDeviceProperties(&prop, info->index);
	if (err == cudaSuccess)
		err = cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof(info->pci_bus_id),
					    info->index);
	/* Create the context now so that its cost never lands in a timed region. */
	if (err == cudaSuccess)
		err = cudaFree(NULL);
	if (err != cudaSuccess) {
		snprintf(why, len, "GPU %d unusable: %s (%s)", info->index,
			 cudaGetErrorString(err), cudaGetErrorName(err));
		return GDRB_ERR_UNSUPP;
	}
	snprintf(info->name, sizeof(info->name), "%.127s", prop.name);
	info->simulated = strstr(prop.name, "simulated") != NULL;
#if CUDART_VERSION >= 13000
	info->mps = prop.mpsEnabled != 0;
#else
	info->mps = -1;
#endif
	return 0;
}

int gdrb_cuda_stream_create(void **stream)
{
	cudaStream_t s;

	/* Non-blocking: never ordered behind the legacy stream's work. */
	CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
	*stream = s;
	return 0;
}

void gdrb_cuda_stream_destroy(void *stream)
{
	if (stream)
		cudaStreamDestroy((cudaStream_t)stream);
}

int gdrb_cuda_event_create(void **event)
{
	cudaEvent_t e;

	CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
	*event = e;
	return 0;
}

void gdrb_cuda_event_destroy(void *event)
{
	if (event)
		cudaEventDestroy((cudaEvent_t)event);
}

int gdrb_cuda_copy_async(void *dst, const void *src, size_t len, void *stream, void *event)
{
	CUDA_CHECK(cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, (cudaStream_t)stream),
		   "cudaMemcpyAsync");
	if (event)
		CUDA_CHECK(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), "cudaEventRecord");
	return 0;
}

int gdrb_cuda_event_wait(void *event)
{
	CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)event), "cudaEventSynchronize");
	return 0;
}

int gdrb_cuda_event_done(void *event)
{
	cudaError_t err = cudaEventQuery((cudaEvent_t)event);

	if (err == cudaErrorNotReady)
		return 0;
	CUDA_CHECK(err, "cudaEventQuery");
	return 1;
}

int gdrb_cuda_timed_event_create(void **event)
{
	cudaEvent_t e;

	CUDA_CHECK(cudaEventCreate(&e), "cudaEventCreate");
	*event = e;
	return 0;
}

int gdrb_cuda_event_record(void *event, void *stream)
{
	CUDA_CHECK(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), "cudaEventRecord");
	return 0;
}

int gdrb_cuda_event_elapsed_us(void *start, void *end, double *us)
{
	float ms = 0;

	CUDA_CHECK(cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)end),
		   "cudaEventElapsedTime");
	*us = (double)ms * 1e3;
	return 0;
}

int gdrb_cuda_stream_wait_event(void *stream, void *event)
{
	CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0), "cudaStreamWaitEvent");
	return 0;
}

int gdrb_cuda_stream_sync(void *stream)
{
	CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
	return 0;
}

static double gate_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* On the runtime's thread for host functions: no CUDA call here, as CUDA requires. */
static void CUDART_CB gate_wait(void *arg)
{
	struct gdrb_cuda_gate *g = arg;
	double until = gate_now() + g->timeout_s;

	while (!__atomic_load_n(&g->open, __ATOMIC_ACQUIRE)) {
		if (gate_now() > until) {
			__atomic_store_n(&g->expired, 1, __ATOMIC_RELEASE);
			return;
		}
		/* The enqueueing thread may need this core (a small node, the simulated GPU). */
		sched_yield();
	}
}

int gdrb_cuda_stream_hold(void *stream, struct gdrb_cuda_gate *gate)
{
	CUDA_CHECK(cudaLaunchHostFunc((cudaStream_t)stream, gate_wait, gate), "cudaLaunchHostFunc");
	return 0;
}

void gdrb_cuda_gate_open(struct gdrb_cuda_gate *gate)
{
	__atomic_store_n(&gate->open, 1, __ATOMIC_RELEASE);
}

int gdrb_cuda_count(int *count)
{
	*count = 0;
	return cudaGetDeviceCount(count) == cudaSuccess ? 0 : GDRB_ERR_UNSUPP;
}

int gdrb_cuda_set_device(int dev)
{
	CUDA_CHECK(cudaSetDevice(dev), "cudaSetDevice");
	return 0;
}

int gdrb_cuda_peer_can(int dev, int peer, int *can)
{
	CUDA_CHECK(cudaDeviceCanAccessPeer(can, dev, peer), "cudaDeviceCanAccessPeer");
	return 0;
}

int gdrb_cuda_peer_enable(int dev, int peer, char *why, size_t len)
{
	cudaError_t err;

	if (gdrb_cuda_set_device(dev))
		return GDRB_ERR;
	err = cudaDeviceEnablePeerAccess(peer, 0);
	/* Already enabled (by an earlier run in this process): what was asked holds. */
	if (err == cudaErrorPeerAccessAlreadyEnabled)
		return 0;
	if (err != cudaSuccess) {
		snprintf(why, len, "cudaDeviceEnablePeerAccess(%d) on GPU %d: %s (%s)", peer, dev,
			 cudaGetErrorString(err), cudaGetErrorName(err));
		return GDRB_ERR_UNSUPP;
	}
	return 0;
}

void gdrb_cuda_peer_disable(int dev, int peer)
{
	/* Teardown: a grant that is already gone needs nothing more. */
	if (cudaSetDevice(dev) == cudaSuccess)
		(void)cudaDeviceDisablePeerAccess(peer);
}
