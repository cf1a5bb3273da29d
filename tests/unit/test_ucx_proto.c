/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/mpi/ucx_proto.c: the transports of every fixture log of
 * tests/support/data/ucx-logs (its README says which are real UCX output and which
 * were written from UCX's source), each row classification, the owner's lines only,
 * and hostile input.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_ucx_proto.h"
#include "unit_main.h"

struct fixture {
	const char *file;
	long pid;               /* the owner; 0: every line */
	const char *mem;
	uint64_t size;
	bool upto;
	const char *transports; /* "" where no row covers the size */
};

static const struct fixture fixtures[] = {
	/* Real: Debian's Open MPI 4.1.4, pml ucx, over UCX 1.22 (sysv and cma), two ranks. */
	{ "ucx-1.22.0-ompi-4.1.4-sm-host.log", 24728, "host", 8, false, "shm" },
	{ "ucx-1.22.0-ompi-4.1.4-sm-host.log", 24728, "host", 65536, false, "shm" },
	{ "ucx-1.22.0-ompi-4.1.4-sm-host.log", 24728, "host", 1 << 20, false, "shm" },
	{ "ucx-1.22.0-ompi-4.1.4-sm-host.log", 24728, "cuda", 8, false, "" },
	{ "ucx-1.22.0-ompi-4.1.4-sm-host.log", 1, "host", 8, false, "" },
	/* Real: ucx_info -e -u t -P inter over tcp. */
	{ "ucx-1.22.0-ucx_info-tcp-host.log", 27040, "host", 1 << 20, false, "tcp" },
	/* Written from UCX's source (the files' headers). */
	{ "ucx-cuda-ipc.log", 4242, "cuda", 8, false, "host-pipeline" },
	{ "ucx-cuda-ipc.log", 4242, "cuda", 65536, false, "cuda_ipc" },
	{ "ucx-cuda-ipc.log", 4242, "cuda", 65536, true, "cuda_ipc+host-pipeline" },
	{ "ucx-cuda-ipc.log", 4242, "host", 65536, false, "shm" },
	{ "ucx-cuda-gdr.log", 4242, "cuda", 8, false, "rdma-zcopy" },
	{ "ucx-cuda-gdr.log", 4242, "cuda", 1 << 20, false, "rdma-zcopy" },
	{ "ucx-cuda-pipeline.log", 4242, "cuda", 1 << 20, false, "host-pipeline" },
	{ "ucx-cuda-pipeline.log", 4242, "cuda", 64 << 20, false, "host-pipeline" },
};
#define N_FIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

static void read_fixture(const char *file, long pid, struct gdrb_ucx_proto *p)
{
	const char *src = getenv("top_srcdir");
	char path[4096], why[256] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/tests/support/data/ucx-logs/%s", src ? src : ".", file);
	fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "%s: cannot open", path);
	ck_assert_msg(gdrb_ucx_proto_read_fd(p, fd, pid, why, sizeof(why)) == 0, "%s", why);
	close(fd);
}

START_TEST(test_fixtures)
{
	const struct fixture *f = &fixtures[_i];
	static struct gdrb_ucx_proto p;
	unsigned rows;
	char text[96];

	read_fixture(f->file, f->pid, &p);
	gdrb_ucx_transports_text(gdrb_ucx_transports(&p, f->mem, f->size, f->upto, &rows), text,
				 sizeof(text));
	ck_assert_msg(!strcmp(text, f->transports), "%s %s %llu%s: '%s', want '%s'", f->file, f->mem,
		      (unsigned long long)f->size, f->upto ? " and below" : "", text, f->transports);
	ck_assert_uint_eq(rows == 0, f->transports[0] == '\0');
}
END_TEST

/* The tables of the real Open MPI log: six, of which three of the process to itself. */
START_TEST(test_tables)
{
	static struct gdrb_ucx_proto p;
	unsigned i, self = 0;

	read_fixture("ucx-1.22.0-ompi-4.1.4-sm-host.log", 24728, &p);
	ck_assert_uint_eq(p.ntables, 6);
	ck_assert_uint_eq(p.skipped, 0);
	ck_assert_uint_eq(p.foreign, 0);
	for (i = 0; i < p.ntables; i++) {
		self += p.t[i].self;
		ck_assert_int_eq(p.t[i].op, GDRB_UCX_OP_TAG);
		ck_assert_str_eq(p.t[i].mem, "host");
	}
	ck_assert_uint_eq(self, 3);
	ck_assert_uint_eq(p.t[4].nrows, 4);
	ck_assert_uint_eq(p.t[4].rows[3].lo, 262144);      /* "256K..inf" */
	ck_assert(p.t[4].rows[3].hi == UINT64_MAX);
	ck_assert_str_eq(p.t[4].rows[3].config, "cma/memory");
	/* Another process's log: nothing of it counts. */
	read_fixture("ucx-1.22.0-ompi-4.1.4-sm-host.log", 24729, &p);
	ck_assert_uint_eq(p.ntables, 0);
	ck_assert_uint_eq(p.foreign, p.lines);
}
END_TEST

