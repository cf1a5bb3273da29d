/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdrb_log.h"
#include "gdrb_mem.h"
#include "gdrb_pattern.h"
#include "gdrb_size.h"
#include "gdrb_watchdog.h"

/* Device buffers are filled and checked through a host chunk of this size. */
#define STAGE_CHUNK (16u << 20)

static bool gpu_opened;

static size_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

static int host_alloc(struct gdrb_buf *buf, size_t len)
{
	size_t ps = page_size(), rounded;
	int rc;

	/* Within a page of SIZE_MAX, rounding up would wrap to a tiny buffer. */
	if (!gdrb_size_round_up(len, ps, &rounded)) {
		gdrb_err("cannot allocate %zu bytes of host memory: larger than any address space; use smaller sizes (-m)",
			 len);
		buf->ptr = NULL;
		return GDRB_ERR;
	}
	rc = posix_memalign(&buf->ptr, ps, rounded);
	if (rc) {
		gdrb_err("cannot allocate %zu bytes of host memory: %s; use smaller sizes (-m)",
			 len, strerror(rc));
		buf->ptr = NULL;
		return GDRB_ERR;
	}
	return 0;
}

static void host_free(struct gdrb_buf *buf)
{
	free(buf->ptr);
}

static int host_to_host(void *dst, const struct gdrb_buf *src, size_t off, size_t len)
{
	memcpy(dst, (const char *)src->ptr + off, len);
	return 0;
}

static int host_from_host(struct gdrb_buf *dst, size_t off, const void *src, size_t len)
{
	memcpy((char *)dst->ptr + off, src, len);
	return 0;
}

static int mlock_alloc(struct gdrb_buf *buf, size_t len)
{
	if (host_alloc(buf, len))
		return GDRB_ERR;
	if (mlock(buf->ptr, len)) {
		int e = errno;

		gdrb_err("mlock of %zu bytes failed: %s; raise the locked-memory limit (ulimit -l unlimited)",
			 len, strerror(e));
		free(buf->ptr);
		buf->ptr = NULL;
		return GDRB_ERR;
	}
	return 0;
}

static void mlock_free(struct gdrb_buf *buf)
{
	munlock(buf->ptr, buf->len ? buf->len : 1);  /* what mlock_alloc locked */
	free(buf->ptr);
}

static const struct gdrb_mem_ops host_ops = {
	.name = "host",
	.how = "page-aligned pageable host memory",
	.host_accessible = true,
	.pageable = true,
	.alloc = host_alloc,
	.free = host_free,
	.to_host = host_to_host,
	.from_host = host_from_host,
};

static const struct gdrb_mem_ops mlock_ops = {
	.name = "pinned",
	.how = "mlock'ed host memory (no usable GPU for cudaMallocHost)",
	.host_accessible = true,
	.pageable = true,       /* locked, but not registered with CUDA */
	.alloc = mlock_alloc,
	.free = mlock_free,
	.to_host = host_to_host,
	.from_host = host_from_host,
};

static const struct gdrb_mem_ops *host_resolve(bool gpu, const char **why)
{
	(void)gpu;
	*why = NULL;
	return &host_ops;
}

static const struct gdrb_mem_ops *pinned_resolve(bool gpu, const char **why)
{
	*why = NULL;
	return gpu ? &gdrb_mem_cuda_pinned_ops : &mlock_ops;
}

static const struct gdrb_mem_ops *device_resolve(bool gpu, const char **why)
{
	*why = NULL;
	if (gpu)
		return &gdrb_mem_cuda_device_ops;
	*why = gdrb_cuda_built() ? "no usable GPU was opened" : GDRB_NO_CUDA;
	return NULL;
}

static const struct gdrb_mem_kind_ops host_kind = {
	.name = "host", .resolve = host_resolve,
};

static const struct gdrb_mem_kind_ops pinned_kind = {
	.name = "pinned", .opens_gpu = true, .resolve = pinned_resolve,
};

