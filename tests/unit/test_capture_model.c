/*
 * capture.json's one reader and writer (analysis/capture_model.h): every
 * committed capture reads and writes back equal (write(read(x)) == x), a
 * capture built in memory round-trips, and each kind of bad input is
 * refused with the field's path.
 */
#include <glob.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "analysis/capture_model.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "check.h"

static char *fixture(const char *rel)
{
	const char *root = getenv("CA_SOURCE_DIR");

	return xasprintf("%s/tests/fixtures/%s", root ? root : ".", rel);
}

static json_t *load(const char *rel)
{
	char *path = fixture(rel);
	json_t *doc = json_file_load(path);

	if (!doc)
		fprintf(stderr, "%s\n", error_message());
	free(path);
	return doc;
}

/* Reads doc; returns the reader's result and leaves the message. */
static int read_doc(json_t *doc)
{
	error_clear();
	return capture_validate_json(doc, "capture.json");
}

static void test_fixtures_round_trip(void)
{
	char *pattern = fixture("*/capture.json");
	glob_t g;
	size_t i;

	CHECK(glob(pattern, 0, NULL, &g) == 0);
	CHECK(g.gl_pathc >= 4);
	for (i = 0; i < g.gl_pathc; i++) {
		json_t *doc = json_file_load(g.gl_pathv[i]), *back, *again;
		struct capture cap, cap2;

		CHECK(doc != NULL);
		if (!doc)
			continue;
		capture_init(&cap);
		error_clear();
		CHECK_INT(capture_from_json(&cap, doc, g.gl_pathv[i]), 0);
		if (error_message()[0])
			fprintf(stderr, "%s: %s\n", g.gl_pathv[i], error_message());
		back = capture_to_json(&cap);
		if (!json_equal(back, doc)) {
			char *a = json_to_string(doc), *b = json_to_string(back);

			fprintf(stderr, "%s: round trip differs (%zu vs %zu bytes)\n",
				g.gl_pathv[i], strlen(a), strlen(b));
			free(a);
			free(b);
		}
		CHECK(json_equal(back, doc));
		/* what was written reads again, and writes the same */
		capture_init(&cap2);
		CHECK_INT(capture_from_json(&cap2, back, "back"), 0);
		again = capture_to_json(&cap2);
		CHECK(json_equal(again, back));
		/* every kernel read (a program whose kernels all lack PTX has none) */
		CHECK_INT(cap.nr_kernels, json_array_size(json_object_get(doc, "kernels")));
		CHECK_INT(cap2.nr_kernels, cap.nr_kernels);
		json_decref(again);
		json_decref(back);
		json_decref(doc);
		capture_release(&cap2);
		capture_release(&cap);
		error_clear();
	}
	globfree(&g);
	free(pattern);
}

static void test_typed_fields(void)
{
	json_t *doc = load("capture-real/capture.json");
	struct capture cap;
	const struct capture_kernel *k;
	const struct capture_load *l;

	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, doc, "real"), 0);
	CHECK_STR(cap.schema, CAPTURE_SCHEMA);
	CHECK_STR(cap.status, "complete");
	CHECK(cap.has_device);
	CHECK(cap.device.sector_bytes == 32);
	CHECK(cap.device.l1_bytes > 0);
	CHECK(cap.nr_kernels >= 1);
	k = &cap.kernels[0];
	CHECK(capture_find_module(&cap, k->module) != NULL);
	CHECK(capture_find_kernel(&cap, k->module, k->name) == k);
	CHECK(k->nr_loads > 0);
	l = capture_kernel_find_load(k, k->loads[0].ordinal);
	CHECK(l == &k->loads[0]);
	CHECK(capture_kernel_counters(k, "baseline") != NULL);
	CHECK(capture_kernel_counters(k, "no such variant") == NULL);
	CHECK(cap.has_verification && capture_section_json(cap.verification.source) != NULL);
	CHECK(cap.verification.nr_kernels == 1 && cap.verification.kernels[0].kept == 1);
	CHECK(!isnan(cap.verification.kernels[0].speedup.median));
	/* --l2-priority was not written then: unknown, not "no" */
	CHECK_INT(cap.options.l2_priority, -1);
	capture_release(&cap);
	json_decref(doc);

	/* a pass asked for, and the budget's record of the steps it skipped */
	doc = load("summary-budget/capture.json");
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, doc, "budget"), 0);
	CHECK_INT(cap.options.l2_priority, 1);
	CHECK(cap.has_budget && cap.budget.nr_skipped == 2);
	CHECK_STR(cap.budget.skipped[0].step, "the L2 priority pass");
	capture_release(&cap);
	json_object_set_new(json_object_get(doc, "options"), "l2_priority", json_string("yes"));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "l2_priority") != NULL);
	json_decref(doc);
}

