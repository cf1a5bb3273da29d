/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simgpu: a simulated CUDA device for gdrbench's test suite. Built as
 * libcudart.so.N against the real CUDA headers and put in front of the real
 * runtime with LD_LIBRARY_PATH; never installed. It implements exactly the
 * runtime calls gdrbench makes and the driver entry points it looks up, and
 * enforces the CUDA semantics that catch real bugs:
 *  - device memory lives in its own address range, mapped PROT_NONE (strict
 *    mode), so a CPU load or store into it faults; the simulator reaches it
 *    through a second, private mapping of the same pages;
 *  - copies are bounds-checked against the owning allocation, run on one
 *    worker thread per stream, take a modelled time, and return when the CUDA
 *    documentation says they do ("API synchronization behavior"), so a
 *    missing wait shows up as wrong bytes or as an impossible bandwidth;
 *  - dma-buf export wants a host-page-aligned range inside one allocation.
 * It proves behaviour, never speed. Configuration: tests/support/simgpu/README.md.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_NAME "gdrbench simulated GPU (simgpu)"
#define MAX_DEVS 16
#define MAX_ALLOCS 4096
#define ALLOC_ALIGN (2ull << 20)        /* cudaMalloc's large-allocation granularity */
#define H2D_TAIL (64u << 10)            /* pageable H2D: this much lands after return */

#ifndef SIMGPU_RUNTIME_VERSION
#define SIMGPU_RUNTIME_VERSION CUDART_VERSION
#endif

/* ------------------------------------------------------------------------- */
/* Configuration and state                                                    */

struct sim_dev {
	char bus_id[16];        /* "0000:3B:00.0", as CUDA prints it */
	int domain, bus, slot;
	int phys;               /* its place in the node (SIMGPU_NODE's links), before CUDA_VISIBLE_DEVICES */
	size_t used;
};

/*
 * SIMGPU_NODE: a node of several GPUs, their PCI addresses and what joins each
 * pair. A pair CUDA may map peer to peer has a link; the others copy through
 * host memory whatever the caller asks.
 */
enum sim_link { L_NONE, L_NVLINK, L_NVSWITCH };

static const struct sim_node {
	const char *name;
	const char *devices;    /* as SIMGPU_DEVICES */
	enum sim_link (*link)(int a, int b);
} *node;

/* HGX 8-GPU: every GPU on the NVSwitches. */
static enum sim_link link_nvswitch(int a, int b)
{
	return a != b ? L_NVSWITCH : L_NONE;
}

/* Four PCIe GPUs, peer-to-peer off (ACS, an IOMMU, or GPUs that do not offer it): none. */
static enum sim_link link_none(int a, int b)
{
	(void)a;
	(void)b;
	return L_NONE;
}

/* Two NVLink bridges, 0-1 and 2-3, the bridged pairs on different sockets: no path across. */
static enum sim_link link_bridged_pairs(int a, int b)
{
	return a != b && a / 2 == b / 2 ? L_NVLINK : L_NONE;
}

static const struct sim_node nodes[] = {
	{ "nvswitch8", "0000:18:00.0,0000:2a:00.0,0000:3a:00.0,0000:5d:00.0,0000:9a:00.0,0000:ab:00.0,0000:ba:00.0,0000:db:00.0",
	  link_nvswitch },
	{ "pcie4", "0000:3b:00.0,0000:5e:00.0,0000:86:00.0,0000:af:00.0", link_none },
	{ "nvlink4", "0000:1b:00.0,0000:1c:00.0,0000:b1:00.0,0000:b2:00.0", link_bridged_pairs },
};

enum alloc_kind { A_DEVICE, A_PINNED };

struct sim_alloc {
	bool live;
	enum alloc_kind kind;
	char *base;             /* what the application sees */
	size_t size;            /* as asked */
	size_t span;            /* reserved: ALLOC_ALIGN multiple (device), pages (pinned) */
	size_t heap_off;        /* device: offset in the heap */
	int dev;
	int export_fd;          /* a dma-buf fd handed out, -1 if none */
	struct stat export_st;
	bool sync_memops;
};

struct op;

struct sim_stream {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct op *head, *tail;
	uint64_t enq, done;     /* ops enqueued and completed */
	bool blocking;          /* synchronises with the legacy stream */
	bool quit;
	pthread_t thread;
	int dev;
	double busy_until;      /* modelled engine time */
	struct sim_stream *next_all;
	struct sim_graph *capture;      /* being captured into (cudaStreamBeginCapture); NULL: not */
	bool capture_broken;            /* a call not allowed in a capture was made: it is invalidated */
};

/* A captured sequence (cudaGraph_t), or its instance (cudaGraphExec_t): replayed by cudaGraphLaunch. */
struct sim_graph {
	struct op **ops;        /* prepared ops, copied at each launch */
	int nops, cap;
};

struct sim_event {
	struct sim_stream *stream;
	uint64_t seq;           /* complete when stream->done >= seq */
	bool recorded;
	/* A timing event (not cudaEventDisableTiming): its record is a marker the worker stamps. */
	bool timing;
	uint64_t gen;           /* the record being waited for (a marker of an older one stamps nothing) */
	double at;              /* when the stream reached the record of gen, CLOCK_MONOTONIC seconds */
	bool reached;
	int dev;                /* the device current when it was created: its stream must be of it */
};

struct dep {
	struct sim_stream *s;
	uint64_t seq;
};

struct op {
	struct op *next;
	cudaHostFn_t fn;        /* cudaLaunchHostFunc: called in stream order, no copy */
	void *fn_arg;
	char *dst;
	const char *src;
	size_t len;
	void *owned;            /* a staging copy to free afterwards */
	struct dep deps[MAX_DEVS * 8];
	int ndeps;
	/* No copy and no modelled time: a timing event's record (stamp) or a cudaStreamWaitEvent. */
	bool marker;
	struct sim_event *stamp;
	uint64_t stamp_gen;
	/* A copy between two GPUs: over their link (peer access on) or twice across PCIe through host memory. */
	enum sim_link link;
	bool via_host;
};

static struct {
	pthread_mutex_t lock;
	bool no_driver, peermem, dmabuf, have_by_version, mps;
	int ndev;               /* visible */
	struct sim_dev dev[MAX_DEVS];
	int cur;
	/* peer_on[a][b]: device a has enabled access to b's memory (cudaDeviceEnablePeerAccess with a current). */
	bool peer_on[MAX_DEVS][MAX_DEVS];
	double peer_gbps;       /* SIMGPU_PEER_GBPS: a copy over a GPU-to-GPU link */
	bool corrupt_peer;      /* SIMGPU_CORRUPT_PEER=1 */
	int peer_max;           /* SIMGPU_PEER_MAX: peers a device may enable (cudaErrorTooManyPeers past it); 0: no limit */
	size_t mem_per_dev;
	int heap_fd;
	char *dev_view, *shadow;
	size_t heap_size, heap_next;
	struct sim_alloc allocs[MAX_ALLOCS];
	double gbps, latency_us;
	double sync_us;         /* SIMGPU_SYNC_US: what a synchronisation that finds the work done costs */
	FILE *trace;
	struct sim_stream *legacy, *streams;
	struct sim_stream *retired;     /* destroyed: events recorded on them stay queryable */
	unsigned long flushes;
	bool ready;
} sim = { .lock = PTHREAD_MUTEX_INITIALIZER, .heap_fd = -1 };

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;

