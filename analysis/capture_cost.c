/*
 * The cost record of a capture (analysis/capture_cost.h).
 */
#include <math.h>
#include <string.h>

#include "analysis/capture_cost.h"
#include "analysis/capture_model.h"

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The name of step index i of capture_steps[] (one list of the names). */
enum { STEP_DISCOVER, STEP_MONITOR, STEP_CAPTURE, STEP_BASELINE, STEP_VERIFY, STEP_L2,
       STEP_ORACLE, STEP_REBUILD, STEP_OTHER };

/* The rebuild's seconds and runs (verification.rebuilt): not capture runs,
 * so counted from its own record. 0 where there is none. */
static double rebuild_seconds(const struct capture *cap, long long *runs)
{
	const struct capture_rebuilt *rb = &cap->verification.rebuilt;

	*runs = 0;
	if (!cap->has_verification || !cap->verification.has_rebuilt || !(rb->seconds > 0))
		return 0;
	*runs = rb->runs > 0 ? rb->runs : 0;
	return rb->seconds;
}

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

/* Launches of the measured kernels in one run with counters (--measure runs). */
static long long launches_per_counted_run(const struct capture *cap)
{
	long long n = 0;
	size_t i;

	for (i = 0; i < cap->nr_kernels; i++) {
		const struct capture_counters *c = capture_kernel_counters(&cap->kernels[i],
									   "baseline");
		if (c && c->launches > 0)
			n += c->launches;
	}
	return n;
}

/* cost->*_seconds by mechanism, from the runs' own costs (capture_cost.h). */
static void by_mechanism(const struct capture *cap, struct capture_cost *cost)
{
	double runs_wall = 0, costed_wall = 0, in_mechanisms = 0;
	size_t i;
	int m;

	for (m = 0; m < RUN_COST_NR_MECHANISMS; m++)
		cost->mechanism_seconds[m] = 0;
	for (i = 0; i < cap->nr_runs; i++) {
		const struct capture_run *r = &cap->runs[i];

		if (!(r->wall_seconds > 0))
			continue;
		runs_wall += r->wall_seconds;
		if (!r->has_cost)
			continue;
		cost->has_mechanisms = 1;
		costed_wall += r->wall_seconds;
		for (m = 0; m < RUN_COST_NR_MECHANISMS; m++)
			if (r->cost_seconds[m] > 0) {
				cost->mechanism_seconds[m] += r->cost_seconds[m];
				in_mechanisms += r->cost_seconds[m];
			}
	}
	{
		long long n;

		runs_wall += rebuild_seconds(cap, &n);    /* its own step, not the tool's */
	}
	cost->program_seconds = costed_wall > in_mechanisms ? costed_wall - in_mechanisms : 0;
	cost->tool_seconds = cost->wall_seconds > runs_wall ? cost->wall_seconds - runs_wall : 0;
	if (isnan(cost->wall_seconds))
		cost->tool_seconds = NAN;
}

void capture_cost_compute(const struct capture *cap, double wall_seconds, struct capture_cost *cost)
{
	const char *method = cap->has_measure ? cap->measure.method : NULL;
	int runs_method = method && !strcmp(method, "runs");
	double native = -1;
	long long counted_runs = 0;
	size_t i, s;

	memset(cost, 0, sizeof(*cost));
	for (s = 0; s < CAPTURE_NR_STEPS; s++)
		cost->seconds_by_step[s] = NAN;
	for (i = 0; i < cap->nr_runs; i++) {
		const struct capture_run *r = &cap->runs[i];
		const char *step = capture_cost_step(r->variant);

		for (s = 0; s < CAPTURE_NR_STEPS && strcmp(capture_steps[s], step); s++)
			;
		cost->runs_by_step[s]++;
		if (r->wall_seconds > 0)
			cost->seconds_by_step[s] = (isnan(cost->seconds_by_step[s]) ? 0 :
						    cost->seconds_by_step[s]) + r->wall_seconds;
		if (native < 0 && r->variant && !strcmp(r->variant, "discovery") &&
		    r->wall_seconds > 0)
			native = r->wall_seconds;
		if (runs_method && (s == STEP_CAPTURE || s == STEP_BASELINE))
			counted_runs++;
	}
	{
		long long n;
		double secs = rebuild_seconds(cap, &n);

		if (secs > 0) {
			cost->runs_by_step[STEP_REBUILD] = n;
			cost->seconds_by_step[STEP_REBUILD] = secs;
		}
		cost->program_runs = (long long)cap->nr_runs + n;
	}
	if (method && !strcmp(method, "launches"))
		cost->launches_counted = (long long)cap->measure.samples;
	else
		cost->launches_counted = counted_runs ? counted_runs * launches_per_counted_run(cap) : 0;
	cost->wall_seconds = wall_seconds;
	cost->native_seconds = native > 0 ? native : NAN;
	/* the profile's own cost: the rebuild, the user's build and the timing
	 * of what apply delivers, is a step apart (never left to --budget) */
	cost->ratio = native > 0 ? (wall_seconds - (isnan(cost->seconds_by_step[STEP_REBUILD]) ? 0 :
				   cost->seconds_by_step[STEP_REBUILD])) / native : NAN;
	by_mechanism(cap, cost);
}
