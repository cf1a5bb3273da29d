/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of common/core/opts/opts.c and the layers' option groups: defaults, every option, and one-line usage errors. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_coll_opts.h"
#include "gdrb_log.h"
#include "gdrb_opts.h"
#include "gdrb_reg.h"
#include "gdrb_transports.h"
#include "gdrb_verbs.h"
#include "unit_main.h"

#define PROG "test_opts"
#define SUMMARY "Unit test of the option parser."

/* The core's bits, then the layers' groups as a binary would take them. */
enum {
	T_VERBS = 1u << 16,     /* the verbs options */
	T_COMPLETION = 1u << 17, /* ... and --completion */
	T_MPI = 1u << 18,       /* --mpi-cuda */
	T_SYNC = 1u << 19,      /* the collectives' --sync */
	T_REDUCE = 1u << 20,    /* --op, --dtype */
	T_ROOT = 1u << 21,      /* --root */
	T_IN_PLACE = 1u << 22,  /* --in-place */
};
#define ALL_GROUPS (GDRB_OPTG_COMMON | GDRB_OPTG_MEM | GDRB_OPTG_WINDOW | T_COMPLETION | T_VERBS | \
		    T_MPI | T_SYNC)
#define MAX_ARGS 16

/* One parse: argv (NULL-terminated, without argv[0]) in, rc and output out. */
struct parse_run {
	unsigned groups;
	const char *args[MAX_ARGS];
	int rc;
	char out[8192];         /* what it printed on stdout */
	char err[1024];         /* ... and on stderr */
};

static void redirect(FILE *stream, FILE *tmp, int *saved)
{
	fflush(stream);
	*saved = dup(fileno(stream));
	ck_assert_int_ge(*saved, 0);
	ck_assert_int_ge(dup2(fileno(tmp), fileno(stream)), 0);
}

