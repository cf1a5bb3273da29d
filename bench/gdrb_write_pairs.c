/* SPDX-License-Identifier: BSD-3-Clause */
/* All pairs over RDMA writes (mpiGraph's shifted rounds): the transfers of common/core/pairs/pairs.c over verbs. */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_pairs.h"
#include "gdrb_transports.h"
#include "gdrb_verbs.h"

static const struct gdrb_pairs_ops write_pairs = {
	.name = "write_pairs",
	.layer = "verbs",
	.summary = "all pairs over RDMA writes in shifted rounds (mpiGraph): every rank writes to rank + k and is written to by rank - k in round k, one RC QP per peer; a matrix per size and path",
	.opt_groups = (const struct gdrb_opt_use[]){ { &gdrb_verbs_opts, GDRB_VERBS_OPTS }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = gdrb_verbs_pairs_setup,
	.describe = gdrb_verbs_pairs_describe,
	.begin = gdrb_verbs_pairs_begin,
	.post = gdrb_verbs_pairs_post,
	.exchange = gdrb_verbs_pairs_exchange,
	.send = gdrb_verbs_pairs_send,
	.recv = gdrb_verbs_pairs_recv,
	.teardown = gdrb_verbs_pairs_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_pairs_main(&write_pairs, &gdrb_boot_mpi, argc, argv);
}
