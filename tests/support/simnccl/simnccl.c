/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simnccl: a simulated NCCL for gdrbench's test suite. Built as libnccl.so.2
 * against the real nccl.h and put in front of the real library with
 * LD_LIBRARY_PATH; never installed. It implements exactly the calls gdrbench
 * makes, for ranks that share one machine:
 *  - the ranks of a communicator meet in a POSIX shared-memory segment named
 *    by the unique id, and real bytes move through it in bounded chunks;
 *  - user buffers are (simulated) device memory, read and written only with
 *    the CUDA runtime, by a worker thread of the communicator;
 *  - every operation is asynchronous on the user's stream: a host function
 *    (cudaLaunchHostFunc) hands it to the worker and waits, after a modelled
 *    delay, so a caller that does not synchronise reads stale bytes;
 *  - argument errors, a duplicate GPU, an injected failure, a peer that
 *    aborts or dies end as NCCL ends them, with its error codes;
 *  - the INFO log carries NCCL's own lines (version, ring connections) for a
 *    topology the environment describes.
 * It proves behaviour, never speed. Configuration: tests/support/simnccl/README.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nccl_plain.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define ID_PREFIX "/simnccl-"
#define ID_HEX 32               /* random hex digits after the prefix */
#define SEG_MAGIC 0x53494d4e43434c31ull /* "SIMNCCL1" */
#define MAX_RANKS 64
#define DEF_CHUNK (1u << 20)
#define DEF_DELAY_US 300
#define POLL_MS 20              /* a waiter looks at its peers this often */
#define INIT_TIMEOUT_S 120      /* every rank must join within this */

/* ------------------------------------------------------------------------- */
/* The shared segment                                                         */

enum rank_state { RS_ABSENT, RS_JOINED, RS_DEPARTED, RS_ABORTED };

struct seg_rank {
	_Atomic int state;
	_Atomic int pid;
	_Atomic uint64_t arrived;       /* the last collective phase this rank finished writing */
	int cuda_dev;
	char bus_id[16];
	char host[64];                  /* gethostname: NCCL's duplicate check is per host (hostHash) */
	char pad[16];
};

/* One direction of one pair: a byte ring, written by the sender, drained by the receiver. */
struct mbox {
	_Atomic uint64_t posted, consumed;
	char pad[48];
};

struct seg {
	uint64_t magic;
	_Atomic int nranks;             /* set by the first rank to arrive; the others must agree */
	_Atomic uint32_t chunk;         /* likewise */
	_Atomic uint32_t doorbell;      /* bumped on every change; waiters futex-wait on it */
	_Atomic int joined;
	struct seg_rank rank[];
};

/* ------------------------------------------------------------------------- */
/* Communicators and operations                                               */

enum op_kind { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCE_SCATTER, OP_BROADCAST, OP_REDUCE,
	       OP_SEND, OP_RECV };

static const char *const op_names[] = { "AllReduce", "AllGather", "ReduceScatter", "Broadcast",
					"Reduce", "Send", "Recv" };

struct op {
	enum op_kind kind;
	const char *sendbuff;
	char *recvbuff;
	size_t count;           /* elements: per rank for AllGather/ReduceScatter, as NCCL counts */
	ncclDataType_t dtype;
	ncclRedOp_t redop;
	int root;               /* or the peer of a send or receive */
	bool inject_fail;
	size_t moved;           /* send/recv: bytes through the mailbox so far */
};

struct task {
	struct task *next;
	struct ncclComm *comm;
	struct op *ops;
	int nops;
	bool done;
	bool persistent;        /* captured into a CUDA graph: run at every launch, never freed */
};

struct ncclComm {
	int rank, nranks, cuda_dev;
	char bus_id[16];
	struct seg *seg;
	size_t seg_size, chunk;
	char *slots;                    /* 2 sets x nranks x chunk: the collectives' exchange */
	char *mboxes;                   /* nranks x nranks x (header + chunk): send/recv */
	char *scratch;                  /* host: one chunk of reduced results */
	cudaStream_t copy_stream;       /* private, non-blocking: the worker's copies */
	uint64_t phase;                 /* the worker's collective phase */
	long delay_us;

	pthread_t worker;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct task *head, *tail;
	uint64_t submitted, completed;
	bool quit;

	_Atomic int async_err;
	_Atomic bool aborting;
	uint64_t nops;                  /* operations issued, for fault injection */
	long fail_after;                /* -1: none on this rank */
	bool connected;                 /* connection lines logged */
};

/* ------------------------------------------------------------------------- */
/* Logging in NCCL's formats (src/debug.cc, NCCL 2.28.9)                      */

enum { LOG_NONE, LOG_VERSION, LOG_WARN, LOG_INFO, LOG_ABORT, LOG_TRACE };
enum { SUB_INIT = 1, SUB_COLL = 2, SUB_P2P = 4, SUB_SHM = 8, SUB_NET = 16, SUB_GRAPH = 32,
       SUB_TUNING = 64, SUB_ENV = 128, SUB_ALLOC = 256, SUB_CALL = 512, SUB_PROXY = 1024,
       SUB_NVLS = 2048, SUB_BOOTSTRAP = 4096, SUB_REG = 8192, SUB_PROFILE = 16384,
       SUB_RAS = 32768, SUB_ALL = ~0 };

static struct {
	pthread_mutex_t lock;
	int level;
	unsigned long mask;
	FILE *file;
	char host[256];
	int pid;
	char last_error[1024];
} dbg = { .lock = PTHREAD_MUTEX_INITIALIZER, .level = -1 };

static const struct {
	const char *name;
	unsigned long mask;
} subsystems[] = {
	{ "INIT", SUB_INIT }, { "COLL", SUB_COLL }, { "P2P", SUB_P2P }, { "SHM", SUB_SHM },
	{ "NET", SUB_NET }, { "GRAPH", SUB_GRAPH }, { "TUNING", SUB_TUNING }, { "ENV", SUB_ENV },
	{ "ALLOC", SUB_ALLOC }, { "CALL", SUB_CALL }, { "PROXY", SUB_PROXY }, { "NVLS", SUB_NVLS },
	{ "BOOTSTRAP", SUB_BOOTSTRAP }, { "REG", SUB_REG }, { "PROFILE", SUB_PROFILE },
	{ "RAS", SUB_RAS }, { "ALL", (unsigned long)SUB_ALL },
};

/* NCCL_DEBUG_FILE with %h (host), %p (pid) and %% expanded, anything else echoed (debug.cc). */
static void expand_debug_file(const char *pattern, char *out, size_t size)
{
	size_t n = 0;

	for (; *pattern && n + 1 < size; pattern++) {
		if (*pattern != '%') {
			out[n++] = *pattern;
			continue;
		}
		pattern++;
		if (*pattern == 'h')
			n += (size_t)snprintf(out + n, size - n, "%s", dbg.host);
		else if (*pattern == 'p')
			n += (size_t)snprintf(out + n, size - n, "%d", dbg.pid);
		else if (*pattern == '%')
			out[n++] = '%';
		else {
			out[n++] = '%';
			if (!*pattern)
				break;
			if (n + 1 < size)
				out[n++] = *pattern;
		}
		if (n >= size)
			n = size - 1;
	}
	out[n] = '\0';
}

