/*
 * Close calls (issue 38 item 5, docs/model.md "Close calls"): captures
 * that differ within the noise give one plan, a close call keeps the form
 * as built, and the report names it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/capture_model.h"
#include "analysis/plan.h"
#include "base/error.h"
#include "base/json_file.h"
#include "emitters/report.h"
#include "tests/unit/check.h"

static json_t *capture_basic(void)
{
	json_t *doc = json_file_load(check_source_path("tests/fixtures/graphs/capture-basic.json"));

	if (!doc)
		fprintf(stderr, "%s\n", error_message());
	return doc;
}

/* The plan's form of a load of kernel fn, plan.json spelling, or "-". */
static const char *plan_form(const struct plan *p, const char *fn, unsigned ordinal)
{
	size_t m, f, l;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++) {
			const struct plan_function *pf = &p->modules[m].functions[f];

			if (strcmp(pf->name, fn))
				continue;
			for (l = 0; l < pf->nr_loads; l++)
				if (pf->loads[l].ordinal == ordinal)
					return load_form_name(pf->loads[l].action, pf->loads[l].l2);
		}
	return "-";
}

/* advise_capture() of doc into plan and *a (released by the caller). */
static int advise(json_t *doc, struct plan *plan, struct analysis *a)
{
	struct capture cap;
	struct advise_options opt;
	int ret;

	advise_options_init(&opt);
	capture_init(&cap);
	analysis_init(a);
	ret = capture_from_json(&cap, doc, "capture.json");
	if (!ret)
		ret = advise_capture(&cap, &opt, plan, NULL, a);
	if (ret)
		fprintf(stderr, "%s\n", error_message());
	capture_release(&cap);
	return ret;
}

/* capture-basic's 'stream' with load 2 measured in two L2 priorities that
 * both save more than the noise (twice the spread of 500 bytes, of
 * 100,000) and lie 10 bytes apart: first (ef, el) DRAM bytes. */
static json_t *l2_capture(int ef, int el)
{
	json_t *cap = capture_basic();
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"forms\": [\"L2::evict_first\", \"L2::evict_last\"],"
		 " \"baseline_dram_bytes\": 100000, \"noise_dram_bytes\": 500,"
		 " \"loads\": [{\"ordinal\": 2, \"dram_bytes\": [%d, %d]}], \"pairs\": []}", ef, el);
	json_object_set_new(json_array_get(json_object_get(cap, "kernels"), 0), "l2_priority",
			    json_loads(text, 0, NULL));
	return cap;
}

/*
 * (a) evict_first saves 1,200 bytes and evict_last 1,190, or the other way
 * round in a second capture (a 1% change of the gains): without the rule
 * the plan follows the larger; with it both are a close call whose tie
 * goes to the first form in the capture's order, in both captures.
 */
static void test_l2_stable(void)
{
	static const int dram[2][2] = { { 98800, 98810 }, { 98810, 98800 } };
	char forms[2][64];
	int i;

	for (i = 0; i < 2; i++) {
		json_t *cap = l2_capture(dram[i][0], dram[i][1]), *an, *l;
		struct plan plan;
		struct analysis a;

		plan_init(&plan);
		CHECK_INT(advise(cap, &plan, &a), 0);
		snprintf(forms[i], sizeof(forms[i]), "%s", plan_form(&plan, "stream", 2));
		CHECK(strstr(forms[i], "L2::evict_first") != NULL);
		an = analysis_to_json(&a);
		l = json_array_get(json_object_get(json_array_get(json_object_get(an, "kernels"), 0),
						   "loads"), 2);
		CHECK_INT(json_integer_value(json_object_get(l, "ordinal")), 2);
		CHECK(json_is_true(json_object_get(l, "close_call")));
		CHECK_NEAR(json_number_value(json_object_get(json_object_get(json_object_get(l,
			"margin"), "L2"), "bytes")), 10, 1e-9);
		CHECK_NEAR(json_number_value(json_object_get(json_object_get(json_object_get(l,
			"margin"), "L2"), "noise_fraction")), 0.01, 1e-12);
		json_decref(an);
		analysis_release(&a);
		plan_release(&plan);
		json_decref(cap);
	}
	CHECK_STR(forms[0], forms[1]);
}

/*
 * (a') a gain of one to two spreads is noise: evict_first saves 800 bytes
 * and evict_last 600 against a spread of 500; one replay against a range
 * of three crosses one spread by chance (deposit's load 0 did in one H200
 * profile of three), so no priority is chosen. At 1,200 bytes it is.
 */
static void test_l2_two_spreads(void)
{
	static const int dram[2][2] = { { 99200, 99400 }, { 98800, 99400 } };
	int i;

	for (i = 0; i < 2; i++) {
		json_t *cap = l2_capture(dram[i][0], dram[i][1]);
		struct plan plan;
		struct analysis a;

		plan_init(&plan);
		CHECK_INT(advise(cap, &plan, &a), 0);
		CHECK(!strstr(plan_form(&plan, "stream", 2), "L2::evict_last"));
		CHECK(!strstr(plan_form(&plan, "stream", 2), "L2::evict_first") == !i);
		analysis_release(&a);
		plan_release(&plan);
		json_decref(cap);
	}
}

