/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/verbs/reg_common.c and the GPU registration backend
 * (reg.c, or reg_none.c when verbs or CUDA is not built): mode names, what
 * each errno means, and failures reported, never crashed on, where no GPU or
 * no RDMA device exists.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_mem.h"
#include "gdrb_memlock.h"
#include "gdrb_reg.h"
#include "gdrb_size.h"
#include "unit_main.h"

START_TEST(test_modes)
{
	enum gdrb_reg_mode m;

	ck_assert_int_eq(gdrb_reg_mode_parse("auto", &m), 0);
	ck_assert_int_eq(m, GDRB_REG_AUTO);
	ck_assert_int_eq(gdrb_reg_mode_parse("dmabuf", &m), 0);
	ck_assert_int_eq(m, GDRB_REG_DMABUF);
	ck_assert_int_eq(gdrb_reg_mode_parse("peermem", &m), 0);
	ck_assert_int_eq(m, GDRB_REG_PEERMEM);
	ck_assert_int_eq(gdrb_reg_mode_parse("dma-buf", &m), GDRB_ERR_USAGE);
	ck_assert_int_eq(gdrb_reg_mode_parse("", &m), GDRB_ERR_USAGE);
	ck_assert_str_eq(gdrb_reg_mode_name(GDRB_REG_PEERMEM), "peermem");
	ck_assert_str_eq(gdrb_reg_mode_name((enum gdrb_reg_mode)7), "?");
}
END_TEST

START_TEST(test_explain)
{
	ck_assert_ptr_nonnull(strstr(gdrb_reg_explain(GDRB_REG_PEERMEM, EFAULT), "nvidia_peermem"));
	ck_assert_ptr_nonnull(strstr(gdrb_reg_explain(GDRB_REG_PEERMEM, EINVAL), "nvidia_peermem"));
	ck_assert_ptr_nonnull(strstr(gdrb_reg_explain(GDRB_REG_PEERMEM, ENOMEM), "ulimit -l"));
	ck_assert_ptr_nonnull(strstr(gdrb_reg_explain(GDRB_REG_DMABUF, EOPNOTSUPP), "5.12"));
	/* "No dma-buf support here", as NCCL reads it, like EOPNOTSUPP. */
	ck_assert_str_eq(gdrb_reg_explain(GDRB_REG_DMABUF, EPROTONOSUPPORT),
			 gdrb_reg_explain(GDRB_REG_DMABUF, EOPNOTSUPP));
	ck_assert_ptr_nonnull(strstr(gdrb_reg_explain(GDRB_REG_DMABUF, ENOMEM), "ulimit -l"));
	ck_assert_ptr_nonnull(strstr(gdrb_reg_explain(GDRB_REG_DMABUF, EIO), "unexpected"));
	/* CUDA_ERROR_NOT_SUPPORTED from cuMemGetHandleForAddressRange */
	ck_assert_ptr_nonnull(strstr(gdrb_cu_explain(801), "open kernel modules"));
	ck_assert_ptr_nonnull(strstr(gdrb_cu_explain(12345), "unexpected"));
}
END_TEST

/* Host memory is not device memory: SYNC_MEMOPS (or the build) refuses it before any verbs call. */
START_TEST(test_reg_gpu_refuses)
{
	struct gdrb_gpu_mr m;
	char host[4096];

	ck_assert_int_eq(gdrb_reg_gpu(NULL, host, sizeof(host), 0, GDRB_REG_AUTO, &m),
			 GDRB_ERR_UNSUPP);
	ck_assert_ptr_null(m.mr);
	ck_assert_int_eq(m.dmabuf_fd, -1);
	ck_assert_int_eq(m.ntried, 1);
	ck_assert(!m.tried[0].ok);
	ck_assert_uint_gt(strlen(m.tried[0].why), 10);
	/* Without a driver (or with one: host memory is no device pointer) SYNC_MEMOPS fails. */
	if (gdrb_reg_built())
		ck_assert_msg(!strcmp(m.tried[0].call, "cuPointerSetAttribute(SYNC_MEMOPS)") ||
			      !strcmp(m.tried[0].call, "gdrb_reg_gpu"), "failed in %s",
			      m.tried[0].call);
	else
		ck_assert_ptr_nonnull(strstr(m.tried[0].why, "not built"));
	gdrb_reg_gpu_release(&m);
}
END_TEST

