/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The record NCCL's log fills (struct gdrb_nccl_links, gdrb_nccl_log.h): its "+"-joined
 * sets of names, two records summed (saturating), the record checked as it arrives from
 * another rank, and the transports it names.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "nccl_log_int.h"

bool gdrb_nccl_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

bool gdrb_nccl_version_char(char c)
{
	return gdrb_nccl_name_char(c) || c == '+';
}

/* Whether the "+"-joined set already holds name. */
static bool set_has(const char *set, const char *name)
{
	size_t n = strlen(name);
	const char *p = set;

	while (*p) {
		const char *end = strchr(p, '+');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && memcmp(p, name, n) == 0)
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

void gdrb_nccl_set_add(char *set, size_t size, const char *name, size_t n)
{
	char clean[GDRB_NCCL_NAME_MAX + 1];
	size_t i, have = strlen(set);

	if (n > GDRB_NCCL_NAME_MAX)
		n = GDRB_NCCL_NAME_MAX;
	for (i = 0; i < n; i++)
		clean[i] = gdrb_nccl_name_char(name[i]) && !(i == 0 && name[i] == '.') ? name[i] : '_';
	clean[n] = '\0';
	if (n == 0 || set_has(set, clean) || set_has(set, "..."))
		return;
	if (have + (have ? 1 : 0) + n + 4 < size)
		snprintf(set + have, size - have, "%s%s", have ? "+" : "", clean);
	else
		snprintf(set + have, size - have, "%s...", have ? "+" : "");
}

/* Every name of src's set into dst's. */
static void set_merge(char *dst, size_t size, const char *src)
{
	const char *p = src;

	while (*p) {
		const char *end = strchr(p, '+');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == 3 && memcmp(p, "...", 3) == 0) {
			size_t have = strlen(dst);

			if (!set_has(dst, "..."))
				snprintf(dst + have, size - have, "%s...", have ? "+" : "");
		} else {
			gdrb_nccl_set_add(dst, size, p, len);
		}
		if (!end)
			break;
		p = end + 1;
	}
}

void gdrb_nccl_links_add(struct gdrb_nccl_links *sum, const struct gdrb_nccl_links *one)
{
	sum->net = sat_add(sum->net, one->net);
	sum->net_gdr = sat_add(sum->net_gdr, one->net_gdr);
	sum->net_pxn = sat_add(sum->net_pxn, one->net_pxn);
	sum->collnet = sat_add(sum->collnet, one->collnet);
	sum->collnet_gdr = sat_add(sum->collnet_gdr, one->collnet_gdr);
	sum->p2p = sat_add(sum->p2p, one->p2p);
	sum->shm = sat_add(sum->shm, one->shm);
	sum->other = sat_add(sum->other, one->other);
	sum->nvls = sat_add(sum->nvls, one->nvls);
	sum->unparsed = sat_add(sum->unparsed, one->unparsed);
	sum->rings = sat_add(sum->rings, one->rings);
	sum->lines = sat_add(sum->lines, one->lines);
	sum->skipped = sat_add(sum->skipped, one->skipped);
	sum->foreign = sat_add(sum->foreign, one->foreign);
	if (one->ring_gdr >= 0 && (sum->ring_gdr < 0 || one->ring_gdr < sum->ring_gdr))
		sum->ring_gdr = one->ring_gdr;
	if (one->ring_pxn > sum->ring_pxn)
		sum->ring_pxn = one->ring_pxn;
	set_merge(sum->nets, sizeof(sum->nets), one->nets);
	set_merge(sum->collnets, sizeof(sum->collnets), one->collnets);
	set_merge(sum->others, sizeof(sum->others), one->others);
	if (!sum->version[0])
		memcpy(sum->version, one->version, sizeof(sum->version));
	else if (one->version[0] && strcmp(sum->version, one->version) != 0)
		snprintf(sum->version, sizeof(sum->version), "mixed");
}

