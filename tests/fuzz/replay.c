/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fuzz harness's inputs once each, without libFuzzer: the committed seeds and
 * regression corpus of tests/fuzz/corpus, replayed by make check with any
 * compiler (and under the sanitizer pass's ASan and UBSan).
 *
 *   replay_TARGET FILE|DIR...
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, got;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (size == cap) {
			uint8_t *bigger = realloc(data, cap = cap ? 2 * cap : 4096);

			if (!bigger)
				abort();
			data = bigger;
		}
		got = fread(data + size, 1, cap - size, f);
		size += got;
	} while (got);
	fclose(f);
	printf("replay: %s\n", path);
	fflush(stdout);
	/* An exact-size copy: ASan sees a read one past the input. */
	{
		uint8_t *exact = malloc(size ? size : 1);

		if (!exact)
			abort();
		memcpy(exact, data, size);
		LLVMFuzzerTestOneInput(exact, size);
		free(exact);
	}
	free(data);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, int *count)
{
	char **names = NULL, path[4096];
	struct dirent *e;
	size_t n = 0, i;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char **more;

		if (e->d_name[0] == '.')
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more || !(more[n] = strdup(e->d_name)))
			abort();
		names = more;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (replay_file(path))
			rc = -1;
		else
			(*count)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int i, count = 0, rc = 0;
	struct stat st;

	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode)) {
			if (replay_dir(argv[i], &count))
				rc = 1;
		} else if (replay_file(argv[i])) {
			rc = 1;
		} else {
			count++;
		}
	}
	printf("replayed %d inputs\n", count);
	return rc;
}
