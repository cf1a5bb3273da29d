/* SPDX-License-Identifier: BSD-3-Clause */
/* gdrb_copy_bw's device-timed samples (copy_timed.h). */
#include "config.h"

#include <stdbool.h>

#include "copy_timed.h"
#include "gdrb_log.h"

int copy_timed_open(struct copy_timed *t)
{
	int i;

	for (i = 0; i < 2; i++)
		if (gdrb_cuda_stream_create(&t->stream[i]) || gdrb_cuda_timed_event_create(&t->start[i]) ||
		    gdrb_cuda_timed_event_create(&t->end[i]))
			return GDRB_ERR;
	return 0;
}

void copy_timed_close(struct copy_timed *t)
{
	int i;

	for (i = 0; i < 2; i++) {
		gdrb_cuda_event_destroy(t->start[i]);
		gdrb_cuda_event_destroy(t->end[i]);
		gdrb_cuda_stream_destroy(t->stream[i]);
	}
}

static int enqueue(void *stream, const struct copy_leg *leg, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (gdrb_cuda_copy_async(leg->dst->ptr, leg->src->ptr, leg->len, stream, NULL))
			return GDRB_ERR;
	return 0;
}

/*
 * Everything behind the gates, in nvbandwidth's order: each stream held, its
 * warm-up copies, the measured stream's start event, the second stream waiting
 * for it, then each stream's timed copies and end event.
 */
static int enqueue_sample(struct copy_timed *t, const struct copy_leg *measured,
			  const struct copy_leg *against, unsigned warm, unsigned n)
{
	if (gdrb_cuda_stream_hold(t->stream[0], &t->gate) ||
	    (against && gdrb_cuda_stream_hold(t->stream[1], &t->gate)) ||
	    enqueue(t->stream[0], measured, warm) ||
	    (against && enqueue(t->stream[1], against, warm)) ||
	    gdrb_cuda_event_record(t->start[0], t->stream[0]))
		return GDRB_ERR;
	if (against && (gdrb_cuda_stream_wait_event(t->stream[1], t->start[0]) ||
			gdrb_cuda_event_record(t->start[1], t->stream[1])))
		return GDRB_ERR;
	if (enqueue(t->stream[0], measured, n) || gdrb_cuda_event_record(t->end[0], t->stream[0]))
		return GDRB_ERR;
	if (against && (enqueue(t->stream[1], against, n) ||
			gdrb_cuda_event_record(t->end[1], t->stream[1])))
		return GDRB_ERR;
	return 0;
}

int copy_timed_sample(struct copy_timed *t, const struct copy_leg *measured,
		      const struct copy_leg *against, unsigned warm, unsigned n, double *us)
{
	double other_us;
	int rc;

	t->gate = (struct gdrb_cuda_gate){ .timeout_s = COPY_GATE_TIMEOUT_S };
	rc = enqueue_sample(t, measured, against, warm, n);
	/* Opened whatever happened: a stream held for ever would never drain. */
	gdrb_cuda_gate_open(&t->gate);
	if (gdrb_cuda_stream_sync(t->stream[0]) || gdrb_cuda_stream_sync(t->stream[1]) || rc)
		return GDRB_ERR;
	if (__atomic_load_n(&t->gate.expired, __ATOMIC_ACQUIRE)) {
		gdrb_err("the copy stream was held %.0f s without its copies enqueued: no sample",
			 COPY_GATE_TIMEOUT_S);
		return GDRB_ERR;
	}
	if (gdrb_cuda_event_elapsed_us(t->start[0], t->end[0], us))
		return GDRB_ERR;
	if (!against)
		return 0;
	/* From the measured stream's start: did the opposite direction run to its end? */
	if (gdrb_cuda_event_elapsed_us(t->start[0], t->end[1], &other_us))
		return GDRB_ERR;
	t->samples++;
	t->alone += other_us < *us;
	return 0;
}
