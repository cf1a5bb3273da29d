/* SPDX-License-Identifier: BSD-3-Clause */
/* The main() every Check unit test links (unit_main.h): run the file's suite, exit 0 or 1. */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "unit_main.h"

static const char *prog = "unit test";

const char *unit_fixtures(void)
{
	static char dir[PATH_MAX];
	const char *builddir = getenv("top_builddir");
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/tests/fixtures", builddir ? builddir : ".");
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: no fixture trees in %s: run 'make check', which "
			"generates them with tests/support/data/mk-sysfs-fixtures.sh\n", prog, dir);
		exit(EXIT_FAILURE);
	}
	return dir;
}

void unit_tcase(Suite *s, const char *tcase, double timeout_s, const struct unit_case *cases,
		size_t n)
{
	TCase *tc = tcase_create(tcase);
	size_t i;

	if (timeout_s > 0)
		tcase_set_timeout(tc, timeout_s);
	for (i = 0; i < n; i++) {
		if (cases[i].loops > 0)
			tcase_add_loop_test(tc, cases[i].test, 0, cases[i].loops);
		else
			tcase_add_test(tc, cases[i].test);
	}
	suite_add_tcase(s, tc);
}

Suite *unit_suite(const char *name, const char *tcase, double timeout_s,
		  const struct unit_case *cases, size_t n)
{
	Suite *s = suite_create(name);

	unit_tcase(s, tcase, timeout_s, cases, n);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (argc > 0 && argv[0]) {
		const char *slash = strrchr(argv[0], '/');

		prog = slash ? slash + 1 : argv[0];
	}
	sr = srunner_create(unit_test.suite());
	if (unit_test.fork)
		srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
