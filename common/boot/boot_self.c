/* SPDX-License-Identifier: BSD-3-Clause */
/* The single-process bootstrap, and helpers shared by every bootstrap. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_boot.h"
#include "gdrb_log.h"
#include "gdrb_watchdog.h"

int gdrb_boot_rank_hint(const struct gdrb_boot *b)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID",
	};
	size_t i;

	/* One process is rank 0 whatever a launcher left in the environment (a job's shell). */
	if (b == &gdrb_boot_self)
		return 0;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return atoi(v);
	}
	return 0;
}

void gdrb_boot_derive_hosts(struct gdrb_boot *b)
{
	int r, q;

	b->nhosts = 0;
	b->local_rank = 0;
	b->local_size = 0;
	for (r = 0; r < b->size; r++) {
		bool seen = false;

		for (q = 0; q < r && !seen; q++)
			seen = strcmp(b->hosts[q], b->hosts[r]) == 0;
		if (!seen)
			b->nhosts++;
		if (strcmp(b->hosts[r], b->hosts[b->rank]) == 0) {
			if (r < b->rank)
				b->local_rank++;
			b->local_size++;
		}
	}
}

static char self_host[1][GDRB_HOST_MAX];

static int self_init(struct gdrb_boot *b, int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	b->rank = 0;
	b->size = 1;
	b->hosts = self_host;
	snprintf(self_host[0], GDRB_HOST_MAX, "%s", gdrb_host());
	gdrb_boot_derive_hosts(b);
	return 0;
}

static int self_barrier(struct gdrb_boot *b)
{
	(void)b;
	return 0;
}

static int self_allreduce_u64(struct gdrb_boot *b, uint64_t *v, size_t n, enum gdrb_reduce_op op)
{
	(void)b;
	(void)v;
	(void)n;
	(void)op;
	return 0;
}

static int self_allreduce_double(struct gdrb_boot *b, double *v, size_t n, enum gdrb_reduce_op op)
{
	(void)b;
	(void)v;
	(void)n;
	(void)op;
	return 0;
}

static int self_gather(struct gdrb_boot *b, const void *send, size_t len, void *recv)
{
	(void)b;
	memmove(recv, send, len);
	return 0;
}

static int self_bcast(struct gdrb_boot *b, void *buf, size_t len, int root)
{
	(void)b;
	(void)buf;
	(void)len;
	(void)root;
	return 0;
}

static void self_finalize(struct gdrb_boot *b)
{
	(void)b;
}

static void self_abort(struct gdrb_boot *b, int code)
{
	(void)b;
	/* What must not be left behind (a private folder) goes before the process does. */
	gdrb_watchdog_run_on_exit();
	exit(code);
}

struct gdrb_boot gdrb_boot_self = {
	.name = "single process",
	.init = self_init,
	.barrier = self_barrier,
	.allreduce_u64 = self_allreduce_u64,
	.allreduce_double = self_allreduce_double,
	.gather = self_gather,
	.bcast = self_bcast,
	.finalize = self_finalize,
	.abort = self_abort,
};
