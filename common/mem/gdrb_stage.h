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

#define GDRB_STAGE_SLOTS 4              /* bounce slots per direction */
#define GDRB_DEF_STAGE_CHUNK "512K"     /* fragment size, the order UCX and NCCL use */
#define GDRB_STAGE_CHUNK_MIN ((size_t)4 << 10)
#define GDRB_STAGE_CHUNK_MAX ((size_t)1 << 30)

/* --staging: which staged variants run next to direct. */
enum gdrb_staging {
	GDRB_STAGING_PIPELINED,
	GDRB_STAGING_SERIAL,
	GDRB_STAGING_BOTH,
	GDRB_STAGING_COUNT
};

extern const char *const gdrb_staging_names[GDRB_STAGING_COUNT];

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