/* Every classification, each beside the input that must not give it. */
START_TEST(test_rows)
{
	static const struct {
		const char *mem, *desc, *config;
		enum gdrb_ucx_transport want;
	} rows[] = {
		{ "cuda", "(?) rendezvous zero-copy read from remote", "cuda_ipc/cuda", GDRB_UCX_CUDA_IPC },
		{ "host", "(?) rendezvous zero-copy read from remote", "cuda_ipc/cuda", GDRB_UCX_UNKNOWN },
		{ "cuda", "zero-copy fenced write to remote", "rc_mlx5/mlx5_0:1", GDRB_UCX_RDMA_ZCOPY },
		{ "cuda", "eager copy-in copy-out", "rc_mlx5/mlx5_0:1", GDRB_UCX_HOST_PIPELINE },
		{ "cuda", "cuda_copy, zero-copy fenced write to remote, frag host", "rc_mlx5/mlx5_0:1",
		  GDRB_UCX_HOST_PIPELINE },
		{ "cuda", "read from remote, cuda_copy, frag host", "cuda_ipc/cuda", GDRB_UCX_HOST_PIPELINE },
		{ "cuda", "pipeline zero-copy read from remote", "cuda_ipc/cuda", GDRB_UCX_CUDA_IPC },
		{ "cuda", "(?) rendezvous fragmented copy-in copy-out", "tcp/eth0", GDRB_UCX_HOST_PIPELINE },
		{ "cuda", "zero-copy fenced write to remote", "tcp/eth0", GDRB_UCX_UNKNOWN },
		{ "cuda", "zero-copy read from remote", "mystery_tl/dev0", GDRB_UCX_UNKNOWN },
		{ "cuda-managed", "(?) rendezvous zero-copy read from remote", "cuda_ipc/cuda", GDRB_UCX_CUDA_IPC },
		{ "host", "eager short", "sysv/memory", GDRB_UCX_SHM },
		{ "host", "(?) rendezvous zero-copy read from remote", "cma/memory", GDRB_UCX_SHM },
		{ "host", "eager short", "posix/memory", GDRB_UCX_SHM },
		{ "host", "eager short", "tcp/lo", GDRB_UCX_TCP },
		{ "host", "eager short", "self/memory", GDRB_UCX_SELF },
		{ "host", "eager copy-in copy-out", "rc_mlx5/mlx5_0:1", GDRB_UCX_RDMA },
		{ "host", "(?) rendezvous zero-copy read from remote", "dc_mlx5/mlx5_0:1", GDRB_UCX_RDMA_ZCOPY },
		{ "host", "rc_verbs zero-copy", "ud_verbs/mlx5_0:1", GDRB_UCX_RDMA_ZCOPY },
		{ "host", "eager short", "52% on tcp/lo and 48% on tcp/eth0", GDRB_UCX_TCP },
		{ "host", "eager short", "50% on tcp/eth0 and 50% on rc_mlx5/mlx5_0:1", GDRB_UCX_UNKNOWN },
		{ "host", "eager short", "", GDRB_UCX_UNKNOWN },
		{ "host", "eager short", "rcx/dev", GDRB_UCX_UNKNOWN },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(gdrb_ucx_row_transport(rows[i].mem, rows[i].desc, rows[i].config) == rows[i].want,
			      "row %zu (%s | %s | %s): %s, want %s", i, rows[i].mem, rows[i].desc, rows[i].config,
			      gdrb_ucx_transport_names[gdrb_ucx_row_transport(rows[i].mem, rows[i].desc,
									      rows[i].config)],
			      gdrb_ucx_transport_names[rows[i].want]);
}
END_TEST

#define PFX "[1.000001] [h:7:0]   "
#define TITLE(sel) PFX "+---+\n" PFX "| ep intra-node cfg#1 |\n" PFX "| " sel " |\n" PFX "+---+\n" \
	PFX "| Range | Description | Config |\n" PFX "+---+\n"

static void parse(struct gdrb_ucx_proto *p, const char *text, size_t len, long pid)
{
	gdrb_ucx_proto_init(p);
	gdrb_ucx_proto_parse_mem(p, text, len, pid);
}

START_TEST(test_hostile)
{
	static struct gdrb_ucx_proto p;
	static char big[GDRB_UCX_LINE_MAX + 64], many[GDRB_UCX_TABLES_MAX * 2 * 512];
	static const char nul[] = TITLE("tagged message by ucp_tag_send* from host memory")
		PFX "| 0..inf | eager short | sysv/mem\0ory |\n";
	static const char cut[] = TITLE("tagged message by ucp_tag_send* from host memory")
		PFX "| 0..inf | eager short | sysv/memory |";
	static const char ranges[] = TITLE("tagged message by ucp_tag_send* from host memory")
		PFX "| 9..8 | eager short | sysv/memory |\n" PFX "| 1Q..2 | eager short | sysv/memory |\n"
		PFX "| 99999999999999999999..inf | eager short | sysv/memory |\n"
		PFX "| 17179869184P..inf | eager short | sysv/memory |\n"
		PFX "| 4K | eager short | sysv/memory |\n";
	static const char orphan[] = PFX "| 0..inf | eager short | sysv/memory |\n";
	unsigned rows, i;
	size_t at = 0;

	parse(&p, nul, sizeof(nul) - 1, 7);
	ck_assert_uint_eq(gdrb_ucx_transports(&p, "host", 8, false, &rows), 0);
	ck_assert_uint_eq(p.skipped, 1);
	parse(&p, cut, sizeof(cut) - 1, 7);
	ck_assert_uint_eq(gdrb_ucx_transports(&p, "host", 8, false, &rows), 0);
	ck_assert_uint_eq(p.skipped, 1);
	/* Bad ranges are titles, never rows; "4K" alone is the one-length range 4096. */
	parse(&p, ranges, sizeof(ranges) - 1, 7);
	ck_assert_uint_eq(p.ntables, 1);
	ck_assert_uint_eq(p.t[0].nrows, 1);
	ck_assert_uint_eq(p.t[0].rows[0].lo, 4096);
	ck_assert_uint_eq(p.t[0].rows[0].hi, 4096);
	parse(&p, orphan, sizeof(orphan) - 1, 7);
	ck_assert_uint_eq(p.ntables, 0);
	ck_assert_uint_eq(p.skipped, 1);
	/* A line past the limit is skipped whole. */
	memset(big, 'x', sizeof(big));
	memcpy(big, "| 0..inf | eager short | sysv/memory", 36);
	big[sizeof(big) - 1] = '\n';
	parse(&p, big, sizeof(big), 0);
	ck_assert_uint_eq(p.skipped, 1);
	ck_assert_uint_eq(p.ntables, 0);
	/* Tables past the bound are counted, not kept; control bytes never copied out. */
	for (i = 0; i < GDRB_UCX_TABLES_MAX * 2; i++)
		at += (size_t)snprintf(many + at, sizeof(many) - at, "%s",
				       TITLE("tagged message by ucp_tag_send* from host memory")
				       PFX "| 0..inf | eager \x1b[31m short | sysv/memory |\n");
	parse(&p, many, at, 7);
	ck_assert_uint_eq(p.ntables, GDRB_UCX_TABLES_MAX);
	ck_assert_uint_ge(p.skipped, GDRB_UCX_TABLES_MAX);
	ck_assert_str_eq(p.t[0].rows[0].desc, "eager _[31m short");
	ck_assert_uint_eq(gdrb_ucx_transports(&p, "host", 1, false, &rows), 1u << GDRB_UCX_SHM);
	ck_assert_uint_eq(rows, GDRB_UCX_TABLES_MAX);
}
END_TEST

START_TEST(test_text)
{
	char buf[64];

	gdrb_ucx_transports_text(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	gdrb_ucx_transports_text((1u << GDRB_UCX_HOST_PIPELINE) | (1u << GDRB_UCX_CUDA_IPC) |
				 (1u << GDRB_UCX_UNKNOWN), buf, sizeof(buf));
	ck_assert_str_eq(buf, "unknown+cuda_ipc+host-pipeline");
	gdrb_ucx_transports_text(1u << GDRB_UCX_RDMA_ZCOPY, buf, 8);
	ck_assert_str_eq(buf, "");      /* cut: nothing half-written */
}
END_TEST

static Suite *ucx_proto_suite(void)
{
	const struct unit_case cases[] = {
		{ .test = test_fixtures, .loops = (int)N_FIXTURES },
		{ .test = test_tables },
		{ .test = test_rows },
		{ .test = test_hostile },
		{ .test = test_text },
	};

	return UNIT_SUITE("ucx_proto", "core", 0, cases);
}

const struct unit_test unit_test = { .suite = ucx_proto_suite };
