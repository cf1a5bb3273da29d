/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"
#include "gdrb_watchdog.h"

static int chunk_len(size_t left)
{
	return (int)(left < GDRB_MPI_CHUNK ? left : GDRB_MPI_CHUNK);
}

int gdrb_mpi_p2p_setup(struct gdrb_ctx *c)
{
	struct gdrb_mpi_p2p *m;
	size_t max = 0, i;

	for (i = 0; i < c->p->sizes.n; i++)
		if (gdrb_mpi_chunks(c->p->sizes.v[i]) > max)
			max = gdrb_mpi_chunks(c->p->sizes.v[i]);
	m = calloc(1, sizeof(*m));
	if (!m)
		return GDRB_ERR;
	/* A window of sends and one of receives, each message possibly chunked. */
	m->cap = (int)(2 * (c->p->window + max) + 2);
	m->reqs = calloc((size_t)m->cap, sizeof(*m->reqs));
	m->done = calloc((size_t)m->cap, sizeof(*m->done));
	if (!m->reqs || !m->done) {
		free(m->reqs);
		free(m->done);
		free(m);
		return GDRB_ERR;
	}
	c->priv = m;
	return gdrb_mpi_check_direct(c);
}

int gdrb_mpi_check_direct(struct gdrb_ctx *c)
{
	struct gdrb_variant *direct = &c->variants[0];
	const struct gdrb_mpi_params *mp = gdrb_mpi_params(c);
	const struct gdrb_mpi_lib *lib = gdrb_mpi_lib();
	int rank = c->boot->rank;

	gdrb_mpi_cuda_want((enum gdrb_mpi_cuda)mp->cuda);
	if (!gdrb_mem_kind(c->p->mem)->on_gpu) {
		direct->how = "MPI reads and writes the host buffers";
		return 0;
	}
	direct->reg = GDRB_MPI_GPU_REG;
	if (lib->cuda_aware && !lib->cuda_detected) {
		direct->how = "device pointers handed to MPI, which --mpi-cuda yes says is CUDA-aware";
		if (rank == 0)
			gdrb_warn("--mpi-cuda yes: device pointers go to %s, which does not say it is CUDA-aware (%s); if it is not, it crashes",
				  lib->name, lib->cuda_aware_why);
		return 0;
	}
	direct->how = "device pointers handed to the CUDA-aware MPI";
	if (lib->cuda_aware)
		return 0;
	direct->supported = false;
	if (mp->cuda == GDRB_MPI_CUDA_NO)
		snprintf(direct->why, sizeof(direct->why),
			 "--mpi-cuda no: device pointers are never handed to %.127s (%.255s)",
			 lib->name, lib->cuda_aware_why);
	else
		snprintf(direct->why, sizeof(direct->why),
			 "%.127s is not CUDA-aware (%.255s), so device pointers are never handed to it; use an MPI built with CUDA support (Open MPI --with-cuda or UCX with CUDA), or --mpi-cuda yes if this one is",
			 lib->name, lib->cuda_aware_why);
	return 0;
}

void gdrb_mpi_p2p_teardown(struct gdrb_ctx *c)
{
	struct gdrb_mpi_p2p *m = c->priv;

	if (!m)
		return;
	free(m->reqs);
	free(m->done);
	free(m);
	c->priv = NULL;
}

