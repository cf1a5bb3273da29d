/* SPDX-License-Identifier: BSD-3-Clause */
/* What registration failures mean, the fallback order of GPU registration; built with or without verbs and CUDA. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_reg.h"

/* CUresult values (cuda.h) that the explanations name; no CUDA header needed. */
enum {
	CU_INVALID_VALUE = 1,
	CU_OUT_OF_MEMORY = 2,
	CU_NOT_INITIALIZED = 3,
	CU_NO_DEVICE = 100,
	CU_INVALID_CONTEXT = 201,
	CU_NOT_SUPPORTED = 801,
};

static const char *explain_dmabuf(int err)
{
	switch (err) {
	/* No dma-buf here; NCCL reads EOPNOTSUPP and EPROTONOSUPPORT alike. */
	case EOPNOTSUPP:
	case EPROTONOSUPPORT:
	case ENOSYS:
		return "the kernel or the RDMA driver cannot import a dma-buf: it needs Linux >= 5.12, "
		       "an RDMA driver with dma-buf support (mlx5, for example) and rdma-core >= 34";
	case EINVAL:
		return "the RDMA driver rejected the dma-buf (offset, length or access flags), or "
		       "cannot map this exporter's memory";
	case EFAULT:
		return "the kernel could not map the dma-buf pages: the NVIDIA driver's export failed";
	case EBADF:
		return "the dma-buf file descriptor is not valid";
	case ENOMEM:
		return "out of memory, or RLIMIT_MEMLOCK reached: raise 'ulimit -l' (unlimited)";
	case EPERM:
	case EACCES:
		return "permission denied for these access flags";
	default:
		return "unexpected error from ibv_reg_dmabuf_mr";
	}
}

static const char *explain_peermem(int err)
{
	switch (err) {
	case EFAULT:
		return "the kernel could not pin the address: no peer-memory client claims GPU "
		       "memory; load nvidia_peermem (modprobe nvidia_peermem)";
	case EINVAL:
		return "the address is not host memory and no peer-memory client took it: load "
		       "nvidia_peermem, or the access flags are not supported";
	case EOPNOTSUPP:
	case ENOSYS:
		return "the RDMA stack has no peer-memory support (needs MLNX_OFED/DOCA-OFED or a "
		       "kernel with the peer-memory API, and nvidia_peermem)";
	case ENOMEM:
		return "out of memory, BAR1 exhausted, or RLIMIT_MEMLOCK reached: raise 'ulimit -l' "
		       "(unlimited)";
	case EPERM:
	case EACCES:
		return "permission denied for these access flags";
	default:
		return "unexpected error from ibv_reg_mr";
	}
}

const char *gdrb_reg_explain(enum gdrb_reg_mode mode, int err)
{
	return mode == GDRB_REG_PEERMEM ? explain_peermem(err) : explain_dmabuf(err);
}

const char *gdrb_cu_explain(int cu_err)
{
	switch (cu_err) {
	case CU_NOT_SUPPORTED:
		return "the NVIDIA driver cannot export dma-buf: it needs the open kernel modules "
		       "(r515 or later) and Linux >= 5.12";
	case CU_INVALID_VALUE:
		return "the range is not device memory this driver can export";
	case CU_OUT_OF_MEMORY:
		return "out of device memory";
	case CU_NOT_INITIALIZED:
	case CU_INVALID_CONTEXT:
		return "no CUDA context: the runtime did not initialise the device";
	case CU_NO_DEVICE:
		return "no CUDA device";
	default:
		return "unexpected CUDA driver error";
	}
}

int gdrb_reg_gpu_with(const struct gdrb_reg_ops *ops, struct ibv_pd *pd, void *ptr, size_t len,
		      int access, enum gdrb_reg_mode mode, struct gdrb_gpu_mr *m)
{
	static const enum gdrb_reg_mode order[] = { GDRB_REG_DMABUF, GDRB_REG_PEERMEM };
	size_t i;

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	m->tried[0].mode = mode == GDRB_REG_PEERMEM ? GDRB_REG_PEERMEM : GDRB_REG_DMABUF;
	/* Memory operations on a buffer an RDMA device reads must complete in order. */
	if (ops->sync_memops(ptr, &m->tried[0])) {
		m->ntried = 1;
		return GDRB_ERR_UNSUPP;
	}
	if (!pd) {
		m->tried[0].err = EINVAL;
		snprintf(m->tried[0].call, sizeof(m->tried[0].call), "gdrb_reg_gpu");
		snprintf(m->tried[0].why, sizeof(m->tried[0].why), "gdrb_reg_gpu: no protection domain");
		m->ntried = 1;
		return GDRB_ERR_UNSUPP;
	}
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct gdrb_reg_attempt *att = &m->tried[m->ntried];
		int ret;

		if (mode != GDRB_REG_AUTO && mode != order[i])
			continue;
		memset(att, 0, sizeof(*att));
		att->mode = order[i];
		m->ntried++;
		ret = order[i] == GDRB_REG_DMABUF ? ops->dmabuf(pd, ptr, len, access, m, att) :
						    ops->peermem(pd, ptr, len, access, m, att);
		if (ret == 0) {
			att->ok = true;
			snprintf(att->why, sizeof(att->why), "registered");
			m->used = order[i];
			return 0;
		}
	}
	return GDRB_ERR_UNSUPP;
}

void gdrb_reg_summary(const struct gdrb_gpu_mr *m, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < m->ntried && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s: %s", i ? "; " : "",
				 gdrb_reg_mode_name(m->tried[i].mode), m->tried[i].why);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}