/* Under dbg.lock. Unset NCCL_DEBUG prints nothing, not even warnings (debug.cc). */
static void debug_init(void)
{
	static const char *const level_names[] = {
		[LOG_VERSION] = "VERSION", [LOG_WARN] = "WARN", [LOG_INFO] = "INFO",
		[LOG_ABORT] = "ABORT", [LOG_TRACE] = "TRACE",
	};
	const char *v = getenv("NCCL_DEBUG");
	char *dot;
	int level;

	dbg.level = LOG_NONE;
	for (level = LOG_VERSION; v && level <= LOG_TRACE; level++)
		if (!strcasecmp(v, level_names[level]))
			dbg.level = level;

	dbg.mask = SUB_INIT | SUB_BOOTSTRAP | SUB_ENV;
	if ((v = getenv("NCCL_DEBUG_SUBSYS"))) {
		bool invert = *v == '^';
		char *copy = strdup(v + invert), *tok, *save = NULL;
		size_t i;

		dbg.mask = invert ? ~0ul : 0;
		for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save))
			for (i = 0; i < sizeof(subsystems) / sizeof(subsystems[0]); i++)
				if (!strcasecmp(tok, subsystems[i].name))
					dbg.mask = invert ? dbg.mask & ~subsystems[i].mask
							  : dbg.mask | subsystems[i].mask;
		free(copy);
	}

	/* getHostName(..., '.'): the name up to its first dot. */
	if (gethostname(dbg.host, sizeof(dbg.host)))
		snprintf(dbg.host, sizeof(dbg.host), "unknown");
	dbg.host[sizeof(dbg.host) - 1] = '\0';
	if ((dot = strchr(dbg.host, '.')))
		*dot = '\0';
	dbg.pid = getpid();

	dbg.file = stdout;
	if (dbg.level > LOG_VERSION && (v = getenv("NCCL_DEBUG_FILE"))) {
		char path[PATH_MAX];
		FILE *f;

		expand_debug_file(v, path, sizeof(path));
		/* As NCCL: a file that cannot be opened leaves the log on stdout. */
		if (path[0] && (f = fopen(path, "w"))) {
			setlinebuf(f);
			dbg.file = f;
		}
	}
}

static void nlog(int level, unsigned long flags, int dev, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void nlog(int level, unsigned long flags, int dev, const char *where, const char *fmt, ...)
{
	char line[1200];
	size_t n = 0;
	va_list ap;

	pthread_mutex_lock(&dbg.lock);
	if (dbg.level < 0)
		debug_init();
	/* ncclGetLastError: the last warning, printed or not. */
	if (level == LOG_WARN) {
		va_start(ap, fmt);
		vsnprintf(dbg.last_error, sizeof(dbg.last_error), fmt, ap);
		va_end(ap);
	}
	if (dbg.level < level || !(flags & dbg.mask)) {
		pthread_mutex_unlock(&dbg.lock);
		return;
	}
	if (level == LOG_WARN) {
		/* A leading newline and a timestamp, NCCL's default for warnings. */
		time_t t = time(NULL);
		struct tm tm;

		line[n++] = '\n';
		localtime_r(&t, &tm);
		n += strftime(line + n, sizeof(line) - n, "[%F %T] ", &tm);
	}
	if (level != LOG_VERSION)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s:%d:%ld ", dbg.host, dbg.pid,
				      (long)syscall(SYS_gettid));
	if (level == LOG_WARN)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "[%d] %s NCCL WARN ", dev, where);
	else if (level == LOG_INFO)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "[%d] NCCL INFO ", dev);
	if (n < sizeof(line)) {
		va_start(ap, fmt);
		n += (size_t)vsnprintf(line + n, sizeof(line) - n, fmt, ap);
		va_end(ap);
	}
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	fwrite(line, 1, n, dbg.file);
	fflush(dbg.file);
	pthread_mutex_unlock(&dbg.lock);
}

static int current_dev(void)
{
	int dev = 0;

	(void)cudaGetDevice(&dev);
	return dev;
}

#define STR2(x) #x
#define STR(x) STR2(x)
#define WARN(dev, ...) nlog(LOG_WARN, (unsigned long)SUB_ALL, dev, "simnccl.c:" STR(__LINE__), __VA_ARGS__)
#define INFO(flags, dev, ...) nlog(LOG_INFO, flags, dev, NULL, __VA_ARGS__)

/* ------------------------------------------------------------------------- */
/* Environment                                                                */

static long env_long(const char *name, long def, long min, long max)
{
	const char *v = getenv(name);
	char *end;
	long l;

	if (!v || !*v)
		return def;
	errno = 0;
	l = strtol(v, &end, 10);
	if (errno || *end || l < min || l > max) {
		WARN(current_dev(), "simnccl: %s=%s is not a number in %ld..%ld, using %ld", name, v,
		     min, max, def);
		return def;
	}
	return l;
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcasecmp(v, value);
}

/* ------------------------------------------------------------------------- */
/* Waiting on the segment                                                     */

static void ring_doorbell(struct seg *seg)
{
	atomic_fetch_add_explicit(&seg->doorbell, 1, memory_order_acq_rel);
	syscall(SYS_futex, &seg->doorbell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void wait_doorbell(struct seg *seg, uint32_t seen)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = POLL_MS * 1000000L };

	syscall(SYS_futex, &seg->doorbell, FUTEX_WAIT, seen, &ts, NULL, 0);
}

/* A peer that cannot take part any more: aborted, gone, or its process dead. */
static bool peer_lost(const struct ncclComm *comm, int peer)
{
	const struct seg_rank *r = &comm->seg->rank[peer];
	int state = atomic_load(&r->state);
	int pid = atomic_load(&r->pid);

	if (peer == comm->rank)
		return false;
	if (state == RS_ABORTED || state == RS_DEPARTED)
		return true;
	return pid > 0 && kill(pid, 0) && errno == ESRCH;
}

/*
 * Wait until ready(arg), or until a peer in peers[0..*npeers) (all ranks when
 * peers is NULL) is lost or this communicator is aborted. ready() may shrink
 * the list to the peers still waited for: one that finished its part and left
 * is no loss. Returns ncclSuccess, ncclRemoteError (a peer) or
 * ncclInternalError (aborted here).
 */
static ncclResult_t wait_for(struct ncclComm *comm, bool (*ready)(struct ncclComm *, void *),
			     void *arg, const int *peers, const int *npeers)
{
	for (;;) {
		uint32_t seen = atomic_load(&comm->seg->doorbell);
		int i, n;

		if (ready(comm, arg))
			return ncclSuccess;
		if (atomic_load(&comm->aborting))
			return ncclInternalError;
		n = peers ? *npeers : comm->nranks;
		for (i = 0; i < n; i++) {
			int peer = peers ? peers[i] : i;

			/* A peer that left after its last post: what it posted is still there. */
			if (peer_lost(comm, peer)) {
				if (ready(comm, arg))
					return ncclSuccess;
				WARN(comm->cuda_dev, "simnccl: rank %d: peer rank %d aborted or exited "
				     "(pid %d)", comm->rank, peer, atomic_load(&comm->seg->rank[peer].pid));
				return ncclRemoteError;
			}
		}
		wait_doorbell(comm->seg, seen);
	}
}

/* ------------------------------------------------------------------------- */
/* Element types and reductions                                               */