/* A copy of the real capture with one change; returns the reader's result. */
static int read_changed(const char *path_expr, json_t *value, const char *expect_in_message)
{
	json_t *doc = load("capture-real/capture.json");
	json_t *k0 = json_array_get(json_object_get(doc, "kernels"), 0);
	int ret;

	if (!strcmp(path_expr, "load0.hit"))
		json_object_set_new(json_array_get(json_object_get(k0, "loads"), 0), "hit", value);
	else if (!strcmp(path_expr, "pair0.hit"))
		json_object_set_new(json_array_get(json_object_get(k0, "pairs"), 0), "hit", value);
	else if (!strcmp(path_expr, "pair0.j"))
		json_object_set_new(json_array_get(json_object_get(k0, "pairs"), 0), "j", value);
	else if (!strcmp(path_expr, "pair1"))
		json_array_set_new(json_object_get(k0, "pairs"), 1, value);
	else if (!strcmp(path_expr, "load1.ordinal"))
		json_object_set_new(json_array_get(json_object_get(k0, "loads"), 1), "ordinal", value);
	else if (!strcmp(path_expr, "kernel0.module"))
		json_object_set_new(k0, "module", value);
	else if (!strcmp(path_expr, "kernels+"))
		json_array_append_new(json_object_get(doc, "kernels"), value);
	else if (!strcmp(path_expr, "device.l1_bytes"))
		json_object_set_new(json_object_get(doc, "device"), "l1_bytes", value);
	else if (!strcmp(path_expr, "load0.inlined_at"))
		json_object_set_new(json_array_get(json_object_get(k0, "loads"), 0), "inlined_at",
				    value);
	else if (!strcmp(path_expr, "load0.run"))
		json_object_set_new(json_array_get(json_object_get(k0, "loads"), 0), "run", value);
	else if (!strcmp(path_expr, "kernel0.grid"))
		json_object_set_new(k0, "grid", value);
	else if (!strcmp(path_expr, "verification"))
		json_object_set_new(doc, "verification", value);
	ret = read_doc(doc);
	if (expect_in_message && !strstr(error_message(), expect_in_message)) {
		fprintf(stderr, "message \"%s\" lacks \"%s\"\n", error_message(), expect_in_message);
		ret = 99;
	}
	json_decref(doc);
	return ret;
}

