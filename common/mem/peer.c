/* SPDX-License-Identifier: BSD-3-Clause */
/* Peer access between a node's GPUs (gdrb_peer.h), on gdrb_mem.h's CUDA calls. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_mem.h"
#include "gdrb_peer.h"

int gdrb_peer_open(struct gdrb_peer_map *m, const unsigned *dev, int n)
{
	char why[256];
	int i, j, can, rc;

	memset(m, 0, sizeof(*m));
	if (n < 0 || n > GDRB_PEER_MAX)
		return GDRB_ERR;
	m->n = n;
	memcpy(m->dev, dev, (size_t)n * sizeof(*dev));
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			if (i == j)
				continue;
			if (gdrb_cuda_peer_can((int)dev[i], (int)dev[j], &can))
				return GDRB_ERR;
			m->can[i][j] = can != 0;
		}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			if (i == j || !m->can[i][j])
				continue;
			rc = gdrb_cuda_peer_enable((int)dev[i], (int)dev[j], why, sizeof(why));
			if (rc == GDRB_ERR_UNSUPP && !(m->refused[i][j] = strdup(why)))
				return GDRB_ERR;
			if (rc && rc != GDRB_ERR_UNSUPP)
				return GDRB_ERR;
			m->enabled[i][j] = !rc;
		}
	return 0;
}

int gdrb_peer_count(const struct gdrb_peer_map *m)
{
	int i, j, count = 0;

	for (i = 0; i < m->n; i++)
		for (j = 0; j < m->n; j++)
			count += m->can[i][j];
	return count;
}

void gdrb_peer_why(const struct gdrb_peer_map *m, int a, int b, char *buf, size_t len)
{
	if (m->refused[a][b])
		snprintf(buf, len, "%s", m->refused[a][b]);
	else
		snprintf(buf, len,
			 "cudaDeviceCanAccessPeer(%u, %u) = 0: CUDA maps no peer path between these GPUs (no NVLink between them, and PCIe peer-to-peer off, blocked by ACS or an IOMMU, or across CPU sockets)",
			 m->dev[a], m->dev[b]);
}

void gdrb_peer_close(struct gdrb_peer_map *m)
{
	int i, j;

	for (i = 0; i < m->n; i++)
		for (j = 0; j < m->n; j++) {
			if (m->enabled[i][j])
				gdrb_cuda_peer_disable((int)m->dev[i], (int)m->dev[j]);
			free(m->refused[i][j]);
		}
	memset(m, 0, sizeof(*m));
}
