/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The size parsers (common/util/size.c): one size, a size set, and what is
 * computed from them. A size accepted is 1 byte to GDRB_SIZE_LIMIT and reads
 * back the same from its printed form; a set holds 1 to GDRB_SIZES_MAX sizes;
 * a refusal has a one-line reason.
 */
#include "config.h"

#include "fuzz.h"
#include "gdrb_size.h"

static void one_size(const char *text)
{
	char printed[32];
	const char *err;
	size_t v = 0, again = 0;

	if (gdrb_size_parse(text, &v, &err)) {
		fuzz_one_line("gdrb_size_parse", err);
		return;
	}
	if (v < 1 || v > GDRB_SIZE_LIMIT)
		fuzz_broken("gdrb_size_parse('%s') accepted %zu, outside 1..%zu", text, v,
			    (size_t)GDRB_SIZE_LIMIT);
	gdrb_size_format(v, printed, sizeof(printed));
	if (gdrb_size_parse(printed, &again, &err) || again != v)
		fuzz_broken("'%s' is %zu, printed '%s', read back as %zu", text, v, printed, again);
}

static void size_set(const char *text)
{
	struct gdrb_sizes sizes;
	const char *err;
	size_t i;

	if (gdrb_sizes_parse(text, &sizes, &err)) {
		fuzz_one_line("gdrb_sizes_parse", err);
		return;
	}
	if (sizes.n < 1 || sizes.n > GDRB_SIZES_MAX)
		fuzz_broken("gdrb_sizes_parse('%s') gave %zu sizes", text, sizes.n);
	for (i = 0; i < sizes.n; i++)
		if (sizes.v[i] < 1 || sizes.v[i] > GDRB_SIZE_LIMIT)
			fuzz_broken("gdrb_sizes_parse('%s') gave size %zu", text, sizes.v[i]);
	if (gdrb_buf_bytes(&sizes, 64, (size_t)1 << 30, true) < gdrb_sizes_max(&sizes))
		fuzz_broken("gdrb_buf_bytes('%s') is below the largest size", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);

	one_size(text);
	size_set(text);
	free(text);
	return 0;
}
