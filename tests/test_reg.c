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
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
