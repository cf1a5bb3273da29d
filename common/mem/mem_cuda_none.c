/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's twin for builds without CUDA: every entry says so. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_mem.h"

bool gdrb_cuda_built(void)
{
	return false;
}

static int none_alloc(struct gdrb_buf *buf, size_t len)
{
	(void)buf;
	(void)len;
	gdrb_err("%s", GDRB_NO_CUDA);
	return GDRB_ERR_UNSUPP;
}

static void none_free(struct gdrb_buf *buf)
{
	(void)buf;
}

static int none_to_host(void *dst, const struct gdrb_buf *src, size_t off, size_t len)
{
	(void)dst;
	(void)src;
	(void)off;
	(void)len;
	return GDRB_ERR_UNSUPP;
}

static int none_from_host(struct gdrb_buf *dst, size_t off, const void *src, size_t len)
{
	(void)dst;
	(void)src;
	(void)off;
	(void)len;
	return GDRB_ERR_UNSUPP;
}

const struct gdrb_mem_ops gdrb_mem_cuda_device_ops = {
	.name = "device", .how = "not built", .host_accessible = false,
	.alloc = none_alloc, .free = none_free,
	.to_host = none_to_host, .from_host = none_from_host,
};

const struct gdrb_mem_ops gdrb_mem_cuda_pinned_ops = {
	.name = "pinned", .how = "not built", .host_accessible = true,
	.alloc = none_alloc, .free = none_free,
	.to_host = none_to_host, .from_host = none_from_host,
};

int gdrb_cuda_open(int want, int local_rank, struct gdrb_gpu_info *info, char *why, size_t len)
{
	(void)want;
	(void)local_rank;
	memset(info, 0, sizeof(*info));
	info->index = -1;
	info->mps = -1;
	snprintf(why, len, "%s", GDRB_NO_CUDA);
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_copy(void *dst, const void *src, size_t len, bool settle)
{
	(void)dst;
	(void)src;
	(void)len;
	(void)settle;
	gdrb_err("%s", GDRB_NO_CUDA);
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_stream_create(void **stream)
{
	*stream = NULL;
	gdrb_err("%s", GDRB_NO_CUDA);
	return GDRB_ERR_UNSUPP;
}

void gdrb_cuda_stream_destroy(void *stream)
{
	(void)stream;
}

int gdrb_cuda_event_create(void **event)
{
	*event = NULL;
	gdrb_err("%s", GDRB_NO_CUDA);
	return GDRB_ERR_UNSUPP;
}

void gdrb_cuda_event_destroy(void *event)
{
	(void)event;
}

int gdrb_cuda_copy_async(void *dst, const void *src, size_t len, void *stream, void *event)
{
	(void)dst;
	(void)src;
	(void)len;
	(void)stream;
	(void)event;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_event_wait(void *event)
{
	(void)event;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_event_done(void *event)
{
	(void)event;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_timed_event_create(void **event)
{
	*event = NULL;
	gdrb_err("%s", GDRB_NO_CUDA);
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_event_record(void *event, void *stream)
{
	(void)event;
	(void)stream;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_event_elapsed_us(void *start, void *end, double *us)
{
	(void)start;
	(void)end;
	*us = 0;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_stream_wait_event(void *stream, void *event)
{
	(void)stream;
	(void)event;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_stream_sync(void *stream)
{
	(void)stream;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_stream_hold(void *stream, struct gdrb_cuda_gate *gate)
{
	(void)stream;
	(void)gate;
	return GDRB_ERR_UNSUPP;
}

void gdrb_cuda_gate_open(struct gdrb_cuda_gate *gate)
{
	gate->open = 1;
}

int gdrb_cuda_count(int *count)
{
	*count = 0;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_set_device(int dev)
{
	(void)dev;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_peer_can(int dev, int peer, int *can)
{
	(void)dev;
	(void)peer;
	*can = 0;
	return GDRB_ERR_UNSUPP;
}

int gdrb_cuda_peer_enable(int dev, int peer, char *why, size_t len)
{
	(void)dev;
	(void)peer;
	snprintf(why, len, "%s", GDRB_NO_CUDA);
	return GDRB_ERR_UNSUPP;
}

void gdrb_cuda_peer_disable(int dev, int peer)
{
	(void)dev;
	(void)peer;
}
