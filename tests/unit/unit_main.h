/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Check unit tests share one main() (unit_main.c): each test file defines
 * unit_test, its suite and how that suite runs, and nothing else of the program.
 */
#ifndef GDRB_TESTS_UNIT_MAIN_H
#define GDRB_TESTS_UNIT_MAIN_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

struct unit_test {
	/* Builds the suite, after whatever the process needs first (a log name, the environment). */
	Suite *(*suite)(void);
	/* Each test in a process of its own even where CK_FORK=no asks otherwise. */
	bool fork;
};

/* Defined by each test file. */
extern const struct unit_test unit_test;

/* One test of a table-built suite; loops > 0 runs it with _i from 0 to loops - 1. */
struct unit_case {
	const TTest *test;
	int loops;
};

/* Adds to s a test case holding the cases in order; timeout_s 0 keeps Check's default. */
void unit_tcase(Suite *s, const char *tcase, double timeout_s, const struct unit_case *cases,
		size_t n);

/* A suite of one such test case. */
Suite *unit_suite(const char *name, const char *tcase, double timeout_s,
		  const struct unit_case *cases, size_t n);

#define UNIT_COUNT(cases) (sizeof(cases) / sizeof((cases)[0]))
#define UNIT_TCASE(s, tcase, timeout_s, cases) unit_tcase(s, tcase, timeout_s, cases, UNIT_COUNT(cases))
#define UNIT_SUITE(name, tcase, timeout_s, cases) \
	unit_suite(name, tcase, timeout_s, cases, UNIT_COUNT(cases))

/* The root of the generated sysfs and procfs fixture trees ($top_builddir/tests/fixtures);
 * exits 1, saying how to make them, where they are missing. */
const char *unit_fixtures(void);

#endif
