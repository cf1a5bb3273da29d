/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The main() of the Check tests that read the generated sysfs fixture trees:
 * find them under $top_builddir/tests/fixtures, then run the suite.
 */
#ifndef GDRB_TESTS_FIXTURE_MAIN_H
#define GDRB_TESTS_FIXTURE_MAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "gdrb_sysfs.h"

/* Fills dir (the fixture root), runs suite and returns main()'s exit status. */
static int run_with_fixtures(const char *prog, Suite *suite, char *dir, size_t len)
{
	const char *builddir = getenv("top_builddir");
	SRunner *sr;
	int failed;

	snprintf(dir, len, "%s/tests/fixtures", builddir ? builddir : ".");
	if (!gdrb_is_dir(dir)) {
		fprintf(stderr, "%s: no fixture trees in %s: run 'make check', which "
			"generates them with tests/support/data/mk-sysfs-fixtures.sh\n", prog, dir);
		return 1;
	}
	sr = srunner_create(suite);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
