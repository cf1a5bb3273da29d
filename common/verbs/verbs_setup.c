/* SPDX-License-Identifier: BSD-3-Clause */
/* RC verbs point-to-point: device and port choice, registration, the out-of-band exchange, QP connection. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_memlock.h"
#include "gdrb_node.h"
#include "gdrb_reg.h"
#include "gdrb_size.h"
#include "gdrb_verbs.h"
#include "gdrb_watchdog.h"

#include "verbs_int.h"
#include "verbs_post.h"
#include "verbs_setup.h"

/* --- setup ------------------------------------------------------------------ */

/* This rank's GPU in the sysfs topology: the one CUDA opened (bus_id), else local rank modulo GPUs. */
static int topo_gpu(const char *bus_id, int local_rank, const struct gdrb_topo *t)
{
	char bdf[GDRB_BDF_LEN];
	size_t i;

	if (!t->ngpus)
		return -1;
	if (bus_id && gdrb_pci_bdf_of_bus_id(bus_id, bdf) == 0)
		for (i = 0; i < t->ngpus; i++)
			if (!strcmp(t->gpus[i].pci.bdf, bdf))
				return (int)i;
	return local_rank % (int)t->ngpus;
}

/* Why open_device found no context: no device list, the name not in it, or the open failed (errno). */
enum open_miss { OPEN_OK, OPEN_NO_LIST, OPEN_NOT_LISTED, OPEN_FAILED };

/* The device libibverbs lists as `name`, opened; NULL with *miss saying why (and errno the
 * open's where it failed). Says nothing. */
static struct ibv_context *open_device(const char *name, enum open_miss *miss)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n = 0, err = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		*miss = OPEN_NO_LIST;
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i < n && !(ctx = ibv_open_device(list[i])))
		err = errno;
	*miss = i == n ? OPEN_NOT_LISTED : ctx ? OPEN_OK : OPEN_FAILED;
	ibv_free_device_list(list);
	errno = err;
	return ctx;
}

/*
 * The set GIDs of a port in one call (ibv_query_gid_table, rdma-core 32 and
 * later) on a context of its own, closed again: sysfs holds one file a GID,
 * read one by one (rxe's 1,024: about 1 s a rank in an emulated VM). 0, or
 * GDRB_ERR_UNSUPP where it cannot be had here; nothing is said (the caller
 * reads sysfs, and the device's own errors are said when it is opened).
 */
static int gid_table(const char *dev, unsigned port, struct gdrb_gid_entry *gids, size_t max, size_t *n)
{
#if HAVE_DECL_IBV_QUERY_GID_TABLE
	struct ibv_gid_entry table[GDRB_GID_MAX];
	enum open_miss miss;
	struct ibv_context *ctx = open_device(dev, &miss);
	ssize_t got, i;

	*n = 0;
	if (!ctx)
		return GDRB_ERR_UNSUPP;
	got = ibv_query_gid_table(ctx, table, GDRB_GID_MAX, 0);
	ibv_close_device(ctx);
	if (got < 0)
		return GDRB_ERR_UNSUPP;
	for (i = 0; i < got && *n < max; i++)
		if (table[i].port_num == port &&
		    gdrb_gid_entry_set(&gids[*n], (int)table[i].gid_index, table[i].gid.raw,
				       table[i].gid_type == IBV_GID_TYPE_ROCE_V2))
			(*n)++;
	gdrb_gid_sort(gids, *n);
	return 0;
#else
	(void)dev, (void)port, (void)gids, (void)max;
	*n = 0;
	return GDRB_ERR_UNSUPP;
#endif
}

int gdrb_verbs_choose(const struct gdrb_verbs_params *vp, const char *gpu_bus_id, int local_rank,
		      struct gdrb_verbs *v)
{
	struct gdrb_gid_entry gids[GDRB_GID_MAX];
	struct gdrb_port_choice pc;
	struct gdrb_topo topo;
	char why[1024];
	size_t ngids = 0, i;
	int rc;

	if (gdrb_topo_load_parts("/sys", 0, &topo))
		memset(&topo, 0, sizeof(topo));
	rc = gdrb_verbs_choose_port(&topo, vp->ib_dev[0] ? vp->ib_dev : NULL, vp->ib_port,
				    topo_gpu(gpu_bus_id, local_rank, &topo), &pc, why, sizeof(why));
	if (rc) {
		gdrb_usage_err("%s", why);
		gdrb_topo_free(&topo);
		return rc;
	}
	snprintf(v->dev, sizeof(v->dev), "%s", topo.nics[pc.nic].name);
	v->port = pc.port;
	v->dist = pc.dist;
	v->nearest = pc.nearest;
	for (i = 0; i < topo.nics[pc.nic].nports; i++)
		if (topo.nics[pc.nic].ports[i].num == pc.port) {
			snprintf(v->rate, sizeof(v->rate), "%s", topo.nics[pc.nic].ports[i].rate);
			v->ethernet = !strcmp(topo.nics[pc.nic].ports[i].link_layer, "Ethernet");
		}
	snprintf(v->nic, sizeof(v->nic), "%s:%u", v->dev, v->port);
	gdrb_topo_free(&topo);

