/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simnccl_check: the simulated NCCL's semantics under mpirun, one rank a
 * simulated GPU (tests/unit/simnccl.sh runs it). Modes:
 *   check [--plant]   every call, type and operation, in place and out of place,
 *                     checked element by element on host copies (--plant: one
 *                     wrong element written after each operation: must fail);
 *   big               one large AllReduce and AllGather at the default chunk;
 *   nosync [--sync]   results read without waiting on the stream: stale bytes;
 *   dupgpu            every rank on device 0: ncclInvalidUsage;
 *   fail [--exit]     SIMNCCL_FAIL_AFTER=2 on rank 1: its async error, then the
 *                     peers' once it aborts (--exit: once its process exits);
 *   log               init, one AllReduce, destroy: the log lines.
 * Exit 0 when every check held, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include "simnccl/nccl_plain.h"

static int rank, nranks, failures;
static bool plant;
static cudaStream_t stream;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			if (failures++ < 20) {					\
				fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
				fprintf(stderr, __VA_ARGS__);			\
				fputc('\n', stderr);				\
			}							\
		}								\
	} while (0)

#define CUDA(call)								\
	do {									\
		cudaError_t err_ = (call);					\
		if (err_) {							\
			fprintf(stderr, "rank %d: %s: %s\n", rank, #call, cudaGetErrorString(err_)); \
			exit(1);						\
		}								\
	} while (0)

/* ------------------------------------------------------------------------- */
/* Types: values are small integers or halves, exact in every type            */

enum kind { K_INT, K_UINT, K_F32, K_F64, K_F16, K_BF16 };

static const struct dtype {
	ncclDataType_t t;
	const char *name;
	size_t size;
	enum kind kind;
} dtypes[] = {
	{ ncclInt8, "int8", 1, K_INT }, { ncclUint8, "uint8", 1, K_UINT },
	{ ncclInt32, "int32", 4, K_INT }, { ncclUint32, "uint32", 4, K_UINT },
	{ ncclInt64, "int64", 8, K_INT }, { ncclUint64, "uint64", 8, K_UINT },
	{ ncclFloat16, "float16", 2, K_F16 }, { ncclFloat32, "float32", 4, K_F32 },
	{ ncclFloat64, "float64", 8, K_F64 }, { ncclBfloat16, "bfloat16", 2, K_BF16 },
};

static const struct {
	ncclRedOp_t op;
	const char *name;
} redops[] = {  /* in ncclRedOp_t order: the index is the operation */
	{ ncclSum, "sum" }, { ncclProd, "prod" }, { ncclMax, "max" }, { ncclMin, "min" },
	{ ncclAvg, "avg" },
};

/* An exact value as half: sign, exponent, ten mantissa bits (normals and zero only). */
static uint16_t exact_half(double v)
{
	int e;
	double m;
	uint16_t sign = v < 0 ? 0x8000 : 0;

	if (v == 0)
		return sign;
	m = frexp(fabs(v), &e);         /* |v| = m 2^e, m in [0.5, 1) */
	return (uint16_t)(sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((m * 2 - 1) * 1024));
}

static double half_value(uint16_t h)
{
	int e = (h >> 10) & 0x1f;
	double m = h & 0x3ff;
	double v = e ? ldexp(1 + m / 1024, e - 15) : ldexp(m / 1024, -14);

	return h & 0x8000 ? -v : v;
}

static void store(const struct dtype *d, void *buf, size_t i, double v)
{
	char *p = (char *)buf + i * d->size;
	float f = (float)v;
	uint32_t u;
	uint16_t h;

	switch (d->t) {
	case ncclInt8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
	case ncclUint8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
	case ncclInt32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
	case ncclUint32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	case ncclInt64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
	case ncclUint64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
	case ncclFloat32: memcpy(p, &f, 4); break;
	case ncclFloat64: memcpy(p, &v, 8); break;
	case ncclFloat16: h = exact_half(v); memcpy(p, &h, 2); break;
	case ncclBfloat16: memcpy(&u, &f, 4); h = (uint16_t)(u >> 16); memcpy(p, &h, 2); break;
	default: break;
	}
}

static double load(const struct dtype *d, const void *buf, size_t i)
{
	const char *p = (const char *)buf + i * d->size;
	union { int8_t i8; uint8_t u8; int32_t i32; uint32_t u32; int64_t i64; uint64_t u64;
		float f; double g; uint16_t h; } x;
	uint32_t u;

	memcpy(&x, p, d->size);
	switch (d->t) {
	case ncclInt8: return x.i8;
	case ncclUint8: return x.u8;
	case ncclInt32: return x.i32;
	case ncclUint32: return x.u32;
	case ncclInt64: return (double)x.i64;
	case ncclUint64: return (double)x.u64;
	case ncclFloat32: return x.f;
	case ncclFloat64: return x.g;
	case ncclFloat16: return half_value(x.h);
	case ncclBfloat16: u = (uint32_t)x.h << 16; memcpy(&x.f, &u, 4); return x.f;
	default: return 0;
	}
}

/* Rank r's element i for reduction op (or -1: a plain copy). */
static double value(const struct dtype *d, int op, int r, size_t i)
{
	bool uns = d->kind == K_UINT;

	if (op == ncclSum || op == ncclAvg)
		return (double)((long)(i % 13) - (uns ? 0 : 6)) * (r + 1);
	if (op == ncclProd) {
		static const double s[] = { 1, -1, 2 }, u[] = { 1, 2, 3 };

		return (uns ? u : s)[(i + 2 * (size_t)r) % 3];
	}
	return (double)((long)((i * 7 + (size_t)r * 5) % 23) - (uns ? 0 : 11));
}

static double expected(const struct dtype *d, int op, size_t i)
{
	double acc = value(d, op, 0, i);
	int r;

	for (r = 1; r < nranks; r++) {
		double v = value(d, op, r, i);

		if (op == ncclSum || op == ncclAvg)
			acc += v;
		else if (op == ncclProd)
			acc *= v;
		else if (op == ncclMin)
			acc = v < acc ? v : acc;
		else
			acc = v > acc ? v : acc;
	}
	if (op == ncclAvg)
		acc = d->kind == K_INT || d->kind == K_UINT ? (double)((long long)acc / nranks)
							     : acc / nranks;
	return acc;
}

/* ------------------------------------------------------------------------- */
/* Device buffers                                                             */

static void *dev_alloc(size_t bytes)
{
	void *p = NULL;

	CUDA(cudaMalloc(&p, bytes ? bytes : 1));
	return p;
}

/*
 * A pageable host-to-device cudaMemcpy may return before its tail lands (on the
 * legacy stream, which the non-blocking stream of the operations does not
 * wait for): wait for the device before an operation may read or write there.
 */
static void upload(void *dev, const void *host, size_t bytes)
{
	if (!bytes)
		return;
	CUDA(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
	CUDA(cudaDeviceSynchronize());
}

static void fill(const struct dtype *d, void *dev, size_t off, size_t count, int op, int r)
{
	char *host = malloc(count * d->size + 1);
	size_t i;

	for (i = 0; i < count; i++)
		store(d, host, i, value(d, op, r, i));
	upload((char *)dev + off * d->size, host, count * d->size);
	free(host);
}

static char *fetch(const void *dev, size_t bytes)
{
	char *host = malloc(bytes + 1);

	if (bytes)
		CUDA(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
	return host;
}

/* 0x5a bytes: what an operation must (or must not) overwrite. */
static void sentinel(void *dev, size_t bytes)
{
	char *host = malloc(bytes + 1);

	memset(host, 0x5a, bytes);
	upload(dev, host, bytes);
	free(host);
}

/* After the operation: wait, then (--plant) spoil one element as a broken simulator would. */
static void finish(ncclResult_t res, const char *what, void *recv, size_t bytes)
{
	static const char bad[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x08 };

	CHECK(res == ncclSuccess, "%s: %s", what, ncclGetErrorString(res));
	CUDA(cudaStreamSynchronize(stream));
	if (plant && recv && bytes >= 8)
		upload((char *)recv + (bytes / 2 & ~(size_t)7), bad, 8);
}

/* ------------------------------------------------------------------------- */
/* check                                                                      */

static void expect_block(const struct dtype *d, const char *host, size_t at, size_t count,
			 double (*want)(const struct dtype *, int, int, size_t), int op, int r,
			 const char *what)
{
	size_t i;

	for (i = 0; i < count; i++) {
		double got = load(d, host, at + i), exp = want(d, op, r, i);

		CHECK(got == exp, "%s: element %zu is %g, expected %g", what, at + i, got, exp);
		if (got != exp)
			return;
	}
}

static double want_reduced(const struct dtype *d, int op, int r, size_t i)
{
	(void)r;
	return expected(d, op, i);
}

static void check_unchanged(const struct dtype *d, const void *dev, size_t count, int op, int r,
			    const char *what)
{
	char *host = fetch(dev, count * d->size);

	expect_block(d, host, 0, count, value, op, r, what);
	free(host);
}

static void check_reducing(ncclComm_t comm, const struct dtype *d, int op, size_t count, bool in_place)
{
	size_t es = d->size, n = (size_t)nranks, me = (size_t)rank;
	int root = (int)(count % n);
	char what[160], *host;
	void *send, *recv;
	ncclResult_t res;

	/* AllReduce */
	snprintf(what, sizeof(what), "AllReduce %s %s count %zu %s", d->name, redops[op].name, count,
		 in_place ? "in place" : "out of place");
	send = dev_alloc(count * es);
	recv = in_place ? send : dev_alloc(count * es);
	fill(d, send, 0, count, op, rank);
	if (!in_place)
		sentinel(recv, count * es);
	res = ncclAllReduce(send, recv, count, d->t, redops[op].op, comm, stream);
	finish(res, what, recv, count * es);
	host = fetch(recv, count * es);
	expect_block(d, host, 0, count, want_reduced, op, 0, what);
	free(host);
	if (!in_place)
		check_unchanged(d, send, count, op, rank, what);

	/* Reduce */
	snprintf(what, sizeof(what), "Reduce %s %s count %zu root %d %s", d->name, redops[op].name,
		 count, root, in_place ? "in place" : "out of place");
	fill(d, send, 0, count, op, rank);
	sentinel(recv, in_place ? 0 : count * es);
	res = ncclReduce(send, recv, count, d->t, redops[op].op, root, comm, stream);
	finish(res, what, rank == root ? recv : NULL, count * es);
	host = fetch(recv, count * es);
	if (rank == root)
		expect_block(d, host, 0, count, want_reduced, op, 0, what);
	else if (in_place)
		expect_block(d, host, 0, count, value, op, rank, what);
	else {
		size_t i;

		for (i = 0; i < count * es; i++)
			CHECK((unsigned char)host[i] == 0x5a, "%s: non-root recvbuff written at byte %zu", what, i);
	}
	free(host);
	cudaFree(send);
	if (!in_place)
		cudaFree(recv);

	/* ReduceScatter: sendbuff holds nranks blocks of count; in place, recvbuff is this rank's. */
	snprintf(what, sizeof(what), "ReduceScatter %s %s count %zu %s", d->name, redops[op].name,
		 count, in_place ? "in place" : "out of place");
	send = dev_alloc(n * count * es);
	recv = in_place ? (char *)send + me * count * es : dev_alloc(count * es);
	{
		size_t b;

		/* Block b of rank r: the values r would give for the elements b*count.. */
		for (b = 0; b < n; b++) {
			char *h = malloc(count * es + 1);
			size_t i;

			for (i = 0; i < count; i++)
				store(d, h, i, value(d, op, rank, b * 7 + i) );
			upload((char *)send + b * count * es, h, count * es);
			free(h);
		}
	}
	if (!in_place)
		sentinel(recv, count * es);
	res = ncclReduceScatter(send, recv, count, d->t, redops[op].op, comm, stream);
	finish(res, what, recv, count * es);
	host = fetch(recv, count * es);
	{
		size_t i;

		for (i = 0; i < count; i++) {
			double got = load(d, host, i), exp = expected(d, op, me * 7 + i);

			CHECK(got == exp, "%s: element %zu is %g, expected %g", what, i, got, exp);
			if (got != exp)
				break;
		}
	}
	free(host);
	cudaFree(send);
	if (!in_place)
		cudaFree(recv);
}

static void check_copying(ncclComm_t comm, const struct dtype *d, size_t count, bool in_place)
{
	size_t es = d->size, n = (size_t)nranks, me = (size_t)rank, r;
	int root = (int)((count + 1) % n);
	char what[160], *host;
	void *send, *recv;
	ncclResult_t res;

	snprintf(what, sizeof(what), "Broadcast %s count %zu root %d %s", d->name, count, root,
		 in_place ? "in place" : "out of place");
	send = dev_alloc(count * es);
	recv = in_place ? send : dev_alloc(count * es);
	fill(d, send, 0, count, -1, rank);
	if (!in_place)
		sentinel(recv, count * es);
	res = ncclBroadcast(send, recv, count, d->t, root, comm, stream);
	finish(res, what, recv, count * es);
	host = fetch(recv, count * es);
	expect_block(d, host, 0, count, value, -1, root, what);
	free(host);
	if (!in_place) {
		check_unchanged(d, send, count, -1, rank, what);
		cudaFree(recv);
	}
	cudaFree(send);

	snprintf(what, sizeof(what), "AllGather %s count %zu %s", d->name, count,
		 in_place ? "in place" : "out of place");
	recv = dev_alloc(n * count * es);
	send = in_place ? (char *)recv + me * count * es : dev_alloc(count * es);
	sentinel(recv, n * count * es);
	fill(d, send, 0, count, -1, rank);
	res = ncclAllGather(send, recv, count, d->t, comm, stream);
	finish(res, what, recv, n * count * es);
	host = fetch(recv, n * count * es);
	for (r = 0; r < n; r++)
		expect_block(d, host, r * count, count, value, -1, (int)r, what);
	free(host);
	cudaFree(recv);
	if (!in_place)
		cudaFree(send);
}

/* Every rank sends a block to every rank (itself too), the order of the calls differing by rank. */
static void check_p2p(ncclComm_t comm, const struct dtype *d, size_t count)
{
	size_t es = d->size, n = (size_t)nranks, p;
	char what[160], *host;
	void *send = dev_alloc(n * count * es), *recv = dev_alloc(n * count * es);
	ncclResult_t res = ncclSuccess;
	int k;

	snprintf(what, sizeof(what), "all-to-all Send/Recv %s count %zu", d->name, count);
	for (p = 0; p < n; p++)
		fill(d, send, p * count, count, -1, rank * 100 + (int)p);
	sentinel(recv, n * count * es);
	ncclGroupStart();
	for (k = 0; k < nranks; k++) {
		int peer = rank % 2 ? nranks - 1 - k : k;

		if (rank % 2) {
			res |= ncclRecv((char *)recv + (size_t)peer * count * es, count, d->t, peer, comm, stream);
			res |= ncclSend((char *)send + (size_t)peer * count * es, count, d->t, peer, comm, stream);
		} else {
			res |= ncclSend((char *)send + (size_t)peer * count * es, count, d->t, peer, comm, stream);
			res |= ncclRecv((char *)recv + (size_t)peer * count * es, count, d->t, peer, comm, stream);
		}
	}
	res |= ncclGroupEnd();
	finish(res, what, recv, n * count * es);
	host = fetch(recv, n * count * es);
	for (p = 0; p < n; p++)
		expect_block(d, host, p * count, count, value, -1, (int)p * 100 + rank, what);
	free(host);

	/* A ring: each rank sends to the next and receives from the previous, in one group. */
	snprintf(what, sizeof(what), "ring Send/Recv %s count %zu", d->name, count);
	sentinel(recv, count * es);
	if (nranks > 1) {
		int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;

		ncclGroupStart();
		res = ncclSend(send, count, d->t, next, comm, stream);
		res |= ncclRecv(recv, count, d->t, prev, comm, stream);
		res |= ncclGroupEnd();
		finish(res, what, recv, count * es);
		host = fetch(recv, count * es);
		expect_block(d, host, 0, count, value, -1, prev * 100, what);
		free(host);
	}
	cudaFree(send);
	cudaFree(recv);
}

/* Half and bfloat16 sums that must round to nearest even: rank 0 and 1 give, the others 0. */
static void check_rounding(ncclComm_t comm)
{
	static const struct {
		ncclDataType_t t;
		uint16_t a[2], b[2], want[2];
	} cases[] = {
		/* 2048 + 1 -> 2048 (even), 2050 + 1 -> 2052 (even) */
		{ ncclFloat16, { 0x6800, 0x6801 }, { 0x3c00, 0x3c00 }, { 0x6800, 0x6802 } },
		/* 256 + 1 -> 256, 258 + 1 -> 260 */
		{ ncclBfloat16, { 0x4380, 0x4381 }, { 0x3f80, 0x3f80 }, { 0x4380, 0x4382 } },
	};
	uint16_t *buf = dev_alloc(4), host[2];
	size_t c;

	for (c = 0; c < 2; c++) {
		const uint16_t zero[2] = { 0, 0 };

		upload(buf, rank == 0 ? cases[c].a : rank == 1 ? cases[c].b : zero, 4);
		finish(ncclAllReduce(buf, buf, 2, cases[c].t, ncclSum, comm, stream), "rounding", NULL, 0);
		CUDA(cudaMemcpy(host, buf, 4, cudaMemcpyDeviceToHost));
		CHECK(host[0] == cases[c].want[0] && host[1] == cases[c].want[1],
		      "%s sum rounding: %#x %#x, expected %#x %#x (nearest even)",
		      c ? "bfloat16" : "float16", host[0], host[1], cases[c].want[0], cases[c].want[1]);
	}
	cudaFree(buf);
}

static void check_api(ncclComm_t comm)
{
	int (*marker)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gdrb_simnccl_simulated");
	int v = 0, dev = -1, ndev = 0;
	void *buf = dev_alloc(64);
	ncclUniqueId bad;
	ncclComm_t other;

	CHECK(marker && marker() == 1, "gdrb_simnccl_simulated: missing or not 1");
	CHECK(ncclGetVersion(&v) == ncclSuccess && v == NCCL_VERSION_CODE, "ncclGetVersion: %d", v);
	CHECK(ncclCommCount(comm, &v) == ncclSuccess && v == nranks, "ncclCommCount: %d", v);
	CHECK(ncclCommUserRank(comm, &v) == ncclSuccess && v == rank, "ncclCommUserRank: %d", v);
	CUDA(cudaGetDeviceCount(&ndev));
	CHECK(ncclCommCuDevice(comm, &dev) == ncclSuccess && dev == rank % ndev, "ncclCommCuDevice: %d", dev);
	CHECK(!strcmp(ncclGetErrorString(ncclRemoteError),
		      "remote process exited or there was a network error"), "ncclGetErrorString");

	/* Bad arguments: ncclInvalidArgument, and nothing issued (the peers issue nothing either). */
	CHECK(ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, NULL, stream) == ncclInvalidArgument, "null comm");
	CHECK(ncclAllReduce(buf, buf, 4, (ncclDataType_t)10, ncclSum, comm, stream) == ncclInvalidArgument,
	      "fp8 (not simulated)");
	CHECK(ncclAllReduce(buf, buf, 4, ncclNumTypes, ncclSum, comm, stream) == ncclInvalidArgument, "bad type");
	CHECK(ncclAllReduce(buf, buf, 4, ncclFloat, ncclNumOps, comm, stream) == ncclInvalidArgument, "bad op");
	CHECK(ncclBroadcast(buf, buf, 4, ncclFloat, nranks, comm, stream) == ncclInvalidArgument, "bad root");
	CHECK(ncclReduce(buf, buf, 4, ncclFloat, ncclSum, -1, comm, stream) == ncclInvalidArgument, "bad root");
	CHECK(ncclSend(buf, 4, ncclFloat, nranks, comm, stream) == ncclInvalidArgument, "bad peer");
	CHECK(ncclRecv(buf, 4, ncclFloat, -1, comm, stream) == ncclInvalidArgument, "bad peer");
	CHECK(strstr(ncclGetLastError(NULL), "invalid peer") != NULL, "ncclGetLastError: %s",
	      ncclGetLastError(NULL));
	CHECK(ncclGroupEnd() == ncclInvalidUsage, "ncclGroupEnd outside a group");
	memset(&bad, 'x', sizeof(bad));
	CHECK(ncclCommInitRank(&other, nranks, bad, rank) == ncclInvalidArgument, "a forged unique id");
	cudaFree(buf);
}

static int run_check(ncclComm_t comm)
{
	static const size_t counts[] = { 0, 1, 3001 };
	size_t d, c;
	int op, ip;

	check_api(comm);
	check_rounding(comm);
	for (d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++)
		for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			for (ip = 0; ip < 2; ip++) {
				for (op = 0; op < 5; op++)
					check_reducing(comm, &dtypes[d], op, counts[c], ip);
				check_copying(comm, &dtypes[d], counts[c], ip);
			}
			check_p2p(comm, &dtypes[d], counts[c]);
		}
	return 0;
}

/* ------------------------------------------------------------------------- */
/* The other modes                                                            */

static void run_big(ncclComm_t comm)
{
	const struct dtype *d = &dtypes[7];     /* float32 */
	size_t count = (96u << 20) / 4, n = (size_t)nranks, r;
	void *buf = dev_alloc(count * 4), *all = dev_alloc(n * (count / n) * 4);
	char *host;

	fill(d, buf, 0, count, ncclSum, rank);
	finish(ncclAllReduce(buf, buf, count, d->t, ncclSum, comm, stream), "big AllReduce", NULL, 0);
	host = fetch(buf, count * 4);
	expect_block(d, host, 0, count, want_reduced, ncclSum, 0, "big AllReduce");
	free(host);
	fill(d, buf, 0, count / n, -1, rank);
	finish(ncclAllGather(buf, all, count / n, d->t, comm, stream), "big AllGather", NULL, 0);
	host = fetch(all, n * (count / n) * 4);
	for (r = 0; r < n; r++)
		expect_block(d, host, r * (count / n), count / n, value, -1, (int)r, "big AllGather");
	free(host);
	cudaFree(buf);
	cudaFree(all);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* SIMNCCL_DELAY_US is large here: the call returns at once, the stream is busy, the bytes late. */
static void run_nosync(ncclComm_t comm, bool sync)
{
	const struct dtype *d = &dtypes[7];
	size_t count = 1024;
	void *send = dev_alloc(count * 4), *recv = dev_alloc(count * 4);
	struct timespec t0;
	ncclResult_t res;
	double ms;
	char *host;

	fill(d, send, 0, count, ncclSum, rank);
	sentinel(recv, count * 4);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	res = ncclAllReduce(send, recv, count, d->t, ncclSum, comm, stream);
	ms = ms_since(&t0);
	CHECK(res == ncclSuccess, "AllReduce: %s", ncclGetErrorString(res));
	CHECK(ms < 50, "ncclAllReduce took %.1f ms: not asynchronous", ms);
	CHECK(cudaStreamQuery(stream) == cudaErrorNotReady, "the stream is idle right after the call");
	if (sync)
		CUDA(cudaStreamSynchronize(stream));
	/* The legacy stream does not wait for a non-blocking one. */
	host = fetch(recv, count * 4);
	expect_block(d, host, 0, count, want_reduced, ncclSum, 0, sync ? "synchronised AllReduce"
								      : "AllReduce read without synchronising");
	free(host);
	CUDA(cudaStreamSynchronize(stream));
}

/* SIMNCCL_FAIL_AFTER=2 SIMNCCL_FAIL_RANK=1: the third operation fails on rank 1. */
static int run_fail(ncclComm_t comm, bool in_child)
{
	const struct dtype *d = &dtypes[2];
	size_t count = 4096;
	void *buf = dev_alloc(count * 4);
	ncclResult_t res, async = ncclSuccess;
	char *host;
	int i;

	for (i = 0; i < 3; i++) {
		fill(d, buf, 0, count, ncclSum, rank);
		res = ncclAllReduce(buf, buf, count, d->t, ncclSum, comm, stream);
		CHECK(res == ncclSuccess, "AllReduce %d: %s", i, ncclGetErrorString(res));
		CUDA(cudaStreamSynchronize(stream));
		ncclCommGetAsyncError(comm, &async);
		host = fetch(buf, count * 4);
		if (i < 2) {
			CHECK(async == ncclSuccess, "AllReduce %d: async error %d", i, async);
			expect_block(d, host, 0, count, want_reduced, ncclSum, 0, "AllReduce before the failure");
		} else if (rank == 1) {
			CHECK(async == ncclSystemError, "the failing rank's async error is %d, not ncclSystemError", async);
			CHECK(strstr(ncclGetLastError(comm), "injected by simnccl") != NULL,
			      "ncclGetLastError: '%s'", ncclGetLastError(comm));
			/* Completed without data: the buffer is as it was. */
			expect_block(d, host, 0, count, value, ncclSum, rank, "the failed AllReduce's buffer");
			CHECK(ncclAllReduce(buf, buf, count, d->t, ncclSum, comm, stream) == ncclSystemError,
			      "a call on the failed communicator does not return its error");
		} else {
			CHECK(async == ncclRemoteError, "a peer's async error is %d, not ncclRemoteError", async);
		}
		free(host);
	}
	cudaFree(buf);
	if (in_child)
		_exit(failures ? 1 : 0);        /* no abort, no destroy: peers see the process gone */
	ncclCommAbort(comm);
	return 0;
}

static ncclComm_t init_comm(ncclUniqueId id, int dev)
{
	ncclComm_t comm = NULL;
	ncclResult_t res;

	CUDA(cudaSetDevice(dev));
	CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	res = ncclCommInitRank(&comm, nranks, id, rank);
	if (res) {
		fprintf(stderr, "rank %d: ncclCommInitRank: %s\n", rank, ncclGetErrorString(res));
		exit(1);
	}
	return comm;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "check";
	bool flag = argc > 2;
	int ndev = 1, total = 0;
	ncclUniqueId id;
	ncclComm_t comm;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (rank == 0 && ncclGetUniqueId(&id)) {
		fprintf(stderr, "ncclGetUniqueId failed\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);

	if (!strcmp(mode, "fail") && flag && rank == 1) {
		/* The failing rank's NCCL lives in a child that exits: the peers must notice. */
		pid_t pid = fork();
		int status = 1;

		if (pid == 0) {
			CUDA(cudaGetDeviceCount(&ndev));
			run_fail(init_comm(id, rank % ndev), true);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			CHECK(0, "the failing child: status %#x", status);
		goto out;
	}
	CUDA(cudaGetDeviceCount(&ndev));
	if (!strcmp(mode, "dupgpu")) {
		ncclResult_t res;

		CUDA(cudaSetDevice(0));
		res = ncclCommInitRank(&comm, nranks, id, rank);
		CHECK(res == ncclInvalidUsage, "two ranks on one GPU: %s, not ncclInvalidUsage",
		      ncclGetErrorString(res));
		CHECK(strstr(ncclGetLastError(NULL), "Duplicate GPU detected") != NULL,
		      "ncclGetLastError: '%s'", ncclGetLastError(NULL));
		goto out;
	}
	comm = init_comm(id, rank % ndev);
	plant = !strcmp(mode, "check") && flag;
	if (!strcmp(mode, "check"))
		run_check(comm);
	else if (!strcmp(mode, "big"))
		run_big(comm);
	else if (!strcmp(mode, "nosync"))
		run_nosync(comm, flag);
	else if (!strcmp(mode, "fail")) {
		run_fail(comm, false);
		goto out;
	} else if (!strcmp(mode, "log")) {
		void *buf = dev_alloc(4096);

		finish(ncclAllReduce(buf, buf, 1024, ncclFloat, ncclSum, comm, stream), "AllReduce", NULL, 0);
		cudaFree(buf);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		failures++;
	}
	CHECK(ncclCommFinalize(comm) == ncclSuccess, "ncclCommFinalize");
	CHECK(ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
out:
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("simnccl_check %s%s: %d ranks, %d failed checks\n", mode, flag ? " (flag)" : "",
		       nranks, total);
	MPI_Finalize();
	return total ? 1 : 0;
}
