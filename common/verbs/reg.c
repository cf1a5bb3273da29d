/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU memory registration: dma-buf and peer memory, with verbs and the CUDA runtime. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <infiniband/verbs.h>

#include "gdrb_log.h"
#include "gdrb_reg.h"

typedef CUresult (*cu_get_handle_fn)(void *handle, CUdeviceptr dptr, size_t size,
				     CUmemRangeHandleType type, unsigned long long flags);
typedef CUresult (*cu_get_range_fn)(CUdeviceptr *base, size_t *size, CUdeviceptr dptr);
typedef CUresult (*cu_set_attr_fn)(const void *value, CUpointer_attribute attr, CUdeviceptr ptr);
typedef CUresult (*cu_err_name_fn)(CUresult err, const char **name);

bool gdrb_reg_built(void)
{
	return true;
}

#if CUDART_VERSION >= 12000
typedef cudaError_t (*entry_by_version_fn)(const char *symbol, void **fn, unsigned int version,
					   unsigned long long flags,
					   enum cudaDriverEntryPointQueryResult *status);
typedef cudaError_t (*entry_fn)(const char *symbol, void **fn, unsigned long long flags,
				enum cudaDriverEntryPointQueryResult *status);
#else
typedef cudaError_t (*entry_fn)(const char *symbol, void **fn, unsigned long long flags);
#endif

/*
 * A CUDA driver entry point, without linking libcuda (binaries start without a
 * driver). The runtime found at run time may be older than the headers (the
 * same soname, an older minor release first on LD_LIBRARY_PATH): take the
 * newest lookup it has, found with dlsym, so that a missing one is a fallback,
 * not a symbol lookup error at the first registration.
 */
void *gdrb_cuda_driver_entry(const char *symbol, const char **how)
{
	void *fn = NULL;
	cudaError_t err;
#if CUDART_VERSION >= 12000
	enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
	entry_by_version_fn by_version;
#endif
	entry_fn legacy;

	*how = "none";
#if CUDART_VERSION >= 12000
	*(void **)&by_version = dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPointByVersion");
	if (by_version) {
		*how = "cudaGetDriverEntryPointByVersion";
		err = by_version(symbol, &fn, CUDA_VERSION, cudaEnableDefault, &found);
		return err == cudaSuccess && found == cudaDriverEntryPointSuccess ? fn : NULL;
	}
#endif
	*(void **)&legacy = dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPoint");
	if (!legacy)
		return NULL;
	*how = "cudaGetDriverEntryPoint";
#if CUDART_VERSION >= 12000
	err = legacy(symbol, &fn, cudaEnableDefault, &found);
	return err == cudaSuccess && found == cudaDriverEntryPointSuccess ? fn : NULL;
#else
	err = legacy(symbol, &fn, cudaEnableDefault);
	return err == cudaSuccess ? fn : NULL;
#endif
}

static void *driver_entry(const char *symbol)
{
	const char *how;

	return gdrb_cuda_driver_entry(symbol, &how);
}

static const char *cu_name(CUresult rc)
{
	cu_err_name_fn err_name = (cu_err_name_fn)driver_entry("cuGetErrorName");
	const char *name = NULL;

	if (!err_name || err_name(rc, &name) != CUDA_SUCCESS || !name)
		return "CUDA_ERROR_UNKNOWN";
	return name;
}

static void fail_errno(struct gdrb_reg_attempt *att, const char *call, int err)
{
	att->ok = false;
	att->err = err;
	snprintf(att->call, sizeof(att->call), "%s", call);
	snprintf(att->why, sizeof(att->why), "%s: %s (errno %d): %s", call, strerror(err), err,
		 gdrb_reg_explain(att->mode, err));
}

static void fail_cu(struct gdrb_reg_attempt *att, const char *call, CUresult rc)
{
	att->ok = false;
	att->cu_err = (int)rc;
	snprintf(att->call, sizeof(att->call), "%s", call);
	snprintf(att->why, sizeof(att->why), "%s: %s (%d): %s", call, cu_name(rc), (int)rc,
		 gdrb_cu_explain((int)rc));
}

static void fail_text(struct gdrb_reg_attempt *att, const char *call, const char *what)
{
	att->ok = false;
	att->err = EOPNOTSUPP;
	snprintf(att->call, sizeof(att->call), "%s", call);
	snprintf(att->why, sizeof(att->why), "%s: %s", call, what);
}