/* A device name no node has: the probe says why and does not crash. */
START_TEST(test_probe_missing_device)
{
	struct gdrb_reg_attempt att;

	ck_assert_int_ne(gdrb_reg_probe("gdrb_no_such_dev", 0, 4096, GDRB_REG_PEERMEM, &att), 0);
	ck_assert(!att.ok);
	ck_assert_int_eq(att.mode, GDRB_REG_PEERMEM);
	ck_assert_uint_gt(strlen(att.why), 10);
}
END_TEST

/* Injected steps: each records that it ran and fails or succeeds as told. */
static struct {
	int sync_rc, dmabuf_rc, peermem_rc;
	int dmabuf_errno;               /* 0: EOPNOTSUPP */
	char order[8];
} inj;
static struct ibv_mr *const fake_mr = (struct ibv_mr *)&inj;

static void ran(char step)
{
	size_t n = strlen(inj.order);

	inj.order[n] = step;
	inj.order[n + 1] = '\0';
}

static int fake_sync(void *ptr, struct gdrb_reg_attempt *att)
{
	(void)ptr;
	ran('s');
	if (inj.sync_rc)
		snprintf(att->why, sizeof(att->why), "cuPointerSetAttribute(SYNC_MEMOPS): injected");
	return inj.sync_rc;
}

static int fake_step(int rc, int err, const char *call, struct gdrb_gpu_mr *m,
		     struct gdrb_reg_attempt *att)
{
	if (rc) {
		att->err = err;
		snprintf(att->call, sizeof(att->call), "%s", call);
		snprintf(att->why, sizeof(att->why), "%s: injected errno %d", call, err);
		return rc;
	}
	m->mr = fake_mr;
	return 0;
}

static int fake_dmabuf(struct ibv_pd *pd, void *ptr, size_t len, int access,
		       struct gdrb_gpu_mr *m, struct gdrb_reg_attempt *att)
{
	(void)pd;
	(void)ptr;
	(void)len;
	(void)access;
	ran('d');
	return fake_step(inj.dmabuf_rc, inj.dmabuf_errno ? inj.dmabuf_errno : EOPNOTSUPP,
			 "ibv_reg_dmabuf_mr", m, att);
}

static int fake_peermem(struct ibv_pd *pd, void *ptr, size_t len, int access,
			struct gdrb_gpu_mr *m, struct gdrb_reg_attempt *att)
{
	(void)pd;
	(void)ptr;
	(void)len;
	(void)access;
	ran('p');
	return fake_step(inj.peermem_rc, EFAULT, "ibv_reg_mr", m, att);
}

static const struct gdrb_reg_ops fake_ops = { fake_sync, fake_dmabuf, fake_peermem };

static int reg_injected(int sync_rc, int dmabuf_rc, int peermem_rc, enum gdrb_reg_mode mode,
			struct gdrb_gpu_mr *m)
{
	char host[64];

	memset(&inj, 0, sizeof(inj));
	inj.sync_rc = sync_rc;
	inj.dmabuf_rc = dmabuf_rc;
	inj.peermem_rc = peermem_rc;
	return gdrb_reg_gpu_with(&fake_ops, (struct ibv_pd *)host, host, sizeof(host), 0, mode, m);
}

