/*
 * libFuzzer target for reading a capture and a plan, through the paths
 * `report`, `apply`, `patch --plan` and `run --plan` take: the input is
 * written as capture.json and plan.json of a scratch capture directory
 * (whose modules/ holds the committed fixtures' PTX), then read with
 * plan_load_file() (analysis/plan.c) and report_input_load()
 * (emitters/report_input.c, which reads both and runs the analysis). A plan
 * that loads must survive plan_to_json() and plan_from_json() unchanged,
 * and a capture that capture_from_json() (analysis/capture_model.h, the one
 * reader) accepts must be written back equal by capture_to_json().
 * Seeds: tests/fuzz/corpus/capture_plan/ (the fixtures' capture.json and
 * plan.json files, and small plans).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "analysis/capture_model.h"
#include "analysis/plan.h"
#include "base/atomic_file.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dir, *capture_path, *plan_path;

/* The repository root, from this file's own path (CMake compiles it by its
 * absolute path). */
static char *source_root(void)
{
	const char *me = __FILE__, *tail = strstr(me, "tests/fuzz/fuzz_capture_plan.c");

	return tail ? xstrndup(me, (size_t)(tail - me)) : xstrdup("./");
}

static void link_modules(const char *root, const char *fixture)
{
	static const char *const ids[][2] = {
		{ "capture-real", "83c50ebd491c19e2" },
		{ "capture-handmade", "31a5c710dd083d35" },
		{ "capture-handmade", "cf936e38cf9700b0" },
	};
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		char *from, *to;

		if (strcmp(ids[i][0], fixture))
			continue;
		from = xasprintf("%stests/fixtures/%s/modules/%s.ptx", root, fixture, ids[i][1]);
		to = xasprintf("%s/modules/%s.ptx", dir, ids[i][1]);
		if (symlink(from, to))
			perror(to);
		free(from);
		free(to);
	}
}

static void setup(void)
{
	char tmpl[] = "/tmp/fuzz_capture_plan_XXXXXX";
	char *root, *modules;

	if (!mkdtemp(tmpl))
		abort();
	dir = xstrdup(tmpl);
	modules = xasprintf("%s/modules", dir);
	if (mkdir_p(modules))
		abort();
	root = source_root();
	link_modules(root, "capture-real");
	link_modules(root, "capture-handmade");
	capture_path = xasprintf("%s/capture.json", dir);
	plan_path = xasprintf("%s/plan.json", dir);
	free(modules);
	free(root);
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
}

static void check_plan_round_trip(const struct plan *p)
{
	struct plan again;
	json_t *a = plan_to_json(p), *b;

	plan_init(&again);
	if (plan_from_json(&again, a, "round-trip"))
		__builtin_trap();
	b = plan_to_json(&again);
	if (!json_equal(a, b))
		__builtin_trap();
	json_decref(a);
	json_decref(b);
	plan_release(&again);
}

/* capture.json's one reader: what it accepts, its writer writes back
 * equal, and that reads again. */
static void check_capture_round_trip(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size, 0, NULL), *a, *b;
	struct capture cap, again;

	if (!doc)
		return;
	capture_init(&cap);
	if (!capture_from_json(&cap, doc, "fuzz")) {
		a = capture_to_json(&cap);
		if (!json_equal(a, doc))
			__builtin_trap();
		capture_init(&again);
		if (capture_from_json(&again, a, "round-trip"))
			__builtin_trap();
		b = capture_to_json(&again);
		if (!json_equal(a, b))
			__builtin_trap();
		json_decref(a);
		json_decref(b);
		capture_release(&again);
	}
	capture_release(&cap);
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_input_options opt = { 0 };
	struct report_input in;
	struct plan p;

	if (!dir)
		setup();
	check_capture_round_trip(data, size);
	write_file(capture_path, data, size);
	write_file(plan_path, data, size);

	plan_init(&p);
	if (!plan_load_file(&p, plan_path))
		check_plan_round_trip(&p);
	plan_release(&p);

	/* The capture alone, then with the same bytes as its plan. */
	unlink(plan_path);
	memset(&in, 0, sizeof(in));
	report_input_load(&in, dir, &opt);
	report_input_release(&in);
	write_file(plan_path, data, size);
	memset(&in, 0, sizeof(in));
	report_input_load(&in, dir, &opt);
	report_input_release(&in);
	return 0;
}
