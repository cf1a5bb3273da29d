/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipelined staging: a ring of pinned bounce slots of one fragment each, and
 * the fragments a window of messages is cut into. A slot is filled by an
 * asynchronous copy on the ring's own non-blocking stream; its event says
 * when the copy has finished (the slot is ready to send, or free again).
 *
 * Sender: copy fragment f device->slot f % slots, wait for the slot, send it;
 * the copy of f+1 runs while f is on the wire. Receiver: receive fragment f
 * into its slot, copy slot->device, and reuse the slot for f + slots once that
 * copy has finished; the copy of f runs while f+1 arrives.
 */
#ifndef GDRB_STAGE_H
#define GDRB_STAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "gdrb_mem.h"

#define GDRB_STAGE_SLOTS 8              /* most bounce slots per direction (--stage-slots) */
#define GDRB_STAGE_SLOTS_MIN 2
#define GDRB_STAGE_CHUNK_MIN ((size_t)4 << 10)
#define GDRB_STAGE_CHUNK_MAX ((size_t)1 << 30)
/* The bounds of a fragment chosen from the measured rates (--stage-chunk overrides them). */
#define GDRB_STAGE_AUTO_MIN ((size_t)64 << 10)
#define GDRB_STAGE_AUTO_MAX ((size_t)4 << 20)
/* The share of a fragment's time on the slowest stage its fixed cost may take. */
#define GDRB_STAGE_FIXED_SHARE 0.1

/* --staging: which staged variants run next to direct. */
enum gdrb_staging {
	GDRB_STAGING_PIPELINED,
	GDRB_STAGING_SERIAL,
	GDRB_STAGING_BOTH,
	GDRB_STAGING_COUNT
};

extern const char *const gdrb_staging_names[GDRB_STAGING_COUNT];

/*
 * One stage of the staged path (copy out, wire, copy in) as measured: a
 * fragment of f bytes takes fixed_s + f / peak_Bps. peak_Bps 0: not measured.
 */
struct gdrb_stage_rate {
	double fixed_s, peak_Bps;
};

struct gdrb_stage_rates {
	struct gdrb_stage_rate d2h, wire, h2d;
};

/*
 * The fragment and slot count for measured rates (docs/staging.md derives
 * the rule). Pace R: the slowest stage's peak; fixed cost t0: the largest
 * stage's. Fragment: the smallest power of two f with t0 <= share x f / R,
 * so that the fixed cost per fragment takes at most GDRB_STAGE_FIXED_SHARE of
 * the pace, within GDRB_STAGE_AUTO_MIN..MAX (larger fragments only lengthen
 * the pipeline's fill and drain, two copies of one fragment per message).
 * Slots: a slot is held for a copy and the wire (sender) or the wire and a
 * copy (receiver), so ceil(that / the slowest stage's time at f) keep the
 * slowest stage busy; two more absorb the late completion of a send and keep
 * a receive posted ahead; within GDRB_STAGE_SLOTS_MIN..GDRB_STAGE_SLOTS. An
 * unmeasured wire counts as fast as the slower copy.
 */
void gdrb_stage_choose(const struct gdrb_stage_rates *m, size_t *chunk, unsigned *slots);

/* Time of a fragment of f bytes on a measured stage (0 for an unmeasured one). */
double gdrb_stage_time(const struct gdrb_stage_rate *s, size_t f);

/* Fit fixed_s and peak_Bps to two timings: t1 s for f1 bytes, t2 s for f2 > f1 bytes. */
void gdrb_stage_fit(struct gdrb_stage_rate *s, size_t f1, double t1, size_t f2, double t2);

struct gdrb_ring {
	struct gdrb_buf buf;            /* slots x chunk bytes of pinned memory */
	size_t chunk;
	unsigned slots;
	void *stream;
	void *event[GDRB_STAGE_SLOTS];
	bool skip_wait;                 /* fault injection: waits and done return at once */
};

/*
 * Allocate the slots, the stream and the events; needs an open GPU. name:
 * "out" (device->slot->wire) or "in" (wire->slot->device). For tests of the
 * checkers, GDRB_INJECT_STAGE_RACE=out, in or all removes the ring's waits.
 */
int gdrb_ring_open(struct gdrb_ring *r, const char *name, size_t chunk, unsigned slots);
void gdrb_ring_close(struct gdrb_ring *r);
bool gdrb_ring_ready(const struct gdrb_ring *r);

static inline char *gdrb_ring_slot(const struct gdrb_ring *r, size_t frag)
{
	return (char *)r->buf.ptr + (frag % r->slots) * r->chunk;
}

/* Start copying len (<= chunk) bytes at off of src into fragment frag's slot. */
int gdrb_ring_fill(struct gdrb_ring *r, size_t frag, const struct gdrb_buf *src, size_t off,
		   size_t len);
/* Start copying len bytes of fragment frag's slot to off of dst. */
int gdrb_ring_drain(struct gdrb_ring *r, size_t frag, struct gdrb_buf *dst, size_t off,
		    size_t len);
/* Wait until the last copy into or out of fragment frag's slot has finished. */
int gdrb_ring_wait(struct gdrb_ring *r, size_t frag);
/* The same without blocking, for progress loops: 1 finished, 0 not yet, GDRB_ERR. */
int gdrb_ring_done(struct gdrb_ring *r, size_t frag);
/* Wait for every copy issued on the ring. */
int gdrb_ring_settle(struct gdrb_ring *r);

/*
 * The fragments of a window of `count` messages of `size` bytes, message k at
 * offset k * size; a fragment never spans two messages (a 0-byte message is
 * one empty fragment).
 */
struct gdrb_frags {
	size_t size, chunk, per_msg, total;
	size_t stride;          /* bytes between messages: size, or 0 when they share one buffer */
};

void gdrb_frags_init(struct gdrb_frags *fr, size_t size, unsigned count, size_t chunk,
		     size_t stride);
/* Offset and length of fragment f; *last: it ends its message. */
void gdrb_frag_at(const struct gdrb_frags *fr, size_t f, size_t *off, size_t *len, bool *last);

/*
 * Fragment f of fr between dev and its slot: into the slot (out: device->pinned)
 * or out of it (pinned->device), started as gdrb_ring_fill/gdrb_ring_drain do.
 */
int gdrb_ring_copy_frag(struct gdrb_ring *r, const struct gdrb_frags *fr, size_t f,
			struct gdrb_buf *dev, bool out);

#endif
