/* SPDX-License-Identifier: BSD-3-Clause */
/* The eleven checks of gdrb_doctor; each records what it read, a verdict and a fix. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_doctor.h"
#include "gdrb_memlock.h"
#include "gdrb_reg.h"
#include "gdrb_size.h"

#include "doctor_int.h"

#define GIB (1024.0 * 1024 * 1024)
#define MIB (1024.0 * 1024)
/* BAR1 below this (with GPU memory unknown) limits what GPUDirect can map at once. */
#define BAR1_SMALL (1ull << 30)
/* Bytes of device memory each registration attempt uses. */
#define PROBE_BYTES (2u << 20)

const char *gdrb_doc_verdict_name(enum gdrb_doc_verdict v)
{
	static const char *const names[] = { "SKIP", "PASS", "WARN", "FAIL" };

	return names[v];
}

static void evidence(struct gdrb_doc_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void evidence(struct gdrb_doc_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->evidence, sizeof(c->evidence), fmt, ap);
	va_end(ap);
}

/*
 * One finding. The check takes the worst verdict of its items, and the fix of
 * the first item that made it that bad.
 */
static void item(struct gdrb_doc_check *c, enum gdrb_doc_verdict v, enum gdrb_doc_fix fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void item(struct gdrb_doc_check *c, enum gdrb_doc_verdict v, enum gdrb_doc_fix fix, const char *fmt, ...)
{
	struct gdrb_doc_item *items;
	const char *fix_text = v != GDRB_DOC_PASS ? gdrb_doc_fix_text(fix) : "";
	va_list ap;

	items = realloc(c->items, (c->nitems + 1) * sizeof(*items));
	if (!items)
		return;
	c->items = items;
	va_start(ap, fmt);
	vsnprintf(items[c->nitems].text, sizeof(items[c->nitems].text), fmt, ap);
	va_end(ap);
	items[c->nitems++].v = v;
	if (v > c->v) {
		c->v = v;
		snprintf(c->fix, sizeof(c->fix), "%s", fix_text);
	} else if (v == c->v && !c->fix[0]) {
		snprintf(c->fix, sizeof(c->fix), "%s", fix_text);
	}
}

static int count_items(const struct gdrb_doc_check *c, enum gdrb_doc_verdict v)
{
	size_t i;
	int n = 0;

	for (i = 0; i < c->nitems; i++)
		n += c->items[i].v == v;
	return n;
}

static char *human_bytes(char *buf, size_t len, double bytes)
{
	if (bytes >= GIB)
		snprintf(buf, len, "%g GiB", bytes / GIB);
	else if (bytes >= MIB)
		snprintf(buf, len, "%g MiB", bytes / MIB);
	else
		snprintf(buf, len, "%g KiB", bytes / 1024);
	return buf;
}

static bool same_bdf(const char *a, const char *b)
{
	unsigned ad, ab, as, af, bd, bb, bs, bf;

	return sscanf(a, "%x:%x:%x.%x", &ad, &ab, &as, &af) == 4 &&
	       sscanf(b, "%x:%x:%x.%x", &bd, &bb, &bs, &bf) == 4 && ad == bd && ab == bb &&
	       as == bs && af == bf;
}

/* A GPU is matched by its PCI address, whatever CUDA pads it with. */
int gdrb_doctor_cuda_index(const struct gdrb_doctor *d, const char *bdf)
{
	int i;

	for (i = 0; d->cuda_ok && i < d->cuda.count; i++)
		if (same_bdf(d->cuda.devs[i].pci_bus_id, bdf))
			return i;
	return -1;
}

static bool verbs_lists(const struct gdrb_doctor *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nverbs; i++)
		if (!strcmp(d->verbs_devs[i], name))
			return true;
	return false;
}

