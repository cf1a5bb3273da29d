/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A deterministic clock for comparing two builds byte for byte
 * (scripts/measure/compare-builds): LD_PRELOADed into the ranks (mpirun -x
 * LD_PRELOAD=tests/support/fakeclock.so) of binaries run with --clock monotonic.
 *
 * Reads that the executable itself makes of CLOCK_MONOTONIC(_RAW) and of the
 * thread and process CPU clocks, and getrusage()'s CPU times, come from a
 * counter of the calling thread that moves on by a step on every read: about
 * GDRB_FAKECLOCK_STEP_NS (default 1000 ns), an eighth more for each rank number
 * (OMPI_COMM_WORLD_RANK), varied by up to as much again from a hash of the rank
 * and the read's number, so that samples and ranks differ and percentiles,
 * spreads, the slowest rank and the plan are exercised. Per thread, so the watchdog's reads never move the
 * benchmark thread's clock. Reads by the libraries (Open MPI, libc, CUDA) keep
 * the real clock: MPI's own timeouts still work.
 *
 * The count of reads must not depend on timing either: MPI_Waitsome returns
 * one request at a time (PMPI_Waitany), so a loop that reads the clock after
 * each return runs once per request, however the completions bunch together.
 * Nothing else changes: a run is as correct as without the shim; only its
 * figures are made up.
 *
 * Never installed; built by make check where MPI is (it needs mpi.h), without
 * linking libmpi (PMPI_Waitany is looked up at load).
 */
#define _GNU_SOURCE 1
#include "config.h"

#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define FAKE_START_NS 1000000000ull     /* every thread's clock starts at 1 s */
#define MAX_SEGMENTS 16

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*getrusage_fn)(int, struct rusage *);
typedef int (*waitany_fn)(int, MPI_Request *, int *, MPI_Status *);

struct segment {
	uintptr_t lo, hi;
};

static struct segment exe[MAX_SEGMENTS];
static int nexe;
static uint64_t step_ns = 1000;
static uint64_t seed;                   /* the rank's: its own sequence of steps */
static clock_gettime_fn real_clock_gettime;
static getrusage_fn real_getrusage;
static waitany_fn real_waitany;         /* NULL in a process without MPI */

static __thread uint64_t fake_ns = FAKE_START_NS;
static __thread uint64_t reads;

/* The executable's loaded segments: dl_iterate_phdr names it first. */
static int find_exe(struct dl_phdr_info *info, size_t size, void *arg)
{
	int i;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum && nexe < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		exe[nexe].lo = info->dlpi_addr + ph->p_vaddr;
		exe[nexe].hi = exe[nexe].lo + ph->p_memsz;
		nexe++;
	}
	return 1;
}

/* Another library's constructor may read the clock before ours has run. */
static void resolve(void)
{
	if (!real_clock_gettime)
		real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	if (!real_getrusage)
		real_getrusage = (getrusage_fn)dlsym(RTLD_NEXT, "getrusage");
}

__attribute__((constructor)) static void fakeclock_init(void)
{
	const char *step = getenv("GDRB_FAKECLOCK_STEP_NS"), *rank = getenv("OMPI_COMM_WORLD_RANK");
	uint64_t r = rank ? strtoull(rank, NULL, 10) : 0;

	resolve();
	real_waitany = (waitany_fn)dlsym(RTLD_NEXT, "PMPI_Waitany");
	if (step && *step)
		step_ns = strtoull(step, NULL, 10);
	if (!step_ns)
		step_ns = 1000;
	step_ns += step_ns * r / 8;
	seed = r << 40;
	dl_iterate_phdr(find_exe, NULL);
}

static int from_exe(const void *ret)
{
	uintptr_t a = (uintptr_t)ret;
	int i;

	for (i = 0; i < nexe; i++)
		if (a >= exe[i].lo && a < exe[i].hi)
			return 1;
	return 0;
}

/* splitmix64's finaliser: a fixed, well-spread sequence from the read's number. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* This thread's clock now; the next read is a step later. */
static uint64_t fake_read(void)
{
	uint64_t now = fake_ns;

	fake_ns += step_ns + mix(seed + reads++) % (step_ns + 1);
	return now;
}

static int faked_clock(clockid_t id)
{
	return id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW ||
	       id == CLOCK_THREAD_CPUTIME_ID || id == CLOCK_PROCESS_CPUTIME_ID;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	uint64_t ns;

	resolve();
	if (!faked_clock(id) || !from_exe(__builtin_return_address(0)))
		return real_clock_gettime(id, ts);
	ns = fake_read();
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
	return 0;
}

/* The CPU time of RUSAGE_SELF or RUSAGE_THREAD, all of it user time; the rest as the kernel says. */
int getrusage(int who, struct rusage *ru)
{
	uint64_t ns;
	int rc;

	resolve();
	rc = real_getrusage(who, ru);
	if (rc || !from_exe(__builtin_return_address(0)) || (who != RUSAGE_SELF && who != RUSAGE_THREAD))
		return rc;
	ns = fake_read();
	ru->ru_utime.tv_sec = (time_t)(ns / 1000000000ull);
	ru->ru_utime.tv_usec = (suseconds_t)(ns % 1000000000ull / 1000);
	ru->ru_stime.tv_sec = 0;
	ru->ru_stime.tv_usec = 0;
	return 0;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	int idx, rc;

	if (!real_waitany) {
		fprintf(stderr, "fakeclock: MPI_Waitsome called, but no PMPI_Waitany was loaded\n");
		abort();
	}
	rc = real_waitany(incount, reqs, &idx,
		     statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[0]);
	if (rc != MPI_SUCCESS)
		return rc;
	if (idx == MPI_UNDEFINED) {
		*outcount = MPI_UNDEFINED;
		return MPI_SUCCESS;
	}
	*outcount = 1;
	indices[0] = idx;
	return MPI_SUCCESS;
}
