/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_size.h"
#include "gdrb_stage.h"

const char *const gdrb_staging_names[GDRB_STAGING_COUNT] = { "pipelined", "serial", "both" };

int gdrb_ring_open(struct gdrb_ring *r, const char *name, size_t chunk, unsigned slots)
{
	const struct gdrb_mem_ops *pinned;
	const char *why, *inject = gdrb_inject()->stage_race;
	size_t bytes;
	unsigned i;

	memset(r, 0, sizeof(*r));
	if (slots < GDRB_STAGE_SLOTS_MIN || slots > GDRB_STAGE_SLOTS) {
		gdrb_err("internal: %u staging slots (%u..%u)", slots, GDRB_STAGE_SLOTS_MIN, GDRB_STAGE_SLOTS);
		return GDRB_ERR;
	}
	r->chunk = chunk;
	r->slots = slots;
	r->skip_wait = inject && (!strcmp(inject, "all") || !strcmp(inject, name));
	if (!gdrb_size_mul(chunk, slots, &bytes)) {
		gdrb_err("internal: a %s ring of %u slots of %zu bytes overflows size_t", name, slots, chunk);
		return GDRB_ERR;
	}
	pinned = gdrb_mem_ops_get(GDRB_MEM_PINNED, &why);
	if (!pinned || gdrb_buf_alloc(&r->buf, pinned, bytes))
		goto fail;
	memset(r->buf.ptr, 0, bytes);
	if (gdrb_cuda_stream_create(&r->stream))
		goto fail;
	for (i = 0; i < slots; i++)
		if (gdrb_cuda_event_create(&r->event[i]))
			goto fail;
	return 0;
fail:
	gdrb_ring_close(r);
	return GDRB_ERR;
}

void gdrb_ring_close(struct gdrb_ring *r)
{
	unsigned i;

	if (r->stream)
		gdrb_ring_settle(r);
	for (i = 0; i < GDRB_STAGE_SLOTS; i++)
		gdrb_cuda_event_destroy(r->event[i]);
	gdrb_cuda_stream_destroy(r->stream);
	gdrb_buf_free(&r->buf);
	memset(r, 0, sizeof(*r));
}

bool gdrb_ring_ready(const struct gdrb_ring *r)
{
	return r->buf.ptr != NULL;
}

int gdrb_ring_fill(struct gdrb_ring *r, size_t frag, const struct gdrb_buf *src, size_t off,
		   size_t len)
{
	if (!len)
		return 0;
	return gdrb_cuda_copy_async(gdrb_ring_slot(r, frag), (const char *)src->ptr + off, len,
				    r->stream, r->event[frag % r->slots]);
}

int gdrb_ring_drain(struct gdrb_ring *r, size_t frag, struct gdrb_buf *dst, size_t off,
		    size_t len)
{
	if (!len)
		return 0;
	return gdrb_cuda_copy_async((char *)dst->ptr + off, gdrb_ring_slot(r, frag), len,
				    r->stream, r->event[frag % r->slots]);
}

int gdrb_ring_copy_frag(struct gdrb_ring *r, const struct gdrb_frags *fr, size_t f,
			struct gdrb_buf *dev, bool out)
{
	size_t off, len;

	gdrb_frag_at(fr, f, &off, &len, NULL);
	return out ? gdrb_ring_fill(r, f, dev, off, len) : gdrb_ring_drain(r, f, dev, off, len);
}

int gdrb_ring_wait(struct gdrb_ring *r, size_t frag)
{
	if (r->skip_wait)
		return 0;
	/* An event never recorded counts as finished, as CUDA's does. */
	return gdrb_cuda_event_wait(r->event[frag % r->slots]);
}

int gdrb_ring_done(struct gdrb_ring *r, size_t frag)
{
	if (r->skip_wait)
		return 1;
	return gdrb_cuda_event_done(r->event[frag % r->slots]);
}

