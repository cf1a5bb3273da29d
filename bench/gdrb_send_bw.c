/* SPDX-License-Identifier: BSD-3-Clause */
/* Send/receive bandwidth: a window of RC sends into posted receives, then an acknowledgement; -b: both ways at once. */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_transports.h"
#include "gdrb_verbs.h"

static const struct gdrb_bench send_bw = {
	.name = "send_bw",
	.bidir_name = "send_bibw",
	.layer = "verbs",
	.summary = "Send/receive bandwidth: a window of RC sends into posted receives, then an acknowledgement (-b: both ways at once)",
	.metric = GDRB_METRIC_BW,
	.traffic = GDRB_TRAFFIC_UNIDIR,
	.opt_core = GDRB_OPTG_MEM | GDRB_OPTG_WINDOW | GDRB_OPTG_BIDIR,
	.opt_groups = (const struct gdrb_opt_use[]){ { &gdrb_verbs_opts, GDRB_VERBS_OPTS | GDRB_VERBS_OPT_P2P }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = gdrb_verbs_setup_send,
	.describe = gdrb_verbs_describe,
	.iteration = gdrb_verbs_stream,
	.teardown = gdrb_verbs_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&send_bw, &gdrb_boot_mpi, argc, argv);
}
