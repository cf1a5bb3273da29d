/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/mem/mem.c and its CUDA backend (mem_cuda.c or
 * mem_cuda_none.c): memory kinds, host and pinned buffers, pattern fill and
 * check through the ops, and device memory reporting "unavailable" cleanly
 * where no GPU can be opened.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdrb_log.h"
#include "gdrb_mem.h"
#include "gdrb_pattern.h"
#include "gdrb_stage.h"
#include "unit_main.h"

/* Small enough for a default RLIMIT_MEMLOCK of 64 KiB. */
#define PINNED_LEN ((size_t)48 << 10)
#define HOST_LEN (((size_t)1 << 20) + 3)
#define NO_BAD ((size_t)0xdeadbeef)

static size_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

/* Locked memory of this process in KiB (VmLck), or -1 where unknown. */
static long locked_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * Whether mlock shows in VmLck here: sanitizers intercept mlock as a no-op,
 * and then only allocation, not locking, can be checked.
 */
static int lock_visible(void)
{
	size_t ps = page_size();
	long before = locked_kib();
	int visible = 0;
	void *page;

	if (before < 0 || posix_memalign(&page, ps, ps))
		return 0;
	if (mlock(page, ps) == 0) {
		visible = locked_kib() > before;
		munlock(page, ps);
	}
	free(page);
	return visible;
}

static const struct gdrb_mem_ops *ops_of(enum gdrb_mem_kind kind)
{
	const char *why = "unset";
	const struct gdrb_mem_ops *ops = gdrb_mem_ops_get(kind, &why);

	ck_assert_msg(ops != NULL, "no ops for %s: %s", gdrb_mem_kind_name(kind),
		      why ? why : "(null)");
	ck_assert_ptr_null(why);
	return ops;
}

static void alloc_or_fail(struct gdrb_buf *buf, enum gdrb_mem_kind kind, size_t len)
{
	ck_assert_msg(gdrb_buf_alloc(buf, ops_of(kind), len) == 0, "%s alloc of %zu bytes failed",
		      gdrb_mem_kind_name(kind), len);
	ck_assert_ptr_nonnull(buf->ptr);
	ck_assert_uint_eq(buf->len, len);
}

START_TEST(test_kind_parse)
{
	static const struct {
		const char *text;
		enum gdrb_mem_kind kind;
	} good[] = {
		{ "host", GDRB_MEM_HOST },
		{ "pinned", GDRB_MEM_PINNED },
		{ "device", GDRB_MEM_DEVICE },
	};
	static const struct {
		const char *text, *hint;
	} bad[] = {
		{ "gpu", "device" },  { "GPU", "device" },   { "cuda", "device" },
		{ "cpu", "host" },    { "mlock", "pinned" }, { "xyz", NULL },
		{ "", NULL },         { "hostx", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		enum gdrb_mem_kind kind = (enum gdrb_mem_kind)-1;
		const char *hint = "unset";

		ck_assert_int_eq(gdrb_mem_kind_parse(good[i].text, &kind, &hint), 0);
		ck_assert_int_eq(kind, good[i].kind);
		ck_assert_ptr_null(hint);
		ck_assert_str_eq(gdrb_mem_kind_name(kind), good[i].text);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum gdrb_mem_kind kind = GDRB_MEM_PINNED;
		const char *hint = "unset";

		ck_assert_msg(gdrb_mem_kind_parse(bad[i].text, &kind, &hint) == -1,
			      "'%s' accepted", bad[i].text);
		ck_assert_int_eq(kind, GDRB_MEM_PINNED);
		if (bad[i].hint)
			ck_assert_pstr_eq(hint, bad[i].hint);
		else
			ck_assert_ptr_null(hint);
	}
}
END_TEST

START_TEST(test_host_ops)
{
	const struct gdrb_mem_ops *ops = ops_of(GDRB_MEM_HOST);

	ck_assert_str_eq(ops->name, "host");
	ck_assert(ops->host_accessible);
	ck_assert_ptr_nonnull(ops->how);
	ck_assert_int_gt(strlen(ops->how), 0);
}
END_TEST

/* Without an opened GPU, pinned memory is mlock'ed host memory. */
START_TEST(test_pinned_ops_without_gpu)
{
	const struct gdrb_mem_ops *ops = ops_of(GDRB_MEM_PINNED);

	ck_assert(!gdrb_gpu_ready());
	ck_assert_str_eq(ops->name, "pinned");
	ck_assert(ops->host_accessible);
	ck_assert_msg(strstr(ops->how, "mlock") != NULL, "pinned how is '%s'", ops->how);
}
END_TEST

START_TEST(test_host_alloc_aligned)
{
	static const size_t lens[] = { 0, 1, 100, 4095, 4096, 4097, HOST_LEN };
	size_t i, ps = page_size();

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct gdrb_buf buf;

		alloc_or_fail(&buf, GDRB_MEM_HOST, lens[i]);
		ck_assert_msg((uintptr_t)buf.ptr % ps == 0, "%zu bytes at %p: not page-aligned",
			      lens[i], buf.ptr);
		/* The whole length is writable. */
		memset(buf.ptr, 0xab, lens[i]);
		gdrb_buf_free(&buf);
		ck_assert_ptr_null(buf.ptr);
		/* A second free is harmless. */
		gdrb_buf_free(&buf);
	}
}
END_TEST

