/*
 * The cost record of a capture (analysis/capture_cost.c): runs counted by
 * step, launches counted in-run (variant samples) and with --measure runs
 * (every launch of every run with counters), the ratio to the discovery
 * run, a capture without runs, and the reports' line made of it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/capture_cost.h"
#include "analysis/capture_model.h"
#include "base/error.h"
#include "emitters/report_cost.h"
#include "tests/unit/check.h"

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The "cost" object capture_cost_compute() gives for a capture document,
 * read through the one reader; NULL when the reader refuses it. */
static json_t *cost_json(json_t *doc, double wall_seconds)
{
	struct capture cap;
	struct capture_cost cost;
	json_t *out = NULL;

	capture_init(&cap);
	if (!capture_from_json(&cap, doc, "capture.json")) {
		capture_cost_compute(&cap, wall_seconds, &cost);
		out = capture_cost_to_json(&cost);
	} else {
		fprintf(stderr, "%s\n", error_message());
	}
	capture_release(&cap);
	CHECK(out != NULL);
	return out;
}

static void test_steps(void)
{
	CHECK_STR(capture_cost_step("discovery"), "discover");
	CHECK_STR(capture_cost_step("monitor"), "monitor");
	CHECK_STR(capture_cost_step("capture"), "capture");
	CHECK_STR(capture_cost_step("single"), "capture");
	CHECK_STR(capture_cost_step("pair"), "capture");
	CHECK_STR(capture_cost_step("all_bypassed"), "capture");
	CHECK_STR(capture_cost_step("baseline"), "baseline");
	CHECK_STR(capture_cost_step("verify-in-run"), "verify");
	CHECK_STR(capture_cost_step("verify-patch-advice"), "verify");
	CHECK_STR(capture_cost_step("l2-metrics-baseline"), "l2");
	CHECK_STR(capture_cost_step("oracle-baseline"), "oracle");
	CHECK_STR(capture_cost_step("weird"), "other");
	CHECK_STR(capture_cost_step(NULL), "other");
}

static void test_in_run(void)
{
	json_error_t err;
	json_t *cap = json_loads(
		"{\"schema\": \"cacheadvise.capture/1\", \"kernels\": [], \"runs\": ["
		" {\"index\": 0, \"variant\": \"discovery\", \"wall_seconds\": 2.0},"
		" {\"index\": 1, \"variant\": \"baseline\", \"wall_seconds\": 2.1},"
		" {\"index\": 2, \"variant\": \"baseline\", \"wall_seconds\": 2.1},"
		" {\"index\": 3, \"variant\": \"capture\", \"wall_seconds\": 3.0},"
		" {\"index\": 4, \"variant\": \"capture\", \"wall_seconds\": 3.0},"
		" {\"index\": 5, \"variant\": \"monitor\", \"wall_seconds\": 4.0},"
		" {\"index\": 6, \"variant\": \"verify-in-run\", \"wall_seconds\": 2.5}],"
		" \"measure\": {\"method\": \"launches\", \"kernels\": {"
		"  \"k1\": {\"variants\": {\"all\": {\"samples\": 3}, \"0\": {\"samples\": 3}}},"
		"  \"k2\": {\"variants\": {\"0,1\": {\"samples\": 1.0}}}}}}", 0, &err);
	json_t *cost, *by;

	CHECK(cap != NULL);
	cost = cost_json(cap, 24.0);
	CHECK_INT(json_integer_value(json_object_get(cost, "program_runs")), 7);
	by = json_object_get(cost, "runs_by_step");
	CHECK_INT(json_integer_value(json_object_get(by, "discover")), 1);
	CHECK_INT(json_integer_value(json_object_get(by, "baseline")), 2);
	CHECK_INT(json_integer_value(json_object_get(by, "capture")), 2);
	CHECK_INT(json_integer_value(json_object_get(by, "monitor")), 1);
	CHECK_INT(json_integer_value(json_object_get(by, "verify")), 1);
	CHECK(json_object_get(by, "l2") == NULL);
	CHECK_INT(json_integer_value(json_object_get(cost, "launches_counted")), 7);
	CHECK_NEAR(num(cost, "wall_seconds"), 24.0, 1e-9);
	CHECK_NEAR(num(cost, "native_seconds"), 2.0, 1e-9);
	CHECK_NEAR(num(cost, "ratio"), 12.0, 1e-9);
	json_decref(cost);
	json_decref(cap);
}

