/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/reg_common.c and the GPU registration backend
 * (reg.c, or reg_none.c when verbs or CUDA is not built): mode names, what
 * each errno means, and failures reported, never crashed on, where no GPU or
 * no RDMA device exists.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_reg.h"

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

int main(void)
{
	Suite *s = suite_create("reg");
	TCase *tc = tcase_create("reg");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_modes);
	tcase_add_test(tc, test_explain);
	tcase_add_test(tc, test_reg_gpu_refuses);
	tcase_add_test(tc, test_probe_missing_device);
	tcase_add_test(tc, test_fallback_order);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
