/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the C fuzz harnesses (tests/fuzz/fuzz_*.c) share. Each defines
 * LLVMFuzzerTestOneInput: libFuzzer calls it when the harness is built with
 * clang -fsanitize=fuzzer, and tests/fuzz/replay.c does, once per file, in the
 * replay program that any compiler builds. A broken contract is fuzz_broken():
 * a message and abort(), which both count as a crash.
 */
#ifndef GDRB_TESTS_FUZZ_H
#define GDRB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

__attribute__((noreturn, format(printf, 1, 2)))
static inline void fuzz_broken(const char *fmt, ...);

#include <stdarg.h>

static inline void fuzz_broken(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz: contract broken: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* The input as a C string (up to its first NUL), on the heap: ASan sees a read past it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* An error message the user sees: there, and one line. */
static inline void fuzz_one_line(const char *what, const char *msg)
{
	if (!msg || !*msg)
		fuzz_broken("%s: failed without a reason", what);
	if (strpbrk(msg, "\r\n"))
		fuzz_broken("%s: a reason of more than one line: '%s'", what, msg);
}

#endif