/* 1. RDMA devices and ports */
static void check_rdma_ports(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int ports = 0, active = 0;
	size_t n, p, listed = 0;
	char verbs[64];

	if (!t->nnics) {
		item(c, GDRB_DOC_FAIL, GDRB_FIX_RDMA_DRIVER, "%s/class/infiniband %s", d->sysfs_root,
		     t->have_ib_class ? "is empty" : "does not exist: no RDMA driver is loaded");
		if (d->live)
			item(c, GDRB_DOC_FAIL, GDRB_FIX_RDMA_DRIVER, "libibverbs: %s",
			     d->verbs_ok ? "lists no device" : d->verbs_why);
		evidence(c, "no RDMA device");
		return;
	}
	if (d->live && !d->verbs_ok)
		item(c, GDRB_DOC_FAIL, GDRB_FIX_RDMA_PROVIDER, "libibverbs cannot list devices: %s", d->verbs_why);
	for (n = 0; n < t->nnics; n++) {
		const struct gdrb_topo_nic *nic = &t->nics[n];
		bool nic_active = false;

		if (d->live && d->verbs_ok && !verbs_lists(d, nic->name))
			item(c, GDRB_DOC_FAIL, GDRB_FIX_RDMA_PROVIDER,
			     "%s: in sysfs, but libibverbs does not list it (no user-space provider)",
			     nic->name);
		for (p = 0; p < nic->nports; p++)
			nic_active |= nic->ports[p].state == GDRB_PORT_ACTIVE;
		if (!nic->nports)
			item(c, GDRB_DOC_FAIL, GDRB_FIX_PORT_DOWN, "%s: no ports in sysfs", nic->name);
		for (p = 0; p < nic->nports; p++) {
			const struct gdrb_topo_port *pt = &nic->ports[p];
			struct gdrb_rdma_port_attr attr;
			char mtu[160] = "", why[256];
			bool eth = !strcmp(pt->link_layer, "Ethernet");
			enum gdrb_doc_verdict v = GDRB_DOC_PASS;
			int rdma_mtu = 0;
			enum gdrb_doc_fix fix = GDRB_FIX_NONE;

			ports++;
			active += pt->state == GDRB_PORT_ACTIVE;
			if (d->live && gdrb_rdma_query_port(nic->name, pt->num, &attr, why,
							    sizeof(why)) == 0 && attr.active_mtu) {
				rdma_mtu = attr.active_mtu;
				snprintf(mtu, sizeof(mtu), ", active MTU %d (max %d)", attr.active_mtu,
					 attr.max_mtu);
			}
			if (eth && pt->netdev_mtu) {
				int derived = gdrb_roce_mtu(pt->netdev_mtu);
				size_t used = strlen(mtu);

				if (!rdma_mtu)
					rdma_mtu = derived;
				snprintf(mtu + used, sizeof(mtu) - used, ", %s MTU %d -> RDMA MTU %d%s",
					 pt->netdev, pt->netdev_mtu, derived,
					 used ? "" : " (derived as the kernel does)");
			} else if (eth) {
				size_t used = strlen(mtu);

				snprintf(mtu + used, sizeof(mtu) - used, ", %s",
					 pt->netdev[0] ? "netdev MTU unreadable" : "no netdev found");
			}
			if (pt->state != GDRB_PORT_ACTIVE) {
				v = nic_active ? GDRB_DOC_WARN : GDRB_DOC_FAIL;
				fix = GDRB_FIX_PORT_DOWN;
			} else if (rdma_mtu && rdma_mtu < 4096) {
				v = GDRB_DOC_WARN;
				fix = eth ? GDRB_FIX_ROCE_MTU : GDRB_FIX_IB_MTU;
			}
			item(c, v, fix, "%s port %u: %s (%s), %s, %s%s", nic->name, pt->num,
			     pt->state_name[0] ? pt->state_name : "state unknown",
			     pt->phys_state[0] ? pt->phys_state : "?",
			     pt->link_layer[0] ? pt->link_layer : "link layer unknown",
			     pt->rate[0] ? pt->rate : "rate unknown", mtu);
		}
	}
	for (n = 0; n < t->nnics; n++)
		listed += verbs_lists(d, t->nics[n].name);
	if (!d->live)
		snprintf(verbs, sizeof(verbs), " (sysfs only: fixture tree)");
	else if (!d->verbs_ok)
		snprintf(verbs, sizeof(verbs), ", libibverbs lists none");
	else if (listed == t->nnics)
		snprintf(verbs, sizeof(verbs), ", all listed by libibverbs");
	else
		snprintf(verbs, sizeof(verbs), ", libibverbs lists %zu of them", listed);
	evidence(c, "%zu RDMA device%s, %d of %d ports ACTIVE%s", t->nnics,
		 t->nnics == 1 ? "" : "s", active, ports, verbs);
}

/* "0000:0000:0000:0000:0000:ffff:0a00:0001" -> " (::ffff:10.0.0.1)" */
static void gid_ipv4(const char *gid, char *buf, size_t len)
{
	unsigned hi, lo;

	buf[0] = '\0';
	if (!strncmp(gid, "0000:0000:0000:0000:0000:ffff:", 30) &&
	    sscanf(gid + 30, "%4x:%4x", &hi, &lo) == 2)
		snprintf(buf, len, " (::ffff:%u.%u.%u.%u)", hi >> 8, hi & 0xff, lo >> 8, lo & 0xff);
}

/* 2. RoCE: a RoCE v2 GID exists, and its index */
static void check_roce_gid(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int roce = 0, with_v2 = 0;
	size_t n, p;

	for (n = 0; n < t->nnics; n++)
		for (p = 0; p < t->nics[n].nports; p++) {
			const struct gdrb_topo_port *pt = &t->nics[n].ports[p];
			char v4[40];

			if (strcmp(pt->link_layer, "Ethernet"))
				continue;
			roce++;
			if (pt->roce_v2_gid < 0) {
				item(c, GDRB_DOC_FAIL, GDRB_FIX_ROCE_GID,
				     "%s port %u (%s): no RoCE v2 GID among %d GIDs (%d RoCE v1)",
				     t->nics[n].name, pt->num, pt->netdev[0] ? pt->netdev : "no netdev",
				     pt->ngids, pt->ngids - pt->nv2);
				continue;
			}
			with_v2++;
			gid_ipv4(pt->roce_v2_gid_text, v4, sizeof(v4));
			item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "%s port %u (%s): RoCE v2 GID index %d = %s%s",
			     t->nics[n].name, pt->num, pt->netdev[0] ? pt->netdev : "no netdev",
			     pt->roce_v2_gid, pt->roce_v2_gid_text, v4);
		}
	if (!roce)
		evidence(c, "%s", t->nnics ? "no RoCE port (InfiniBand only)" : "no RDMA device");
	else
		evidence(c, "%d of %d RoCE ports have a RoCE v2 GID", with_v2, roce);
}

/* "5, 9" for the links of g in state st, at most len bytes. */
static char *links_in(const struct gdrb_nvml_gpu *g, enum gdrb_nvlink_state st, char *buf, size_t len)
{
	size_t l, n = 0;

	buf[0] = 0;
	for (l = 0; l < GDRB_NVLINK_MAX_LINKS && n < len; l++)
		if (g->state[l] == st)
			n += (size_t)snprintf(buf + n, len - n, "%s%zu", n ? ", " : "", l);
	return buf;
}