/* Within a page of SIZE_MAX the page rounding wrapped to 0 and handed out a tiny buffer. */
START_TEST(test_host_alloc_too_large)
{
	static const size_t lens[] = { SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 4094, SIZE_MAX - 4095,
				       (size_t)1 << (sizeof(size_t) * 8 - 1) };
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct gdrb_buf buf;

		ck_assert_msg(gdrb_buf_alloc(&buf, ops_of(GDRB_MEM_HOST), lens[i]) != 0,
			      "%zu bytes of host memory: allocated", lens[i]);
		ck_assert_ptr_null(buf.ptr);
		gdrb_buf_free(&buf);
		ck_assert_msg(gdrb_buf_alloc(&buf, ops_of(GDRB_MEM_PINNED), lens[i]) != 0,
			      "%zu bytes of pinned memory: allocated", lens[i]);
		ck_assert_ptr_null(buf.ptr);
		gdrb_buf_free(&buf);
	}
}
END_TEST

START_TEST(test_pinned_alloc_locked)
{
	static const size_t lens[] = { 0, 1, 4096, 5000, PINNED_LEN };
	size_t i, ps = page_size();
	int visible = lock_visible();
	long before = locked_kib();

	if (!visible)
		fprintf(stderr, "test_mem: pinned_alloc_locked: mlock not visible in VmLck, "
			"checking allocation only\n");
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t pages = (lens[i] + ps - 1) / ps ? (lens[i] + ps - 1) / ps : 1;
		struct gdrb_buf buf;

		alloc_or_fail(&buf, GDRB_MEM_PINNED, lens[i]);
		ck_assert((uintptr_t)buf.ptr % ps == 0);
		ck_assert_msg(!visible || locked_kib() >= before + (long)(pages * ps / 1024),
			      "%zu pinned bytes: VmLck %ld kB, was %ld kB", lens[i], locked_kib(),
			      before);
		memset(buf.ptr, 0xcd, lens[i]);
		gdrb_buf_free(&buf);
		ck_assert_ptr_null(buf.ptr);
		ck_assert_msg(!visible || locked_kib() == before,
			      "%zu pinned bytes: still locked after free", lens[i]);
	}
}
END_TEST