	v->gid_index = -1;
	if (!v->ethernet && vp->gid_index < 0)
		return 0;       /* InfiniBand: LID routing, no GRH */
	if (gid_table(v->dev, v->port, gids, GDRB_GID_MAX, &ngids))
		gdrb_gid_list("/sys", v->dev, v->port, gids, GDRB_GID_MAX, &ngids);
	rc = gdrb_gid_choose(gids, ngids, vp->gid_index, &v->gid_index, why, sizeof(why));
	if (rc) {
		gdrb_usage_err("%s: %s", v->nic, why);
		return rc;
	}
	for (i = 0; i < ngids; i++)
		if (gids[i].index == v->gid_index) {
			snprintf(v->gid_text, sizeof(v->gid_text), "%s", gids[i].gid);
			snprintf(v->gid_type, sizeof(v->gid_type), "%s", gids[i].type);
		}
	return 0;
}

static struct ibv_context *open_named(const char *name)
{
	enum open_miss miss;
	struct ibv_context *ctx = open_device(name, &miss);
	int err = errno;

	if (miss == OPEN_NO_LIST)
		gdrb_usage_err("no RDMA device found; run gdrb_doctor");
	else if (miss == OPEN_NOT_LISTED)
		gdrb_err("libibverbs does not list %s (no user-space provider?); run gdrb_doctor", name);
	else if (miss == OPEN_FAILED)
		gdrb_err("ibv_open_device(%s): %s", name, strerror(err));
	return ctx;
}

/*
 * "; need ...; RLIMIT_MEMLOCK ..." when the locked-memory limit may explain a
 * registration that failed with errno err (see gdrb_memlock_note); else "".
 */
static void memlock_note(const struct gdrb_params *p, bool windowed, int err, char *buf, size_t len)
{
	struct gdrb_memlock_need need;
	struct gdrb_node node;

	buf[0] = '\0';
	gdrb_node_memlock_self(&node);
	if (!node.memlock_known)
		return;
	/* The driver sized the buffers from the same figures (gdrb_buf_bytes). */
	gdrb_memlock_need(&p->sizes, p->window, p->window_bytes, windowed, p->mem, &need);
	gdrb_memlock_note(&need, err, node.memlock_unlimited, node.memlock_bytes,
			  node.cap_ipc_lock, buf, len);
}

int gdrb_verbs_reg_host(const struct gdrb_params *p, bool windowed, struct gdrb_verbs *v, int which,
			const struct gdrb_buf *buf, int access)
{
	char note[640];
	int err;

	if (!buf->ptr)
		return 0;
	v->mr[which] = ibv_reg_mr(v->pd, buf->ptr, buf->len, access);
	if (!v->mr[which]) {
		err = errno;
		memlock_note(p, windowed, err, note, sizeof(note));
		gdrb_err("ibv_reg_mr of %zu bytes: %s%s", buf->len, strerror(err), note);
		return GDRB_ERR;
	}
	v->lkey[which] = v->mr[which]->lkey;
	v->me.addr[which] = (uintptr_t)buf->ptr;
	v->me.rkey[which] = v->mr[which]->rkey;
	return 0;
}

int gdrb_verbs_reg_device(const struct gdrb_params *p, bool windowed, int reg_mode, struct gdrb_verbs *v,
			  const struct gdrb_buf *send, const struct gdrb_buf *recv, char *why, size_t len)
{
	const struct gdrb_buf *bufs[2] = { send, recv };
	char tried[800], note[640];
	int i, k, err;

	for (i = 0; i < 2; i++) {
		if (gdrb_reg_gpu(v->pd, bufs[i]->ptr, bufs[i]->len, v->access, (enum gdrb_reg_mode)reg_mode,
				 &v->gpu_mr[i]) == 0) {
			v->lkey[i] = v->gpu_mr[i].mr->lkey;
			v->me.addr[i] = (uintptr_t)bufs[i]->ptr;
			v->me.rkey[i] = v->gpu_mr[i].mr->rkey;
			continue;
		}
		gdrb_reg_summary(&v->gpu_mr[i], tried, sizeof(tried));
		/* An attempt that ran out of memory, else the first errno: the limit may be why. */
		for (err = 0, k = 0; k < v->gpu_mr[i].ntried; k++) {
			int e = v->gpu_mr[i].tried[k].err;

			if (e == ENOMEM || e == EAGAIN) {
				err = e;
				break;
			}
			if (!err)
				err = e;
		}
		memlock_note(p, windowed, err, note, sizeof(note));
		if (note[0])
			snprintf(why, len, "GPU memory registration failed (%.200s)%.400s", tried, note);
		else
			snprintf(why, len,
				 "GPU memory registration failed (%.380s); fix: load nvidia_peermem, or use a driver and kernel with dma-buf (open kernel modules, Linux >= 5.12), check 'ulimit -l'; gdrb_doctor checks each precondition",
				 tried);
		return GDRB_ERR_UNSUPP;
	}
	return 0;
}

const char *gdrb_verbs_gdr_how(enum gdrb_reg_mode used)
{
	return used == GDRB_REG_DMABUF ?
	       "GPUDirect RDMA: the NIC reads and writes GPU memory registered through dma-buf" :
	       "GPUDirect RDMA: the NIC reads and writes GPU memory registered through peer memory (nvidia_peermem)";
}