static void test_refusals(void)
{
	json_t *doc = load("capture-real/capture.json");
	json_t *k0 = json_array_get(json_object_get(doc, "kernels"), 0);

	CHECK_INT(read_changed("load0.hit", json_real(1e308), "kernels[0].loads[0].hit: 1e+308 is out of range"), CA_E_INPUT);
	CHECK_INT(read_changed("load0.hit", json_real(-13.3), "kernels[0].loads[0].hit: -13.3 is not a count"), CA_E_INPUT);
	CHECK_INT(read_changed("pair0.hit", json_real(-13.3), "kernels[0].pairs[0].hit"), CA_E_INPUT);
	CHECK_INT(read_changed("load0.hit", json_string("12"), "kernels[0].loads[0].hit: not a number"), CA_E_INPUT);
	CHECK_INT(read_changed("pair0.j", json_integer(9999), "kernels[0].pairs[0]: names load 9999"), CA_E_INPUT);
	CHECK_INT(read_changed("pair0.j", json_integer(0), "names load 0 twice"), CA_E_INPUT);
	CHECK_INT(read_changed("pair1", json_pack("{s:i,s:i,s:f}", "i", 1, "j", 0, "hit", 1.0),
			       "is listed twice"), CA_E_INPUT);
	CHECK_INT(read_changed("load1.ordinal", json_integer(0), "load 0 is listed twice"), CA_E_INPUT);
	CHECK_INT(read_changed("kernel0.module", json_string("ffffffffffffffff"),
			       "kernels[0].module: \"ffffffffffffffff\" is not a module"), CA_E_INPUT);
	CHECK_INT(read_changed("kernels+", json_deep_copy(k0), "is listed twice"), CA_E_INPUT);
	CHECK_INT(read_changed("device.l1_bytes", json_integer(-5), "l1_bytes"), CA_E_INPUT);
	CHECK_INT(read_changed("load0.run", json_integer(4242), "run 4242 is not in \"runs\""), CA_E_INPUT);
	CHECK_INT(read_changed("load0.inlined_at", json_string("k.cu:30"),
			       "kernels[0].loads[0].inlined_at"), CA_E_INPUT);
	CHECK_INT(read_changed("load0.inlined_at", json_pack("[{s:s, s:i}]", "file", "k.cu", "line", 0),
			       "kernels[0].loads[0].inlined_at[0].line"), CA_E_INPUT);
	CHECK_INT(read_changed("load0.inlined_at", json_pack("[{s:s, s:i, s:i}]", "file", "k.cu",
							     "line", 30, "column", 2), NULL), 0);
	CHECK_INT(read_changed("kernel0.grid", json_pack("[i,i,i]", -1, 1, 1), "grid: extent 0"), CA_E_INPUT);
	CHECK_INT(read_changed("verification", json_integer(3), "verification: not an object"), CA_E_INPUT);
	/* and the unchanged copy reads */
	CHECK_INT(read_doc(doc), 0);
	CHECK_INT(read_doc(json_array_get(json_object_get(doc, "kernels"), 0)), CA_E_INPUT);
	json_decref(doc);
}

/* A capture built in memory: what the writer writes, the reader accepts,
 * and noise recorded on a pair survives the trip. */
static void test_built_round_trip(void)
{
	struct capture cap, back;
	struct capture_kernel *k;
	json_t *doc, *again;
	size_t i;

	capture_init(&cap);
	cap.schema = xstrdup(CAPTURE_SCHEMA);
	cap.status = xstrdup("complete");
	cap.nr_modules = 1;
	cap.modules = xcalloc(1, sizeof(*cap.modules));
	cap.modules[0].id = xstrdup("0123456789abcdef");
	cap.modules[0].has_ptx = 1;
	cap.modules[0].ptx = xstrdup("modules/0123456789abcdef.ptx");
	cap.modules[0].gpu_time_ns = NAN;
	cap.nr_kernels = 1;
	cap.kernels = k = xcalloc(1, sizeof(*k));
	k->module = xstrdup("0123456789abcdef");
	k->name = xstrdup("_Z1kPKf");
	k->launches = 10;
	k->dynamic_shared_bytes = k->static_shared_bytes = -1;
	k->registers = -1;
	k->left_out_loads = 0;
	k->monitor_gpu_time_ns = k->efficiency_on = k->efficiency_off = NAN;
	k->gpu_time_baseline_ns = k->gpu_time_cubin_ns = NAN;
	k->nr_loads = 3;
	k->loads = xcalloc(3, sizeof(*k->loads));
	for (i = 0; i < 3; i++) {
		struct capture_load *l = &k->loads[i];

		l->ordinal = (unsigned)i;
		l->ptx_line = 40 + (long)i;
		l->nc = l->read_only = l->patchable = l->measured = -1;
		l->vector = l->bits = l->param = l->node = l->run = -1;
		l->hit = 100.0 * (double)i;
		l->access = l->requests = l->lines = l->bytes = NAN;
	}
	k->nr_pairs = 1;
	k->has_pairs = 1;
	k->pairs = xcalloc(1, sizeof(*k->pairs));
	k->pairs[0].i = 0;
	k->pairs[0].j = 2;
	k->pairs[0].hit = 0;
	k->pairs[0].run = -1;
	k->pairs[0].noise_measured = -13.3;
	k->pairs[0].noise_resolution = xstrdup("clamped to 0");
	/* load 1 is in a helper inlined in a helper */
	k->loads[1].file = xstrdup("k.cuh");
	k->loads[1].line = 5;
	k->loads[1].column = 2;
	k->loads[1].nr_inlined_at = 2;
	k->loads[1].inlined_at = xcalloc(2, sizeof(*k->loads[1].inlined_at));
	k->loads[1].inlined_at[0] = (struct capture_call_site){ xstrdup("k.cuh"), 12, 4, NULL };
	k->loads[1].inlined_at[1] = (struct capture_call_site){ xstrdup("k.cu"), 30, 0, NULL };

	doc = capture_to_json(&cap);
	capture_init(&back);
	CHECK_INT(capture_from_json(&back, doc, "built"), 0);
	CHECK_INT(back.nr_kernels, 1);
	CHECK_INT(back.kernels[0].nr_loads, 3);
	CHECK_NEAR(back.kernels[0].loads[2].hit, 200, 0);
	CHECK(isnan(back.kernels[0].loads[0].access));
	CHECK_NEAR(back.kernels[0].pairs[0].noise_measured, -13.3, 1e-12);
	CHECK_STR(back.kernels[0].pairs[0].noise_resolution, "clamped to 0");
	CHECK_INT(back.kernels[0].loads[0].nr_inlined_at, 0);
	CHECK_INT(back.kernels[0].loads[1].nr_inlined_at, 2);
	if (back.kernels[0].loads[1].nr_inlined_at == 2) {
		const struct capture_call_site *c = back.kernels[0].loads[1].inlined_at;

		CHECK_STR(c[0].file, "k.cuh");
		CHECK_INT(c[0].line, 12);
		CHECK_INT(c[0].column, 4);
		CHECK_STR(c[1].file, "k.cu");
		CHECK_INT(c[1].line, 30);
		CHECK_INT(c[1].column, 0);      /* unknown: not written */
	}
	again = capture_to_json(&back);
	CHECK(json_equal(again, doc));

	/* a capture the reader would refuse is not written */
	k->loads[1].hit = -1;
	CHECK_INT(capture_write_file(&cap, "/nonexistent-dir/capture.json"), CA_E_INPUT);
	CHECK(strstr(error_message(), "kernels[0].loads[1].hit") != NULL);

	json_decref(again);
	json_decref(doc);
	capture_release(&back);
	capture_release(&cap);
}