/* Pattern through the buffer API: offsets are message offsets from `off`. */
static void check_fill_and_check(enum gdrb_mem_kind kind, size_t len)
{
	uint64_t seed = gdrb_pattern_seed(len, 1, 0, 0);
	uint64_t seed2 = gdrb_pattern_seed(len, 2, 0, 0);
	size_t first_bad = NO_BAD, off = 1001, part = 3000;
	unsigned char *expect = malloc(len);
	struct gdrb_buf buf;

	ck_assert_ptr_nonnull(expect);
	alloc_or_fail(&buf, kind, len);
	ck_assert_int_eq(gdrb_buf_fill_pattern(&buf, 0, len, seed), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&buf, 0, len, seed, &first_bad), 0);
	ck_assert_uint_eq(first_bad, NO_BAD);
	gdrb_pattern_fill_at(expect, len, seed, 0);
	ck_assert_mem_eq(buf.ptr, expect, len);

	/* A message at an offset starts its pattern there. */
	ck_assert_int_eq(gdrb_buf_fill_pattern(&buf, off, part, seed2), 0);
	gdrb_pattern_fill_at(expect, part, seed2, 0);
	ck_assert_mem_eq((unsigned char *)buf.ptr + off, expect, part);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&buf, off, part, seed2, &first_bad), 0);
	/* The bytes around it keep the first pattern. */
	ck_assert_uint_eq(gdrb_buf_check_pattern(&buf, 0, off, seed, &first_bad), 0);
	gdrb_pattern_fill_at(expect, len, seed, 0);
	ck_assert_mem_eq((unsigned char *)buf.ptr + off + part, expect + off + part,
			 len - off - part);
	/* The whole buffer against the first seed: wrong only inside the message. */
	ck_assert_uint_gt(gdrb_buf_check_pattern(&buf, 0, len, seed, &first_bad), part / 2);
	ck_assert_uint_ge(first_bad, off);
	ck_assert_uint_lt(first_bad, off + 8);

	gdrb_buf_free(&buf);
	free(expect);
}

START_TEST(test_fill_check_host)
{
	check_fill_and_check(GDRB_MEM_HOST, HOST_LEN);
}
END_TEST

START_TEST(test_fill_check_pinned)
{
	check_fill_and_check(GDRB_MEM_PINNED, PINNED_LEN);
}
END_TEST

static void check_corrupt(enum gdrb_mem_kind kind, size_t len)
{
	uint64_t seed = gdrb_pattern_seed(len, 3, 1, 0);
	size_t first_bad = NO_BAD, at = len - 1234;
	struct gdrb_buf buf;

	alloc_or_fail(&buf, kind, len);
	ck_assert_int_eq(gdrb_buf_fill_pattern(&buf, 0, len, seed), 0);
	ck_assert_int_eq(gdrb_buf_corrupt(&buf, at), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&buf, 0, len, seed, &first_bad), 1);
	ck_assert_uint_eq(first_bad, at);
	/* first_bad is relative to the checked range. */
	first_bad = NO_BAD;
	ck_assert_int_eq(gdrb_buf_fill_pattern(&buf, 100, len - 100, seed), 0);
	ck_assert_int_eq(gdrb_buf_corrupt(&buf, at), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&buf, 100, len - 100, seed, &first_bad), 1);
	ck_assert_uint_eq(first_bad, at - 100);
	/* Corrupting the same byte again restores it. */
	ck_assert_int_eq(gdrb_buf_corrupt(&buf, at), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&buf, 100, len - 100, seed, &first_bad), 0);
	gdrb_buf_free(&buf);
}

START_TEST(test_corrupt_host)
{
	check_corrupt(GDRB_MEM_HOST, HOST_LEN);
}
END_TEST

START_TEST(test_corrupt_pinned)
{
	check_corrupt(GDRB_MEM_PINNED, PINNED_LEN);
}
END_TEST

START_TEST(test_copy_host_pinned)
{
	uint64_t seed = gdrb_pattern_seed(PINNED_LEN, 9, 0, 3);
	struct gdrb_buf host, pinned;
	size_t first_bad = NO_BAD, half = PINNED_LEN / 2;

	alloc_or_fail(&host, GDRB_MEM_HOST, PINNED_LEN);
	alloc_or_fail(&pinned, GDRB_MEM_PINNED, PINNED_LEN);
	memset(pinned.ptr, 0, PINNED_LEN);

	ck_assert_int_eq(gdrb_buf_fill_pattern(&host, 0, PINNED_LEN, seed), 0);
	ck_assert_int_eq(gdrb_buf_copy(&pinned, 0, &host, 0, PINNED_LEN), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&pinned, 0, PINNED_LEN, seed, &first_bad), 0);

	/* Offsets on both sides: the second half of host to the front of pinned. */
	memset(pinned.ptr, 0, PINNED_LEN);
	ck_assert_int_eq(gdrb_buf_copy(&pinned, 8, &host, half, half - 8), 0);
	ck_assert_mem_eq((unsigned char *)pinned.ptr + 8, (unsigned char *)host.ptr + half,
			 half - 8);
	ck_assert_int_eq(((unsigned char *)pinned.ptr)[half], 0);

	/* And back: a fault injected in pinned memory shows in host memory. */
	ck_assert_int_eq(gdrb_buf_fill_pattern(&pinned, 0, PINNED_LEN, seed), 0);
	ck_assert_int_eq(gdrb_buf_corrupt(&pinned, 4321), 0);
	ck_assert_int_eq(gdrb_buf_copy(&host, 0, &pinned, 0, PINNED_LEN), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&host, 0, PINNED_LEN, seed, &first_bad), 1);
	ck_assert_uint_eq(first_bad, 4321);

	gdrb_buf_free(&pinned);
	gdrb_buf_free(&host);
}
END_TEST