START_TEST(test_fallback_order)
{
	struct gdrb_gpu_mr m;
	char text[1024];

	/* auto: dma-buf first, and it is enough. */
	ck_assert_int_eq(reg_injected(0, 0, 0, GDRB_REG_AUTO, &m), 0);
	ck_assert_str_eq(inj.order, "sd");
	ck_assert_int_eq(m.used, GDRB_REG_DMABUF);
	ck_assert_int_eq(m.ntried, 1);
	ck_assert(m.tried[0].ok);

	/* auto: dma-buf fails, peer memory registers; both attempts recorded. */
	ck_assert_int_eq(reg_injected(0, GDRB_ERR_UNSUPP, 0, GDRB_REG_AUTO, &m), 0);
	ck_assert_str_eq(inj.order, "sdp");
	ck_assert_int_eq(m.used, GDRB_REG_PEERMEM);
	ck_assert_ptr_eq(m.mr, fake_mr);
	ck_assert_int_eq(m.ntried, 2);
	ck_assert(!m.tried[0].ok);
	ck_assert_int_eq(m.tried[0].mode, GDRB_REG_DMABUF);
	ck_assert_int_eq(m.tried[0].err, EOPNOTSUPP);
	ck_assert(m.tried[1].ok);

	/* auto: dma-buf absent as EPROTONOSUPPORT falls back just as EOPNOTSUPP does. */
	memset(&inj, 0, sizeof(inj));
	inj.dmabuf_rc = GDRB_ERR_UNSUPP;
	inj.dmabuf_errno = EPROTONOSUPPORT;
	ck_assert_int_eq(gdrb_reg_gpu_with(&fake_ops, (struct ibv_pd *)text, text, 64, 0,
					   GDRB_REG_AUTO, &m), 0);
	ck_assert_str_eq(inj.order, "sdp");
	ck_assert_int_eq(m.used, GDRB_REG_PEERMEM);
	ck_assert_int_eq(m.tried[0].err, EPROTONOSUPPORT);

	/* auto: both fail: unsupported, both errors for the n/a note. */
	ck_assert_int_eq(reg_injected(0, GDRB_ERR_UNSUPP, GDRB_ERR_UNSUPP, GDRB_REG_AUTO, &m),
			 GDRB_ERR_UNSUPP);
	ck_assert_str_eq(inj.order, "sdp");
	ck_assert_ptr_null(m.mr);
	ck_assert_int_eq(m.ntried, 2);
	gdrb_reg_summary(&m, text, sizeof(text));
	ck_assert_str_eq(text, "dmabuf: ibv_reg_dmabuf_mr: injected errno 95; peermem: ibv_reg_mr: injected errno 14");

	/* Forced modes try only themselves. */
	ck_assert_int_eq(reg_injected(0, 0, 0, GDRB_REG_PEERMEM, &m), 0);
	ck_assert_str_eq(inj.order, "sp");
	ck_assert_int_eq(m.used, GDRB_REG_PEERMEM);
	ck_assert_int_eq(reg_injected(0, GDRB_ERR_UNSUPP, 0, GDRB_REG_DMABUF, &m), GDRB_ERR_UNSUPP);
	ck_assert_str_eq(inj.order, "sd");
	ck_assert_int_eq(m.ntried, 1);

	/* SYNC_MEMOPS refused: no registration is attempted. */
	ck_assert_int_eq(reg_injected(GDRB_ERR_UNSUPP, 0, 0, GDRB_REG_AUTO, &m), GDRB_ERR_UNSUPP);
	ck_assert_str_eq(inj.order, "s");
	ck_assert_int_eq(m.ntried, 1);
	ck_assert_ptr_nonnull(strstr(m.tried[0].why, "SYNC_MEMOPS"));
}
END_TEST

/*
 * The driver entry points resolve through whichever lookup the runtime has.
 * Run once on the simulated runtime and once (tests/integration/cuda_old_runtime.sh) on
 * one without cudaGetDriverEntryPointByVersion, which a direct call would
 * meet as a symbol lookup error.
 */
START_TEST(test_driver_entry)
{
	const char *how = NULL, *want = getenv("GDRB_TEST_ENTRY_LOOKUP");
	struct gdrb_gpu_info info;
	char why[256];

	if (!gdrb_reg_built() || gdrb_gpu_open(-1, 0, &info, why, sizeof(why))) {
		fprintf(stderr, "test_reg: driver_entry: no GPU or not built, nothing to resolve\n");
		ck_assert_ptr_null(want);
		return;
	}
	ck_assert_ptr_nonnull(gdrb_cuda_driver_entry("cuGetErrorName", &how));
	ck_assert_ptr_nonnull(gdrb_cuda_driver_entry("cuMemGetHandleForAddressRange", &how));
	ck_assert_ptr_null(gdrb_cuda_driver_entry("cuNoSuchEntryPoint", &how));
	if (want)
		ck_assert_str_eq(how, want);
}
END_TEST

#define GIB ((size_t)1 << 30)
#define starts_with(s, prefix) (strncmp((s), (prefix), strlen(prefix)) == 0)

