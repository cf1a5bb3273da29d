/* SPDX-License-Identifier: BSD-3-Clause */
/* gdrb_doctor output: the table for people, one summary line per node (JSON: doctor_json.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_doctor.h"
#include "gdrb_json.h"
#include "gdrb_log.h"

#include "doctor_int.h"

/* Where evidence starts in the table: "NN name.............. VERDICT ". */
#define EVIDENCE_COL 31

void gdrb_doc_counts(const enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS], int n[4])
{
	int i;

	memset(n, 0, 4 * sizeof(*n));
	for (i = 0; i < GDRB_DOC_NCHECKS; i++)
		n[v[i]]++;
}

void gdrb_doc_verdicts(const struct gdrb_doctor *d, enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS])
{
	int i;

	for (i = 0; i < GDRB_DOC_NCHECKS; i++)
		v[i] = d->checks[i].v;
}

void gdrb_doctor_summary_of(const char *host, const enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS], char *buf,
		       size_t len)
{
	enum gdrb_doc_verdict worst = GDRB_DOC_PASS;
	size_t used;
	int n[4], i;

	gdrb_doc_counts(v, n);
	for (i = 0; i < GDRB_DOC_NCHECKS; i++)
		if (v[i] > worst)
			worst = v[i];
	snprintf(buf, len, "%s: %s (%d PASS, %d WARN, %d FAIL, %d SKIP)", host,
		 gdrb_doc_verdict_name(worst), n[GDRB_DOC_PASS], n[GDRB_DOC_WARN], n[GDRB_DOC_FAIL], n[GDRB_DOC_SKIP]);
	for (i = 0; i < GDRB_DOC_NCHECKS; i++) {
		used = strlen(buf);
		if (v[i] >= GDRB_DOC_WARN && used < len)
			snprintf(buf + used, len - used, " %d:%s=%s", i + 1, gdrb_doctor_check_name(i + 1),
				 gdrb_doc_verdict_name(v[i]));
	}
}

void gdrb_doctor_summary(const struct gdrb_doctor *d, const char *host, char *buf, size_t len)
{
	enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS];

	gdrb_doc_verdicts(d, v);
	gdrb_doctor_summary_of(host, v, buf, len);
}

/*
 * Append s to line (len bytes, NUL-terminated) as printable ASCII that a shell word, an
 * argument of scontrol and NHC's die() carry as it is: control bytes and bytes past 0x7e
 * become '?', quotes, backslash, backquote and dollar '_'.
 */
static void line_put(char *line, size_t len, const char *s)
{
	size_t used = strlen(line);

	for (; *s && used + 1 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		line[used++] = ch < 0x20 || ch > 0x7e ? '?' : strchr("\"'\\`$", ch) ? '_' : (char)ch;
	}
	line[used] = '\0';
}

/* The first FAIL item of c says what failed most precisely; its evidence when it has none. */
static const char *fail_text(const struct gdrb_doc_check *c)
{
	size_t k;

	for (k = 0; k < c->nitems; k++)
		if (c->items[k].v == GDRB_DOC_FAIL)
			return c->items[k].text;
	return c->evidence;
}

void gdrb_doctor_print_line(const struct gdrb_doctor *d, FILE *f)
{
	enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS];
	char line[GDRB_DOC_LINE_MAX + 1], more[GDRB_DOC_LINE_MAX + 1] = "";
	const struct gdrb_doc_check *first = NULL;
	int n[4], i;

	gdrb_doc_verdicts(d, v);
	gdrb_doc_counts(v, n);
	/* The other checks that FAIL, or those that WARN on a healthy node, by name. */
	for (i = 0; i < GDRB_DOC_NCHECKS; i++) {
		const struct gdrb_doc_check *c = &d->checks[i];

		if (c->v == GDRB_DOC_FAIL && !first) {
			first = c;
			continue;
		}
		if (c->v != (first || n[GDRB_DOC_FAIL] ? GDRB_DOC_FAIL : GDRB_DOC_WARN))
			continue;
		line_put(more, sizeof(more), more[0] ? ", " : first ? "; also FAIL: " : " WARN: ");
		line_put(more, sizeof(more), c->name);
	}
	if (first) {
		snprintf(line, sizeof(line), "gdrbench: FAIL %s: ", first->name);
		/* The evidence is cut so that the names of the other failing checks stay on the line. */
		line_put(line, sizeof(line) - strlen(more), fail_text(first));
	} else {
		snprintf(line, sizeof(line), "gdrbench: OK (%d PASS, %d WARN, %d FAIL, %d SKIP)",
			 n[GDRB_DOC_PASS], n[GDRB_DOC_WARN], n[GDRB_DOC_FAIL], n[GDRB_DOC_SKIP]);
	}
	line_put(line, sizeof(line), more);
	fprintf(f, "%s\n", line);
	fflush(f);
}

/* s for the terminal (gdrb_text_put()), then the end of the line. */
static void text_line(FILE *f, const char *s)
{
	gdrb_text_put(f, s);
	fputc('\n', f);
}

void gdrb_doctor_print_table(const struct gdrb_doctor *d, FILE *f)
{
	char line[1024];
	size_t k;
	int i;

	/* Every text read from sysfs, procfs or the environment goes through gdrb_text_put(). */
	fprintf(f, "# gdrb_doctor (%s %s): GPUDirect RDMA preconditions on ", PACKAGE_NAME, PACKAGE_VERSION);
	gdrb_text_put(f, gdrb_host());
	fputs("\n# sysfs ", f);
	gdrb_text_put(f, d->sysfs_root);
	fputs(", procfs ", f);
	gdrb_text_put(f, d->procfs_root);
	fprintf(f, " (%s)\n", d->live ? "this node" : "fixture tree: libibverbs and CUDA not asked");
	fprintf(f, "#%2s %-17s %-8s %s\n", "", "check", "verdict", "evidence");
	for (i = 0; i < GDRB_DOC_NCHECKS; i++) {
		const struct gdrb_doc_check *c = &d->checks[i];

		fprintf(f, "%3d %-17s %-8s ", c->id, c->name, gdrb_doc_verdict_name(c->v));
		text_line(f, c->evidence);
		for (k = 0; k < c->nitems; k++) {
			fprintf(f, "%*s%-4s ", EVIDENCE_COL, "", gdrb_doc_verdict_name(c->items[k].v));
			text_line(f, c->items[k].text);
		}
		if (c->fix[0]) {
			fprintf(f, "%*sfix: ", EVIDENCE_COL, "");
			text_line(f, c->fix);
		}
	}
	gdrb_doctor_summary(d, gdrb_host(), line, sizeof(line));
	fputs("# ", f);
	text_line(f, line);
	fflush(f);
}

/* KEY: {"gts": 32, "width": 16}, a PCIe link's current speed and width; null where either is not known. */