static void restore(FILE *stream, FILE *tmp, int saved, char *buf, size_t len)
{
	size_t n;

	fflush(stream);
	dup2(saved, fileno(stream));
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

/* The option set of a binary taking `groups`; every shipped group is known. */
static struct gdrb_opt_set opt_set(unsigned groups)
{
	static struct gdrb_opt_use uses[4];

	uses[0] = (struct gdrb_opt_use){ &gdrb_coll_opts,
		(groups & T_SYNC ? GDRB_COLL_OPT_SYNC : 0u) | (groups & T_REDUCE ? GDRB_COLL_OPT_REDUCE : 0u) |
		(groups & T_ROOT ? GDRB_COLL_OPT_ROOT : 0u) | (groups & T_IN_PLACE ? GDRB_COLL_OPT_IN_PLACE : 0u) };
	uses[1] = (struct gdrb_opt_use){ &gdrb_mpi_opts, groups & T_MPI ? GDRB_MPI_OPT_CUDA : 0u };
	uses[2] = (struct gdrb_opt_use){ &gdrb_verbs_opts,
		(groups & T_VERBS ? GDRB_VERBS_OPTS | GDRB_VERBS_OPT_P2P : 0u) | (groups & T_COMPLETION ? GDRB_VERBS_OPT_COMPLETION : 0u) };
	uses[3] = (struct gdrb_opt_use){ NULL, 0 };
	return (struct gdrb_opt_set){ groups & 0xffffu, uses, gdrb_opt_catalog, NULL, GDRB_MEM_HOST };
}

static const struct gdrb_verbs_params *verbs_of(const struct gdrb_params *p)
{
	return gdrb_group_params(p, &gdrb_verbs_opts);
}

static const struct gdrb_coll_params *coll_of(const struct gdrb_params *p)
{
	return gdrb_group_params(p, &gdrb_coll_opts);
}

static const struct gdrb_mpi_params *mpi_of(const struct gdrb_params *p)
{
	return gdrb_group_params(p, &gdrb_mpi_opts);
}

/* What a parse runs: a benchmark's option set into p, or a tool's table into tool_params. */
struct parse_call {
	const struct gdrb_opt_set *set;
	struct gdrb_params *p;
	const struct gdrb_opt_tool *tool;
	void *tool_params;
};

/* PROG and run->args parsed as call says, with stdout and stderr captured into run->out and run->err. */
static int captured(struct parse_run *run, const struct parse_call *call)
{
	char *argv[MAX_ARGS + 2];
	FILE *out = tmpfile(), *err = tmpfile();
	int argc = 0, saved_out, saved_err;
	size_t i;

	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(err);
	argv[argc++] = (char *)PROG;
	for (i = 0; i < MAX_ARGS && run->args[i]; i++)
		argv[argc++] = (char *)run->args[i];
	argv[argc] = NULL;

	redirect(stdout, out, &saved_out);
	redirect(stderr, err, &saved_err);
	run->rc = call->tool ? gdrb_opts_parse_tool(argc, argv, call->tool, SUMMARY, call->tool_params) :
			       gdrb_opts_parse(argc, argv, call->set, SUMMARY, call->p);
	restore(stderr, err, saved_err, run->err, sizeof(run->err));
	restore(stdout, out, saved_out, run->out, sizeof(run->out));
	return run->rc;
}

static int parse(struct parse_run *run, struct gdrb_params *p)
{
	struct gdrb_opt_set set = opt_set(run->groups);

	return captured(run, &(struct parse_call){ .set = &set, .p = p });
}

/* Parse args that must be accepted, printing nothing. */
#define PARSE_OK(p, ...)                                                                \
	do {                                                                            \
		struct parse_run run_ = { ALL_GROUPS, { __VA_ARGS__, NULL }, 0, "", "" };  \
		ck_assert_msg(parse(&run_, (p)) == GDRB_PARSE_RUN, "%s rejected: %s",     \
			      run_.args[0], run_.err);                                  \
		ck_assert_str_eq(run_.out, "");                                         \
		ck_assert_str_eq(run_.err, "");                                         \
	} while (0)

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static void check_defaults(const struct gdrb_params *p)
{
	size_t i;

	ck_assert_uint_eq(p->sizes.n, 28);
	for (i = 0; i < p->sizes.n; i++)
		ck_assert_uint_eq(p->sizes.v[i], (size_t)8 << i);
	ck_assert_uint_eq(p->sizes.v[27], (size_t)1 << 30);
	ck_assert_uint_eq(p->iters, 10000);
	ck_assert_uint_eq(p->warmup, 100);
	ck_assert_uint_eq(p->min_iters, 1000);
	ck_assert_int_eq(p->buffers, GDRB_BUFFERS_SLOTS);
	ck_assert_int_eq(coll_of(p)->sync, GDRB_SYNC_BARRIER);
	ck_assert_double_eq_tol(p->time_per_size, 0.3, 1e-12);
	ck_assert_double_eq_tol(p->timeout, 60.0, 1e-12);
	ck_assert_int_eq(p->mem, GDRB_MEM_HOST);
	ck_assert_int_eq(p->gpu, -1);
	ck_assert_uint_eq(p->window, 64);
	ck_assert(!p->validate);
	ck_assert_ptr_null(p->csv_path);
	ck_assert_ptr_null(p->label);
	ck_assert_int_eq(p->verbose, 0);
	ck_assert(!p->monotonic_clock);
	ck_assert_int_eq(verbs_of(p)->completion, GDRB_COMPLETION_AUTO);
	ck_assert_int_eq(verbs_of(p)->wait, GDRB_WAIT_AUTO);
	ck_assert_int_eq(verbs_of(p)->qps, GDRB_DEF_QPS);
	ck_assert_int_eq(verbs_of(p)->gid_index, -1);
	ck_assert(verbs_of(p)->relaxed_ordering);
	ck_assert_int_eq(coll_of(p)->op, GDRB_SUM);
	ck_assert_int_eq(coll_of(p)->dtype, GDRB_FLOAT);
	ck_assert_int_eq(mpi_of(p)->cuda, GDRB_MPI_CUDA_AUTO);
}

START_TEST(test_defaults)
{
	struct parse_run run = { ALL_GROUPS, { NULL }, 0, "", "" };
	struct gdrb_opt_set set = opt_set(ALL_GROUPS);
	struct gdrb_params p;

	memset(&p, 0x5a, sizeof(p));
	ck_assert_int_eq(gdrb_opts_defaults(&p, &set), 0);
	check_defaults(&p);

	/* No options: the defaults, whatever p held before. */
	memset(&p, 0x5a, sizeof(p));
	ck_assert_int_eq(parse(&run, &p), GDRB_PARSE_RUN);
	check_defaults(&p);
	ck_assert_str_eq(run.err, "");
	ck_assert_int_eq(gdrb_verbose(), 0);
}
END_TEST

START_TEST(test_sizes)
{
	struct gdrb_params p;

	PARSE_OK(&p, "-m", "4K:16K");
	ck_assert_uint_eq(p.sizes.n, 3);
	ck_assert_uint_eq(p.sizes.v[0], 4096);
	ck_assert_uint_eq(p.sizes.v[2], 16384);

	PARSE_OK(&p, "--sizes=8,4K,1M");
	ck_assert_uint_eq(p.sizes.n, 3);
	ck_assert_uint_eq(p.sizes.v[1], 4096);
	ck_assert_uint_eq(p.sizes.v[2], (size_t)1 << 20);

	PARSE_OK(&p, "--sizes", "3:100");
	ck_assert_uint_eq(p.sizes.n, 7);
	ck_assert_uint_eq(p.sizes.v[6], 100);

	/* A second -m is refused (bad_input), never merged or silently taken. */
	PARSE_OK(&p, "-m", "64");
	ck_assert_uint_eq(p.sizes.n, 1);
	ck_assert_uint_eq(p.sizes.v[0], 64);

	if (SIZE_MAX > UINT32_MAX) {
		PARSE_OK(&p, "-m", "16G");
		ck_assert_uint_eq(p.sizes.v[0], (size_t)17179869184ull);
	}
}
END_TEST

START_TEST(test_iterations)
{
	struct gdrb_params p;

	PARSE_OK(&p, "-n", "5");
	ck_assert_uint_eq(p.iters, 5);
	PARSE_OK(&p, "--iters=16777216");
	ck_assert_uint_eq(p.iters, 16777216);
	PARSE_OK(&p, "-n", "7");
	ck_assert_uint_eq(p.iters, 7);
	PARSE_OK(&p, "-w", "0");
	ck_assert_uint_eq(p.warmup, 0);
	PARSE_OK(&p, "--warmup", "4294967296");
	ck_assert_uint_eq(p.warmup, UINT64_C(4294967296));
	PARSE_OK(&p, "--min-iters", "1");
	ck_assert_uint_eq(p.min_iters, 1);
	PARSE_OK(&p, "--min-iters=16777216");
	ck_assert_uint_eq(p.min_iters, 16777216);
}
END_TEST

START_TEST(test_seconds)
{
	struct gdrb_params p;

	PARSE_OK(&p, "-t", "1.5");
	ck_assert_double_eq_tol(p.time_per_size, 1.5, 1e-12);
	PARSE_OK(&p, "--time-per-size=0.001");
	ck_assert_double_eq_tol(p.time_per_size, 0.001, 1e-12);
	PARSE_OK(&p, "--time-per-size", "1e6");
	ck_assert_double_eq_tol(p.time_per_size, 1e6, 1e-6);
	/* 0 is "never" for the timeout only. */
	PARSE_OK(&p, "-T", "0");
	ck_assert_double_eq(p.timeout, 0.0);
	PARSE_OK(&p, "--timeout", "2.5");
	ck_assert_double_eq_tol(p.timeout, 2.5, 1e-12);
}
END_TEST

START_TEST(test_flags)
{
	struct gdrb_params p;

	PARSE_OK(&p, "-c");
	ck_assert_int_eq(p.validate, GDRB_VALIDATE_UNTIMED);
	PARSE_OK(&p, "--validate");
	ck_assert_int_eq(p.validate, GDRB_VALIDATE_UNTIMED);
	/* A unique prefix of a long option is that option. */
	PARSE_OK(&p, "--valid");
	ck_assert(p.validate);
	/* When to check: attached to the long form, or the next word after either form. */
	PARSE_OK(&p, "--validate=every");
	ck_assert_int_eq(p.validate, GDRB_VALIDATE_EVERY);
	PARSE_OK(&p, "-c", "every", "-m", "8");
	ck_assert_int_eq(p.validate, GDRB_VALIDATE_EVERY);
	PARSE_OK(&p, "--validate", "untimed");
	ck_assert_int_eq(p.validate, GDRB_VALIDATE_UNTIMED);
	PARSE_OK(&p, "--validate=no");
	ck_assert_int_eq(p.validate, GDRB_VALIDATE_NO);
	/* A word that is not a mode stays an operand; -c before another option takes nothing from it. */
	PARSE_OK(&p, "-c", "-m", "8");
	ck_assert_int_eq(p.validate, GDRB_VALIDATE_UNTIMED);
	ck_assert_uint_eq(p.sizes.n, 1);

	/* -v is the one option that may be repeated: each adds detail. */
	PARSE_OK(&p, "-v", "--verbose");
	ck_assert_int_eq(p.verbose, 2);
	ck_assert_int_eq(gdrb_verbose(), 2);
	PARSE_OK(&p, "-cv");
	ck_assert(p.validate);
	ck_assert_int_eq(p.verbose, 1);
	ck_assert_int_eq(gdrb_verbose(), 1);

	PARSE_OK(&p, "--clock", "monotonic");
	ck_assert(p.monotonic_clock);
	PARSE_OK(&p, "--clock", "auto");
	ck_assert(!p.monotonic_clock);

	PARSE_OK(&p, "--completion", "poll");
	ck_assert_int_eq(verbs_of(&p)->completion, GDRB_COMPLETION_POLL);
	PARSE_OK(&p, "--completion=imm", "--mem", "device");
	ck_assert_int_eq(verbs_of(&p)->completion, GDRB_COMPLETION_IMM);
	PARSE_OK(&p, "--completion", "auto", "--mem", "device");
	ck_assert_int_eq(verbs_of(&p)->completion, GDRB_COMPLETION_AUTO);

	PARSE_OK(&p, "--wait", "spin");
	ck_assert_int_eq(verbs_of(&p)->wait, GDRB_WAIT_SPIN);
	PARSE_OK(&p, "--wait=event");
	ck_assert_int_eq(verbs_of(&p)->wait, GDRB_WAIT_EVENT);
	PARSE_OK(&p, "--event", "--completion", "imm");
	ck_assert_int_eq(verbs_of(&p)->wait, GDRB_WAIT_EVENT);
	PARSE_OK(&p, "--wait", "auto");
	ck_assert_int_eq(verbs_of(&p)->wait, GDRB_WAIT_AUTO);
}
END_TEST

START_TEST(test_csv_and_label)
{
	struct gdrb_params p;

	PARSE_OK(&p, "--csv", "out.csv", "--label", "run 1, \"quoted\"");
	ck_assert_pstr_eq(p.csv_path, "out.csv");
	ck_assert_pstr_eq(p.label, "run 1, \"quoted\"");
	PARSE_OK(&p, "--csv=/tmp/x.csv", "--label=");
	ck_assert_pstr_eq(p.csv_path, "/tmp/x.csv");
	ck_assert_pstr_eq(p.label, "");
}
END_TEST

START_TEST(test_mem_and_gpu)
{
	struct gdrb_params p;

	PARSE_OK(&p, "--mem", "pinned");
	ck_assert_int_eq(p.mem, GDRB_MEM_PINNED);
	PARSE_OK(&p, "--mem=device", "--gpu", "3");
	ck_assert_int_eq(p.mem, GDRB_MEM_DEVICE);
	ck_assert_int_eq(p.gpu, 3);
	PARSE_OK(&p, "--mem", "pinned", "--gpu=0");
	ck_assert_int_eq(p.mem, GDRB_MEM_PINNED);
	ck_assert_int_eq(p.gpu, 0);
	PARSE_OK(&p, "--gpu", "1023", "--mem", "device");
	ck_assert_int_eq(p.gpu, 1023);
}
END_TEST

START_TEST(test_window)
{
	struct gdrb_params p;

	PARSE_OK(&p, "-W", "16");
	ck_assert_uint_eq(p.window, 16);
	PARSE_OK(&p, "--window=1");
	ck_assert_uint_eq(p.window, 1);
	PARSE_OK(&p, "--window", "65536");
	ck_assert_uint_eq(p.window, 65536);
	PARSE_OK(&p, "--buffers", "single");
	ck_assert_int_eq(p.buffers, GDRB_BUFFERS_SINGLE);
	PARSE_OK(&p, "--buffers=slots");
	ck_assert_int_eq(p.buffers, GDRB_BUFFERS_SLOTS);
	PARSE_OK(&p, "--sync", "none");
	ck_assert_int_eq(coll_of(&p)->sync, GDRB_SYNC_NONE);
	PARSE_OK(&p, "--sync=barrier");
	ck_assert_int_eq(coll_of(&p)->sync, GDRB_SYNC_BARRIER);
}
END_TEST

START_TEST(test_mpi_cuda)
{
	struct gdrb_params p;

	PARSE_OK(&p, "--mpi-cuda", "yes");
	ck_assert_int_eq(mpi_of(&p)->cuda, GDRB_MPI_CUDA_YES);
	PARSE_OK(&p, "--mpi-cuda=no", "--mem", "device");
	ck_assert_int_eq(mpi_of(&p)->cuda, GDRB_MPI_CUDA_NO);
	PARSE_OK(&p, "--mpi-cuda", "auto");
	ck_assert_int_eq(mpi_of(&p)->cuda, GDRB_MPI_CUDA_AUTO);
}
END_TEST

/* The verbs group's options land in its own params, not the core's. */
START_TEST(test_verbs_group)
{
	const struct gdrb_verbs_params *v;
	struct gdrb_params p;

	PARSE_OK(&p, "--ib-dev", "mlx5_1:2", "--mtu", "1024", "--qps", "4", "--tx-depth=64",
		 "--gid-index", "3", "--sl", "5", "--tclass", "96", "--no-relaxed-ordering");
	v = verbs_of(&p);
	ck_assert_str_eq(v->ib_dev, "mlx5_1");
	ck_assert_uint_eq(v->ib_port, 2);
	ck_assert_int_eq(v->mtu, 1024);
	ck_assert_uint_eq(v->qps, 4);
	ck_assert_uint_eq(v->tx_depth, 64);
	ck_assert_int_eq(v->gid_index, 3);
	ck_assert_uint_eq(v->sl, 5);
	ck_assert_uint_eq(v->tclass, 96);
	ck_assert(!v->relaxed_ordering);
	PARSE_OK(&p, "--ib-dev", "rxe0", "--reg", "peermem", "--mem", "device");
	ck_assert_str_eq(verbs_of(&p)->ib_dev, "rxe0");
	ck_assert_uint_eq(verbs_of(&p)->ib_port, 0);
	ck_assert_int_eq(verbs_of(&p)->reg_mode, GDRB_REG_PEERMEM);
	ck_assert_ptr_null(gdrb_group_params(&p, (const struct gdrb_opt_group *)&p));
}
END_TEST

/* The collectives' group. */
START_TEST(test_coll_group)
{
	struct parse_run run = { T_REDUCE | T_ROOT, { "--op", "max", "--dtype", "int64", "--root", "3", NULL },
				 0, "", "" };
	struct gdrb_params p;

	ck_assert_int_eq(parse(&run, &p), GDRB_PARSE_RUN);
	ck_assert_int_eq(coll_of(&p)->op, GDRB_MAX);
	ck_assert_int_eq(coll_of(&p)->dtype, GDRB_INT64);
	ck_assert_int_eq(coll_of(&p)->root, 3);
	ck_assert_int_eq(coll_of(&p)->in_place, GDRB_IN_PLACE_NO);
}
END_TEST

/* --in-place alone is yes, as it always was; its mode after '=' or as the next word. */
START_TEST(test_coll_in_place)
{
	static const struct {
		const char *args[4];
		int mode;
	} ok[] = {
		{ { "--in-place" }, GDRB_IN_PLACE_YES },
		{ { "--in-place", "-m", "8" }, GDRB_IN_PLACE_YES },
		{ { "--in-place", "both" }, GDRB_IN_PLACE_BOTH },
		{ { "--in-place=both" }, GDRB_IN_PLACE_BOTH },
		{ { "--in-place", "no" }, GDRB_IN_PLACE_NO },
		{ { "--in-place=yes", "-m", "8" }, GDRB_IN_PLACE_YES },
	};
	struct gdrb_params p;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct parse_run run;

		memset(&run, 0, sizeof(run));
		run.groups = T_IN_PLACE;
		memcpy(run.args, ok[i].args, sizeof(ok[i].args));
		ck_assert_msg(parse(&run, &p) == GDRB_PARSE_RUN, "%s %s: %s", ok[i].args[0],
			      ok[i].args[1] ? ok[i].args[1] : "", run.err);
		ck_assert_int_eq(coll_of(&p)->in_place, ok[i].mode);
	}
}
END_TEST