/* A bad number measured for one kernel costs that kernel its numbers,
 * never the capture (issue 25, item 1: a pair measured at -13.3). */
static void test_settle(void)
{
	json_t *doc = load("capture-real/capture.json"), *k0, *k1;
	struct capture_dropped *dropped;
	size_t nr;

	k0 = json_array_get(json_object_get(doc, "kernels"), 0);
	/* a second kernel, sound, in the same module */
	k1 = json_deep_copy(k0);
	json_object_set_new(k1, "name", json_string("_Z6other"));
	json_array_append_new(json_object_get(doc, "kernels"), k1);
	json_object_set_new(json_array_get(json_object_get(k0, "pairs"), 2), "hit", json_real(-13.3));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK_INT(capture_settle_json(doc, "capture.json", &dropped, &nr), 0);
	CHECK_INT(nr, 1);
	if (nr) {
		CHECK_STR(dropped[0].kernel, json_string_value(json_object_get(k0, "name")));
		CHECK(strstr(dropped[0].why, "pairs[2].hit: -13.3 is not a count") != NULL);
	}
	capture_dropped_free(dropped, nr);
	CHECK_INT(read_doc(doc), 0);
	CHECK(json_is_null(json_object_get(json_array_get(json_object_get(k0, "loads"), 0), "hit")));
	CHECK(json_is_null(json_object_get(json_array_get(json_object_get(k0, "pairs"), 2), "hit")));
	/* the sound kernel keeps its numbers */
	CHECK(json_is_number(json_object_get(json_array_get(json_object_get(k1, "loads"), 3), "hit")));
	/* what dropping numbers does not mend is still refused */
	json_object_set_new(k1, "module", json_string("ffffffffffffffff"));
	CHECK_INT(capture_settle_json(doc, "capture.json", &dropped, &nr), CA_E_INPUT);
	capture_dropped_free(dropped, nr);
	json_decref(doc);
}

/* The sections typed since (cost, budget, carve-out) round-trip too, and
 * their bad values are refused. */