static size_t type_size(ncclDataType_t t)
{
	switch (t) {
	case ncclInt8: case ncclUint8: return 1;
	case ncclFloat16: case ncclBfloat16: return 2;
	case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
	case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
	default: return 0;      /* the fp8 types and anything else: not simulated */
	}
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
	float f;

	if (exp == 0x1f)
		bits = sign | 0x7f800000 | (mant << 13);
	else if (exp)
		bits = sign | ((exp + 112) << 23) | (mant << 13);
	else if (mant) {
		/* Subnormal: mant x 2^-24, exact in float. */
		f = (float)mant * 0x1p-24f;
		return sign ? -f : f;
	} else
		bits = sign;
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* Round to nearest, ties to even, as the GPU's __float2half_rn. */
static uint16_t float_to_half(float f)
{
	uint32_t x, sign, absx, e, mant, r, rem, half;
	int shift;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	absx = x & 0x7fffffff;
	if (absx > 0x7f800000)
		return (uint16_t)(sign | 0x7e00);               /* NaN */
	if (absx >= 0x477ff000)
		return (uint16_t)(sign | 0x7c00);               /* 65520 and up: infinity */
	e = absx >> 23;
	mant = (absx & 0x7fffff) | 0x800000;
	if (e < 113) {
		/* Below 2^-14: a subnormal half, in units of 2^-24. */
		shift = 126 - (int)e;
		if (shift > 24)
			return (uint16_t)sign;
		r = mant >> shift;
		rem = mant & ((1u << shift) - 1);
		half = 1u << (shift - 1);
	} else {
		r = ((e - 112) << 10) | ((absx & 0x7fffff) >> 13);
		rem = absx & 0x1fff;
		half = 0x1000;
	}
	if (rem > half || (rem == half && (r & 1)))
		r++;                                            /* a carry into the exponent is right */
	return (uint16_t)(sign | r);
}

static float bf16_to_float(uint16_t b)
{
	uint32_t bits = (uint32_t)b << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static uint16_t float_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);            /* NaN stays NaN */
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

/*
 * dst[i] = op over r of src[r][i], in rank order. Integers wrap as the GPU's
 * do (the arithmetic is done in WRAP, unsigned); their average truncates toward zero
 * (NCCL's FuncSumPostDiv). Floating types accumulate in their own type, half
 * and bfloat16 in float, rounded once to nearest even.
 */
#define REDUCE(name, T, ACC, WRAP, LOAD, STORE)						\
static void name(void *dst, char *const *src, int nsrc, size_t n, ncclRedOp_t op)	\
{											\
	size_t i;									\
	int r;										\
											\
	for (i = 0; i < n; i++) {							\
		ACC acc = LOAD(((const T *)(const void *)src[0])[i]);			\
											\
		for (r = 1; r < nsrc; r++) {						\
			ACC v = LOAD(((const T *)(const void *)src[r])[i]);		\
											\
			if (op == ncclSum || op == ncclAvg)				\
				acc = (ACC)(WRAP)((WRAP)acc + (WRAP)v);			\
			else if (op == ncclProd)					\
				acc = (ACC)(WRAP)((WRAP)acc * (WRAP)v);			\
			else if (op == ncclMin)						\
				acc = v < acc ? v : acc;				\
			else								\
				acc = v > acc ? v : acc;				\
		}									\
		if (op == ncclAvg)							\
			acc = (ACC)(acc / (ACC)nsrc);					\
		((T *)dst)[i] = STORE(acc);						\
	}										\
}

#define SAME(x) (x)
REDUCE(reduce_i8, int8_t, int8_t, uint8_t, SAME, SAME)
REDUCE(reduce_u8, uint8_t, uint8_t, uint8_t, SAME, SAME)
REDUCE(reduce_i32, int32_t, int32_t, uint32_t, SAME, SAME)
REDUCE(reduce_u32, uint32_t, uint32_t, uint32_t, SAME, SAME)
REDUCE(reduce_i64, int64_t, int64_t, uint64_t, SAME, SAME)
REDUCE(reduce_u64, uint64_t, uint64_t, uint64_t, SAME, SAME)
REDUCE(reduce_f32, float, float, float, SAME, SAME)
REDUCE(reduce_f64, double, double, double, SAME, SAME)
REDUCE(reduce_f16, uint16_t, float, float, half_to_float, float_to_half)
REDUCE(reduce_bf16, uint16_t, float, float, bf16_to_float, float_to_bf16)

static void reduce(ncclDataType_t t, ncclRedOp_t op, void *dst, char *const *src, int nsrc, size_t n)
{
	static void (*const by_type[])(void *, char *const *, int, size_t, ncclRedOp_t) = {
		[ncclInt8] = reduce_i8, [ncclUint8] = reduce_u8, [ncclInt32] = reduce_i32,
		[ncclUint32] = reduce_u32, [ncclInt64] = reduce_i64, [ncclUint64] = reduce_u64,
		[ncclFloat32] = reduce_f32, [ncclFloat64] = reduce_f64, [ncclFloat16] = reduce_f16,
		[ncclBfloat16] = reduce_bf16,
	};

	if ((unsigned)t < sizeof(by_type) / sizeof(by_type[0]) && by_type[t])
		by_type[t](dst, src, nsrc, n, op);
}

/* ------------------------------------------------------------------------- */
/* Moving bytes: the worker's copies, on its own stream                       */

/*
 * Between the user's buffer and the shared segment. The user's buffer may be device or pinned
 * host memory (NCCL's kernels reach both), so the runtime tells the direction
 * (cudaMemcpyDefault, as unified addressing allows).
 */
static ncclResult_t copy(struct ncclComm *comm, void *dst, const void *src, size_t len)
{
	cudaError_t err;

	if (!len)
		return ncclSuccess;
	err = cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, comm->copy_stream);
	if (!err)
		err = cudaStreamSynchronize(comm->copy_stream);
	if (err) {
		WARN(comm->cuda_dev, "Cuda failure '%s'", cudaGetErrorString(err));
		return ncclUnhandledCudaError;
	}
	return ncclSuccess;
}

static char *slot(struct ncclComm *comm, uint64_t phase, int rank)
{
	return comm->slots + ((size_t)(phase & 1) * (size_t)comm->nranks + (size_t)rank) * comm->chunk;
}

static bool all_arrived(struct ncclComm *comm, void *arg)
{
	uint64_t phase = *(uint64_t *)arg;
	int r;

	for (r = 0; r < comm->nranks; r++)
		if (atomic_load_explicit(&comm->seg->rank[r].arrived, memory_order_acquire) < phase)
			return false;
	return true;
}

/*
 * One step of a collective: this rank has written its slot of the phase's set;
 * wait for everyone's. Two sets alternate, so one barrier a step suffices: a
 * rank writes set p%2 again at phase p+2 only after every rank arrived at p+1,
 * which each did after it had read phase p.
 */
static ncclResult_t arrive(struct ncclComm *comm, uint64_t phase)
{
	atomic_store_explicit(&comm->seg->rank[comm->rank].arrived, phase, memory_order_release);
	ring_doorbell(comm->seg);
	return wait_for(comm, all_arrived, &phase, NULL, NULL);
}

/* A collective, chunk by chunk through the slots. */
static ncclResult_t run_collective(struct ncclComm *comm, struct op *op)
{
	size_t es = type_size(op->dtype), n = (size_t)comm->nranks, per, off, len, bytes;
	char *srcs[MAX_RANKS];
	ncclResult_t res = ncclSuccess;
	size_t r;

	/* Elements a step: ReduceScatter's slot holds one piece for every rank. */
	per = comm->chunk / es / (op->kind == OP_REDUCE_SCATTER ? n : 1);
	for (off = 0; off < op->count && !res; off += len) {
		uint64_t phase = ++comm->phase;
		char *mine = slot(comm, phase, comm->rank);

		len = op->count - off < per ? op->count - off : per;
		bytes = len * es;
		switch (op->kind) {
		case OP_ALLREDUCE:
		case OP_REDUCE:
		case OP_ALLGATHER:
			res = copy(comm, mine, op->sendbuff + off * es, bytes);
			break;
		case OP_BROADCAST:
			if (comm->rank == op->root)
				res = copy(comm, mine, op->sendbuff + off * es, bytes);
			break;
		case OP_REDUCE_SCATTER:
			for (r = 0; r < n && !res; r++)
				res = copy(comm, mine + r * bytes, op->sendbuff + (r * op->count + off) * es,
					   bytes);
			break;
		default:
			break;
		}
		if (res || (res = arrive(comm, phase)))
			break;
		for (r = 0; r < n; r++)
			srcs[r] = slot(comm, phase, (int)r);
		switch (op->kind) {
		case OP_ALLREDUCE:
			reduce(op->dtype, op->redop, comm->scratch, srcs, (int)n, len);
			res = copy(comm, op->recvbuff + off * es, comm->scratch, bytes);
			break;
		case OP_REDUCE:
			if (comm->rank != op->root)
				break;
			reduce(op->dtype, op->redop, comm->scratch, srcs, (int)n, len);
			res = copy(comm, op->recvbuff + off * es, comm->scratch, bytes);
			break;
		case OP_BROADCAST:
			res = copy(comm, op->recvbuff + off * es, srcs[op->root], bytes);
			break;
		case OP_ALLGATHER:
			for (r = 0; r < n && !res; r++)
				res = copy(comm, op->recvbuff + (r * op->count + off) * es, srcs[r], bytes);
			break;
		case OP_REDUCE_SCATTER:
			for (r = 0; r < n; r++)
				srcs[r] += (size_t)comm->rank * bytes;
			reduce(op->dtype, op->redop, comm->scratch, srcs, (int)n, len);
			res = copy(comm, op->recvbuff + off * es, comm->scratch, bytes);
			break;
		default:
			break;
		}
	}
	return res;
}

