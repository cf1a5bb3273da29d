/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI bootstrap (libgdrbench_mpi). */
#ifndef GDRB_BOOT_MPI_H
#define GDRB_BOOT_MPI_H

#include "gdrb_boot.h"

extern struct gdrb_boot gdrb_boot_mpi;

#endif