static void test_typed_sections(void)
{
	json_t *doc = load("capture-real/capture.json"), *back;
	struct capture cap;

	json_object_set_new(doc, "cost", json_pack("{s:i, s:{s:i, s:i}, s:{s:f}, s:i, s:f, s:n, s:n}",
		"program_runs", 3, "runs_by_step", "discover", 1, "verify", 2, "seconds_by_step",
		"discover", 1.5, "launches_counted", 36, "wall_seconds", 7.25, "native_seconds",
		"ratio"));
	json_object_set_new(doc, "budget", json_pack("{s:f, s:f, s:f, s:[{s:s, s:i, s:f, s:f}]}",
		"factor", 20.0, "seconds", 15.0, "native_seconds", 0.5, "skipped", "step",
		"the L2 window step", "runs", 6, "estimate_seconds", 9.0, "spent_seconds", 12.0));
	json_object_set_new(doc, "carveout", json_pack("{s:[{s:s, s:i, s:i, s:i, s:{s:s, s:i, s:{s:f, s:f, s:f}, s:f, s:b, s:s}, s:s, s:s, s:s}, {s:s, s:i, s:i, s:n, s:s, s:s}]}",
		"kernels", "name", "_Z1k", "program_value", 100, "default_value", -1, "launches", 120,
		"speedup_of_default", "method", "in-run, ABBA launches", "groups", 29, "speedup",
		"min", 6.8, "median", 6.93, "max", 7.0, "noise", 0.004, "kept", 1, "reason", "faster",
		"kept", "default", "reason", "the default is faster", "advice", "remove the call",
		"name", "_Z1j", "program_value", 0, "default_value", -1, "speedup_of_default", "kept",
		"program", "reason", "not measured"));
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, doc, "sections"), 0);
	CHECK(cap.has_cost && cap.cost.program_runs == 3 && cap.cost.runs_by_step[4] == 2);
	CHECK_NEAR(cap.cost.seconds_by_step[0], 1.5, 0);
	CHECK(isnan(cap.cost.native_seconds));
	CHECK(cap.has_budget && cap.budget.nr_skipped == 1);
	CHECK_INT(cap.carveout.nr_kernels, 2);
	CHECK_NEAR(cap.carveout.kernels[0].speedup.median, 6.93, 0);
	CHECK(!cap.carveout.kernels[1].measured);
	back = capture_to_json(&cap);
	CHECK(json_equal(back, doc));
	json_decref(back);
	capture_release(&cap);
	/* a cost without runs_by_step writes back without one (the fuzzer's
	 * find: tests/fuzz/corpus/capture_plan/cost-without-runs-by-step.json) */
	json_object_del(json_object_get(doc, "cost"), "runs_by_step");
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, doc, "sections"), 0);
	back = capture_to_json(&cap);
	CHECK(json_equal(back, doc));
	CHECK(json_object_get(json_object_get(back, "cost"), "runs_by_step") == NULL);
	json_decref(back);
	capture_release(&cap);
	/* the same for a budget without "skipped", a carve-out without
	 * "kernels" and a module whose has_ptx is null (more of the fuzzer's
	 * finds) */
	json_object_set_new(json_array_get(json_object_get(doc, "modules"), 0), "has_ptx",
			    json_null());
	json_object_del(json_object_get(doc, "budget"), "skipped");
	json_object_del(json_object_get(doc, "carveout"), "kernels");
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, doc, "sections"), 0);
	back = capture_to_json(&cap);
	CHECK(json_equal(back, doc));
	json_decref(back);
	capture_release(&cap);
	json_object_set_new(json_object_get(doc, "carveout"), "kernels", json_pack(
		"[{s:s, s:i, s:s}, {s:s, s:i, s:s}]", "name", "_Z1k", "program_value", 100, "kept",
		"program", "name", "_Z1j", "program_value", 0, "kept", "program"));
	/* refused: a carve-out's kept that is neither, a negative cost */
	json_object_set_new(json_array_get(json_object_get(json_object_get(doc, "carveout"), "kernels"), 1),
			    "kept", json_string("maybe"));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "carveout.kernels[1].kept") != NULL);
	json_object_set_new(json_array_get(json_object_get(json_object_get(doc, "carveout"), "kernels"), 1),
			    "kept", json_string("program"));
	json_object_set_new(json_object_get(doc, "cost"), "wall_seconds", json_real(-1));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "cost.wall_seconds") != NULL);
	json_decref(doc);
}

