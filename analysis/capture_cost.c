/*
 * The cost record of a capture (analysis/capture_cost.h).
 */
#include <string.h>

#include "analysis/capture_cost.h"
#include "analysis/capture_model.h"

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The name of step index i of capture_steps[] (one list of the names). */
enum { STEP_DISCOVER, STEP_MONITOR, STEP_CAPTURE, STEP_BASELINE, STEP_VERIFY, STEP_L2,
       STEP_ORACLE, STEP_OTHER };

const char *capture_cost_step(const char *variant)
{
	static const char *const capture[] = { "capture", "all_bypassed", "single", "pair" };
	size_t i;

	if (!variant)
		return capture_steps[STEP_OTHER];
	if (!strcmp(variant, "discovery"))
		return capture_steps[STEP_DISCOVER];
	if (!strcmp(variant, "monitor"))
		return capture_steps[STEP_MONITOR];
	if (!strcmp(variant, "baseline"))
		return capture_steps[STEP_BASELINE];
	for (i = 0; i < sizeof(capture) / sizeof(capture[0]); i++)
		if (!strcmp(variant, capture[i]))
			return capture_steps[STEP_CAPTURE];
	if (starts_with(variant, "verify"))
		return capture_steps[STEP_VERIFY];
	if (starts_with(variant, "l2"))
		return capture_steps[STEP_L2];
	if (starts_with(variant, "oracle"))
		return capture_steps[STEP_ORACLE];
	return capture_steps[STEP_OTHER];
}

/* Launches counted by the in-run capture: every variant's samples. */
static json_int_t in_run_launches(json_t *measure)
{
	json_t *kernels = json_object_get(measure, "kernels"), *k, *v;
	const char *kname, *vname;
	json_int_t n = 0;

	json_object_foreach(kernels, kname, k) {
		json_object_foreach(json_object_get(k, "variants"), vname, v) {
			json_t *s = json_object_get(v, "samples");
			if (json_is_number(s) && json_number_value(s) > 0)
				n += (json_int_t)json_number_value(s);
		}
	}
	return n;
}

/* Launches of the measured kernels in one run with counters (--measure runs). */
static json_int_t launches_per_counted_run(json_t *capture)
{
	json_t *k;
	size_t i;
	json_int_t n = 0;

	json_array_foreach(json_object_get(capture, "kernels"), i, k) {
		json_t *l = json_object_get(json_object_get(json_object_get(k, "counters"), "baseline"),
					    "launches");
		if (json_is_integer(l) && json_integer_value(l) > 0)
			n += json_integer_value(l);
	}
	return n;
}

json_t *capture_cost_json(json_t *capture, double wall_seconds)
{
	json_t *runs = json_object_get(capture, "runs"), *r, *by = json_object(), *cost;
	json_t *secs = json_object();
	json_t *measure = json_object_get(capture, "measure");
	const char *method = json_string_value(json_object_get(measure, "method"));
	double native = -1;
	json_int_t counted = 0, counted_runs = 0;
	size_t i;

	json_array_foreach(runs, i, r) {
		const char *v = json_string_value(json_object_get(r, "variant"));
		const char *step = capture_cost_step(v);
		json_t *w = json_object_get(r, "wall_seconds");

		json_object_set_new(by, step, json_integer(json_integer_value(json_object_get(by, step)) + 1));
		if (json_is_number(w) && json_number_value(w) > 0)
			json_object_set_new(secs, step, json_real(json_number_value(w) +
				json_number_value(json_object_get(secs, step))));
		if (native < 0 && v && !strcmp(v, "discovery") && json_is_number(w) &&
		    json_number_value(w) > 0)
			native = json_number_value(w);
		if (method && !strcmp(method, "runs") && !strcmp(step, "capture"))
			counted_runs++;
		else if (method && !strcmp(method, "runs") && !strcmp(step, "baseline"))
			counted_runs++;
	}
	if (method && !strcmp(method, "launches"))
		counted = in_run_launches(measure);
	else if (counted_runs)
		counted = counted_runs * launches_per_counted_run(capture);
	cost = json_pack("{s:I, s:o, s:I, s:f}", "program_runs", (json_int_t)json_array_size(runs),
			 "runs_by_step", by, "launches_counted", counted, "wall_seconds", wall_seconds);
	json_object_set_new(cost, "seconds_by_step", secs);
	json_object_set_new(cost, "native_seconds", native > 0 ? json_real(native) : json_null());
	json_object_set_new(cost, "ratio", native > 0 ? json_real(wall_seconds / native) : json_null());
	return cost;
}