static struct mbox *mbox_of(struct ncclComm *comm, int from, int to, char **data)
{
	char *m = comm->mboxes + ((size_t)from * (size_t)comm->nranks + (size_t)to) *
				 (sizeof(struct mbox) + comm->chunk);

	*data = m + sizeof(struct mbox);
	return (struct mbox *)(void *)m;
}

/* One step of a send or receive, as far as the mailbox allows; *moved says whether it did. */
static ncclResult_t p2p_step(struct ncclComm *comm, struct op *op, bool *moved)
{
	size_t total = op->count * type_size(op->dtype), room, at, len;
	bool send = op->kind == OP_SEND;
	uint64_t posted, consumed;
	struct mbox *mb;
	ncclResult_t res;
	char *data;

	*moved = false;
	if (op->moved == total)
		return ncclSuccess;
	mb = send ? mbox_of(comm, comm->rank, op->root, &data) : mbox_of(comm, op->root, comm->rank, &data);
	posted = atomic_load_explicit(&mb->posted, memory_order_acquire);
	consumed = atomic_load_explicit(&mb->consumed, memory_order_acquire);
	room = send ? comm->chunk - (size_t)(posted - consumed) : (size_t)(posted - consumed);
	at = (size_t)((send ? posted : consumed) % comm->chunk);
	len = total - op->moved;
	if (len > room)
		len = room;
	if (len > comm->chunk - at)
		len = comm->chunk - at;
	if (!len)
		return ncclSuccess;
	if (send) {
		res = copy(comm, data + at, op->sendbuff + op->moved, len);
		if (!res)
			atomic_store_explicit(&mb->posted, posted + len, memory_order_release);
	} else {
		res = copy(comm, op->recvbuff + op->moved, data + at, len);
		if (!res)
			atomic_store_explicit(&mb->consumed, consumed + len, memory_order_release);
	}
	if (res)
		return res;
	op->moved += len;
	*moved = true;
	ring_doorbell(comm->seg);
	return ncclSuccess;
}

struct p2p_set {
	struct op **ops;
	int nops;
	int *peers;             /* of the operations not done yet */
	int npeers;
	ncclResult_t res;
};

/* Progress every unfinished send and receive once; "ready" when all are done. */
static bool p2p_progress(struct ncclComm *comm, void *arg)
{
	struct p2p_set *set = arg;
	bool all_done, moved, any;
	int i;

	/* Until nothing moves: "not ready" then means blocked on a peer. */
	do {
		all_done = true;
		any = false;
		for (i = 0; i < set->nops && !set->res; i++) {
			struct op *op = set->ops[i];

			set->res = p2p_step(comm, op, &moved);
			any |= moved;
			if (op->moved < op->count * type_size(op->dtype))
				all_done = false;
		}
	} while (any && !all_done && !set->res);
	set->npeers = 0;
	for (i = 0; i < set->nops; i++)
		if (set->ops[i]->moved < set->ops[i]->count * type_size(set->ops[i]->dtype))
			set->peers[set->npeers++] = set->ops[i]->root;
	return all_done || set->res;
}

/*
 * The sends and receives of a group progress together, so that any order of
 * matching calls on the ranks completes (NCCL's group semantics). A waiter
 * watches only the peers it still waits for.
 */
static ncclResult_t run_p2p(struct ncclComm *comm, struct op **ops, int nops)
{
	struct p2p_set set = { .ops = ops, .nops = nops };
	ncclResult_t res;

	set.peers = malloc(sizeof(*set.peers) * (size_t)nops);
	if (!set.peers)
		return ncclSystemError;
	res = wait_for(comm, p2p_progress, &set, set.peers, &set.npeers);
	free(set.peers);
	return set.res ? set.res : res;
}

/* ------------------------------------------------------------------------- */
/* The worker                                                                 */

static void set_async_error(struct ncclComm *comm, ncclResult_t res)
{
	int expected = ncclSuccess;

	atomic_compare_exchange_strong(&comm->async_err, &expected, (int)res);
}

static void run_task(struct ncclComm *comm, struct task *task)
{
	struct op **p2p = malloc(sizeof(*p2p) * (size_t)task->nops);
	ncclResult_t res = p2p ? ncclSuccess : ncclSystemError;
	int i, np2p = 0;

	/* Results land late: a caller that does not synchronise reads stale bytes. */
	if (comm->delay_us > 0) {
		struct timespec ts = { .tv_sec = comm->delay_us / 1000000,
				       .tv_nsec = (comm->delay_us % 1000000) * 1000 };

		nanosleep(&ts, NULL);
	}
	for (i = 0; i < task->nops && !res; i++) {
		struct op *op = &task->ops[i];

		/* A communicator in error (or aborted) does no more work. */
		if (atomic_load(&comm->async_err) || atomic_load(&comm->aborting))
			break;
		if (op->inject_fail) {
			WARN(comm->cuda_dev, "simnccl: rank %d: %s failed: failure injected by simnccl "
			     "(SIMNCCL_FAIL_AFTER=%ld)", comm->rank, op_names[op->kind], comm->fail_after);
			res = ncclSystemError;
			break;
		}
		if (op->kind == OP_SEND || op->kind == OP_RECV) {
			p2p[np2p++] = op;
			continue;
		}
		res = run_collective(comm, op);
	}
	if (!res && np2p && !atomic_load(&comm->async_err) && !atomic_load(&comm->aborting))
		res = run_p2p(comm, p2p, np2p);
	free(p2p);
	if (res && !atomic_load(&comm->aborting))
		set_async_error(comm, res);
}

static void *worker_main(void *arg)
{
	struct ncclComm *comm = arg;

	(void)cudaSetDevice(comm->cuda_dev);
	pthread_mutex_lock(&comm->lock);
	for (;;) {
		struct task *task;

		while (!comm->head && !comm->quit)
			pthread_cond_wait(&comm->cond, &comm->lock);
		if (!comm->head)
			break;
		task = comm->head;
		comm->head = task->next;
		if (!comm->head)
			comm->tail = NULL;
		pthread_mutex_unlock(&comm->lock);
		run_task(comm, task);
		pthread_mutex_lock(&comm->lock);
		task->done = true;
		pthread_cond_broadcast(&comm->cond);
	}
	pthread_mutex_unlock(&comm->lock);
	return NULL;
}

/*
 * Runs on the user's stream, in its order: hands the task to the worker and
 * returns when it is done, so later work on the stream (and a synchronisation)
 * sees its results. It makes no CUDA call itself, as CUDA requires.
 */
static void replay_begin(struct task *task);
static bool replay_end(struct task *task);

static void CUDART_CB task_host_fn(void *arg)
{
	struct task *task = arg;
	struct ncclComm *comm = task->comm;

	replay_begin(task);
	pthread_mutex_lock(&comm->lock);
	if (comm->tail)
		comm->tail->next = task;
	else
		comm->head = task;
	comm->tail = task;
	pthread_cond_broadcast(&comm->cond);
	while (!task->done)
		pthread_cond_wait(&comm->cond, &comm->lock);
	comm->completed++;
	pthread_cond_broadcast(&comm->cond);
	pthread_mutex_unlock(&comm->lock);
	if (replay_end(task))
		return;
	free(task->ops);
	free(task);
}

/* ------------------------------------------------------------------------- */
/* CUDA graphs and the launch's cost                                          */

/*
 * A call issued on a stream being captured (cudaStreamBeginCapture) becomes a
 * task that runs at every launch of the graph: counted as submitted when it
 * starts, kept for the next launch when it ends. A real NCCL's captured
 * kernels are replayed the same way; simnccl never frees such a task (it is
 * not told when the graph goes).
 */
