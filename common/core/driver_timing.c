/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timed part of one measurement (driver_int.h): the iterations, filled
 * before and checked after where -c asks, each timed on its own; the warm-up
 * in growing batches; and the timed batches its median plans, agreed across
 * ranks between batches.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "driver_int.h"
#include "gdrb_clock.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_pattern.h"
#include "gdrb_run.h"
#include "gdrb_stats.h"
#include "gdrb_watchdog.h"

/* Share of the time budget that warm-up may use, and that one timed batch aims at. */
#define WARMUP_SHARE 0.1
#define BATCH_SHARE 0.1
/* The first timed batch at most; each later one at most twice the one before. */
#define FIRST_BATCH 16
/* -c untimed: iterations filled and checked after the timed ones (nccl-tests' -c checks one). */
#define CHECKED_AFTER 1

/*
 * User + system CPU seconds of the calling thread so far, or NAN. The thread's
 * own clock: the kernel brings it up to date when read, where the process's
 * (getrusage, CLOCK_PROCESS_CPUTIME_ID) adds another thread's running time
 * only at its next tick or switch, so MPI's helper threads, busy after
 * MPI_Init, would put up to a tick each into a window of 60 us: well over 100 %.
 */
static double cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool role_sends(const struct gdrb_ctx *c)
{
	switch (c->bench->traffic) {
	case GDRB_TRAFFIC_UNIDIR:
		return c->initiator;
	case GDRB_TRAFFIC_PINGPONG:
	case GDRB_TRAFFIC_BIDIR:
		return true;
	default:
		return false;
	}
}

static bool role_receives(const struct gdrb_ctx *c)
{
	switch (c->bench->traffic) {
	case GDRB_TRAFFIC_UNIDIR:
		return !c->initiator;
	case GDRB_TRAFFIC_PINGPONG:
	case GDRB_TRAFFIC_BIDIR:
	case GDRB_TRAFFIC_COLLECTIVE:
		return true;
	default:
		return false;
	}
}

int gdrb_p2p_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	unsigned k, role = c->initiator ? 0 : 1;

	c->check_span = size;
	if (!role_sends(c))
		return 0;
	for (k = 0; k < gdrb_msg_slots(c); k++)
		if (gdrb_buf_fill_pattern(&c->send, gdrb_msg_off(c, k), size,
					  gdrb_p2p_seed(size, iter, k, role)))
			return GDRB_ERR;
	return 0;
}

static uint64_t p2p_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	unsigned k, peer_role = c->initiator ? 1 : 0;
	uint64_t bad = 0;

	if (!role_receives(c))
		return 0;
	for (k = 0; k < gdrb_msg_slots(c); k++) {
		size_t first = 0;
		uint64_t b = gdrb_buf_check_pattern(&c->recv, gdrb_msg_off(c, k), size,
						    gdrb_p2p_seed(size, iter, k, peer_role), &first);

		if (b == (uint64_t)-1)
			return b;
		if (b)
			gdrb_mismatch(c, "%llu wrong byte(s) from rank %d at size %zu, iteration %llu, slot %u, first at byte %zu",
				      (unsigned long long)b, c->peer, size, (unsigned long long)iter, k,
				      first);
		bad += b;
	}
	return bad;
}

static uint64_t run_check(struct run *r, size_t size, uint64_t iter)
{
	struct gdrb_ctx *c = &r->c;

	if (role_receives(c))
		gdrb_run_corrupt(c->boot, &c->recv, c->check_off, c->check_span);
	return c->bench->check ? c->bench->check(c, size, iter) : p2p_check(c, size, iter);
}

