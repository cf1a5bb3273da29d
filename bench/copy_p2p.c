/* SPDX-License-Identifier: BSD-3-Clause */
/* gdrb_copy_bw --p2p: copies between the node's GPUs (copy_p2p.h). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_p2p_int.h"
#include "gdrb_log.h"
#include "gdrb_peer.h"
#include "gdrb_report.h"
#include "gdrb_run.h"
#include "gdrb_size.h"

const char *const copy_p2p_mode_names[P2P_MODES] = { "off", "uni", "bidir", "both" };

static const struct {
	const char *label, *path, *reg, *how;
} p2p_paths[4] = {
	{ "direct", "p2p-direct", "none",
	  "cudaMemcpyAsync from GPU i's memory to GPU j's on a stream of GPU i, with peer access enabled (the copy engines over NVLink or PCIe peer-to-peer); n/a for a pair without it" },
	{ "staged", "p2p-staged", "staged",
	  "GPU i -> pinned host -> GPU j: cudaMemcpyAsync in fragments through pinned slots, GPU i's copies out on its stream and GPU j's copies in on its own, pipelined by events" },
	{ "direct_bidir", "p2p-direct-bidir", "none",
	  "the direct copy while GPU j copies to GPU i at once, each direction on its own GPU's stream; a direction's bandwidth: the size over the time until both ended" },
	{ "staged_bidir", "p2p-staged-bidir", "staged",
	  "the staged copy while GPU j stages to GPU i at once through its own slots; a direction's bandwidth: the size over the time until both ended" },
};

static int open_gpu_part(struct p2p_gpu *g, int dev, size_t max)
{
	const char *why;
	unsigned s;

	/* Memory, streams and events belong to the device current when they are made. */
	if (gdrb_cuda_set_device(dev) ||
	    gdrb_buf_alloc(&g->src, gdrb_mem_ops_get(GDRB_MEM_DEVICE, &why), max) ||
	    gdrb_buf_alloc(&g->dst, gdrb_mem_ops_get(GDRB_MEM_DEVICE, &why), max) ||
	    gdrb_buf_alloc(&g->bounce, gdrb_mem_bounce_ops(), P2P_SLOTS * P2P_CHUNK) ||
	    gdrb_cuda_stream_create(&g->out) || gdrb_cuda_stream_create(&g->in))
		return GDRB_ERR;
	for (s = 0; s < P2P_SLOTS; s++)
		if (gdrb_cuda_event_create(&g->out_done[s]) || gdrb_cuda_event_create(&g->in_done[s]))
			return GDRB_ERR;
	return 0;
}

static void add_path(struct gdrb_ctx *c, int id)
{
	c->variants[c->nvariants++] = (struct gdrb_variant){ .label = p2p_paths[id].label, .mem = "device",
		.path = p2p_paths[id].path, .reg = p2p_paths[id].reg, .how = p2p_paths[id].how,
		.supported = true, .id = id };
}

int copy_p2p_preflight(uint64_t gpus)
{
	int count, top;

	/* No list, or no GPU CUDA can count: the setup says what the node lacks (exit 77). */
	if (!gpus || gdrb_cuda_count(&count))
		return 0;
	top = 63 - __builtin_clzll(gpus);
	if (top < count)
		return 0;
	gdrb_usage_err("--p2p-gpus: GPU %d is beyond this node's %d GPU%s (0-%d, numbered as CUDA_VISIBLE_DEVICES leaves them); expected GPU numbers like 0,2,5 or 0-3 among them",
		       top, count, count == 1 ? "" : "s", count - 1);
	return GDRB_ERR_USAGE;
}

/* The GPUs measured: every one CUDA sees, or those of gpus (a bit each), up to P2P_MAX_GPUS. */
static int choose_gpus(struct p2p *p, int count, uint64_t gpus)
{
	int i, wanted = 0;

	for (i = 0; i < count && i < 64; i++) {
		if (gpus && !((gpus >> i) & 1))
			continue;
		wanted++;
		if (p->ngpu < P2P_MAX_GPUS)
			p->dev[p->ngpu++] = (unsigned)i;
	}
	if (gpus && wanted != __builtin_popcountll(gpus)) {
		gdrb_usage_err("--p2p-gpus: this node has %d GPUs (0-%d); expected GPU numbers among them", count,
			       count - 1);
		return GDRB_ERR_USAGE;
	}
	if (wanted > p->ngpu)
		gdrb_warn("--p2p: the first %d of %d GPUs are measured", p->ngpu, wanted);
	return 0;
}

