/* SPDX-License-Identifier: BSD-3-Clause */
/* How an NCCL benchmark's calls are timed (nccl_batch.h): batch, call or graph, the offset's rotation. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_coll_opts.h"
#include "gdrb_log.h"
#include "gdrb_nccl_opts.h"
#include "nccl_batch.h"
#include "nccl_int.h"

static struct {
	unsigned long long calls;       /* calls issued at this size and placement */
	size_t checked;                 /* the shift of the validated call */
	cudaGraphExec_t exec;           /* graph timing: the batch, captured */
	cudaGraph_t graph;
	bool have_graph;
} st;

/* The mode in force: under -c every each timed iteration is one validated call. */
static int mode(const struct gdrb_ctx *c)
{
	if (c->p->validate == GDRB_VALIDATE_EVERY)
		return GDRB_NCCL_TIMING_CALL;
	return gdrb_nccl_params(c->p)->timing;
}

static unsigned batch(const struct gdrb_ctx *c)
{
	return mode(c) == GDRB_NCCL_TIMING_CALL ? 1 : gdrb_nccl_params(c->p)->batch;
}

size_t gdrb_nccl_shift(const struct gdrb_ctx *c, size_t size, unsigned long long k)
{
	size_t steps = size ? c->bufsize / size : 1;

	return steps > 1 ? size * (size_t)(k % steps) : 0;
}

static int cuda_failed(const struct gdrb_ctx *c, cudaError_t ce, const char *call, const char *what,
		       size_t size)
{
	gdrb_err("rank %d: %s failed for %s at size %zu: %s", c->boot->rank, call, what, size,
		 cudaGetErrorString(ce));
	return GDRB_ERR;
}

void gdrb_nccl_timing_release(void)
{
	if (!st.have_graph)
		return;
	(void)cudaGraphExecDestroy(st.exec);
	(void)cudaGraphDestroy(st.graph);
	st.have_graph = false;
}

/*
 * The batch captured as nccl-tests -G captures it: call k at its rotated
 * offset, thread-local capture (NCCL may allocate while connecting).
 */
static int capture(struct gdrb_ctx *c, size_t size, gdrb_nccl_issue_fn *issue, const char *what)
{
	cudaStream_t s = gdrb_nccl()->stream;
	cudaError_t ce;
	unsigned k, n = batch(c);
	int rc = 0;

	if ((ce = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)))
		return cuda_failed(c, ce, "cudaStreamBeginCapture", what, size);
	for (k = 0; k < n && !rc; k++)
		rc = issue(c, size, gdrb_nccl_shift(c, size, k));
	ce = cudaStreamEndCapture(s, &st.graph);
	if (rc)
		return rc;
	if (ce)
		return cuda_failed(c, ce, "cudaStreamEndCapture", what, size);
	if ((ce = cudaGraphInstantiate(&st.exec, st.graph, 0))) {
		(void)cudaGraphDestroy(st.graph);
		return cuda_failed(c, ce, "cudaGraphInstantiate", what, size);
	}
	st.have_graph = true;
	return 0;
}

int gdrb_nccl_timing_begin(struct gdrb_ctx *c, size_t size, gdrb_nccl_issue_fn *issue, const char *what)
{
	st.calls = 0;
	c->calls_per_iter = batch(c);
	snprintf(c->lib_timing, sizeof(c->lib_timing), "%s", gdrb_nccl_timing_names[mode(c)]);
	c->lib_calls_per_sync = batch(c);
	gdrb_nccl_timing_release();
	if (mode(c) != GDRB_NCCL_TIMING_GRAPH)
		return 0;
	/* One call first, as nccl-tests does: NCCL connects outside the capture. */
	if (issue(c, size, 0) || gdrb_nccl_sync(c, what, size))
		return GDRB_ERR;
	return capture(c, size, issue, what);
}

size_t gdrb_nccl_checked_shift(const struct gdrb_ctx *c, size_t size, int prepare)
{
	if (prepare)
		st.checked = gdrb_nccl_shift(c, size, st.calls);
	return st.checked;
}

int gdrb_nccl_timing_iteration(struct gdrb_ctx *c, size_t size, gdrb_nccl_issue_fn *issue,
			       const char *what)
{
	unsigned k, n = batch(c);
	cudaError_t ce;

	if (c->checking) {
		st.calls++;
		if (issue(c, size, st.checked))
			return GDRB_ERR;
	} else if (mode(c) == GDRB_NCCL_TIMING_GRAPH) {
		if ((ce = cudaGraphLaunch(st.exec, gdrb_nccl()->stream)))
			return cuda_failed(c, ce, "cudaGraphLaunch", what, size);
		st.calls += n;  /* the graph's calls count, though each launch repeats their offsets */
	} else {
		for (k = 0; k < n; k++)
			if (issue(c, size, gdrb_nccl_shift(c, size, st.calls++)))
				return GDRB_ERR;
	}
	return gdrb_nccl_sync(c, what, size);
}

