/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl.h for the simulated NCCL and its test program, built with the project's warnings:
 * nccl.h declares the group calls as "()" (old-style C), and it and the fp16 and bf16
 * headers it includes test macros C leaves undefined (__cplusplus).
 */
#ifndef SIMNCCL_NCCL_PLAIN_H
#define SIMNCCL_NCCL_PLAIN_H

#include <cuda_runtime_api.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wundef"
#include <nccl.h>
#pragma GCC diagnostic pop

ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

#endif