int gdrb_ring_settle(struct gdrb_ring *r)
{
	unsigned i;

	for (i = 0; i < r->slots; i++)
		if (gdrb_cuda_event_wait(r->event[i]))
			return GDRB_ERR;
	return 0;
}

void gdrb_frags_init(struct gdrb_frags *fr, size_t size, unsigned count, size_t chunk,
		     size_t stride)
{
	fr->size = size;
	fr->stride = stride;
	fr->chunk = chunk;
	fr->per_msg = size ? size / chunk + (size % chunk != 0) : 1;
	fr->total = fr->per_msg * count;
}

void gdrb_frag_at(const struct gdrb_frags *fr, size_t f, size_t *off, size_t *len, bool *last)
{
	size_t k = f / fr->per_msg, j = f % fr->per_msg, at = j * fr->chunk;

	*off = k * fr->stride + at;
	*len = fr->size - at < fr->chunk ? fr->size - at : fr->chunk;
	if (last)
		*last = j + 1 == fr->per_msg;
}

double gdrb_stage_time(const struct gdrb_stage_rate *s, size_t f)
{
	return s->peak_Bps > 0 ? s->fixed_s + (double)f / s->peak_Bps : 0;
}

void gdrb_stage_fit(struct gdrb_stage_rate *s, size_t f1, double t1, size_t f2, double t2)
{
	/* A larger copy no slower than a smaller one: all of it counts as rate, none as fixed cost. */
	if (t2 <= t1 || f2 <= f1) {
		s->fixed_s = 0;
		s->peak_Bps = t2 > 0 ? (double)f2 / t2 : 0;
		return;
	}
	s->peak_Bps = (double)(f2 - f1) / (t2 - t1);
	s->fixed_s = t1 - (double)f1 / s->peak_Bps;
	if (s->fixed_s < 0)
		s->fixed_s = 0;
}

static double slowest(const struct gdrb_stage_rate *st, size_t n, size_t f)
{
	double t = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (gdrb_stage_time(&st[i], f) > t)
			t = gdrb_stage_time(&st[i], f);
	return t;
}

void gdrb_stage_choose(const struct gdrb_stage_rates *m, size_t *chunk, unsigned *slots)
{
	struct gdrb_stage_rate st[3] = { m->d2h, m->wire, m->h2d };
	double pace = 0, fixed = 0, held, need;
	size_t f = GDRB_STAGE_AUTO_MIN, i;

	if (st[1].peak_Bps <= 0)        /* unmeasured wire: as fast as the slower copy */
		st[1] = gdrb_stage_time(&st[0], f) > gdrb_stage_time(&st[2], f) ? st[0] : st[2];
	for (i = 0; i < 3; i++) {
		if (st[i].peak_Bps > 0 && (pace == 0 || st[i].peak_Bps < pace))
			pace = st[i].peak_Bps;
		if (st[i].fixed_s > fixed)
			fixed = st[i].fixed_s;
	}
	while (f < GDRB_STAGE_AUTO_MAX && fixed > GDRB_STAGE_FIXED_SHARE * (double)f / pace)
		f *= 2;
	*chunk = f;
	held = gdrb_stage_time(&st[0], f) + gdrb_stage_time(&st[1], f);
	if (gdrb_stage_time(&st[1], f) + gdrb_stage_time(&st[2], f) > held)
		held = gdrb_stage_time(&st[1], f) + gdrb_stage_time(&st[2], f);
	need = slowest(st, 3, f) > 0 ? held / slowest(st, 3, f) : 2;
	need = (need > GDRB_STAGE_SLOTS ? GDRB_STAGE_SLOTS : need) + 2;
	*slots = (unsigned)need + ((double)(unsigned)need < need);
	if (*slots > GDRB_STAGE_SLOTS)
		*slots = GDRB_STAGE_SLOTS;
	if (*slots < GDRB_STAGE_SLOTS_MIN)
		*slots = GDRB_STAGE_SLOTS_MIN;
}
