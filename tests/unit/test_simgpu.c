/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulated GPU (tests/support/simgpu) enforces the CUDA semantics the other
 * tests rely on: each check here is a fault it must catch. Run by
 * tests/unit/simgpu.sh with the simulator in front of the real runtime. Every
 * test forks (Check's default), so each sets its configuration before its
 * first CUDA call.
 *
 * Two groups. "cuda": rules of the real runtime that the simulator reproduces;
 * the GPU check (a bundle run on a GPU node) runs them on a real GPU too, where
 * they held on an H200 with CUDA 13.0 (results/gpu-h200). "simulator": its own
 * settings (SIMGPU_*) and the checks where it is stricter than CUDA: on that
 * H200 a copy whose kind contradicts its pointers succeeded, and copies past
 * the end of an allocation and from freed memory ended in SIGSEGV, not in an
 * error. On a real GPU only the first group runs, with is_simulated, which
 * must fail there.
 */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "unit_main.h"

#define MIB (1u << 20)

typedef CUresult (*get_handle_fn)(void *, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);
typedef CUresult (*set_attr_fn)(const void *, CUpointer_attribute, CUdeviceptr);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *dev_alloc(size_t len)
{
	void *p = NULL;

	ck_assert_int_eq(cudaMalloc(&p, len), cudaSuccess);
	return p;
}

static void *pinned_alloc(size_t len, int fill)
{
	void *p = NULL;

	ck_assert_int_eq(cudaMallocHost(&p, len), cudaSuccess);
	memset(p, fill, len);
	return p;
}

static void *entry(const char *symbol)
{
	enum cudaDriverEntryPointQueryResult found;
	void *fn = NULL;

	ck_assert_int_eq(cudaGetDriverEntryPointByVersion(symbol, &fn, CUDA_VERSION, cudaEnableDefault,
							  &found), cudaSuccess);
	ck_assert_int_eq(found, cudaDriverEntryPointSuccess);
	return fn;
}

START_TEST(is_simulated)
{
	struct cudaDeviceProp prop;

	ck_assert_int_eq(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
	ck_assert_msg(strstr(prop.name, "simulated"), "not the simulator: '%s'", prop.name);
}
END_TEST

/* A CPU store into device memory faults (strict mode). */
START_TEST(cpu_store_faults)
{
	volatile char *p = dev_alloc(4096);

	p[0] = 1;
}
END_TEST

START_TEST(cpu_load_faults)
{
	volatile char *p = dev_alloc(4096);

	ck_assert_int_eq(p[10], 0);
}
END_TEST

/* A deliberately missing wait: the bytes of an async copy are not there yet. */
START_TEST(missing_wait_caught)
{
	char *d, *h, *src;

	setenv("SIMGPU_LATENCY_US", "200000", 1);
	d = dev_alloc(MIB);
	h = pinned_alloc(MIB, 0);
	src = pinned_alloc(MIB, 0x5a);
	ck_assert_int_eq(cudaMemcpy(d, src, MIB, cudaMemcpyHostToDevice), cudaSuccess);
	ck_assert_int_eq(cudaMemcpyAsync(h, d, MIB, cudaMemcpyDeviceToHost, 0), cudaSuccess);
	ck_assert_msg(h[0] == 0 && h[MIB - 1] == 0, "an async copy landed before its modelled time");
	ck_assert_int_eq(cudaStreamQuery(0), cudaErrorNotReady);
	ck_assert_int_eq(cudaStreamSynchronize(0), cudaSuccess);
	ck_assert_int_eq(h[0], 0x5a);
	ck_assert_int_eq(h[MIB - 1], 0x5a);
}
END_TEST

/* Events: not ready while the copy runs, then the bytes are there. */
START_TEST(event_orders)
{
	cudaStream_t s;
	cudaEvent_t e;
	char *d, *h, *src;

	setenv("SIMGPU_LATENCY_US", "100000", 1);
	d = dev_alloc(MIB);
	h = pinned_alloc(MIB, 0);
	src = pinned_alloc(MIB, 7);
	ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	ck_assert_int_eq(cudaEventCreate(&e), cudaSuccess);
	ck_assert_int_eq(cudaMemcpyAsync(d, src, MIB, cudaMemcpyDefault, s), cudaSuccess);
	ck_assert_int_eq(cudaMemcpyAsync(h, d, MIB, cudaMemcpyDefault, s), cudaSuccess);
	ck_assert_int_eq(cudaEventRecord(e, s), cudaSuccess);
	ck_assert_int_eq(cudaEventQuery(e), cudaErrorNotReady);
	ck_assert_int_eq(h[MIB / 2], 0);
	ck_assert_int_eq(cudaEventSynchronize(e), cudaSuccess);
	ck_assert_int_eq(cudaEventQuery(e), cudaSuccess);
	ck_assert_int_eq(h[MIB / 2], 7);
	ck_assert_int_eq(cudaEventDestroy(e), cudaSuccess);
	ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
}
END_TEST

/* Device to device returns at once; a synchronous device to host copy takes its time. */
START_TEST(d2d_is_async)
{
	char *a, *b, *h;
	double t0, d2d, d2h;

	setenv("SIMGPU_LATENCY_US", "200000", 1);
	a = dev_alloc(MIB);
	b = dev_alloc(MIB);
	h = pinned_alloc(MIB, 0);
	t0 = now_s();
	ck_assert_int_eq(cudaMemcpy(b, a, MIB, cudaMemcpyDeviceToDevice), cudaSuccess);
	d2d = now_s() - t0;
	t0 = now_s();
	ck_assert_int_eq(cudaMemcpy(h, b, MIB, cudaMemcpyDeviceToHost), cudaSuccess);
	d2h = now_s() - t0;
	ck_assert_msg(d2d < 0.1, "device-to-device waited %.3f s", d2d);
	/* The D2H waits for the D2D before it (stream order) and for itself. */
	ck_assert_msg(d2h >= 0.35, "device-to-host returned after %.3f s", d2h);
}
END_TEST

/* Pageable host to device returns before its tail lands (peermem mode: the CPU can look). */
START_TEST(pageable_h2d_tail_late)
{
	size_t n = 4 * MIB;
	char *d, *src = malloc(n);

	setenv("SIMGPU_LATENCY_US", "200000", 1);
	setenv("SIMGPU_MODE", "peermem", 1);
	ck_assert_ptr_nonnull(src);
	memset(src, 9, n);
	d = dev_alloc(n);
	ck_assert_int_eq(cudaMemcpy(d, src, n, cudaMemcpyHostToDevice), cudaSuccess);
	memset(src, 1, n);      /* the source may be reused at once */
	ck_assert_int_eq(((volatile char *)d)[0], 9);
	ck_assert_msg(((volatile char *)d)[n - 1] == 0, "the tail landed before cudaMemcpy returned");
	ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
	ck_assert_int_eq(((volatile char *)d)[n - 1], 9);
	free(src);
}
END_TEST

/* Stricter than CUDA: on a real GPU this case ended in SIGSEGV, not in these errors. */
START_TEST(out_of_bounds_refused)
{
	char *d = dev_alloc(1000), *h = pinned_alloc(4096, 0);

	ck_assert_int_eq(cudaMemcpy(h, d, 1000, cudaMemcpyDefault), cudaSuccess);
	ck_assert_int_eq(cudaMemcpy(h, d, 1001, cudaMemcpyDefault), cudaErrorInvalidValue);
	ck_assert_int_eq(cudaMemcpy(h, d + 999, 2, cudaMemcpyDefault), cudaErrorInvalidValue);
	ck_assert_int_eq(cudaFree(d), cudaSuccess);
	ck_assert_int_eq(cudaMemcpy(h, d, 8, cudaMemcpyDefault), cudaErrorInvalidValue);
	ck_assert_int_eq(cudaFree(d), cudaErrorInvalidValue);
}
END_TEST

/* Stricter than CUDA: the real runtime took a kind that contradicts the pointers. */
START_TEST(direction_checked)
{
	char *d = dev_alloc(64), *h = pinned_alloc(64, 0);

	ck_assert_int_eq(cudaMemcpy(h, d, 64, cudaMemcpyHostToDevice), cudaErrorInvalidMemcpyDirection);
	ck_assert_int_eq(cudaMemcpy(d, h, 64, cudaMemcpyDeviceToHost), cudaErrorInvalidMemcpyDirection);
	ck_assert_int_eq(cudaMemcpy(d, h, 64, cudaMemcpyHostToDevice), cudaSuccess);
}
END_TEST

START_TEST(devices_and_visibility)
{
	char bus[32];
	int n = -1;

	setenv("SIMGPU_DEVICES", "0000:65:00.0,0000:17:00.0,0000:b1:00.0", 1);
	setenv("CUDA_VISIBLE_DEVICES", "2,1", 1);
	ck_assert_int_eq(cudaGetDeviceCount(&n), cudaSuccess);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0), cudaSuccess);
	ck_assert_str_eq(bus, "0000:B1:00.0");
	ck_assert_int_eq(cudaDeviceGetPCIBusId(bus, sizeof(bus), 1), cudaSuccess);
	ck_assert_str_eq(bus, "0000:17:00.0");
	ck_assert_int_eq(cudaSetDevice(2), cudaErrorInvalidDevice);
}
END_TEST

