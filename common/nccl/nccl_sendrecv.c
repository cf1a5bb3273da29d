/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdrb_nccl_sendrecv, as --nccl-pattern says: pairs (rank i and rank i + n/2
 * exchange one message each way per call, the point-to-point binaries'
 * pairing) or ring (rank i sends to i+1 and receives from i-1, nccl-tests'
 * sendrecv_perf); ncclSend and ncclRecv in one group, every rank at once,
 * timed as --nccl-timing says (nccl_batch.h). algbw = size / time (one
 * direction's bytes), busbw the same (nccl-tests' factor 1 for sendrecv).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_nccl.h"
#include "gdrb_pattern.h"
#include "nccl_batch.h"
#include "nccl_int.h"

static bool ring(const struct gdrb_ctx *c)
{
	return gdrb_nccl_params(c->p)->pattern == GDRB_NCCL_PATTERN_RING;
}

/* Who this rank sends to. */
static int send_peer(const struct gdrb_ctx *c)
{
	int n = c->boot->size, me = c->boot->rank;

	if (ring(c))
		return (me + 1) % n;
	return me < n / 2 ? me + n / 2 : me - n / 2;
}

/* Who this rank receives from. */
static int recv_peer(const struct gdrb_ctx *c)
{
	int n = c->boot->size, me = c->boot->rank;

	if (ring(c))
		return (me - 1 + n) % n;
	return send_peer(c);
}

static double sr_bus_factor(const struct gdrb_ctx *c)
{
	(void)c;
	return 1.0;
}

static void sr_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	int n;

	gdrb_nccl_timing_describe(c, buf, len);
	n = (int)strlen(buf);
	if (ring(c))
		n += snprintf(buf + n, len - (size_t)n,
			      "\n# nccl_sendrecv: --nccl-pattern ring, %d ranks: rank i sends its message to rank i+1 and receives rank i-1's (modulo %d), in one ncclGroupStart/End, every rank at once (nccl-tests' sendrecv_perf); size = one direction's bytes\n# ",
			      c->boot->size, c->boot->size);
	else
		n += snprintf(buf + n, len - (size_t)n,
			      "\n# nccl_sendrecv: --nccl-pattern pairs, %d pair(s), rank i with rank i+%d, each sending its message to the other in one ncclGroupStart/End, every pair at once; size = one direction's bytes\n# ",
			      c->boot->size / 2, c->boot->size / 2);
	if (n > 0 && (size_t)n < len)
		gdrb_nccl_describe(c, buf + n, len - (size_t)n);
}

static int sr_setup(struct gdrb_ctx *c)
{
	int rc = gdrb_nccl_check_mem(c);

	if (!rc && ring(c) && c->boot->size < 2) {
		gdrb_usage_err("nccl_sendrecv --nccl-pattern ring sends from rank i to rank i+1: it needs at least 2 ranks (got %d); run it as 'mpirun -np 2 %s --nccl-pattern ring'",
			       c->boot->size, gdrb_prog());
		rc = GDRB_ERR_USAGE;
	}
	if (!rc && !ring(c) && (c->boot->size < 2 || c->boot->size % 2)) {
		gdrb_usage_err("nccl_sendrecv pairs rank i with rank i+n/2: it needs an even number of ranks, at least 2 (got %d); run it as 'mpirun -np 2 %s', or --nccl-pattern ring for any count",
			       c->boot->size, gdrb_prog());
		rc = GDRB_ERR_USAGE;
	}
	if (rc)
		return rc;
	return gdrb_nccl_open(c);
}

/* One exchange, both buffers `shift` bytes further on (the rotation of nccl_batch.h). */
static int sr_issue(struct gdrb_ctx *c, size_t size, size_t shift)
{
	const struct gdrb_nccl *n = gdrb_nccl();

	if (gdrb_nccl_check(c, ncclGroupStart(), "ncclGroupStart", size) ||
	    gdrb_nccl_check(c, ncclSend((char *)c->send.ptr + shift, size, ncclInt8, send_peer(c), n->comm,
					n->stream), "ncclSend", size) ||
	    gdrb_nccl_check(c, ncclRecv((char *)c->recv.ptr + shift, size, ncclInt8, recv_peer(c), n->comm,
					n->stream), "ncclRecv", size) ||
	    gdrb_nccl_check(c, ncclGroupEnd(), "ncclGroupEnd", size))
		return GDRB_ERR;
	return 0;
}

static int sr_begin(struct gdrb_ctx *c, size_t size)
{
	return gdrb_nccl_timing_begin(c, size, sr_issue, "nccl_sendrecv");
}

static int sr_iteration(struct gdrb_ctx *c, size_t size)
{
	return gdrb_nccl_timing_iteration(c, size, sr_issue, "nccl_sendrecv");
}

static int sr_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	size_t shift = gdrb_nccl_checked_shift(c, size, 1);

	c->check_span = size;
	c->check_off = shift;
	return gdrb_buf_fill_pattern_at(&c->send, shift, size,
					gdrb_pattern_seed(size, iter, 0, (unsigned)c->boot->rank), 0);
}

static uint64_t sr_check(struct gdrb_ctx *c, size_t size, uint64_t iter)
{
	int peer = recv_peer(c);
	size_t first = 0, shift = gdrb_nccl_checked_shift(c, size, 0);
	uint64_t bad = gdrb_buf_check_pattern_at(&c->recv, shift, size,
						 gdrb_pattern_seed(size, iter, 0, (unsigned)peer), 0, &first);

	if (bad && bad != (uint64_t)-1)
		gdrb_mismatch(c, "nccl_sendrecv: %llu wrong byte(s) from rank %d, first at byte %zu",
			      (unsigned long long)bad, peer, first);
	return bad;
}

static void sr_teardown(struct gdrb_ctx *c)
{
	(void)c;
	gdrb_nccl_timing_release();
	gdrb_nccl_close();
}

int gdrb_nccl_sendrecv_main(struct gdrb_boot *boot, const struct gdrb_opt_group *const *known,
			    int argc, char **argv)
{
	static const struct gdrb_opt_use groups[] = {
		{ &gdrb_nccl_opts, GDRB_NCCL_OPTS | GDRB_NCCL_OPT_PATTERN },
		{ NULL, 0 },
	};
	struct gdrb_bench bench;

	gdrb_nccl_bench(&bench, "nccl_sendrecv",
			"ncclSend/ncclRecv: rank i and rank i+n/2 exchange a message each way per call, or rank i sends to i+1 (--nccl-pattern ring)", groups, known);
	bench.bus_factor = sr_bus_factor;
	bench.describe = sr_describe;
	bench.setup = sr_setup;
	bench.begin = sr_begin;
	bench.iteration = sr_iteration;
	bench.prepare = sr_prepare;
	bench.check = sr_check;
	bench.teardown = sr_teardown;
	return gdrb_main(&bench, boot, argc, argv);
}
