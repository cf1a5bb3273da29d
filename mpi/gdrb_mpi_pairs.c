/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI all pairs (mpiGraph's shifted rounds): the transfers of common/pairs.c over MPI. */
#include "config.h"

#include <stdlib.h>

#include <mpi.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_clock.h"
#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"
#include "gdrb_pairs.h"
#include "gdrb_transports.h"
#include "gdrb_watchdog.h"

struct mpi_pairs {
	struct gdrb_boot *boot;
	MPI_Request *reqs;
	int *idx;               /* MPI_Waitsome's */
	int cap, n, sends;      /* requests; posted so far, where the sends begin */
	char ack_in, ack_out, ready_in, ready_out;
};

#define PAIRS_TAG_READY 3       /* beside gdrb_mpi_p2p.h's GDRB_TAG_DATA and GDRB_TAG_ACK */

static int pairs_setup(const struct gdrb_params *p, struct gdrb_boot *b, struct gdrb_pairs_setup *s, void **priv)
{
	const struct gdrb_mpi_params *mp = gdrb_group_params(p, &gdrb_mpi_opts);
	const struct gdrb_mpi_lib *lib;
	struct mpi_pairs *m = calloc(1, sizeof(*m));

	/* MPI registers what it sends by itself: s->bufs are not needed. */
	if (!m)
		return GDRB_ERR;
	m->boot = b;
	m->cap = (int)(2 * s->max_msgs * gdrb_mpi_chunks(gdrb_sizes_max(&p->sizes)) + 2);
	m->reqs = calloc((size_t)m->cap, sizeof(*m->reqs));
	m->idx = calloc((size_t)m->cap, sizeof(*m->idx));
	*priv = m;
	if (!m->reqs || !m->idx)
		return GDRB_ERR;
	gdrb_mpi_cuda_want((enum gdrb_mpi_cuda)mp->cuda);
	lib = gdrb_mpi_lib();
	s->direct_device = lib->cuda_aware;
	s->direct_reg = GDRB_MPI_GPU_REG;
	if (!lib->cuda_aware)
		snprintf(s->why, sizeof(s->why), "%.127s is not CUDA-aware (%.160s): device pointers are never handed to it; --mpi-cuda yes if it is",
			 lib->name, lib->cuda_aware_why);
	return 0;
}

static void pairs_teardown(void *priv)
{
	struct mpi_pairs *m = priv;

	free(m->reqs);
	free(m->idx);
	free(m);
}

static int post(struct mpi_pairs *m, int *n, char *buf, size_t len, int peer, int tag, bool out)
{
	return gdrb_mpi_post(m->reqs, m->cap, n, buf, len, peer, tag, out);
}

/*
 * Receives of the window from w->from, and of the acknowledgement from w->to,
 * are posted before the barrier that starts an iteration (reqs[0] the
 * acknowledgement, then the window's), so no send waits on a late receiver.
 * Then a zero-byte "ready" goes to w->from and w->to's is awaited: not needed
 * for the timing (the barrier does that), but a rank that stops or is cut off
 * is then named by the rank that sends to it, where in the barrier its peers
 * could only say "the other ranks".
 */
static int pairs_post(void *priv, const struct gdrb_pairs_window *w)
{
	struct mpi_pairs *m = priv;
	MPI_Request ready[2];
	unsigned k;

	m->n = 0;
	if (post(m, &m->n, &m->ack_in, 0, w->to, GDRB_TAG_ACK, false))
		return GDRB_ERR;
	for (k = 0; k < w->count; k++)
		if (post(m, &m->n, w->recv + k * w->stride, w->size, w->from, GDRB_TAG_DATA, false))
			return GDRB_ERR;
	m->sends = m->n;
	if (MPI_Irecv(&m->ready_in, 0, MPI_BYTE, w->to, PAIRS_TAG_READY, MPI_COMM_WORLD, &ready[0]) != MPI_SUCCESS ||
	    MPI_Isend(&m->ready_out, 0, MPI_BYTE, w->from, PAIRS_TAG_READY, MPI_COMM_WORLD, &ready[1]) != MPI_SUCCESS) {
		gdrb_err("MPI_Irecv or MPI_Isend of a 'ready' with ranks %d and %d failed", w->to, w->from);
		return GDRB_ERR;
	}
	gdrb_watchdog_context(w->to, m->boot->hosts[w->to], "the destination's 'ready' for a window", w->size);
	if (MPI_Waitall(2, ready, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
		gdrb_err("MPI_Waitall for the 'ready' of rank %d failed", w->to);
		return GDRB_ERR;
	}
	gdrb_watchdog_kick();
	return 0;
}

static bool done_between(const MPI_Request *reqs, int first, int end)
{
	for (; first < end; first++)
		if (reqs[first] != MPI_REQUEST_NULL)
			return false;
	return true;
}

/*
 * The window out is posted, then every request is waited on at once
 * (MPI_Waitsome), each side's end noted as it comes: the window in is
 * acknowledged the moment it is complete, and this rank's own sends never
 * wait for it, nor it for them, so a pair's figure is that pair's alone.
 */
static int pairs_exchange(void *priv, const struct gdrb_pairs_window *w, struct gdrb_pairs_done *done)
{
	struct mpi_pairs *m = priv;
	int recvs = m->sends, n = m->n, sends_end, outs, *idx = m->idx;
	bool in = false, out = false;
	unsigned k;

	for (k = 0; k < w->count; k++)
		if (post(m, &n, (char *)w->send + k * w->stride, w->size, w->to, GDRB_TAG_DATA, true))
			return GDRB_ERR;
	sends_end = n;
	while (!in || !out) {
		int peer = in ? w->to : w->from;

		gdrb_watchdog_context(peer, m->boot->hosts[peer], in ? "the acknowledgement of a window" :
				      "receiving a window", w->size);
		if (MPI_Waitsome(n, m->reqs, &outs, idx, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
			gdrb_err("MPI_Waitsome for rank %d (%s) failed", peer, in ? "acknowledgement" : "window");
			return GDRB_ERR;
		}
		gdrb_watchdog_kick();
		if (!in && done_between(m->reqs, 1, recvs)) {
			done->in = gdrb_ticks();
			in = true;
			if ((w->received && w->received(w->arg)) ||
			    post(m, &n, &m->ack_out, 0, w->from, GDRB_TAG_ACK, true))
				return GDRB_ERR;
		}
		if (!out && done_between(m->reqs, 0, 1) && done_between(m->reqs, recvs, sends_end)) {
			done->out = gdrb_ticks();
			out = true;
		}
	}
	/* This rank's acknowledgement out, posted last. */
	gdrb_watchdog_context(w->from, m->boot->hosts[w->from], "acknowledging a window", w->size);
	if (MPI_Waitall(n, m->reqs, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
		gdrb_err("MPI_Waitall for rank %d (acknowledging a window) failed", w->from);
		return GDRB_ERR;
	}
	gdrb_watchdog_kick();
	return 0;
}

static int pairs_send(void *priv, int peer, const void *buf, size_t len)
{
	struct mpi_pairs *m = priv;

	gdrb_watchdog_context(peer, m->boot->hosts[peer], "a ping-pong send", len);
	return gdrb_mpi_send(buf, len, peer, GDRB_TAG_DATA);
}

static int pairs_recv(void *priv, int peer, void *buf, size_t len)
{
	struct mpi_pairs *m = priv;
	int rc;

	gdrb_watchdog_context(peer, m->boot->hosts[peer], "a ping-pong receive", len);
	rc = gdrb_mpi_recv(buf, len, peer, GDRB_TAG_DATA);
	gdrb_watchdog_kick();
	return rc;
}

static const struct gdrb_pairs_ops mpi_pairs = {
	.name = "mpi_pairs",
	.layer = "mpi",
	.summary = "MPI all pairs in shifted rounds (mpiGraph): every rank sends to rank + k and receives from rank - k in round k; a matrix per size and path",
	.opt_groups = (const struct gdrb_opt_use[]){ { &gdrb_mpi_opts, GDRB_MPI_OPT_CUDA }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = pairs_setup,
	.post = pairs_post,
	.exchange = pairs_exchange,
	.send = pairs_send,
	.recv = pairs_recv,
	.teardown = pairs_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_pairs_main(&mpi_pairs, &gdrb_boot_mpi, argc, argv);
}
