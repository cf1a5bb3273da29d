/*
 * A deliberate fault for the sanitizer pass (tests/meta/sanitizers.sh): each argument
 * commits one defect that ASan, UBSan or LSan must report and fail on, so that a
 * build which lost its sanitizer flags cannot pass that test.
 *
 *   sanitize_fault none|heap|signed|shift|leak
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kept in a global so that the compiler cannot prove the fault at build time. */
volatile size_t fault_size = 8;
static void *leaked;

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	char *buf;
	int n;

	if (strcmp(what, "none") == 0) {
		buf = malloc(fault_size);
		if (!buf)
			return 1;
		memset(buf, 0, fault_size);
		free(buf);
		return 0;
	}
	if (strcmp(what, "heap") == 0) {
		buf = malloc(fault_size);
		if (!buf)
			return 1;
		memset(buf, 0, fault_size + 1);	/* one byte past the end */
		n = buf[0];
		free(buf);
		return n;
	}
	if (strcmp(what, "signed") == 0) {
		n = INT_MAX - 1 + (int)fault_size;	/* INT_MAX + 7 */
		return n == 0;
	}
	if (strcmp(what, "shift") == 0) {
		n = 1 << (int)(fault_size * 4);	/* shift by 32 */
		return n == 0;
	}
	if (strcmp(what, "leak") == 0) {
		leaked = malloc(fault_size * 1000);
		if (!leaked)
			return 1;
		memset(leaked, 1, fault_size * 1000);
		leaked = NULL;	/* the last pointer to it is gone */
		return 0;
	}
	fprintf(stderr, "sanitize_fault: argument must be none, heap, signed, shift or leak, not '%s'\n", what);
	return 2;
}