static const struct gdrb_mem_kind_ops device_kind = {
	.name = "device", .opens_gpu = true, .needs_gpu = true, .on_gpu = true, .staged = true,
	.resolve = device_resolve,
};

/* Indexed by enum gdrb_mem_kind; registered kinds follow the built-in ones. */
static const struct gdrb_mem_kind_ops *kinds[GDRB_MEM_KINDS_MAX] = {
	[GDRB_MEM_HOST] = &host_kind,
	[GDRB_MEM_PINNED] = &pinned_kind,
	[GDRB_MEM_DEVICE] = &device_kind,
};
static unsigned nkinds = GDRB_MEM_DEVICE + 1;

int gdrb_mem_kind_register(const struct gdrb_mem_kind_ops *kind)
{
	unsigned i;

	for (i = 0; i < nkinds; i++)
		if (strcasecmp(kinds[i]->name, kind->name) == 0) {
			gdrb_err("memory kind '%s' registered twice", kind->name);
			return GDRB_ERR;
		}
	if (nkinds == GDRB_MEM_KINDS_MAX) {
		gdrb_err("memory kind '%s': no room for more than %d kinds", kind->name,
			 GDRB_MEM_KINDS_MAX);
		return GDRB_ERR;
	}
	kinds[nkinds] = kind;
	return (int)nkinds++;
}

int gdrb_mem_kind_parse(const char *text, enum gdrb_mem_kind *kind, const char **hint)
{
	static const struct {
		const char *alias, *meant;
	} aliases[] = {
		{ "gpu", "device" }, { "cuda", "device" }, { "dev", "device" },
		{ "vram", "device" }, { "hbm", "device" }, { "pageable", "host" },
		{ "cpu", "host" }, { "sys", "host" }, { "locked", "pinned" },
		{ "page-locked", "pinned" }, { "mlock", "pinned" },
	};
	size_t i;

	*hint = NULL;
	for (i = 0; i < nkinds; i++) {
		if (strcasecmp(text, kinds[i]->name) == 0) {
			*kind = (enum gdrb_mem_kind)i;
			return 0;
		}
	}
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(text, aliases[i].alias) == 0)
			*hint = aliases[i].meant;
	return -1;
}

const struct gdrb_mem_kind_ops *gdrb_mem_kind(enum gdrb_mem_kind kind)
{
	return kinds[kind];
}

const char *gdrb_mem_kind_name(enum gdrb_mem_kind kind)
{
	return kinds[kind]->name;
}

unsigned gdrb_mem_kind_count(void)
{
	return nkinds;
}

char *gdrb_mem_kind_list(char *buf, size_t len)
{
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < nkinds && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", kinds[i]->name);
	return buf;
}

bool gdrb_gpu_ready(void)
{
	return gpu_opened;
}

int gdrb_gpu_open(int want, int local_rank, struct gdrb_gpu_info *info, char *why, size_t len)
{
	int rc = gdrb_cuda_open(want, local_rank, info, why, len);

	gpu_opened = rc == 0;
	return rc;
}

const struct gdrb_mem_ops *gdrb_mem_ops_get(enum gdrb_mem_kind kind, const char **why)
{
	return kinds[kind]->resolve(gpu_opened, why);
}

const struct gdrb_mem_ops *gdrb_mem_bounce_ops(void)
{
	const char *why;

	return pinned_resolve(gpu_opened, &why);
}

int gdrb_buf_alloc(struct gdrb_buf *buf, const struct gdrb_mem_ops *ops, size_t len)
{
	buf->ops = ops;
	buf->len = len;
	buf->ptr = NULL;
	/* A zero-length buffer still gets one byte, so every kind hands out a real pointer. */
	if (ops->alloc(buf, len ? len : 1))
		return GDRB_ERR;
	return 0;
}

void gdrb_buf_free(struct gdrb_buf *buf)
{
	if (buf->ptr && buf->ops)
		buf->ops->free(buf);
	buf->ptr = NULL;
}