/*
 * baseline_check and a kernel's own "oracle", typed since they were kept as
 * written: read, validated with their paths, and written from memory.
 */
static void test_baseline_check_and_kernel_oracle(void)
{
	json_t *doc = load("capture-real/capture.json"), *k0, *bc, *orc, *back, *again;
	struct capture cap, cap2;
	int run0;

	k0 = json_array_get(json_object_get(doc, "kernels"), 0);
	run0 = (int)json_integer_value(json_object_get(json_array_get(json_object_get(doc, "runs"), 0),
							"index"));
	bc = json_pack("{s:[i], s:b, s:f, s:[s]}", "runs", run0, "output_identical", 0,
		       "max_counter_spread", 0.061, "notes", "kernel k: l1_hits differs by 6.1%");
	json_object_set_new(doc, "baseline_check", bc);
	orc = json_pack("{s:s, s:i, s:i, s:[{s:[i], s:f, s:f}, {s:[], s:f, s:f, s:s}], s:i, s:i, "
			"s:f, s:f, s:f}", "kernel", json_string_value(json_object_get(k0, "name")),
			"loads", 2, "rounds", 5, "plans", "cached", 0, "median_ns", 1000.0, "speedup",
			1.0, "cached", "median_ns", 900.0, "speedup", 1.11, "output", "identical",
			"best_plan", 1, "advised_plan", 0, "best_speedup", 1.11, "advised_speedup", 1.0,
			"ratio", 0.9);
	json_object_set(k0, "oracle", orc);
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, doc, "typed"), 0);
	CHECK(cap.has_baseline_check);
	CHECK_INT(cap.baseline_check.nr_runs, 1);
	CHECK_INT(cap.baseline_check.output_identical, 0);
	CHECK_NEAR(cap.baseline_check.max_counter_spread, 0.061, 0);
	CHECK_INT(cap.baseline_check.nr_notes, 1);
	CHECK(cap.kernels[0].oracle != NULL);
	if (cap.kernels[0].oracle) {
		CHECK_INT(cap.kernels[0].oracle->nr_plans, 2);
		CHECK_INT(cap.kernels[0].oracle->best_plan, 1);
		CHECK_NEAR(cap.kernels[0].oracle->plans[1].speedup, 1.11, 0);
		CHECK_STR(cap.kernels[0].oracle->plans[1].output, "identical");
	}
	back = capture_to_json(&cap);
	CHECK(json_equal(back, doc));

	/* built in memory (no source): the writer writes both from the types */
	capture_init(&cap2);
	cap2.schema = xstrdup(CAPTURE_SCHEMA);
	cap2.has_baseline_check = 1;
	cap2.baseline_check = cap.baseline_check;
	cap2.baseline_check.source = NULL;
	again = capture_to_json(&cap2);
	CHECK(json_equal(json_object_get(again, "baseline_check"), bc));
	cap2.has_baseline_check = 0;
	memset(&cap2.baseline_check, 0, sizeof(cap2.baseline_check));
	json_decref(again);
	capture_release(&cap2);
	json_decref(back);
	capture_release(&cap);

	/* refused, with the path */
	json_array_set_new(json_object_get(bc, "runs"), 0, json_integer(4242));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "baseline_check.runs: item 0 is not the index of a run") != NULL);
	json_array_set_new(json_object_get(bc, "runs"), 0, json_string("1"));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "baseline_check.runs: item 0 is not an integer") != NULL);
	json_array_set_new(json_object_get(bc, "runs"), 0, json_integer(run0));
	json_object_set_new(bc, "max_counter_spread", json_real(-0.5));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "baseline_check.max_counter_spread") != NULL);
	json_object_set_new(bc, "max_counter_spread", json_real(0.061));
	json_object_set_new(bc, "output_identical", json_string("yes"));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "baseline_check.output_identical: not true or false") != NULL);
	json_object_set_new(bc, "output_identical", json_false());
	json_object_set_new(orc, "best_plan", json_integer(2));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "kernels[0].oracle.best_plan: 2 is out of range") != NULL);
	json_object_set_new(orc, "best_plan", json_integer(1));
	json_object_set_new(json_array_get(json_object_get(orc, "plans"), 0), "speedup",
			    json_real(-1));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "kernels[0].oracle.plans[0].speedup") != NULL);
	json_object_set_new(json_array_get(json_object_get(orc, "plans"), 0), "speedup",
			    json_real(1.0));
	CHECK_INT(read_doc(doc), 0);
	json_decref(orc);
	json_decref(doc);
}