START_TEST(test_device_needs_gpu_open)
{
	const char *why = NULL;

	ck_assert(!gdrb_gpu_ready());
	ck_assert_ptr_null(gdrb_mem_ops_get(GDRB_MEM_DEVICE, &why));
	ck_assert_ptr_nonnull(why);
	ck_assert_int_gt(strlen(why), 0);
	if (!gdrb_cuda_built())
		ck_assert_msg(strstr(why, "without CUDA") != NULL, "why is '%s'", why);
}
END_TEST

/*
 * Without a usable GPU (no driver, no device, or built without CUDA),
 * gdrb_gpu_open says so and nothing else changes. With one, it opens it.
 */
START_TEST(test_gpu_open)
{
	struct gdrb_gpu_info info;
	const char *ops_why = NULL;
	char why[256];
	int rc;

	memset(why, 0, sizeof(why));
	memset(&info, 0x5a, sizeof(info));
	rc = gdrb_gpu_open(-1, 0, &info, why, sizeof(why));
	if (rc == 0) {
		ck_assert(gdrb_gpu_ready());
		ck_assert_int_gt(info.count, 0);
		ck_assert_int_ge(info.index, 0);
		ck_assert_int_lt(info.index, info.count);
		ck_assert_int_gt(strlen(info.name), 0);
		ck_assert_int_gt(strlen(info.pci_bus_id), 0);
		ck_assert_ptr_nonnull(gdrb_mem_ops_get(GDRB_MEM_DEVICE, &ops_why));
		return;
	}
	ck_assert_int_eq(rc, GDRB_ERR_UNSUPP);
	ck_assert_msg(strlen(why) > 0, "gdrb_gpu_open failed without a reason");
	ck_assert_int_eq(info.index, -1);
	ck_assert(!gdrb_gpu_ready());
	ck_assert_ptr_null(gdrb_mem_ops_get(GDRB_MEM_DEVICE, &ops_why));
	ck_assert_ptr_nonnull(ops_why);
	/* Pinned memory still works, as mlock'ed host memory. */
	ck_assert_ptr_nonnull(strstr(ops_of(GDRB_MEM_PINNED)->how, "mlock"));

	/* A forced index fails the same way, and the reason fits the buffer given. */
	memset(why, 'x', sizeof(why));
	ck_assert_int_eq(gdrb_gpu_open(3, 0, &info, why, 8), GDRB_ERR_UNSUPP);
	ck_assert_int_eq(strlen(why), 7);
	ck_assert(!gdrb_gpu_ready());
}
END_TEST

/*
 * Device memory end to end where a GPU opens; on a node without one this
 * case has nothing to test and says so (the no-GPU path is test_gpu_open).
 */