static void test_runs(void)
{
	json_error_t err;
	json_t *cap = json_loads(
		"{\"schema\": \"cacheadvise.capture/1\", \"runs\": ["
		" {\"index\": 0, \"variant\": \"discovery\", \"wall_seconds\": 1.0},"
		" {\"index\": 1, \"variant\": \"baseline\"}, {\"index\": 2, \"variant\": \"baseline\"},"
		" {\"index\": 3, \"variant\": \"all_bypassed\"}, {\"index\": 4, \"variant\": \"single\"},"
		" {\"index\": 5, \"variant\": \"single\"}, {\"index\": 6, \"variant\": \"pair\"},"
		" {\"index\": 7, \"variant\": \"verify-baseline\"},"
		" {\"index\": 8, \"variant\": \"verify-advice\"}],"
		" \"measure\": {\"method\": \"runs\"}, \"modules\": [{\"id\": \"m\"}],"
		" \"kernels\": [{\"module\": \"m\", \"name\": \"a\","
		"                \"counters\": {\"baseline\": {\"launches\": 100}}},"
		"              {\"module\": \"m\", \"name\": \"b\","
		"               \"counters\": {\"baseline\": {\"launches\": 10}}},"
		"              {\"module\": \"m\", \"name\": \"c\"}]}", 0, &err);
	json_t *cost;

	CHECK(cap != NULL);
	cost = cost_json(cap, 30.0);
	/* 2 baselines + all_bypassed + 2 singles + 1 pair, 110 launches each */
	CHECK_INT(json_integer_value(json_object_get(cost, "launches_counted")), 660);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(cost, "runs_by_step"), "verify")), 2);
	CHECK_NEAR(num(cost, "ratio"), 30.0, 1e-9);
	json_decref(cost);
	json_decref(cap);
}

static void test_empty(void)
{
	json_t *cap = json_pack("{s:s, s:[]}", "schema", "cacheadvise.capture/1", "kernels");
	json_t *cost = cost_json(cap, 0.5);

	CHECK_INT(json_integer_value(json_object_get(cost, "program_runs")), 0);
	CHECK_INT(json_integer_value(json_object_get(cost, "launches_counted")), 0);
	CHECK_INT(json_object_size(json_object_get(cost, "runs_by_step")), 0);
	CHECK(isnan(num(cost, "native_seconds")));
	CHECK(isnan(num(cost, "ratio")));
	json_decref(cost);
	json_decref(cap);
}

/* report_cost_line() of a capture document, read as `report` reads it. */
static char *line_of(json_t *doc)
{
	struct capture cap;
	char *line = NULL;

	capture_init(&cap);
	if (!capture_from_json(&cap, doc, "capture.json"))
		line = report_cost_line(&cap);
	else
		fprintf(stderr, "%s\n", error_message());
	capture_release(&cap);
	return line;
}

static void test_line(void)
{
	json_t *cap = json_loads("{\"schema\": \"cacheadvise.capture/1\", \"kernels\": [],"
				 " \"runs\": [{\"index\": 0, \"variant\": \"discovery\", \"wall_seconds\": 3.4},"
				 " {\"index\": 1, \"variant\": \"capture\"},"
				 " {\"index\": 2, \"variant\": \"verify-in-run\"}],"
				 " \"measure\": {\"method\": \"launches\", \"kernels\": {}}}", 0, NULL);
	json_t *empty;
	char *line;

	CHECK(cap != NULL);
	CHECK(line_of(cap) == NULL);   /* a capture without its cost */
	json_object_set_new(cap, "cost", cost_json(cap, 41.0));
	line = line_of(cap);
	CHECK_STR(line, "3 program runs (discover 1 in 3.4 s, capture 1, verify 1), 41 s, "
		  "12x the program's native time (3.4 s); 0 launches counted");
	free(line);
	/* each step's seconds, and what the budget skipped (issue 25) */
	json_object_set_new(json_array_get(json_object_get(cap, "runs"), 1), "wall_seconds",
			    json_real(20.25));
	json_object_set_new(cap, "cost", cost_json(cap, 41.0));
	json_object_set_new(cap, "budget", json_pack("{s:f, s:f, s:[{s:s, s:f}]}", "factor", 20.0,
				"seconds", 68.0, "skipped", "step", "the L2 window step",
				"estimate_seconds", 95.0));
	line = line_of(cap);
	CHECK_STR(line, "3 program runs (discover 1 in 3.4 s, capture 1 in 20.2 s, verify 1), "
		  "41 s, 12x the program's native time (3.4 s); 0 launches counted; skipped to "
		  "keep within the budget (--budget): the L2 window step (about 95 s)");
	free(line);
	json_object_del(cap, "budget");
	/* profile --gpus: which GPU ran how many (one GPU alone says nothing) */
	json_object_set_new(json_array_get(json_object_get(cap, "runs"), 1), "gpu", json_integer(0));
	line = line_of(cap);
	CHECK(line && !strstr(line, "by GPU"));
	free(line);
	json_object_set_new(json_array_get(json_object_get(cap, "runs"), 0), "gpu", json_integer(3));
	json_object_set_new(json_array_get(json_object_get(cap, "runs"), 2), "gpu", json_integer(0));
	line = line_of(cap);
	CHECK(line && strstr(line, "launches counted; runs by GPU (--gpus): 1 on GPU 3, 2 on GPU 0"));
	free(line);
	json_object_set_new(json_array_get(json_object_get(cap, "runs"), 2), "gpu", json_integer(5000));
	CHECK(line_of(cap) == NULL);   /* refused: not a GPU number */
	json_object_del(json_array_get(json_object_get(cap, "runs"), 0), "gpu");
	json_object_del(json_array_get(json_object_get(cap, "runs"), 1), "gpu");
	json_object_del(json_array_get(json_object_get(cap, "runs"), 2), "gpu");
	empty = json_pack("{s:s, s:[]}", "schema", "cacheadvise.capture/1", "kernels");
	json_object_set_new(cap, "cost", cost_json(empty, 2.4));
	line = line_of(cap);
	CHECK_STR(line, "0 program runs, 2 s; 0 launches counted");
	free(line);
	/* a cost the reader refuses: a negative count */
	json_object_set_new(json_object_get(cap, "cost"), "program_runs", json_integer(-3));
	CHECK(line_of(cap) == NULL);
	json_decref(empty);
	json_decref(cap);
}