int copy_p2p_setup(struct gdrb_ctx *c, int mode, uint64_t gpus)
{
	size_t max = gdrb_sizes_max(&c->p->sizes);
	struct p2p *p;
	int i, rc;

	if (c->gpu.count < 2) {
		gdrb_err("--p2p: CUDA sees %d GPU on this node (CUDA_VISIBLE_DEVICES may hide others): GPU-to-GPU copies need two; nothing measured",
			 c->gpu.count);
		return GDRB_ERR_UNSUPP;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return GDRB_ERR;
	c->priv = p;
	p->mode = mode;
	rc = choose_gpus(p, c->gpu.count, gpus);
	if (rc)
		return rc;
	for (i = 0; i < p->ngpu; i++)
		if (open_gpu_part(&p->gpu[i], (int)p->dev[i], max))
			return GDRB_ERR;
	rc = gdrb_peer_open(&p->peers, p->dev, p->ngpu);
	/* The selected GPU current again, as the rest of the run expects. */
	if (gdrb_cuda_set_device(c->gpu.index) || rc)
		return GDRB_ERR;
	c->bufsize = max;
	c->nsubjects = (unsigned)(p->ngpu * (p->ngpu - 1));
	c->nvariants = 0;
	for (i = 0; i < 4; i++)
		if ((mode == P2P_BOTH || (mode == P2P_BIDIR) == !!(i & PATH_BIDIR)))
			add_path(c, i);
	return 0;
}

/* Subject k: the k-th ordered pair, from GPU k / (n-1), to each other GPU in order. */
int copy_p2p_select(struct gdrb_ctx *c, unsigned k)
{
	struct p2p *p = copy_p2p_state(c);
	size_t i;

	p->from = (int)k / (p->ngpu - 1);
	p->to = (int)k % (p->ngpu - 1);
	p->to += p->to >= p->from;
	snprintf(c->subject_name, sizeof(c->subject_name), "gpu%u->gpu%u", p->dev[p->from], p->dev[p->to]);
	for (i = 0; i < c->nvariants; i++) {
		struct gdrb_variant *v = &c->variants[i];
		bool bidir = v->id & PATH_BIDIR;
		/* A direct copy is issued by its source GPU, which must map the destination's memory. */
		bool fwd = p->peers.enabled[p->from][p->to], back = !bidir || p->peers.enabled[p->to][p->from];
		char why[sizeof(v->why) - 80];
		int a = fwd ? p->to : p->from, b = fwd ? p->from : p->to;

		v->supported = (v->id & PATH_STAGED) || (fwd && back);
		if (v->supported)
			continue;
		gdrb_peer_why(&p->peers, a, b, why, sizeof(why));
		snprintf(v->why, sizeof(v->why), "%s; the copies go through host memory, as the staged row measures", why);
	}
	return 0;
}

void copy_p2p_begin(struct gdrb_ctx *c)
{
	c->calls_per_iter = 1;
	snprintf(c->lib_note, sizeof(c->lib_note), "copy engine: cudaMemcpyAsync %s, host clock",
		 c->variant->id & PATH_STAGED ? "GPU -> pinned host -> GPU in fragments" :
		 "GPU -> GPU (peer access)");
}

/* size bytes from `from`'s src to `to`'s dst through `from`'s pinned slots, enqueued only. */
static int enqueue_staged(struct p2p *p, int from, int to, size_t size)
{
	struct p2p_gpu *a = &p->gpu[from], *b = &p->gpu[to];
	size_t off, f = 0;

	for (off = 0; off < size; off += P2P_CHUNK, f++) {
		size_t len = size - off < P2P_CHUNK ? size - off : P2P_CHUNK;
		unsigned s = (unsigned)(f % P2P_SLOTS);
		char *slot = (char *)a->bounce.ptr + (size_t)s * P2P_CHUNK;

		/* A slot is filled again once the GPU it was drained into has taken it. */
		if (f >= P2P_SLOTS && gdrb_cuda_stream_wait_event(a->out, b->in_done[s]))
			return GDRB_ERR;
		if (gdrb_cuda_copy_async(slot, (char *)a->src.ptr + off, len, a->out, a->out_done[s]) ||
		    gdrb_cuda_stream_wait_event(b->in, a->out_done[s]) ||
		    gdrb_cuda_copy_async((char *)b->dst.ptr + off, slot, len, b->in, b->in_done[s]))
			return GDRB_ERR;
	}
	return 0;
}

static int enqueue_one(struct p2p *p, int id, int from, int to, size_t size)
{
	if (id & PATH_STAGED)
		return enqueue_staged(p, from, to, size);
	return gdrb_cuda_copy_async(p->gpu[to].dst.ptr, p->gpu[from].src.ptr, size, p->gpu[from].out, NULL);
}

/* The stream the last copy of a direction lands on. */
static void *landing(struct p2p *p, int id, int from, int to)
{
	return id & PATH_STAGED ? p->gpu[to].in : p->gpu[from].out;
}

/* One iteration: the copy (and the opposite one at once), to the end of both, on the host clock. */
int copy_p2p_iteration(struct gdrb_ctx *c, size_t size)
{
	struct p2p *p = copy_p2p_state(c);
	int id = c->variant->id;
	bool bidir = id & PATH_BIDIR;

	if (enqueue_one(p, id, p->from, p->to, size) ||
	    (bidir && enqueue_one(p, id, p->to, p->from, size)))
		return GDRB_ERR;
	if (gdrb_cuda_stream_sync(landing(p, id, p->from, p->to)) ||
	    (bidir && gdrb_cuda_stream_sync(landing(p, id, p->to, p->from))))
		return GDRB_ERR;
	return 0;
}

int copy_p2p_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct p2p *p = copy_p2p_state(c);
	uint64_t seed = gdrb_p2p_seed(size, iter, 0, 0);

	if (gdrb_buf_fill_pattern(&p->gpu[p->from].src, 0, size, seed))
		return GDRB_ERR;
	return c->variant->id & PATH_BIDIR ? gdrb_buf_fill_pattern(&p->gpu[p->to].src, 0, size, seed + 1) : 0;
}