int gdrb_mpi_send(const void *buf, size_t len, int peer, int tag)
{
	const char *p = buf;

	do {
		int n = chunk_len(len);

		if (MPI_Send(p, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
			return GDRB_ERR;
		p += n;
		len -= (size_t)n;
	} while (len);
	return 0;
}

int gdrb_mpi_recv(void *buf, size_t len, int peer, int tag)
{
	char *p = buf;

	do {
		int n = chunk_len(len);

		if (MPI_Recv(p, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
		    MPI_SUCCESS)
			return GDRB_ERR;
		p += n;
		len -= (size_t)n;
	} while (len);
	return 0;
}

int gdrb_mpi_post(MPI_Request *reqs, int cap, int *n, void *buf, size_t len, int peer, int tag,
		  bool send)
{
	char *p = buf;

	do {
		int part = chunk_len(len), rc;

		if (*n >= cap) {
			gdrb_err("internal: more than %d MPI requests in flight", cap);
			return GDRB_ERR;
		}
		rc = send ? MPI_Isend(p, part, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &reqs[*n]) :
			    MPI_Irecv(p, part, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &reqs[*n]);
		if (rc != MPI_SUCCESS) {
			gdrb_err("MPI_I%s of %d B with rank %d failed (error %d)", send ? "send" : "recv",
				 part, peer, rc);
			return GDRB_ERR;
		}
		(*n)++;
		p += part;
		len -= (size_t)part;
	} while (len);
	return 0;
}

int gdrb_mpi_isend(struct gdrb_ctx *c, const void *buf, size_t len, int tag)
{
	struct gdrb_mpi_p2p *m = c->priv;

	return gdrb_mpi_post(m->reqs, m->cap, &m->nreqs, (void *)buf, len, c->peer, tag, true);
}

int gdrb_mpi_irecv(struct gdrb_ctx *c, void *buf, size_t len, int tag)
{
	struct gdrb_mpi_p2p *m = c->priv;

	return gdrb_mpi_post(m->reqs, m->cap, &m->nreqs, buf, len, c->peer, tag, false);
}

int gdrb_mpi_waitall(struct gdrb_ctx *c)
{
	struct gdrb_mpi_p2p *m = c->priv;
	int left = m->nreqs, n;

	/* Completion by completion: each is progress for the watchdog, however long the window. */
	while (left > 0) {
		if (MPI_Waitsome(m->nreqs, m->reqs, &n, m->done, MPI_STATUSES_IGNORE) != MPI_SUCCESS ||
		    n == MPI_UNDEFINED)
			break;
		left -= n;
		gdrb_watchdog_kick();
	}
	m->nreqs = 0;
	return left > 0 ? GDRB_ERR : 0;
}

int gdrb_mpi_isend_window(struct gdrb_ctx *c, size_t size)
{
	unsigned k;

	for (k = 0; k < c->window; k++)
		if (gdrb_stage_out(c, gdrb_msg_off(c, k), size) ||
		    gdrb_mpi_isend(c, gdrb_wire_send(c) + gdrb_msg_off(c, k), size, GDRB_TAG_DATA))
			return GDRB_ERR;
	return 0;
}

int gdrb_mpi_irecv_window(struct gdrb_ctx *c, size_t size)
{
	unsigned k;

	for (k = 0; k < c->window; k++)
		if (gdrb_mpi_irecv(c, gdrb_wire_recv(c) + gdrb_msg_off(c, k), size, GDRB_TAG_DATA))
			return GDRB_ERR;
	return 0;
}

int gdrb_mpi_stage_in_window(struct gdrb_ctx *c, size_t size)
{
	unsigned k;

	for (k = 0; k < c->window; k++)
		if (gdrb_stage_in(c, gdrb_msg_off(c, k), size))
			return GDRB_ERR;
	return 0;
}

/* --- pipelined staging ------------------------------------------------------ */

/* Progress of one direction of a pipeline, in fragments. */
struct pipe_dir {
	struct gdrb_frags fr;
	struct gdrb_ring *ring;
	struct gdrb_buf *dev;
	MPI_Request *req;
	size_t copied;          /* out: device->slot copies issued */
	size_t posted;          /* out: sends posted; in: receives posted */
	size_t landed;          /* out: sends complete; in: receives complete, slot->device issued */
	size_t freed;           /* in: slot->device copies finished */
};

/* 1: the request of fragment f has completed, 0: not yet, GDRB_ERR: failed. */
static int req_done(struct pipe_dir *d, size_t f)
{
	int flag = 0;

	if (MPI_Test(&d->req[f % d->ring->slots], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return GDRB_ERR;
	return flag != 0;
}

/* Fragment f's transfer on its slot: a send out of it, or a receive into it. */
static int post_frag(struct gdrb_ctx *c, struct pipe_dir *d, size_t f, bool send)
{
	MPI_Request *req = &d->req[f % d->ring->slots];
	void *slot = gdrb_ring_slot(d->ring, f);
	size_t off, len;
	int rc;

	gdrb_frag_at(&d->fr, f, &off, &len, NULL);
	rc = send ? MPI_Isend(slot, (int)len, MPI_BYTE, c->peer, GDRB_TAG_DATA, MPI_COMM_WORLD, req) :
		    MPI_Irecv(slot, (int)len, MPI_BYTE, c->peer, GDRB_TAG_DATA, MPI_COMM_WORLD, req);
	return rc == MPI_SUCCESS ? 0 : GDRB_ERR;
}

/*
 * One step of the sending side: a slot whose last send completed is refilled
 * (device->pinned), a slot whose copy finished is sent, a send that finished
 * frees its slot. Returns 1 when something moved, 0 when nothing could.
 */
static int pipe_out_step(struct gdrb_ctx *c, struct pipe_dir *d)
{
	int rc;

	if (d->copied < d->fr.total && d->copied - d->landed < d->ring->slots)
		return gdrb_ring_copy_frag(d->ring, &d->fr, d->copied++, d->dev, true) ? GDRB_ERR : 1;
	if (d->posted < d->copied) {
		rc = gdrb_ring_done(d->ring, d->posted);
		if (rc)
			return rc < 0 ? rc : post_frag(c, d, d->posted++, true) ? GDRB_ERR : 1;
	}
	if (d->landed < d->posted) {
		rc = req_done(d, d->landed);
		if (rc > 0)
			d->landed++;
		return rc;
	}
	return 0;
}

/*
 * One step of the receiving side: a free slot gets a receive, a receive that
 * completed is copied to the device (pinned->device), a copy that finished
 * frees its slot. Returns 1 when something moved, 0 when nothing could.
 */
static int pipe_in_step(struct gdrb_ctx *c, struct pipe_dir *d)
{
	int rc;

	if (d->posted < d->fr.total && d->posted - d->freed < d->ring->slots)
		return post_frag(c, d, d->posted++, false) ? GDRB_ERR : 1;
	if (d->landed < d->posted) {
		rc = req_done(d, d->landed);
		if (rc)
			return rc < 0 ? rc :
			       gdrb_ring_copy_frag(d->ring, &d->fr, d->landed++, d->dev, false) ? GDRB_ERR : 1;
	}
	if (d->freed < d->landed) {
		rc = gdrb_ring_done(d->ring, d->freed);
		if (rc > 0)
			d->freed++;
		return rc;
	}
	return 0;
}

static void pipe_dir_init(struct pipe_dir *d, struct gdrb_ring *r, struct gdrb_buf *dev,
			  MPI_Request *req, size_t size, size_t stride, unsigned count)
{
	memset(d, 0, sizeof(*d));
	if (!count)
		return;         /* this direction is idle (and its ring may not exist) */
	gdrb_frags_init(&d->fr, size, count, r->chunk, stride);
	d->ring = r;
	d->dev = dev;
	d->req = req;
}

int gdrb_mpi_pipe(struct gdrb_ctx *c, size_t size, unsigned count, bool out, bool in)
{
	struct gdrb_mpi_p2p *m = c->priv;
	struct pipe_dir o, i;
	int rc;

	pipe_dir_init(&o, &c->out_ring, &c->send, m->out_req, size, c->stride, out ? count : 0);
	pipe_dir_init(&i, &c->in_ring, &c->recv, m->in_req, size, c->stride, in ? count : 0);
	/* Receives first: the peer's first fragment finds its buffer posted. */
	while (o.landed < o.fr.total || i.freed < i.fr.total) {
		rc = i.freed < i.fr.total ? pipe_in_step(c, &i) : 0;
		if (rc >= 0 && o.landed < o.fr.total) {
			int r2 = pipe_out_step(c, &o);

			rc = r2 < 0 ? r2 : rc + r2;
		}
		if (rc < 0)
			return GDRB_ERR;
		if (rc)
			gdrb_watchdog_kick();
	}
	return 0;
}