static bool captured(cudaStream_t stream)
{
	enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;

	return !cudaStreamIsCapturing(stream, &status) && status == cudaStreamCaptureStatusActive;
}

static void replay_begin(struct task *task)
{
	if (!task->persistent)
		return;
	pthread_mutex_lock(&task->comm->lock);
	task->comm->submitted++;
	task->done = false;
	task->next = NULL;
	pthread_mutex_unlock(&task->comm->lock);
}

static bool replay_end(struct task *task)
{
	return task->persistent;
}

/*
 * SIMNCCL_LAUNCH_US: what issuing one operation (a call, or a group at its
 * ncclGroupEnd) costs the calling thread, as a real NCCL's kernel launch
 * does; a captured call pays it once, at capture.
 */
static void launch_cost(void)
{
	static long us = -1;
	struct timespec ts;

	if (us < 0)
		us = env_long("SIMNCCL_LAUNCH_US", 0, 0, 10000000);
	if (!us)
		return;
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (us % 1000000) * 1000;
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------- */
/* The ring's connection lines, at the first operation (NCCL >= 2.22 connects */
/* at run time)                                                               */

struct topo {
	int per_node, channels;
	bool p2p, shm, gdr;
	const char *net;
};

static struct topo topo_from_env(int nranks)
{
	struct topo t;
	const char *lvl = getenv("NCCL_NET_GDR_LEVEL");
	const char *net = getenv("SIMNCCL_NET");
	bool ib = !(net && !strcasecmp(net, "Socket")) && !env_is("NCCL_NET", "Socket") &&
		  !env_is("NCCL_IB_DISABLE", "1");

	if (net && strcasecmp(net, "IB") && strcasecmp(net, "Socket"))
		WARN(current_dev(), "simnccl: SIMNCCL_NET=%s is not IB or Socket, using IB", net);
	t.per_node = (int)env_long("SIMNCCL_RANKS_PER_NODE", nranks, 1, INT_MAX);
	t.channels = (int)env_long("SIMNCCL_CHANNELS", 2, 1, 64);
	t.p2p = !env_is("NCCL_P2P_DISABLE", "1");
	t.shm = !env_is("NCCL_SHM_DISABLE", "1");
	t.net = ib ? "IB" : "Socket";
	/* GPUDirect RDMA: an IB NIC that offers it, not refused by NCCL_NET_GDR_LEVEL=LOC (or 0). */
	t.gdr = ib && env_long("SIMNCCL_NIC_GDR", 1, 0, 1) &&
		!(lvl && (!strcasecmp(lvl, "LOC") || !strcmp(lvl, "0")));
	return t;
}

/* The transport from a to b: 0 P2P, 1 SHM, 2 NET (NCCL tries them in that order). */
static int transport(const struct topo *t, int a, int b)
{
	if (a / t->per_node != b / t->per_node)
		return 2;
	return t->p2p ? 0 : t->shm ? 1 : 2;
}

static void log_connections(struct ncclComm *comm)
{
	struct topo t = topo_from_env(comm->nranks);
	int me = comm->rank, n = comm->nranks, next = (me + 1) % n, prev = (me + n - 1) % n;
	int dev = comm->cuda_dev, c, r;
	bool gdr = true;
	/* Legacy IPC names P2P only when cuMem is off (src/transport/p2p.cc). */
	const char *p2p = env_is("NCCL_CUMEM_ENABLE", "0") ? "IPC" : "CUMEM";

	/*
	 * The IB plugin's device lines (src/transport/net_ib/init.cc, NCCL 2.30): the device's
	 * speed where SIMNCCL_NIC_MBPS gives one (INFO from 2.27; before, TRACE only), then
	 * the devices it uses, SIMNCCL_NIC (default mlx5_0) port 1 as device 0.
	 */
	if (!strcmp(t.net, "IB")) {
		const char *nic = getenv("SIMNCCL_NIC"), *hca = getenv("NCCL_IB_HCA");
		long mbps = env_long("SIMNCCL_NIC_MBPS", 0, 0, 100000000);
		char exact[16];

		/* NCCL_IB_HCA "=NAME" or "=NAME:PORT" (one device, NCCL's exact match) is the device
		 * used, as NCCL would on a node that has it; SIMNCCL_NIC stands for a NCCL that
		 * ignored it. */
		if ((!nic || !*nic) && hca && hca[0] == '=' && !strchr(hca, ',') && strcspn(hca + 1, ":") < sizeof(exact) &&
		    strcspn(hca + 1, ":") > 0) {
			snprintf(exact, sizeof(exact), "%.*s", (int)strcspn(hca + 1, ":"), hca + 1);
			nic = exact;
		}
		if (!nic || !*nic || strlen(nic) > 15)
			nic = "mlx5_0";
		if (mbps)
			INFO(SUB_NET, dev, "NET/IB: [0] %s:uverbs0:1/IB provider=Mlx5 speed=%ld context=0x1 pciPath=/sys/devices/pci0000:00/0000:00:02.0 ar=1 oooRqSize=0",
			     nic, mbps);
		INFO(SUB_INIT | SUB_NET, dev, "NET/IB : Using [0]%s:1/IB [RO]; OOB eth0:10.0.0.1<0>", nic);
	}
	for (c = 0; c < t.channels && n > 1; c++) {
		/* Receive setup first, then send (src/transport.cc, ncclTransportP2pSetup). */
		if (transport(&t, prev, me) == 2)
			/* src/transport/net.cc:359 (NCCL 2.28.9), recvSetup */
			INFO(SUB_INIT | SUB_NET, dev, "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s",
			     c, 0, prev, comm->seg->rank[prev].cuda_dev, me, dev, t.net, 0,
			     t.gdr ? "/GDRDMA" : "", "", "");
		switch (transport(&t, me, next)) {
		case 0:
			/* src/transport/p2p.cc:393 and :398, p2pSendSetup */
			INFO(SUB_INIT | SUB_P2P, dev, "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s",
			     c, 0, me, dev, next, comm->seg->rank[next].cuda_dev, p2p);
			break;
		case 1:
			/* src/transport/shm.cc:128, shmSendSetup */
			INFO(SUB_INIT | SUB_SHM, dev, "Channel %02d : %d[%d] -> %d[%d] via SHM/%s/%s",
			     c, me, dev, next, comm->seg->rank[next].cuda_dev, "direct", "direct");
			break;
		default:
			/* src/transport/net.cc:313, sendSetup */
			INFO(SUB_INIT | SUB_NET, dev, "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s",
			     c, 0, me, dev, next, comm->seg->rank[next].cuda_dev, t.net, 0,
			     t.gdr ? "/GDRDMA" : "", "", "");
			break;
		}
	}
	/* GDR 0 as soon as any rank's ring uses the network without it (generic.cc's allgather). */
	for (r = 0; r < n && n > 1; r++)
		if (transport(&t, r, (r + 1) % n) == 2 && !t.gdr)
			gdr = false;
	/* src/transport/generic.cc:37 (NCCL 2.28.9) */
	INFO(SUB_INIT, dev, "Connected all rings, use ring PXN %d GDR %d", 0, gdr);
}

/* ------------------------------------------------------------------------- */
/* Issuing operations: groups and the stream                                  */

static _Thread_local struct {
	int depth;
	struct op *ops;
	struct ncclComm **comms;
	cudaStream_t *streams;
	int n, cap;
} group;

static ncclResult_t submit(struct ncclComm *comm, cudaStream_t stream, struct op *ops, int nops)
{
	struct task *task = calloc(1, sizeof(*task));
	cudaError_t err;

	if (!task) {
		free(ops);
		return ncclSystemError;
	}
	task->comm = comm;
	task->ops = ops;
	task->nops = nops;
	task->persistent = captured(stream);
	launch_cost();
	if (!comm->connected) {
		comm->connected = true;
		log_connections(comm);
	}
	pthread_mutex_lock(&comm->lock);
	comm->submitted += !task->persistent;
	pthread_mutex_unlock(&comm->lock);
	err = cudaLaunchHostFunc(stream, task_host_fn, task);
	if (err) {
		pthread_mutex_lock(&comm->lock);
		comm->submitted -= !task->persistent;
		pthread_cond_broadcast(&comm->cond);
		pthread_mutex_unlock(&comm->lock);
		free(ops);
		free(task);
		WARN(comm->cuda_dev, "Cuda failure '%s'", cudaGetErrorString(err));
		return ncclUnhandledCudaError;
	}
	return ncclSuccess;
}

/* ncclCommEnsureReady (src/init.cc): a communicator in error answers with its error. */
static ncclResult_t comm_ready(struct ncclComm *comm)
{
	return (ncclResult_t)atomic_load(&comm->async_err);
}

/* Argument checks (src/misc/argcheck.cc, NCCL 2.28.9), then issue or add to the group. */
/*
 * Rank 0's TUNING line for a collective call, in the form of NCCL 2.24 on (src/enqueue.cc):
 * the algorithm SIMNCCL_ALGO names (default RING, as ncclAlgoToString spells it), protocol
 * SIMPLE, channels 0..SIMNCCL_CHANNELS-1. Nothing is chosen: the line only says what is set.
 */
static void log_tuning(const struct ncclComm *comm, const struct op *op)
{
	const char *algo = getenv("SIMNCCL_ALGO");
	long channels = env_long("SIMNCCL_CHANNELS", 2, 1, 64);

	if (comm->rank != 0)
		return;
	INFO(SUB_TUNING, comm->cuda_dev, "%s: %zu Bytes -> Algo %s proto SIMPLE channel{Lo..Hi}={0..%ld}",
	     op_names[op->kind], op->count * type_size(op->dtype), algo && *algo ? algo : "RING", channels - 1);
}

static ncclResult_t issue(struct op *op, struct ncclComm *comm, cudaStream_t stream)
{
	const char *name = op_names[op->kind];
	bool p2p = op->kind == OP_SEND || op->kind == OP_RECV;
	bool rooted = op->kind == OP_BROADCAST || op->kind == OP_REDUCE;
	bool reducing = op->kind == OP_ALLREDUCE || op->kind == OP_REDUCE ||
			op->kind == OP_REDUCE_SCATTER;
	ncclResult_t res;
	struct op *one;

	if (!comm) {
		WARN(current_dev(), "%s : comm argument is NULL", name);
		return ncclInvalidArgument;
	}
	if ((res = comm_ready(comm)))
		return res;
	if (!type_size(op->dtype)) {
		WARN(comm->cuda_dev, "%s : invalid type %d", name, (int)op->dtype);
		return ncclInvalidArgument;
	}
	if (reducing && ((int)op->redop < 0 || op->redop >= ncclNumOps)) {
		WARN(comm->cuda_dev, "%s : invalid reduction operation %d", name, (int)op->redop);
		return ncclInvalidArgument;
	}
	if ((rooted || p2p) && (op->root < 0 || op->root >= comm->nranks)) {
		if (p2p)
			WARN(comm->cuda_dev, "%s : invalid peer %d (peer should be in the 0..%d range)",
			     name, op->root, comm->nranks);
		else
			WARN(comm->cuda_dev, "%s : invalid root %d (root should be in the 0..%d range)",
			     name, op->root, comm->nranks);
		return ncclInvalidArgument;
	}
	if (op->count && ((!op->sendbuff && op->kind != OP_RECV &&
			   !(op->kind == OP_BROADCAST && comm->rank != op->root)) ||
			  (!op->recvbuff && op->kind != OP_SEND &&
			   !(op->kind == OP_REDUCE && comm->rank != op->root)))) {
		WARN(comm->cuda_dev, "%s : buffer argument is NULL", name);
		return ncclInvalidArgument;
	}
	if (op->count > SIZE_MAX / type_size(op->dtype) / (size_t)comm->nranks) {
		WARN(comm->cuda_dev, "%s : count %zu is too large", name, op->count);
		return ncclInvalidArgument;
	}
	/* SIMNCCL_FAIL_AFTER=N: this rank's (N+1)-th operation fails. */
	op->inject_fail = comm->fail_after >= 0 && comm->nops++ == (uint64_t)comm->fail_after;
	if (!p2p)
		log_tuning(comm, op);

	if (group.depth) {
		if (group.n == group.cap) {
			int cap = group.cap ? 2 * group.cap : 16;
			struct op *ops = realloc(group.ops, sizeof(*ops) * (size_t)cap);
			struct ncclComm **comms;
			cudaStream_t *streams;

			if (ops)
				group.ops = ops;
			comms = realloc(group.comms, sizeof(*comms) * (size_t)cap);
			if (comms)
				group.comms = comms;
			streams = realloc(group.streams, sizeof(*streams) * (size_t)cap);
			if (streams)
				group.streams = streams;
			if (!ops || !comms || !streams)
				return ncclSystemError;
			group.cap = cap;
		}
		group.ops[group.n] = *op;
		group.comms[group.n] = comm;
		group.streams[group.n++] = stream;
		return ncclSuccess;
	}
	one = malloc(sizeof(*one));
	if (!one)
		return ncclSystemError;
	*one = *op;
	return submit(comm, stream, one, 1);
}

SIM_EXPORT ncclResult_t ncclGroupStart(void)
{
	group.depth++;
	return ncclSuccess;
}

/*
 * The group's operations go to each communicator's worker as one task, so its
 * sends and receives progress together. One stream per communicator in a
 * group: NCCL would order several streams against each other, simnccl refuses.
 */
SIM_EXPORT ncclResult_t ncclGroupEnd(void)
{
	ncclResult_t res = ncclSuccess;
	int i, j;

	if (group.depth <= 0) {
		WARN(current_dev(), "ncclGroupEnd: not in a group call.");
		return ncclInvalidUsage;
	}
	if (--group.depth)
		return ncclSuccess;
	for (i = 0; i < group.n; i++)
		for (j = i + 1; j < group.n; j++)
			if (group.comms[i] == group.comms[j] && group.streams[i] != group.streams[j]) {
				WARN(group.comms[i]->cuda_dev, "simnccl: one communicator on two streams "
				     "in a group is not simulated");
				res = ncclInvalidUsage;
			}
	for (i = 0; i < group.n && !res; i++) {
		struct ncclComm *comm = group.comms[i];
		struct op *ops;
		int n = 0;

		if (!comm)
			continue;
		ops = malloc(sizeof(*ops) * (size_t)group.n);
		if (!ops) {
			res = ncclSystemError;
			break;
		}
		for (j = i; j < group.n; j++)
			if (group.comms[j] == comm) {
				ops[n++] = group.ops[j];
				group.comms[j] = NULL;
			}
		res = submit(comm, group.streams[i], ops, n);
	}
	group.n = 0;
	return res;
}

/* ------------------------------------------------------------------------- */
/* Collectives and point to point                                             */

SIM_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
				      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
				      cudaStream_t stream)
{
	struct op o = { .kind = OP_ALLREDUCE, .sendbuff = sendbuff, .recvbuff = recvbuff,
			.count = count, .dtype = datatype, .redop = op };

	return issue(&o, comm, stream);
}