/* Where the time went (issue 39): the runs' own costs summed by
 * mechanism, the program's rest and the tool's time outside the runs,
 * written and read back, and the report line's largest parts. */
static void test_mechanisms(void)
{
	json_t *cap = json_loads("{\"schema\": \"cacheadvise.capture/1\", \"kernels\": [],"
		" \"runs\": [{\"index\": 0, \"variant\": \"discovery\", \"wall_seconds\": 1.0},"
		" {\"index\": 1, \"variant\": \"capture\", \"wall_seconds\": 4.0, \"cost\":"
		"  {\"injected_seconds\": 3.9, \"seconds\": {\"module_jit\": 1.5,"
		"   \"counter_setup\": 1.0, \"replays\": 0.5, \"a_newer_one\": 9}}},"
		" {\"index\": 2, \"variant\": \"capture\", \"wall_seconds\": 3.0, \"cost\":"
		"  {\"injected_seconds\": 2.9, \"seconds\": {\"module_jit\": 0.5,"
		"   \"counter_setup\": 0.8}}}],"
		" \"measure\": {\"method\": \"launches\", \"kernels\": {}}}", 0, NULL);
	json_t *cost, *by;
	char *line;

	CHECK(cap != NULL);
	cost = cost_json(cap, 10.5);
	by = json_object_get(cost, "seconds_by_mechanism");
	CHECK(json_is_object(by));
	CHECK(fabs(num(by, "module_jit") - 2.0) < 1e-9);
	CHECK(fabs(num(by, "counter_setup") - 1.8) < 1e-9);
	CHECK(fabs(num(by, "replays") - 0.5) < 1e-9);
	CHECK(fabs(num(by, "injection_setup")) < 1e-9);
	/* the two costed runs' 7 s less 4.3 s of mechanisms; 10.5 s less 8 s of runs */
	CHECK(fabs(num(by, "program") - 2.7) < 1e-9);
	CHECK(fabs(num(by, "tool") - 2.5) < 1e-9);
	CHECK(json_object_get(by, "a_newer_one") == NULL);
	json_object_set_new(cap, "cost", cost);
	line = line_of(cap);
	CHECK(line && strstr(line, "; where the time went: program 2.7 s, tool 2.5 s, "
			     "module jit 2.0 s, counter setup 1.8 s, replays 0.5 s"));
	free(line);
	/* runs without a cost: no breakdown, as before */
	json_object_del(json_array_get(json_object_get(cap, "runs"), 1), "cost");
	json_object_del(json_array_get(json_object_get(cap, "runs"), 2), "cost");
	cost = cost_json(cap, 10.0);
	CHECK(json_object_get(cost, "seconds_by_mechanism") == NULL);
	json_decref(cost);
	/* a run's cost the reader refuses: a negative time */
	json_object_set_new(json_array_get(json_object_get(cap, "runs"), 1), "cost",
			    json_pack("{s:f, s:{s:f}}", "injected_seconds", 1.0, "seconds",
				      "replays", -1.0));
	{
		struct capture c;

		capture_init(&c);
		CHECK(capture_from_json(&c, cap, "capture.json") != 0);
		error_clear();
		capture_release(&c);
	}
	json_decref(cap);
}