/* GNU getopt permutes: options after an operand still count, the operand is an error. */
START_TEST(test_all_together)
{
	struct gdrb_params p;

	PARSE_OK(&p, "-m", "1K,2K", "-n", "9", "-cv", "--mem=pinned", "-W", "2", "--csv=a.csv",
		 "-T", "0");
	ck_assert_uint_eq(p.sizes.n, 2);
	ck_assert_uint_eq(p.iters, 9);
	ck_assert(p.validate);
	ck_assert_int_eq(p.verbose, 1);
	ck_assert_int_eq(p.mem, GDRB_MEM_PINNED);
	ck_assert_uint_eq(p.window, 2);
	ck_assert_pstr_eq(p.csv_path, "a.csv");
	ck_assert_double_eq(p.timeout, 0.0);
}
END_TEST

struct bad_case {
	unsigned groups;
	const char *args[MAX_ARGS];
	const char *says;       /* a part of the one line printed */
};

static const struct bad_case bad_cases[] = {
	{ ALL_GROUPS, { "-m", "0" }, "at least 1 byte" },
	{ ALL_GROUPS, { "-m", "8:4:2" }, "one ':'" },
	{ ALL_GROUPS, { "-m", "1Q" }, "unknown size suffix in '1Q'" },
	{ ALL_GROUPS, { "-m", "99999999999999999999" }, "too large" },
	{ ALL_GROUPS, { "-m", "64:8" }, "larger" },
	{ ALL_GROUPS, { "--sizes=8,,16" }, "-m/--sizes" },
	{ ALL_GROUPS, { "-m", "" }, "-m/--sizes" },
	{ ALL_GROUPS, { "--mem", "gpu" }, "did you mean 'device'" },
	{ ALL_GROUPS, { "--mem", "cpu" }, "did you mean 'host'" },
	{ ALL_GROUPS, { "--mem", "xyz" }, "accepted: host, pinned, device" },
	{ ALL_GROUPS, { "--iters", "-1" }, "--iters: expected an integer from 1 to 16777216" },
	{ ALL_GROUPS, { "--iters", "0" }, "--iters" },
	{ ALL_GROUPS, { "-n", "16777217" }, "--iters" },
	{ ALL_GROUPS, { "-n", "12x" }, "'12x'" },
	{ ALL_GROUPS, { "-n", "0x10" }, "--iters" },
	{ ALL_GROUPS, { "-n", "" }, "--iters" },
	{ ALL_GROUPS, { "-n", "+5" }, "--iters" },
	{ ALL_GROUPS, { "-n", " 5" }, "--iters" },
	{ ALL_GROUPS, { "-n", "99999999999999999999" }, "--iters" },
	{ ALL_GROUPS, { "-w", "-1" }, "--warmup" },
	{ ALL_GROUPS, { "-w", "4294967297" }, "--warmup" },
	{ ALL_GROUPS, { "-t", "0" }, "--time-per-size" },
	{ ALL_GROUPS, { "-t", "-1" }, "--time-per-size" },
	{ ALL_GROUPS, { "-t", "nan" }, "--time-per-size" },
	{ ALL_GROUPS, { "-t", "inf" }, "--time-per-size" },
	{ ALL_GROUPS, { "-t", "1e7" }, "--time-per-size" },
	{ ALL_GROUPS, { "-t", "1s" }, "--time-per-size" },
	{ ALL_GROUPS, { "-t", "" }, "--time-per-size" },
	{ ALL_GROUPS, { "-T", "-1" }, "--timeout" },
	{ ALL_GROUPS, { "-W", "0" }, "--window" },
	{ ALL_GROUPS, { "--min-iters", "0" }, "--min-iters: expected an integer from 1 to 16777216, got '0'" },
	{ ALL_GROUPS, { "--min-iters", "1k" }, "--min-iters: expected an integer" },
	{ ALL_GROUPS, { "--min-iters", "16777217" }, "--min-iters" },
	{ ALL_GROUPS, { "--buffers", "multiple" }, "--buffers: unknown mode 'multiple'; accepted: slots, single" },
	{ ALL_GROUPS, { "--validate=always" }, "--validate: unknown mode 'always'; accepted: no, untimed, every (--validate alone: untimed)" },
	{ ALL_GROUPS, { "--buffers", "" }, "--buffers: unknown mode ''" },
	{ ALL_GROUPS, { "--sync", "yes" }, "--sync: unknown mode 'yes'; accepted: barrier, none" },
	{ GDRB_OPTG_MEM, { "--buffers", "single" }, "--buffers does not apply to test_opts" },
	{ GDRB_OPTG_MEM | GDRB_OPTG_WINDOW, { "--sync", "none" }, "--sync does not apply to test_opts" },
	{ ALL_GROUPS, { "--window", "65537" }, "--window" },
	{ ALL_GROUPS, { "--gpu", "-1" }, "--gpu" },
	{ ALL_GROUPS, { "--gpu", "1024" }, "--gpu" },
	{ ALL_GROUPS, { "--clock", "tsc" }, "accepted: auto, monotonic" },
	{ ALL_GROUPS, { "--csv", "" }, "--csv: expected a file name" },
	{ ALL_GROUPS, { "--bogus" }, "unknown option '--bogus'" },
	{ ALL_GROUPS, { "-x" }, "unknown option '-x'" },
	{ ALL_GROUPS, { "--ti", "1" }, "unknown option '--ti'" },
	{ ALL_GROUPS, { "-m" }, "--sizes needs a value" },
	{ ALL_GROUPS, { "--csv" }, "--csv needs a value" },
	{ ALL_GROUPS, { "-n", "5", "--iters" }, "--iters needs a value" },
	{ ALL_GROUPS, { "--gpu" }, "--gpu needs a value" },
	{ ALL_GROUPS, { "extra" }, "unexpected argument 'extra'" },
	{ ALL_GROUPS, { "-c", "extra", "-v" }, "unexpected argument 'extra'" },
	{ ALL_GROUPS, { "--", "-c" }, "unexpected argument '-c'" },
	/* Options of groups a binary does not take are refused by name. */
	{ GDRB_OPTG_COMMON, { "--mem", "host" }, "--mem does not apply to test_opts" },
	{ GDRB_OPTG_COMMON, { "--gpu=0" }, "--gpu does not apply to test_opts" },
	{ GDRB_OPTG_COMMON, { "-W", "4" }, "--window does not apply to test_opts" },
	{ GDRB_OPTG_MEM, { "--window", "4" }, "--window does not apply to test_opts" },
	{ GDRB_OPTG_MEM, { "--op", "sum" }, "--op does not apply to test_opts" },
	{ GDRB_OPTG_MEM, { "--root", "1" }, "--root does not apply to test_opts" },
	{ GDRB_OPTG_NO_SIZES, { "-m", "8" }, "--sizes does not apply to test_opts" },
	{ T_REDUCE, { "--op", "avg" }, "--op: unknown reduction 'avg'; accepted: sum, prod, min, max" },
	{ T_REDUCE, { "--dtype", "quad" }, "--dtype: unknown type 'quad'; accepted" },
	{ T_ROOT, { "--root", "-1" }, "--root: expected an integer" },
	{ ALL_GROUPS, { "--completion", "event" }, "--completion: unknown mode 'event'; accepted: auto, poll, imm" },
	/* The CPU never polls GPU memory, whatever order the options come in. */
	{ ALL_GROUPS, { "--completion", "poll", "--mem", "device" }, "--completion poll: the CPU never polls GPU memory" },
	{ ALL_GROUPS, { "--mem", "device", "--completion=poll" }, "--completion poll: the CPU never polls GPU memory" },
	{ GDRB_OPTG_MEM, { "--completion", "imm" }, "--completion does not apply to test_opts" },
	{ ALL_GROUPS, { "--wait", "sleep" }, "--wait: unknown mode 'sleep'; accepted: auto, spin, event" },
	/* A rank spinning on the buffer's last byte cannot sleep. */
	{ ALL_GROUPS, { "--completion", "poll", "--event" }, "--completion poll: a rank spinning on the buffer cannot sleep" },
	{ ALL_GROUPS, { "--wait", "event", "--completion=poll" }, "--completion poll: a rank spinning on the buffer cannot sleep" },
	{ GDRB_OPTG_MEM, { "--event" }, "--event does not apply to test_opts" },
	{ ALL_GROUPS, { "--mpi-cuda", "maybe" }, "--mpi-cuda: unknown value 'maybe'; accepted: auto, yes, no" },
	{ ALL_GROUPS, { "--mpi-cuda", "yes", "--mpi-cuda", "auto" }, "--mpi-cuda given twice" },
	{ ALL_GROUPS, { "--mpi-cuda", "1" }, "--mpi-cuda: unknown value '1'; accepted: auto, yes, no" },
	{ ALL_GROUPS, { "--mpi-cuda", "YES" }, "--mpi-cuda: unknown value 'YES'; accepted: auto, yes, no" },
	{ ALL_GROUPS, { "--mpi-cuda", "" }, "--mpi-cuda: unknown value ''; accepted: auto, yes, no" },
	{ ALL_GROUPS, { "--mpi-cuda" }, "--mpi-cuda needs a value" },
	{ GDRB_OPTG_MEM, { "--mpi-cuda", "no" }, "--mpi-cuda does not apply to test_opts" },
	/* An option given twice is refused: neither value wins unseen. */
	{ ALL_GROUPS, { "-m", "8", "-m", "16" }, "-m/--sizes given twice; give each option once" },
	{ ALL_GROUPS, { "-m", "8", "--sizes=16" }, "-m/--sizes given twice" },
	{ ALL_GROUPS, { "--mem", "device", "--mem", "host" }, "--mem given twice" },
	{ ALL_GROUPS, { "-t", "1", "-c", "--time-per-size", "1" }, "-t/--time-per-size given twice" },
	{ ALL_GROUPS, { "-c", "-c" }, "-c/--validate given twice" },
	{ ALL_GROUPS, { "--csv", "a.csv", "--csv", "b.csv" }, "--csv given twice" },
	/* An option that does nothing with the memory asked for. */
	{ ALL_GROUPS, { "--gpu", "5" }, "--gpu has no effect with --mem host" },
	{ ALL_GROUPS, { "--gpu", "0", "--mem", "host" }, "add --mem device or pinned, or drop --gpu" },
	{ ALL_GROUPS, { "--mem", "pinned", "--staging", "serial" }, "--staging has no effect with --mem pinned" },
	{ ALL_GROUPS, { "--stage-chunk", "1M" }, "--stage-chunk has no effect with --mem host" },
	{ ALL_GROUPS | T_VERBS, { "--reg", "dmabuf", "--mem", "pinned" }, "--reg has no effect with --mem pinned" },
	{ ALL_GROUPS, { "--reg", "gdr", "--mem", "device" }, "--reg: unknown registration 'gdr'; accepted: auto, dmabuf, peermem" },
	{ ALL_GROUPS, { "--ib-dev", "mlx5_0:0" }, "--ib-dev: expected NAME or NAME:PORT (mlx5_0, mlx5_0:1), got 'mlx5_0:0'" },
	{ ALL_GROUPS, { "--ib-dev", ":1" }, "--ib-dev: expected NAME or NAME:PORT" },
	{ ALL_GROUPS, { "--mtu", "1000" }, "--mtu: expected 256, 512, 1024, 2048 or 4096, got '1000'" },
	{ ALL_GROUPS, { "--mtu", "8192" }, "--mtu: expected an integer from 256 to 4096, got '8192'" },
	{ ALL_GROUPS, { "--qps", "65" }, "--qps: expected an integer from 1 to 64, got '65'" },
	{ T_VERBS, { "--completion", "imm" }, "--completion does not apply to test_opts" },
	{ GDRB_OPTG_MEM, { "--qps", "2" }, "--qps does not apply to test_opts" },
	{ T_REDUCE, { "--in-place" }, "--in-place does not apply to test_opts" },
	{ T_REDUCE, { "--in-place", "both" }, "--in-place does not apply to test_opts" },
	{ T_IN_PLACE, { "--in-place=sideways" }, "--in-place: unknown mode 'sideways'; accepted: no, yes, both (--in-place alone: yes)" },
	{ T_IN_PLACE, { "--in-place", "sideways" }, "unexpected argument 'sideways'" },
	{ T_IN_PLACE, { "--in-place", "--in-place=no" }, "--in-place given twice" },
};

