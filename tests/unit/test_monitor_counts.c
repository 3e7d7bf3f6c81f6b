/*
 * Decoding the monitor counters: slots to per-load and per-data-structure
 * fields, E_on / E_off, the capture kernel update, and bad layouts.
 */
#include "base/error.h"
#include "analysis/capture_model.h"
#include "analysis/monitor_counts.h"
#include "tests/unit/check.h"

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fprintf(stderr, "bad test JSON: %s\n", e.text);
	return j;
}

/* A kernel with two loads and a data structure, and a device function
 * with one load, as ptx_instrument() lays them out. */
static const char *LAYOUT =
	"{\"schema\": \"cacheadvise.monitor_layout/1\", \"symbol\": \"__cacheadvise_counters\","
	" \"slots\": 14, \"threshold\": 300, \"sector_bytes\": 32, \"line_bytes\": 128,"
	" \"sim_line_bytes\": 16, \"exit_aggregation\": \"warp\", \"functions\": ["
	"  {\"name\": \"_Z3dev\", \"kind\": \"func\", \"loads\": [{\"ordinal\": 0,"
	"    \"requests\": 0, \"sectors\": 1, \"lines\": 2, \"bytes\": 3}],"
	"   \"skipped_loads\": [], \"data_structures\": []},"
	"  {\"name\": \"_Z1kPKfPf\", \"kind\": \"entry\", \"loads\": ["
	"    {\"ordinal\": 0, \"requests\": 4, \"sectors\": 5, \"lines\": 6, \"bytes\": 7},"
	"    {\"ordinal\": 2, \"requests\": 8, \"sectors\": 9, \"lines\": 10, \"bytes\": 11}],"
	"   \"skipped_loads\": [{\"ordinal\": 1, \"reason\": \"generic\"}],"
	"   \"data_structures\": [{\"param\": 1, \"name\": \"p1\", \"read_only\": false,"
	"    \"hits\": 12, \"accesses\": 13}]}]}";

static void test_read(void)
{
	/* dev load 0: 10 warps, fully coalesced 4-byte loads: 4 sectors,
	 * 1 line, 128 bytes each.
	 * k load 0: 100 warps of a coalesced float load (4 sectors, 1 line,
	 * 128 bytes); k load 2: 50 warps of a scattered float load (32
	 * sectors, 32 lines, 128 bytes). */
	const uint64_t counters[14] = { 10, 40, 10, 1280, 100, 400, 100, 12800,
					50, 1600, 1600, 6400, 270, 300 };
	struct monitor_counts mc;
	const struct monitor_function *f;
	json_t *layout = parse(LAYOUT);
	double on, off;

	monitor_counts_init(&mc);
	CHECK_INT(monitor_counts_read(&mc, layout, counters, 14), 0);
	CHECK_INT(mc.nr_functions, 2);
	CHECK_INT(mc.sector_bytes, 32);
	CHECK_INT(mc.line_bytes, 128);
	CHECK_INT(mc.threshold, 300);
	f = monitor_counts_find(&mc, "_Z1kPKfPf");
	CHECK(f != NULL);
	if (!f)
		goto out;
	CHECK_INT(f->is_entry, 1);
	CHECK_INT(f->nr_loads, 2);
	CHECK_INT(f->loads[1].ordinal, 2);
	CHECK_INT(f->loads[1].requests, 50);
	CHECK_INT(f->loads[1].sectors, 1600);
	CHECK_INT(f->loads[1].lines, 1600);
	CHECK_INT(f->loads[1].bytes, 6400);
	CHECK_INT(f->nr_ds, 1);
	CHECK_INT(f->ds[0].param, 1);
	CHECK_INT(f->ds[0].read_only, 0);
	CHECK_INT(f->ds[0].sim_hits, 270);
	CHECK_INT(f->ds[0].sim_accesses, 300);
	CHECK_INT(monitor_counts_find(&mc, "_Z3dev")->is_entry, 0);
	CHECK(monitor_counts_find(&mc, "nope") == NULL);

	/* kernel alone: bytes 19200, lines 1700 x 128, sectors 2000 x 32 */
	CHECK_INT(monitor_counts_efficiency(&mc, "_Z1kPKfPf", 0, &on, &off), 0);
	CHECK_NEAR(on, 19200.0 / (1700.0 * 128), 1e-12);
	CHECK_NEAR(off, 19200.0 / (2000.0 * 32), 1e-12);
	/* with the device function: bytes 20480, lines 1710, sectors 2040 */
	CHECK_INT(monitor_counts_efficiency(&mc, "_Z1kPKfPf", 1, &on, &off), 0);
	CHECK_NEAR(on, 20480.0 / (1710.0 * 128), 1e-12);
	CHECK_NEAR(off, 20480.0 / (2040.0 * 32), 1e-12);
	/* the seed's example: an aligned 16-byte request alone */
	{
		const uint64_t one[14] = { 0, 0, 0, 0, 1, 1, 1, 16 };
		struct monitor_counts m2;

		monitor_counts_init(&m2);
		CHECK_INT(monitor_counts_read(&m2, layout, one, 14), 0);
		CHECK_INT(monitor_counts_efficiency(&m2, "_Z1kPKfPf", 0, &on, &off), 0);
		CHECK_NEAR(on, 0.125, 1e-12);
		CHECK_NEAR(off, 0.5, 1e-12);
		monitor_counts_release(&m2);
	}
out:
	monitor_counts_release(&mc);
	json_decref(layout);
}

/* monitor_counts_update_kernel() on kernel JSON k, read as the profile
 * reads it (capture_kernel_from_json). */
