/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs layer of the RDMA benchmarks.
 *
 * Choices that need no RDMA device (verbs_util.c, always built, unit-tested
 * on fixture sysfs trees): which port to use, which GID, how a message is
 * split into work requests, whether scatter-to-CQE is turned off.
 *
 * The point-to-point machinery (built with libibverbs): one context owning
 * device, protection domain, completion queues, RC QPs and memory regions,
 * and the out-of-band exchange through the bootstrap (never payload)
 * (verbs_setup.c); posting split work requests and completion polling that
 * kicks the watchdog only on progress (verbs_post.c, which all pairs uses
 * too); and the setup, describe, iteration and teardown callbacks the
 * descriptors in bench/ are made of (verbs_setup.c, verbs_p2p.c). With
 * device memory the staged path is pipelined (verbs_pipe.c): fragments
 * through the rings of pinned slots, each with a completion of its own, freed
 * slots returned as credits on the control QP; --staging serial keeps
 * whole-message bounce buffers.
 */
#ifndef GDRB_VERBS_H
#define GDRB_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrb_driver.h"
#include "gdrb_topo.h"

/* How the receiver of an RDMA write latency test learns that a message arrived. */
enum gdrb_completion {
	GDRB_COMPLETION_AUTO,       /* poll for host and pinned memory, immediate for device memory */
	GDRB_COMPLETION_POLL,       /* spin on the last byte of the receive buffer */
	GDRB_COMPLETION_IMM,        /* an RDMA write with immediate and a receive completion */
	GDRB_COMPLETION_COUNT
};

extern const char *const gdrb_completion_names[GDRB_COMPLETION_COUNT];

/* How a verbs rank waits for completions. */
enum gdrb_wait {
	GDRB_WAIT_AUTO,             /* event for the target of one-way write and read bandwidth, else spin */
	GDRB_WAIT_SPIN,             /* poll the completion queues */
	GDRB_WAIT_EVENT,            /* sleep on a completion channel (ibv_get_cq_event) */
	GDRB_WAIT_COUNT
};

extern const char *const gdrb_wait_names[GDRB_WAIT_COUNT];

#define GDRB_DEF_TX_DEPTH 128
#define GDRB_DEF_QPS 1
#define GDRB_MAX_QPS 64

/* The verbs options (verbs_opts.c): --ib-dev, --gid-index, --mtu, --qps, --reg, ... */
struct gdrb_verbs_params {
	char ib_dev[64];            /* "": the active port nearest this rank's GPU */
	unsigned ib_port;           /* 0: the device's first active port */
	int gid_index;              /* -1: a RoCE v2 GID chosen automatically */
	int mtu;                    /* bytes; 0: the port's active MTU */
	unsigned tx_depth;          /* send queue depth per QP */
	unsigned qps;               /* data QPs per pair */
	unsigned sl, tclass;
	int reg_mode;               /* enum gdrb_reg_mode */
	bool relaxed_ordering;
	int completion;             /* enum gdrb_completion */
	int wait;                   /* enum gdrb_wait */
};

/* Which of the verbs options a binary offers (struct gdrb_opt_use.select). */
enum {
	GDRB_VERBS_OPTS = 1u << 0,              /* every benchmark on verbs */
	GDRB_VERBS_OPT_COMPLETION = 1u << 1,    /* --completion (RDMA write latency) */
	GDRB_VERBS_OPT_P2P = 1u << 2,           /* --qps, --wait, --event: the point-to-point benchmarks */
};

extern const struct gdrb_opt_group gdrb_verbs_opts;

/* The verbs params of a run (the group's defaults where the binary does not take it). */
static inline const struct gdrb_verbs_params *gdrb_verbs_params(const struct gdrb_ctx *c)
{
	return (const struct gdrb_verbs_params *)gdrb_group_params(c->p, &gdrb_verbs_opts);
}

/* The largest work request a message is split into (ibv_sge.length is 32 bits). */
#define GDRB_VERBS_MAX_CHUNK ((size_t)1 << 31)

/* Work requests for a message of len bytes with at most max bytes each (a 0-byte message: 1). */
size_t gdrb_wr_count(size_t len, size_t max);
/* Offset and length of work request i of that message. */
void gdrb_wr_chunk(size_t len, size_t max, size_t i, size_t *off, size_t *chunk);