/*
 * One item per GPU NVML lists: FAIL when some of its NVLinks are down and others up (a link
 * lost on a board whose GPUs are wired together), WARN when all are down (a PCIe card without
 * its NVLink bridge, or a board with every link lost: the SKU inventory tells which) or a
 * link's state could not be read; a GPU without NVLink passes. NVML absent: said, not judged.
 */
static void nvlink_items(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_nvml *nv = &d->nvml;
	char down[96], unread[96], ver[24], far[40];
	size_t g;

	if (!d->ask_nvml)
		return;
	if (!nv->known) {
		item(c, GDRB_DOC_SKIP, GDRB_FIX_NONE, "NVLink not known: %s", nv->why);
		return;
	}
	if (nv->reported > nv->ngpus)
		item(c, GDRB_DOC_WARN, GDRB_FIX_NVLINK_UNREAD, "NVML counts %u GPUs; the first %zu are read",
		     nv->reported, nv->ngpus);
	for (g = 0; g < nv->ngpus; g++) {
		const struct gdrb_nvml_gpu *gp = &nv->gpus[g];
		const char *v = gdrb_nvlink_version_text(gp->version);
		const char *pci = gp->pci[0] ? gp->pci : "(PCI address not read)";
		enum gdrb_doc_verdict verdict = GDRB_DOC_PASS;

		if (!gp->links && gp->why[0]) {
			item(c, GDRB_DOC_WARN, GDRB_FIX_NVLINK_UNREAD, "NVLink of NVML GPU %zu %s not read: %s", g, pci, gp->why);
			continue;
		}
		if (!gp->links) {
			item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "NVLink %s %s: no NVLink (NVML lists none)", pci, gp->name);
			continue;
		}
		if (gp->down && gp->up)
			verdict = GDRB_DOC_FAIL;
		else if (gp->down || gp->unread)
			verdict = GDRB_DOC_WARN;
		far[0] = 0;
		if (gp->up > gp->to_switch + gp->to_gpu)
			snprintf(far, sizeof(far), ", %d far end not known", gp->up - gp->to_switch - gp->to_gpu);
		if (v)
			snprintf(ver, sizeof(ver), "NVLink %s", v);
		else
			snprintf(ver, sizeof(ver), "version not known");
		item(c, verdict, verdict == GDRB_DOC_FAIL ? GDRB_FIX_NVLINK_DOWN : !gp->up && !gp->unread ? GDRB_FIX_NVLINK_ALL_DOWN : GDRB_FIX_NVLINK_UNREAD,
		     "NVLink %s %s: %d of %d NVLinks up%s%s%s%s, %s, %d to an NVSwitch, %d to a GPU%s%s%s",
		     pci, gp->name, gp->up, gp->links, gp->down ? ", down: " : "",
		     links_in(gp, GDRB_NVLINK_DOWN, down, sizeof(down)), gp->unread ? ", not read: " : "",
		     links_in(gp, GDRB_NVLINK_UNREAD, unread, sizeof(unread)), ver, gp->to_switch,
		     gp->to_gpu, far, gp->why[0] ? "; " : "", gp->why);
	}
}

/* 3. GPUs visible, driver and runtime versions */
static void check_gpus(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	const struct gdrb_node *nd = &d->node;
	char rt[16], drv[16], cuda[160], nv[96];
	size_t g;

	if (nd->nv_version[0])
		snprintf(nv, sizeof(nv), "NVIDIA driver %s%s", nd->nv_version,
			 nd->nv_open == 1 ? " (open kernel modules)" :
			 nd->nv_open == 0 ? " (proprietary kernel module)" : "");
	else
		snprintf(nv, sizeof(nv), "no NVIDIA kernel driver loaded");
	if (!d->ask_cuda)
		snprintf(cuda, sizeof(cuda), "CUDA not asked (%s)", d->live ? "--fast" : "fixture tree");
	else if (d->cuda_ok)
		snprintf(cuda, sizeof(cuda), "CUDA runtime %s, driver API %s, %d device%s",
			 gdrb_cuda_version_text(d->cuda.runtime_version, rt, sizeof(rt)),
			 gdrb_cuda_version_text(d->cuda.driver_version, drv, sizeof(drv)),
			 d->cuda.count, d->cuda.count == 1 ? "" : "s");
	else
		snprintf(cuda, sizeof(cuda), "CUDA runtime %s, driver API %s",
			 gdrb_cuda_version_text(d->cuda.runtime_version, rt, sizeof(rt)),
			 gdrb_cuda_version_text(d->cuda.driver_version, drv, sizeof(drv)));
	evidence(c, "%zu NVIDIA GPU%s on the PCI bus; %s; %s", t->ngpus, t->ngpus == 1 ? "" : "s",
		 nv, cuda);

	if (!t->ngpus)
		item(c, d->cuda_ok ? GDRB_DOC_WARN : GDRB_DOC_FAIL, GDRB_FIX_GPU_MISSING,
		     "no NVIDIA GPU (vendor 0x10de, class 0x0300/0x0302) under %s/bus/pci/devices",
		     d->sysfs_root);
	if (!nd->nv_version[0] && !nd->mod_nvidia)
		item(c, GDRB_DOC_FAIL, GDRB_FIX_GPU_DRIVER, "%s", nv);
	if (d->ask_cuda && !d->cuda_ok)
		item(c, GDRB_DOC_FAIL, nd->nv_version[0] ? GDRB_FIX_CUDA_DRIVER : GDRB_FIX_GPU_DRIVER, "CUDA: %s", d->cuda_why);
	for (g = 0; g < t->ngpus; g++) {
		const struct gdrb_pci_fn *fn = &t->gpus[g].pci;
		int ci = gdrb_doctor_cuda_index(d, fn->bdf);
		bool bound = !strcmp(fn->driver, "nvidia");

		item(c, bound ? GDRB_DOC_PASS : GDRB_DOC_FAIL, GDRB_FIX_GPU_DRIVER,
		     "%s device 0x%04x%s%s, driver %s, NUMA node %d%s", fn->bdf, fn->device,
		     ci >= 0 ? " " : "", ci >= 0 ? d->cuda.devs[ci].name : "",
		     fn->driver[0] ? fn->driver : "none", fn->numa_node,
		     !d->cuda_ok ? "" : ci >= 0 ? ", visible to CUDA" : ", not visible to CUDA");
	}
	if (d->cuda_ok && d->cuda.count < (int)t->ngpus)
		item(c, GDRB_DOC_WARN, GDRB_FIX_CUDA_VISIBLE,
		     "CUDA sees %d of the %zu GPUs", d->cuda.count, t->ngpus);
	nvlink_items(d, c);
}

