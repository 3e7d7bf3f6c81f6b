/*
 * The cost line of the reports (emitters/report_cost.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "emitters/progress_text.h"
#include "emitters/report_cost.h"

/* "; where the time went: program 4.1 s, counter setup 3.0 s, ...": the
 * parts over 2% of the wall time, largest first (issue 39). */
static void add_mechanisms(struct strbuf *sb, const struct capture_cost *cost)
{
	const char *name[RUN_COST_NR_MECHANISMS + 2];
	double secs[RUN_COST_NR_MECHANISMS + 2];
	size_t n = 0, i, j, shown = 0;
	int m;

	if (!cost->has_mechanisms || !(cost->wall_seconds > 0))
		return;
	for (m = 0; m < RUN_COST_NR_MECHANISMS; m++) {
		name[n] = run_cost_mechanisms[m];
		secs[n++] = cost->mechanism_seconds[m];
	}
	name[n] = "program";
	secs[n++] = cost->program_seconds;
	name[n] = "tool";
	secs[n++] = cost->tool_seconds;
	for (i = 0; i < n; i++) {           /* largest first */
		for (j = i + 1; j < n; j++)
			if (secs[j] > secs[i]) {
				double s = secs[i];
				const char *t = name[i];

				secs[i] = secs[j];
				name[i] = name[j];
				secs[j] = s;
				name[j] = t;
			}
		if (!(secs[i] > 0.02 * cost->wall_seconds))
			break;
		strbuf_addstr(sb, shown++ ? ", " : "; where the time went: ");
		for (j = 0; name[i][j]; j++)          /* counter_setup -> counter setup */
			strbuf_addch(sb, name[i][j] == '_' ? ' ' : name[i][j]);
		strbuf_addf(sb, " %.1f s", secs[i]);
	}
}

/* The range profiler's setup of a run (configuration and sessions: the
 * same work whatever the run measures), NAN without the run's cost. */
static double counter_setup(const struct capture_run *r)
{
	return r->has_cost ? r->cost_seconds[RUN_COST_COUNTER_CONFIG] +
			     r->cost_seconds[RUN_COST_COUNTER_SETUP] : NAN;
}

/*
 * profile --gpus (issue 35 item 6): why runs side by side save less than
 * their number says. A run's counter setup is the same work alone or beside
 * another; when side by side (files_compared 0) it takes much longer (on
 * an H200 pair, 0.45 s alone, 0.64-1.08 s beside: bench/results/gpu-tests.md),
 * the line says so. Not the profiler's doing: on that pair the program
 * alone, without the tool, took 1.9x as long beside itself on the other
 * GPU (0.35 s, 0.58-0.67 s; bench/gpu_side_by_side.sh).
 */
static void add_side_by_side(struct strbuf *sb, const struct capture *cap)
{
	double beside = 0, alone = 0, s;
	size_t nb = 0, na = 0, i;

	for (i = 0; i < cap->nr_runs; i++) {
		if (isnan(s = counter_setup(&cap->runs[i])) || s <= 0)
			continue;
		if (cap->runs[i].files_compared == 0) {
			beside += s;
			nb++;
		} else {
			alone += s;
			na++;
		}
	}
	if (!nb || !na || beside / nb < 1.2 * (alone / na))
		return;
	strbuf_addf(sb, "; side by side a run's counter setup took %.2f s, %.1fx its %.2f s alone: "
		    "runs on several GPUs slow each other, so --gpus saves less than its number "
		    "of GPUs", beside / nb, (beside / nb) / (alone / na), alone / na);
}

char *report_cost_line(const struct capture *cap)
{
	const struct capture_cost *cost = &cap->cost;
	struct strbuf sb = STRBUF_INIT;
	const char *sep = " (";
	char *d;
	size_t i;

	if (!cap->has_cost)
		return NULL;
	strbuf_addf(&sb, "%lld program run%s", cost->program_runs > 0 ? cost->program_runs : 0,
		    cost->program_runs == 1 ? "" : "s");
	for (i = 0; i < CAPTURE_NR_STEPS; i++) {
		if (cost->runs_by_step[i] <= 0)
			continue;
		strbuf_addf(&sb, "%s%s %lld", sep, capture_steps[i], cost->runs_by_step[i]);
		/* the cost of each step (issue 25) */
		if (!isnan(cost->seconds_by_step[i]))
			strbuf_addf(&sb, " in %.1f s", cost->seconds_by_step[i]);
		sep = ", ";
	}
	if (*sep == ',')
		strbuf_addch(&sb, ')');
	d = progress_text_duration(isnan(cost->wall_seconds) ? 0 : cost->wall_seconds);
	strbuf_addf(&sb, ", %s", d);
	free(d);
	if (!isnan(cost->ratio) && !isnan(cost->native_seconds)) {
		strbuf_addf(&sb, ", %.*fx the program's native time (%.2g s)", cost->ratio < 10 ? 1 : 0,
			    cost->ratio, cost->native_seconds);
		for (i = 0; i < CAPTURE_NR_STEPS; i++)
			if (!strcmp(capture_steps[i], "rebuild") && cost->seconds_by_step[i] > 0)
				strbuf_addf(&sb, " without the rebuild's %.1f s",
					    cost->seconds_by_step[i]);
	}
	strbuf_addf(&sb, "; %lld launches counted",
		    cost->launches_counted > 0 ? cost->launches_counted : 0);
	/* profile --gpus: which GPU ran how many, and what side by side cost */
	{
		int gpus[16];
		long long runs[16];
		size_t n = 0, j;

		for (i = 0; i < cap->nr_runs; i++) {
			int g = cap->runs[i].gpu;

			if (!cap->runs[i].has_gpu)
				continue;
			for (j = 0; j < n && gpus[j] != g; j++)
				;
			if (j == n && n < 16) {
				gpus[n] = g;
				runs[n++] = 0;
			}
			if (j < n)
				runs[j]++;
		}
		for (j = 0; n > 1 && j < n; j++)
			strbuf_addf(&sb, "%s%lld on GPU %d", j ? ", " : "; runs by GPU (--gpus): ", runs[j],
				    gpus[j]);
		if (n > 1)
			add_side_by_side(&sb, cap);
	}
	add_mechanisms(&sb, cost);
	for (i = 0; cap->has_budget && i < cap->budget.nr_skipped; i++)
		strbuf_addf(&sb, "%s%s (about %.0f s)", i ? ", " : "; skipped to keep within the "
			    "budget (--budget): ", cap->budget.skipped[i].step,
			    cap->budget.skipped[i].estimate_seconds);
	return strbuf_detach(&sb, NULL);
}