/* Every bad input: GDRB_ERR_USAGE and one line "prog: ..." naming the problem. */
START_TEST(test_bad_input)
{
	const struct bad_case *c = &bad_cases[_i];
	struct parse_run run;
	struct gdrb_params p;

	memset(&run, 0, sizeof(run));
	run.groups = c->groups;
	memcpy(run.args, c->args, sizeof(run.args));
	ck_assert_msg(parse(&run, &p) == GDRB_ERR_USAGE, "'%s %s' gave %d, want %d",
		      c->args[0], c->args[1] ? c->args[1] : "", run.rc, GDRB_ERR_USAGE);
	ck_assert_str_eq(run.out, "");
	ck_assert_msg(count_char(run.err, '\n') == 1 && run.err[strlen(run.err) - 1] == '\n',
		      "'%s': not one line on stderr: '%s'", c->args[0], run.err);
	ck_assert_msg(strncmp(run.err, PROG ": ", strlen(PROG ": ")) == 0,
		      "'%s': line does not start with the program name: '%s'", c->args[0],
		      run.err);
	ck_assert_msg(strstr(run.err, c->says) != NULL, "'%s %s': '%s' does not say '%s'",
		      c->args[0], c->args[1] ? c->args[1] : "", run.err, c->says);
}
END_TEST

