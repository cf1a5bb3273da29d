/* SPDX-License-Identifier: BSD-3-Clause */
/* Part of check 3 of gdrb_doctor: the NVLink state and speed of each GPU, as NVML gives them. */
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

unsigned gdrb_doc_nvlink_fastest(const struct gdrb_nvml_gpu *gp)
{
	unsigned top = 0;
	size_t l;

	for (l = 0; l < GDRB_NVLINK_MAX_LINKS; l++)
		if (gp->state[l] == GDRB_NVLINK_UP && gp->speed_mbps[l] > top)
			top = gp->speed_mbps[l];
	return top;
}

/*
 * The speed item of a GPU with links up: WARN naming each link slower than the GPU's fastest
 * (a link trained down carries less), else SKIP where a link's speed is not known (never a PASS
 * on a speed not read), else PASS: every link up at one speed.
 */
static void speed_item(struct gdrb_doc_check *c, const struct gdrb_nvml_gpu *gp, const char *pci)
{
	char slower[320] = "", unknown[96] = "", rest[256] = "";
	size_t l, n = 0, u = 0;
	unsigned top = gdrb_doc_nvlink_fastest(gp);
	int nslow = 0;

	for (l = 0; l < GDRB_NVLINK_MAX_LINKS; l++) {
		if (gp->state[l] != GDRB_NVLINK_UP)
			continue;
		if (!gp->speed_mbps[l]) {
			if (u < sizeof(unknown))
				u += (size_t)snprintf(unknown + u, sizeof(unknown) - u, "%s%zu", u ? ", " : "", l);
		} else if (gp->speed_mbps[l] < top) {
			nslow++;
			if (n < sizeof(slower))
				n += (size_t)snprintf(slower + n, sizeof(slower) - n, "%s%zu at %u MB/s", n ? ", " : "",
						      l, gp->speed_mbps[l]);
		}
	}
	if (gp->speed_unknown)
		snprintf(rest, sizeof(rest), "; speed not known for link%s %s (%s)", gp->speed_unknown == 1 ? "" : "s",
			 unknown, gp->speed_why);
	if (nslow)
		gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_NVLINK_SLOW,
			     "NVLink speed %s %s: %d of %d links up slower than the GPU's fastest, %u MB/s: %s%s", pci,
			     gp->name, nslow, gp->up, top, slower, rest);
	else if (!top)
		gdrb_doc_add(c, GDRB_DOC_SKIP, GDRB_FIX_NONE, "NVLink speed %s %s: not known (%s)", pci, gp->name,
			     gp->speed_why);
	else if (gp->speed_unknown)
		gdrb_doc_add(c, GDRB_DOC_SKIP, GDRB_FIX_NONE, "NVLink speed %s %s: %d of %d links up at %u MB/s%s", pci,
			     gp->name, gp->up - gp->speed_unknown, gp->up, top, rest);
	else
		gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "NVLink speed %s %s: %d links up at %u MB/s each", pci,
			     gp->name, gp->up, top);
}

/*
 * One item per GPU NVML lists: FAIL when some of its NVLinks are down and others up (a link
 * lost on a board whose GPUs are wired together), WARN when all are down (a PCIe card without
 * its NVLink bridge, or a board with every link lost: the SKU inventory tells which) or a
 * link's state could not be read; a GPU without NVLink passes. A GPU with links up has a
 * second item, their speed (speed_item). NVML absent: said, not judged.
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
		if (gp->up)
			speed_item(c, gp, pci);
	}
}
