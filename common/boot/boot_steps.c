/* SPDX-License-Identifier: BSD-3-Clause */
/* Steps of every rank in which every wait names the rank it waits on (gdrb_boot.h). */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_boot.h"
#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_watchdog.h"

/* Wait on `from` (the only rank this rank needs now) for at most `patience` times --timeout. */
static void wait_on(const struct gdrb_boot *b, int from, unsigned patience, const char *what, size_t size)
{
	gdrb_watchdog_context(from, b->hosts[from], what, size);
	gdrb_watchdog_patience(patience);
}

/*
 * Test hook: GDRB_INJECT_STEP_STOP=RANK:N stops that rank (SIGSTOP) inside its
 * N-th barrier or maximum (counted from 1), after its first round: a rank lost
 * inside a step, which its peers must still name.
 */
static void inject_stop(const struct gdrb_boot *b)
{
	static unsigned long steps;
	const struct gdrb_inject *h = gdrb_inject();

	steps++;
	if (h->step_stop_rank == b->rank && h->step_stop_n == steps)
		raise(SIGSTOP);
}

/* Dissemination: v (NULL for a barrier) becomes the maximum over every rank. */
static int disseminate(struct gdrb_boot *b, double *v, const char *what, size_t size)
{
	size_t len = v ? sizeof(*v) : 0;
	unsigned round = 0;
	int step;

	for (step = 1; step < b->size; step *= 2, round++) {
		int to = (b->rank + step) % b->size, from = (b->rank - step + b->size) % b->size;
		double in = 0;

		wait_on(b, from, 1, what, size);
		if (b->sendrecv(b, to, v, len, from, v ? &in : NULL, len))
			return GDRB_ERR;
		if (v && in > *v)
			*v = in;
		if (round == 0)
			inject_stop(b);
	}
	return 0;
}

int gdrb_boot_step_barrier(struct gdrb_boot *b, const char *what, size_t size)
{
	if (b->sendrecv && b->size > 1)
		return disseminate(b, NULL, what, size);
	gdrb_watchdog_collective("the other ranks", what, size);
	return b->barrier(b);
}

int gdrb_boot_step_max(struct gdrb_boot *b, double *v, const char *what, size_t size)
{
	if (b->sendrecv && b->size > 1)
		return disseminate(b, v, what, size);
	gdrb_watchdog_collective("the other ranks", what, size);
	return b->allreduce_double(b, v, 1, GDRB_OP_MAX);
}

int gdrb_boot_step_gather(struct gdrb_boot *b, const void *send, size_t len, void *recv,
			  const char *what, size_t size)
{
	int r;

	if (!b->sendrecv || b->size == 1) {
		gdrb_watchdog_collective("the other ranks", what, size);
		return b->gather(b, send, len, recv);
	}
	if (b->rank != 0) {
		/* A large part waits until rank 0 takes it, and rank 0 may be waiting on a lost rank. */
		wait_on(b, 0, GDRB_WATCHDOG_COLLECTIVE, what, size);
		return b->sendrecv(b, 0, send, len, -1, NULL, 0);
	}
	memcpy(recv, send, len);
	for (r = 1; r < b->size; r++) {
		wait_on(b, r, 1, what, size);
		if (b->sendrecv(b, -1, NULL, 0, r, (char *)recv + (size_t)r * len, len))
			return GDRB_ERR;
	}
	return 0;
}
