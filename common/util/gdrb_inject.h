/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test hooks: environment variables with which the test suite injects faults
 * and load into the shipped binaries (a flipped byte, a stalled rank, a
 * stopped rank, fake host names, a staging ring without its waits, a smaller
 * work request, a fixture tree for the counters, a counter that rises, NCCL's
 * /etc/nccl.conf elsewhere). They change data, timing and host names, so they are read in
 * this one place, once, before anything is measured:
 *   - each value is checked strictly (one line naming the variable and the
 *     accepted form, GDRB_ERR_USAGE: the binary exits 2);
 *   - a hook set without GDRB_TEST_HOOKS=1 is refused the same way, so that a
 *     variable left in an environment never reaches a figure;
 *   - an active hook names itself in the header and the CSV note of every row
 *     (gdrb_inject_note()), and gdrb accept never passes such a row.
 * No other file reads a GDRB_ variable from the environment (tests/integration/inject.sh).
 */
#ifndef GDRB_INJECT_H
#define GDRB_INJECT_H

#include <stdbool.h>
#include <stddef.h>

/* The switch that allows the hooks below; the only value it takes is "1". */
#define GDRB_TEST_HOOKS_ENV "GDRB_TEST_HOOKS"

/* Where the note and the header name an active hook: accept.py looks for this. */
#define GDRB_INJECT_MARK "test hook "

/* The hooks; an empty variable is the same as an unset one. */
struct gdrb_inject {
	/* GDRB_INJECT_CORRUPTION=RANK: that rank flips a received byte before each check. */
	int corrupt_rank;               /* -1: off */
	/* GDRB_INJECT_STALL=US[/EVERY]: rank 0 sleeps US before iterations 0, EVERY, 2 x EVERY... of each size. */
	unsigned long stall_us;         /* 0: off */
	unsigned long stall_every;      /* ULONG_MAX without /EVERY: the first iteration only */
	/* GDRB_INJECT_HOSTS=H0,H1,...: the host names of ranks 0, 1, ... for all pairs' layout. */
	const char *hosts;              /* NULL: off */
	/* GDRB_INJECT_PAIRS_STOP=RANK:SHIFT: SIGSTOP that rank as the round of that shift begins. */
	int pairs_stop_rank;            /* -1: off */
	unsigned pairs_stop_shift;
	/* GDRB_INJECT_STEP_STOP=RANK:N: SIGSTOP that rank inside its N-th barrier or maximum. */
	int step_stop_rank;             /* -1: off */
	unsigned long step_stop_n;
	/* GDRB_INJECT_STAGE_RACE=out|in|all: the named staging rings skip their waits. */
	const char *stage_race;         /* NULL: off */
	/* GDRB_VERBS_MAX_MSG=SIZE: the largest verbs work request is at most SIZE. */
	size_t verbs_max_msg;           /* 0: off */
	/* GDRB_INJECT_SYSFS_ROOT=DIR: the counters around each measurement (and NCCL's NIC rates) are read under DIR, not /sys. */
	const char *sysfs_root;         /* NULL: off */
	/*
	 * GDRB_INJECT_COUNTER=NAME+N@K (or NAME-N@K): every counter called NAME reads N more
	 * (less, not below 0) in the K-th reading after the one before the first size, and after.
	 * NAME+N@K+: N more again at each reading after the K-th (a steady rise).
	 */
	char counter_name[48];          /* "": off */
	unsigned long long counter_delta;
	bool counter_down;
	bool counter_ramp;
	unsigned long counter_from;
	/* GDRB_INJECT_NCCL_ETC_CONF=PATH: the NCCL binaries read PATH in place of /etc/nccl.conf. */
	const char *nccl_etc_conf;      /* NULL: off */
};

/*
 * Read and check every hook (again on each call: tests change the
 * environment). 0, or GDRB_ERR_USAGE after one line on stderr (leader only,
 * as every usage error). Before it is called, or after it failed, every hook
 * is off.
 */
int gdrb_inject_load(void);

/* The hooks read by the last gdrb_inject_load(). */
const struct gdrb_inject *gdrb_inject(void);

/* Whether any hook is active. */
bool gdrb_inject_active(void);

/*
 * "test hook GDRB_INJECT_STALL=300000/1" (each active hook, "; " between
 * them, long values cut), or "" when none is: for the CSV note and the header.
 */
const char *gdrb_inject_note(void);

#endif