static int update(const struct monitor_counts *mc, json_t *k)
{
	struct capture_kernel ck;
	int ret;

	memset(&ck, 0, sizeof(ck));
	ret = capture_kernel_from_json(&ck, k, "capture.json");
	if (!ret)
		ret = monitor_counts_update_kernel(mc, &ck, 0);
	capture_kernel_release(&ck);
	return ret;
}

static void test_update_kernel(void)
{
	const uint64_t counters[14] = { 10, 40, 10, 1280, 100, 400, 100, 12800,
					50, 1600, 1600, 6400, 270, 300 };
	const uint64_t zeros[14] = { 0 };
	struct monitor_counts mc;
	json_t *layout = parse(LAYOUT);
	json_t *k = parse("{\"module\": \"m\", \"name\": \"_Z1kPKfPf\", \"loads\": ["
			  " {\"ordinal\": 0, \"ptx_line\": 40, \"access\": null},"
			  " {\"ordinal\": 1, \"ptx_line\": 41, \"access\": null}]}");
	json_t *l0, *l1, *l2, *eff, *ds;

	monitor_counts_init(&mc);
	CHECK_INT(monitor_counts_read(&mc, layout, counters, 14), 0);
	CHECK_INT(update(&mc, k), 0);
	l0 = json_array_get(json_object_get(k, "loads"), 0);
	l1 = json_array_get(json_object_get(k, "loads"), 1);
	l2 = json_array_get(json_object_get(k, "loads"), 2);
	CHECK_INT(json_integer_value(json_object_get(l0, "access")), 400);
	CHECK_INT(json_integer_value(json_object_get(l0, "requests")), 100);
	CHECK_INT(json_integer_value(json_object_get(l0, "lines")), 100);
	CHECK_INT(json_integer_value(json_object_get(l0, "bytes")), 12800);
	CHECK_INT(json_integer_value(json_object_get(l0, "ptx_line")), 40);
	CHECK(json_is_null(json_object_get(l1, "access")));   /* skipped load */
	CHECK(l2 == NULL);        /* load 2, which the capture does not list, is left out */
	eff = json_object_get(k, "efficiency");
	CHECK_NEAR(json_real_value(json_object_get(eff, "on")), 19200.0 / (1700.0 * 128), 1e-12);
	CHECK_NEAR(json_real_value(json_object_get(eff, "off")), 19200.0 / (2000.0 * 32), 1e-12);
	ds = json_array_get(json_object_get(k, "data_structures"), 0);
	CHECK_INT(json_integer_value(json_object_get(ds, "param")), 1);
	CHECK(json_is_false(json_object_get(ds, "read_only")));
	CHECK_INT(json_integer_value(json_object_get(ds, "sim_hits")), 270);
	CHECK_INT(json_integer_value(json_object_get(ds, "sim_accesses")), 300);

	/* nothing requested: efficiency is null, not 0 */
	CHECK_INT(monitor_counts_read(&mc, layout, zeros, 14), 0);
	CHECK_INT(update(&mc, k), 0);
	CHECK(json_is_null(json_object_get(json_object_get(k, "efficiency"), "on")));

	/* errors */
	json_object_set_new(k, "name", json_string("_Z3dev"));
	CHECK_INT(update(&mc, k), CA_E_INPUT);
	CHECK(strstr(error_message(), "not an entry") != NULL);
	json_object_set_new(k, "name", json_string("_Z1kPKfPf"));
	json_object_set_new(k, "loads", json_string("x"));     /* refused by the reader */
	CHECK_INT(update(&mc, k), CA_E_INPUT);
	CHECK(strstr(error_message(), "loads") != NULL);

	monitor_counts_release(&mc);
	json_decref(k);
	json_decref(layout);
}

static void test_bad_layouts(void)
{
	const uint64_t counters[14] = { 0 };
	struct monitor_counts mc;
	json_t *layout = parse(LAYOUT), *l;

	monitor_counts_init(&mc);
	/* fewer counters read than slots */
	CHECK_INT(monitor_counts_read(&mc, layout, counters, 13), CA_E_INPUT);
	CHECK(strstr(error_message(), "14 slots") != NULL);
	/* a slot index beyond the slots */
	l = json_deep_copy(layout);
	json_object_set_new(json_array_get(json_object_get(json_array_get(json_object_get(l, "functions"), 1),
							   "loads"), 1), "bytes", json_integer(14));
	CHECK_INT(monitor_counts_read(&mc, l, counters, 14), CA_E_INPUT);
	CHECK(strstr(error_message(), "functions[1].loads[1].bytes") != NULL);
	CHECK_INT(mc.nr_functions, 0);
	json_decref(l);
	/* another schema */
	l = json_deep_copy(layout);
	json_object_set_new(l, "schema", json_string("cacheadvise.plan/1"));
	CHECK_INT(monitor_counts_read(&mc, l, counters, 14), CA_E_INPUT);
	json_decref(l);
	/* not an object, no functions */
	l = parse("[1]");
	CHECK_INT(monitor_counts_read(&mc, l, counters, 14), CA_E_INPUT);
	json_decref(l);
	l = parse("{\"slots\": 0}");
	CHECK_INT(monitor_counts_read(&mc, l, counters, 0), CA_E_INPUT);
	json_decref(l);
	l = parse("{\"slots\": 0, \"functions\": []}");
	CHECK_INT(monitor_counts_read(&mc, l, NULL, 0), 0);
	CHECK_INT(mc.nr_functions, 0);
	json_decref(l);
	monitor_counts_release(&mc);
	json_decref(layout);
}

int main(void)
{
	test_read();
	test_update_kernel();
	test_bad_layouts();
	return check_done();
}
