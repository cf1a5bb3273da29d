/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU memory registration with an RDMA device (GPUDirect RDMA), separate
 * from allocation:
 *   dma-buf:     cuMemGetHandleForAddressRange exports the range as a dma-buf
 *                fd, ibv_reg_dmabuf_mr imports it (Linux >= 5.12, NVIDIA open
 *                kernel modules);
 *   peer memory: ibv_reg_mr on the device pointer (needs nvidia_peermem).
 * CUDA driver entry points are reached through cudaGetDriverEntryPointByVersion,
 * never by linking libcuda. Backend reg.c needs verbs and CUDA; reg_none.c is
 * its twin when either is not built. Errno meanings and the fallback order
 * (reg_common.c) are always built; --reg is parsed with the other verbs
 * options (verbs_opts.c), and what registration charges to RLIMIT_MEMLOCK is
 * gdrb_memlock.h's.
 */
#ifndef GDRB_REG_H
#define GDRB_REG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ibv_pd;
struct ibv_mr;

enum gdrb_reg_mode {
	GDRB_REG_AUTO,          /* dma-buf first, then peer memory */
	GDRB_REG_DMABUF,
	GDRB_REG_PEERMEM,
};

/* One registration attempt and its outcome. */
struct gdrb_reg_attempt {
	enum gdrb_reg_mode mode;        /* dmabuf or peermem */
	bool ok;
	int err;                        /* errno of the failing call; 0 if CUDA failed */
	int cu_err;                     /* CUresult of the failing CUDA call; 0 if none */
	char call[48];                  /* the failing call: "ibv_reg_dmabuf_mr" */
	char why[384];                  /* the error, what it means and the fix */
};

struct gdrb_gpu_mr {
	struct ibv_mr *mr;
	enum gdrb_reg_mode used;        /* the mode that succeeded */
	int dmabuf_fd;                  /* -1 unless dma-buf */
	struct gdrb_reg_attempt tried[2];
	int ntried;
};

/* Whether this build can register GPU memory (verbs and CUDA both built). */
bool gdrb_reg_built(void);

/*
 * A CUDA driver entry point through the newest lookup the runtime found at run
 * time offers; *how names it ("none" if it has neither). NULL if not found.
 */
void *gdrb_cuda_driver_entry(const char *symbol, const char **how);

/* "auto", "dmabuf", "peermem": --reg's values, and a registration's name in headers and notes. */
static inline const char *gdrb_reg_mode_name(enum gdrb_reg_mode mode)
{
	static const char *const names[] = { "auto", "dmabuf", "peermem" };

	return (unsigned)mode < sizeof(names) / sizeof(names[0]) ? names[mode] : "?";
}

/* The mode a name gives (--reg, parsed in verbs_opts.c); GDRB_ERR_USAGE for another name. */
int gdrb_reg_mode_parse(const char *text, enum gdrb_reg_mode *mode);

/* What errno from the registration call of mode means for GPU memory, and the fix. */
const char *gdrb_reg_explain(enum gdrb_reg_mode mode, int err);
/* The same for a CUresult from cuMemGetHandleForAddressRange or cuPointerSetAttribute. */
const char *gdrb_cu_explain(int cu_err);

/*
 * Register device memory [ptr, ptr + len) with pd for access (IBV_ACCESS_*),
 * after setting CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on it. AUTO tries dma-buf,
 * then peer memory whatever dma-buf's error (EOPNOTSUPP and EPROTONOSUPPORT
 * both say it is not supported here). 0 with m->mr set; GDRB_ERR_UNSUPP when every mode tried
 * failed, m->tried[] saying why. Nothing is logged.
 */
static inline int gdrb_reg_gpu(struct ibv_pd *pd, void *ptr, size_t len, int access,
			       enum gdrb_reg_mode mode, struct gdrb_gpu_mr *m);
void gdrb_reg_gpu_release(struct gdrb_gpu_mr *m);

/*
 * The steps of gdrb_reg_gpu as an ops table, so that the fallback order can
 * be tested with injected failures. Each returns 0, or GDRB_ERR_UNSUPP with
 * *att filled (call, errno or CUresult, why).
 */
struct gdrb_reg_ops {
	int (*sync_memops)(void *ptr, struct gdrb_reg_attempt *att);
	int (*dmabuf)(struct ibv_pd *pd, void *ptr, size_t len, int access,
		      struct gdrb_gpu_mr *m, struct gdrb_reg_attempt *att);
	int (*peermem)(struct ibv_pd *pd, void *ptr, size_t len, int access,
		       struct gdrb_gpu_mr *m, struct gdrb_reg_attempt *att);
};

/* The backend's steps (reg.c; reg_none.c's fail as not built). */
extern const struct gdrb_reg_ops gdrb_reg_backend_ops;

/* gdrb_reg_gpu with the given steps: SYNC_MEMOPS, then dma-buf, then peer memory. */
int gdrb_reg_gpu_with(const struct gdrb_reg_ops *ops, struct ibv_pd *pd, void *ptr, size_t len,
		      int access, enum gdrb_reg_mode mode, struct gdrb_gpu_mr *m);

/* The backend's steps, built (reg.c) or not (reg_none.c): one definition for both. */
static inline int gdrb_reg_gpu(struct ibv_pd *pd, void *ptr, size_t len, int access,
			       enum gdrb_reg_mode mode, struct gdrb_gpu_mr *m)
{
	return gdrb_reg_gpu_with(&gdrb_reg_backend_ops, pd, ptr, len, access, mode, m);
}

/* "dmabuf: <why>; peermem: <why>", for a header or a CSV note. */
void gdrb_reg_summary(const struct gdrb_gpu_mr *m, char *buf, size_t len);

/*
 * A registration attempt from scratch, for gdrb_doctor: open RDMA device
 * ibdev, allocate len bytes on CUDA device gpu and register them with mode
 * (DMABUF or PEERMEM). 0 when it registered; GDRB_ERR_UNSUPP when
 * registration failed (*att says why); GDRB_ERR when the probe could not get
 * that far (device, protection domain or allocation; *att says why).
 */
int gdrb_reg_probe(const char *ibdev, int gpu, size_t len, enum gdrb_reg_mode mode,
		   struct gdrb_reg_attempt *att);

#endif