static void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sim_log(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "simgpu: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!sim.trace)
		return;
	/* Several ranks may share one trace file: each line names its process. */
	/* A stream's worker traces too: one line at a time. */
	flockfile(sim.trace);
	fprintf(sim.trace, "%ld ", (long)getpid());
	va_start(ap, fmt);
	vfprintf(sim.trace, fmt, ap);
	va_end(ap);
	fputc('\n', sim.trace);
	fflush(sim.trace);
	funlockfile(sim.trace);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double env_double(const char *name, double def)
{
	const char *v = getenv(name);
	char *end;
	double d;

	if (!v || !*v)
		return def;
	d = strtod(v, &end);
	if (*end || d < 0) {
		sim_log("%s=%s: not a non-negative number, using %g", name, v, def);
		return def;
	}
	return d;
}

static int parse_bus_id(const char *text, struct sim_dev *d)
{
	unsigned dom, bus, slot, fn;

	if (sscanf(text, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4 || fn != 0)
		return -1;
	d->domain = (int)dom;
	d->bus = (int)bus;
	d->slot = (int)slot;
	snprintf(d->bus_id, sizeof(d->bus_id), "%04X:%02X:%02X.0", dom, bus, slot);
	return 0;
}

/* CUDA_VISIBLE_DEVICES: ordinals into the physical list; the list ends at the first bad entry. */
static void apply_visible(struct sim_dev *phys, int nphys)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	char *copy, *tok, *save = NULL;
	int n = 0;

	if (!v) {
		memcpy(sim.dev, phys, sizeof(*phys) * (size_t)nphys);
		sim.ndev = nphys;
		return;
	}
	copy = strdup(v);
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long i = strtol(tok, &end, 10);

		if (end == tok || *end || i < 0 || i >= nphys)
			break;
		sim.dev[n++] = phys[i];
	}
	free(copy);
	sim.ndev = n;
}

static void *stream_worker(void *arg);

static struct sim_stream *stream_new(bool blocking)
{
	struct sim_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->blocking = blocking;
	s->dev = sim.cur;
	if (pthread_create(&s->thread, NULL, stream_worker, s)) {
		free(s);
		return NULL;
	}
	pthread_detach(s->thread);
	s->next_all = sim.streams;
	sim.streams = s;
	return s;
}

/* SIMGPU_NODE's node; NULL: none asked (one GPU, or SIMGPU_DEVICES' list without links). */
static const struct sim_node *node_named(const char *name)
{
	size_t i;

	if (!name || !*name)
		return NULL;
	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (!strcmp(nodes[i].name, name))
			return &nodes[i];
	sim_log("error: SIMGPU_NODE=%s: not nvswitch8, nvlink4 or pcie4; one GPU instead", name);
	return NULL;
}

/* What joins two visible devices. */
static enum sim_link link_of(int a, int b)
{
	return node && a != b ? node->link(sim.dev[a].phys, sim.dev[b].phys) : L_NONE;
}

static void sim_init(void)
{
	struct sim_dev phys[MAX_DEVS] = { 0 };
	const char *v;
	int nphys = 0;

	sim.no_driver = (v = getenv("SIMGPU_DRIVER")) && !strcmp(v, "none");
	sim.peermem = (v = getenv("SIMGPU_MODE")) && !strcmp(v, "peermem");
	if (v && strcmp(v, "peermem") && strcmp(v, "strict"))
		sim_log("SIMGPU_MODE=%s: not strict or peermem, using strict", v);
	sim.dmabuf = !((v = getenv("SIMGPU_DMABUF")) && !strcmp(v, "0"));
	sim.mps = (v = getenv("SIMGPU_MPS")) && !strcmp(v, "1");
	sim.gbps = env_double("SIMGPU_COPY_GBPS", 8.0);
	sim.latency_us = env_double("SIMGPU_LATENCY_US", 5.0);
	sim.sync_us = env_double("SIMGPU_SYNC_US", 0.0);
	sim.peer_gbps = env_double("SIMGPU_PEER_GBPS", 3 * sim.gbps);
	sim.corrupt_peer = (v = getenv("SIMGPU_CORRUPT_PEER")) && !strcmp(v, "1");
	sim.peer_max = (int)env_double("SIMGPU_PEER_MAX", 0);
	sim.mem_per_dev = (size_t)env_double("SIMGPU_MEM_GIB", 16.0) << 30;
	if ((v = getenv("SIMGPU_TRACE")) && *v && !(sim.trace = fopen(v, "a")))
		sim_log("SIMGPU_TRACE=%s: %s", v, strerror(errno));

	v = getenv("SIMGPU_DEVICES");
	if (!v || !*v)
		v = "0000:3b:00.0";
	node = node_named(getenv("SIMGPU_NODE"));
	if (node) {
		if (getenv("SIMGPU_DEVICES"))
			sim_log("error: SIMGPU_DEVICES and SIMGPU_NODE=%s: the node names its GPUs, SIMGPU_DEVICES is ignored",
				node->name);
		v = node->devices;
	}
	{
		char *copy = strdup(v), *tok, *save = NULL;

		for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && nphys < MAX_DEVS;
		     tok = strtok_r(NULL, ",", &save)) {
			if (parse_bus_id(tok, &phys[nphys])) {
				sim_log("SIMGPU_DEVICES: '%s' is not a PCI address DDDD:BB:SS.0", tok);
				continue;
			}
			phys[nphys].phys = nphys;
			nphys++;
		}
		free(copy);
	}
	apply_visible(phys, nphys);
	sim.ready = true;
}

static void sim_boot(void)
{
	pthread_once(&sim_once, sim_init);
}