static uint64_t check_dst(struct gdrb_ctx *c, int from, int to, size_t size, uint64_t seed)
{
	struct gdrb_buf *dst = &copy_p2p_state(c)->gpu[to].dst;
	size_t first = 0;
	uint64_t bad;

	/* The corruption test hook (GDRB_INJECT_CORRUPTION): a byte of each checked copy. */
	gdrb_run_corrupt(c->boot, dst, 0, size);
	bad = gdrb_buf_check_pattern(dst, 0, size, seed, &first);
	if (bad && bad != (uint64_t)-1)
		gdrb_mismatch(c, "%llu wrong byte(s) after the %s copy gpu%u->gpu%u at size %zu, first at byte %zu",
			      (unsigned long long)bad, c->variant->label, copy_p2p_state(c)->dev[from], copy_p2p_state(c)->dev[to], size,
			      first);
	return bad;
}

uint64_t copy_p2p_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	struct p2p *p = copy_p2p_state(c);
	uint64_t seed = gdrb_p2p_seed(size, iter, 0, 0), bad, far;

	bad = check_dst(c, p->from, p->to, size, seed);
	if (bad == (uint64_t)-1 || !(c->variant->id & PATH_BIDIR))
		return bad;
	far = check_dst(c, p->to, p->from, size, seed + 1);
	return far == (uint64_t)-1 ? far : bad + far;
}

void copy_p2p_teardown(struct gdrb_ctx *c)
{
	struct p2p *p = copy_p2p_state(c);
	unsigned s;
	int i;

	if (!p)
		return;
	for (i = 0; i < p->ngpu; i++) {
		struct p2p_gpu *g = &p->gpu[i];

		if (gdrb_cuda_set_device((int)p->dev[i]))
			break;
		for (s = 0; s < P2P_SLOTS; s++) {
			gdrb_cuda_event_destroy(g->out_done[s]);
			gdrb_cuda_event_destroy(g->in_done[s]);
		}
		gdrb_cuda_stream_destroy(g->out);
		gdrb_cuda_stream_destroy(g->in);
		gdrb_buf_free(&g->src);
		gdrb_buf_free(&g->dst);
		gdrb_buf_free(&g->bounce);
	}
	gdrb_peer_close(&p->peers);
	if (c->have_gpu)
		(void)gdrb_cuda_set_device(c->gpu.index);
	free(p);
	c->priv = NULL;
}
