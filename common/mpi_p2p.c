/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"

static int chunk_len(size_t left)
{
	return (int)(left < GDRB_MPI_CHUNK ? left : GDRB_MPI_CHUNK);
}

static size_t chunks_of(size_t len)
{
	return len ? (len + GDRB_MPI_CHUNK - 1) / GDRB_MPI_CHUNK : 1;
}

int gdrb_mpi_p2p_setup(struct gdrb_ctx *c)
{
	struct gdrb_mpi_p2p *m;
	size_t max = 0, i;

	for (i = 0; i < c->p->sizes.n; i++)
		if (chunks_of(c->p->sizes.v[i]) > max)
			max = chunks_of(c->p->sizes.v[i]);
	m = calloc(1, sizeof(*m));
	if (!m)
		return GDRB_ERR;
	/* A window of sends and one of receives, each message possibly chunked. */
	m->cap = (int)(2 * (c->p->window + max) + 2);
	m->reqs = calloc((size_t)m->cap, sizeof(*m->reqs));
	if (!m->reqs) {
		free(m);
		return GDRB_ERR;
	}
	c->priv = m;
	return gdrb_mpi_check_direct(c);
}

int gdrb_mpi_check_direct(struct gdrb_ctx *c)
{
	struct gdrb_variant *direct = &c->variants[0];
	const struct gdrb_boot *b = c->boot;

	if (c->p->mem != GDRB_MEM_DEVICE) {
		direct->how = "MPI reads and writes the host buffers";
		return 0;
	}
	direct->reg = "mpi-cuda";
	if (b->cuda_aware && !b->cuda_detected) {
		direct->how = "device pointers handed to MPI, which --mpi-cuda yes says is CUDA-aware";
		if (b->rank == 0)
			gdrb_warn("--mpi-cuda yes: device pointers go to %s, which does not say it is CUDA-aware (%s); if it is not, it crashes",
				  b->library, b->cuda_aware_why);
		return 0;
	}
	direct->how = "device pointers handed to the CUDA-aware MPI";
	if (b->cuda_aware)
		return 0;
	direct->supported = false;
	if (c->p->mpi_cuda == GDRB_MPI_CUDA_NO)
		snprintf(direct->why, sizeof(direct->why),
			 "--mpi-cuda no: device pointers are never handed to %.127s (%.255s)",
			 b->library, b->cuda_aware_why);
	else
		snprintf(direct->why, sizeof(direct->why),
			 "%.127s is not CUDA-aware (%.255s), so device pointers are never handed to it; use an MPI built with CUDA support (Open MPI --with-cuda or UCX with CUDA), or --mpi-cuda yes if this one is",
			 b->library, b->cuda_aware_why);
	return 0;
}

void gdrb_mpi_p2p_teardown(struct gdrb_ctx *c)
{
	struct gdrb_mpi_p2p *m = c->priv;

	if (!m)
		return;
	free(m->reqs);
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

static MPI_Request *next_req(struct gdrb_mpi_p2p *m)
{
	if (m->nreqs == m->cap) {
		gdrb_err("internal: more than %d MPI requests in flight", m->cap);
		return NULL;
	}
	return &m->reqs[m->nreqs++];
}

int gdrb_mpi_isend(struct gdrb_ctx *c, const void *buf, size_t len, int tag)
{
	struct gdrb_mpi_p2p *m = c->priv;
	const char *p = buf;

	do {
		MPI_Request *req = next_req(m);
		int n = chunk_len(len);

		if (!req || MPI_Isend(p, n, MPI_BYTE, c->peer, tag, MPI_COMM_WORLD, req) != MPI_SUCCESS)
			return GDRB_ERR;
		p += n;
		len -= (size_t)n;
	} while (len);
	return 0;
}

int gdrb_mpi_irecv(struct gdrb_ctx *c, void *buf, size_t len, int tag)
{
	struct gdrb_mpi_p2p *m = c->priv;
	char *p = buf;

	do {
		MPI_Request *req = next_req(m);
		int n = chunk_len(len);

		if (!req || MPI_Irecv(p, n, MPI_BYTE, c->peer, tag, MPI_COMM_WORLD, req) != MPI_SUCCESS)
			return GDRB_ERR;
		p += n;
		len -= (size_t)n;
	} while (len);
	return 0;
}

int gdrb_mpi_waitall(struct gdrb_ctx *c)
{
	struct gdrb_mpi_p2p *m = c->priv;
	int rc = MPI_Waitall(m->nreqs, m->reqs, MPI_STATUSES_IGNORE);

	m->nreqs = 0;
	return rc == MPI_SUCCESS ? 0 : GDRB_ERR;
}
