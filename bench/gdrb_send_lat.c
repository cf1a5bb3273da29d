/* SPDX-License-Identifier: BSD-3-Clause */
/* Send/receive latency: ping-pong of RC sends (half round trip). */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_transports.h"
#include "gdrb_verbs.h"

static const struct gdrb_bench send_lat = {
	.name = "send_lat",
	.layer = "verbs",
	.summary = "Send/receive latency: ping-pong of RC sends (half round trip)",
	.metric = GDRB_METRIC_LAT,
	.traffic = GDRB_TRAFFIC_PINGPONG,
	.opt_core = GDRB_OPTG_MEM,
	.opt_groups = (const struct gdrb_opt_use[]){ { &gdrb_verbs_opts, GDRB_VERBS_OPTS | GDRB_VERBS_OPT_P2P }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = gdrb_verbs_setup_send,
	.describe = gdrb_verbs_describe,
	.iteration = gdrb_verbs_pingpong,
	.teardown = gdrb_verbs_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&send_lat, &gdrb_boot_mpi, argc, argv);
}