/* The device heap: one memfd seen twice, PROT_NONE (strict) for the application, RW for us. */
static int heap_open(void)
{
	int prot = sim.peermem ? PROT_READ | PROT_WRITE : PROT_NONE;

	if (sim.heap_fd >= 0)
		return 0;
	sim.heap_size = sim.mem_per_dev * (size_t)(sim.ndev ? sim.ndev : 1);
	sim.heap_fd = memfd_create("simgpu-device-memory", MFD_CLOEXEC);
	if (sim.heap_fd < 0 || ftruncate(sim.heap_fd, (off_t)sim.heap_size)) {
		sim_log("device heap: %s", strerror(errno));
		return -1;
	}
	sim.dev_view = mmap(NULL, sim.heap_size, prot, MAP_SHARED | MAP_NORESERVE, sim.heap_fd, 0);
	sim.shadow = mmap(NULL, sim.heap_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			  sim.heap_fd, 0);
	if (sim.dev_view == MAP_FAILED || sim.shadow == MAP_FAILED) {
		sim_log("device heap mmap: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Pointers                                                                   */

enum ptr_kind { P_PAGEABLE, P_PINNED, P_DEVICE, P_BAD };

static bool in_heap(const void *p)
{
	return sim.dev_view && (const char *)p >= sim.dev_view &&
	       (const char *)p < sim.dev_view + sim.heap_size;
}

/* The live allocation holding p, under sim.lock. */
static struct sim_alloc *find_alloc(const void *p)
{
	const char *c = p;
	int i;

	for (i = 0; i < MAX_ALLOCS; i++) {
		struct sim_alloc *a = &sim.allocs[i];

		if (a->live && c >= a->base && c < a->base + (a->kind == A_DEVICE ? a->span : a->size))
			return a;
	}
	return NULL;
}

/* What [p, p+len) is; device and pinned ranges must lie inside one allocation. */
static enum ptr_kind classify(const void *p, size_t len, struct sim_alloc **owner)
{
	struct sim_alloc *a = find_alloc(p);

	*owner = a;
	if (!a)
		return in_heap(p) ? P_BAD : P_PAGEABLE;
	if ((size_t)((const char *)p - a->base) > a->size || len > a->size - (size_t)((const char *)p - a->base))
		return P_BAD;
	return a->kind == A_DEVICE ? P_DEVICE : P_PINNED;
}

static char *shadow_of(const struct sim_alloc *a, const void *p)
{
	return sim.shadow + a->heap_off + (size_t)((const char *)p - a->base);
}

/* ------------------------------------------------------------------------- */
/* Streams and the copy engine                                                */

/*
 * A query that finds a copy unfinished gives the CPU away. A real copy engine
 * needs no CPU, but this one is a thread: on a machine with fewer cores than
 * busy-polling ranks plus copy threads (2 cores, or a 2-CPU VM) a progress
 * loop that polls without yielding would keep it off the CPU for a whole
 * scheduler slice per fragment.
 */
static cudaError_t not_ready(void)
{
	sched_yield();
	return cudaErrorNotReady;
}

static void marker_reached(struct sim_stream *s, const struct op *op);

/* A copy's bytes have landed: traced as "copyDone stream STREAM BYTES SECONDS" (what ran when). */
static void copy_done(struct sim_stream *s, const struct op *op)
{
	trace("copyDone stream %p %zu %.6f", (void *)s, op->len, now_s());
}

/* The modelled time of a copy: one hop at the copy rate, a peer link's rate, or two hops through host memory. */
static double op_time(const struct op *op)
{
	double gbps = op->link != L_NONE && !op->via_host ? sim.peer_gbps : sim.gbps;
	double hop = sim.latency_us * 1e-6 + (gbps > 0 ? (double)op->len / (gbps * 1e9) : 0);

	return op->via_host ? 2 * hop : hop;
}

static void *stream_worker(void *arg)
{
	struct sim_stream *s = arg;

	/* The modelled time is microseconds: not the 50 us a sleep may otherwise be late by. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

	for (;;) {
		struct op *op;
		double start, finish, wait;
		int i;

		pthread_mutex_lock(&s->lock);
		while (!s->head && !s->quit)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->head) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		op = s->head;
		pthread_mutex_unlock(&s->lock);

		for (i = 0; i < op->ndeps; i++) {
			struct sim_stream *d = op->deps[i].s;

			pthread_mutex_lock(&d->lock);
			while (d->done < op->deps[i].seq)
				pthread_cond_wait(&d->cond, &d->lock);
			pthread_mutex_unlock(&d->lock);
		}
		if (op->fn) {
			/* A host function takes the engine's place: no modelled copy time. */
			op->fn(op->fn_arg);
			goto done;
		}
		if (op->marker) {
			marker_reached(s, op);
			goto done;
		}
		/* The data lands at the end of its modelled transfer time. */
		start = now_s();
		if (s->busy_until > start)
			start = s->busy_until;
		finish = start + op_time(op);
		s->busy_until = finish;
		wait = finish - now_s();
		if (wait > 0) {
			struct timespec ts = { .tv_sec = (time_t)wait,
					       .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9) };

			nanosleep(&ts, NULL);
		}
		if (op->len)
			memmove(op->dst, op->src, op->len);
		/* SIMGPU_CORRUPT_PEER=1: a fault of the link, one byte wrong in each copy it carries. */
		if (op->len && op->link != L_NONE && !op->via_host && sim.corrupt_peer)
			op->dst[op->len / 2] ^= 0x5a;
		free(op->owned);
		copy_done(s, op);
done:
		pthread_mutex_lock(&s->lock);
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		s->done++;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		free(op);
	}
}

static struct sim_stream *resolve_stream(cudaStream_t stream)
{
	if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
		return sim.legacy;
	return (struct sim_stream *)stream;
}

/*
 * Enqueue a prepared op, with the legacy stream's implicit synchronisation;
 * returns the op's sequence.
 */
static bool capture_op(struct sim_stream *s, struct op *op);

static uint64_t enqueue_op(struct sim_stream *s, struct op *op)
{
	struct sim_stream *o;
	uint64_t seq;

	if (capture_op(s, op))
		return 0;
	pthread_mutex_lock(&sim.lock);
	for (o = sim.streams; o; o = o->next_all) {
		if (o == s || op->ndeps >= (int)(sizeof(op->deps) / sizeof(op->deps[0])))
			continue;
		if ((s == sim.legacy && o->blocking) || (o == sim.legacy && s->blocking)) {
			pthread_mutex_lock(&o->lock);
			op->deps[op->ndeps++] = (struct dep){ o, o->enq };
			pthread_mutex_unlock(&o->lock);
		}
	}
	pthread_mutex_unlock(&sim.lock);
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	seq = ++s->enq;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return seq;
}

static uint64_t enqueue_copy(struct sim_stream *s, struct op *op, char *dst, const char *src, size_t len,
			     void *owned)
{
	if (!op) {
		/* Out of memory: do it now, in order. */
		memmove(dst, src, len);
		free(owned);
		return 0;
	}
	op->dst = dst;
	op->src = src;
	op->len = len;
	op->owned = owned;
	return enqueue_op(s, op);
}

/* Enqueue a copy; returns the op's sequence. */
static uint64_t enqueue(struct sim_stream *s, char *dst, const char *src, size_t len, void *owned)
{
	return enqueue_copy(s, calloc(1, sizeof(struct op)), dst, src, len, owned);
}