/* The memlock need of one size, -W window, the default --window-bytes. */
static int need_of(size_t size, unsigned window, bool windowed, enum gdrb_mem_kind mem,
		   struct gdrb_memlock_need *n)
{
	struct gdrb_sizes s = { .n = 1, .v = { size } };

	return gdrb_memlock_need(&s, window, GIB, windowed, mem, n);
}

/* What a run registers against RLIMIT_MEMLOCK, at the edges. */
START_TEST(test_memlock_need)
{
	struct gdrb_memlock_need n;

	/* Defaults (-m 8:1G, -W 64): device counts send, receive and both bounce buffers. */
	ck_assert_int_eq(need_of(GIB, 64, true, GDRB_MEM_DEVICE, &n), 0);
	ck_assert_uint_eq(n.buf_bytes, GIB);
	ck_assert_uint_eq(n.nbufs, 4);
	ck_assert_uint_eq(n.bytes, 4 * GIB);
	ck_assert(!n.overflow);
	ck_assert_int_eq(need_of(GIB, 64, true, GDRB_MEM_HOST, &n), 0);
	ck_assert_uint_eq(n.bytes, 2 * GIB);
	ck_assert_int_eq(need_of(GIB, 64, true, GDRB_MEM_PINNED, &n), 0);
	ck_assert_uint_eq(n.bytes, 2 * GIB);
	/* Small messages: a window per buffer, capped at --window-bytes; latency: one message. */
	ck_assert_int_eq(need_of(4096, 64, true, GDRB_MEM_DEVICE, &n), 0);
	ck_assert_uint_eq(n.bytes, 4 * 64 * 4096);
	ck_assert_int_eq(need_of((size_t)1 << 20, 64, true, GDRB_MEM_HOST, &n), 0);
	ck_assert_uint_eq(n.bytes, 2 * 64 * ((size_t)1 << 20));
	ck_assert_int_eq(need_of((size_t)1 << 24, 128, true, GDRB_MEM_HOST, &n), 0);
	ck_assert_uint_eq(n.bytes, 2 * GIB);
	ck_assert_int_eq(need_of(4096, 64, false, GDRB_MEM_HOST, &n), 0);
	ck_assert_uint_eq(n.bytes, 2 * 4096);
	/* The largest total that fits, then one byte more per buffer: saturated, not wrapped. */
	ck_assert_int_eq(need_of(SIZE_MAX / 4, 64, true, GDRB_MEM_DEVICE, &n), 0);
	ck_assert_uint_eq(n.bytes, SIZE_MAX / 4 * 4);
	ck_assert_int_eq(need_of(SIZE_MAX / 4 + 1, 64, true, GDRB_MEM_DEVICE, &n),
			 -EOVERFLOW);
	ck_assert_uint_eq(n.bytes, SIZE_MAX);
	ck_assert(n.overflow);
	ck_assert_int_eq(need_of(SIZE_MAX / 2, 1u << 16, true, GDRB_MEM_HOST, &n), 0);
	ck_assert_uint_eq(n.bytes, SIZE_MAX / 2 * 2);
	ck_assert_int_eq(need_of(SIZE_MAX / 2 + 1, 1, false, GDRB_MEM_HOST, &n),
			 -EOVERFLOW);
	ck_assert_uint_eq(n.bytes, SIZE_MAX);
	ck_assert_int_eq(need_of(SIZE_MAX, 1u << 16, true, GDRB_MEM_PINNED, &n),
			 -EOVERFLOW);
	ck_assert_uint_eq(n.buf_bytes, SIZE_MAX);
	ck_assert_uint_eq(n.bytes, SIZE_MAX);
}
END_TEST