/* An unknown kind with no likely meaning gets no "did you mean". */
START_TEST(test_mem_no_hint)
{
	struct parse_run run = { ALL_GROUPS, { "--mem", "xyz" }, 0, "", "" };
	struct gdrb_params p;

	ck_assert_int_eq(parse(&run, &p), GDRB_ERR_USAGE);
	ck_assert_ptr_null(strstr(run.err, "did you mean"));
}
END_TEST

/* Only the leader prints usage errors and help; the result is the same. */
START_TEST(test_not_leader_quiet)
{
	struct parse_run bad = { ALL_GROUPS, { "-m", "0" }, 0, "", "" };
	struct parse_run help = { ALL_GROUPS, { "--help" }, 0, "", "" };
	struct gdrb_params p;

	gdrb_log_set_leader(0);
	ck_assert_int_eq(parse(&bad, &p), GDRB_ERR_USAGE);
	ck_assert_str_eq(bad.err, "");
	ck_assert_int_eq(parse(&help, &p), GDRB_PARSE_EXIT);
	ck_assert_str_eq(help.out, "");
	gdrb_log_set_leader(1);
}
END_TEST

START_TEST(test_help)
{
	struct parse_run all = { ALL_GROUPS, { "--help" }, 0, "", "" };
	struct parse_run common = { GDRB_OPTG_COMMON, { "-n", "5", "-h" }, 0, "", "" };
	struct gdrb_params p;

	ck_assert_int_eq(parse(&all, &p), GDRB_PARSE_EXIT);
	ck_assert_str_eq(all.err, "");
	ck_assert_ptr_eq(strstr(all.out, "Usage: " PROG " [OPTION]...\n" SUMMARY "\n"), all.out);
	ck_assert_ptr_nonnull(strstr(all.out, "-m, --sizes SIZES"));
	ck_assert_ptr_nonnull(strstr(all.out, "(default " GDRB_DEF_SIZES ")"));
	ck_assert_ptr_nonnull(strstr(all.out, "--mem KIND"));
	ck_assert_ptr_nonnull(strstr(all.out, "--gpu N"));
	ck_assert_ptr_nonnull(strstr(all.out, "-W, --window N"));
	ck_assert_ptr_nonnull(strstr(all.out, "--mpi-cuda MODE"));
	/* Forcing yes is dangerous, and the help says so. */
	ck_assert_ptr_nonnull(strstr(all.out, "crashes"));
	ck_assert_ptr_nonnull(strstr(all.out, "Exit status: 0 ok"));

	/* A binary without --mem and --window does not offer them. */
	ck_assert_int_eq(parse(&common, &p), GDRB_PARSE_EXIT);
	ck_assert_ptr_nonnull(strstr(common.out, "--sizes"));
	ck_assert_ptr_null(strstr(common.out, "--mem"));
	ck_assert_ptr_null(strstr(common.out, "--gpu"));
	ck_assert_ptr_null(strstr(common.out, "--window"));
	ck_assert_ptr_null(strstr(common.out, "--mpi-cuda"));
}
END_TEST