/* The CUDA device to pair with NIC n: one whose nearest NIC it is, else device 0. */
static int gpu_for_nic(const struct gdrb_doctor *d, size_t n)
{
	size_t g;
	int ci;

	for (g = 0; g < d->topo.ngpus; g++)
		if (d->nic_of_gpu[g] == (int)n && (ci = gdrb_doctor_cuda_index(d, d->topo.gpus[g].pci.bdf)) >= 0)
			return ci;
	return 0;
}

/* 4. GPU memory registration really attempted on each NIC */
static void check_registration(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	static const enum gdrb_reg_mode modes[] = { GDRB_REG_DMABUF, GDRB_REG_PEERMEM };
	int nics = 0, ok_nics = 0;
	size_t v, n;
	int m;

	if (!d->live) {
		evidence(c, "not attempted: a fixture tree is not this node (registration needs "
			 "the live node)");
		return;
	}
	if (d->fast) {
		evidence(c, "not attempted: --fast");
		return;
	}
	if (!gdrb_reg_built()) {
		evidence(c, "not attempted: gdrbench was built without libibverbs or without CUDA");
		return;
	}
	if (!d->verbs_ok || !d->nverbs) {
		evidence(c, "not attempted: no RDMA device to register with (check 1)");
		return;
	}
	if (!d->cuda_ok) {
		evidence(c, "not attempted: no usable GPU (check 3)");
		return;
	}
	for (v = 0; v < d->nverbs; v++) {
		struct gdrb_reg_attempt att[2];
		int gpu = 0, rc[2], worked = 0;

		for (n = 0; n < d->topo.nnics; n++)
			if (!strcmp(d->topo.nics[n].name, d->verbs_devs[v]))
				gpu = gpu_for_nic(d, n);
		for (m = 0; m < 2; m++) {
			rc[m] = gdrb_reg_probe(d->verbs_devs[v], gpu, PROBE_BYTES, modes[m], &att[m]);
			worked += rc[m] == 0;
		}
		nics++;
		ok_nics += worked > 0;
		for (m = 0; m < 2; m++)
			item(c, rc[m] == 0 ? GDRB_DOC_PASS : worked ? GDRB_DOC_WARN : GDRB_DOC_FAIL, GDRB_FIX_GPU_REGISTRATION,
			     "%s with GPU %d (%s): %s: %s", d->verbs_devs[v], gpu,
			     d->cuda.devs[gpu].pci_bus_id,
			     modes[m] == GDRB_REG_DMABUF ? "dma-buf" : "peer memory", att[m].why);
	}
	evidence(c, "%d of %d RDMA devices registered GPU memory (%u KiB each, dma-buf and peer "
		 "memory tried separately)", ok_nics, nics, PROBE_BYTES / 1024);
}