SIM_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
				      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	struct op o = { .kind = OP_ALLGATHER, .sendbuff = sendbuff, .recvbuff = recvbuff,
			.count = sendcount, .dtype = datatype };

	return issue(&o, comm, stream);
}

SIM_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
					  ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
					  cudaStream_t stream)
{
	struct op o = { .kind = OP_REDUCE_SCATTER, .sendbuff = sendbuff, .recvbuff = recvbuff,
			.count = recvcount, .dtype = datatype, .redop = op };

	return issue(&o, comm, stream);
}

SIM_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
				      ncclDataType_t datatype, int root, ncclComm_t comm,
				      cudaStream_t stream)
{
	struct op o = { .kind = OP_BROADCAST, .sendbuff = sendbuff, .recvbuff = recvbuff,
			.count = count, .dtype = datatype, .root = root };

	return issue(&o, comm, stream);
}

SIM_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
				   ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
				   cudaStream_t stream)
{
	struct op o = { .kind = OP_REDUCE, .sendbuff = sendbuff, .recvbuff = recvbuff,
			.count = count, .dtype = datatype, .redop = op, .root = root };

	return issue(&o, comm, stream);
}

SIM_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
				 int peer, ncclComm_t comm, cudaStream_t stream)
{
	struct op o = { .kind = OP_SEND, .sendbuff = sendbuff, .count = count, .dtype = datatype,
			.root = peer };

	return issue(&o, comm, stream);
}

