/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipelined staging's fragment and slot count: --stage-chunk and --stage-slots,
 * or chosen by gdrb_stage_choose() from the copy and wire rates measured here
 * (untimed, a few copies of two sizes; docs/staging.md).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "driver_int.h"
#include "gdrb_clock.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_size.h"

#define PROBE_SMALL GDRB_STAGE_AUTO_MIN
#define PROBE_LARGE GDRB_STAGE_AUTO_MAX
#define PROBE_REPS 4    /* timed after one untimed; the fastest counts */

/* The probe's timings, every rank's slowest: seconds for a small and a large copy or message. */
enum { T_D2H, T_D2H_L, T_H2D, T_H2D_L, T_WIRE, T_WIRE_L, T_FAILED, T_COUNT };

static int time_copy(struct gdrb_buf *dst, const struct gdrb_buf *src, size_t len, double *best)
{
	unsigned i;

	*best = 0;
	for (i = 0; i <= PROBE_REPS; i++) {
		double t0 = gdrb_now_s(), t;

		if (gdrb_buf_copy(dst, 0, src, 0, len))
			return GDRB_ERR;
		t = gdrb_now_s() - t0;
		if (i && (*best == 0 || t < *best))
			*best = t;
	}
	return 0;
}

static int time_wire(struct gdrb_boot *b, struct gdrb_buf *out, struct gdrb_buf *in, size_t len,
		     double *best)
{
	int to = (b->rank + 1) % b->size, from = (b->rank + b->size - 1) % b->size;
	unsigned i;

	*best = 0;
	for (i = 0; i <= PROBE_REPS; i++) {
		double t0 = gdrb_now_s(), t;

		if (b->sendrecv(b, to, out->ptr, len, from, in->ptr, len))
			return GDRB_ERR;
		t = gdrb_now_s() - t0;
		if (i && (*best == 0 || t < *best))
			*best = t;
	}
	return 0;
}

/* This rank's timings: copies between a device buffer and a pinned one; the wire between pinned ones. */
static int probe(struct run *r, double *t)
{
	struct gdrb_ctx *c = &r->c;
	const struct gdrb_mem_ops *dev_ops, *pinned = gdrb_mem_bounce_ops();
	struct gdrb_buf dev = { 0 }, host = { 0 }, host_in = { 0 };
	const char *why;
	int rc = GDRB_ERR;

	dev_ops = gdrb_mem_ops_get(r->p.mem, &why);
	if (!dev_ops || gdrb_buf_alloc(&dev, dev_ops, PROBE_LARGE) ||
	    gdrb_buf_alloc(&host, pinned, PROBE_LARGE) || gdrb_buf_alloc(&host_in, pinned, PROBE_LARGE))
		goto out;
	memset(host.ptr, 0, PROBE_LARGE);
	memset(host_in.ptr, 0, PROBE_LARGE);
	if (time_copy(&dev, &host, PROBE_SMALL, &t[T_H2D]) ||
	    time_copy(&dev, &host, PROBE_LARGE, &t[T_H2D_L]) ||
	    time_copy(&host, &dev, PROBE_SMALL, &t[T_D2H]) ||
	    time_copy(&host, &dev, PROBE_LARGE, &t[T_D2H_L]))
		goto out;
	rc = 0;
	if (c->bench->boot_is_wire && c->boot->sendrecv && c->boot->size > 1)
		rc = time_wire(c->boot, &host, &host_in, PROBE_SMALL, &t[T_WIRE]) ||
		     time_wire(c->boot, &host, &host_in, PROBE_LARGE, &t[T_WIRE_L]) ? GDRB_ERR : 0;
out:
	gdrb_buf_free(&host_in);
	gdrb_buf_free(&host);
	gdrb_buf_free(&dev);
	return rc;
}

static void say_rate(char *buf, size_t len, const char *what, const struct gdrb_stage_rate *s)
{
	snprintf(buf, len, "%s %.3g GB/s + %.3g us", what, s->peak_Bps / 1e9, s->fixed_s * 1e6);
}

/* Every rank measures (a wire probe needs them all); the slowest rank's timings decide for all alike. */
static int choose(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	double t[T_COUNT] = { 0 };
	struct gdrb_stage_rates m;
	size_t chunk;
	unsigned slots;
	char d2h[64], h2d[64], wire[96];

	/* A rank lost on the way fails the reduction; a rank whose probe failed says so in T_FAILED. */
	if (probe(r, t))
		t[T_FAILED] = 1;
	if (c->boot->allreduce_double(c->boot, t, T_COUNT, GDRB_OP_MAX) || t[T_FAILED]) {
		gdrb_err("pipelined staging: measuring the copy and wire rates failed (set --stage-chunk and --stage-slots to skip it)");
		return GDRB_ERR;
	}
	memset(&m, 0, sizeof(m));
	gdrb_stage_fit(&m.d2h, PROBE_SMALL, t[T_D2H], PROBE_LARGE, t[T_D2H_L]);
	gdrb_stage_fit(&m.h2d, PROBE_SMALL, t[T_H2D], PROBE_LARGE, t[T_H2D_L]);
	if (t[T_WIRE_L] > 0)
		gdrb_stage_fit(&m.wire, PROBE_SMALL, t[T_WIRE], PROBE_LARGE, t[T_WIRE_L]);
	gdrb_stage_choose(&m, &chunk, &slots);
	say_rate(d2h, sizeof(d2h), "copy device->pinned", &m.d2h);
	say_rate(h2d, sizeof(h2d), "pinned->device", &m.h2d);
	if (m.wire.peak_Bps > 0)
		say_rate(wire, sizeof(wire), "wire (the bootstrap's sendrecv of pinned memory)", &m.wire);
	else
		snprintf(wire, sizeof(wire), "wire not measured (counted as fast as the slower copy)");
	r->stage_chunk = r->p.stage_chunk ? r->p.stage_chunk : chunk;
	r->stage_slots = r->p.stage_slots ? r->p.stage_slots : slots;
	snprintf(r->stage_why, sizeof(r->stage_why), "%s from %s, %s, %s",
		 r->p.stage_chunk ? "fragment set by --stage-chunk, slots chosen" :
		 r->p.stage_slots ? "slots set by --stage-slots, fragment chosen" : "chosen", d2h, h2d, wire);
	return 0;
}

int gdrb_drv_stage_open(struct run *r)
{
	struct gdrb_ctx *c = &r->c;
	bool uses_send = !c->bench->uses_send || c->bench->uses_send(c);

	if (!gdrb_drv_any_variant(c, true))
		return 0;
	if (r->p.stage_chunk && r->p.stage_slots) {
		r->stage_chunk = r->p.stage_chunk;
		r->stage_slots = r->p.stage_slots;
		snprintf(r->stage_why, sizeof(r->stage_why), "set by --stage-chunk and --stage-slots");
	} else if (choose(r)) {
		return GDRB_ERR;
	}
	if ((uses_send && gdrb_ring_open(&c->out_ring, "out", r->stage_chunk, r->stage_slots)) ||
	    gdrb_ring_open(&c->in_ring, "in", r->stage_chunk, r->stage_slots))
		return GDRB_ERR;
	return 0;
}
