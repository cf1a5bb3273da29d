/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver's buffers: how large, whether this node has the room, allocation and release. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "driver_int.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_memroom.h"
#include "gdrb_pattern.h"
#include "gdrb_size.h"

bool gdrb_drv_any_variant(const struct gdrb_ctx *c, bool pipelined)
{
	size_t i;

	for (i = 0; i < c->nvariants; i++)
		if (c->variants[i].supported && c->variants[i].staged &&
		    c->variants[i].pipelined == pipelined)
			return true;
	return false;
}

static void size_buffers(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	size_t max = gdrb_sizes_max(&r->p.sizes), i;

	/* Rounding may raise a tiny size to one element per rank. */
	for (i = 0; c->bench->adjust_size && i < r->p.sizes.n; i++)
		if (c->bench->adjust_size(c, r->p.sizes.v[i]) > max)
			max = c->bench->adjust_size(c, r->p.sizes.v[i]);
	if (gdrb_windowed(c->bench, &r->p))
		max = gdrb_buf_bytes(&r->p.sizes, r->p.window, r->p.window_bytes, true);
	c->bufsize = max;
}

/* "1.5GiB", "2.0TiB", "0.5MiB": room figures are not round. */
static char *human(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (UINT64_C(1) << 40))
		snprintf(buf, len, "%.1fTiB", (double)bytes / (double)(UINT64_C(1) << 40));
	else if (bytes >= (UINT64_C(1) << 30))
		snprintf(buf, len, "%.1fGiB", (double)bytes / (double)(UINT64_C(1) << 30));
	else
		snprintf(buf, len, "%.1fMiB", (double)bytes / (double)(UINT64_C(1) << 20));
	return buf;
}

/*
 * What gdrb_drv_alloc_buffers will take from host memory on this node, against what
 * is available: a run that does not fit is refused with a line, where the
 * OOM killer would have ended it with none.
 */
int gdrb_drv_check_room(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	size_t per = 0, node = 0, nbufs = 0, ring = 0;
	bool uses_send, fits;
	struct gdrb_mem_room room;
	uint64_t avail;
	char need_s[128], avail_s[512], cg_s[320], mi[32], cg[32], buf_s[32];

	size_buffers(r);
	uses_send = !c->bench->uses_send || c->bench->uses_send(c);
	if (!gdrb_mem_kind(r->p.mem)->on_gpu)
		nbufs += uses_send ? 2 : 1;
	if (gdrb_drv_any_variant(c, false))
		nbufs += uses_send ? 2 : 1;
	/* The rings before their size is chosen: the largest a choice can give. */
	if (gdrb_drv_any_variant(c, true))
		ring = (uses_send ? 2 : 1) * (size_t)(r->p.stage_slots ? r->p.stage_slots : GDRB_STAGE_SLOTS);
	fits = gdrb_size_mul(c->bufsize, nbufs, &per) &&
	       gdrb_size_mul(r->p.stage_chunk ? r->p.stage_chunk : GDRB_STAGE_AUTO_MAX, ring, &ring) &&
	       gdrb_size_add(per, ring, &per) &&
	       gdrb_size_mul(per, (size_t)(c->boot->local_size > 0 ? c->boot->local_size : 1), &node);
	gdrb_mem_room(GDRB_PROCFS, GDRB_CGROUPFS, &room);
	avail = gdrb_mem_room_bytes(&room);
	if (fits && (uint64_t)node <= avail)
		return 0;
	/* One line per node: its first rank says it (rank 0's as the usage error). */
	if (c->boot->local_rank != 0)
		return GDRB_ERR_USAGE;
	if (fits)
		snprintf(need_s, sizeof(need_s), "%s of host memory per rank, %s for the %d ranks on this node",
			 human(per, mi, sizeof(mi)), human(node, cg, sizeof(cg)), c->boot->local_size);
	else
		snprintf(need_s, sizeof(need_s), "more than 2^64 bytes of host memory");
	if (room.have_cgroup)
		snprintf(cg_s, sizeof(cg_s), "memory cgroup %s: %s", room.cgroup,
			 human(room.cgroup_room, cg, sizeof(cg)));
	else
		snprintf(cg_s, sizeof(cg_s), "no memory cgroup limit");
	snprintf(avail_s, sizeof(avail_s), "%s (MemAvailable %s, %s)", human(avail, mi, sizeof(mi)),
		 room.have_available ? human(room.available, cg, sizeof(cg)) : "unknown", cg_s);
	if (gdrb_log_is_leader())
		gdrb_usage_err("-m: buffers of %s need %s; available: %s; use smaller sizes",
			       gdrb_size_format(c->bufsize, buf_s, sizeof(buf_s)), need_s, avail_s);
	else
		gdrb_err("-m: buffers of %s need %s; available: %s; use smaller sizes",
			 gdrb_size_format(c->bufsize, buf_s, sizeof(buf_s)), need_s, avail_s);
	return GDRB_ERR_USAGE;
}

int gdrb_drv_alloc_buffers(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	const struct gdrb_mem_ops *ops, *pinned;
	const char *why;
	bool uses_send;

	size_buffers(r);
	ops = gdrb_mem_ops_get(r->p.mem, &why);
	if (!ops) {
		gdrb_err("--mem %s: %s", gdrb_mem_kind_name(r->p.mem), why);
		return GDRB_ERR_UNSUPP;
	}
	/* In place and bcast never read a send buffer: it is not even allocated. */
	uses_send = !c->bench->uses_send || c->bench->uses_send(c);
	if ((uses_send && gdrb_buf_alloc(&c->send, ops, c->bufsize)) ||
	    gdrb_buf_alloc(&c->recv, ops, c->bufsize))
		return GDRB_ERR;
	if (gdrb_drv_any_variant(c, false)) {
		pinned = gdrb_mem_bounce_ops();
		if ((uses_send && gdrb_buf_alloc(&c->send_bounce, pinned, c->bufsize)) ||
		    gdrb_buf_alloc(&c->recv_bounce, pinned, c->bufsize))
			return GDRB_ERR;
		memset(c->recv_bounce.ptr, 0, c->bufsize);
		if (uses_send)
			memset(c->send_bounce.ptr, 0, c->bufsize);
	}
	/* Touch every page once, so first-touch faults never land in a sample. */
	if ((uses_send && gdrb_buf_fill_pattern(&c->send, 0, c->bufsize, 1)) ||
	    gdrb_buf_fill_pattern(&c->recv, 0, c->bufsize, 2))
		return GDRB_ERR;
	return 0;
}

void gdrb_drv_free_buffers(struct gdrb_ctx *c)
{
	gdrb_buf_free(&c->send);
	gdrb_buf_free(&c->recv);
	gdrb_buf_free(&c->send_bounce);
	gdrb_buf_free(&c->recv_bounce);
	gdrb_ring_close(&c->out_ring);
	gdrb_ring_close(&c->in_ring);
}