/*
 * Queue depths and completion-queue entries of a run, within the device's
 * limits (ibv_query_device): a CQ larger than max_cqe or a queue deeper than
 * max_qp_wr fails with EINVAL.
 */
struct gdrb_queue_plan {
	unsigned tx_depth;              /* send work requests per QP */
	unsigned rx_depth;              /* receive work requests per data QP */
	unsigned send_cqe;              /* (nqps + 1) x tx_depth: the data QPs and the control QP */
	unsigned recv_cqe;              /* nqps x rx_depth */
};

/*
 * Size the queues for tx_want send and rx_want receive work requests per QP,
 * each cut to max_qp_wr and to what max_cqe holds for every QP sharing the
 * CQ. 0; GDRB_ERR_UNSUPP when a CQ cannot give each of its QPs one entry.
 */
int gdrb_queue_plan(unsigned nqps, size_t tx_want, size_t rx_want, int max_qp_wr, int max_cqe,
		    struct gdrb_queue_plan *out);

/*
 * The most messages of wrs receive work requests each that a window may post
 * round-robin over nqps QPs with room receives each: 0 when not one fits.
 */
unsigned gdrb_window_fit(size_t wrs, unsigned nqps, size_t room);

/* The port a rank uses and why. */
struct gdrb_port_choice {
	int nic;                        /* index in topo->nics */
	unsigned port;                  /* port number */
	enum gdrb_topo_dist dist;       /* to this rank's GPU; UNKNOWN without one */
	bool nearest;                   /* chosen by PCI distance to the GPU */
};

/*
 * Choose the port: the named device (and port, or its first active one), or
 * the active port nearest GPU gpu (index in topo->gpus; -1: none), else the
 * first active port. 0; GDRB_ERR_USAGE when the named device or port does
 * not exist or is not active; GDRB_ERR_UNSUPP when there is no RDMA device or
 * no active port. *why names the choices that exist.
 */
int gdrb_verbs_choose_port(const struct gdrb_topo *topo, const char *dev, unsigned port, int gpu,
			   struct gdrb_port_choice *out, char *why, size_t len);

#define GDRB_GID_MAX 256

struct gdrb_gid_entry {
	int index;
	char gid[48];                   /* "0000:0000:0000:0000:0000:ffff:0a00:020f" */
	char type[16];                  /* "RoCE v2", "IB/RoCE v1" */
};

/* The set GIDs of a port, from <sysfs_root>/class/infiniband/DEV/ports/N/gids. */
int gdrb_gid_list(const char *sysfs_root, const char *dev, unsigned port,
		  struct gdrb_gid_entry *gids, size_t max, size_t *n);

/*
 * One GID as sysfs shows it, from what ibv_query_gid_table gives: the 16 bytes
 * as eight groups of four hex digits, and the type ("RoCE v2" for RoCE v2, else
 * "IB/RoCE v1"). False for a GID of zeros (not set).
 */
bool gdrb_gid_entry_set(struct gdrb_gid_entry *e, int index, const unsigned char raw[16], bool roce_v2);

/* Sort n entries by index, as the sysfs listing is. */
void gdrb_gid_sort(struct gdrb_gid_entry *gids, size_t n);

/*
 * The GID index to use: want (>= 0) if it is set, else RoCE v2 with an
 * IPv4-mapped address, then any other RoCE v2, then the first GID. 0;
 * GDRB_ERR_USAGE when want is not a set GID (*why lists those that are);
 * GDRB_ERR_UNSUPP when the port has no GID at all.
 */
int gdrb_gid_choose(const struct gdrb_gid_entry *gids, size_t n, int want, int *index,
		    char *why, size_t len);

/*
 * Scatter-to-CQE: mlx5 places a received message of up to 32 B (64 B with
 * 128-byte CQEs) in the completion entry, and libmlx5 then copies it to the
 * receive buffer with the CPU, which faults on GPU memory. libmlx5 turns it
 * off for every QP created while MLX5_SCATTER_TO_CQE is exactly "0"; other
 * providers ignore the variable.
 */