int gdrb_buf_copy(struct gdrb_buf *dst, size_t dst_off, const struct gdrb_buf *src,
		  size_t src_off, size_t len)
{
	char *d = (char *)dst->ptr + dst_off;
	const char *s = (const char *)src->ptr + src_off;

	if (dst->ops->host_accessible && src->ops->host_accessible) {
		memcpy(d, s, len);
		return 0;
	}
	/* CUDA returns early from device to device and pageable to device copies. */
	return gdrb_cuda_copy(d, s, len, !dst->ops->host_accessible &&
				     (!src->ops->host_accessible || src->ops->pageable));
}

static void *chunk_buffer(void)
{
	static void *chunk;

	if (!chunk && posix_memalign(&chunk, page_size(), STAGE_CHUNK))
		chunk = NULL;
	if (!chunk)
		gdrb_err("cannot allocate the %u-byte host chunk used to check device memory",
			 STAGE_CHUNK);
	return chunk;
}

void *gdrb_host_chunk(size_t *len)
{
	*len = STAGE_CHUNK;
	return chunk_buffer();
}

int gdrb_buf_fill_pattern(struct gdrb_buf *buf, size_t off, size_t len, uint64_t seed)
{
	return gdrb_buf_fill_pattern_at(buf, off, len, seed, 0);
}

int gdrb_buf_fill_pattern_at(struct gdrb_buf *buf, size_t off, size_t len, uint64_t seed,
			     size_t base)
{
	size_t done, n;
	void *chunk;

	if (buf->ops->host_accessible) {
		gdrb_pattern_fill_at((char *)buf->ptr + off, len, seed, base);
		return 0;
	}
	chunk = chunk_buffer();
	if (!chunk)
		return GDRB_ERR;
	for (done = 0; done < len; done += n) {
		n = len - done < STAGE_CHUNK ? len - done : STAGE_CHUNK;
		gdrb_pattern_fill_at(chunk, n, seed, base + done);
		gdrb_watchdog_kick();
		if (buf->ops->from_host(buf, off + done, chunk, n))
			return GDRB_ERR;
	}
	return 0;
}

uint64_t gdrb_buf_check_pattern(const struct gdrb_buf *buf, size_t off, size_t len,
				uint64_t seed, size_t *first_bad)
{
	return gdrb_buf_check_pattern_at(buf, off, len, seed, 0, first_bad);
}

uint64_t gdrb_buf_check_pattern_at(const struct gdrb_buf *buf, size_t off, size_t len,
				   uint64_t seed, size_t base, size_t *first_bad)
{
	uint64_t bad = 0;
	size_t done, n;
	void *chunk;

	if (buf->ops->host_accessible)
		return gdrb_pattern_check((const char *)buf->ptr + off, len, seed, base, first_bad);
	chunk = chunk_buffer();
	if (!chunk)
		return (uint64_t)-1;
	/* A NIC may have written the buffer (GPUDirect RDMA): make that visible first. */
	if (buf->ops->flush_remote_writes && buf->ops->flush_remote_writes(buf))
		return (uint64_t)-1;
	for (done = 0; done < len; done += n) {
		n = len - done < STAGE_CHUNK ? len - done : STAGE_CHUNK;
		if (buf->ops->to_host(chunk, buf, off + done, n))
			return (uint64_t)-1;
		size_t chunk_bad_at = 0;
		uint64_t chunk_bad = gdrb_pattern_check(chunk, n, seed, base + done, &chunk_bad_at);

		gdrb_watchdog_kick();
		if (chunk_bad && !bad)
			*first_bad = chunk_bad_at;
		bad += chunk_bad;
	}
	return bad;
}

int gdrb_buf_corrupt(struct gdrb_buf *buf, size_t off)
{
	unsigned char byte;

	if (buf->ops->to_host(&byte, buf, off, 1))
		return GDRB_ERR;
	byte ^= 0x5a;
	return buf->ops->from_host(buf, off, &byte, 1);
}