/* A device and itself are never peers; a device out of range is refused (not yet run on a real GPU). */
START_TEST(peer_self_and_range)
{
	int can = -1, n = 0;

	ck_assert_int_eq(cudaGetDeviceCount(&n), cudaSuccess);
	ck_assert_int_eq(cudaDeviceCanAccessPeer(&can, 0, 0), cudaSuccess);
	ck_assert_int_eq(can, 0);
	ck_assert_int_eq(cudaDeviceCanAccessPeer(&can, 0, n), cudaErrorInvalidDevice);
	ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice);
	ck_assert_int_eq(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
}
END_TEST

/* Each node's links: every pair on NVSwitch, none on the PCIe node, the bridged pairs on nvlink4. */
START_TEST(node_shapes)
{
	static const struct {
		const char *node;
		int n;
		const char *can;        /* row-major, device x peer */
	} shapes[] = {
		{ "nvswitch8", 8, "0111111110111111110111111110111111110111111110111111110111111110" },
		{ "pcie4", 4, "0000000000000000" },
		{ "nvlink4", 4, "0100100000010010" },
	};
	size_t k;
	int i, j;

	for (k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		pid_t pid = fork();
		int status = 0;

		if (pid == 0) {
			int n = 0, can = -1;

			setenv("SIMGPU_NODE", shapes[k].node, 1);
			if (cudaGetDeviceCount(&n) != cudaSuccess || n != shapes[k].n)
				_exit(10);
			for (i = 0; i < n; i++)
				for (j = 0; j < n; j++)
					if (cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess ||
					    can != shapes[k].can[i * n + j] - '0')
						_exit(20 + i * n + j);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: exit %d",
			      shapes[k].node, WEXITSTATUS(status));
	}
}
END_TEST

