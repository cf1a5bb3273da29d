/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gdrb_log.h"
#include "gdrb_size.h"
#include "gdrb_watchdog.h"

volatile uint64_t gdrb_watchdog_mark;

static struct {
	pthread_t thread;
	int running;
	volatile int stop;
	double limit_s;
	pthread_mutex_t lock;
	char waiting_for[160];
	char what[96];
	size_t size;
	unsigned patience;      /* times --timeout the current wait may last (atomic) */
	double linger_s;        /* after giving up, before ending the process */
	double allow_s;         /* every wait's allowance beyond the limit (gdrb_watchdog_allow) */
	int given_up;           /* (atomic) the measuring thread must not go on */
	char main_stat[64];     /* the measuring thread's /proc/self/task/TID/schedstat */
	void (*at_end)(void);   /* before _exit (gdrb_watchdog_on_exit) */
	void (*abort_fn)(void); /* before at_end, on a thread of its own (gdrb_watchdog_on_abort) */
} wd = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The watchdog looks this often; a look later than this plus its own wait for a CPU means this process was stopped. */
#define NAP_S 0.05
#define STOPPED_S 0.25
/* The measuring thread counts as starved in a look where it ran less than this and waited for a CPU half the look. */
#define STARVED_RUN_S 0.001

/* A thread's scheduler figures, in seconds: on a CPU, and runnable but waiting for one. */
struct sched_figs {
	double run_s, wait_s;
	bool ok;
};

static struct sched_figs read_sched(const char *path)
{
	struct sched_figs f = { 0 };
	uint64_t run, wait;
	FILE *in = fopen(path, "r");

	if (!in)
		return f;
	f.ok = fscanf(in, "%" SCNu64 " %" SCNu64, &run, &wait) == 2;
	fclose(in);
	f.run_s = (double)run * 1e-9;
	f.wait_s = (double)wait * 1e-9;
	return f;
}

/*
 * Seconds of a look of span_s that count as waiting for the peer: not the
 * time this whole process was stopped (SIGSTOP, a debugger: the watchdog
 * itself could not run, and was not waiting for a CPU either), and nothing
 * when the measuring thread wanted a CPU and hardly got one (a loaded
 * machine: it could not have seen the peer's progress). The idle time
 * already counted is kept either way.
 */
static double counted(double span_s, struct sched_figs me0, struct sched_figs me1,
		      struct sched_figs main0, struct sched_figs main1)
{
	double away = span_s - NAP_S, c;

	if (me0.ok && me1.ok)
		away -= (me1.run_s - me0.run_s) + (me1.wait_s - me0.wait_s);
	else if (span_s <= 1.0)
		away = 0;       /* without schedstat: only a long gap reads as a stop */
	c = away > STOPPED_S ? span_s - away : span_s;
	if (main0.ok && main1.ok && main1.run_s - main0.run_s < STARVED_RUN_S &&
	    main1.wait_s - main0.wait_s > c / 2)
		return 0;
	return c > 0 ? c : 0;
}

void gdrb_watchdog_on_exit(void (*fn)(void))
{
	__atomic_store_n(&wd.at_end, fn, __ATOMIC_RELEASE);
}

void gdrb_watchdog_run_on_exit(void)
{
	void (*fn)(void) = __atomic_exchange_n(&wd.at_end, NULL, __ATOMIC_ACQ_REL);

	if (fn)
		fn();
}

void gdrb_watchdog_on_abort(void (*fn)(void))
{
	__atomic_store_n(&wd.abort_fn, fn, __ATOMIC_RELEASE);
}

static int abort_done;