/* Device memory: GPUDirect registration; when it fails the direct path is n/a, staged runs. */
static int reg_device(struct gdrb_ctx *c, struct gdrb_verbs *v)
{
	struct gdrb_variant *direct = &c->variants[0];

	if (gdrb_verbs_reg_device(c->p, gdrb_windowed(c->bench, c->p), gdrb_verbs_params(c)->reg_mode, v,
				  &c->send, &c->recv, direct->why, sizeof(direct->why))) {
		direct->supported = false;
		direct->reg = "none";
		return 0;
	}
	direct->reg = gdrb_reg_mode_name(v->gpu_mr[0].used);
	direct->how = gdrb_verbs_gdr_how(v->gpu_mr[0].used);
	return 0;
}

struct ibv_qp *gdrb_verbs_create_qp(struct gdrb_verbs *v, struct ibv_cq *rcq, unsigned rx)
{
	struct ibv_qp_init_attr a = {
		.send_cq = v->send_cq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = v->tx_depth, .max_recv_wr = rx, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = INLINE_WANTED },
	};
	struct ibv_qp *qp = ibv_create_qp(v->pd, &a);

	if (!qp) {
		a.cap.max_inline_data = 0;
		qp = ibv_create_qp(v->pd, &a);
	}
	if (!qp) {
		gdrb_err("ibv_create_qp (RC, %u send, %u receive work requests): %s; lower --tx-depth or --window",
			 v->tx_depth, rx, strerror(errno));
		return NULL;
	}
	v->max_inline = a.cap.max_inline_data;
	return qp;
}

