/*
 * plan.json (analysis/plan.c): reading with JSON-path error messages,
 * writing, round trips with sections it does not model, plan_set, and
 * which edits apply to which module.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/module_id.h"
#include "analysis/plan.h"
#include "analysis/ptx.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

#define ID_A "0123456789abcdef"
#define ID_B "fedcba9876543210"

static const char good[] =
	"{\"schema\": \"cacheadvise.plan/1\",\n"
	" \"modules\": [\n"
	"  {\"id\": \"" ID_A "\", \"functions\": [\n"
	"     {\"name\": \"k\", \"loads\": [{\"ordinal\": 0, \"action\": \"L1::no_allocate\"},\n"
	"                               {\"ordinal\": 2, \"action\": \"bypass\"}]},\n"
	"     {\"name\": \"g\", \"loads\": [{\"ordinal\": 1, \"action\": \"L1::evict_last\", \"why\": \"reuse\"}]}]},\n"
	"  {\"functions\": [{\"name\": \"k\", \"loads\": [{\"ordinal\": 0, \"action\": \"stream\"},\n"
	"                                            {\"ordinal\": 1, \"action\": \"default\"}]}]},\n"
	"  {\"id\": \"" ID_B "\", \"functions\": [{\"name\": \"k\", \"loads\": [{\"ordinal\": 0, \"action\": \"cache\"}]}]}\n"
	" ],\n"
	" \"l2_windows\": [{\"kernel\": \"k\", \"param\": 1, \"hit_ratio\": 0.5}],\n"
	" \"software_cache\": {\"candidates\": []}\n"
	"}\n";

static int load_str(struct plan *p, const char *text)
{
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);
	int ret;

	if (!doc) {
		fprintf(stderr, "test JSON broken: %s\n", jerr.text);
		CHECK(!"test JSON parses");
		return -100;
	}
	ret = plan_from_json(p, doc, "p.json");
	json_decref(doc);
	return ret;
}

static void test_read(void)
{
	struct plan p;

	plan_init(&p);
	CHECK_INT(load_str(&p, good), 0);
	CHECK_INT(p.nr_modules, 3);
	if (p.nr_modules == 3) {
		CHECK_STR(p.modules[0].id, ID_A);
		CHECK(p.modules[1].id == NULL);
		CHECK_INT(p.modules[0].nr_functions, 2);
		CHECK_STR(p.modules[0].functions[0].name, "k");
		CHECK_INT(p.modules[0].functions[0].nr_loads, 2);
		CHECK_INT(p.modules[0].functions[0].loads[1].ordinal, 2);
		CHECK_INT(p.modules[0].functions[0].loads[1].action, LOAD_ACTION_BYPASS);
		CHECK_INT(p.modules[0].functions[1].loads[0].action, LOAD_ACTION_EVICT_LAST);
		CHECK_INT(p.modules[1].functions[0].loads[1].action, LOAD_ACTION_DEFAULT);
	}
	CHECK(json_is_array(json_object_get(p.extra, "l2_windows")));
	CHECK(json_is_object(json_object_get(p.extra, "software_cache")));
	CHECK(json_object_get(p.extra, "schema") == NULL);
	CHECK(json_object_get(p.extra, "modules") == NULL);
	plan_release(&p);
}

static void test_round_trip(void)
{
	struct plan p, q;
	char path[] = "/tmp/test_plan_XXXXXX";
	int fd = mkstemp(path);
	json_t *a, *b;

	plan_init(&p);
	plan_init(&q);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(load_str(&p, good), 0);
	CHECK_INT(plan_write_file(&p, path), 0);
	CHECK_INT(plan_load_file(&q, path), 0);
	a = plan_to_json(&p);
	b = plan_to_json(&q);
	CHECK(json_equal(a, b));
	CHECK_STR(json_string_value(json_object_get(a, "schema")), "cacheadvise.plan/1");
	CHECK_INT(json_real_value(json_object_get(json_array_get(json_object_get(a, "l2_windows"), 0),
						  "hit_ratio")) * 2, 1);
	/* The id-less module entry is written without "id". */
	CHECK(json_object_get(json_array_get(json_object_get(a, "modules"), 1), "id") == NULL);
	json_decref(a);
	json_decref(b);
	unlink(path);
	plan_release(&p);
	plan_release(&q);
}

