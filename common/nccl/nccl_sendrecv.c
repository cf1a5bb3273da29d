/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdrb_nccl_sendrecv: the point-to-point binaries' pairs (rank i and rank
 * i + n/2) exchange one message each way per call, ncclSend and ncclRecv in
 * one group, every pair at once. A sample is one call and its stream's
 * synchronisation; algbw = size / time (one direction's bytes), busbw the same
 * (nccl-tests' factor 1 for sendrecv).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_nccl.h"
#include "gdrb_pattern.h"
#include "nccl_int.h"


static int peer_of(const struct gdrb_ctx *c)
{
	int n = c->boot->size, me = c->boot->rank;

	return me < n / 2 ? me + n / 2 : me - n / 2;
}

static double sr_bus_factor(const struct gdrb_ctx *c)
{
	(void)c;
	return 1.0;
}

static void sr_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "nccl_sendrecv: %d pair(s), rank i with rank i+%d, each sending its message to the other in one ncclGroupStart/End, every pair at once; a sample is one call and the synchronisation of its stream, timed on the host; size = one direction's bytes\n# ",
			 c->boot->size / 2, c->boot->size / 2);

	if (n > 0 && (size_t)n < len)
		gdrb_nccl_describe(c, buf + n, len - (size_t)n);
}

static int sr_setup(struct gdrb_ctx *c)
{
	int rc = gdrb_nccl_check_mem(c);

	if (!rc && (c->boot->size < 2 || c->boot->size % 2)) {
		gdrb_usage_err("nccl_sendrecv pairs rank i with rank i+n/2: it needs an even number of ranks, at least 2 (got %d); run it as 'mpirun -np 2 %s'",
			       c->boot->size, gdrb_prog());
		rc = GDRB_ERR_USAGE;
	}
	if (rc)
		return rc;
	return gdrb_nccl_open(c);
}

static int sr_iteration(struct gdrb_ctx *c, size_t size)
{
	int peer = peer_of(c);

	if (gdrb_nccl_check(c, ncclGroupStart(), "ncclGroupStart", size) ||
	    gdrb_nccl_check(c, ncclSend(c->send.ptr, size, ncclInt8, peer, gdrb_nccl()->comm, gdrb_nccl()->stream),
			    "ncclSend", size) ||
	    gdrb_nccl_check(c, ncclRecv(c->recv.ptr, size, ncclInt8, peer, gdrb_nccl()->comm, gdrb_nccl()->stream),
			    "ncclRecv", size) ||
	    gdrb_nccl_check(c, ncclGroupEnd(), "ncclGroupEnd", size))
		return GDRB_ERR;
	return gdrb_nccl_sync(c, "nccl_sendrecv", size);
}

static int sr_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	c->check_span = size;
	return gdrb_buf_fill_pattern_at(&c->send, 0, size,
					gdrb_pattern_seed(size, iter, 0, (unsigned)c->boot->rank), 0);
}

static uint64_t sr_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	int peer = peer_of(c);
	size_t first = 0;
	uint64_t bad = gdrb_buf_check_pattern_at(&c->recv, 0, size,
						 gdrb_pattern_seed(size, iter, 0, (unsigned)peer), 0, &first);

	if (bad && bad != (uint64_t)-1)
		gdrb_mismatch(c, "nccl_sendrecv: %llu wrong byte(s) from rank %d, first at byte %zu",
			      (unsigned long long)bad, peer, first);
	return bad;
}

static void sr_teardown(struct gdrb_ctx *c)
{
	(void)c;
	gdrb_nccl_close();
}

int gdrb_nccl_sendrecv_main(struct gdrb_boot *boot, int argc, char **argv)
{
	static const struct gdrb_opt_use groups[] = {
		{ &gdrb_nccl_opts, GDRB_NCCL_OPTS },
		{ NULL, 0 },
	};
	struct gdrb_bench bench;

	gdrb_nccl_bench(&bench, "nccl_sendrecv",
			"ncclSend/ncclRecv: rank i and rank i+n/2 exchange a message each way per call", groups);
	bench.bus_factor = sr_bus_factor;
	bench.describe = sr_describe;
	bench.setup = sr_setup;
	bench.iteration = sr_iteration;
	bench.prepare = sr_prepare;
	bench.check = sr_check;
	bench.teardown = sr_teardown;
	return gdrb_main(&bench, boot, argc, argv);
}