/* a x b, or SIZE_MAX where it overflows. */
static size_t mul_sat(size_t a, size_t b)
{
	return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

/*
 * Receives a data QP needs at once: a send window's pieces at each size
 * (round-robin over the QPs, the window the driver will run), or a ring's
 * slots; plus RX_EXTRA. Writes keep WRITE_CREDITS posted for immediates.
 */
static size_t rx_wanted(const struct gdrb_ctx *c, const struct gdrb_verbs *v)
{
	size_t want = 0, n, i;

	if (v->op != GDRB_VERBS_SEND)
		return WRITE_CREDITS;
	for (i = 0; i < c->p->sizes.n; i++) {
		size_t size = c->p->sizes.v[i];
		unsigned w = gdrb_window_in_force(c, size);

		n = mul_sat((w + v->nqps - 1) / v->nqps, gdrb_wr_count(size, v->max_chunk));
		want = n > want ? n : want;
	}
	/* Pipelined staging keeps the receives of at most a ring's slots posted. */
	n = gdrb_ring_ready(&c->in_ring) ? (size_t)c->in_ring.slots * gdrb_wr_count(c->in_ring.chunk, v->max_chunk) : 0;
	want = n > want ? n : want;
	return want > SIZE_MAX - RX_EXTRA ? SIZE_MAX : want + RX_EXTRA;
}

/* The send ping-pong's receive posted ahead, a path switch's, and slack. */
static unsigned rx_room(const struct gdrb_verbs *v)
{
	return v->rx_depth > RX_EXTRA ? v->rx_depth - RX_EXTRA : 0;
}

/* Sends: the window that fits the receive queues at a size (gdrb_ctx.window_cap). */
static unsigned window_cap(const struct gdrb_ctx *c, size_t size, char *why, size_t len)
{
	const struct gdrb_verbs *v = c->priv;
	size_t wrs = gdrb_wr_count(size, v->max_chunk);

	snprintf(why, len, "%zu receive(s) per message, room for %u per QP on %s (max_qp_wr %d, max_cqe %d)",
		 wrs, rx_room(v), v->nic, v->max_qp_wr, v->max_cqe);
	return gdrb_window_fit(wrs, v->nqps, rx_room(v));
}

/*
 * Queue depths and CQ entries from what will be in flight, within the
 * device's max_qp_wr and max_cqe; a send window that does not fit is cut
 * per size by window_cap. A message that fits no queue is refused.
 */
static int plan_queues(struct gdrb_ctx *c, struct gdrb_verbs *v)
{
	struct gdrb_queue_plan q;
	char sz[32], chunk[32];
	size_t i, ring;

	if (gdrb_queue_plan(v->nqps, gdrb_verbs_params(c)->tx_depth, rx_wanted(c, v), v->max_qp_wr,
			    v->max_cqe, &q)) {
		gdrb_usage_err("--qps %u: %s allows %d entries per completion queue, too few for %u QPs and the control QP",
			       v->nqps, v->nic, v->max_cqe, v->nqps);
		return GDRB_ERR_USAGE;
	}
	v->tx_depth = q.tx_depth;
	v->rx_depth = q.rx_depth;
	v->send_cqe = q.send_cqe;
	v->recv_cqe = q.recv_cqe;
	if (v->op != GDRB_VERBS_SEND)
		return 0;
	for (i = 0; i < c->p->sizes.n; i++)
		if (!gdrb_window_fit(gdrb_wr_count(c->p->sizes.v[i], v->max_chunk), 1, rx_room(v))) {
			gdrb_usage_err("-m %s: a message takes %zu receives of at most %s; a QP of %s holds %u: use smaller sizes",
				       gdrb_size_format(c->p->sizes.v[i], sz, sizeof(sz)),
				       gdrb_wr_count(c->p->sizes.v[i], v->max_chunk),
				       gdrb_size_format(v->max_chunk, chunk, sizeof(chunk)), v->nic, rx_room(v));
			return GDRB_ERR_USAGE;
		}
	ring = gdrb_ring_ready(&c->in_ring) ? (size_t)c->in_ring.slots * gdrb_wr_count(c->in_ring.chunk, v->max_chunk) : 0;
	if (ring > v->rx_depth) {
		gdrb_usage_err("--stage-chunk %s: %u slots take %zu receives; a QP of %s holds %u: use a larger chunk",
			       gdrb_size_format(c->in_ring.chunk, sz, sizeof(sz)), c->in_ring.slots, ring,
			       v->nic, v->rx_depth);
		return GDRB_ERR_USAGE;
	}
	c->window_cap = window_cap;
	return 0;
}

/* The CQs that exist, in reverse order of creation; shared by create_verbs' unwinding and teardown. */
static void destroy_cqs(struct gdrb_verbs *v)
{
	if (v->ctrl_cq)
		ibv_destroy_cq(v->ctrl_cq);
	if (v->recv_cq)
		ibv_destroy_cq(v->recv_cq);
	if (v->send_cq)
		ibv_destroy_cq(v->send_cq);
	v->send_cq = v->recv_cq = v->ctrl_cq = NULL;
	if (v->channel)
		ibv_destroy_comp_channel(v->channel);
	v->channel = NULL;
}

/* The completion channel of a rank that sleeps; its fd non-blocking, so that draining it never blocks. */
static int open_channel(struct gdrb_verbs *v)
{
	int flags;

	v->channel = ibv_create_comp_channel(v->ctx);
	if (!v->channel) {
		gdrb_err("ibv_create_comp_channel(%s): %s; run with --wait spin", v->nic, strerror(errno));
		return GDRB_ERR;
	}
	flags = fcntl(v->channel->fd, F_GETFL);
	if (flags < 0 || fcntl(v->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		gdrb_err("fcntl(O_NONBLOCK) on the completion channel: %s", strerror(errno));
		return GDRB_ERR;
	}
	return 0;
}

int gdrb_verbs_query(const struct gdrb_verbs_params *vp, bool device_mem, struct gdrb_verbs *v)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int rc;

	/* Before the device is opened: libmlx5 reads it as each QP of the context is created. */
	if (gdrb_scatter_cqe_apply(device_mem, NULL, v->scatter_cqe, sizeof(v->scatter_cqe)))
		return GDRB_ERR;
	v->ctx = open_named(v->dev);
	if (!v->ctx)
		return GDRB_ERR;
	if ((rc = ibv_query_device(v->ctx, &da)) || (rc = ibv_query_port(v->ctx, (uint8_t)v->port, &pa))) {
		gdrb_err("ibv_query_device/ibv_query_port(%s): %s", v->nic, strerror(rc));
		goto err_ctx;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		gdrb_usage_err("%s: port is %s, not ACTIVE; run gdrb_doctor", v->nic,
			       ibv_port_state_str(pa.state));
		rc = GDRB_ERR_USAGE;
		goto err_ctx_rc;
	}
	v->ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	v->active_mtu = pa.active_mtu;
	v->me.lid = pa.lid;
	v->me.mtu = (uint32_t)(vp->mtu && mtu_enum(vp->mtu) < pa.active_mtu ? mtu_enum(vp->mtu) : pa.active_mtu);
	v->max_chunk = pa.max_msg_sz < GDRB_VERBS_MAX_CHUNK ? pa.max_msg_sz : GDRB_VERBS_MAX_CHUNK;
	/* A test hook: a smaller largest work request, to split small messages. */
	if (gdrb_inject()->verbs_max_msg && gdrb_inject()->verbs_max_msg < v->max_chunk)
		v->max_chunk = gdrb_inject()->verbs_max_msg;
	v->rd_atom = da.max_qp_rd_atom < 16 ? (da.max_qp_rd_atom ? da.max_qp_rd_atom : 1) : 16;
	v->max_qp_wr = da.max_qp_wr;
	v->max_cqe = da.max_cqe;
	if (v->gid_index >= 0) {
		union ibv_gid gid;

		if ((rc = ibv_query_gid(v->ctx, (uint8_t)v->port, v->gid_index, &gid))) {
			gdrb_err("ibv_query_gid(%s, %d): %s", v->nic, v->gid_index, strerror(rc));
			goto err_ctx;
		}
		memcpy(v->me.gid, gid.raw, sizeof(v->me.gid));
	}
	return 0;

err_ctx:
	rc = GDRB_ERR;
err_ctx_rc:
	ibv_close_device(v->ctx);
	v->ctx = NULL;
	return rc;
}

/*
 * Open the device and read what the run is planned from: the port's state and
 * attributes, the device's limits, the GID, then the queue plan. Nothing is
 * created but the device context, closed again on failure.
 */
static int query_verbs(struct gdrb_ctx *c, struct gdrb_verbs *v)
{
	int rc = gdrb_verbs_query(gdrb_verbs_params(c), gdrb_mem_kind(c->p->mem)->on_gpu, v);

	if (rc)
		return rc;
	if ((rc = plan_queues(c, v))) {
		ibv_close_device(v->ctx);
		v->ctx = NULL;
	}
	return rc;
}

/* Protection domain, completion channel, CQs and QPs on the open context; unwound on failure. */
static int create_verbs(struct gdrb_verbs *v)
{
	unsigned i;

	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd) {
		gdrb_err("ibv_alloc_pd(%s): %s", v->nic, strerror(errno));
		return GDRB_ERR;
	}
	if (v->sleeps && open_channel(v))
		goto err_cq;
	v->send_cq = ibv_create_cq(v->ctx, (int)v->send_cqe, NULL, v->channel, 0);
	v->recv_cq = ibv_create_cq(v->ctx, (int)v->recv_cqe, NULL, v->channel, 0);
	v->ctrl_cq = ibv_create_cq(v->ctx, CTRL_CREDITS, NULL, v->channel, 0);
	if (!v->send_cq || !v->recv_cq || !v->ctrl_cq) {
		gdrb_err("ibv_create_cq(%s, %u, %u and %d entries; the device allows %d): %s",
			 v->nic, v->send_cqe, v->recv_cqe, CTRL_CREDITS, v->max_cqe, strerror(errno));
		goto err_cq;
	}
	for (i = 0; i <= v->nqps; i++) {
		v->qp[i].qp = i < v->nqps ? gdrb_verbs_create_qp(v, v->recv_cq, v->rx_depth) :
					    gdrb_verbs_create_qp(v, v->ctrl_cq, CTRL_CREDITS);
		if (!v->qp[i].qp)
			goto err_qp;
		v->qp[i].tag = i;
		v->me.qpn[i] = v->qp[i].qp->qp_num;
		v->me.psn[i] = (uint32_t)lrand48() & 0xffffff;
	}
	v->me.nqps = v->nqps;
	return 0;

err_qp:
	while (i-- > 0)
		ibv_destroy_qp(v->qp[i].qp);
	memset(v->qp, 0, sizeof(v->qp));
err_cq:
	destroy_cqs(v);
	ibv_dealloc_pd(v->pd);
	v->pd = NULL;
	return GDRB_ERR;
}