START_TEST(test_memlock_text)
{
	struct gdrb_memlock_need n;
	char text[512], want[64];

	need_of(GIB, 64, true, GDRB_MEM_DEVICE, &n);
	gdrb_memlock_need_text(&n, text, sizeof(text));
	ck_assert_msg(starts_with(text, "need 4GiB for -m 1GiB with --mem device: 4 registered "
				  "buffers of 1GiB (send and receive in GPU memory"), "%s", text);
	ck_assert_ptr_nonnull(strstr(text, "2 pinned bounce buffers"));
	ck_assert_ptr_nonnull(strstr(text, "a window (-W 64) of smaller ones up to 1GiB (--window-bytes)"));
	need_of(4096, 8, false, GDRB_MEM_HOST, &n);
	gdrb_memlock_need_text(&n, text, sizeof(text));
	ck_assert_str_eq(text, "need 8KiB for -m 4KiB with --mem host: 2 registered buffers of "
			       "4KiB (send and receive); a buffer holds the largest message");
	need_of(SIZE_MAX, 1, false, GDRB_MEM_DEVICE, &n);
	gdrb_memlock_need_text(&n, text, sizeof(text));
	snprintf(want, sizeof(want), "need more than %zu bytes for -m ", (size_t)SIZE_MAX);
	ck_assert_msg(starts_with(text, want), "%s", text);
}
END_TEST

/* The verbs benchmarks' error: need and limit when the limit may be why. */
START_TEST(test_memlock_note)
{
	struct gdrb_memlock_need n;
	char note[640];

	need_of(GIB, 64, true, GDRB_MEM_DEVICE, &n);
	/* ENOMEM under a small limit: need, limit, and raise it. */
	ck_assert(gdrb_memlock_note(&n, ENOMEM, false, 65536, false, note, sizeof(note)));
	ck_assert_msg(starts_with(note, "; need 4GiB for -m 1GiB with --mem device: "), "%s", note);
	ck_assert_ptr_nonnull(strstr(note, "; RLIMIT_MEMLOCK 64KiB: raise it (ulimit -l unlimited"));
	/* Another errno, but the limit is below the need: still said. */
	ck_assert(gdrb_memlock_note(&n, EFAULT, false, 2 * GIB, false, note, sizeof(note)));
	ck_assert_ptr_nonnull(strstr(note, "RLIMIT_MEMLOCK 2GiB: raise it"));
	/* Limits that cover the need, or do not apply: ENOMEM says so, other errors say nothing. */
	ck_assert(gdrb_memlock_note(&n, EAGAIN, false, 4 * GIB, false, note, sizeof(note)));
	ck_assert_ptr_nonnull(strstr(note, "RLIMIT_MEMLOCK 4GiB: not the limit"));
	ck_assert(gdrb_memlock_note(&n, ENOMEM, true, 0, false, note, sizeof(note)));
	ck_assert_ptr_nonnull(strstr(note, "RLIMIT_MEMLOCK unlimited: not the limit"));
	ck_assert(gdrb_memlock_note(&n, ENOMEM, false, 65536, true, note, sizeof(note)));
	ck_assert_ptr_nonnull(strstr(note, "CAP_IPC_LOCK exempts this process"));
	ck_assert(!gdrb_memlock_note(&n, EFAULT, false, 4 * GIB, false, note, sizeof(note)));
	ck_assert_str_eq(note, "");
	ck_assert(!gdrb_memlock_note(&n, EFAULT, false, 65536, true, note, sizeof(note)));
	ck_assert(!gdrb_memlock_note(&n, EFAULT, true, 0, false, note, sizeof(note)));
	ck_assert_str_eq(note, "");
	/* A need no finite limit covers. */
	need_of(SIZE_MAX, 64, true, GDRB_MEM_DEVICE, &n);
	ck_assert(gdrb_memlock_note(&n, EFAULT, false, UINT64_MAX, false, note, sizeof(note)));
	ck_assert_ptr_nonnull(strstr(note, ": raise it"));
}
END_TEST

static Suite *reg_suite(void)
{
	const struct unit_case reg[] = {
		{ .test = test_modes },
		{ .test = test_explain },
		{ .test = test_reg_gpu_refuses },
		{ .test = test_probe_missing_device },
		{ .test = test_fallback_order },
		{ .test = test_memlock_need },
		{ .test = test_memlock_text },
		{ .test = test_memlock_note },
	};
	const struct unit_case driver_entry[] = {
		{ .test = test_driver_entry },
	};
	Suite *s = suite_create("reg");

	UNIT_TCASE(s, "reg", 0, reg);
	UNIT_TCASE(s, "driver_entry", 0, driver_entry);
	return s;
}

const struct unit_test unit_test = { .suite = reg_suite };
