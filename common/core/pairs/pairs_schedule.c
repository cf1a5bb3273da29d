/* SPDX-License-Identifier: BSD-3-Clause */
/* All pairs' schedule, pure: the shifts --rounds samples and the ping-pong phases of a round. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>

#include "gdrb_log.h"
#include "gdrb_pairs.h"

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

int gdrb_pairs_shifts(unsigned m, unsigned k, uint64_t seed, unsigned *out)
{
	unsigned i, all = m - 1;

	if (m < 2 || k > all)
		return GDRB_ERR_USAGE;
	for (i = 0; i < all; i++)
		out[i] = i + 1;
	if (k == 0 || k == all)
		return (int)all;
	for (i = 0; i < k; i++) {       /* partial Fisher-Yates: the first k are the sample */
		unsigned j = i + (unsigned)(splitmix(&seed) % (all - i)), t = out[i];

		out[i] = out[j];
		out[j] = t;
	}
	qsort(out, k, sizeof(*out), cmp_uint);
	return (int)k;
}

/*
 * Pair i of round k is (i, i + k): every rank is in two pairs (the cycles of
 * the shift), so a ping-pong per pair at once would time two exchanges per
 * rank. Greedy colouring of the pairs in i order puts each in the first
 * phase where neither of its ranks is busy: at most 3 phases (degree 2),
 * O(m). 0 when out of memory.
 */
unsigned gdrb_pairs_phases(unsigned m, unsigned k, unsigned *phase)
{
	unsigned char *busy = calloc(m, 1);     /* bit p: the rank is in a pair of phase p */
	unsigned nphases = 0, i;

	if (!busy)
		return 0;
	for (i = 0; i < m; i++) {
		unsigned a = i, b = (i + k) % m, ph = 0;

		while ((busy[a] | busy[b]) & (1u << ph))
			ph++;
		busy[a] |= (unsigned char)(1u << ph);
		busy[b] |= (unsigned char)(1u << ph);
		phase[i] = ph;
		if (ph + 1 > nphases)
			nphases = ph + 1;
	}
	free(busy);
	return nphases;
}