/* The device queried, then its resources created; the context closed again if they cannot be. */
static int open_verbs(struct gdrb_ctx *c, struct gdrb_verbs *v)
{
	int rc = query_verbs(c, v);

	if (rc)
		return rc;
	if (create_verbs(v)) {
		ibv_close_device(v->ctx);
		v->ctx = NULL;
		return GDRB_ERR;
	}
	return 0;
}

void gdrb_verbs_set_access(const struct gdrb_verbs_params *vp, struct gdrb_verbs *v)
{
	v->access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
#if HAVE_DECL_IBV_ACCESS_RELAXED_ORDERING
	/* An optional flag: providers that cannot honour it ignore it. */
	if (vp->relaxed_ordering) {
		v->access |= IBV_ACCESS_RELAXED_ORDERING;
		v->relaxed = true;
	}
#else
	(void)vp;
#endif
}

static int reg_host(const struct gdrb_ctx *c, struct gdrb_verbs *v, int which, const struct gdrb_buf *buf,
		    int access)
{
	return gdrb_verbs_reg_host(c->p, gdrb_windowed(c->bench, c->p), v, which, buf, access);
}

static int register_buffers(struct gdrb_ctx *c, struct gdrb_verbs *v)
{
	const int plain = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	gdrb_verbs_set_access(gdrb_verbs_params(c), v);
	if (gdrb_mem_kind(c->p->mem)->on_gpu) {
		if (reg_device(c, v))
			return GDRB_ERR;
	} else if (reg_host(c, v, BUF_SEND, &c->send, v->access) ||
		   /* A polled byte must not land before the bytes ahead of it: no relaxed ordering. */
		   reg_host(c, v, BUF_RECV, &c->recv, v->poll ? plain : v->access)) {
		return GDRB_ERR;
	}
	/* Bounce buffers (serial staging) and rings (pipelined) exist only when a path uses them. */
	if (gdrb_ring_ready(&c->in_ring)) {
		v->me.ring_chunk = c->in_ring.chunk;
		v->me.ring_slots = c->in_ring.slots;
	}
	return reg_host(c, v, BUF_SEND_BOUNCE, &c->send_bounce, v->access) ||
	       reg_host(c, v, BUF_RECV_BOUNCE, &c->recv_bounce, v->access) ||
	       reg_host(c, v, BUF_OUT_RING, &c->out_ring.buf, v->access) ||
	       reg_host(c, v, BUF_IN_RING, &c->in_ring.buf, v->access) ? GDRB_ERR : 0;
}

