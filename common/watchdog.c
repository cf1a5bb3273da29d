/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
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
} wd = { .lock = PTHREAD_MUTEX_INITIALIZER };

void gdrb_watchdog_context(int peer_rank, const char *peer_host, const char *what, size_t size)
{
	pthread_mutex_lock(&wd.lock);
	if (peer_rank >= 0)
		snprintf(wd.waiting_for, sizeof(wd.waiting_for), "rank %d (%s)", peer_rank,
			 peer_host);
	else
		snprintf(wd.waiting_for, sizeof(wd.waiting_for), "%s",
			 peer_host ? peer_host : "the other ranks");
	snprintf(wd.what, sizeof(wd.what), "%s", what);
	wd.size = size;
	pthread_mutex_unlock(&wd.lock);
	gdrb_watchdog_kick();
}

static void *watchdog_main(void *arg)
{
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	uint64_t last_look = gdrb_ticks();

	(void)arg;
	while (!wd.stop) {
		uint64_t mark = __atomic_load_n(&gdrb_watchdog_mark, __ATOMIC_RELAXED);
		uint64_t now = gdrb_ticks();
		double idle = now > mark ? gdrb_ticks_to_us(now - mark) * 1e-6 : 0.0;
		double nap_s = gdrb_ticks_to_us(now - last_look) * 1e-6;

		last_look = now;
		/* This process itself was stopped (SIGSTOP, a debugger): not the peer's fault. */
		if (nap_s > 1.0) {
			gdrb_watchdog_kick_at(now);
			nanosleep(&nap, NULL);
			continue;
		}
		if (idle > wd.limit_s) {
			char size[32];

			pthread_mutex_lock(&wd.lock);
			gdrb_size_format(wd.size, size, sizeof(size));
			gdrb_err("timeout: no answer from %s for %.0f s (--timeout %g) during %s at size %s; giving up, rows measured so far are kept",
				 wd.waiting_for, idle, wd.limit_s, wd.what, size);
			fflush(stdout);
			/* Not exit(): the main thread may be inside MPI; nothing may run atexit. */
			_exit(GDRB_EXIT_FAIL);
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int gdrb_watchdog_start(double timeout_s)
{
	int rc;

	if (timeout_s <= 0.0)
		return 0;
	wd.limit_s = timeout_s;
	wd.stop = 0;
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