/* 5. nvidia_peermem loaded; dma-buf support in kernel and driver */
static void check_modules(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_node *nd = &d->node;
	char why[256] = "";
	bool peermem = nd->mod_nvidia_peermem || nd->mod_nv_peer_mem;
	int kernel_ok = gdrb_kernel_at_least(nd->kernel, 5, 12);
	bool dmabuf = kernel_ok == 1 && nd->nv_open == 1 && nd->nv_major >= 515;
	size_t used = 0;

	if (!nd->mod_nvidia && !nd->nv_version[0]) {
		evidence(c, "no NVIDIA kernel driver loaded (check 3)");
		return;
	}
	if (kernel_ok != 1)
		used += (size_t)snprintf(why + used, sizeof(why) - used, "; kernel %s%s",
					 nd->kernel[0] ? nd->kernel : "version unknown",
					 kernel_ok == 0 ? " is older than 5.12" : "");
	if (nd->nv_open != 1 && used < sizeof(why))
		used += (size_t)snprintf(why + used, sizeof(why) - used, "; %s",
					 nd->nv_open == 0 ?
						 "the NVIDIA kernel module is the proprietary one, "
						 "dma-buf needs the open one" :
						 "NVIDIA kernel module flavour unknown");
	if (nd->nv_major && nd->nv_major < 515 && used < sizeof(why))
		snprintf(why + used, sizeof(why) - used, "; NVIDIA driver %s is older than 515",
			 nd->nv_version);

	if (!nd->modules_readable)
		item(c, GDRB_DOC_SKIP, GDRB_FIX_NONE, "module list unreadable (no %s/modules, no %s/module)",
		     d->procfs_root, d->sysfs_root);
	else
		item(c, peermem ? GDRB_DOC_PASS : dmabuf ? GDRB_DOC_WARN : GDRB_DOC_FAIL,
		     dmabuf ? GDRB_FIX_PEERMEM : GDRB_FIX_PEERMEM_OR_DMABUF, "%s",
		     nd->mod_nvidia_peermem ? "nvidia_peermem loaded" :
		     nd->mod_nv_peer_mem ? "nv_peer_mem loaded" :
		     dmabuf ? "neither nvidia_peermem nor nv_peer_mem is loaded: only dma-buf "
			      "registration is possible" :
			      "neither nvidia_peermem nor nv_peer_mem is loaded");
	if (dmabuf)
		item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "dma-buf: kernel %s, NVIDIA %s open kernel modules",
		     nd->kernel, nd->nv_version);
	else
		item(c, peermem ? GDRB_DOC_PASS : GDRB_DOC_FAIL, GDRB_FIX_PEERMEM_OR_DMABUF, "dma-buf: unavailable: %s",
		     why[0] ? why + 2 : "reason unknown");
	evidence(c, "peer memory: %s; dma-buf: %s",
		 !nd->modules_readable ? "unknown" : peermem ? "yes" : "no", dmabuf ? "yes" : "no");
}

/* 6. RLIMIT_MEMLOCK large enough for what the runs asked about register */
static void check_memlock(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_node *nd = &d->node;
	const char *src = d->live ? "getrlimit" : "self/limits";
	struct gdrb_memlock_need need;
	char size[32], total[48], max[32], text[512];
	enum gdrb_doc_verdict v;
	bool below;

	/* The bandwidth benchmarks' figure: the latency ones register no more. */
	gdrb_memlock_need(d->sizes, d->window, d->window_bytes, true, d->mem, &need);
	gdrb_memlock_need_text(&need, text, sizeof(text));
	gdrb_memlock_total_text(&need, total, sizeof(total));
	gdrb_size_format(d->max_size, max, sizeof(max));
	if (!nd->memlock_known) {
		evidence(c, "not known: %s/self/limits %s; need %s (-m %s, --mem %s)", d->procfs_root,
			 nd->memlock_why[0] ? nd->memlock_why : "not read", total, max,
			 gdrb_mem_kind_name(d->mem));
		return;
	}
	if (nd->memlock_unlimited) {
		item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "RLIMIT_MEMLOCK unlimited (%s)", src);
		item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "%s", text);
		evidence(c, "unlimited; need %s (-m %s, --mem %s)", total, max,
			 gdrb_mem_kind_name(d->mem));
		return;
	}
	human_bytes(size, sizeof(size), (double)nd->memlock_bytes);
	below = need.overflow || nd->memlock_bytes < need.bytes;
	/* A finite limit that covers the need still stops larger runs and other libraries. */
	v = !below ? GDRB_DOC_WARN : nd->cap_ipc_lock ? GDRB_DOC_WARN : GDRB_DOC_FAIL;
	item(c, v, GDRB_FIX_MEMLOCK, "RLIMIT_MEMLOCK %s (%s) %s", size, src,
	     below ? "is below the need: registering fails with ENOMEM" :
		     "covers the need; registering more than that fails with ENOMEM");
	item(c, below ? v : GDRB_DOC_PASS, GDRB_FIX_MEMLOCK, "%s", text);
	if (nd->cap_ipc_lock)
		item(c, GDRB_DOC_WARN, GDRB_FIX_MEMLOCK,
		     "this process has CAP_IPC_LOCK and is exempt; unprivileged jobs are not");
	/* The fix names the figure this node needs. */
	if (need.overflow)
		snprintf(c->fix, sizeof(c->fix), "raise it to unlimited (no finite limit covers the need): %s",
			 gdrb_doc_fix_text(GDRB_FIX_MEMLOCK));
	else
		snprintf(c->fix, sizeof(c->fix), "raise it to unlimited (at least %s here): %s", total,
			 gdrb_doc_fix_text(GDRB_FIX_MEMLOCK));
	evidence(c, "%s; need %s (-m %s, --mem %s)%s", size, total, max, gdrb_mem_kind_name(d->mem),
		 nd->cap_ipc_lock ? ", exempt here (CAP_IPC_LOCK)" : "");
}

/* 7. IOMMU mode */
static void check_iommu(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_node *nd = &d->node;

	item(c, nd->iommu == GDRB_IOMMU_TRANSLATED ? GDRB_DOC_FAIL : GDRB_DOC_PASS, GDRB_FIX_IOMMU, "%s: %s",
	     gdrb_iommu_mode_name(nd->iommu), nd->iommu_why);
	item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "%d IOMMU units in %s/class/iommu; kernel command line: %s",
	     nd->iommu_units, d->sysfs_root, nd->iommu_args[0] ? nd->iommu_args : "no IOMMU options");
	evidence(c, "%s (%s)", gdrb_iommu_mode_name(nd->iommu), nd->iommu_why);
}