/* Every rank's exchange record reaches every rank: gather to rank 0, then broadcast. */
static int exchange(struct gdrb_ctx *c, struct gdrb_verbs *v)
{
	struct exch *all = calloc((size_t)c->boot->size, sizeof(*all));
	int rc = GDRB_ERR;

	if (!all) {
		gdrb_err("out of memory");
		return GDRB_ERR;
	}
	if (c->boot->gather(c->boot, &v->me, sizeof(v->me), all) == 0 &&
	    c->boot->bcast(c->boot, all, (size_t)c->boot->size * sizeof(*all), 0) == 0) {
		v->peer = all[c->peer];
		rc = 0;
	}
	free(all);
	if (!rc && v->peer.nqps != v->nqps) {
		gdrb_err("rank %d (%s) has %u QPs, this rank %u", c->peer, c->boot->hosts[c->peer],
			 v->peer.nqps, v->nqps);
		rc = GDRB_ERR;
	}
	if (!rc && (v->peer.ring_chunk != v->me.ring_chunk || v->peer.ring_slots != v->me.ring_slots)) {
		gdrb_err("rank %d (%s) stages through %u slots of %llu bytes, this rank %u of %llu; give every rank the same --staging and --stage-chunk",
			 c->peer, c->boot->hosts[c->peer], v->peer.ring_slots,
			 (unsigned long long)v->peer.ring_chunk, v->me.ring_slots,
			 (unsigned long long)v->me.ring_chunk);
		rc = GDRB_ERR;
	}
	return rc;
}

int gdrb_verbs_connect_qp(const struct gdrb_verbs *v, const struct gdrb_verbs_params *vp, struct ibv_qp *qp,
			  uint32_t psn, const struct gdrb_verbs_remote *peer, int peer_rank, const char *peer_host)
{
	enum ibv_mtu mtu = v->me.mtu < peer->mtu ? (enum ibv_mtu)v->me.mtu : (enum ibv_mtu)peer->mtu;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = (uint8_t)v->port,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	const char *step = "INIT";
	int rc;

	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (!rc) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = mtu;
		a.dest_qp_num = peer->qpn;
		a.rq_psn = peer->psn;
		a.max_dest_rd_atomic = (uint8_t)v->rd_atom;
		a.min_rnr_timer = 1;    /* 0.01 ms */
		a.ah_attr.dlid = (uint16_t)peer->lid;
		a.ah_attr.sl = (uint8_t)vp->sl;
		a.ah_attr.port_num = (uint8_t)v->port;
		if (v->gid_index >= 0) {
			a.ah_attr.is_global = 1;
			memcpy(a.ah_attr.grh.dgid.raw, peer->gid, sizeof(a.ah_attr.grh.dgid.raw));
			a.ah_attr.grh.sgid_index = (uint8_t)v->gid_index;
			a.ah_attr.grh.hop_limit = 64;
			a.ah_attr.grh.traffic_class = (uint8_t)vp->tclass;
		}
		step = "RTR";
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	}
	if (!rc) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;         /* 4.096 us << 14 = 67 ms per try */
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = psn;
		a.max_rd_atomic = (uint8_t)v->rd_atom;
		step = "RTS";
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	}
	if (rc) {
		gdrb_err("ibv_modify_qp to %s (QP 0x%x with rank %d, %s): %s%s", step, qp->qp_num, peer_rank,
			 peer_host, strerror(rc),
			 v->ethernet ? "; check the GID (--gid-index) and that both ports reach each other" : "");
		return GDRB_ERR;
	}
	return 0;
}

/* RC: RESET -> INIT -> RTR (knows the peer) -> RTS. */
static int connect_qp(struct gdrb_ctx *c, struct gdrb_verbs *v, unsigned i)
{
	struct gdrb_verbs_remote peer = { .lid = v->peer.lid, .mtu = v->peer.mtu, .qpn = v->peer.qpn[i],
					  .psn = v->peer.psn[i], .gid = v->peer.gid };

	return gdrb_verbs_connect_qp(v, gdrb_verbs_params(c), v->qp[i].qp, v->me.psn[i], &peer, c->peer,
				     c->boot->hosts[c->peer]);
}

static int post_initial_recvs(struct gdrb_ctx *c, struct gdrb_verbs *v)
{
	unsigned i, k;

	for (k = 0; k < CTRL_CREDITS; k++)
		if (gdrb_verbs_post_empty_recv(&v->qp[v->nqps], 0))
			return GDRB_ERR;
	for (i = 0; v->op == GDRB_VERBS_WRITE && i < v->nqps; i++)
		for (k = 0; k < v->rx_depth; k++)
			if (gdrb_verbs_post_empty_recv(&v->qp[i], 0))
				return GDRB_ERR;
	/* Send ping-pong: the receive the first path switch uses up (see switch_path). */
	if (v->op == GDRB_VERBS_SEND && c->bench->traffic == GDRB_TRAFFIC_PINGPONG)
		return gdrb_verbs_post_empty_recv(&v->qp[0], 0);
	return 0;
}

