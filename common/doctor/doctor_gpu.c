/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks 3 and 11 of gdrb_doctor: the GPUs, their driver and runtime, and their BAR1. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_doctor.h"

#include "doctor_int.h"

/* BAR1 below this (with GPU memory unknown) limits what GPUDirect can map at once. */
#define BAR1_SMALL (1ull << 30)

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

/* 3. GPUs visible, driver and runtime versions */
void gdrb_doc_check_gpus(struct gdrb_doctor *d, struct gdrb_doc_check *c)
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
	gdrb_doc_evidence(c, "%zu NVIDIA GPU%s on the PCI bus; %s; %s", t->ngpus, t->ngpus == 1 ? "" : "s",
			  nv, cuda);

	if (!t->ngpus)
		gdrb_doc_add(c, d->cuda_ok ? GDRB_DOC_WARN : GDRB_DOC_FAIL, GDRB_FIX_GPU_MISSING,
			     "no NVIDIA GPU (vendor 0x10de, class 0x0300/0x0302) under %s/bus/pci/devices",
			     d->sysfs_root);
	if (!nd->nv_version[0] && !nd->mod_nvidia)
		gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_GPU_DRIVER, "%s", nv);
	if (d->ask_cuda && !d->cuda_ok)
		gdrb_doc_add(c, GDRB_DOC_FAIL, nd->nv_version[0] ? GDRB_FIX_CUDA_DRIVER : GDRB_FIX_GPU_DRIVER, "CUDA: %s", d->cuda_why);
	for (g = 0; g < t->ngpus; g++) {
		const struct gdrb_pci_fn *fn = &t->gpus[g].pci;
		int ci = gdrb_doctor_cuda_index(d, fn->bdf);
		bool bound = !strcmp(fn->driver, "nvidia");

		gdrb_doc_add(c, bound ? GDRB_DOC_PASS : GDRB_DOC_FAIL, GDRB_FIX_GPU_DRIVER,
			     "%s device 0x%04x%s%s, driver %s, NUMA node %d%s", fn->bdf, fn->device,
			     ci >= 0 ? " " : "", ci >= 0 ? d->cuda.devs[ci].name : "",
			     fn->driver[0] ? fn->driver : "none", fn->numa_node,
			     !d->cuda_ok ? "" : ci >= 0 ? ", visible to CUDA" : ", not visible to CUDA");
	}
	if (d->cuda_ok && d->cuda.count < (int)t->ngpus)
		gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_CUDA_VISIBLE,
			     "CUDA sees %d of the %zu GPUs", d->cuda.count, t->ngpus);
	gdrb_doc_nvlink_items(d, c);
}

/* 11. GPU BAR1 size against GPU memory */
void gdrb_doc_check_bar1(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	size_t g;

	for (g = 0; g < t->ngpus; g++) {
		const struct gdrb_topo_gpu *gpu = &t->gpus[g];
		int ci = gdrb_doctor_cuda_index(d, gpu->pci.bdf);
		char size[32], bar[64], mem[32];

		gdrb_doc_human_bytes(size, sizeof(size), (double)gpu->bar1_bytes);
		snprintf(bar, sizeof(bar), "%s in region %d", size, gpu->bar1_region);
		if (!gpu->bar1_bytes)
			gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_BAR1_NONE, "GPU %s: BAR1 not assigned (its resource file has no "
				     "prefetchable memory BAR after BAR0)", gpu->pci.bdf);
		else if (ci >= 0 && gpu->bar1_bytes < d->cuda.devs[ci].total_mem)
			gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_BAR1_SMALL, "GPU %s: BAR1 %s < %s of memory: at most %s can "
				     "be registered at once", gpu->pci.bdf, bar,
				     gdrb_doc_human_bytes(mem, sizeof(mem), (double)d->cuda.devs[ci].total_mem), size);
		else if (ci >= 0)
			gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "GPU %s: BAR1 %s >= %s of memory", gpu->pci.bdf, bar,
				     gdrb_doc_human_bytes(mem, sizeof(mem), (double)d->cuda.devs[ci].total_mem));
		else if (gpu->bar1_bytes < BAR1_SMALL)
			gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_BAR1_SMALL, "GPU %s: BAR1 %s (GPU memory unknown): at most "
				     "%s can be registered at once", gpu->pci.bdf, bar, size);
		else
			gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "GPU %s: BAR1 %s (GPU memory unknown%s)", gpu->pci.bdf,
				     bar, d->ask_cuda ? ": not visible to CUDA" : d->live ? ": CUDA not asked (--fast)" :
				     ": fixture tree");
	}
	if (!t->ngpus)
		gdrb_doc_evidence(c, "no GPU");
	else
		gdrb_doc_evidence(c, "%zu GPUs: %d with BAR1 >= memory (or >= 1 GiB), %d small, %d unassigned",
				  t->ngpus, gdrb_doc_count(c, GDRB_DOC_PASS), gdrb_doc_count(c, GDRB_DOC_WARN),
				  gdrb_doc_count(c, GDRB_DOC_FAIL));
}