static void wait_seq(struct sim_stream *s, uint64_t seq)
{
	pthread_mutex_lock(&s->lock);
	while (s->done < seq)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static void wait_stream(struct sim_stream *s)
{
	uint64_t seq;

	pthread_mutex_lock(&s->lock);
	seq = s->enq;
	pthread_mutex_unlock(&s->lock);
	wait_seq(s, seq);
}

static void wait_all(void)
{
	struct sim_stream *s;

	for (s = sim.streams; s; s = s->next_all)
		wait_stream(s);
}

/* ------------------------------------------------------------------------- */
/* Errors                                                                     */

static const struct {
	cudaError_t code;
	const char *name, *text;
} errors[] = {
	{ cudaSuccess, "cudaSuccess", "no error" },
	{ cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
	{ cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
	{ cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	  "CUDA driver version is insufficient for CUDA runtime version" },
	{ cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
	{ cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
	{ cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
	  "invalid copy direction for memcpy" },
	{ cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle" },
	{ cudaErrorNotReady, "cudaErrorNotReady", "device not ready" },
	{ cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported" },
	{ cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
	  "operation not permitted when stream is capturing" },
	{ cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
	  "operation failed due to a previous error during capture" },
	{ cudaErrorIllegalState, "cudaErrorIllegalState", "the operation cannot be performed in the present state" },
	{ cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
	  "attempt to terminate a thread-local capture sequence from another thread" },
	{ cudaErrorPeerAccessUnsupported, "cudaErrorPeerAccessUnsupported",
	  "peer access is not supported between these two devices" },
	{ cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled",
	  "peer access is already enabled" },
	{ cudaErrorPeerAccessNotEnabled, "cudaErrorPeerAccessNotEnabled",
	  "peer access has not been enabled" },
	{ cudaErrorTooManyPeers, "cudaErrorTooManyPeers",
	  "peer mapping resources exhausted" },
};

SIM_EXPORT const char *cudaGetErrorName(cudaError_t err)
{
	size_t i;

	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == err)
			return errors[i].name;
	return "cudaErrorUnknown";
}

SIM_EXPORT const char *cudaGetErrorString(cudaError_t err)
{
	size_t i;

	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == err)
			return errors[i].text;
	return "unknown error";
}

/* Every call but the error strings and versions needs a driver and a device. */
static cudaError_t ready(void)
{
	sim_boot();
	if (sim.no_driver)
		return cudaErrorInsufficientDriver;
	if (!sim.ndev)
		return cudaErrorNoDevice;
	pthread_mutex_lock(&sim.lock);
	if (!sim.legacy)
		sim.legacy = stream_new(true);
	pthread_mutex_unlock(&sim.lock);
	return sim.legacy ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* ready(), then device one of the node's GPUs (cudaErrorInvalidDevice where not). */
static cudaError_t ready_device(int device)
{
	cudaError_t err = ready();

	return err ? err : device < 0 || device >= sim.ndev ? cudaErrorInvalidDevice : cudaSuccess;
}

/* ready(), then the caller's output pointer given (cudaErrorInvalidValue where NULL). */
static cudaError_t ready_out(const void *out)
{
	cudaError_t err = ready();

	return err ? err : out ? cudaSuccess : cudaErrorInvalidValue;
}

/* ------------------------------------------------------------------------- */
/* Versions and devices                                                       */

SIM_EXPORT cudaError_t cudaRuntimeGetVersion(int *version)
{
	if (!version)
		return cudaErrorInvalidValue;
	*version = SIMGPU_RUNTIME_VERSION;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaDriverGetVersion(int *version)
{
	sim_boot();
	if (!version)
		return cudaErrorInvalidValue;
	*version = sim.no_driver ? 0 : CUDA_VERSION;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t err = ready();

	if (!count)
		return cudaErrorInvalidValue;
	*count = err == cudaSuccess ? sim.ndev : 0;
	return err;
}

SIM_EXPORT cudaError_t cudaGetDevice(int *device)
{
	cudaError_t err = ready_out(device);

	if (err)
		return err;
	*device = sim.cur;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaSetDevice(int device)
{
	cudaError_t err = ready_device(device);

	if (err)
		return err;
	sim.cur = device;
	trace("cudaSetDevice %d", device);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	cudaError_t err = ready_out(prop);

	if (err)
		return err;
	if (device < 0 || device >= sim.ndev)
		return cudaErrorInvalidDevice;
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "%s", SIM_NAME);
	prop->totalGlobalMem = sim.mem_per_dev;
	prop->major = 9;
	prop->minor = 0;
	prop->multiProcessorCount = 1;
	prop->warpSize = 32;
	prop->unifiedAddressing = 1;
	prop->pciDomainID = sim.dev[device].domain;
	prop->pciBusID = sim.dev[device].bus;
	prop->pciDeviceID = sim.dev[device].slot;
#if CUDART_VERSION >= 13000
	prop->mpsEnabled = sim.mps;     /* said, not modelled: no time-slicing either way */
#endif
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int len, int device)
{
	cudaError_t err = ready();

	if (err)
		return err;
	if (!bus_id || len <= 0)
		return cudaErrorInvalidValue;
	if (device < 0 || device >= sim.ndev)
		return cudaErrorInvalidDevice;
	snprintf(bus_id, (size_t)len, "%s", sim.dev[device].bus_id);
	return cudaSuccess;
}

/*
 * Peer access, as CUDA documents it: a capability between two devices
 * (cudaDeviceCanAccessPeer: 1 where they share a link, 0 for a device and
 * itself) and a grant, one way, from the current device to a peer's memory.
 * Enabling what cannot be is refused (cudaErrorPeerAccessUnsupported, what the
 * driver answers; the runtime's documentation names cudaErrorInvalidDevice),
 * enabling twice is cudaErrorPeerAccessAlreadyEnabled, disabling what was not
 * enabled cudaErrorPeerAccessNotEnabled.
 */
SIM_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
	cudaError_t err = ready_out(can);

	if (err)
		return err;
	if (device < 0 || device >= sim.ndev || peer < 0 || peer >= sim.ndev)
		return cudaErrorInvalidDevice;
	*can = link_of(device, peer) != L_NONE;
	trace("cudaDeviceCanAccessPeer %d %d = %d", device, peer, *can);
	return cudaSuccess;
}

/* The peers device dev has enabled, under sim.lock. */
static int peers_enabled(int dev)
{
	int i, n = 0;

	for (i = 0; i < sim.ndev; i++)
		n += sim.peer_on[dev][i];
	return n;
}

SIM_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
	cudaError_t err = ready();

	if (err)
		return err;
	if (flags)
		return cudaErrorInvalidValue;
	if (peer < 0 || peer >= sim.ndev || peer == sim.cur)
		return cudaErrorInvalidDevice;
	if (link_of(sim.cur, peer) == L_NONE)
		return cudaErrorPeerAccessUnsupported;
	pthread_mutex_lock(&sim.lock);
	err = sim.peer_on[sim.cur][peer] ? cudaErrorPeerAccessAlreadyEnabled :
	      sim.peer_max && peers_enabled(sim.cur) >= sim.peer_max ? cudaErrorTooManyPeers : cudaSuccess;
	if (!err)
		sim.peer_on[sim.cur][peer] = true;
	pthread_mutex_unlock(&sim.lock);
	trace("cudaDeviceEnablePeerAccess %d -> %d%s", sim.cur, peer, err ? " already" : "");
	return err;
}

SIM_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
	cudaError_t err = ready_device(peer);

	if (err)
		return err;
	pthread_mutex_lock(&sim.lock);
	err = sim.peer_on[sim.cur][peer] ? cudaSuccess : cudaErrorPeerAccessNotEnabled;
	sim.peer_on[sim.cur][peer] = false;
	pthread_mutex_unlock(&sim.lock);
	trace("cudaDeviceDisablePeerAccess %d -> %d%s", sim.cur, peer, err ? " not-enabled" : "");
	return err;
}

/* ------------------------------------------------------------------------- */
/* Memory                                                                     */

static struct sim_alloc *alloc_slot(void)
{
	int i;

	for (i = 0; i < MAX_ALLOCS; i++)
		if (!sim.allocs[i].live)
			return &sim.allocs[i];
	return NULL;
}

/* First fit in the heap between live device allocations. */
static bool heap_place(size_t span, size_t *off)
{
	size_t at = 0;
	bool moved = true;
	int i;

	while (moved) {
		moved = false;
		for (i = 0; i < MAX_ALLOCS; i++) {
			const struct sim_alloc *a = &sim.allocs[i];

			if (a->live && a->kind == A_DEVICE && at < a->heap_off + a->span &&
			    a->heap_off < at + span) {
				at = a->heap_off + a->span;
				moved = true;
			}
		}
	}
	if (at + span > sim.heap_size || at + span < at)
		return false;
	*off = at;
	return true;
}

SIM_EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
	struct sim_alloc *a;
	cudaError_t err = ready_out(ptr);
	size_t span, off;

	if (err)
		return err;
	*ptr = NULL;
	if (size == 0)
		return cudaSuccess;
	if (size > sim.mem_per_dev)
		return cudaErrorMemoryAllocation;
	span = (size + ALLOC_ALIGN - 1) & ~(ALLOC_ALIGN - 1);
	pthread_mutex_lock(&sim.lock);
	if (heap_open() || sim.dev[sim.cur].used + span > sim.mem_per_dev ||
	    !(a = alloc_slot()) || !heap_place(span, &off)) {
		pthread_mutex_unlock(&sim.lock);
		return cudaErrorMemoryAllocation;
	}
	*a = (struct sim_alloc){ .live = true, .kind = A_DEVICE, .base = sim.dev_view + off,
				 .size = size, .span = span, .heap_off = off, .dev = sim.cur,
				 .export_fd = -1 };
	sim.dev[sim.cur].used += span;
	*ptr = a->base;
	pthread_mutex_unlock(&sim.lock);
	trace("cudaMalloc %p %zu dev %d", *ptr, size, a->dev);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	struct sim_alloc *a;
	cudaError_t err = ready_out(ptr);
	long page = sysconf(_SC_PAGESIZE);
	size_t span;
	void *p;

	if (err)
		return err;
	*ptr = NULL;
	if (size == 0)
		return cudaSuccess;
	span = (size + (size_t)page - 1) & ~((size_t)page - 1);
	if (span < size)
		return cudaErrorMemoryAllocation;
	p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return cudaErrorMemoryAllocation;
	pthread_mutex_lock(&sim.lock);
	if (!(a = alloc_slot())) {
		pthread_mutex_unlock(&sim.lock);
		munmap(p, span);
		return cudaErrorMemoryAllocation;
	}
	*a = (struct sim_alloc){ .live = true, .kind = A_PINNED, .base = p, .size = size,
				 .span = span, .dev = sim.cur, .export_fd = -1 };
	pthread_mutex_unlock(&sim.lock);
	*ptr = p;
	trace("cudaMallocHost %p %zu", p, size);
	return cudaSuccess;
}

/* A dma-buf fd exported from an allocation and still open when it is freed. */
static void check_export(struct sim_alloc *a)
{
	struct stat st;

	if (a->export_fd < 0)
		return;
	if (!fstat(a->export_fd, &st) && st.st_ino == a->export_st.st_ino &&
	    st.st_dev == a->export_st.st_dev)
		sim_log("error: cudaFree(%p) while the dma-buf fd %d exported from it is still open "
			"(deregister and close before freeing)", (void *)a->base, a->export_fd);
	a->export_fd = -1;
}

/*
 * The start of cudaFree and cudaFreeHost: ready(), then *a the live allocation of
 * this kind that starts at ptr, with sim.lock held, after waiting for the device
 * (both synchronise, as CUDA's do). A NULL ptr: success with *a NULL, nothing to free.
 */
static cudaError_t freeing(void *ptr, enum alloc_kind kind, const char *call, struct sim_alloc **a)
{
	cudaError_t err = ready();

	*a = NULL;
	if (err || !ptr)
		return err;
	wait_all();
	pthread_mutex_lock(&sim.lock);
	*a = find_alloc(ptr);
	if (*a && (*a)->kind == kind && (*a)->base == (char *)ptr)
		return cudaSuccess;
	*a = NULL;
	pthread_mutex_unlock(&sim.lock);
	sim_log("error: %s(%p): not the start of a live %s allocation", call, ptr,
		kind == A_DEVICE ? "cudaMalloc" : "cudaMallocHost");
	return cudaErrorInvalidValue;
}

SIM_EXPORT cudaError_t cudaFree(void *ptr)
{
	struct sim_alloc *a;
	cudaError_t err = freeing(ptr, A_DEVICE, "cudaFree", &a);

	if (!a)
		return err;
	check_export(a);
	/* Give the pages back; the range stays reserved (PROT_NONE or RW) for reuse. */
	fallocate(sim.heap_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a->heap_off,
		  (off_t)a->span);
	sim.dev[a->dev].used -= a->span;
	a->live = false;
	pthread_mutex_unlock(&sim.lock);
	trace("cudaFree %p", ptr);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	struct sim_alloc *a;
	cudaError_t err = freeing(ptr, A_PINNED, "cudaFreeHost", &a);

	if (!a)
		return err;
	munmap(a->base, a->span);
	a->live = false;
	pthread_mutex_unlock(&sim.lock);
	trace("cudaFreeHost %p", ptr);
	return cudaSuccess;
}

/* ------------------------------------------------------------------------- */
/* Copies                                                                     */

static const char *kind_name(enum ptr_kind k)
{
	return k == P_DEVICE ? "device" : k == P_PINNED ? "pinned" : "pageable";
}

static bool kind_matches(enum cudaMemcpyKind kind, enum ptr_kind dk, enum ptr_kind sk)
{
	bool dd = dk == P_DEVICE, sd = sk == P_DEVICE;

	switch (kind) {
	case cudaMemcpyDefault: return true;
	case cudaMemcpyHostToHost: return !dd && !sd;
	case cudaMemcpyHostToDevice: return dd && !sd;
	case cudaMemcpyDeviceToHost: return !dd && sd;
	case cudaMemcpyDeviceToDevice: return dd && sd;
	default: return false;
	}
}

/*
 * The start of a copy: ready(), then both ends resolved, device ends becoming shadow
 * addresses. A zero len is success with nothing resolved: nothing to copy.
 */
static cudaError_t copy_ends(void **dst, const void **src, size_t len, enum cudaMemcpyKind kind,
			     enum ptr_kind *dk, enum ptr_kind *sk, int *ddev, int *sdev, const char *call)
{
	struct sim_alloc *da, *sa;
	cudaError_t err = ready();

	if (err || !len)
		return err;
	pthread_mutex_lock(&sim.lock);
	*dk = classify(*dst, len, &da);
	*sk = classify(*src, len, &sa);
	if (*dk == P_BAD || *sk == P_BAD) {
		pthread_mutex_unlock(&sim.lock);
		sim_log("error: %s(%p <- %p, %zu): the %s range is not inside one live allocation",
			call, *dst, *src, len, *dk == P_BAD ? "destination" : "source");
		return cudaErrorInvalidValue;
	}
	if (!kind_matches(kind, *dk, *sk)) {
		pthread_mutex_unlock(&sim.lock);
		sim_log("error: %s: kind %d does not match %s <- %s", call, (int)kind,
			kind_name(*dk), kind_name(*sk));
		return cudaErrorInvalidMemcpyDirection;
	}
	*ddev = *dk == P_DEVICE ? da->dev : -1;
	*sdev = *sk == P_DEVICE ? sa->dev : -1;
	if (*dk == P_DEVICE)
		*dst = shadow_of(da, *dst);
	if (*sk == P_DEVICE)
		*src = shadow_of(sa, *src);
	pthread_mutex_unlock(&sim.lock);
	return cudaSuccess;
}

/*
 * A copy between two GPUs, issued by `issuer` (the stream's device): over their
 * link where the issuer is one end and has access to the other (unified
 * addressing lets CUDA take the copy either way), else through host memory, as
 * CUDA does without peer access. Returns the words the trace gives it.
 */
static const char *route(struct op *op, int issuer, int ddev, int sdev)
{
	int other = issuer == ddev ? sdev : ddev;
	bool direct;

	if (ddev < 0 || sdev < 0 || ddev == sdev)
		return "";
	op->link = link_of(ddev, sdev);
	pthread_mutex_lock(&sim.lock);
	direct = (issuer == ddev || issuer == sdev) && op->link != L_NONE && sim.peer_on[issuer][other];
	pthread_mutex_unlock(&sim.lock);
	op->via_host = !direct;
	return direct ? (op->link == L_NVSWITCH ? " peer nvswitch" : " peer nvlink") : " peer via-host";
}

SIM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	enum ptr_kind dk, sk;
	int ddev, sdev;
	void *orig_dst = dst;
	const void *orig_src = src;
	cudaError_t err = copy_ends(&dst, &src, count, kind, &dk, &sk, &ddev, &sdev, "cudaMemcpy");

	if (err || !count)
		return err;
	if (dk == P_DEVICE && sk == P_DEVICE) {
		struct op *op = calloc(1, sizeof(*op));
		const char *how = op ? route(op, sim.cur, ddev, sdev) : "";

		trace("cudaMemcpy %p <- %p %zu %s<-%s%s", orig_dst, orig_src, count, kind_name(dk),
		      kind_name(sk), how);
		/* "For transfers from device memory to device memory, no host-side synchronization is performed." */
		enqueue_copy(sim.legacy, op, dst, src, count, NULL);
		return cudaSuccess;
	}
	trace("cudaMemcpy %p <- %p %zu %s<-%s", orig_dst, orig_src, count, kind_name(dk),
	      kind_name(sk));
	if (dk == P_DEVICE && sk == P_PAGEABLE) {
		/* Staged: the source is taken now; the call returns before the tail reaches the device. */
		char *staging = malloc(count);
		size_t tail = count > H2D_TAIL ? H2D_TAIL : count / 2;
		uint64_t seq;

		if (!staging)
			return cudaErrorMemoryAllocation;
		memcpy(staging, src, count);
		seq = enqueue(sim.legacy, dst, staging, count - tail, NULL);
		enqueue(sim.legacy, (char *)dst + (count - tail), staging + (count - tail), tail, staging);
		wait_seq(sim.legacy, seq);
	} else {
		/* Pinned to device, device to host, host to host: synchronous. */
		wait_seq(sim.legacy, enqueue(sim.legacy, dst, src, count, NULL));
	}
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				       enum cudaMemcpyKind kind, cudaStream_t stream)
{
	enum ptr_kind dk, sk;
	struct sim_stream *s;
	struct op *op;
	const char *how;
	int ddev, sdev;
	void *orig_dst = dst;
	const void *orig_src = src;
	cudaError_t err = copy_ends(&dst, &src, count, kind, &dk, &sk, &ddev, &sdev, "cudaMemcpyAsync");

	if (err || !count)
		return err;
	s = resolve_stream(stream);
	op = calloc(1, sizeof(*op));
	how = op ? route(op, s == sim.legacy ? sim.cur : s->dev, ddev, sdev) : "";
	trace("cudaMemcpyAsync %p <- %p %zu %s<-%s stream %p%s", orig_dst, orig_src, count,
	      kind_name(dk), kind_name(sk), (void *)stream, how);
	/* Every end is read and written when the copy runs, not when it is asked for. */
	enqueue_copy(s, op, dst, src, count, NULL);
	return cudaSuccess;
}

/* ------------------------------------------------------------------------- */
/* The synchronisation's cost and stream capture (CUDA graphs)                */

/*
 * SIMGPU_SYNC_US: a cudaStreamQuery that finds the stream's work done takes
 * that long more (a real synchronisation pays the GPU's completion signal and
 * the host's wake-up), so that a caller polling once per call pays it once per
 * call. cudaStreamSynchronize does not pay it: simnccl's worker synchronises
 * its own copies with it, and the cost stands for the caller's wait alone.
 */
static void sync_cost(struct sim_stream *s)
{
	struct timespec ts;

	(void)s;
	if (sim.sync_us <= 0)
		return;
	ts.tv_sec = (time_t)(sim.sync_us * 1e-6);
	ts.tv_nsec = (long)((sim.sync_us - (double)ts.tv_sec * 1e6) * 1e3);
	nanosleep(&ts, NULL);
}

/* A synchronisation of a capturing stream: refused, and the capture invalidated, as CUDA does. */
static bool capture_refuses(struct sim_stream *s)
{
	bool capturing;

	pthread_mutex_lock(&s->lock);
	capturing = s->capture != NULL;
	if (capturing)
		s->capture_broken = true;
	pthread_mutex_unlock(&s->lock);
	return capturing;
}

/* A stream being captured records the op (a copy or a host function) instead of running it. */
static bool capture_op(struct sim_stream *s, struct op *op)
{
	struct sim_graph *g;
	bool taken = false;

	pthread_mutex_lock(&s->lock);
	g = s->capture;
	if (g && g->nops == g->cap) {
		int cap = g->cap ? 2 * g->cap : 16;
		struct op **ops = realloc(g->ops, sizeof(*ops) * (size_t)cap);

		if (ops) {
			g->ops = ops;
			g->cap = cap;
		}
	}
	if (g && g->nops < g->cap) {
		op->ndeps = 0;  /* a graph orders its nodes only among themselves */
		g->ops[g->nops++] = op;
		taken = true;
	} else if (g) {
		s->capture_broken = true;
		free(op);
		taken = true;
	}
	pthread_mutex_unlock(&s->lock);
	return taken;
}

static void graph_free(struct sim_graph *g)
{
	int i;

	if (!g)
		return;
	for (i = 0; i < g->nops; i++)
		free(g->ops[i]);
	free(g->ops);
	free(g);
}

SIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	struct sim_stream *s;
	cudaError_t err = ready();

	if (err)
		return err;
	s = resolve_stream(stream);
	if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
	    mode != cudaStreamCaptureModeRelaxed)
		return cudaErrorInvalidValue;
	/* The legacy stream cannot be captured. */
	if (s == sim.legacy)
		return cudaErrorStreamCaptureUnsupported;
	pthread_mutex_lock(&s->lock);
	if (s->capture) {
		pthread_mutex_unlock(&s->lock);
		return cudaErrorIllegalState;
	}
	s->capture = calloc(1, sizeof(*s->capture));
	s->capture_broken = false;
	pthread_mutex_unlock(&s->lock);
	trace("cudaStreamBeginCapture %p mode %d", (void *)stream, (int)mode);
	return s->capture ? cudaSuccess : cudaErrorMemoryAllocation;
}

SIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
	struct sim_stream *s;
	struct sim_graph *g;
	bool broken;
	cudaError_t err = ready_out(graph);

	if (err)
		return err;
	s = resolve_stream(stream);
	pthread_mutex_lock(&s->lock);
	g = s->capture;
	broken = s->capture_broken;
	s->capture = NULL;
	s->capture_broken = false;
	pthread_mutex_unlock(&s->lock);
	if (!g)
		return cudaErrorIllegalState;
	trace("cudaStreamEndCapture %p ops %d%s", (void *)stream, g->nops, broken ? " invalidated" : "");
	if (broken) {
		graph_free(g);
		*graph = NULL;
		return cudaErrorStreamCaptureInvalidated;
	}
	*graph = (cudaGraph_t)g;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
	struct sim_stream *s;
	cudaError_t err = ready_out(status);

	if (err)
		return err;
	s = resolve_stream(stream);
	pthread_mutex_lock(&s->lock);
	*status = !s->capture ? cudaStreamCaptureStatusNone :
		  s->capture_broken ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
	pthread_mutex_unlock(&s->lock);
	return cudaSuccess;
}

/* The instance holds its own copy of the sequence: the graph may be destroyed first. */
SIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
	struct sim_graph *g = (struct sim_graph *)graph, *x;
	cudaError_t err = ready();
	int i;

	if (err)
		return err;
	if (!exec || !g || flags)
		return cudaErrorInvalidValue;
	x = calloc(1, sizeof(*x));
	if (!x || !(x->ops = calloc((size_t)g->nops + 1, sizeof(*x->ops)))) {
		free(x);
		return cudaErrorMemoryAllocation;
	}
	for (i = 0; i < g->nops; i++) {
		if (!(x->ops[i] = malloc(sizeof(struct op)))) {
			x->nops = i;
			graph_free(x);
			return cudaErrorMemoryAllocation;
		}
		*x->ops[i] = *g->ops[i];
	}
	x->nops = x->cap = g->nops;
	*exec = (cudaGraphExec_t)x;
	trace("cudaGraphInstantiate %p ops %d", (void *)x, x->nops);
	return cudaSuccess;
}