/* The number in "(default N)" on the help line of opt; fails unless exactly "N)". */
static double help_default(const char *help, const char *opt)
{
	const char *line = strstr(help, opt), *eol, *def;
	char *end;
	double v;

	ck_assert_msg(line != NULL, "no %s in the help", opt);
	eol = strchr(line, '\n');
	def = strstr(line, "(default ");
	ck_assert_msg(def != NULL && eol != NULL && def < eol, "%s: no default in the help", opt);
	def += strlen("(default ");
	v = strtod(def, &end);
	ck_assert_msg(end != def && *end == ')', "%s: default '%.*s' is not a number", opt,
		      (int)(eol - def), def);
	return v;
}

/* --help shows the defaults gdrb_opts_defaults sets, as plain numbers. */
START_TEST(test_help_defaults)
{
	struct parse_run run = { ALL_GROUPS, { "--help" }, 0, "", "" };
	struct gdrb_params p, def;
	struct gdrb_opt_set set = opt_set(ALL_GROUPS);

	gdrb_opts_defaults(&def, &set);
	ck_assert_int_eq(parse(&run, &p), GDRB_PARSE_EXIT);
	ck_assert_double_eq(help_default(run.out, "--iters N"), (double)def.iters);
	ck_assert_double_eq(help_default(run.out, "--warmup N"), (double)def.warmup);
	ck_assert_double_eq(help_default(run.out, "--time-per-size SEC"), def.time_per_size);
	ck_assert_double_eq(help_default(run.out, "--timeout SEC"), def.timeout);
	ck_assert_double_eq(help_default(run.out, "--window N"), (double)def.window);
	ck_assert_double_eq(help_default(run.out, "--min-iters N"), (double)def.min_iters);
	ck_assert_ptr_nonnull(strstr(run.out, "at least 3)"));
}
END_TEST

