/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checks 4 to 7 of gdrb_doctor, what registering GPU memory with a NIC needs: the registration
 * itself attempted, the kernel modules (peer memory, dma-buf), RLIMIT_MEMLOCK and the IOMMU.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gdrb_doctor.h"
#include "gdrb_memlock.h"
#include "gdrb_reg.h"
#include "gdrb_size.h"

#include "doctor_int.h"

/* Bytes of device memory each registration attempt uses. */
#define PROBE_BYTES (2u << 20)

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
void gdrb_doc_check_registration(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	static const enum gdrb_reg_mode modes[] = { GDRB_REG_DMABUF, GDRB_REG_PEERMEM };
	int nics = 0, ok_nics = 0;
	size_t v, n;
	int m;

	if (!d->live) {
		gdrb_doc_evidence(c, "not attempted: a fixture tree is not this node (registration needs "
				  "the live node)");
		return;
	}
	if (d->fast) {
		gdrb_doc_evidence(c, "not attempted: --fast");
		return;
	}
	if (!gdrb_reg_built()) {
		gdrb_doc_evidence(c, "not attempted: gdrbench was built without libibverbs or without CUDA");
		return;
	}
	if (!d->verbs_ok || !d->nverbs) {
		gdrb_doc_evidence(c, "not attempted: no RDMA device to register with (check 1)");
		return;
	}
	if (!d->cuda_ok) {
		gdrb_doc_evidence(c, "not attempted: no usable GPU (check 3)");
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
			gdrb_doc_add(c, rc[m] == 0 ? GDRB_DOC_PASS : worked ? GDRB_DOC_WARN : GDRB_DOC_FAIL, GDRB_FIX_GPU_REGISTRATION,
				     "%s with GPU %d (%s): %s: %s", d->verbs_devs[v], gpu,
				     d->cuda.devs[gpu].pci_bus_id,
				     modes[m] == GDRB_REG_DMABUF ? "dma-buf" : "peer memory", att[m].why);
	}
	gdrb_doc_evidence(c, "%d of %d RDMA devices registered GPU memory (%u KiB each, dma-buf and peer "
			  "memory tried separately)", ok_nics, nics, PROBE_BYTES / 1024);
}

/* 5. nvidia_peermem loaded; dma-buf support in kernel and driver */
void gdrb_doc_check_modules(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_node *nd = &d->node;
	char why[256] = "";
	bool peermem = nd->mod_nvidia_peermem || nd->mod_nv_peer_mem;
	int kernel_ok = gdrb_kernel_at_least(nd->kernel, 5, 12);
	bool dmabuf = kernel_ok == 1 && nd->nv_open == 1 && nd->nv_major >= 515;
	size_t used = 0;

	if (!nd->mod_nvidia && !nd->nv_version[0]) {
		gdrb_doc_evidence(c, "no NVIDIA kernel driver loaded (check 3)");
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
		gdrb_doc_add(c, GDRB_DOC_SKIP, GDRB_FIX_NONE, "module list unreadable (no %s/modules, no %s/module)",
			     d->procfs_root, d->sysfs_root);
	else
		gdrb_doc_add(c, peermem ? GDRB_DOC_PASS : dmabuf ? GDRB_DOC_WARN : GDRB_DOC_FAIL,
			     dmabuf ? GDRB_FIX_PEERMEM : GDRB_FIX_PEERMEM_OR_DMABUF, "%s",
			     nd->mod_nvidia_peermem ? "nvidia_peermem loaded" :
			     nd->mod_nv_peer_mem ? "nv_peer_mem loaded" :
			     dmabuf ? "neither nvidia_peermem nor nv_peer_mem is loaded: only dma-buf "
				      "registration is possible" :
				      "neither nvidia_peermem nor nv_peer_mem is loaded");
	if (dmabuf)
		gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "dma-buf: kernel %s, NVIDIA %s open kernel modules",
			     nd->kernel, nd->nv_version);
	else
		gdrb_doc_add(c, peermem ? GDRB_DOC_PASS : GDRB_DOC_FAIL, GDRB_FIX_PEERMEM_OR_DMABUF, "dma-buf: unavailable: %s",
			     why[0] ? why + 2 : "reason unknown");
	gdrb_doc_evidence(c, "peer memory: %s; dma-buf: %s",
			  !nd->modules_readable ? "unknown" : peermem ? "yes" : "no", dmabuf ? "yes" : "no");
}

/* 6. RLIMIT_MEMLOCK large enough for what the runs asked about register */
void gdrb_doc_check_memlock(struct gdrb_doctor *d, struct gdrb_doc_check *c)
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
		gdrb_doc_evidence(c, "not known: %s/self/limits %s; need %s (-m %s, --mem %s)", d->procfs_root,
				  nd->memlock_why[0] ? nd->memlock_why : "not read", total, max,
				  gdrb_mem_kind_name(d->mem));
		return;
	}
	if (nd->memlock_unlimited) {
		gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "RLIMIT_MEMLOCK unlimited (%s)", src);
		gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "%s", text);
		gdrb_doc_evidence(c, "unlimited; need %s (-m %s, --mem %s)", total, max,
				  gdrb_mem_kind_name(d->mem));
		return;
	}
	gdrb_doc_human_bytes(size, sizeof(size), (double)nd->memlock_bytes);
	below = need.overflow || nd->memlock_bytes < need.bytes;
	/* A finite limit that covers the need still stops larger runs and other libraries. */
	v = !below ? GDRB_DOC_WARN : nd->cap_ipc_lock ? GDRB_DOC_WARN : GDRB_DOC_FAIL;
	gdrb_doc_add(c, v, GDRB_FIX_MEMLOCK, "RLIMIT_MEMLOCK %s (%s) %s", size, src,
		     below ? "is below the need: registering fails with ENOMEM" :
			     "covers the need; registering more than that fails with ENOMEM");
	gdrb_doc_add(c, below ? v : GDRB_DOC_PASS, GDRB_FIX_MEMLOCK, "%s", text);
	if (nd->cap_ipc_lock)
		gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_MEMLOCK,
			     "this process has CAP_IPC_LOCK and is exempt; unprivileged jobs are not");
	/* The fix names the figure this node needs. */
	if (need.overflow)
		snprintf(c->fix, sizeof(c->fix), "raise it to unlimited (no finite limit covers the need): %s",
			 gdrb_doc_fix_text(GDRB_FIX_MEMLOCK));
	else
		snprintf(c->fix, sizeof(c->fix), "raise it to unlimited (at least %s here): %s", total,
			 gdrb_doc_fix_text(GDRB_FIX_MEMLOCK));
	gdrb_doc_evidence(c, "%s; need %s (-m %s, --mem %s)%s", size, total, max, gdrb_mem_kind_name(d->mem),
			  nd->cap_ipc_lock ? ", exempt here (CAP_IPC_LOCK)" : "");
}

/* 7. IOMMU mode */
void gdrb_doc_check_iommu(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_node *nd = &d->node;

	gdrb_doc_add(c, nd->iommu == GDRB_IOMMU_TRANSLATED ? GDRB_DOC_FAIL : GDRB_DOC_PASS, GDRB_FIX_IOMMU, "%s: %s",
		     gdrb_iommu_mode_name(nd->iommu), nd->iommu_why);
	gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "%d IOMMU units in %s/class/iommu; kernel command line: %s",
		     nd->iommu_units, d->sysfs_root, nd->iommu_args[0] ? nd->iommu_args : "no IOMMU options");
	gdrb_doc_evidence(c, "%s (%s)", gdrb_iommu_mode_name(nd->iommu), nd->iommu_why);
}