/* The stall of the load-injection test hook (up to 10 s: usleep() may refuse a second or more). */
static void stall_for(unsigned long us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* An untimed barrier before every call (collectives under --sync barrier). */
static bool synced(const struct gdrb_ctx *c)
{
	return c->bench->barrier_each && c->bench->barrier_each(c);
}

/*
 * Run n iterations; samples (optional) get each one's ticks. Returns 0 and
 * the total seconds in *elapsed, or a negative code. `validate`: each
 * iteration filled before and checked after, outside its sample. `stall`: the
 * load injection's sleeps before some iterations; a constant in each caller,
 * so that the loop without them has no test of the hook.
 */
static inline __attribute__((always_inline)) int
batch_loop(struct run *r, size_t size, uint64_t n, uint64_t *iter, double *samples, double *elapsed,
	   uint64_t *errors, const bool validate, const bool stall)
{
	struct gdrb_ctx *c = &r->c;
	const struct gdrb_bench *b = c->bench;
	uint64_t i, t_prev, t, start;
	bool sync = synced(c);
	/* A sample is per call: a validated iteration holds one call, any other calls_per_iter. */
	double per_call = validate || c->calls_per_iter < 2 ? 1.0 : 1.0 / c->calls_per_iter;

	c->checking = validate;
	start = t_prev = gdrb_ticks();
	for (i = 0; i < n; i++, (*iter)++) {
		if (validate || sync) {
			int rc = !validate ? 0 : b->prepare ? b->prepare(c, size, *iter) :
				 gdrb_p2p_prepare(c, size, *iter);

			if (rc || c->boot->barrier(c->boot))
				return GDRB_ERR;
			t_prev = gdrb_ticks();
		}
		if (stall && *iter % r->stall_every == 0)
			stall_for(r->stall_us);
		c->device_us = -1;
		if (b->iteration(c, size))
			return GDRB_ERR;
		t = gdrb_ticks();
		if (samples)
			samples[i] = (c->device_us >= 0 ? c->device_us : gdrb_ticks_to_us(t - t_prev)) *
				     per_call;
		gdrb_watchdog_kick_at(t);
		t_prev = t;
		if (validate) {
			uint64_t bad = run_check(r, size, *iter);

			if (bad == (uint64_t)-1)
				return GDRB_ERR;
			*errors += bad;
			gdrb_watchdog_kick();
		}
	}
	*elapsed = gdrb_ticks_to_us(gdrb_ticks() - start) * 1e-6;
	return 0;
}

/*
 * The load injection (rank 0 only) runs its own copies of the loop; every
 * other run those without it. `timed`: a batch of timed iterations, checked
 * only under -c every; the warm-up's are checked under any -c.
 */
static int run_batch(struct run *r, size_t size, uint64_t n, uint64_t *iter, double *samples,
		     double *elapsed, uint64_t *errors, bool timed)
{
	bool check = timed ? r->p.validate == GDRB_VALIDATE_EVERY : r->p.validate != GDRB_VALIDATE_NO;

	if (__builtin_expect(r->stall_us != 0, 0) && r->c.boot->rank == 0)
		return check ? batch_loop(r, size, n, iter, samples, elapsed, errors, true, true) :
		       batch_loop(r, size, n, iter, samples, elapsed, errors, false, true);
	return check ? batch_loop(r, size, n, iter, samples, elapsed, errors, true, false) :
	       batch_loop(r, size, n, iter, samples, elapsed, errors, false, false);
}

/* Iterations of per seconds each that fit in seconds, from 1 to cap. */
static uint64_t iters_for(double seconds, double per, uint64_t cap)
{
	double n = per > 0 ? seconds / per : (double)cap;

	return n < 1 ? 1 : n >= (double)cap ? cap : (uint64_t)n;
}

/* Every rank's figure replaced by the largest: the ranks then decide alike. */
static int agree_max(struct gdrb_ctx *c, double *v)
{
	return c->boot->allreduce_double(c->boot, v, 1, GDRB_OP_MAX);
}

/*
 * After a batch of *t seconds: the slowest rank's batch time in *t, and in
 * *size_s the slowest rank's seconds since the size began (since `start`):
 * every batch, fill, check and agreement so far, which the hard stop
 * bounds. One agreement for both.
 */
static int agree_batch(struct gdrb_ctx *c, uint64_t start, double *t, double *size_s)
{
	double v[2] = { *t, gdrb_ticks_to_us(gdrb_ticks() - start) * 1e-6 };

	if (c->boot->allreduce_double(c->boot, v, 2, GDRB_OP_MAX))
		return GDRB_ERR;
	*t = v[0];
	*size_s = v[1];
	return 0;
}

/*
 * Warm-up in batches of 1, 2, 4, ... iterations, up to --warmup of them or a
 * tenth of the time budget (the slowest rank's time decides), the first,
 * cold iteration not counted. *est: the slowest rank's median warm-up
 * iteration in seconds, the first one left out when there are more; 0
 * without warm-up. One slow iteration moves a median by one rank, where it
 * could make a mean or a single probe anything; so the tenth ends the warm-up
 * only once GDRB_WARMUP_MEDIAN_MIN iterations past the cold one are in, or a
 * whole budget is spent (of two, one descheduled iteration would make the
 * median, and could waive --min-iters for a size that has room for it).
 * A batch is never planned past the tenth at the rate so far (the cold one's,
 * before there is another), nor, while the median lacks iterations, past the
 * budget: an iteration longer than the budget is followed by one more, not
 * two; nor past the hard stop (`start`: when the size began, *size_s: the
 * slowest rank's seconds since, agreements included), and the warm-up ends
 * there: a cold iteration longer than the hard stop is followed by the one
 * timed iteration a row needs, and no other.
 */
static int warm_up(struct run *r, size_t size, uint64_t start, uint64_t *iter, uint64_t *errors,
		   double *est, double *size_s)
{
	const struct gdrb_params *p = &r->p;
	const double share = WARMUP_SHARE * p->time_per_size;
	const double hard = GDRB_MAX_STRETCH * p->time_per_size;
	uint64_t done = 0, kept = 0, batch = 1, most, need;
	double spent = 0, t, cold = 0, rate;
	struct gdrb_stats st;

	*size_s = 0;

	while (done < p->warmup) {
		bool keep;

		batch = batch < p->warmup - done ? batch : p->warmup - done;
		keep = kept + batch <= r->samples_cap;
		if (run_batch(r, size, batch, iter, keep ? r->samples + kept : NULL, &t, errors, false) ||
		    agree_batch(&r->c, start, &t, size_s))
			return GDRB_ERR;
		/* The first iteration (the first batch) is cold: it neither plans the timed iterations nor ends the warm-up. */
		cold = done ? cold : t;
		spent += done ? t : 0;
		done += batch;
		kept += keep ? batch : 0;
		if ((spent >= share && (done > GDRB_WARMUP_MEDIAN_MIN || spent >= p->time_per_size)) ||
		    *size_s >= hard)
			break;
		rate = done > 1 ? spent / (double)(done - 1) : cold;
		most = iters_for(share - spent, rate, p->warmup - done);
		if (done <= GDRB_WARMUP_MEDIAN_MIN) {
			/* Those the median still needs, as far as the budget holds them at this rate. */
			need = iters_for(p->time_per_size - spent, rate, GDRB_WARMUP_MEDIAN_MIN + 1 - done);
			most = most > need ? most : need;
		}
		need = iters_for(hard - *size_s, rate, p->warmup - done);
		most = most < need ? most : need;
		batch = 2 * batch < most ? 2 * batch : most;
	}
	*est = 0;
	if (kept) {
		/* The samples are per call: the plan wants a timed iteration's time. */
		gdrb_stats_compute(r->samples + (kept > 1), kept - (kept > 1), &st);
		*est = st.p50 * 1e-6 * (r->c.calls_per_iter > 1 ? r->c.calls_per_iter : 1);
	}
	r->plan_cold_s = cold;
	return agree_max(&r->c, est);
}

/*
 * The fewest timed iterations this size must have: --min-iters (at most -n)
 * where an iteration time (the warm-up's median, then the timed rate so far,
 * whichever allows more) says they take at most GDRB_MIN_STRETCH x the
 * budget; a longer size gets what the budget holds, at least GDRB_FLOOR_ITERS.
 */
static uint64_t planned_min(const struct gdrb_params *p, double est)
{
	uint64_t want = p->min_iters < p->iters ? p->min_iters : p->iters;
	uint64_t floor = want < GDRB_FLOOR_ITERS ? want : GDRB_FLOOR_ITERS, fits;

	if (est <= 0 || (double)want * est <= GDRB_MIN_STRETCH * p->time_per_size)
		return want;
	fits = (uint64_t)(p->time_per_size / est);
	return fits > floor ? fits : floor;
}

/*
 * Warm up, then run timed batches until the budget is spent and the minimum
 * reached, or -n reached, or GDRB_MAX_STRETCH x the budget spent since the
 * size began on the slowest rank: warm-up, fills, checks and the agreements
 * between batches included, which a loaded machine can make longer than the
 * iterations (past it by one iteration at most, at the rate so far; where
 * the warm-up reached it, by the one timed iteration a row needs). Each batch
 * aims at a tenth of the budget by the running mean; after each, the ranks
 * agree on the time spent (the slowest rank's), so all run the same count.
 * The agreement runs between batches, outside every sample. Under -c
 * untimed the warm-up's iterations are checked, the timed ones are not (a
 * fill and a check between calls made a real GPU's NCCL calls of 1 MiB and
 * more 1.5 to 2.7x slower), and CHECKED_AFTER more are, untimed.
 */
int gdrb_drv_measure(struct run *r, size_t size, uint64_t *n_out, uint64_t *min_out, uint64_t *errors,
		     double *total_us, double *cpu_pct)
{
	const struct gdrb_params *p = &r->p;
	uint64_t iter = 0, n = 0, batch, want, i, t0, start = gdrb_ticks();
	double est, spent = 0, t, budget = p->time_per_size, size_s, cpu0, cpu_s, wall_us;
	const double stop = GDRB_MAX_STRETCH * budget;

	if (warm_up(r, size, start, &iter, errors, &est, &size_s))
		return GDRB_ERR;
	/* CPU time over the timed batches and the agreements between them, warm-up left out. */
	/* The CPU window inside the wall one: never above 100 % but by the clocks' skew. */
	t0 = gdrb_ticks();
	cpu0 = cpu_seconds();
	want = planned_min(p, est);
	batch = est > 0 ? iters_for(BATCH_SHARE * budget, est, p->iters) : 1;
	batch = batch < FIRST_BATCH ? batch : FIRST_BATCH;
	if (est > 0 && iters_for(stop - size_s, est, p->iters) < batch)
		batch = iters_for(stop - size_s, est, p->iters);
	r->plan_warmup = iter;
	r->plan_median_s = est;
	for (;;) {
		uint64_t next, left;
		double per;

		r->plan_last_batch_s = size_s;
		if (run_batch(r, size, batch, &iter, r->samples + n, &t, errors, true) ||
		    agree_batch(&r->c, start, &t, &size_s))
			return GDRB_ERR;
		n += batch;
		spent += t;
		if (n == p->iters || (n >= want && spent >= budget) || size_s >= stop)
			break;
		/*
		 * The next batch from the rate so far, at most twice the last (a
		 * rate measured on a quiet stretch must not commit the ranks to a
		 * long batch under load); never planned past the hard stop, nor
		 * past the budget once the minimum is in.
		 */
		per = spent / (double)n;
		/* A warm-up slowed by a passing load must not waive the minimum the timed rate allows. */
		if (planned_min(p, per) > want)
			want = planned_min(p, per);
		next = iters_for(BATCH_SHARE * budget, per, p->iters - n);
		next = next < 2 * batch ? next : 2 * batch;
		left = iters_for(stop - size_s, per, p->iters - n);
		if (n >= want && iters_for(budget - spent, per, p->iters - n) < left)
			left = iters_for(budget - spent, per, p->iters - n);
		batch = next < left ? next : left;
	}
	r->plan_size_s = size_s;
	cpu_s = cpu_seconds() - cpu0;
	wall_us = gdrb_ticks_to_us(gdrb_ticks() - t0);
	*cpu_pct = wall_us > 0 ? cpu_s * 1e6 / wall_us * 100.0 : NAN;
	/* -c untimed: the timed iterations ran untouched; one more, filled and checked, untimed. */
	if (p->validate == GDRB_VALIDATE_UNTIMED &&
	    run_batch(r, size, CHECKED_AFTER, &iter, NULL, &t, errors, false))
		return GDRB_ERR;
	*total_us = 0;
	for (i = 0; i < n; i++)
		*total_us += r->samples[i];
	*n_out = n;
	*min_out = want;
	return 0;
}