/* The grant is one way, refused twice, refused where there is no link, and taken back. */
START_TEST(peer_enable_rules)
{
	setenv("SIMGPU_NODE", "nvlink4", 1);
	ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(1, 1), cudaErrorInvalidValue);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(2, 0), cudaErrorPeerAccessUnsupported);
	ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
	/* 0 -> 1 does not open 1 -> 0. */
	ck_assert_int_eq(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(0, 0), cudaSuccess);
	ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceDisablePeerAccess(1), cudaSuccess);
	ck_assert_int_eq(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
}
END_TEST

/* Any GPU's memory of a node faults on a CPU store, peer access or not. */
START_TEST(node_memory_faults)
{
	volatile char *p;

	setenv("SIMGPU_NODE", "nvswitch8", 1);
	ck_assert_int_eq(cudaSetDevice(5), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(2, 0), cudaSuccess);
	p = dev_alloc(4096);
	p[0] = 1;
}
END_TEST

/* SIMGPU_PEER_MAX: past that many peers a device's grant is refused, as CUDA does when it runs out. */
START_TEST(peer_max)
{
	setenv("SIMGPU_NODE", "nvswitch8", 1);
	setenv("SIMGPU_PEER_MAX", "2", 1);
	ck_assert_int_eq(cudaSetDevice(3), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(0, 0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(2, 0), cudaErrorTooManyPeers);
	ck_assert_int_eq(cudaDeviceDisablePeerAccess(1), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(2, 0), cudaSuccess);
	ck_assert_int_eq(cudaSetDevice(4), cudaSuccess);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(2, 0), cudaSuccess);
}
END_TEST