enum gdrb_scatter_cqe {
	GDRB_SCQE_LEFT,         /* host receive buffers: the environment is left alone */
	GDRB_SCQE_SET_OFF,      /* device receive buffers: MLX5_SCATTER_TO_CQE=0 is set */
	GDRB_SCQE_USER_OFF,     /* device receive buffers: the user already set it to 0 */
	GDRB_SCQE_USER_ON,      /* device receive buffers: the user's other value is kept */
};

/*
 * The choice for buffers in device memory or not, with MLX5_SCATTER_TO_CQE as
 * found (NULL: unset); line gets the header's "scatter-to-CQE: ..." ("" when left).
 */
enum gdrb_scatter_cqe gdrb_scatter_cqe_choose(bool device, const char *env, char *line,
					      size_t len);

/*
 * Choose from this process's environment and act: set MLX5_SCATTER_TO_CQE=0,
 * or warn that the user's value leaves it on. Call it before the device is
 * opened, so that no QP of the context is created without it. *choice (NULL:
 * not wanted) and line as gdrb_scatter_cqe_choose; 0, or GDRB_ERR when
 * setenv fails.
 */
int gdrb_scatter_cqe_apply(bool device, enum gdrb_scatter_cqe *choice, char *line, size_t len);

/* --- bench callbacks (verbs_setup.c, verbs_p2p.c) --- */

enum gdrb_verbs_op { GDRB_VERBS_WRITE, GDRB_VERBS_READ, GDRB_VERBS_SEND };

int gdrb_verbs_setup_write(struct gdrb_ctx *c);
int gdrb_verbs_setup_read(struct gdrb_ctx *c);
int gdrb_verbs_setup_send(struct gdrb_ctx *c);
void gdrb_verbs_teardown(struct gdrb_ctx *c);
void gdrb_verbs_describe(const struct gdrb_ctx *c, char *buf, size_t len);

/*
 * Ping-pong: a send, or an RDMA write the receiver learns of by polling the
 * last byte of a host receive buffer (--completion poll) or by a write with
 * immediate's receive completion (imm; device memory); answered the same way.
 * Pipelined staging: the message in fragments, each its own send or write
 * with immediate; the answer leaves once the question is in device memory.
 */
int gdrb_verbs_pingpong(struct gdrb_ctx *c, size_t size);
/* Write latency's begin and prepare callbacks: arm the polled byte. */
int gdrb_verbs_write_lat_begin(struct gdrb_ctx *c, size_t size);
int gdrb_verbs_write_lat_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter);
/*
 * A window (1 for read latency) from the initiator to the responder, or both
 * ways with -b, then an acknowledgement; reads fetch the peer's buffer.
 * Pipelined staging: the window in fragments through the rings (verbs_pipe.c).
 */
int gdrb_verbs_stream(struct gdrb_ctx *c, size_t size);

/* Validation of reads: the data flows from the responder to the initiator. */
int gdrb_verbs_read_prepare(struct gdrb_ctx *c, size_t size, uint64_t iter);
uint64_t gdrb_verbs_read_check(struct gdrb_ctx *c, size_t size, uint64_t iter);

/*
 * All pairs over RDMA writes (verbs_pairs.c): the callbacks of a struct
 * gdrb_pairs_ops (bench/gdrb_write_pairs.c), one RC QP per peer met.
 */
struct gdrb_pairs_setup;
struct gdrb_pairs_window;
struct gdrb_pairs_done;

int gdrb_verbs_pairs_setup(const struct gdrb_params *p, struct gdrb_boot *b, struct gdrb_pairs_setup *s,
			   void **priv);
void gdrb_verbs_pairs_describe(void *priv, char *buf, size_t len);
int gdrb_verbs_pairs_begin(void *priv, int to, int from, size_t size);
int gdrb_verbs_pairs_post(void *priv, const struct gdrb_pairs_window *w);
int gdrb_verbs_pairs_exchange(void *priv, const struct gdrb_pairs_window *w, struct gdrb_pairs_done *done);
int gdrb_verbs_pairs_send(void *priv, int peer, const void *buf, size_t len);
int gdrb_verbs_pairs_recv(void *priv, int peer, void *buf, size_t len);
void gdrb_verbs_pairs_teardown(void *priv);

#endif