/* A terminated text of its field's characters ("+" joins names), no empty name. */
static bool wire_text(const char *s, size_t size, bool (*ok)(char), bool joined)
{
	const char *nul = memchr(s, '\0', size);
	size_t i;

	if (!nul)
		return false;
	for (i = 0; s + i < nul; i++) {
		if (joined && s[i] == '+') {
			if (i == 0 || s[i + 1] == '+' || s[i + 1] == '\0')
				return false;
		} else if (!ok(s[i])) {
			return false;
		}
	}
	return true;
}

/* A NIC's name: a device name, ':' before its port, '+' joining a merged one, "?" unnamed. */
static bool nic_char(char c)
{
	return gdrb_nccl_name_char(c) || c == ':' || c == '+' || c == '?';
}

int gdrb_nccl_links_from_wire(struct gdrb_nccl_links *l, const void *buf, size_t len)
{
	struct gdrb_nccl_links w;
	unsigned i;

	if (len != sizeof(w))
		return -EINVAL;
	memcpy(&w, buf, sizeof(w));
	if (w.net_gdr > w.net || w.net_pxn > w.net || w.collnet_gdr > w.collnet ||
	    w.skipped > w.lines || w.foreign > w.lines || w.ring_gdr < -1 || w.ring_gdr > 1 || w.ring_pxn < -1 ||
	    w.ring_pxn > 1)
		return -EINVAL;
	if (!wire_text(w.nets, sizeof(w.nets), gdrb_nccl_name_char, true) ||
	    !wire_text(w.collnets, sizeof(w.collnets), gdrb_nccl_name_char, true) ||
	    !wire_text(w.others, sizeof(w.others), gdrb_nccl_name_char, true) ||
	    !wire_text(w.version, sizeof(w.version), gdrb_nccl_version_char, false))
		return -EINVAL;
	for (i = 0; i < GDRB_NCCL_NICS; i++)
		if (!wire_text(w.nics[i].name, sizeof(w.nics[i].name), nic_char, false))
			return -EINVAL;
	for (i = 0; i < GDRB_NCCL_NICS; i++)
		memset(w.nics[i].name + strlen(w.nics[i].name), 0, sizeof(w.nics[i].name) - strlen(w.nics[i].name));
	/* Bytes after a terminator are not looked at again: clear them. */
	memset(w.nets + strlen(w.nets), 0, sizeof(w.nets) - strlen(w.nets));
	memset(w.collnets + strlen(w.collnets), 0, sizeof(w.collnets) - strlen(w.collnets));
	memset(w.others + strlen(w.others), 0, sizeof(w.others) - strlen(w.others));
	memset(w.version + strlen(w.version), 0, sizeof(w.version) - strlen(w.version));
	*l = w;
	return 0;
}

/* Appends prefix and token (n bytes of it) to buf, "+" first if buf is not empty. */
static void append(char *buf, size_t len, const char *prefix, const char *token, int n)
{
	size_t have = strlen(buf);

	snprintf(buf + have, len - have, "%s%s%.*s", have ? "+" : "", prefix, n, token);
}

/* Appends every name of the "+"-joined set, each after prefix. */
static void append_set(char *buf, size_t len, const char *prefix, const char *set)
{
	const char *p = set;

	while (*p) {
		const char *end = strchr(p, '+');

		append(buf, len, prefix, p, end ? (int)(end - p) : (int)strlen(p));
		if (!end)
			break;
		p = end + 1;
	}
}

void gdrb_nccl_transports(const struct gdrb_nccl_links *l, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = '\0';
	if (l->net)
		append_set(buf, len, "NET/", l->nets);
	if (l->collnet)
		append_set(buf, len, "COLLNET/", l->collnets);
	if (l->nvls)
		append(buf, len, "", "NVLS", 4);
	if (l->p2p)
		append(buf, len, "", "P2P", 3);
	if (l->shm)
		append(buf, len, "", "SHM", 3);
	if (l->other)
		append_set(buf, len, "", l->others);
}