START_TEST(test_device_roundtrip)
{
	/* Past two 16 MiB staging chunks, to cover the chunked fill and check. */
	const size_t len = ((size_t)33 << 20) + 5;
	uint64_t seed = gdrb_pattern_seed(len, 4, 0, 0);
	size_t first_bad = NO_BAD, at = ((size_t)17 << 20) + 3;
	struct gdrb_buf dev, host;
	struct gdrb_gpu_info info;
	char why[256];

	if (gdrb_gpu_open(-1, 0, &info, why, sizeof(why)) != 0) {
		fprintf(stderr, "test_mem: device_roundtrip: skipped, %s\n", why);
		return;
	}
	ck_assert_str_eq(ops_of(GDRB_MEM_PINNED)->how, "cudaMallocHost");
	alloc_or_fail(&dev, GDRB_MEM_DEVICE, len);
	ck_assert(!dev.ops->host_accessible);
	alloc_or_fail(&host, GDRB_MEM_HOST, len);

	ck_assert_int_eq(gdrb_buf_fill_pattern(&dev, 0, len, seed), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&dev, 0, len, seed, &first_bad), 0);
	ck_assert_int_eq(gdrb_buf_corrupt(&dev, at), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&dev, 0, len, seed, &first_bad), 1);
	ck_assert_uint_eq(first_bad, at);
	/* A message at an offset, staged in chunks: first_bad relative to it. */
	ck_assert_int_eq(gdrb_buf_fill_pattern(&dev, 5, len - 5, seed), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&dev, 5, len - 5, seed, &first_bad), 0);
	ck_assert_int_eq(gdrb_buf_corrupt(&dev, at), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&dev, 5, len - 5, seed, &first_bad), 1);
	ck_assert_uint_eq(first_bad, at - 5);
	ck_assert_int_eq(gdrb_buf_fill_pattern(&dev, 0, len, seed), 0);
	ck_assert_int_eq(gdrb_buf_corrupt(&dev, at), 0);

	ck_assert_int_eq(gdrb_buf_copy(&host, 0, &dev, 0, len), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&host, 0, len, seed, &first_bad), 1);
	ck_assert_uint_eq(first_bad, at);

	ck_assert_int_eq(gdrb_buf_fill_pattern(&host, 0, len, seed), 0);
	ck_assert_int_eq(gdrb_buf_copy(&dev, 0, &host, 0, len), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&dev, 0, len, seed, &first_bad), 0);

	gdrb_buf_free(&host);
	gdrb_buf_free(&dev);
}
END_TEST

/*
 * Validation flushes GPUDirect RDMA writes before it reads device memory back:
 * the simulated GPU's call trace must show the flush before the first
 * device-to-host copy of the check. Nothing to see on a real GPU.
 */
START_TEST(test_flush_before_check)
{
	char trace[] = "gdrb-test-trace.XXXXXX", line[256];
	size_t first_bad = NO_BAD;
	struct gdrb_gpu_info info;
	struct gdrb_buf dev;
	bool flushed = false, read_back = false;
	char why[256];
	FILE *f;
	int fd = mkstemp(trace);

	ck_assert_int_ge(fd, 0);
	close(fd);
	setenv("SIMGPU_TRACE", trace, 1);
	if (gdrb_gpu_open(-1, 0, &info, why, sizeof(why)) != 0 || !info.simulated) {
		fprintf(stderr, "test_mem: flush_before_check: skipped, %s\n",
			info.simulated ? why : "not the simulated GPU");
		unlink(trace);
		return;
	}
	alloc_or_fail(&dev, GDRB_MEM_DEVICE, 4096);
	ck_assert_int_eq(gdrb_buf_fill_pattern(&dev, 0, 4096, 9), 0);
	ck_assert_uint_eq(gdrb_buf_check_pattern(&dev, 0, 4096, 9, &first_bad), 0);
	gdrb_buf_free(&dev);
	f = fopen(trace, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) && !read_back) {
		if (strstr(line, "cudaDeviceFlushGPUDirectRDMAWrites"))
			flushed = true;
		if (strstr(line, "cudaMemcpy ") && strstr(line, "<-device"))
			read_back = true;
	}
	fclose(f);
	unlink(trace);
	ck_assert_msg(read_back, "the check never read the device buffer back");
	ck_assert_msg(flushed, "device memory read back without cudaDeviceFlushGPUDirectRDMAWrites");
}
END_TEST

/* The rates seen on an H200 under MPS (results/gpu-h200): copies 55 GB/s + 8 us, the wire 9.4 GB/s + 20 us. */
static const struct gdrb_stage_rate h200_copy = { 8e-6, 55e9 }, h200_wire = { 20e-6, 9.4e9 };

START_TEST(test_stage_fit)
{
	struct gdrb_stage_rate s;

	/* 64 KiB in 8 us + 64K / 55e9, 4 MiB in 8 us + 4M / 55e9: both back. */
	gdrb_stage_fit(&s, 65536, 8e-6 + 65536 / 55e9, 4194304, 8e-6 + 4194304 / 55e9);
	ck_assert_double_eq_tol(s.peak_Bps, 55e9, 1e6);
	ck_assert_double_eq_tol(s.fixed_s, 8e-6, 1e-9);
	/* A large copy no slower than the small one: no fixed cost, its own rate. */
	gdrb_stage_fit(&s, 65536, 2e-6, 4194304, 1e-6);
	ck_assert_double_eq_tol(s.fixed_s, 0, 1e-12);
	ck_assert_double_eq_tol(s.peak_Bps, 4194304 / 1e-6, 1);
}
END_TEST