static void *abort_main(void *arg)
{
	void (*fn)(void) = (void (*)(void))(uintptr_t)arg;

	fn();
	__atomic_store_n(&abort_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The registered abort (a library's own teardown of what is stuck), on a thread of its
 * own so that an abort that hangs in turn cannot keep the process alive: waited for
 * GDRB_WATCHDOG_ABORT_S at most.
 */
static void run_abort(void)
{
	void (*fn)(void) = __atomic_exchange_n(&wd.abort_fn, NULL, __ATOMIC_ACQ_REL);
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	pthread_t t;
	int i;

	if (!fn || pthread_create(&t, NULL, abort_main, (void *)(uintptr_t)fn) != 0)
		return;
	pthread_detach(t);
	for (i = 0; i < GDRB_WATCHDOG_ABORT_S * 100 && !__atomic_load_n(&abort_done, __ATOMIC_ACQUIRE); i++)
		nanosleep(&nap, NULL);
}

/* Ends the process for a timeout: the registered abort and cleanup, then _exit. */
static void end_process(void)
{
	run_abort();
	gdrb_watchdog_run_on_exit();
	_exit(GDRB_EXIT_FAIL);
}

void gdrb_watchdog_allow(double seconds)
{
	pthread_mutex_lock(&wd.lock);
	wd.allow_s = seconds > 0 ? seconds : 0;
	pthread_mutex_unlock(&wd.lock);
	gdrb_watchdog_kick();
}

void gdrb_watchdog_linger(double seconds)
{
	wd.linger_s = seconds > 0 ? seconds : 0;
}

void gdrb_watchdog_context(int peer_rank, const char *peer_host, const char *what, size_t size)
{
	/* Given up and lingering: no new wait, no new row; the watchdog ends the process. */
	while (__atomic_load_n(&wd.given_up, __ATOMIC_RELAXED))
		pause();
	pthread_mutex_lock(&wd.lock);
	if (peer_rank >= 0)
		snprintf(wd.waiting_for, sizeof(wd.waiting_for), "rank %d (%s)", peer_rank,
			 peer_host);
	else
		snprintf(wd.waiting_for, sizeof(wd.waiting_for), "%s",
			 peer_host ? peer_host : "the other ranks");
	snprintf(wd.what, sizeof(wd.what), "%s", what);
	wd.size = size;
	__atomic_store_n(&wd.patience, 1u, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&wd.lock);
	gdrb_watchdog_kick();
}

void gdrb_watchdog_patience(unsigned times)
{
	__atomic_store_n(&wd.patience, times ? times : 1u, __ATOMIC_RELAXED);
}

void gdrb_watchdog_collective(const char *who, const char *what, size_t size)
{
	gdrb_watchdog_context(-1, who, what, size);
	gdrb_watchdog_patience(GDRB_WATCHDOG_COLLECTIVE);
}

static double allowance(void)
{
	double a;

	pthread_mutex_lock(&wd.lock);
	a = wd.allow_s;
	pthread_mutex_unlock(&wd.lock);
	return a;
}

/*
 * Idle time is counted, look by look, only while no progress mark appears
 * and this process could have seen one (counted()): a peer that makes
 * progress, however slowly, or a rank that is merely descheduled never
 * trips it; a frozen peer does after about --timeout of this rank running.
 */
static void *watchdog_main(void *arg)
{
	struct timespec nap = { 0, (long)(NAP_S * 1e9) };
	uint64_t last_look = gdrb_ticks(), last_mark = __atomic_load_n(&gdrb_watchdog_mark, __ATOMIC_RELAXED);
	struct sched_figs me = read_sched("/proc/thread-self/schedstat"), main = read_sched(wd.main_stat);
	double idle = 0, lingered = -1;        /* lingered >= 0: given up, lingering */

	(void)arg;
	/* Once given up, a stop does not end the linger: the process ends as it said it would. */
	while (!wd.stop || lingered >= 0) {
		uint64_t mark, now;
		struct sched_figs me1, main1;
		double span, c;

		nanosleep(&nap, NULL);
		mark = __atomic_load_n(&gdrb_watchdog_mark, __ATOMIC_RELAXED);
		now = gdrb_ticks();
		me1 = read_sched("/proc/thread-self/schedstat");
		main1 = read_sched(wd.main_stat);
		span = gdrb_ticks_to_us(now - last_look) * 1e-6;
		c = counted(span, me, me1, main, main1);
		last_look = now;
		me = me1;
		main = main1;
		if (lingered >= 0) {
			/* The linger runs on the same clock as the wait: a loaded machine lengthens both. */
			lingered += c;
			if (lingered >= wd.linger_s)
				end_process();
			continue;
		}
		if (mark == last_mark)
			idle += c;
		else    /* progress since the last look: idle from that mark on, at most this look */
			idle = now <= mark ? 0.0 : gdrb_ticks_to_us(now - mark) * 1e-6 < span ?
			       gdrb_ticks_to_us(now - mark) * 1e-6 : span;
		last_mark = mark;
		if (idle > wd.limit_s * __atomic_load_n(&wd.patience, __ATOMIC_RELAXED) + allowance()) {
			char size[32];

			pthread_mutex_lock(&wd.lock);
			if (wd.size == GDRB_WATCHDOG_NO_SIZE) {
				gdrb_err("timeout: no answer from %s for %.0f s (--timeout %g) during %s; giving up",
					 wd.waiting_for, idle, wd.limit_s, wd.what);
			} else {
				gdrb_size_format(wd.size, size, sizeof(size));
				gdrb_err("timeout: no answer from %s for %.0f s (--timeout %g) during %s at size %s; giving up, rows measured so far are kept",
					 wd.waiting_for, idle, wd.limit_s, wd.what, size);
			}
			fflush(stdout);
			/* Not exit(): the main thread may be inside MPI; nothing may run atexit. */
			if (wd.linger_s <= 0) {
				pthread_mutex_unlock(&wd.lock);
				end_process();
			}
			__atomic_store_n(&wd.given_up, 1, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&wd.lock);
			lingered = 0;
		}
	}
	return NULL;
}

int gdrb_watchdog_start(double timeout_s)
{
	int rc;

	if (timeout_s <= 0.0)
		return 0;
	wd.limit_s = timeout_s;
	wd.patience = 1;
	wd.stop = 0;
	/* The thread that measures: whether it gets a CPU decides what idle time counts. */
	snprintf(wd.main_stat, sizeof(wd.main_stat), "/proc/self/task/%ld/schedstat",
		 (long)syscall(SYS_gettid));
	gdrb_watchdog_kick();
	rc = pthread_create(&wd.thread, NULL, watchdog_main, NULL);
	if (rc) {
		gdrb_err("cannot start the timeout thread: %s", strerror(rc));
		return GDRB_ERR;
	}
	wd.running = 1;
	return 0;
}

void gdrb_watchdog_stop(void)
{
	if (!wd.running)
		return;
	wd.stop = 1;
	pthread_join(wd.thread, NULL);
	wd.running = 0;
}
