/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/mpi/boot_cuda.c: whether an MPI takes device pointers,
 * from --mpi-cuda, the run-time query MPIX_Query_cuda_support() and the
 * compile-time MPIX_CUDA_AWARE_SUPPORT, and the reason the header prints.
 */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_boot.h"
#include "gdrb_boot_mpi.h"
#include "unit_main.h"

#define NONE { false, 0, false, 0, "", 0 }
#define QUERY(q) { true, (q), false, 0, "", 0 }
#define MACRO(m) { false, 0, true, (m), "", 0 }
#define BOTH(q, m) { true, (q), true, (m), "", 0 }
/* Open MPI's parameter through MPI_T, alone or beside the query. */
#define BUILT(b) { false, 0, false, 0, "mpi_built_with_cuda_support", (b) }
#define QUERY_BUILT(q, b) { true, (q), false, 0, "opal_built_with_cuda_support", (b) }

struct decide_case {
	const char *what;
	enum gdrb_mpi_cuda want;
	struct gdrb_mpi_cuda_facts facts;
	bool aware;
	const char *why;        /* the whole reason */
};

static const struct decide_case cases[] = {
	/* auto: the run-time answer first (Open MPI 4 and 5, MPICH >= 4) ... */
	{ "Debian's Open MPI 4.1.4", GDRB_MPI_CUDA_AUTO, BOTH(0, 0), false,
	  "by MPIX_Query_cuda_support() = 0 at run time; MPIX_CUDA_AWARE_SUPPORT = 0 at compile time" },
	{ "Open MPI built with CUDA", GDRB_MPI_CUDA_AUTO, BOTH(1, 1), true,
	  "by MPIX_Query_cuda_support() = 1 at run time; MPIX_CUDA_AWARE_SUPPORT = 1 at compile time" },
	{ "the query overrules the macro (yes)", GDRB_MPI_CUDA_AUTO, BOTH(1, 0), true,
	  "by MPIX_Query_cuda_support() = 1 at run time; MPIX_CUDA_AWARE_SUPPORT = 0 at compile time" },
	{ "the query overrules the macro (no)", GDRB_MPI_CUDA_AUTO, BOTH(0, 1), false,
	  "by MPIX_Query_cuda_support() = 0 at run time; MPIX_CUDA_AWARE_SUPPORT = 1 at compile time" },
	{ "MPICH >= 4 with GPU support", GDRB_MPI_CUDA_AUTO, QUERY(1), true,
	  "by MPIX_Query_cuda_support() = 1 at run time; no MPIX_CUDA_AWARE_SUPPORT" },
	{ "MPICH >= 4 without", GDRB_MPI_CUDA_AUTO, QUERY(0), false,
	  "by MPIX_Query_cuda_support() = 0 at run time; no MPIX_CUDA_AWARE_SUPPORT" },
	/* ... then the compile-time macro ... */
	{ "only the macro, 1", GDRB_MPI_CUDA_AUTO, MACRO(1), true,
	  "by MPIX_CUDA_AWARE_SUPPORT = 1 at compile time; no MPIX_Query_cuda_support" },
	{ "only the macro, 0", GDRB_MPI_CUDA_AUTO, MACRO(0), false,
	  "by MPIX_CUDA_AWARE_SUPPORT = 0 at compile time; no MPIX_Query_cuda_support" },
	/* ... then Open MPI's built_with_cuda_support parameter ... */
	{ "only the parameter, true", GDRB_MPI_CUDA_AUTO, BUILT(1), true,
	  "by this MPI has neither MPIX_Query_cuda_support nor MPIX_CUDA_AWARE_SUPPORT; mpi_built_with_cuda_support = true" },
	{ "only the parameter, false", GDRB_MPI_CUDA_AUTO, BUILT(0), false,
	  "by this MPI has neither MPIX_Query_cuda_support nor MPIX_CUDA_AWARE_SUPPORT; mpi_built_with_cuda_support = false" },
	{ "the query overrules the parameter", GDRB_MPI_CUDA_AUTO, QUERY_BUILT(0, 1), false,
	  "by MPIX_Query_cuda_support() = 0 at run time; no MPIX_CUDA_AWARE_SUPPORT; opal_built_with_cuda_support = true" },
	/* ... else no: a device pointer never goes to an MPI that did not say it takes one. */
	{ "neither", GDRB_MPI_CUDA_AUTO, NONE, false,
	  "by default: this MPI has neither MPIX_Query_cuda_support nor MPIX_CUDA_AWARE_SUPPORT" },
	/* The user's choice wins either way, and the reason keeps what was detected. */
	{ "--mpi-cuda yes against the query", GDRB_MPI_CUDA_YES, BOTH(0, 0), true,
	  "by --mpi-cuda yes; detected: MPIX_Query_cuda_support() = 0 at run time; MPIX_CUDA_AWARE_SUPPORT = 0 at compile time" },
	{ "--mpi-cuda yes without any detection", GDRB_MPI_CUDA_YES, NONE, true,
	  "by --mpi-cuda yes; detected: this MPI has neither MPIX_Query_cuda_support nor MPIX_CUDA_AWARE_SUPPORT" },
	{ "--mpi-cuda no against the query", GDRB_MPI_CUDA_NO, QUERY(1), false,
	  "by --mpi-cuda no; detected: MPIX_Query_cuda_support() = 1 at run time; no MPIX_CUDA_AWARE_SUPPORT" },
	{ "--mpi-cuda no against the macro", GDRB_MPI_CUDA_NO, MACRO(1), false,
	  "by --mpi-cuda no; detected: MPIX_CUDA_AWARE_SUPPORT = 1 at compile time; no MPIX_Query_cuda_support" },
};

