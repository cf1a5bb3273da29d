/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Check unit tests share one main() (unit_main.c): each test file defines
 * unit_test, its suite and how that suite runs, and nothing else of the program.
 */
#ifndef GDRB_TESTS_UNIT_MAIN_H
#define GDRB_TESTS_UNIT_MAIN_H

#include <check.h>
#include <stdbool.h>

struct unit_test {
	/* Builds the suite, after whatever the process needs first (a log name, the environment). */
	Suite *(*suite)(void);
	/* Each test in a process of its own even where CK_FORK=no asks otherwise. */
	bool fork;
};

/* Defined by each test file. */
extern const struct unit_test unit_test;

/* The root of the generated sysfs and procfs fixture trees ($top_builddir/tests/fixtures);
 * exits 1, saying how to make them, where they are missing. */
const char *unit_fixtures(void);

#endif
