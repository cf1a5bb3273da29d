/* SPDX-License-Identifier: BSD-3-Clause */
/* A matrix of figures as text (gdrb_matrix.h). */
#include "config.h"

#include "gdrb_matrix.h"

static void label(const struct gdrb_matrix *m, size_t i, char *buf, size_t len)
{
	if (m->number)
		snprintf(buf, len, "%s%u", m->name, m->number[i]);
	else
		snprintf(buf, len, "%s%zu", m->name, i);
}

void gdrb_matrix_print(FILE *out, const struct gdrb_matrix *m)
{
	char name[GDRB_MATRIX_CELL], cell[GDRB_MATRIX_CELL];
	size_t i, j;

	fprintf(out, "%s%*s", m->prefix, m->label_width, m->corner);
	for (j = 0; j < m->n; j++) {
		label(m, j, name, sizeof(name));
		fprintf(out, "%s%*s", m->sep, m->width, name);
	}
	fputc('\n', out);
	for (i = 0; i < m->n; i++) {
		label(m, i, name, sizeof(name));
		fprintf(out, "%s%*s", m->prefix, m->label_width, name);
		for (j = 0; j < m->n; j++) {
			cell[0] = '\0';
			m->cell(m->arg, i, j, cell, sizeof(cell));
			fprintf(out, "%s%*s", m->sep, m->width, cell);
		}
		fputc('\n', out);
	}
}