static void test_set(void)
{
	struct plan p;
	json_t *doc;
	char *s;

	plan_init(&p);
	plan_set(&p, ID_A, "k", 3, LOAD_ACTION_NO_ALLOCATE);
	plan_set(&p, ID_A, "k", 1, LOAD_ACTION_EVICT_FIRST);
	plan_set(&p, ID_A, "k", 3, LOAD_ACTION_DEFAULT);       /* replaces */
	plan_set(&p, NULL, "k", 3, LOAD_ACTION_BYPASS);
	plan_set(&p, ID_A, "g", 0, LOAD_ACTION_CACHE);
	CHECK_INT(p.nr_modules, 2);
	CHECK_INT(p.modules[0].nr_functions, 2);
	CHECK_INT(p.modules[0].functions[0].nr_loads, 2);
	CHECK_INT(p.modules[0].functions[0].loads[0].action, LOAD_ACTION_DEFAULT);
	CHECK(p.modules[1].id == NULL);
	doc = plan_to_json(&p);
	s = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	CHECK_STR(s, "{\"schema\":\"cacheadvise.plan/1\",\"modules\":["
		     "{\"id\":\"" ID_A "\",\"functions\":[{\"name\":\"k\",\"loads\":"
		     "[{\"ordinal\":3,\"action\":\"default\"},{\"ordinal\":1,\"action\":\"L1::evict_first\"}]},"
		     "{\"name\":\"g\",\"loads\":[{\"ordinal\":0,\"action\":\"cache\"}]}]},"
		     "{\"functions\":[{\"name\":\"k\",\"loads\":[{\"ordinal\":3,\"action\":\"bypass\"}]}]}]}");
	free(s);
	json_decref(doc);
	/* A function whose loads were all dropped is not written. */
	p.modules[1].functions[0].nr_loads = 0;
	doc = plan_to_json(&p);
	CHECK_INT(json_array_size(json_object_get(doc, "modules")), 1);
	json_decref(doc);
	plan_release(&p);
}

static void expect_bad(const char *text, const char *needle)
{
	struct plan p;
	int ret;

	plan_init(&p);
	plan_set(&p, NULL, "before", 7, LOAD_ACTION_CACHE);
	ret = load_str(&p, text);
	CHECK_INT(ret, CA_E_INPUT);
	if (!strstr(error_message(), needle)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", error_message(), needle);
		CHECK(!"error message");
	}
	/* A failed read leaves the plan as it was. */
	CHECK(p.nr_modules == 1 && !strcmp(p.modules[0].functions[0].name, "before"));
	plan_release(&p);
}

#define S "\"schema\": \"cacheadvise.plan/1\", "
#define F(loads) "{" S "\"modules\": [{\"functions\": [{\"name\": \"k\", \"loads\": [" loads "]}]}]}"

static void test_errors(void)
{
	expect_bad("[]", "is not a JSON object");
	expect_bad("{\"modules\": []}", "has no \"schema\"");
	expect_bad("{\"schema\": \"cacheadvise.plan/2\", \"modules\": []}", "newer");
	expect_bad("{\"schema\": \"cacheadvise.capture/1\", \"modules\": []}", "expected \"cacheadvise.plan/1\"");
	expect_bad("{" S "\"modules\": {}}", "'p.json': modules: expected an array");
	expect_bad("{" S "\"x\": 1}", "'p.json': modules: missing");
	expect_bad("{" S "\"modules\": [1]}", "modules[0]: expected an object");
	expect_bad("{" S "\"modules\": [{\"id\": \"12345\", \"functions\": []}]}",
		   "modules[0].id: expected a module id of 16 hex digits");
	expect_bad("{" S "\"modules\": [{\"id\": 5, \"functions\": []}]}", "modules[0].id");
	expect_bad("{" S "\"modules\": [{\"id\": \"" ID_A "\"}]}", "modules[0].functions: missing");
	expect_bad("{" S "\"modules\": [{\"functions\": [{\"loads\": []}]}]}",
		   "modules[0].functions[0].name: missing");
	expect_bad("{" S "\"modules\": [{\"functions\": [{\"name\": \"\", \"loads\": []}]}]}",
		   "modules[0].functions[0].name: expected a function name");
	expect_bad("{" S "\"modules\": [{\"functions\": [{\"name\": \"k\", \"loads\": 3}]}]}",
		   "modules[0].functions[0].loads: expected an array");
	expect_bad(F("{\"ordinal\": 0, \"action\": \"bypass\"}, 7"),
		   "modules[0].functions[0].loads[1]: expected an object");
	expect_bad(F("{\"action\": \"bypass\"}"), "modules[0].functions[0].loads[0].ordinal: missing");
	expect_bad(F("{\"ordinal\": \"0\", \"action\": \"bypass\"}"),
		   "loads[0].ordinal: expected a non-negative integer");
	expect_bad(F("{\"ordinal\": 1.5, \"action\": \"bypass\"}"), "loads[0].ordinal");
	expect_bad(F("{\"ordinal\": -1, \"action\": \"bypass\"}"), "-1 is not a load ordinal");
	expect_bad(F("{\"ordinal\": 0}"), "loads[0].action: missing");
	expect_bad(F("{\"ordinal\": 0, \"action\": 2}"), "loads[0].action: expected a string");
	expect_bad("{" S "\"modules\": [{\"functions\": [{\"name\": \"a\", \"loads\": []}, "
		   "{\"name\": \"b\", \"loads\": [{\"ordinal\": 0, \"action\": \"cache\"}, "
		   "{\"ordinal\": 1, \"action\": \"bypass\"}, {\"ordinal\": 2, \"action\": \"foo\"}]}]}]}",
		   "'p.json': modules[0].functions[1].loads[2].action: unknown action 'foo'");
	/* The same load twice for the same module (or both without id). */
	expect_bad(F("{\"ordinal\": 4, \"action\": \"cache\"}, {\"ordinal\": 4, \"action\": \"cache\"}"),
		   "modules[0].functions[0].loads[1]: load 4 of 'k' is already given at "
		   "modules[0].functions[0].loads[0]");
	expect_bad("{" S "\"modules\": [{\"id\": \"" ID_A "\", \"functions\": [{\"name\": \"k\", \"loads\": "
		   "[{\"ordinal\": 0, \"action\": \"cache\"}]}]}, {\"id\": \"" ID_A "\", \"functions\": "
		   "[{\"name\": \"k\", \"loads\": [{\"ordinal\": 0, \"action\": \"bypass\"}]}]}]}",
		   "modules[1].functions[0].loads[0]: load 0 of 'k' is already given");
}