SIM_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
				 ncclComm_t comm, cudaStream_t stream)
{
	struct op o = { .kind = OP_RECV, .recvbuff = recvbuff, .count = count, .dtype = datatype,
			.root = peer };

	return issue(&o, comm, stream);
}

/* ------------------------------------------------------------------------- */
/* Versions, ids, errors                                                      */

/* The library's own answer: marks a run on the simulator (gdrbench looks it up with dlsym). */
int gdrb_simnccl_simulated(void);
SIM_EXPORT int gdrb_simnccl_simulated(void)
{
	return 1;
}

SIM_EXPORT ncclResult_t ncclGetVersion(int *version)
{
	if (!version)
		return ncclInvalidArgument;
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}

/* The id names the segment: "/simnccl-" and 32 random hex digits, the rest zero. */
SIM_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *unique_id)
{
	unsigned char rnd[ID_HEX / 2];
	size_t i, n;

	if (!unique_id) {
		WARN(current_dev(), "GetUniqueId : uniqueId argument is NULL");
		return ncclInvalidArgument;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		WARN(current_dev(), "simnccl: getrandom: %s", strerror(errno));
		return ncclSystemError;
	}
	memset(unique_id, 0, sizeof(*unique_id));
	n = (size_t)snprintf(unique_id->internal, sizeof(unique_id->internal), "%s", ID_PREFIX);
	for (i = 0; i < sizeof(rnd); i++)
		n += (size_t)snprintf(unique_id->internal + n, sizeof(unique_id->internal) - n, "%02x",
				      rnd[i]);
	return ncclSuccess;
}

/* The id came over the wire: only an id of ncclGetUniqueId's form names a segment. */
static bool id_valid(const ncclUniqueId *id, char *name, size_t size)
{
	size_t plen = strlen(ID_PREFIX), i;

	if (memcmp(id->internal, ID_PREFIX, plen))
		return false;
	for (i = plen; i < plen + ID_HEX; i++)
		if (!((id->internal[i] >= '0' && id->internal[i] <= '9') ||
		      (id->internal[i] >= 'a' && id->internal[i] <= 'f')))
			return false;
	if (id->internal[plen + ID_HEX] || size < plen + ID_HEX + 1)
		return false;
	memcpy(name, id->internal, plen + ID_HEX);
	name[plen + ID_HEX] = '\0';
	return true;
}

SIM_EXPORT const char *ncclGetErrorString(ncclResult_t code)
{
	/* src/init.cc (NCCL 2.28.9) */
	switch (code) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}

SIM_EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
	(void)comm;     /* unused, as in NCCL */
	return dbg.last_error;
}

/* ------------------------------------------------------------------------- */
/* Communicators                                                              */

static bool all_joined(struct ncclComm *comm, void *arg)
{
	(void)arg;
	return atomic_load(&comm->seg->joined) >= comm->nranks;
}

/* "0000:3B:00.0" as NCCL's busIdToInt64 reads it (src/misc/utils.cc): its hex digits. */
/* Whether ranks a and b are on one host (as NCCL's hostHash tells): a test bed's nodes have names of their own. */
static bool same_host(const struct ncclComm *comm, int a, int b)
{
	return !strncmp(comm->seg->rank[a].host, comm->seg->rank[b].host, sizeof(comm->seg->rank[a].host));
}

static long bus_id_int(const char *bus_id)
{
	char hex[17];
	size_t n = 0;

	for (; *bus_id && n < sizeof(hex) - 1; bus_id++) {
		if (*bus_id == '.' || *bus_id == ':')
			continue;
		if (!((*bus_id >= '0' && *bus_id <= '9') || (*bus_id >= 'a' && *bus_id <= 'f') ||
		      (*bus_id >= 'A' && *bus_id <= 'F')))
			break;
		hex[n++] = *bus_id;
	}
	hex[n] = '\0';
	return strtol(hex, NULL, 16);
}

static void comm_unmap(struct ncclComm *comm)
{
	if (comm->seg)
		munmap(comm->seg, comm->seg_size);
	free(comm->scratch);
	free(comm);
}

/* Map the segment, create or join; check that the other ranks agree on its shape. */
static ncclResult_t seg_attach(struct ncclComm *comm, const char *name)
{
	size_t n = (size_t)comm->nranks, hdr, slots, mboxes;
	struct stat st;
	int fd, expected;
	uint32_t chunk_expected = 0;

	hdr = (sizeof(struct seg) + n * sizeof(struct seg_rank) + 4095) & ~(size_t)4095;
	slots = 2 * n * comm->chunk;
	mboxes = n * n * (sizeof(struct mbox) + comm->chunk);
	comm->seg_size = hdr + slots + mboxes;

	fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		WARN(comm->cuda_dev, "simnccl: shm_open %s: %s", name, strerror(errno));
		return ncclSystemError;
	}
	/* Sparse: only the pages the ranks touch take memory. */
	if (fstat(fd, &st) || (st.st_size && (size_t)st.st_size != comm->seg_size) ||
	    (!st.st_size && ftruncate(fd, (off_t)comm->seg_size))) {
		WARN(comm->cuda_dev, "simnccl: segment %s: %s", name,
		     errno ? strerror(errno) : "another rank has a different size (nranks or SIMNCCL_CHUNK_BYTES)");
		close(fd);
		return ncclInvalidUsage;
	}
	comm->seg = mmap(NULL, comm->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (comm->seg == MAP_FAILED) {
		comm->seg = NULL;
		WARN(comm->cuda_dev, "simnccl: mmap %s: %s", name, strerror(errno));
		return ncclSystemError;
	}
	comm->slots = (char *)comm->seg + hdr;
	comm->mboxes = comm->slots + slots;
	expected = 0;
	atomic_compare_exchange_strong(&comm->seg->nranks, &expected, comm->nranks);
	atomic_compare_exchange_strong(&comm->seg->chunk, &chunk_expected, (uint32_t)comm->chunk);
	if (atomic_load(&comm->seg->nranks) != comm->nranks ||
	    atomic_load(&comm->seg->chunk) != comm->chunk) {
		WARN(comm->cuda_dev, "simnccl: rank %d: the ranks disagree on nranks (%d, %d) or "
		     "SIMNCCL_CHUNK_BYTES", comm->rank, atomic_load(&comm->seg->nranks), comm->nranks);
		return ncclInvalidUsage;
	}
	return ncclSuccess;
}

/* Once a process: every rank at INFO, rank 0 alone at WARN or VERSION (src/init.cc:1977). */
static void show_version(int rank, int dev)
{
	static atomic_flag shown = ATOMIC_FLAG_INIT;
	int level;

	pthread_mutex_lock(&dbg.lock);
	if (dbg.level < 0)
		debug_init();
	level = dbg.level;
	pthread_mutex_unlock(&dbg.lock);
	if (level <= LOG_NONE || (level <= LOG_WARN && rank != 0) || atomic_flag_test_and_set(&shown))
		return;
	/* init.cc:603's VERSION_STRING, with simnccl where the CUDA version stands. */
	nlog(level > LOG_WARN ? LOG_INFO : LOG_VERSION, (unsigned long)SUB_ALL, dev, NULL,
	     "NCCL version %d.%d.%d%s+simnccl", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, NCCL_SUFFIX);
}