/* 8. PCIe ACS on the bridges between each GPU and its nearest NIC */
static void check_acs(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int pairs = 0, redirected = 0;
	size_t g, b;

	for (g = 0; g < t->ngpus; g++) {
		char bridges[GDRB_TOPO_MAX_HOPS * 2][GDRB_BDF_LEN], list[320] = "", flags[96];
		const struct gdrb_topo_nic *nic;
		size_t nb, used = 0;
		bool unreadable = false;

		if (d->nic_of_gpu[g] < 0 || !t->nics[d->nic_of_gpu[g]].has_pci)
			continue;
		nic = &t->nics[d->nic_of_gpu[g]];
		pairs++;
		if (d->dist_of_gpu[g] > GDRB_DIST_PXB) {
			item(c, GDRB_DOC_PASS, GDRB_FIX_NONE,
			     "GPU %s - %s: %s, the path crosses the host bridge; ACS does not "
			     "change it (check 9)", t->gpus[g].pci.bdf, nic->name,
			     gdrb_topo_dist_name(d->dist_of_gpu[g]));
			continue;
		}
		nb = gdrb_topo_path(&t->gpus[g].pci, &nic->pci, bridges, GDRB_TOPO_MAX_HOPS * 2);
		for (b = 0; b < nb; b++) {
			struct gdrb_acs acs;
			int rc = gdrb_topo_acs(d->sysfs_root, bridges[b], &acs);

			if (rc || !acs.readable) {
				unreadable = true;
				continue;
			}
			if (!acs.present || !(acs.ctrl & GDRB_ACS_P2P_REDIRECT) || used >= sizeof(list))
				continue;
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s %s (%s)",
						 used ? "; " : "", gdrb_pcie_port_name(acs.port_type),
						 bridges[b],
						 gdrb_acs_flags(acs.ctrl, flags, sizeof(flags)));
		}
		if (used) {
			redirected++;
			item(c, GDRB_DOC_FAIL, GDRB_FIX_ACS_REDIRECT,
			     "GPU %s - %s: ACS redirects peer-to-peer to the root complex at %s",
			     t->gpus[g].pci.bdf, nic->name, list);
		} else if (unreadable) {
			item(c, GDRB_DOC_SKIP, GDRB_FIX_ACS_ROOT,
			     "GPU %s - %s: config space of the %zu bridges between them not "
			     "readable (needs root)", t->gpus[g].pci.bdf, nic->name, nb);
		} else {
			item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "GPU %s - %s: %zu bridge%s between them, no ACS "
			     "redirect", t->gpus[g].pci.bdf, nic->name, nb, nb == 1 ? "" : "s");
		}
	}
	if (!pairs)
		evidence(c, "no GPU with a PCI NIC to check");
	else if (!count_items(c, GDRB_DOC_PASS) && !redirected)
		evidence(c, "ACS not readable: run as root");
	else
		evidence(c, "%d of %d GPU-NIC paths redirected by ACS", redirected, pairs);
	if (count_items(c, GDRB_DOC_SKIP) && c->v == GDRB_DOC_PASS)
		snprintf(c->fix, sizeof(c->fix), "%s", gdrb_doc_fix_text(GDRB_FIX_ACS_ROOT));
}

/* Part of check 9: GPUs whose nearest NIC is the same device, named per NIC. */
static void shared_nics(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	size_t g, h;

	for (g = 0; g < t->ngpus; g++) {
		char names[512];
		size_t used = 0, n = 1;
		int nic = d->nic_of_gpu[g];
		bool first = true;

		if (nic < 0 || !t->nics[nic].has_pci)
			continue;       /* a software device (rxe) is no GPU's own */
		for (h = 0; h < g; h++)
			first &= d->nic_of_gpu[h] != nic;
		if (!first)
			continue;       /* named with the first GPU on that NIC */
		used = (size_t)snprintf(names, sizeof(names), "%s", t->gpus[g].pci.bdf);
		for (h = g + 1; h < t->ngpus; h++)
			if (d->nic_of_gpu[h] == nic) {
				n++;
				if (used < sizeof(names))
					used += (size_t)snprintf(names + used, sizeof(names) - used, ", %s",
								 t->gpus[h].pci.bdf);
			}
		if (n > 1)
			item(c, GDRB_DOC_WARN, GDRB_FIX_SHARED_NIC, "GPUs %s share their nearest NIC %s: %zu rails on one NIC",
			     names, t->nics[nic].name, n);
	}
}

/* 9. GPU-NIC topology */
static void check_topology(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int per_class[GDRB_DIST_UNKNOWN + 1] = { 0 };
	char counts[160] = "";
	size_t g, used = 0;
	int k;

	if (!t->ngpus || !t->nnics) {
		evidence(c, "%s", !t->ngpus ? "no GPU" : "no RDMA device");
		return;
	}
	for (g = 0; g < t->ngpus; g++) {
		const struct gdrb_pci_fn *gpu = &t->gpus[g].pci;
		const struct gdrb_topo_nic *nic = &t->nics[d->nic_of_gpu[g]];
		enum gdrb_topo_dist dist = d->dist_of_gpu[g];
		enum gdrb_doc_verdict v = dist <= GDRB_DIST_PXB ? GDRB_DOC_PASS :
				     dist == GDRB_DIST_SYS ? GDRB_DOC_FAIL : GDRB_DOC_WARN;

		char bridge[GDRB_BDF_LEN] = "";
		int depth = nic->has_pci ? gdrb_topo_shared_bridge(gpu, &nic->pci, bridge) : 0;

		per_class[dist]++;
		item(c, v, dist == GDRB_DIST_SYS ? GDRB_FIX_GPU_NIC_SOCKET : GDRB_FIX_GPU_NIC_FAR,
		     "GPU %s (NUMA %d) -> %s %s (NUMA %d): %s, %s; rail %zu: %s%s", gpu->bdf,
		     gpu->numa_node, nic->name, nic->has_pci ? nic->pci.bdf : "(no PCI function)",
		     nic->has_pci ? nic->pci.numa_node : -1, gdrb_topo_dist_name(dist),
		     gdrb_topo_dist_what(dist), g,
		     depth >= 2 ? "PCIe switch " : depth == 1 ? "no switch shared, root port " :
		     "no switch or root port shared", bridge);
	}
	shared_nics(d, c);
	for (k = 0; k <= GDRB_DIST_UNKNOWN; k++)
		if (per_class[k] && used < sizeof(counts))
			used += (size_t)snprintf(counts + used, sizeof(counts) - used, "%s%d %s",
						 used ? ", " : "", per_class[k],
						 gdrb_topo_dist_name((enum gdrb_topo_dist)k));
	evidence(c, "%zu GPUs, %zu RDMA devices; nearest NIC per GPU: %s", t->ngpus, t->nnics,
		 counts);
}

