/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A peer that stops answering must end the run, never hang it. The timed
 * loops call only blocking transport functions, so a watchdog thread watches
 * the last progress mark; when it is older than --timeout it names the rank
 * and host this rank was waiting for and ends the process. Rows already
 * written to the CSV stay there (each was flushed when written).
 */
#ifndef GDRB_WATCHDOG_H
#define GDRB_WATCHDOG_H

#include <stddef.h>
#include <stdint.h>

#include "gdrb_clock.h"

extern volatile uint64_t gdrb_watchdog_mark;

/* Start watching with a limit in seconds; 0 disables. */
int gdrb_watchdog_start(double timeout_s);
void gdrb_watchdog_stop(void);

/* The size of a wait outside the sweep (starting up): the message names no size. */
#define GDRB_WATCHDOG_NO_SIZE ((size_t)-1)

/*
 * Run by the watchdog's thread just before it ends the process after a timeout
 * (the process ends with _exit: no atexit, no destructor), and by a boot's abort,
 * for what must not be left behind (a private folder). The main thread may be anywhere: only
 * async-signal-safe calls (unlink, rmdir). NULL: none.
 */
void gdrb_watchdog_on_exit(void (*fn)(void));

/*
 * Run by the watchdog's thread after a timeout, before the cleanup above, on a thread of
 * its own and waited for GDRB_WATCHDOG_ABORT_S seconds at most: a library's teardown of
 * what is stuck (NCCL's ncclCommAbort). Never run from a signal handler or a boot's
 * abort, so it may call what a thread may; it runs while the main thread is still
 * wherever it was stuck. NULL: none.
 */
#define GDRB_WATCHDOG_ABORT_S 5
void gdrb_watchdog_on_abort(void (*fn)(void));

/*
 * Runs that cleanup now, once, where the process is about to end without its
 * normal teardown for another reason than a timeout (a launcher's abort).
 */
void gdrb_watchdog_run_on_exit(void);

/* What this rank waits for now, for the message: "rank 1 (nodeB)" and where. */
void gdrb_watchdog_context(int peer_rank, const char *peer_host, const char *what, size_t size);

/*
 * A wait on every rank (a barrier, a gather) lasts GDRB_WATCHDOG_COLLECTIVE
 * times --timeout before it gives up: the ranks that wait on the one that
 * stopped name it first. Four, not two: each rank counts --timeout in the
 * time it could run, and on a loaded machine one rank's count can run at
 * half another's.
 */
#define GDRB_WATCHDOG_COLLECTIVE 4u
void gdrb_watchdog_collective(const char *who, const char *what, size_t size);

/*
 * Where ranks wait on each other in chains (all pairs), the rank that gives up
 * first may wait on a live rank that is itself stuck behind the lost one. With
 * a linger, a rank that gave up waits that many seconds more (its benchmark
 * stopped at its next wait) before it ends the process, so that the ranks
 * stuck with it name what they wait on too, the lost rank among them, before
 * the launcher takes the job down. The linger is counted as a wait is, in
 * time the rank could run: on a loaded machine the other ranks' waits stretch
 * and so does the linger. 0 (the default): end at once.
 */
void gdrb_watchdog_linger(double seconds);

/*
 * Seconds every wait may last beyond its --timeout (times its patience) until
 * set back to 0: for the waits on peers that may still be busy timing
 * something else, as long as that can take.
 */
void gdrb_watchdog_allow(double seconds);

/* The current wait may last `times` times --timeout (a context sets 1). */
void gdrb_watchdog_patience(unsigned times);

/* Progress: cheap enough for every iteration (one store). */
static inline void gdrb_watchdog_kick_at(uint64_t ticks)
{
	__atomic_store_n(&gdrb_watchdog_mark, ticks, __ATOMIC_RELAXED);
}

static inline void gdrb_watchdog_kick(void)
{
	gdrb_watchdog_kick_at(gdrb_ticks());
}

#endif
