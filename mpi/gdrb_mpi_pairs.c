/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI all pairs (mpiGraph's shifted rounds): the transfers of common/pairs.c over MPI. */
#include "config.h"

#include <stdlib.h>

#include <mpi.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"
#include "gdrb_pairs.h"
#include "gdrb_transports.h"
#include "gdrb_watchdog.h"

struct mpi_pairs {
	struct gdrb_boot *boot;
	MPI_Request *reqs;
	int cap;
};

static size_t chunks(size_t len)
{
	return len ? (len + GDRB_MPI_CHUNK - 1) / GDRB_MPI_CHUNK : 1;
}

static int pairs_setup(const struct gdrb_params *p, struct gdrb_boot *b, const struct gdrb_pairs_bufs *bufs,
		       size_t max_msgs, void **priv, bool *direct_device, char *why, size_t len)
{
	const struct gdrb_mpi_params *mp = gdrb_group_params(p, &gdrb_mpi_opts);
	const struct gdrb_mpi_lib *lib;
	struct mpi_pairs *m = calloc(1, sizeof(*m));

	(void)bufs;     /* MPI registers what it sends by itself */
	if (!m)
		return GDRB_ERR;
	m->boot = b;
	m->cap = (int)(2 * max_msgs * chunks(gdrb_sizes_max(&p->sizes)) + 2);
	m->reqs = calloc((size_t)m->cap, sizeof(*m->reqs));
	*priv = m;
	if (!m->reqs)
		return GDRB_ERR;
	gdrb_mpi_cuda_want((enum gdrb_mpi_cuda)mp->cuda);
	lib = gdrb_mpi_lib();
	*direct_device = lib->cuda_aware;
	if (!lib->cuda_aware)
		snprintf(why, len, "%.127s is not CUDA-aware (%.160s): device pointers are never handed to it; --mpi-cuda yes if it is",
			 lib->name, lib->cuda_aware_why);
	return 0;
}

static void pairs_teardown(void *priv)
{
	struct mpi_pairs *m = priv;

	free(m->reqs);
	free(m);
}

static int post(struct mpi_pairs *m, int *n, char *buf, size_t len, int peer, int tag, bool out)
{
	size_t off = 0;

	do {
		int part = (int)(len - off < GDRB_MPI_CHUNK ? len - off : GDRB_MPI_CHUNK), rc;

		if (*n >= m->cap) {
			gdrb_err("internal: more than %d MPI requests in a window", m->cap);
			return GDRB_ERR;
		}
		rc = out ? MPI_Isend(buf + off, part, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &m->reqs[*n]) :
			       MPI_Irecv(buf + off, part, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &m->reqs[*n]);

		if (rc != MPI_SUCCESS) {
			gdrb_err("MPI_I%s of %d B with rank %d failed (error %d)", out ? "send" : "recv", part,
				 peer, rc);
			return GDRB_ERR;
		}
		(*n)++;
		off += (size_t)part;
	} while (off < len);
	return 0;
}

static int wait(struct mpi_pairs *m, int first, int n, int peer, const char *what, size_t size)
{
	gdrb_watchdog_context(peer, m->boot->hosts[peer], what, size);
	if (n > first && MPI_Waitall(n - first, m->reqs + first, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
		gdrb_err("MPI_Waitall for rank %d (%s) failed", peer, what);
		return GDRB_ERR;
	}
	gdrb_watchdog_kick();
	return 0;
}

/*
 * Receives from w->from and the acknowledgement from w->to are posted before
 * any send; the window's receives complete, then this rank acknowledges them,
 * and the iteration ends when w->to has acknowledged ours.
 */
static int pairs_window(void *priv, const struct gdrb_pairs_window *w)
{
	struct mpi_pairs *m = priv;
	char ack_in = 0, ack_out = 0;
	int n = 0, data, sends;
	unsigned k;

	if (post(m, &n, &ack_in, 0, w->to, GDRB_TAG_ACK, false))
		return GDRB_ERR;
	data = n;
	for (k = 0; k < w->count; k++)
		if (post(m, &n, w->recv + k * w->stride, w->size, w->from, GDRB_TAG_DATA, false))
			return GDRB_ERR;
	sends = n;
	for (k = 0; k < w->count; k++)
		if (post(m, &n, (char *)w->send + k * w->stride, w->size, w->to, GDRB_TAG_DATA, true))
			return GDRB_ERR;
	if (wait(m, data, sends, w->from, "receiving a window", w->size) ||
	    post(m, &n, &ack_out, 0, w->from, GDRB_TAG_ACK, true) ||
	    wait(m, 0, data, w->to, "the acknowledgement of a window", w->size) ||
	    wait(m, sends, n, w->to, "sending a window", w->size))
		return GDRB_ERR;
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
	.window = pairs_window,
	.send = pairs_send,
	.recv = pairs_recv,
	.teardown = pairs_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_pairs_main(&mpi_pairs, &gdrb_boot_mpi, argc, argv);
}
