/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every shipped layer's option group (opt_catalog.c), so that a binary
 * refuses another layer's options by name ("--qps does not apply to ...")
 * rather than as unknown. Tables only: linking it pulls in no transport. Only the
 * binaries name it: a layer below the catalogue takes it from its caller.
 */
#ifndef GDRB_TRANSPORTS_H
#define GDRB_TRANSPORTS_H

#include "gdrb_opts.h"

/* Ended by NULL: struct gdrb_bench.opt_known. */
extern const struct gdrb_opt_group *const gdrb_opt_catalog[];

#endif
