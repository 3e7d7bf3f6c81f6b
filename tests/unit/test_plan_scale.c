/*
 * plan.json is read, and applied to a module, in time near-linear in its
 * entries (issue 36: a plan of 40k functions took 12 to 17 s in patch, run
 * and report, and applying it to a module of 40k functions 27 s). Measured
 * deterministically, not by time: this program counts the string
 * comparisons made while a plan of n functions is read (plan_from_json)
 * and applied (plan_edits_for_module, whose ptx_module_find was a walk
 * over the module), for n and 8n. Linear work grows 8 times (with the
 * sort of the loads, about 10); the quadratic lookups grew 64 times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/plan.h"
#include "analysis/ptx.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "tests/unit/check.h"

static int counting;
static unsigned long long compares;

/*
 * Every strcmp of this program (the libraries linked into it included)
 * comes here: counted while counting is set. Plain C, so that no builtin
 * or sanitizer interceptor stands in between.
 */
int strcmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	if (counting)
		compares++;
	while (*x && *x == *y) {
		x++;
		y++;
	}
	return (int)*x - (int)*y;
}

/* A plan of n functions of one module without an id, one load each. */
static json_t *plan_doc(size_t n)
{
	json_t *fns = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "_Z22kernel_number_%08zuPKfS0_Pf", i);
		json_array_append_new(fns, json_pack("{s:s, s:[{s:i, s:s}]}", "name", name,
						     "loads", "ordinal", 0, "action", "bypass"));
	}
	return json_pack("{s:s, s:[{s:o}]}", "schema", "cacheadvise.plan/1", "modules",
			 "functions", fns);
}

/* A module of the same n functions, each with one global load. */
static struct ptx_module *module_of(size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *m = NULL;
	size_t i;

	strbuf_addstr(&sb, ".version 8.0\n.target sm_90\n.address_size 64\n");
	for (i = 0; i < n; i++)
		strbuf_addf(&sb, ".visible .entry _Z22kernel_number_%08zuPKfS0_Pf(.param .u64 p)\n"
			    "{\n\t.reg .b64 %%rd<3>;\n\t.reg .f32 %%f<2>;\n"
			    "\tld.param.u64 %%rd1, [p];\n\tld.global.f32 %%f1, [%%rd1];\n"
			    "\tret;\n}\n", i);
	if (ptx_parse("scale.ptx", sb.buf, sb.len, &m))
		fprintf(stderr, "cannot parse: %s\n", error_message());
	strbuf_release(&sb);
	return m;
}

struct cost {
	unsigned long long read, apply;
};

static struct cost cost_of(size_t n)
{
	struct cost c = { 0, 0 };
	json_t *doc = plan_doc(n);
	struct ptx_module *m = module_of(n);
	struct ptx_load_edit *edits = NULL;
	struct plan p;
	size_t nr = 0;

	plan_init(&p);
	CHECK(m != NULL);
	compares = 0;
	counting = 1;
	CHECK_INT(plan_from_json(&p, doc, "scale.json"), 0);
	counting = 0;
	c.read = compares;
	CHECK_INT(p.nr_modules, 1);
	if (m) {
		compares = 0;
		counting = 1;
		nr = plan_edits_for_module(&p, NULL, m, &edits);
		counting = 0;
		c.apply = compares;
		CHECK_INT(nr, n);
	}
	free(edits);
	ptx_module_free(m);
	plan_release(&p);
	json_decref(doc);
	return c;
}

int main(void)
{
	struct cost small = cost_of(1000), large = cost_of(8000);

	fprintf(stderr, "string comparisons: read %llu -> %llu, apply %llu -> %llu "
		"(1000 -> 8000 functions)\n", small.read, large.read, small.apply, large.apply);
	/* 8 times the entries, at most about 10 times the work (n log n of the
	 * sorts); the quadratic walks did 64 times */
	CHECK(large.read < 14 * small.read);
	CHECK(large.apply < 14 * small.apply);
	/* and a few dozen comparisons per entry, not thousands */
	CHECK(large.read < 40 * 8000);
	CHECK(large.apply < 40 * 8000);
	return check_done();
}
