/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A square matrix of figures from one endpoint (rows) to another (columns),
 * laid out as text: the GPU-to-GPU copies' matrices (gdrb_copy_bw --p2p), the
 * all-pairs matrices on stdout and in their CSV files. The caller says what a
 * cell holds; the layout (names, separators, padding) is the same for all.
 */
#ifndef GDRB_MATRIX_H
#define GDRB_MATRIX_H

#include <stddef.h>
#include <stdio.h>

/* Room a cell's text has: a figure, "n/a", "-", a row status ("invalid-data"). */
#define GDRB_MATRIX_CELL 64

struct gdrb_matrix {
	size_t n;               /* rows, and as many columns */
	const char *prefix;     /* each line's start: "# " in a comment block, "" */
	const char *corner;     /* the header line's first cell, above the row names */
	const char *name;       /* before a row's or column's number: "gpu" (gpu0, gpu1), "" */
	const unsigned *number; /* row and column i's number in its name; NULL: i */
	const char *sep;        /* before each column's cell: " ", "," */
	int label_width;        /* the row names' column: negative left-aligns, 0 does not pad */
	int width;              /* every other column, right-aligned; 0 does not pad */
	/* Cell (row, col)'s text into buf (GDRB_MATRIX_CELL bytes): a figure or what stands for it. */
	void (*cell)(const void *arg, size_t row, size_t col, char *buf, size_t len);
	const void *arg;
};

/* The header line (corner, then each column's name), then a line per row; the caller checks out's errors. */
void gdrb_matrix_print(FILE *out, const struct gdrb_matrix *m);

#endif