/* The whole host-page-aligned range around ptr, as the dma-buf exporter wants it. */
static void export_range(void *ptr, size_t len, CUdeviceptr *start, size_t *size)
{
	cu_get_range_fn get_range = (cu_get_range_fn)driver_entry("cuMemGetAddressRange");
	CUdeviceptr base = (CUdeviceptr)(uintptr_t)ptr, end;
	size_t alloc = len;
	long page = sysconf(_SC_PAGESIZE);
	CUdeviceptr mask = (CUdeviceptr)(page > 0 ? page : 4096) - 1;

	if (get_range && get_range(&base, &alloc, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS) {
		base = (CUdeviceptr)(uintptr_t)ptr;
		alloc = len;
	}
	end = (base + alloc + mask) & ~mask;
	*start = base & ~mask;
	*size = (size_t)(end - *start);
}

static int reg_dmabuf(struct ibv_pd *pd, void *ptr, size_t len, int access,
		      struct gdrb_gpu_mr *m, struct gdrb_reg_attempt *att)
{
#if HAVE_DECL_IBV_REG_DMABUF_MR && HAVE_DECL_CUMEMGETHANDLEFORADDRESSRANGE
	cu_get_handle_fn get_handle;
	CUdeviceptr start;
	struct ibv_mr *mr;
	size_t size;
	CUresult rc;
	int fd = -1;

	get_handle = (cu_get_handle_fn)driver_entry("cuMemGetHandleForAddressRange");
	if (!get_handle) {
		fail_text(att, "cuMemGetHandleForAddressRange",
			  "not in this NVIDIA driver (needs a CUDA 11.7 driver or later)");
		return GDRB_ERR_UNSUPP;
	}
	export_range(ptr, len, &start, &size);
	rc = get_handle(&fd, start, size, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (rc != CUDA_SUCCESS) {
		fail_cu(att, "cuMemGetHandleForAddressRange", rc);
		return GDRB_ERR_UNSUPP;
	}
	mr = ibv_reg_dmabuf_mr(pd, (uint64_t)((uintptr_t)ptr - start), len,
			       (uint64_t)(uintptr_t)ptr, fd, access);
	if (!mr) {
		fail_errno(att, "ibv_reg_dmabuf_mr", errno);
		close(fd);
		return GDRB_ERR_UNSUPP;
	}
	m->mr = mr;
	m->dmabuf_fd = fd;
	return 0;
#else
	(void)pd;
	(void)ptr;
	(void)len;
	(void)access;
	(void)m;
	fail_text(att, "ibv_reg_dmabuf_mr",
		  "not built: libibverbs (rdma-core >= 34) or cuda.h (CUDA >= 11.7) lacks dma-buf "
		  "support at build time");
	return GDRB_ERR_UNSUPP;
#endif
}

static int reg_peermem(struct ibv_pd *pd, void *ptr, size_t len, int access,
		       struct gdrb_gpu_mr *m, struct gdrb_reg_attempt *att)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, ptr, len, access);

	if (!mr) {
		fail_errno(att, "ibv_reg_mr", errno);
		return GDRB_ERR_UNSUPP;
	}
	m->mr = mr;
	return 0;
}

static int sync_memops(void *ptr, struct gdrb_reg_attempt *att)
{
	cu_set_attr_fn set_attr = (cu_set_attr_fn)driver_entry("cuPointerSetAttribute");
	unsigned int on = 1;
	CUresult rc;

	rc = set_attr ? set_attr(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)(uintptr_t)ptr) :
			CUDA_ERROR_NOT_INITIALIZED;
	if (rc != CUDA_SUCCESS) {
		fail_cu(att, "cuPointerSetAttribute(SYNC_MEMOPS)", rc);
		return GDRB_ERR_UNSUPP;
	}
	return 0;
}

const struct gdrb_reg_ops gdrb_reg_backend_ops = {
	.sync_memops = sync_memops,
	.dmabuf = reg_dmabuf,
	.peermem = reg_peermem,
};

void gdrb_reg_gpu_release(struct gdrb_gpu_mr *m)
{
	if (m->mr)
		ibv_dereg_mr(m->mr);
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->mr = NULL;
	m->dmabuf_fd = -1;
}

static void probe_fail(struct gdrb_reg_attempt *att, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void probe_fail(struct gdrb_reg_attempt *att, const char *fmt, ...)
{
	va_list ap;

	att->ok = false;
	va_start(ap, fmt);
	vsnprintf(att->why, sizeof(att->why), fmt, ap);
	va_end(ap);
}

int gdrb_reg_probe(const char *ibdev, int gpu, size_t len, enum gdrb_reg_mode mode,
		   struct gdrb_reg_attempt *att)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct gdrb_gpu_mr m;
	struct ibv_pd *pd;
	cudaError_t cerr;
	void *ptr = NULL;
	int i, num = 0, rc = GDRB_ERR;

	memset(att, 0, sizeof(*att));
	att->mode = mode;
	list = ibv_get_device_list(&num);
	if (!list) {
		probe_fail(att, "ibv_get_device_list: %s", strerror(errno));
		return GDRB_ERR;
	}
	for (i = 0; i < num; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ibdev))
			break;
	if (i == num) {
		probe_fail(att, "libibverbs does not list %s", ibdev);
		goto err_list;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx) {
		probe_fail(att, "ibv_open_device(%s): %s", ibdev, strerror(errno));
		goto err_list;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		probe_fail(att, "ibv_alloc_pd(%s): %s", ibdev, strerror(errno));
		goto err_ctx;
	}
	cerr = cudaSetDevice(gpu);
	if (cerr == cudaSuccess)
		cerr = cudaMalloc(&ptr, len);
	if (cerr != cudaSuccess) {
		probe_fail(att, "cudaMalloc: %s (%s)", cudaGetErrorString(cerr),
			   cudaGetErrorName(cerr));
		goto err_pd;
	}
	rc = gdrb_reg_gpu(pd, ptr, len,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			  mode, &m);
	*att = m.tried[m.ntried > 0 ? m.ntried - 1 : 0];
	if (rc == 0)
		gdrb_reg_gpu_release(&m);
	cudaFree(ptr);
err_pd:
	ibv_dealloc_pd(pd);
err_ctx:
	ibv_close_device(ctx);
err_list:
	ibv_free_device_list(list);
	return rc;
}