/* A MiB on GPU 0 (*a) and on GPU 1 (*b), a pinned one to read back into (*h) and a pinned one
 * of fill bytes (*src); GPU 0 current after. */
static void peer_buffers(int fill, char **a, char **b, char **h, char **src)
{
	ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
	*b = dev_alloc(MIB);
	ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
	*a = dev_alloc(MIB);
	*h = pinned_alloc(MIB, 0);
	*src = pinned_alloc(MIB, fill);
}

/*
 * A copy between two GPUs lands with or without peer access; without it, it
 * goes through host memory (two hops of the model), with it over the link.
 * Device memory of any GPU still faults on a CPU touch (cpu_store_faults).
 */
START_TEST(peer_copy_routes)
{
	char *a, *b, *h, *src;
	double t0, staged, direct;
	cudaStream_t s;

	setenv("SIMGPU_NODE", "nvswitch8", 1);
	setenv("SIMGPU_LATENCY_US", "100000", 1);
	setenv("SIMGPU_PEER_GBPS", "0", 1);
	peer_buffers(0x33, &a, &b, &h, &src);
	ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	ck_assert_int_eq(cudaMemcpy(a, src, MIB, cudaMemcpyHostToDevice), cudaSuccess);
	t0 = now_s();
	ck_assert_int_eq(cudaMemcpyAsync(b, a, MIB, cudaMemcpyDefault, s), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
	staged = now_s() - t0;
	ck_assert_int_eq(cudaMemcpy(h, b, MIB, cudaMemcpyDeviceToHost), cudaSuccess);
	ck_assert_int_eq(h[MIB - 1], 0x33);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
	t0 = now_s();
	ck_assert_int_eq(cudaMemcpyAsync(b, a, MIB, cudaMemcpyDefault, s), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
	direct = now_s() - t0;
	ck_assert_msg(staged >= 0.19 && direct < 0.19, "through host %.3f s, direct %.3f s", staged, direct);
}
END_TEST

/* An event and the stream it is recorded on belong to one device, as CUDA requires. */
START_TEST(event_stream_same_device)
{
	cudaStream_t s;
	cudaEvent_t e;

	setenv("SIMGPU_NODE", "pcie4", 1);
	ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
	ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
	ck_assert_int_eq(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
	ck_assert_int_eq(cudaEventRecord(e, s), cudaErrorInvalidResourceHandle);
	ck_assert_int_eq(cudaEventDestroy(e), cudaSuccess);
	ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
	ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
}
END_TEST

/* SIMGPU_CORRUPT_PEER=1: a direct peer copy lands one byte wrong (the checkers' fault). */
START_TEST(corrupt_peer_hook)
{
	char *a, *b, *h, *src;
	size_t i, bad = 0;

	setenv("SIMGPU_NODE", "nvswitch8", 1);
	setenv("SIMGPU_CORRUPT_PEER", "1", 1);
	peer_buffers(0x11, &a, &b, &h, &src);
	ck_assert_int_eq(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
	ck_assert_int_eq(cudaMemcpy(a, src, MIB, cudaMemcpyHostToDevice), cudaSuccess);
	ck_assert_int_eq(cudaMemcpy(b, a, MIB, cudaMemcpyDefault), cudaSuccess);
	ck_assert_int_eq(cudaMemcpy(h, b, MIB, cudaMemcpyDeviceToHost), cudaSuccess);
	for (i = 0; i < MIB; i++)
		bad += h[i] != 0x11;
	ck_assert_uint_eq(bad, 1);
}
END_TEST

START_TEST(no_driver)
{
	int n = -1;

	setenv("SIMGPU_DRIVER", "none", 1);
	ck_assert_int_eq(cudaGetDeviceCount(&n), cudaErrorInsufficientDriver);
	ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(dmabuf_export_rules)
{
	get_handle_fn get_handle = (get_handle_fn)entry("cuMemGetHandleForAddressRange");
	long page = sysconf(_SC_PAGESIZE);
	char *d = dev_alloc(3 * (size_t)page);
	int fd = -1;

	ck_assert_int_eq(get_handle(&fd, (CUdeviceptr)(d + 1), (size_t)page,
				    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(get_handle(&fd, (CUdeviceptr)d, (size_t)page + 1,
				    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(get_handle(&fd, (CUdeviceptr)d, 64u << 20,
				    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(get_handle(&fd, (CUdeviceptr)d, 3 * (size_t)page,
				    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0), CUDA_SUCCESS);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(close(fd), 0);
}
END_TEST

START_TEST(dmabuf_off)
{
	get_handle_fn get_handle;
	char *d;
	int fd = -1;

	setenv("SIMGPU_DMABUF", "0", 1);
	get_handle = (get_handle_fn)entry("cuMemGetHandleForAddressRange");
	d = dev_alloc(4096);
	ck_assert_int_eq(get_handle(&fd, (CUdeviceptr)d, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
			 CUDA_ERROR_NOT_SUPPORTED);
}
END_TEST

/* Freeing memory whose dma-buf is still open is reported. */
START_TEST(free_while_exported_reported)
{
	get_handle_fn get_handle = (get_handle_fn)entry("cuMemGetHandleForAddressRange");
	char *d = dev_alloc(4096), said[512] = "";
	FILE *log = tmpfile();
	int fd = -1, saved = dup(2);

	ck_assert_ptr_nonnull(log);
	ck_assert_int_eq(get_handle(&fd, (CUdeviceptr)d, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
			 CUDA_SUCCESS);
	dup2(fileno(log), 2);
	ck_assert_int_eq(cudaFree(d), cudaSuccess);
	dup2(saved, 2);
	rewind(log);
	ck_assert_ptr_nonnull(fgets(said, sizeof(said), log));
	ck_assert_msg(strstr(said, "still open"), "not reported: '%s'", said);
}
END_TEST

/* SYNC_MEMOPS on device and on pinned host memory, as the real runtime takes it. */
START_TEST(sync_memops_taken)
{
	set_attr_fn set_attr = (set_attr_fn)entry("cuPointerSetAttribute");
	unsigned int on = 1;
	char *d = dev_alloc(64), *h = pinned_alloc(64, 0);

	ck_assert_int_eq(set_attr(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)d), CUDA_SUCCESS);
	ck_assert_int_eq(set_attr(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)h), CUDA_SUCCESS);
}
END_TEST

/* ... but not on memory CUDA never gave out (the simulator's own rule). */
START_TEST(sync_memops_unknown_refused)
{
	set_attr_fn set_attr = (set_attr_fn)entry("cuPointerSetAttribute");
	unsigned int on = 1;
	static char plain[64];

	ck_assert_int_eq(set_attr(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)plain),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* The simulator's closed list: an entry point gdrbench does not use is "not found". */
START_TEST(unknown_entry_point)
{
	enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
	void *fn = (void *)1;

	ck_assert_int_eq(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, CUDA_VERSION,
							  cudaEnableDefault, &found), cudaSuccess);
	ck_assert_int_eq(found, cudaDriverEntryPointSymbolNotFound);
	ck_assert_ptr_null(fn);
	ck_assert_int_eq(cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fn, 11000,
							  cudaEnableDefault, &found), cudaSuccess);
	ck_assert_int_eq(found, cudaDriverEntryPointVersionNotSufficent);
}
END_TEST

/*
 * Whether the runtime in front is the simulator, asked in a child so that this
 * process never initialises the runtime before a test has set its environment.
 */
static bool runtime_is_simulated(char *name, size_t len)
{
	int fd[2], status = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fd))
		return true;
	pid = fork();
	if (pid == 0) {
		struct cudaDeviceProp prop;

		close(fd[0]);
		if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess &&
		    write(fd[1], prop.name, strnlen(prop.name, sizeof(prop.name))) < 0)
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	n = pid > 0 ? read(fd[0], name, len - 1) : -1;
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	name[n > 0 ? n : 0] = '\0';
	/* No answer (no runtime, no device): the simulator's group runs, and says why it fails. */
	return n <= 0 || strstr(name, "simulated") != NULL;
}

static Suite *simgpu_suite(void)
{
	Suite *s = suite_create("simgpu");
	TCase *cuda = tcase_create("cuda"), *own = tcase_create("simulator");
	char name[256];

	/* Each test configures the simulator through its environment before its first call. */
	unsetenv("SIMGPU_MODE");
	unsetenv("CUDA_VISIBLE_DEVICES");
	tcase_set_timeout(cuda, 30);
	tcase_set_timeout(own, 30);
	tcase_add_test(cuda, is_simulated);
	tcase_add_test_raise_signal(cuda, cpu_store_faults, SIGSEGV);
	tcase_add_test_raise_signal(cuda, cpu_load_faults, SIGSEGV);
	tcase_add_test(cuda, missing_wait_caught);
	tcase_add_test(cuda, event_orders);
	tcase_add_test(cuda, dmabuf_export_rules);
	tcase_add_test(cuda, sync_memops_taken);
	suite_add_tcase(s, cuda);

	tcase_add_test(own, d2d_is_async);              /* SIMGPU_LATENCY_US */
	tcase_add_test(own, pageable_h2d_tail_late);    /* SIMGPU_MODE=peermem */
	tcase_add_test(own, out_of_bounds_refused);     /* stricter than CUDA */
	tcase_add_test(own, direction_checked);         /* stricter than CUDA */
	tcase_add_test(own, devices_and_visibility);    /* SIMGPU_DEVICES */
	tcase_add_test(own, no_driver);                 /* SIMGPU_DRIVER */
	tcase_add_test(own, dmabuf_off);                /* SIMGPU_DMABUF */
	tcase_add_test(own, free_while_exported_reported);
	tcase_add_test(own, sync_memops_unknown_refused);
	tcase_add_test(own, unknown_entry_point);
	tcase_add_test(own, peer_self_and_range);
	tcase_add_test(own, node_shapes);               /* SIMGPU_NODE */
	tcase_add_test(own, peer_enable_rules);
	tcase_add_test(own, peer_max);                  /* SIMGPU_PEER_MAX */
	tcase_add_test_raise_signal(own, node_memory_faults, SIGSEGV);
	tcase_add_test(own, peer_copy_routes);          /* SIMGPU_PEER_GBPS */
	tcase_add_test(own, event_stream_same_device);
	tcase_add_test(own, corrupt_peer_hook);         /* SIMGPU_CORRUPT_PEER */
	if (runtime_is_simulated(name, sizeof(name)))
		suite_add_tcase(s, own);
	else
		printf("test_simgpu: a real GPU ('%s'): the simulator's own checks (its settings, and "
		       "where it is stricter than CUDA) are not run; is_simulated must fail\n", name);
	return s;
}

/* Two tests die by SIGSEGV by design: one process per test. */
const struct unit_test unit_test = { .suite = simgpu_suite, .fork = true };