static void link_item(struct gdrb_doc_check *c, const char *what, const struct gdrb_pci_fn *fn,
		      bool gpu, int *down)
{
	const struct gdrb_pci_link *l = &fn->link;
	double target_gts;
	int target_width;

	gdrb_pci_link_target(fn, &target_gts, &target_width);
	if (!l->cur_gts || !l->cur_width || !target_gts || !target_width) {
		item(c, GDRB_DOC_SKIP, GDRB_FIX_NONE, "%s %s: link speed or width not reported", what, fn->bdf);
		return;
	}
	if (l->cur_width < target_width || (!gpu && l->cur_gts < target_gts)) {
		(*down)++;
		item(c, GDRB_DOC_FAIL, GDRB_FIX_PCIE_DOWN, "%s %s: %.1f GT/s (Gen%d) x%d, can do %.1f GT/s (Gen%d) "
		     "x%d: down-trained", what, fn->bdf, l->cur_gts, gdrb_pci_gen(l->cur_gts),
		     l->cur_width, target_gts, gdrb_pci_gen(target_gts), target_width);
	} else if (l->cur_gts < target_gts) {
		item(c, GDRB_DOC_WARN, GDRB_FIX_PCIE_IDLE, "%s %s: %.1f GT/s (Gen%d) x%d, can do %.1f GT/s (Gen%d): "
		     "lower speed (idle GPU, or down-trained)", what, fn->bdf, l->cur_gts,
		     gdrb_pci_gen(l->cur_gts), l->cur_width, target_gts, gdrb_pci_gen(target_gts));
	} else if (target_gts < l->max_gts || target_width < l->max_width) {
		item(c, GDRB_DOC_WARN, GDRB_FIX_PCIE_SLOT, "%s %s: %.1f GT/s (Gen%d) x%d, limited by the port above "
		     "it (the card can do %.1f GT/s x%d)", what, fn->bdf, l->cur_gts,
		     gdrb_pci_gen(l->cur_gts), l->cur_width, l->max_gts, l->max_width);
	} else {
		item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "%s %s: %.1f GT/s (Gen%d) x%d, its maximum", what, fn->bdf,
		     l->cur_gts, gdrb_pci_gen(l->cur_gts), l->cur_width);
	}
}

/* 10. PCIe links of GPUs and NICs: current against maximum */
static void check_links(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int down = 0;
	size_t i;

	for (i = 0; i < t->ngpus; i++)
		link_item(c, "GPU", &t->gpus[i].pci, true, &down);
	for (i = 0; i < t->nnics; i++) {
		char what[80];

		if (!t->nics[i].has_pci)
			continue;
		snprintf(what, sizeof(what), "NIC %s", t->nics[i].name);
		link_item(c, what, &t->nics[i].pci, false, &down);
	}
	if (!c->nitems)
		evidence(c, "no GPU or NIC on the PCI bus");
	else
		evidence(c, "%zu links: %d at their maximum, %d down-trained, %d slower or limited",
			 c->nitems, count_items(c, GDRB_DOC_PASS), down, count_items(c, GDRB_DOC_WARN));
}

/* 11. GPU BAR1 size against GPU memory */
static void check_bar1(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	size_t g;

	for (g = 0; g < t->ngpus; g++) {
		const struct gdrb_topo_gpu *gpu = &t->gpus[g];
		int ci = gdrb_doctor_cuda_index(d, gpu->pci.bdf);
		char size[32], bar[64], mem[32];

		human_bytes(size, sizeof(size), (double)gpu->bar1_bytes);
		snprintf(bar, sizeof(bar), "%s in region %d", size, gpu->bar1_region);
		if (!gpu->bar1_bytes)
			item(c, GDRB_DOC_FAIL, GDRB_FIX_BAR1_NONE, "GPU %s: BAR1 not assigned (its resource file has no "
			     "prefetchable memory BAR after BAR0)", gpu->pci.bdf);
		else if (ci >= 0 && gpu->bar1_bytes < d->cuda.devs[ci].total_mem)
			item(c, GDRB_DOC_WARN, GDRB_FIX_BAR1_SMALL, "GPU %s: BAR1 %s < %s of memory: at most %s can "
			     "be registered at once", gpu->pci.bdf, bar,
			     human_bytes(mem, sizeof(mem), (double)d->cuda.devs[ci].total_mem), size);
		else if (ci >= 0)
			item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "GPU %s: BAR1 %s >= %s of memory", gpu->pci.bdf, bar,
			     human_bytes(mem, sizeof(mem), (double)d->cuda.devs[ci].total_mem));
		else if (gpu->bar1_bytes < BAR1_SMALL)
			item(c, GDRB_DOC_WARN, GDRB_FIX_BAR1_SMALL, "GPU %s: BAR1 %s (GPU memory unknown): at most "
			     "%s can be registered at once", gpu->pci.bdf, bar, size);
		else
			item(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "GPU %s: BAR1 %s (GPU memory unknown%s)", gpu->pci.bdf,
			     bar, d->ask_cuda ? ": not visible to CUDA" : d->live ? ": CUDA not asked (--fast)" :
			     ": fixture tree");
	}
	if (!t->ngpus)
		evidence(c, "no GPU");
	else
		evidence(c, "%zu GPUs: %d with BAR1 >= memory (or >= 1 GiB), %d small, %d unassigned",
			 t->ngpus, count_items(c, GDRB_DOC_PASS), count_items(c, GDRB_DOC_WARN),
			 count_items(c, GDRB_DOC_FAIL));
}