/* The rebuild (verification.rebuilt) is a step of its own: its seconds and
 * runs are counted there, not as the tool's time (issue 38 item 3). */
static void test_rebuild(void)
{
	json_t *cap = json_loads("{\"schema\": \"cacheadvise.capture/1\", \"kernels\": [],"
		" \"runs\": [{\"index\": 0, \"variant\": \"discovery\", \"wall_seconds\": 1.0},"
		" {\"index\": 1, \"variant\": \"capture\", \"wall_seconds\": 4.0, \"cost\":"
		"  {\"injected_seconds\": 3.9, \"seconds\": {\"replays\": 1.0}}}],"
		" \"measure\": {\"method\": \"launches\", \"kernels\": {}},"
		" \"verification\": {\"status\": \"verified\", \"kept\": true, \"rebuilt\":"
		"  {\"status\": \"timed\", \"speedup\": 1.2, \"seconds\": 3.5, \"runs\": 10}}}",
		0, NULL);
	json_t *cost, *by, *secs;
	char *line;

	CHECK(cap != NULL);
	cost = cost_json(cap, 10.0);
	by = json_object_get(cost, "runs_by_step");
	secs = json_object_get(cost, "seconds_by_step");
	CHECK_INT(json_integer_value(json_object_get(by, "rebuild")), 10);
	CHECK_NEAR(num(secs, "rebuild"), 3.5, 1e-9);
	CHECK_INT(json_integer_value(json_object_get(cost, "program_runs")), 12);
	/* 10 s less 5 s of runs and 3.5 s of rebuild: 1.5 s the tool's */
	CHECK_NEAR(num(json_object_get(cost, "seconds_by_mechanism"), "tool"), 1.5, 1e-9);
	/* the profile's own cost, the rebuild apart: (10 - 3.5) / 1 s native */
	CHECK_NEAR(num(cost, "ratio"), 6.5, 1e-9);
	json_object_set_new(cap, "cost", cost);
	line = line_of(cap);
	CHECK(line && strstr(line, "rebuild 10 in 3.5 s"));
	CHECK(line && strstr(line, "6.5x the program's native time (1 s) without the rebuild's 3.5 s"));
	free(line);
	json_decref(cap);
}

/* profile --gpus: runs side by side whose counter setup took much longer
 * than the runs alone are named in the cost line (issue 35 item 6). */
static void test_side_by_side(void)
{
	json_t *cap = json_loads("{\"schema\": \"cacheadvise.capture/1\", \"kernels\": [],"
		" \"runs\": [{\"index\": 0, \"variant\": \"discovery\", \"wall_seconds\": 1.0},"
		" {\"index\": 1, \"variant\": \"baseline\", \"wall_seconds\": 2, \"gpu\": 0,"
		"  \"cost\": {\"injected_seconds\": 2, \"seconds\": {\"counter_config\": 0.1,"
		"   \"counter_setup\": 0.3}}},"
		" {\"index\": 2, \"variant\": \"single\", \"wall_seconds\": 3, \"gpu\": 0,"
		"  \"files_compared\": false, \"cost\": {\"injected_seconds\": 3, \"seconds\":"
		"   {\"counter_config\": 0.2, \"counter_setup\": 0.6}}},"
		" {\"index\": 3, \"variant\": \"single\", \"wall_seconds\": 3, \"gpu\": 1,"
		"  \"files_compared\": false, \"cost\": {\"injected_seconds\": 3, \"seconds\":"
		"   {\"counter_config\": 0.2, \"counter_setup\": 0.8}}}],"
		" \"measure\": {\"method\": \"runs\"}}", 0, NULL);
	char *line;

	CHECK(cap != NULL);
	json_object_set_new(cap, "cost", cost_json(cap, 9.0));
	line = line_of(cap);
	CHECK(line && strstr(line, "runs by GPU (--gpus): 2 on GPU 0, 1 on GPU 1; side by side a "
			     "run's counter setup took 0.90 s, 2.2x its 0.40 s alone"));
	free(line);
	/* as long beside as alone: nothing to say */
	json_object_set_new(json_object_get(json_object_get(json_array_get(json_object_get(cap,
		"runs"), 1), "cost"), "seconds"), "counter_setup", json_real(0.8));
	line = line_of(cap);
	CHECK(line && !strstr(line, "side by side"));
	free(line);
	json_decref(cap);
}

int main(void)
{
	test_steps();
	test_in_run();
	test_runs();
	test_empty();
	test_line();
	test_mechanisms();
	test_side_by_side();
	test_rebuild();
	return check_done();
}