START_TEST(test_version)
{
	struct parse_run run = { ALL_GROUPS, { "--version" }, 0, "", "" };
	struct parse_run short_run = { ALL_GROUPS, { "-V" }, 0, "", "" };
	struct gdrb_params p;

	ck_assert_int_eq(parse(&run, &p), GDRB_PARSE_EXIT);
	ck_assert_str_eq(run.out, PROG " (" PACKAGE_NAME ") " PACKAGE_VERSION "\n");
	ck_assert_str_eq(run.err, "");
	ck_assert_int_eq(parse(&short_run, &p), GDRB_PARSE_EXIT);
	ck_assert_str_eq(short_run.out, run.out);
}
END_TEST

/* A second parse in one process starts clean after one that stopped mid "-xc". */
START_TEST(test_reparse_after_error)
{
	struct parse_run bad = { ALL_GROUPS, { "-xc", NULL }, 0, "", "" };
	struct gdrb_params p;

	ck_assert_int_eq(parse(&bad, &p), GDRB_ERR_USAGE);
	PARSE_OK(&p, "-m", "8");
	ck_assert_uint_eq(p.sizes.n, 1);
	ck_assert_uint_eq(p.sizes.v[0], 8);
	ck_assert(!p.validate);
}
END_TEST

/* A tool's own table (gdrb_opts_parse_tool): a string, a core option, a long-only flag. */
struct tool_params {
	const char *dir;
	bool quiet;
	int mode;               /* -1: not given */
	struct gdrb_params run;
};

static const char *const tool_modes[] = { "off", "on", "both" };

static void tool_usage(FILE *out, const char *summary)
{
	fprintf(out, "tool usage: %s\n", summary);
}

static const struct gdrb_opt tool_table[] = {
	{ .name = "dir", .arg = "DIR", .help = "a directory", .parse = gdrb_opt_string,
	  .off = offsetof(struct tool_params, dir) },
	{ .name = "window", .short_opt = 'W', .arg = "N", .help = "a core option",
	  .parse = gdrb_opt_core, .off = offsetof(struct tool_params, run) },
	{ .name = "quiet", .help = "a long-only flag", .parse = gdrb_opt_set_bool,
	  .off = offsetof(struct tool_params, quiet), .value = 1 },
	{ .name = "mode", .arg = "MODE", .help = "a word that may be left out (on)", .parse = gdrb_opt_enum,
	  .off = offsetof(struct tool_params, mode), .names = tool_modes, .nnames = 3, .what = "mode",
	  .value = 1, .flags = GDRB_OPT_VALUE_OPTIONAL },
	{ .name = "help", .short_opt = 'h', .help = "help" },
	{ .name = "version", .short_opt = 'V', .help = "version" },
};

static int parse_tool(struct parse_run *run, bool as_typed, struct tool_params *tp)
{
	const struct gdrb_opt_tool tool = { tool_table, sizeof(tool_table) / sizeof(tool_table[0]),
					    tool_usage, as_typed };

	memset(tp, 0, sizeof(*tp));
	tp->mode = -1;
	gdrb_opts_defaults(&tp->run, NULL);
	return captured(run, &(struct parse_call){ .tool = &tool, .tool_params = tp });
}

/* A tool's table: its fields and a core option filled, the benchmarks' one-line errors. */
START_TEST(test_tool)
{
	static const struct {
		bool as_typed;
		const char *args[4];
		const char *says;
	} bad[] = {
		{ true, { "-W" }, PROG ": -W needs a value: N\n" },
		{ false, { "-W" }, PROG ": --window needs a value: N\n" },
		{ true, { "-W", "0" }, PROG ": --window: expected an integer from 1 to 65536, got '0'\n" },
		{ true, { "--quiet", "--quiet" }, PROG ": --quiet given twice; give each option once\n" },
		{ true, { "-W", "2", "--window=3" }, PROG ": -W/--window given twice; give each option once\n" },
		{ true, { "--quiet=1" }, PROG ": unknown option '--quiet=1'; run '" PROG " --help' for the options\n" },
		{ true, { "--iters", "5" }, PROG ": unknown option '--iters'; run '" PROG " --help' for the options\n" },
		{ true, { "--dir", "d", "extra" }, PROG ": unexpected argument 'extra'; run '" PROG " --help' for the options\n" },
		{ true, { "--mode=sideways" }, PROG ": --mode: unknown mode 'sideways'; accepted: off, on, both (--mode alone: on)\n" },
		{ true, { "--mode=" }, PROG ": --mode: unknown mode ''; accepted: off, on, both (--mode alone: on)\n" },
		/* A following word that is not one of its values is an operand, as it always was. */
		{ true, { "--mode", "sideways" }, PROG ": unexpected argument 'sideways'; run '" PROG " --help' for the options\n" },
		{ true, { "--mode", "ON" }, PROG ": unexpected argument 'ON'; run '" PROG " --help' for the options\n" },
		{ true, { "--mode", "both", "--mode" }, PROG ": --mode given twice; give each option once\n" },
	};
	struct parse_run ok = { 0, { "--dir", "d", "-W", "4", "--quiet" }, 0, "", "" };
	struct parse_run help = { 0, { "--dir", "d", "-h" }, 0, "", "" };
	struct tool_params tp;
	size_t i;

	ck_assert_int_eq(parse_tool(&ok, true, &tp), GDRB_PARSE_RUN);
	ck_assert_str_eq(ok.err, "");
	ck_assert_str_eq(tp.dir, "d");
	ck_assert_uint_eq(tp.run.window, 4);
	ck_assert(tp.quiet);
	ck_assert_int_eq(tp.mode, -1);
	ck_assert_int_eq(parse_tool(&help, true, &tp), GDRB_PARSE_EXIT);
	ck_assert_str_eq(help.out, "tool usage: " SUMMARY "\n");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct parse_run run;

		memset(&run, 0, sizeof(run));
		memcpy(run.args, bad[i].args, sizeof(bad[i].args));
		ck_assert_int_eq(parse_tool(&run, bad[i].as_typed, &tp), GDRB_ERR_USAGE);
		ck_assert_str_eq(run.out, "");
		ck_assert_str_eq(run.err, bad[i].says);
	}
}
END_TEST

