/* SPDX-License-Identifier: BSD-3-Clause */
/* One outcome for every rank (gdrb_boot.h). */
#include "config.h"

#include "gdrb_boot.h"
#include "gdrb_log.h"

int gdrb_boot_agree_exit(struct gdrb_boot *b, int code)
{
	uint64_t v = (uint64_t)code;

	if (b->allreduce_u64(b, &v, 1, GDRB_OP_MAX))
		return GDRB_EXIT_FAIL;
	return (int)v;
}

int gdrb_boot_agree(struct gdrb_boot *b, int rc)
{
	return gdrb_err_code(gdrb_boot_agree_exit(b, gdrb_exit_code(rc)));
}