START_TEST(test_stage_choose)
{
	struct gdrb_stage_rates m = { h200_copy, h200_wire, h200_copy };
	size_t chunk;
	unsigned slots;

	/*
	 * The slowest stage's fixed cost (the wire's 20 us) at most a tenth of a
	 * fragment's time at the pace (9.4 GB/s): f >= 1.88 MB, 2 MiB. A slot is held
	 * for a copy and the wire, 1.19 times the wire's time: 2, and 2 more.
	 */
	gdrb_stage_choose(&m, &chunk, &slots);
	ck_assert_uint_eq(chunk, (size_t)2 << 20);
	ck_assert_uint_eq(slots, 4);
	/* A faster wire with a small fixed cost: the copies' 8 us at 55 GB/s sets it, 4.4 MB, capped at 4 MiB. */
	m.wire.fixed_s = 1e-6;
	m.wire.peak_Bps = 100e9;
	gdrb_stage_choose(&m, &chunk, &slots);
	ck_assert_uint_eq(chunk, GDRB_STAGE_AUTO_MAX);
	/* A wire not measured counts as the slower copy: the same answer as above. */
	m.wire.peak_Bps = 0;
	m.wire.fixed_s = 0;
	gdrb_stage_choose(&m, &chunk, &slots);
	ck_assert_uint_eq(chunk, GDRB_STAGE_AUTO_MAX);
	ck_assert_uint_eq(slots, 4);
	/* No fixed cost anywhere: the smallest fragment; fixed costs of seconds: the largest. */
	m.d2h.fixed_s = m.h2d.fixed_s = 0;
	gdrb_stage_choose(&m, &chunk, &slots);
	ck_assert_uint_eq(chunk, GDRB_STAGE_AUTO_MIN);
	m.d2h.fixed_s = 1;
	gdrb_stage_choose(&m, &chunk, &slots);
	ck_assert_uint_eq(chunk, GDRB_STAGE_AUTO_MAX);
	ck_assert_uint_le(slots, GDRB_STAGE_SLOTS);
	ck_assert_uint_ge(slots, GDRB_STAGE_SLOTS_MIN);
	/* A slow wire, 1 GB/s + 100 us: f >= 1 MB, 1 MiB; held / slowest just above 1: 2, and 2 more. */
	m = (struct gdrb_stage_rates){ { 0, 50e9 }, { 100e-6, 1e9 }, { 0, 50e9 } };
	gdrb_stage_choose(&m, &chunk, &slots);
	ck_assert_uint_eq(chunk, (size_t)1 << 20);
	ck_assert_uint_eq(slots, 4);
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static Suite *mem_suite(void)
{
	Suite *s = suite_create("mem");

	gdrb_log_init("test_mem");
	add_case(s, "kind_parse", test_kind_parse);
	add_case(s, "host_ops", test_host_ops);
	add_case(s, "host_alloc_too_large", test_host_alloc_too_large);
	add_case(s, "pinned_ops_without_gpu", test_pinned_ops_without_gpu);
	add_case(s, "host_alloc_aligned", test_host_alloc_aligned);
	add_case(s, "pinned_alloc_locked", test_pinned_alloc_locked);
	add_case(s, "fill_check_host", test_fill_check_host);
	add_case(s, "fill_check_pinned", test_fill_check_pinned);
	add_case(s, "corrupt_host", test_corrupt_host);
	add_case(s, "corrupt_pinned", test_corrupt_pinned);
	add_case(s, "copy_host_pinned", test_copy_host_pinned);
	add_case(s, "device_needs_gpu_open", test_device_needs_gpu_open);
	add_case(s, "gpu_open", test_gpu_open);
	add_case(s, "device_roundtrip", test_device_roundtrip);
	add_case(s, "flush_before_check", test_flush_before_check);
	add_case(s, "stage_fit", test_stage_fit);
	add_case(s, "stage_choose", test_stage_choose);
	return s;
}

const struct unit_test unit_test = { .suite = mem_suite };