static void test_load_file_errors(void)
{
	struct plan p;

	plan_init(&p);
	CHECK_INT(plan_load_file(&p, "/nonexistent/plan.json"), CA_E_INPUT);
	CHECK(strstr(error_message(), "/nonexistent/plan.json") != NULL);
	plan_release(&p);
}

static const char ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 k_param_0)\n{\n"
	"\tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tld.global.f32 %f1, [%rd2];\n\tld.global.f32 %f2, [%rd2+4];\n"
	"\tld.global.f32 %f3, [%rd2+8];\n\tret;\n}\n"
	".visible .entry g(.param .u64 g_param_0)\n{\n"
	"\tld.param.u64 %rd1, [g_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tld.global.f32 %f1, [%rd2];\n\tld.global.f32 %f2, [%rd2+4];\n\tret;\n}\n";

static int cmp_edit(const void *a, const void *b)
{
	const struct ptx_load_edit *x = a, *y = b;
	int r = strcmp(x->function, y->function);
	return r ? r : (int)x->ordinal - (int)y->ordinal;
}

static void test_edits(void)
{
	struct plan p;
	struct ptx_module *m = NULL;
	struct ptx_load_edit *e = NULL;
	size_t n;

	plan_init(&p);
	CHECK_INT(load_str(&p, good), 0);
	CHECK_INT(ptx_parse("m.ptx", ptx, sizeof(ptx) - 1, &m), 0);
	if (!m) {
		plan_release(&p);
		return;
	}
	/* Module A: its own entries override the id-less one for k[0]. */
	n = plan_edits_for_module(&p, ID_A, m, &e);
	CHECK_INT(n, 4);
	if (n == 4) {
		qsort(e, n, sizeof(*e), cmp_edit);
		CHECK_STR(e[0].function, "g");
		CHECK_INT(e[0].action, LOAD_ACTION_EVICT_LAST);
		CHECK_INT(e[1].ordinal, 0);
		CHECK_INT(e[1].action, LOAD_ACTION_NO_ALLOCATE);   /* not "stream" */
		CHECK_INT(e[2].ordinal, 1);
		CHECK_INT(e[2].action, LOAD_ACTION_DEFAULT);       /* from the id-less entry */
		CHECK_INT(e[3].ordinal, 2);
		CHECK_INT(e[3].action, LOAD_ACTION_BYPASS);
	}
	free(e);
	/* Another module: only the id-less entry applies. */
	n = plan_edits_for_module(&p, "1111111111111111", m, &e);
	CHECK_INT(n, 2);
	if (n == 2) {
		qsort(e, n, sizeof(*e), cmp_edit);
		CHECK_INT(e[0].action, LOAD_ACTION_STREAM);
		CHECK_INT(e[1].action, LOAD_ACTION_DEFAULT);
	}
	free(e);
	n = plan_edits_for_module(&p, ID_B, m, &e);
	CHECK_INT(n, 2);
	if (n == 2) {
		qsort(e, n, sizeof(*e), cmp_edit);
		CHECK_INT(e[0].action, LOAD_ACTION_CACHE);
	}
	free(e);
	plan_release(&p);

	/* Functions the module lacks are not edits for it. */
	plan_init(&p);
	plan_set(&p, NULL, "absent", 0, LOAD_ACTION_CACHE);
	n = plan_edits_for_module(&p, NULL, m, &e);
	CHECK_INT(n, 0);
	free(e);
	plan_release(&p);

	/* The id the CLI computes is the module text's. */
	{
		char id[MODULE_ID_LEN + 1];
		module_id_compute(ptx, sizeof(ptx) - 1, id);
		plan_init(&p);
		plan_set(&p, id, "g", 1, LOAD_ACTION_NO_ALLOCATE);
		n = plan_edits_for_module(&p, id, m, &e);
		CHECK_INT(n, 1);
		free(e);
		plan_release(&p);
	}
	ptx_module_free(m);
}

int main(void)
{
	test_read();
	test_round_trip();
	test_set();
	test_errors();
	test_load_file_errors();
	test_edits();
	return check_done();
}