/* An l2_priority entry measured as one site: its ordinals read, and refused
 * where they do not start with its ordinal, name no load, or repeat one. */
static void test_l2_sites(void)
{
	json_t *doc = load("capture-real/capture.json"), *k0, *lp, *l0;
	struct capture cap;
	const struct capture_l2_priority *p;

	k0 = json_array_get(json_object_get(doc, "kernels"), 0);
	lp = json_pack("{s:[s,s], s:f, s:[{s:i, s:[i,i], s:[f,f]}, {s:i, s:[f,f]}], s:[]}", "forms",
		       "L1::evict_first+L2::evict_first", "L1::evict_last+L2::evict_last",
		       "baseline_dram_bytes", 1000.0, "loads", "ordinal", 0, "ordinals", 0, 2,
		       "dram_bytes", 990.0, 900.0, "ordinal", 1, "dram_bytes", 1000.0, 1010.0, "pairs");
	json_object_set_new(k0, "l2_priority", lp);
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, doc, "sites"), 0);
	p = cap.kernels[0].l2_priority;
	CHECK(p && p->nr_loads == 2);
	if (p && p->nr_loads == 2) {
		CHECK_INT(p->loads[0].nr_ordinals, 2);
		CHECK_INT(p->loads[0].ordinals[1], 2);
		CHECK_INT(p->loads[1].nr_ordinals, 1);
		CHECK_INT(p->loads[1].ordinals[0], 1);
	}
	capture_release(&cap);
	l0 = json_array_get(json_object_get(lp, "loads"), 0);
	json_object_set_new(l0, "ordinals", json_pack("[i,i]", 2, 0));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "l2_priority.loads[0].ordinals: must start with the entry's ordinal") != NULL);
	json_object_set_new(l0, "ordinals", json_pack("[i,i]", 0, 99));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "item 1 (99) is not a load of the kernel") != NULL);
	json_object_set_new(l0, "ordinals", json_pack("[i,i]", 0, 1));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "l2_priority.loads[1].ordinal: load 1 is listed twice") != NULL);
	json_object_set_new(l0, "ordinals", json_pack("[i,i]", 0, 0));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "l2_priority.loads[0].ordinals: load 0 is listed twice") != NULL);
	json_object_set_new(l0, "ordinals", json_pack("[i,i]", 0, 2));
	json_array_set_new(json_object_get(lp, "forms"), 0, json_string("L1::evict_first"));
	CHECK_INT(read_doc(doc), CA_E_INPUT);
	CHECK(strstr(error_message(), "l2_priority.forms: item 0, 'L1::evict_first', is not an L2 priority") != NULL);
	/* "default", Triton's third form (a tl.load without eviction_policy),
	 * measured where a call has a policy of its own: read, write(read) equal */
	json_array_set_new(json_object_get(lp, "forms"), 0, json_string("default"));
	CHECK_INT(read_doc(doc), 0);
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, doc, "default"), 0);
	CHECK(cap.kernels[0].l2_priority && cap.kernels[0].l2_priority->nr_forms == 2 &&
	      !strcmp(cap.kernels[0].l2_priority->forms[0], "default"));
	{
		json_t *back = capture_to_json(&cap);

		CHECK(json_equal(back, doc));
		json_decref(back);
	}
	capture_release(&cap);
	json_decref(doc);
}

int main(void)
{
	test_typed_sections();
	test_settle();
	test_fixtures_round_trip();
	test_typed_fields();
	test_refusals();
	test_built_round_trip();
	test_baseline_check_and_kernel_oracle();
	test_l2_sites();
	return check_done();
}