static const char *staged_how(enum gdrb_verbs_op op, bool pipelined)
{
	if (!pipelined)
		return "cudaMemcpy device->registered pinned bounce buffer before each send (reads: by the buffer's owner) and bounce->device after each receive, copies timed";
	if (op == GDRB_VERBS_READ)
		return "pipelined: the owner copies fragments of --stage-chunk device->registered pinned slot (cudaMemcpyAsync on its own stream) and says each is ready with a control send; the reader reads it into a slot of its own, copies it slot->device and frees the owner's slot with a credit, copies timed";
	if (op == GDRB_VERBS_SEND)
		return "pipelined: fragments of --stage-chunk copied device->registered pinned slot (cudaMemcpyAsync on the rank's own stream), each a send into a receive posted on a slot of the peer, copied slot->device as it arrives; the receiver returns a credit per freed slot, copies timed";
	return "pipelined: fragments of --stage-chunk copied device->registered pinned slot (cudaMemcpyAsync on the rank's own stream), each an RDMA write with immediate into a slot of the peer, copied slot->device as it arrives; the receiver returns a credit per freed slot, copies timed";
}

static int setup(struct gdrb_ctx *c, enum gdrb_verbs_op op)
{
	const struct gdrb_verbs_params *vp = gdrb_verbs_params(c);
	struct gdrb_verbs *v = calloc(1, sizeof(*v));
	unsigned i;
	int rc;

	if (!v) {
		gdrb_err("out of memory");
		return GDRB_ERR;
	}
	c->priv = v;
	/* No dma-buf fd yet: release must not close fd 0. */
	v->gpu_mr[0].dmabuf_fd = v->gpu_mr[1].dmabuf_fd = -1;
	v->op = op;
	v->nqps = vp->qps;
	v->progress = gdrb_verbs_ctx_progress;
	v->progress_arg = c;
	/* The target of a one-way write or read bandwidth test only waits for the window's end. */
	v->sleeps = vp->wait == GDRB_WAIT_EVENT ||
		    (vp->wait == GDRB_WAIT_AUTO && op != GDRB_VERBS_SEND &&
		     c->bench->traffic == GDRB_TRAFFIC_UNIDIR && !c->initiator);
	v->poll = op == GDRB_VERBS_WRITE && c->bench->traffic == GDRB_TRAFFIC_PINGPONG &&
		  (vp->completion == GDRB_COMPLETION_POLL ||
		   (vp->completion == GDRB_COMPLETION_AUTO && !gdrb_mem_kind(c->p->mem)->on_gpu &&
		    vp->wait != GDRB_WAIT_EVENT));
	srand48((long)getpid() ^ (long)time(NULL));
	rc = gdrb_verbs_choose(vp, c->have_gpu ? c->gpu.pci_bus_id : NULL, c->boot->local_rank, v);
	if (!rc)
		rc = open_verbs(c, v);
	if (!rc)
		rc = register_buffers(c, v);
	if ((rc = gdrb_boot_agree(c->boot, rc)))
		return rc;
	if (!gdrb_mem_kind(c->p->mem)->on_gpu)
		c->variants[0].how = op == GDRB_VERBS_READ ? "RDMA read between registered host buffers (ibv_reg_mr)" :
				     op == GDRB_VERBS_SEND ? "send/receive between registered host buffers (ibv_reg_mr)" :
				     "RDMA write between registered host buffers (ibv_reg_mr)";
	for (i = 1; i < c->nvariants; i++)
		if (c->variants[i].staged)
			c->variants[i].how = staged_how(op, c->variants[i].pipelined);
	rc = exchange(c, v);
	for (i = 0; !rc && i <= v->nqps; i++)
		rc = connect_qp(c, v, i);
	if (!rc)
		rc = post_initial_recvs(c, v);
	/* Nobody sends before every receive is posted. */
	if ((rc = gdrb_boot_agree(c->boot, rc)) || c->boot->barrier(c->boot))
		return rc ? rc : GDRB_ERR;
	c->nic = v->nic;
	c->nic_dev = v->dev;
	c->nic_port = v->port;
	c->link_layer = v->ethernet ? "Ethernet" : "InfiniBand";
	c->link_gbps = v->rate[0] ? strtod(v->rate, NULL) : 0;
	c->gpu_nic_dist = gdrb_topo_dist_name(v->dist);
	return 0;
}

int gdrb_verbs_setup_write(struct gdrb_ctx *c)
{
	return setup(c, GDRB_VERBS_WRITE);
}

int gdrb_verbs_setup_read(struct gdrb_ctx *c)
{
	return setup(c, GDRB_VERBS_READ);
}

int gdrb_verbs_setup_send(struct gdrb_ctx *c)
{
	return setup(c, GDRB_VERBS_SEND);
}

void gdrb_verbs_release(struct gdrb_verbs *v)
{
	int i;

	for (i = 0; i <= (int)v->nqps; i++)
		if (v->qp[i].qp)
			ibv_destroy_qp(v->qp[i].qp);
	for (i = 0; i < NBUF; i++)
		if (v->mr[i])
			ibv_dereg_mr(v->mr[i]);
	for (i = 0; i < 2; i++)
		gdrb_reg_gpu_release(&v->gpu_mr[i]);
	destroy_cqs(v);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	v->pd = NULL;
	v->ctx = NULL;
}

void gdrb_verbs_teardown(struct gdrb_ctx *c)
{
	struct gdrb_verbs *v = c->priv;

	if (!v)
		return;
	gdrb_verbs_release(v);
	free(v);
	c->priv = NULL;
}

