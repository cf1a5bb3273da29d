/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the MPI point-to-point benchmarks share: the direct path's support
 * (device pointers only to a CUDA-aware MPI) and sends and receives of any
 * size_t length (split into chunks of at most 1 GiB, since MPI counts are int).
 */
#ifndef GDRB_MPI_P2P_H
#define GDRB_MPI_P2P_H

#include <stdbool.h>
#include <stddef.h>

#include <mpi.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"

#define GDRB_MPI_CHUNK ((size_t)1 << 30)

/* The requests a message of len bytes takes (a zero-byte message one). */
static inline size_t gdrb_mpi_chunks(size_t len)
{
	return len ? (len + GDRB_MPI_CHUNK - 1) / GDRB_MPI_CHUNK : 1;
}
#define GDRB_TAG_DATA 1
#define GDRB_TAG_ACK 2

struct gdrb_mpi_p2p {
	MPI_Request *reqs;
	int *done;              /* MPI_Waitsome's indices */
	int nreqs, cap;
	/* Pipelined staging: the request of each ring slot, per direction. */
	MPI_Request out_req[GDRB_STAGE_SLOTS], in_req[GDRB_STAGE_SLOTS];
};

/* The MPI params of a run (the group's defaults where the binary does not take --mpi-cuda). */
static inline const struct gdrb_mpi_params *gdrb_mpi_params(const struct gdrb_ctx *c)
{
	return (const struct gdrb_mpi_params *)gdrb_group_params(c->p, &gdrb_mpi_opts);
}

/* The CSV reg of the direct path over MPI on GPU memory: device pointers handed to MPI. */
#define GDRB_MPI_GPU_REG "mpi-cuda"

/*
 * The direct path over MPI: host memory always; device memory only when MPI is
 * CUDA-aware, as it says or --mpi-cuda decides (gdrb_mpi_lib()), otherwise
 * the variant is marked unsupported with the reason.
 */
int gdrb_mpi_check_direct(struct gdrb_ctx *c);

/*
 * The `end` callback of every MPI benchmark (after each size on each path, untimed):
 * every rank reads back UCX's protocol tables (gdrb_boot_mpi_ucx) and rank 0 fills
 * the rows' transport ("cuda_ipc", "rdma-zcopy", "host-pipeline", "shm", ... or
 * "unknown"), library and note (why unknown; a GPU row staged by UCX through host
 * memory; the CUDA-awareness evidence on GPU rows).
 */
int gdrb_mpi_transport_end(struct gdrb_ctx *c, size_t size);

/* setup/teardown callbacks for every MPI point-to-point descriptor. */
int gdrb_mpi_p2p_setup(struct gdrb_ctx *c);
void gdrb_mpi_p2p_teardown(struct gdrb_ctx *c);

/*
 * Post len bytes to or from peer as requests of at most GDRB_MPI_CHUNK bytes
 * into reqs[*n] onwards (*n counts them, cap is the array's size); a full
 * array or a failed post is said once. gdrb_mpi_isend/irecv post into the
 * benchmark's array; other transports keep their own.
 */
int gdrb_mpi_post(MPI_Request *reqs, int cap, int *n, void *buf, size_t len, int peer, int tag,
		  bool send);
int gdrb_mpi_send(const void *buf, size_t len, int peer, int tag);
int gdrb_mpi_recv(void *buf, size_t len, int peer, int tag);

/* Non-blocking: requests are appended to the context's list. */
int gdrb_mpi_isend(struct gdrb_ctx *c, const void *buf, size_t len, int tag);
int gdrb_mpi_irecv(struct gdrb_ctx *c, void *buf, size_t len, int tag);
/* Wait for every request in the list and empty it. */
int gdrb_mpi_waitall(struct gdrb_ctx *c);

/*
 * A window of c->window messages of size bytes, message k at gdrb_msg_off(c, k) of the wire
 * buffers, tag GDRB_TAG_DATA: each staged out (where the path stages) and posted as a send; each
 * posted as a receive; and, once received (gdrb_mpi_waitall), each staged in.
 */
int gdrb_mpi_isend_window(struct gdrb_ctx *c, size_t size);
int gdrb_mpi_irecv_window(struct gdrb_ctx *c, size_t size);
int gdrb_mpi_stage_in_window(struct gdrb_ctx *c, size_t size);

/*
 * Pipelined staging of a window of `count` messages of `size` bytes (message
 * k at k * size of the device buffers): with `out`, send c->send through
 * c->out_ring; with `in`, receive into c->recv through c->in_ring; both at
 * once for bidirectional traffic. Fragments of the ring's chunk go as
 * separate messages of tag GDRB_TAG_DATA, in order. Returns when every
 * fragment has been sent and every received one copied to the device.
 */
int gdrb_mpi_pipe(struct gdrb_ctx *c, size_t size, unsigned count, bool out, bool in);

#endif