/* The captured ops, in their order, on the stream: each a fresh copy the worker frees. */
SIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
	struct sim_graph *x = (struct sim_graph *)exec;
	cudaError_t err = ready_out(x);
	int i;

	if (err)
		return err;
	trace("cudaGraphLaunch %p ops %d stream %p", (void *)x, x->nops, (void *)stream);
	for (i = 0; i < x->nops; i++) {
		struct op *op = malloc(sizeof(*op));

		if (!op)
			return cudaErrorMemoryAllocation;
		*op = *x->ops[i];
		op->next = NULL;
		enqueue_op(resolve_stream(stream), op);
	}
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
	graph_free((struct sim_graph *)exec);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	graph_free((struct sim_graph *)graph);
	return cudaSuccess;
}

/* ------------------------------------------------------------------------- */
/* Streams, events, synchronisation                                           */

SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
	struct sim_stream *s;
	cudaError_t err = ready();

	if (err)
		return err;
	if (!stream || (flags & ~(unsigned)cudaStreamNonBlocking))
		return cudaErrorInvalidValue;
	pthread_mutex_lock(&sim.lock);
	s = stream_new(!(flags & cudaStreamNonBlocking));
	pthread_mutex_unlock(&sim.lock);
	if (!s)
		return cudaErrorMemoryAllocation;
	*stream = (cudaStream_t)s;
	trace("cudaStreamCreate %p flags %u", (void *)s, flags);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
	return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

SIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	struct sim_stream *s, **pp;
	cudaError_t err = ready();

	if (err)
		return err;
	s = resolve_stream(stream);
	if (s == sim.legacy)
		return cudaErrorInvalidResourceHandle;
	/* Work already queued still completes, as CUDA promises; the worker then stays idle. */
	wait_stream(s);
	pthread_mutex_lock(&sim.lock);
	for (pp = &sim.streams; *pp; pp = &(*pp)->next_all)
		if (*pp == s) {
			*pp = s->next_all;
			break;
		}
	s->next_all = sim.retired;
	sim.retired = s;
	pthread_mutex_unlock(&sim.lock);
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	trace("cudaStreamDestroy %p", (void *)s);
	return cudaSuccess;
}

static bool capture_refuses(struct sim_stream *s);

SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	cudaError_t err = ready();

	if (err)
		return err;
	if (capture_refuses(resolve_stream(stream)))
		return cudaErrorStreamCaptureUnsupported;
	wait_stream(resolve_stream(stream));
	trace("cudaStreamSynchronize %p", (void *)stream);
	return cudaSuccess;
}

/*
 * The host function runs on the stream's worker once the work before it is
 * done, and the work after it waits for its return, as CUDA documents. Like
 * CUDA's, it must not call the runtime: a library that needs to (simnccl)
 * hands the work to a thread of its own and waits for it.
 */
SIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *user_data)
{
	struct op *op;
	cudaError_t err = ready_out(fn);

	if (err)
		return err;
	op = calloc(1, sizeof(*op));
	if (!op)
		return cudaErrorMemoryAllocation;
	op->fn = fn;
	op->fn_arg = user_data;
	trace("cudaLaunchHostFunc stream %p", (void *)stream);
	enqueue_op(resolve_stream(stream), op);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	struct sim_stream *s;
	cudaError_t err = ready();
	bool idle;

	if (err)
		return err;
	s = resolve_stream(stream);
	if (capture_refuses(s))
		return cudaErrorStreamCaptureUnsupported;
	pthread_mutex_lock(&s->lock);
	idle = s->done >= s->enq;
	pthread_mutex_unlock(&s->lock);
	if (!idle)
		return not_ready();
	sync_cost(s);
	trace("cudaStreamQuery %p idle", (void *)stream);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	cudaError_t err = ready();

	if (err)
		return err;
	wait_all();
	trace("cudaDeviceSynchronize");
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	struct sim_event *e;
	cudaError_t err = ready_out(event);

	if (err)
		return err;
	e = calloc(1, sizeof(*e));
	if (!e)
		return cudaErrorMemoryAllocation;
	e->timing = !(flags & cudaEventDisableTiming);
	e->dev = sim.cur;
	*event = (cudaEvent_t)e;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	return cudaEventCreateWithFlags(event, cudaEventDefault);
}

SIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	struct sim_event *e = (struct sim_event *)event;

	if (!e)
		return cudaErrorInvalidResourceHandle;
	/* A marker still queued stamps the event: CUDA defers the release, this waits for it. */
	if (e->timing && e->recorded)
		wait_seq(e->stream, e->seq);
	free(event);
	return cudaSuccess;
}

/*
 * Timing events and cross-stream waits. A timing event's record is a marker op
 * on the stream: the worker, reaching it once the work before it is done, stamps
 * the time (and traces "cudaEventReached EVENT stream STREAM SECONDS", so that a
 * test sees when each stream ran); cudaEventElapsedTime subtracts two stamps. A
 * cudaStreamWaitEvent is a marker whose dependency is the event's record.
 */
static pthread_mutex_t stamp_lock = PTHREAD_MUTEX_INITIALIZER;

static bool stream_capturing(struct sim_stream *s)
{
	bool capturing;

	pthread_mutex_lock(&s->lock);
	capturing = s->capture != NULL;
	pthread_mutex_unlock(&s->lock);
	return capturing;
}

static void marker_reached(struct sim_stream *s, const struct op *op)
{
	struct sim_event *e = op->stamp;
	double at = now_s();

	if (!e)
		return;
	pthread_mutex_lock(&stamp_lock);
	if (e->gen == op->stamp_gen) {
		e->at = at;
		e->reached = true;
	}
	pthread_mutex_unlock(&stamp_lock);
	trace("cudaEventReached %p stream %p %.6f", (void *)e, (void *)s, at);
}

static cudaError_t timed_record(struct sim_event *e, struct sim_stream *s, cudaStream_t stream)
{
	struct op *op = calloc(1, sizeof(*op));
	uint64_t seq;

	if (!op)
		return cudaErrorMemoryAllocation;
	op->marker = true;
	op->stamp = e;
	pthread_mutex_lock(&stamp_lock);
	op->stamp_gen = ++e->gen;
	e->reached = false;
	pthread_mutex_unlock(&stamp_lock);
	trace("cudaEventRecord %p stream %p", (void *)e, (void *)stream);
	seq = enqueue_op(s, op);
	pthread_mutex_lock(&s->lock);
	e->stream = s;
	e->seq = seq;
	e->recorded = true;
	pthread_mutex_unlock(&s->lock);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	struct sim_event *a = (struct sim_event *)start, *b = (struct sim_event *)end;
	cudaError_t err = ready_out(ms);
	bool reached;
	double dt;

	if (err)
		return err;
	/* CUDA: either event created with cudaEventDisableTiming, or never recorded. */
	if (!a || !b || !a->timing || !b->timing || !a->recorded || !b->recorded)
		return cudaErrorInvalidResourceHandle;
	pthread_mutex_lock(&stamp_lock);
	reached = a->reached && b->reached;
	dt = b->at - a->at;
	pthread_mutex_unlock(&stamp_lock);
	if (!reached)
		return cudaErrorNotReady;
	*ms = (float)(dt * 1e3);
	trace("cudaEventElapsedTime %p %p %.6f ms", (void *)a, (void *)b, dt * 1e3);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	struct sim_event *e = (struct sim_event *)event;
	struct sim_stream *s;
	struct op *op;
	cudaError_t err = ready();

	if (err)
		return err;
	if (!e)
		return cudaErrorInvalidResourceHandle;
	if (flags)
		return cudaErrorInvalidValue;
	s = resolve_stream(stream);
	/* Joining a capture across streams is not simulated: refused, never silently dropped. */
	if (stream_capturing(s) || (e->recorded && stream_capturing(e->stream)))
		return cudaErrorNotSupported;
	trace("cudaStreamWaitEvent stream %p event %p", (void *)stream, (void *)e);
	/* CUDA: an event never recorded is complete, the wait a no-op. */
	if (!e->recorded)
		return cudaSuccess;
	op = calloc(1, sizeof(*op));
	if (!op)
		return cudaErrorMemoryAllocation;
	op->marker = true;
	pthread_mutex_lock(&e->stream->lock);
	op->deps[op->ndeps++] = (struct dep){ e->stream, e->seq };
	pthread_mutex_unlock(&e->stream->lock);
	enqueue_op(s, op);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	struct sim_event *e = (struct sim_event *)event;
	struct sim_stream *s;
	cudaError_t err = ready();

	if (err)
		return err;
	if (!e)
		return cudaErrorInvalidResourceHandle;
	s = resolve_stream(stream);
	/* "event and stream must be on the same CUDA context" (the legacy stream is the current device's). */
	if (e->dev != (s == sim.legacy ? sim.cur : s->dev)) {
		sim_log("error: cudaEventRecord: event of device %d on a stream of device %d", e->dev,
			s == sim.legacy ? sim.cur : s->dev);
		return cudaErrorInvalidResourceHandle;
	}
	if (e->timing && !stream_capturing(s))
		return timed_record(e, s, stream);
	pthread_mutex_lock(&s->lock);
	e->stream = s;
	e->seq = s->enq;
	e->recorded = true;
	pthread_mutex_unlock(&s->lock);
	trace("cudaEventRecord %p stream %p", (void *)e, (void *)stream);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	struct sim_event *e = (struct sim_event *)event;
	bool done;

	if (!e)
		return cudaErrorInvalidResourceHandle;
	if (!e->recorded)
		return cudaSuccess;
	pthread_mutex_lock(&e->stream->lock);
	done = e->stream->done >= e->seq;
	pthread_mutex_unlock(&e->stream->lock);
	return done ? cudaSuccess : not_ready();
}

SIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	struct sim_event *e = (struct sim_event *)event;

	if (!e)
		return cudaErrorInvalidResourceHandle;
	if (e->recorded)
		wait_seq(e->stream, e->seq);
	trace("cudaEventSynchronize %p", (void *)e);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaDeviceFlushGPUDirectRDMAWrites(enum cudaFlushGPUDirectRDMAWritesTarget target,
							  enum cudaFlushGPUDirectRDMAWritesScope scope)
{
	cudaError_t err = ready();

	if (err)
		return err;
	if (target != cudaFlushGPUDirectRDMAWritesTargetCurrentDevice ||
	    (scope != cudaFlushGPUDirectRDMAWritesToOwner && scope != cudaFlushGPUDirectRDMAWritesToAllDevices))
		return cudaErrorInvalidValue;
	__atomic_add_fetch(&sim.flushes, 1, __ATOMIC_RELAXED);
	trace("cudaDeviceFlushGPUDirectRDMAWrites scope %d", (int)scope);
	return cudaSuccess;
}

/* ------------------------------------------------------------------------- */
/* Driver entry points                                                        */

static CUresult CUDAAPI sim_cuGetErrorName(CUresult rc, const char **name)
{
	static const struct {
		CUresult rc;
		const char *name;
	} names[] = {
		{ CUDA_SUCCESS, "CUDA_SUCCESS" },
		{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE" },
		{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED" },
		{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED" },
		{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND" },
	};
	size_t i;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].rc == rc) {
			*name = names[i].name;
			return CUDA_SUCCESS;
		}
	*name = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult CUDAAPI sim_cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr dptr)
{
	struct sim_alloc *a;

	pthread_mutex_lock(&sim.lock);
	a = find_alloc((const void *)(uintptr_t)dptr);
	if (!a || a->kind != A_DEVICE || (uintptr_t)dptr >= (uintptr_t)a->base + a->size) {
		pthread_mutex_unlock(&sim.lock);
		return CUDA_ERROR_NOT_FOUND;
	}
	if (base)
		*base = (CUdeviceptr)(uintptr_t)a->base;
	if (size)
		*size = a->size;
	pthread_mutex_unlock(&sim.lock);
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI sim_cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
							  CUmemRangeHandleType type,
							  unsigned long long flags)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), p = (uintptr_t)dptr;
	struct sim_alloc *a;
	int fd;

	trace("cuMemGetHandleForAddressRange %#" PRIxPTR " %zu", p, size);
	if (!handle || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || flags || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim.dmabuf)
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((p & (page - 1)) || (size & (page - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	a = find_alloc((const void *)p);
	if (!a || a->kind != A_DEVICE || size > a->span - (p - (uintptr_t)a->base)) {
		pthread_mutex_unlock(&sim.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* A real descriptor of the pages (not a dma-buf: soft-RoCE refuses every dma-buf anyway). */
	fd = dup(sim.heap_fd);
	if (fd < 0) {
		pthread_mutex_unlock(&sim.lock);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->export_fd = fd;
	fstat(fd, &a->export_st);
	pthread_mutex_unlock(&sim.lock);
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI sim_cuPointerSetAttribute(const void *value, CUpointer_attribute attr,
						  CUdeviceptr ptr)
{
	struct sim_alloc *a;

	trace("cuPointerSetAttribute %d %#llx", (int)attr, (unsigned long long)ptr);
	if (!value || attr != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim.lock);
	a = find_alloc((const void *)(uintptr_t)ptr);
	/* Pinned host memory too: an H200 with CUDA 13.0 accepted it (results/gpu-h200). */
	if (!a) {
		pthread_mutex_unlock(&sim.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	a->sync_memops = *(const unsigned int *)value != 0;
	pthread_mutex_unlock(&sim.lock);
	return CUDA_SUCCESS;
}

static const struct {
	const char *symbol;
	void *fn;
	int since;              /* the CUDA version that introduced this form */
} entry_points[] = {
	{ "cuGetErrorName", (void *)sim_cuGetErrorName, 6000 },
	{ "cuMemGetAddressRange", (void *)sim_cuMemGetAddressRange_v2, 3020 },
	{ "cuMemGetHandleForAddressRange", (void *)sim_cuMemGetHandleForAddressRange, 11070 },
	{ "cuPointerSetAttribute", (void *)sim_cuPointerSetAttribute, 6000 },
};

static cudaError_t entry_point(const char *symbol, void **fn, int version,
			       enum cudaDriverEntryPointQueryResult *status)
{
	cudaError_t err = ready();
	size_t i;

	if (!symbol || !fn)
		return cudaErrorInvalidValue;
	*fn = NULL;
	if (err)
		return err;
	trace("entry point %s %d", symbol, version);
	for (i = 0; i < sizeof(entry_points) / sizeof(entry_points[0]); i++) {
		if (strcmp(entry_points[i].symbol, symbol))
			continue;
		if (version < entry_points[i].since) {
			if (status)
				*status = cudaDriverEntryPointVersionNotSufficent;
			return cudaSuccess;
		}
		*fn = entry_points[i].fn;
		if (status)
			*status = cudaDriverEntryPointSuccess;
		return cudaSuccess;
	}
	if (status)
		*status = cudaDriverEntryPointSymbolNotFound;
	return cudaSuccess;
}

#ifndef SIMGPU_NO_BY_VERSION
SIM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn,
							unsigned int version,
							unsigned long long flags,
							enum cudaDriverEntryPointQueryResult *status)
{
	(void)flags;
	return entry_point(symbol, fn, (int)version, status);
}
#endif

/* The older form: the runtime's own version picks each symbol's form. */
SIM_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
					       enum cudaDriverEntryPointQueryResult *status)
{
	(void)flags;
	return entry_point(symbol, fn, SIMGPU_RUNTIME_VERSION, status);
}