START_TEST(test_decide)
{
	const struct decide_case *c = &cases[_i];
	struct gdrb_mpi_lib lib;
	char why[sizeof(lib.cuda_aware_why)];
	bool aware;

	memset(why, 'x', sizeof(why));
	aware = gdrb_mpi_cuda_decide(c->want, &c->facts, why, sizeof(why));
	ck_assert_msg(aware == c->aware, "%s: decided %s", c->what, aware ? "yes" : "no");
	ck_assert_msg(strcmp(why, c->why) == 0, "%s: reason '%s', want '%s'", c->what, why, c->why);
	/* The header's reason buffer holds it whole. */
	ck_assert_uint_lt(strlen(c->why), sizeof(lib.cuda_aware_why));
	/* No reason wanted: the same answer. */
	ck_assert(gdrb_mpi_cuda_decide(c->want, &c->facts, NULL, 0) == c->aware);
}
END_TEST

/* A short buffer gets a cut, terminated reason, and nothing past its end. */
START_TEST(test_short_buffer)
{
	const struct gdrb_mpi_cuda_facts f = BOTH(0, 0);
	char why[16 + 4];

	memset(why, 'x', sizeof(why));
	ck_assert(!gdrb_mpi_cuda_decide(GDRB_MPI_CUDA_AUTO, &f, why, 16));
	ck_assert_uint_eq(strlen(why), 15);
	ck_assert_int_eq(memcmp(why, "by MPIX_Query_c", 15), 0);
	ck_assert_int_eq(why[16], 'x');
	ck_assert(gdrb_mpi_cuda_decide(GDRB_MPI_CUDA_YES, &f, why, 1));
	ck_assert_str_eq(why, "");
}
END_TEST

/* The names --mpi-cuda accepts, in the order of the enum. */
START_TEST(test_names)
{
	ck_assert_str_eq(gdrb_mpi_cuda_names[GDRB_MPI_CUDA_AUTO], "auto");
	ck_assert_str_eq(gdrb_mpi_cuda_names[GDRB_MPI_CUDA_YES], "yes");
	ck_assert_str_eq(gdrb_mpi_cuda_names[GDRB_MPI_CUDA_NO], "no");
	/* auto is 0: a bootstrap nobody set (the doctor's) detects. */
	ck_assert_int_eq(GDRB_MPI_CUDA_AUTO, 0);
}
END_TEST

static Suite *boot_suite(void)
{
	Suite *s = suite_create("boot");
	TCase *tc = tcase_create("mpi_cuda");

	tcase_add_loop_test(tc, test_decide, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_short_buffer);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}

const struct unit_test unit_test = { .suite = boot_suite };
