/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/doctor: the topology of --json on a fixture tree with a CUDA inventory
 * set by hand (a fixture tree never asks CUDA): the compute capability where CUDA sees the
 * GPU, null where it does not or gives none; and check 3's verdict and fix on a healthy fixture
 * given NVML's NVLink speeds by hand: one link slower than its GPU's others warns, with the fix.
 */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_doctor.h"

#include "unit_main.h"

/* The doctor of fixture tree name loaded into d, its checks not yet run. */
static void load(struct gdrb_doctor *d, const char *name)
{
	char sys[PATH_MAX + 64], proc[PATH_MAX + 64];
	struct gdrb_doctor_opts o;

	snprintf(sys, sizeof(sys), "%s/%s/sys", unit_fixtures(), name);
	snprintf(proc, sizeof(proc), "%s/%s/proc", unit_fixtures(), name);
	memset(&o, 0, sizeof(o));
	o.sysfs_root = sys;
	o.procfs_root = proc;
	o.max_size = 8;
	o.window = 1;
	o.window_bytes = 8;
	ck_assert_int_eq(gdrb_doctor_load(d, &o), 0);
}

/* The --json of fixture name, CUDA seeing what set_cuda gives it. */
static char *json_of(const char *name, void (*set_cuda)(struct gdrb_cuda_inventory *))
{
	struct gdrb_doctor d;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	load(&d, name);
	set_cuda(&d.cuda);
	d.cuda_ok = d.cuda.count > 0;
	gdrb_doctor_run(&d);
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	gdrb_doctor_print_json(&d, f);
	fclose(f);
	gdrb_doctor_free(&d);
	return text;
}

/* GPU 0000:13:00.0 as CUDA pads it, compute capability 9.0; 0000:14:00.0 without one. */
static void two_gpus(struct gdrb_cuda_inventory *inv)
{
	inv->count = 2;
	snprintf(inv->devs[0].name, sizeof(inv->devs[0].name), "NVIDIA H100 80GB HBM3");
	snprintf(inv->devs[0].pci_bus_id, sizeof(inv->devs[0].pci_bus_id), "00000000:13:00.0");
	inv->devs[0].cc_major = 9;
	inv->devs[0].cc_minor = 0;
	snprintf(inv->devs[1].pci_bus_id, sizeof(inv->devs[1].pci_bus_id), "00000000:14:00.0");
}

static void no_gpu(struct gdrb_cuda_inventory *inv)
{
	inv->count = 0;
}

/* The text of GPU bdf's object in json: from its "pci" key to the end of the object. */
static const char *gpu_in(const char *json, const char *bdf)
{
	char key[64];
	const char *at;

	snprintf(key, sizeof(key), "\"pci\": \"%s\"", bdf);
	at = strstr(json, key);
	ck_assert_msg(at != NULL, "no GPU %s in the JSON", bdf);
	return at;
}

START_TEST(test_compute_capability)
{
	char *json = json_of("healthy", two_gpus);
	const char *g0, *g1;

	g0 = gpu_in(json, "0000:13:00.0");
	g1 = gpu_in(json, "0000:14:00.0");
	ck_assert_msg(strstr(g0, "\"compute_capability\": \"9.0\"") &&
		      strstr(g0, "\"compute_capability\": \"9.0\"") < g1, "%.600s", g0);
	ck_assert_msg(strstr(g1, "\"compute_capability\": null"), "%.600s", g1);
	ck_assert_msg(strstr(g0, "\"link\": {\n          \"gts\": 32,\n          \"width\": 16\n        }"),
		      "%.600s", g0);
	free(json);

	/* CUDA not asked or seeing no GPU: null, never a guess from the name. */
	json = json_of("a100", no_gpu);
	ck_assert(!strstr(json, "\"compute_capability\": \""));
	ck_assert(strstr(gpu_in(json, "0000:13:00.0"), "\"compute_capability\": null"));
	free(json);
}
END_TEST

/* Check 3 of the healthy fixture with NVML's answer for its two GPUs: 18 links up each, at
 * 25000 MB/s but link slow of GPU 1 at half that (slow < 0: none slower). */
static void nvlink_check(int slow, struct gdrb_doc_check *out)
{
	struct gdrb_doctor *d = calloc(1, sizeof(*d));
	size_t g, l;

	ck_assert_ptr_nonnull(d);
	load(d, "healthy");
	d->ask_nvml = true;
	d->nvml.known = true;
	d->nvml.reported = 2;
	d->nvml.ngpus = 2;
	for (g = 0; g < 2; g++) {
		struct gdrb_nvml_gpu *gp = &d->nvml.gpus[g];

		snprintf(gp->pci, sizeof(gp->pci), "0000:%02zx:00.0", 0x13 + g);
		snprintf(gp->name, sizeof(gp->name), "unit test GPU");
		gp->links = gp->up = gp->to_switch = GDRB_NVLINK_MAX_LINKS;
		gp->version = 6;
		for (l = 0; l < GDRB_NVLINK_MAX_LINKS; l++) {
			gp->state[l] = GDRB_NVLINK_UP;
			gp->remote[l] = GDRB_NVLINK_REMOTE_SWITCH;
			gp->speed_mbps[l] = g == 1 && (int)l == slow ? 12500 : 25000;
		}
	}
	gdrb_doctor_run(d);
	*out = d->checks[2];
	out->items = NULL;
	gdrb_doctor_free(d);
	free(d);
}

START_TEST(test_nvlink_slow)
{
	struct gdrb_doc_check c;

	nvlink_check(-1, &c);
	ck_assert_str_eq(c.name, "gpus");
	ck_assert_int_eq(c.v, GDRB_DOC_PASS);
	ck_assert_str_eq(c.fix, "");
	nvlink_check(11, &c);
	ck_assert_int_eq(c.v, GDRB_DOC_WARN);
	ck_assert_msg(strstr(c.fix, "nvidia-smi nvlink -s") != NULL, "fix: %s", c.fix);
}
END_TEST

static Suite *doctor_suite(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = tcase_create("json");

	tcase_add_test(tc, test_compute_capability);
	tcase_add_test(tc, test_nvlink_slow);
	suite_add_tcase(s, tc);
	return s;
}

const struct unit_test unit_test = { .suite = doctor_suite };
