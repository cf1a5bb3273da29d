/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NCCL INFO log reader (common/nccl/nccl_log*.c, nccl_links.c) on any bytes: it returns, its
 * counts hold together (GDRDMA and PXN within the network's, skipped within lines), its
 * names are terminated, "+"-joined [A-Za-z0-9._-] that its own wire check accepts, the
 * sum over two ranks is the sum, and the transports' text fits its buffer. Read as one
 * process's log (its host and pid named), it counts no more of anything than read as
 * anyone's, and what it leaves out is counted as foreign.
 */
#include "config.h"

#include <ctype.h>

#include "fuzz.h"
#include "gdrb_nccl_log.h"

static void check(const struct gdrb_nccl_links *l, const char *what)
{
	char text[64];

	if (l->net_gdr > l->net || l->net_pxn > l->net || l->collnet_gdr > l->collnet ||
	    l->skipped > l->lines || l->foreign > l->lines)
		fuzz_broken("%s: counts out of order (net %u gdr %u pxn %u, lines %u skipped %u)",
			    what, l->net, l->net_gdr, l->net_pxn, l->lines, l->skipped);
	if (gdrb_nccl_links_from_wire(&(struct gdrb_nccl_links){ 0 }, l, sizeof(*l)) != 0)
		fuzz_broken("%s: the record fails its own wire check (nets '%.48s' others '%.48s')",
			    what, l->nets, l->others);
	gdrb_nccl_transports(l, text, sizeof(text));
	if (memchr(text, '\0', sizeof(text)) == NULL)
		fuzz_broken("%s: transports' text not terminated", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gdrb_nccl_links one, sum;
	FILE *f;

	gdrb_nccl_links_init(&one);
	gdrb_nccl_log_parse_mem(data, size, NULL, &one);
	check(&one, "one log");
	if (one.lines == 0 && size > 0)
		fuzz_broken("%zu bytes read as no line", size);

	{
		static const struct gdrb_nccl_owner who = { "node-a", 41207 };
		struct gdrb_nccl_links own;

		gdrb_nccl_links_init(&own);
		gdrb_nccl_log_parse_mem(data, size, &who, &own);
		check(&own, "one process's log");
		if (own.net > one.net || own.net_gdr > one.net_gdr || own.p2p > one.p2p || own.shm > one.shm ||
		    own.other > one.other || own.collnet > one.collnet || own.rings > one.rings ||
		    own.lines != one.lines || own.foreign > own.lines || one.foreign != 0)
			fuzz_broken("its owner named, the log counted more, or other lines (net %u of %u, foreign %u, lines %u of %u)",
				    own.net, one.net, own.foreign, own.lines, one.lines);
	}

	gdrb_nccl_links_init(&sum);
	gdrb_nccl_links_add(&sum, &one);
	gdrb_nccl_links_add(&sum, &one);
	check(&sum, "two ranks");
	if (one.net < UINT32_MAX / 2 && sum.net != 2 * one.net)
		fuzz_broken("two ranks of %u network lines summed to %u", one.net, sum.net);

	/* What NCCL chose: terminated names of their characters, channels within NCCL's bound. */
	{
		struct gdrb_nccl_tuning t;
		size_t i;

		gdrb_nccl_tuning_init(&t);
		gdrb_nccl_tuning_parse_mem(data, size, NULL, &t);
		if (!memchr(t.algos, '\0', sizeof(t.algos)) || !memchr(t.protos, '\0', sizeof(t.protos)))
			fuzz_broken("tuning: a name not terminated");
		for (i = 0; t.algos[i]; i++)
			if (!(isalnum((unsigned char)t.algos[i]) || strchr("._-+", t.algos[i])))
				fuzz_broken("tuning: algorithm '%s' holds a character not kept", t.algos);
		if (t.channels > 4096 || t.calls + t.unparsed > one.lines)
			fuzz_broken("tuning: %u channels, %u calls and %u unparsed of %u lines", t.channels, t.calls,
				    t.unparsed, one.lines);
	}

	/* The FILE reader agrees with the one from memory. */
	f = fmemopen((void *)(size ? data : (const uint8_t *)""), size ? size : 1, "rb");
	if (f && size) {
		struct gdrb_nccl_links again;

		gdrb_nccl_links_init(&again);
		if (gdrb_nccl_log_parse(f, NULL, &again) != 0 || memcmp(&again, &one, sizeof(one)) != 0)
			fuzz_broken("the FILE reader and the memory reader disagree");
	}
	if (f)
		fclose(f);
	return 0;
}
