/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL_DEBUG_SUBSYS: what the user asked for, and what the log reader needs added to it. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gdrb_nccl_log.h"

/* Whether the comma-separated list holds name (NCCL compares without case). */
static bool list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncasecmp(p, name, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

bool gdrb_nccl_subsys_has(const char *list, const char *name)
{
	return list_has(list, name);
}

int gdrb_nccl_debug_subsys(const char *user, bool tuning, char *out, size_t len, char *changed, size_t changed_len)
{
	static const char *const need[] = { "INIT", "NET", "TUNING" };
	size_t i, nneed = tuning ? 3 : 2, at = 0;
	int n;

	if (!len || !changed_len)
		return -1;
	out[0] = changed[0] = '\0';
	if (!user) {
		n = snprintf(out, len, "INIT,NET%s", tuning ? ",TUNING" : "");
		return n < 0 || (size_t)n >= len ? -1 : 0;
	}
	if (user[0] == '^') {
		/* Everything but the list: what is needed leaves the list. */
		const char *p = user + 1;

		n = snprintf(out, len, "^");
		at = 1;
		while (*p) {
			size_t tl = strcspn(p, ",");
			bool drop = false;

			for (i = 0; i < nneed; i++)
				if (strlen(need[i]) == tl && !strncasecmp(p, need[i], tl))
					drop = true;
			if (drop) {
				size_t have = strlen(changed);

				snprintf(changed + have, changed_len - have, "%s%.*s", have ? "," : "", (int)tl, p);
			} else if (tl) {
				n = snprintf(out + at, len - at, "%s%.*s", at > 1 ? "," : "", (int)tl, p);
				if (n < 0 || (size_t)n >= len - at)
					return -1;
				at += (size_t)n;
			}
			p += tl + (p[tl] == ',');
		}
		if (at == 1)
			snprintf(out, len, "ALL");
		return 0;
	}
	n = snprintf(out, len, "%s", user);
	if (n < 0 || (size_t)n >= len)
		return -1;
	at = (size_t)n;
	if (list_has(user, "ALL"))
		return 0;
	for (i = 0; i < nneed; i++) {
		if (list_has(user, need[i]))
			continue;
		n = snprintf(out + at, len - at, "%s%s", at ? "," : "", need[i]);
		if (n < 0 || (size_t)n >= len - at)
			return -1;
		at += (size_t)n;
		snprintf(changed + strlen(changed), changed_len - strlen(changed), "%s%s", changed[0] ? "," : "", need[i]);
	}
	return 0;
}