/*
 * (a'') a pair of forms not measured does not add up when the measured pair
 * of the same loads interacts: load 0 saves 3,000 bytes with evict_first
 * and 2,000 with evict_last, load 2 4,000 with evict_first; measured
 * together in evict_first (their best forms) they save only 3,000. Taking
 * (load 0 evict_last, load 2 evict_first), never measured, as 6,000 was
 * how deposit's plans differed; load 2's evict_first alone is chosen.
 */
static void test_l2_unmeasured_pair(void)
{
	json_t *cap = capture_basic();
	struct plan plan;
	struct analysis a;

	json_object_set_new(json_array_get(json_object_get(cap, "kernels"), 0), "l2_priority",
		json_loads("{\"forms\": [\"L2::evict_first\", \"L2::evict_last\"],"
			   " \"baseline_dram_bytes\": 100000, \"noise_dram_bytes\": 100,"
			   " \"loads\": [{\"ordinal\": 0, \"dram_bytes\": [97000, 98000]},"
			   "   {\"ordinal\": 2, \"dram_bytes\": [96000, 99950]}],"
			   " \"pairs\": [{\"i\": 0, \"j\": 2, \"forms\": [0, 0],"
			   "   \"dram_bytes\": 97000}]}", 0, NULL));
	plan_init(&plan);
	CHECK_INT(advise(cap, &plan, &a), 0);
	CHECK(strstr(plan_form(&plan, "stream", 2), "L2::evict_first") != NULL);
	CHECK(!strstr(plan_form(&plan, "stream", 0), "L2::"));
	analysis_release(&a);
	plan_release(&plan);
	json_decref(cap);
}

/*
 * (b) capture-basic's 'mix' (units of 32 bytes: W = 1, 6, 9, 10; W(e02) =
 * -2, W(e03) = -10, W(e13) = 6, W(e23) = -12): the optimum caches ld1 and
 * ld3 (22) and bypasses ld2, whose margin is |9 - 12| = 3 of a total of
 * 26 (11.5%). With a counter spread of 12% that is a close call: ld2 keeps
 * its form as built (cached), and bnb solves the rest with it fixed:
 * {1, 2, 3} (19). With 10% it is bypassed as before.
 */
static void test_l1_as_built(void)
{
	static const double spread[2] = { 0.12, 0.10 };
	int i;

	for (i = 0; i < 2; i++) {
		json_t *cap = capture_basic();
		struct plan plan;
		struct analysis a;
		const struct analysis_kernel *k;

		json_object_set_new(cap, "baseline_check", json_pack("{s:f}", "max_counter_spread",
								     spread[i]));
		plan_init(&plan);
		CHECK_INT(advise(cap, &plan, &a), 0);
		k = analysis_find_kernel(&a, NULL, "mix");
		CHECK(k != NULL);
		if (!k)
			break;
		CHECK_STR(plan_form(&plan, "mix", 2), i ? "L1::no_allocate" : "default");
		CHECK_STR(plan_form(&plan, "mix", 0), "L1::no_allocate");
		CHECK_NEAR(k->chosen->objective, (i ? 22 : 19) * 32, 1e-9);
		CHECK(!i == (analysis_close_call(k, "L1", 2) != NULL));
		if (!i) {
			const struct analysis_close_call *c = analysis_close_call(k, "L1", 2);

			CHECK_NEAR(c->margin, 3.0 / 26, 1e-12);
			CHECK_NEAR(c->noise, 0.12, 1e-12);
			CHECK_STR(c->kept, "as built");
			CHECK_STR(c->chosen, "L1::no_allocate");
		}
		analysis_release(&a);
		plan_release(&plan);
		json_decref(cap);
	}
}

/* (c) the report's line for the close call of (a). */
static void test_report_line(void)
{
	json_t *cap = l2_capture(98800, 98810);
	struct plan plan;
	struct analysis a;
	struct report_kernel rk;
	char *line;

	plan_init(&plan);
	CHECK_INT(advise(cap, &plan, &a), 0);
	memset(&rk, 0, sizeof(rk));
	rk.analysis = analysis_find_kernel(&a, NULL, "stream");
	line = report_close_calls_text(&rk);
	CHECK(line != NULL);
	CHECK_STR(line, "close calls (within the noise, kept as built): load 2 L2 "
		  "L2::evict_last vs L2::evict_first, margin 0.01% against noise 1%");
	free(line);
	rk.analysis = analysis_find_kernel(&a, NULL, "mix");
	CHECK(report_close_calls_text(&rk) == NULL);
	analysis_release(&a);
	plan_release(&plan);
	json_decref(cap);
}

int main(void)
{
	test_l2_stable();
	test_l2_two_spreads();
	test_l2_unmeasured_pair();
	test_l1_as_built();
	test_report_line();
	return check_done();
}