SIM_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *newcomm, int nranks, ncclUniqueId comm_id, int rank)
{
	struct ncclComm *comm;
	struct seg_rank *me;
	char name[64];
	long bus_me;
	ncclResult_t res;
	int expected = RS_ABSENT, i, j, dev = current_dev();
	cudaError_t err;

	show_version(rank, dev);

	if (!newcomm) {
		WARN(dev, "CommInitRank : newcomm argument is NULL");
		return ncclInvalidArgument;
	}
	*newcomm = NULL;
	if (nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks) {
		WARN(dev, "Invalid rank requested : %d/%d%s", rank, nranks,
		     nranks > MAX_RANKS ? " (simnccl simulates at most 64 ranks)" : "");
		return ncclInvalidArgument;
	}
	if (!id_valid(&comm_id, name, sizeof(name))) {
		WARN(dev, "simnccl: the unique id was not made by simnccl's ncclGetUniqueId");
		return ncclInvalidArgument;
	}
	comm = calloc(1, sizeof(*comm));
	if (!comm)
		return ncclSystemError;
	comm->rank = rank;
	comm->nranks = nranks;
	comm->cuda_dev = dev;
	comm->chunk = (size_t)env_long("SIMNCCL_CHUNK_BYTES", DEF_CHUNK, 4096, 64l << 20) & ~(size_t)63;
	comm->delay_us = env_long("SIMNCCL_DELAY_US", DEF_DELAY_US, 0, 60000000);
	comm->fail_after = rank == env_long("SIMNCCL_FAIL_RANK", 0, 0, INT_MAX) ?
			   env_long("SIMNCCL_FAIL_AFTER", -1, -1, LONG_MAX) : -1;
	pthread_mutex_init(&comm->lock, NULL);
	pthread_cond_init(&comm->cond, NULL);
	if ((err = cudaDeviceGetPCIBusId(comm->bus_id, sizeof(comm->bus_id), dev))) {
		WARN(dev, "Cuda failure '%s'", cudaGetErrorString(err));
		free(comm);
		return ncclUnhandledCudaError;
	}
	comm->scratch = malloc(comm->chunk);
	if (!comm->scratch) {
		free(comm);
		return ncclSystemError;
	}
	if ((res = seg_attach(comm, name)))
		goto fail;

	me = &comm->seg->rank[rank];
	if (!atomic_compare_exchange_strong(&me->state, &expected, RS_JOINED)) {
		WARN(dev, "simnccl: rank %d of %s joined twice", rank, name);
		res = ncclInvalidUsage;
		goto fail;
	}
	me->cuda_dev = dev;
	memcpy(me->bus_id, comm->bus_id, sizeof(me->bus_id));
	if (gethostname(me->host, sizeof(me->host) - 1))
		me->host[0] = '\0';
	atomic_store(&me->pid, (int)getpid());
	atomic_fetch_add(&comm->seg->joined, 1);
	ring_doorbell(comm->seg);

	/* Every rank must come: the others' pids are not known yet, so a time limit, as NCCL's bootstrap. */
	{
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			uint32_t seen = atomic_load(&comm->seg->doorbell);

			if (all_joined(comm, NULL))
				break;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > INIT_TIMEOUT_S) {
				WARN(dev, "simnccl: rank %d: only %d of %d ranks joined in %d s", rank,
				     atomic_load(&comm->seg->joined), nranks, INIT_TIMEOUT_S);
				res = ncclSystemError;
				goto fail_joined;
			}
			wait_doorbell(comm->seg, seen);
		}
	}
	/* All have mapped it: the name can go, and no rank's exit leaves it behind. */
	shm_unlink(name);

	/* SIMNCCL_HANG_INIT=RANK: that rank, every rank joined, never returns (stuck in NCCL's initialisation). */
	if (rank == env_long("SIMNCCL_HANG_INIT", -1, -1, INT_MAX))
		for (;;)
			pause();

	/* src/init.cc:904 (NCCL 2.28.9): two ranks of one host on one GPU. */
	bus_me = bus_id_int(comm->bus_id);
	for (i = 0; i < nranks; i++)
		if (i != rank && bus_id_int(comm->seg->rank[i].bus_id) == bus_me && same_host(comm, i, rank)) {
			nlog(LOG_WARN, (unsigned long)SUB_ALL, dev, "init.cc:904",
			     "Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx",
			     rank, i, bus_me);
			res = ncclInvalidUsage;
			goto fail_joined;
		}
	/* A rank not in the pair fails too: its peers cannot go on. */
	for (i = 0; i < nranks; i++)
		for (j = i + 1; j < nranks; j++)
			if (bus_id_int(comm->seg->rank[i].bus_id) == bus_id_int(comm->seg->rank[j].bus_id) &&
			    same_host(comm, i, j)) {
				nlog(LOG_WARN, (unsigned long)SUB_ALL, dev, "init.cc:904",
				     "Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx",
				     i, j, bus_id_int(comm->seg->rank[i].bus_id));
				res = ncclInvalidUsage;
				goto fail_joined;
			}

	if ((err = cudaStreamCreateWithFlags(&comm->copy_stream, cudaStreamNonBlocking))) {
		WARN(dev, "Cuda failure '%s'", cudaGetErrorString(err));
		res = ncclUnhandledCudaError;
		goto fail_joined;
	}
	if (pthread_create(&comm->worker, NULL, worker_main, comm)) {
		WARN(dev, "simnccl: pthread_create failed");
		cudaStreamDestroy(comm->copy_stream);
		res = ncclSystemError;
		goto fail_joined;
	}
	*newcomm = comm;
	return ncclSuccess;

fail_joined:
	atomic_store(&me->state, RS_ABORTED);
	ring_doorbell(comm->seg);
	shm_unlink(name);
fail:
	comm_unmap(comm);
	return res;
}

/* Wait until every task issued has run (they end quickly once aborting). */
static void drain(struct ncclComm *comm)
{
	pthread_mutex_lock(&comm->lock);
	while (comm->completed < comm->submitted)
		pthread_cond_wait(&comm->cond, &comm->lock);
	pthread_mutex_unlock(&comm->lock);
}

static void comm_free(struct ncclComm *comm, int state)
{
	pthread_mutex_lock(&comm->lock);
	comm->quit = true;
	pthread_cond_broadcast(&comm->cond);
	pthread_mutex_unlock(&comm->lock);
	pthread_join(comm->worker, NULL);
	cudaStreamDestroy(comm->copy_stream);
	atomic_store(&comm->seg->rank[comm->rank].state, state);
	ring_doorbell(comm->seg);
	pthread_mutex_destroy(&comm->lock);
	pthread_cond_destroy(&comm->cond);
	comm_unmap(comm);
}

/* Blocking mode: every operation issued completes, in error or not. */
SIM_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	if (!comm)
		return ncclInvalidArgument;
	drain(comm);
	return comm_ready(comm);
}

SIM_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return ncclSuccess;
	drain(comm);
	comm_free(comm, RS_DEPARTED);
	return ncclSuccess;
}

/*
 * Ends this rank's part at once: its waiting operations end without data,
 * and the peers that wait on it see it aborted (ncclRemoteError).
 */
/* SIMNCCL_ABORT_LOG=FILE: each ncclCommAbort appends "rank R ncclCommAbort", for the tests. */
static void note_abort(const struct ncclComm *comm)
{
	const char *path = getenv("SIMNCCL_ABORT_LOG");
	char line[64];
	int fd, n;

	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "rank %d ncclCommAbort\n", comm->rank);
	if (n > 0 && write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}

SIM_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	if (!comm)
		return ncclSuccess;
	note_abort(comm);
	atomic_store(&comm->aborting, true);
	atomic_store(&comm->seg->rank[comm->rank].state, RS_ABORTED);
	ring_doorbell(comm->seg);
	drain(comm);
	comm_free(comm, RS_ABORTED);
	return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error)
{
	if (!comm || !async_error)
		return ncclInvalidArgument;
	*async_error = (ncclResult_t)atomic_load(&comm->async_err);
	return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	if (!comm || !count)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
	if (!comm || !device)
		return ncclInvalidArgument;
	*device = comm->cuda_dev;
	return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (!comm || !rank)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}