/* Which registration of GPU memory worked, and what was tried before it, and why that failed. */
static void describe_registration(const struct gdrb_gpu_mr *m, char *buf, size_t len)
{
	int i, n = snprintf(buf, len, "\n# registration: GPU memory registered through %s",
			    gdrb_reg_mode_name(m->used));

	for (i = 0; i < m->ntried && n >= 0 && (size_t)n < len; i++)
		if (!m->tried[i].ok)
			n += snprintf(buf + n, len - (size_t)n, "; tried first: %s: %s",
				      gdrb_reg_mode_name(m->tried[i].mode), m->tried[i].why);
}

static void gid_line(const struct gdrb_verbs *v, char *buf, size_t len)
{
	if (v->gid_index >= 0)
		snprintf(buf, len, "GID index %d %s (%s)", v->gid_index, v->gid_text,
			 v->gid_type[0] ? v->gid_type : "type unknown");
	else
		snprintf(buf, len, "no GRH (LID routing)");
}

size_t gdrb_verbs_nic_line(const struct gdrb_verbs *v, const struct gdrb_verbs_params *vp, const char *mtu_what,
			   int mtu, const char *qps, const char *relaxed, char *buf, size_t len)
{
	char chunk[32], gid[96];

	gid_line(v, gid, sizeof(gid));
	snprintf(buf, len,
		 "NIC %s (rank 0): %s, %s, %s %d, %s; GPU-NIC distance %s (%s); %s tx depth %u; at most %s per work request; relaxed ordering %s",
		 v->nic, v->ethernet ? "Ethernet (RoCE)" : "InfiniBand", v->rate[0] ? v->rate : "rate unknown",
		 mtu_what, mtu, gid, gdrb_topo_dist_name(v->dist),
		 v->nearest ? "nearest active port to this rank's GPU" :
		 vp->ib_dev[0] ? "chosen with --ib-dev" : "first active port; no GPU-NIC PCI path",
		 qps, v->tx_depth, gdrb_size_format(v->max_chunk, chunk, sizeof(chunk)), relaxed);
	return strlen(buf);
}

void gdrb_verbs_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	const struct gdrb_verbs *v = c->priv;
	enum ibv_mtu mtu = v->me.mtu < v->peer.mtu ? (enum ibv_mtu)v->me.mtu : (enum ibv_mtu)v->peer.mtu;
	bool pp = c->bench->traffic == GDRB_TRAFFIC_PINGPONG;
	char qps[32];
	size_t used;

	snprintf(qps, sizeof(qps), "%u QP(s),", v->nqps);
	used = gdrb_verbs_nic_line(v, gdrb_verbs_params(c), "path MTU", mtu_bytes(mtu), qps,
				   !v->relaxed ? "off" : v->poll ? "requested (off for the polled receive buffer)" : "requested",
				   buf, len);
	if (used + 1 < len)
		snprintf(buf + used, len - used, "\n# completion: %s",
			 v->op == GDRB_VERBS_READ ? "the reader polls its send completion queue for its reads (the last read per QP is signaled); the owner learns the window is done from a control send" :
			 v->op == GDRB_VERBS_WRITE ? (pp && v->poll ? "each message is a plain RDMA write; the receiver spins on the last byte of its host receive buffer, as perftest does (--completion imm: write with immediate)" :
						      pp ? "each message is an RDMA write with immediate; the receiver polls its receive completion queue, never the buffer" :
						      "the last write of a window on each QP carries an immediate; the receiver polls its receive completion queue, then acknowledges with a send") :
			 pp ? "send/receive; the receiver polls its receive completion queue, never the buffer" :
			      "the receiver posts the window's receives, says ready with a send, polls its receive completion queue, then acknowledges");
	used = strlen(buf);
	if (gdrb_ring_ready(&c->in_ring) && used + 1 < len)
		snprintf(buf + used, len - used, "\n# completion, path staged: %s",
			 v->op == GDRB_VERBS_READ ? "a control send per fragment ready at the owner, the reader's read completion per fragment, a credit back per freed slot" :
			 v->op == GDRB_VERBS_WRITE ? "each fragment is an RDMA write with immediate, the receiver polls its receive completion queue and returns a credit per freed slot" :
			 "each fragment is a send into a receive posted on a slot, the receiver polls its receive completion queue and returns a credit per freed slot");
	used = strlen(buf);
	if (used + 1 < len)
		snprintf(buf + used, len - used, "\n# waiting: %s",
			 gdrb_verbs_params(c)->wait == GDRB_WAIT_EVENT ? "every rank sleeps on a completion channel until a completion is reported, then polls (--wait event)" :
			 gdrb_verbs_params(c)->wait == GDRB_WAIT_SPIN || v->op == GDRB_VERBS_SEND ||
			 c->bench->traffic != GDRB_TRAFFIC_UNIDIR ? "every rank polls its completion queues" :
			 "the initiator polls its completion queues; the target, which only waits for the window's end, sleeps on a completion channel (--wait spin: it polls too)");
	used = strlen(buf);
	if (v->scatter_cqe[0] && used + 1 < len)
		snprintf(buf + used, len - used, "\n# %s", v->scatter_cqe);
	used = strlen(buf);
	if (gdrb_mem_kind(c->p->mem)->on_gpu && c->variants[0].supported && used < len)
		describe_registration(&v->gpu_mr[0], buf + used, len - used);
}
