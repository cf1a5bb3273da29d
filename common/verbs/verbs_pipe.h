/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_pipe.c: the pipelined staged path of the point-to-point transport,
 * which verbs_p2p.c calls.
 */
#ifndef GDRB_VERBS_PIPE_H
#define GDRB_VERBS_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verbs_int.h"

/* The pipelined staged path of gdrb_verbs_stream and gdrb_verbs_pingpong. */
int gdrb_verbs_pipe_stream(struct gdrb_ctx *c, size_t size, bool active, bool passive);
int gdrb_verbs_pipe_pingpong(struct gdrb_ctx *c, size_t size);
/* Send ping-pong: the receive posted ahead, the first piece of any message into slot 0. */
int gdrb_verbs_pipe_post_ahead(struct gdrb_ctx *c);

#endif