/* nccl-tests' binary for a benchmark (one per file of its src), NULL where it has none. */
static const char *perf_binary(const char *name)
{
	static const char *const map[][2] = {
		{ "nccl_allreduce", "all_reduce_perf" }, { "nccl_allgather", "all_gather_perf" },
		{ "nccl_reduce_scatter", "reduce_scatter_perf" }, { "nccl_alltoall", "alltoall_perf" },
		{ "nccl_bcast", "broadcast_perf" }, { "nccl_reduce", "reduce_perf" },
		{ "nccl_sendrecv", "sendrecv_perf" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i][0], name))
			return map[i][1];
	return NULL;
}

/* A size as nccl-tests' -b/-e read it (K, M, G: powers of 1024). */
static const char *perf_size(size_t v, char *buf, size_t len)
{
	static const char units[] = "GMK";
	int u;

	for (u = 0; u < 3; u++) {
		size_t unit = (size_t)1 << (10 * (3 - u));

		if (v >= unit && v % unit == 0) {
			snprintf(buf, len, "%zu%c", v / unit, units[u]);
			return buf;
		}
	}
	snprintf(buf, len, "%zu", v);
	return buf;
}

/* The nccl-tests command whose figures set beside this run's (its options; docs/nccl.md). */
static void perf_command(const struct gdrb_ctx *c, char *buf, size_t len)
{
	const struct gdrb_coll_params *cp = gdrb_coll_params(c->p);
	const char *bin = perf_binary(c->bench->name);
	size_t lo = (size_t)-1, hi = 0, i;
	char b[32], e[32];
	int n, m = mode(c);

	for (i = 0; i < c->p->sizes.n; i++) {
		lo = c->p->sizes.v[i] < lo ? c->p->sizes.v[i] : lo;
		hi = c->p->sizes.v[i] > hi ? c->p->sizes.v[i] : hi;
	}
	n = snprintf(buf, len, "%s -b %s -e %s -f 2 -g 1 -n %u -w 5 -c %d%s%s",
		     bin ? bin : "(none)", perf_size(lo, b, sizeof(b)), perf_size(hi, e, sizeof(e)),
		     m == GDRB_NCCL_TIMING_CALL ? 20 : batch(c), c->p->validate != GDRB_VALIDATE_NO,
		     m == GDRB_NCCL_TIMING_CALL ? " -z 2" : "", m == GDRB_NCCL_TIMING_GRAPH ? " -G 1" : "");
	if (cp && (size_t)n < len && (!strcmp(c->bench->name, "nccl_allreduce") ||
				      !strcmp(c->bench->name, "nccl_reduce_scatter") ||
				      !strcmp(c->bench->name, "nccl_reduce")))
		n += snprintf(buf + n, len - (size_t)n, " -o %s -d %s", gdrb_redop_names[cp->op],
			      gdrb_dtype_names[cp->dtype]);
	if (cp && (size_t)n < len && (!strcmp(c->bench->name, "nccl_bcast") ||
				      !strcmp(c->bench->name, "nccl_reduce")))
		snprintf(buf + n, len - (size_t)n, " -r %d", cp->root);
}

void gdrb_nccl_timing_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	char cmd[256];
	unsigned n = batch(c);
	int m = mode(c), w = 0;

	perf_command(c, cmd, sizeof(cmd));
	if (m == GDRB_NCCL_TIMING_CALL)
		w = snprintf(buf, len,
			     "NCCL timing call%s: a sample is one call and the synchronisation of its stream, timed on the host; calls back to back, no barrier (nccl-tests -z 2's shape); p50/p99 are single calls'",
			     c->p->validate == GDRB_VALIDATE_EVERY && gdrb_nccl_params(c->p)->timing != m ?
			     " (-c every checks around every timed call, so each sample is one call whatever --nccl-timing says)" : "");
	else
		w = snprintf(buf, len,
			     "NCCL timing %s: a sample is %u calls %s and one synchronisation of the stream, timed on the host; time per call = the sample / %u, so avg is nccl-tests' time and p50/p99 are over the batches' mean times per call, not single calls; a validated iteration (-c) is one call, untimed",
			     gdrb_nccl_timing_names[m], n,
			     m == GDRB_NCCL_TIMING_GRAPH ?
			     "captured once per size and placement in a CUDA graph (after one untimed call), launched" :
			     "launched back to back", n);
	if (w < 0 || (size_t)w >= len)
		return;
	snprintf(buf + w, len - (size_t)w,
		 "\n# NCCL synchronisation: cudaStreamQuery polled, the CPU yielded (sched_yield) between polls and NCCL's asynchronous error read, as nccl-tests' testStreamSynchronize\n"
		 "# NCCL buffer offset: call k of a size and placement runs at size x (k mod floor(%zu / size)) bytes into both buffers (nccl-tests' startColl rotation, within the %zu-byte buffers the largest size needs: the largest size does not move), so that a small size does not run from one cached spot; validation checks the offset its call used\n"
		 "# comparable nccl-tests figures: %s (out of place: its first group of columns; --in-place: its in-place group; time against lat_avg_us)",
		 c->bufsize, c->bufsize, cmd);
}
