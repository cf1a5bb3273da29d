/* SPDX-License-Identifier: BSD-3-Clause */
/* Part of check 3 of gdrb_doctor: the NVLink state of each GPU, as NVML gives it. */
#include "config.h"

#include <stdio.h>

#include "gdrb_doctor.h"

#include "doctor_int.h"

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
void gdrb_doc_nvlink_items(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_nvml *nv = &d->nvml;
	char down[96], unread[96], ver[24], far[40];
	size_t g;

	if (!d->ask_nvml)
		return;
	if (!nv->known) {
		gdrb_doc_add(c, GDRB_DOC_SKIP, GDRB_FIX_NONE, "NVLink not known: %s", nv->why);
		return;
	}
	if (nv->reported > nv->ngpus)
		gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_NVLINK_UNREAD, "NVML counts %u GPUs; the first %zu are read",
			     nv->reported, nv->ngpus);
	for (g = 0; g < nv->ngpus; g++) {
		const struct gdrb_nvml_gpu *gp = &nv->gpus[g];
		const char *v = gdrb_nvlink_version_text(gp->version);
		const char *pci = gp->pci[0] ? gp->pci : "(PCI address not read)";
		enum gdrb_doc_verdict verdict = GDRB_DOC_PASS;

		if (!gp->links && gp->why[0]) {
			gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_NVLINK_UNREAD, "NVLink of NVML GPU %zu %s not read: %s", g, pci, gp->why);
			continue;
		}
		if (!gp->links) {
			gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "NVLink %s %s: no NVLink (NVML lists none)", pci, gp->name);
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
		gdrb_doc_add(c, verdict, verdict == GDRB_DOC_FAIL ? GDRB_FIX_NVLINK_DOWN : !gp->up && !gp->unread ? GDRB_FIX_NVLINK_ALL_DOWN : GDRB_FIX_NVLINK_UNREAD,
			     "NVLink %s %s: %d of %d NVLinks up%s%s%s%s, %s, %d to an NVSwitch, %d to a GPU%s%s%s",
			     pci, gp->name, gp->up, gp->links, gp->down ? ", down: " : "",
			     links_in(gp, GDRB_NVLINK_DOWN, down, sizeof(down)), gp->unread ? ", not read: " : "",
			     links_in(gp, GDRB_NVLINK_UNREAD, unread, sizeof(unread)), ver, gp->to_switch,
			     gp->to_gpu, far, gp->why[0] ? "; " : "", gp->why);
	}
}