/* A value that may be left out: alone, after '=', or as the next word when it is one of the words. */
START_TEST(test_optional_value)
{
	static const struct {
		const char *args[4];
		int mode;
		unsigned window;
	} ok[] = {
		{ { "--mode" }, 1, 64 },
		{ { "--mode=both" }, 2, 64 },
		{ { "--mode=off" }, 0, 64 },
		{ { "--mode", "both" }, 2, 64 },
		{ { "--mode", "off", "-W", "4" }, 0, 4 },
		{ { "--mode", "-W", "4" }, 1, 4 },
		{ { "-W", "4", "--mode" }, 1, 4 },
	};
	const struct gdrb_opt *o = &tool_table[3];
	struct tool_params tp;
	char lhs[64];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct parse_run run;

		memset(&run, 0, sizeof(run));
		memcpy(run.args, ok[i].args, sizeof(ok[i].args));
		ck_assert_msg(parse_tool(&run, true, &tp) == GDRB_PARSE_RUN, "%s %s: %s", ok[i].args[0],
			      ok[i].args[1] ? ok[i].args[1] : "", run.err);
		ck_assert_str_eq(run.err, "");
		ck_assert_msg(tp.mode == ok[i].mode, "%s %s: mode %d, want %d", ok[i].args[0],
			      ok[i].args[1] ? ok[i].args[1] : "", tp.mode, ok[i].mode);
		ck_assert_uint_eq(tp.run.window, ok[i].window);
	}
	ck_assert_str_eq(o->name, "mode");
	gdrb_opt_usage_lhs(o, "    ", lhs, sizeof(lhs));
	ck_assert_str_eq(lhs, "    --mode[=MODE]");
}
END_TEST

/* gdrb_opt_index_set: lists and ranges to a bit each; a bad list one line naming the option and the form. */
START_TEST(test_index_set)
{
	static const struct gdrb_opt o = { .name = "p2p-gpus", .arg = "LIST", .parse = gdrb_opt_index_set,
		.max = 63, .what = "GPU numbers" };
	static const struct {
		const char *arg;
		uint64_t set;
	} ok[] = {
		{ "0,2,5", 0x25 }, { "0-3", 0xf }, { "0-2,5", 0x27 }, { "7,1", 0x82 }, { "3-3", 0x8 },
		{ "63", UINT64_C(1) << 63 }, { "0-63", UINT64_MAX },
	};
	static const char *const bad[] = {
		"", ",", "1,", ",1", "1,,2", "3-1", "1-", "-1", "a", "1x", " 1", "1 ", "+1", "0x1", "64", "1-64",
		"99999999999999999999", "1,1", "0-3,2", "1.5",
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t set = 0;

		ck_assert_msg(gdrb_opt_index_set(&o, ok[i].arg, &set) == 0, "'%s' refused", ok[i].arg);
		ck_assert_msg(set == ok[i].set, "'%s': %#llx, want %#llx", ok[i].arg, (unsigned long long)set,
			      (unsigned long long)ok[i].set);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *err = tmpfile();
		uint64_t set = 42;
		char text[512];
		int saved, rc;

		ck_assert_ptr_nonnull(err);
		redirect(stderr, err, &saved);
		rc = gdrb_opt_index_set(&o, bad[i], &set);
		restore(stderr, err, saved, text, sizeof(text));
		ck_assert_msg(rc == GDRB_ERR_USAGE, "'%s' accepted", bad[i]);
		ck_assert_msg(set == 42, "'%s' stored", bad[i]);
		ck_assert_msg(count_char(text, '\n') == 1 &&
			      strstr(text, "--p2p-gpus: expected GPU numbers like 0,2,5 or 0-3 (from 0 to 63, each once), got '"),
			      "'%s': %s", bad[i], text);
		ck_assert_msg(!strchr(bad[i], ',') || strcmp(bad[i], "0-3,2") || strstr(text, "named twice"),
			      "'%s' does not say a number is named twice: %s", bad[i], text);
	}
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static Suite *opts_suite(void)
{
	Suite *s = suite_create("opts");
	TCase *tc;

	gdrb_log_init(PROG);
	add_case(s, "defaults", test_defaults);
	add_case(s, "sizes", test_sizes);
	add_case(s, "iterations", test_iterations);
	add_case(s, "seconds", test_seconds);
	add_case(s, "flags", test_flags);
	add_case(s, "csv_and_label", test_csv_and_label);
	add_case(s, "mem_and_gpu", test_mem_and_gpu);
	add_case(s, "window", test_window);
	add_case(s, "mpi_cuda", test_mpi_cuda);
	add_case(s, "verbs_group", test_verbs_group);
	add_case(s, "coll_group", test_coll_group);
	add_case(s, "coll_in_place", test_coll_in_place);
	add_case(s, "all_together", test_all_together);
	/* One run per bad input, each in a fresh process. */
	tc = tcase_create("bad_input");
	tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	suite_add_tcase(s, tc);
	add_case(s, "mem_no_hint", test_mem_no_hint);
	add_case(s, "not_leader_quiet", test_not_leader_quiet);
	add_case(s, "help", test_help);
	add_case(s, "help_defaults", test_help_defaults);
	add_case(s, "version", test_version);
	add_case(s, "reparse_after_error", test_reparse_after_error);
	add_case(s, "tool", test_tool);
	add_case(s, "optional_value", test_optional_value);
	add_case(s, "index_set", test_index_set);
	return s;
}

const struct unit_test unit_test = { .suite = opts_suite };
