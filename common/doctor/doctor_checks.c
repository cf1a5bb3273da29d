/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdrb_doctor's checks in the order they run, and what each check file shares: a check
 * records what it read (evidence), its findings (items) with a verdict each, and a fix.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_doctor.h"

#include "doctor_int.h"

#define GIB (1024.0 * 1024 * 1024)
#define MIB (1024.0 * 1024)

const char *gdrb_doc_verdict_name(enum gdrb_doc_verdict v)
{
	static const char *const names[] = { "SKIP", "PASS", "WARN", "FAIL" };

	return names[v];
}

void gdrb_doc_evidence(struct gdrb_doc_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->evidence, sizeof(c->evidence), fmt, ap);
	va_end(ap);
}

void gdrb_doc_add(struct gdrb_doc_check *c, enum gdrb_doc_verdict v, enum gdrb_doc_fix fix, const char *fmt, ...)
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

int gdrb_doc_count(const struct gdrb_doc_check *c, enum gdrb_doc_verdict v)
{
	size_t i;
	int n = 0;

	for (i = 0; i < c->nitems; i++)
		n += c->items[i].v == v;
	return n;
}

char *gdrb_doc_human_bytes(char *buf, size_t len, double bytes)
{
	if (bytes >= GIB)
		snprintf(buf, len, "%g GiB", bytes / GIB);
	else if (bytes >= MIB)
		snprintf(buf, len, "%g MiB", bytes / MIB);
	else
		snprintf(buf, len, "%g KiB", bytes / 1024);
	return buf;
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
	{ "rdma-ports", "RDMA devices and ports", gdrb_doc_check_rdma_ports },
	{ "roce-gid", "RoCE v2 GID", gdrb_doc_check_roce_gid },
	{ "gpus", "GPUs, driver and runtime", gdrb_doc_check_gpus },
	{ "gpu-registration", "GPU memory registration", gdrb_doc_check_registration },
	{ "peermem-dmabuf", "nvidia_peermem module, dma-buf support", gdrb_doc_check_modules },
	{ "memlock", "RLIMIT_MEMLOCK", gdrb_doc_check_memlock },
	{ "iommu", "IOMMU mode", gdrb_doc_check_iommu },
	{ "acs", "PCIe ACS between GPU and NIC", gdrb_doc_check_acs },
	{ "topology", "GPU-NIC distance", gdrb_doc_check_topology },
	{ "pcie-links", "PCIe link speed and width", gdrb_doc_check_links },
	{ "bar1", "GPU BAR1 size", gdrb_doc_check_bar1 },
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
