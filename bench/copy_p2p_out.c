/* SPDX-License-Identifier: BSD-3-Clause */
/* gdrb_copy_bw --p2p's output: the header's description and each size's matrices (copy_p2p.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "copy_p2p_int.h"
#include "gdrb_matrix.h"
#include "gdrb_report.h"
#include "gdrb_size.h"

/* " (--p2p-gpus: gpu0, gpu2, gpu5 of the node's 8)" where a list chose them; else nothing. */
static void chosen(const struct gdrb_ctx *c, char *buf, size_t len)
{
	const struct p2p *p = copy_p2p_state(c);
	size_t at;
	int i;

	buf[0] = '\0';
	if (p->ngpu == c->gpu.count)
		return;
	at = (size_t)snprintf(buf, len, " (--p2p-gpus:");
	for (i = 0; i < p->ngpu && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s gpu%u", i ? "," : "", p->dev[i]);
	if (at < len)
		snprintf(buf + at, len - at, " of the node's %d)", c->gpu.count);
}

void copy_p2p_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	const struct p2p *p = copy_p2p_state(c);
	const char *sep = "; without it: ";
	char which[P2P_MAX_GPUS * 8 + 64];
	size_t at;
	int i, j, pairs = p->ngpu * (p->ngpu - 1), peers = gdrb_peer_count(&p->peers);

	chosen(c, which, sizeof(which));
	at = (size_t)snprintf(buf, len,
			      "GPU to GPU (--p2p %s): %d GPUs%s, every ordered pair (the CSV pair gpuI->gpuJ); each iteration one copy of the size (with bidir the opposite one at once), timed on the host clock from its enqueue to the end of its stream (cudaStreamSynchronize); staged fragments %zu KiB through %u pinned slots per direction; peer access (cudaDeviceCanAccessPeer): %d of %d ordered pairs",
			      copy_p2p_mode_names[p->mode], p->ngpu, which, P2P_CHUNK >> 10, P2P_SLOTS, peers, pairs);
	for (i = 0; i < p->ngpu; i++)
		for (j = 0; j < p->ngpu; j++) {
			if (i == j || p->peers.can[i][j] || at >= len)
				continue;
			at += (size_t)snprintf(buf + at, len - at, "%sgpu%u->gpu%u", sep, p->dev[i], p->dev[j]);
			sep = ", ";
		}
}

/* A matrix of a size: path id's figures, or their ratio to path over's (-1: none). */
struct p2p_matrix {
	const struct p2p *p;
	int id, over;
};

static const char *shown_status(const char *st)
{
	return strcmp(st, GDRB_ST_INVALID) ? st : "INVALID";
}

static void p2p_cell(const void *arg, size_t row, size_t col, char *buf, size_t len)
{
	const struct p2p_matrix *m = arg;
	const char *st = m->p->status[m->id][row][col];
	const char *ost = m->over >= 0 ? m->p->status[m->over][row][col] : GDRB_ST_OK;
	double v = m->p->bw[m->id][row][col];

	if (row == col)
		snprintf(buf, len, "-");
	else if (!st || !strcmp(st, GDRB_ST_UNSUPPORTED) || !ost || !strcmp(ost, GDRB_ST_UNSUPPORTED))
		snprintf(buf, len, "n/a");
	else if (strcmp(st, GDRB_ST_OK))
		snprintf(buf, len, "%s", shown_status(st));
	else if (strcmp(ost, GDRB_ST_OK))
		snprintf(buf, len, "%s", shown_status(ost));
	else
		snprintf(buf, len, "%.2f", m->over >= 0 ? v / m->p->bw[m->over][row][col] : v);
}

/* One matrix of a size under its title: from GPU (rows) to GPU (columns). */
static void print_matrix(const struct p2p *p, const char *title, int id, int over)
{
	const struct p2p_matrix arg = { p, id, over };
	const struct gdrb_matrix m = { .n = (size_t)p->ngpu, .prefix = "# ", .corner = "", .name = "gpu",
		.number = p->dev, .sep = " ", .label_width = -8, .width = 11, .cell = p2p_cell, .arg = &arg };

	printf("# %s\n", title);
	gdrb_matrix_print(stdout, &m);
}

void copy_p2p_reported(struct gdrb_ctx *c, size_t size, size_t variant, const char *status, double bw_GBps)
{
	struct p2p *p = copy_p2p_state(c);
	char sz[32], title[160];
	int b;

	if (!c->nsubjects || !p)
		return;
	p->status[c->variants[variant].id][p->from][p->to] = status;
	p->bw[c->variants[variant].id][p->from][p->to] = bw_GBps;
	if (c->subject + 1 < c->nsubjects || variant + 1 < c->nvariants)
		return;
	gdrb_size_format(size, sz, sizeof(sz));
	for (b = 0; b <= PATH_BIDIR; b += PATH_BIDIR) {
		if (!(p->mode == P2P_BOTH || (p->mode == P2P_BIDIR) == (b != 0)))
			continue;
		snprintf(title, sizeof(title), "%s%s: direct (peer access) GB/s, from GPU (row) to GPU (column)",
			 sz, b ? ", both directions at once, each direction's" : "");
		print_matrix(p, title, b, -1);
		snprintf(title, sizeof(title), "%s%s: staged (through pinned host memory) GB/s", sz, b ? " bidir" : "");
		print_matrix(p, title, b | PATH_STAGED, -1);
		snprintf(title, sizeof(title), "%s%s: direct / staged", sz, b ? " bidir" : "");
		print_matrix(p, title, b, b | PATH_STAGED);
	}
	(void)fflush(stdout);
}