int gdrb_doctor_load(struct gdrb_doctor *d, const struct gdrb_doctor_opts *o)
{
	size_t g;
	int rc;

	memset(d, 0, sizeof(*d));
	d->sysfs_root = o->sysfs_root;
	d->procfs_root = o->procfs_root;
	d->live = o->live;
	d->fast = o->fast;
	d->ask_cuda = o->live && !o->fast;
	d->sizes = &o->sizes;
	d->max_size = o->max_size;
	d->window = o->window;
	d->window_bytes = o->window_bytes;
	d->mem = o->mem;
	rc = gdrb_topo_load(d->sysfs_root, &d->topo);
	if (rc)
		return rc;
	rc = gdrb_node_load(d->sysfs_root, d->procfs_root, d->live, &d->node);
	if (rc)
		return rc;
	d->nic_of_gpu = calloc(d->topo.ngpus + 1, sizeof(*d->nic_of_gpu));
	d->dist_of_gpu = calloc(d->topo.ngpus + 1, sizeof(*d->dist_of_gpu));
	if (!d->nic_of_gpu || !d->dist_of_gpu)
		return -ENOMEM;
	for (g = 0; g < d->topo.ngpus; g++)
		d->nic_of_gpu[g] = gdrb_topo_nearest_nic(&d->topo, g, false, &d->dist_of_gpu[g]);
	/* CUDA's first call brings up the driver and every GPU: seconds without persistence mode. */
	if (d->ask_cuda)
		d->cuda_ok = gdrb_cuda_inventory(&d->cuda, d->cuda_why, sizeof(d->cuda_why)) == 0;
	/* Asked with --fast too: a link down is a health check's question (docs/doctor.md, NVLink). */
	d->ask_nvml = d->live;
	if (d->ask_nvml)
		gdrb_nvml_read(&d->nvml);
	if (d->live) {
		d->verbs_ok = gdrb_rdma_devices(d->verbs_devs, GDRB_DOC_MAX_VERBS_DEVS, &d->nverbs,
						d->verbs_why, sizeof(d->verbs_why)) == 0;
	}
	return 0;
}

/* The checks in the order they run and print; the id is the position + 1. */
static const struct {
	const char *name;       /* stable, for scripts */
	const char *title;
	void (*run)(struct gdrb_doctor *, struct gdrb_doc_check *);
} checks[GDRB_DOC_NCHECKS] = {
	{ "rdma-ports", "RDMA devices and ports", check_rdma_ports },
	{ "roce-gid", "RoCE v2 GID", check_roce_gid },
	{ "gpus", "GPUs, driver and runtime", check_gpus },
	{ "gpu-registration", "GPU memory registration", check_registration },
	{ "peermem-dmabuf", "nvidia_peermem module, dma-buf support", check_modules },
	{ "memlock", "RLIMIT_MEMLOCK", check_memlock },
	{ "iommu", "IOMMU mode", check_iommu },
	{ "acs", "PCIe ACS between GPU and NIC", check_acs },
	{ "topology", "GPU-NIC distance", check_topology },
	{ "pcie-links", "PCIe link speed and width", check_links },
	{ "bar1", "GPU BAR1 size", check_bar1 },
};

const char *gdrb_doctor_check_name(int id)
{
	return id >= 1 && id <= GDRB_DOC_NCHECKS ? checks[id - 1].name : "?";
}

void gdrb_doctor_run(struct gdrb_doctor *d)
{
	int i;

	for (i = 0; i < GDRB_DOC_NCHECKS; i++) {
		struct gdrb_doc_check *c = &d->checks[i];

		c->id = i + 1;
		c->name = checks[i].name;
		c->title = checks[i].title;
		c->v = GDRB_DOC_SKIP;
		checks[i].run(d, c);
	}
}

void gdrb_doctor_free(struct gdrb_doctor *d)
{
	int i;

	for (i = 0; i < GDRB_DOC_NCHECKS; i++)
		free(d->checks[i].items);
	free(d->nic_of_gpu);
	free(d->dist_of_gpu);
	gdrb_topo_free(&d->topo);
}

enum gdrb_doc_verdict gdrb_doctor_verdict(const struct gdrb_doctor *d)
{
	enum gdrb_doc_verdict v = GDRB_DOC_PASS;
	int i;

	for (i = 0; i < GDRB_DOC_NCHECKS; i++)
		if (d->checks[i].v > v)
			v = d->checks[i].v;
	return v;
}
