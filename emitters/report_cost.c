/*
 * The cost line of the reports (emitters/report_cost.h).
 */
#include <math.h>
#include <stdlib.h>

#include "base/strbuf.h"
#include "emitters/progress_text.h"
#include "emitters/report_cost.h"

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
	if (!isnan(cost->ratio) && !isnan(cost->native_seconds))
		strbuf_addf(&sb, ", %.*fx the program's native time (%.2g s)", cost->ratio < 10 ? 1 : 0,
			    cost->ratio, cost->native_seconds);
	strbuf_addf(&sb, "; %lld launches counted",
		    cost->launches_counted > 0 ? cost->launches_counted : 0);
	/* profile --gpus: which GPU ran how many */
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
	}
	for (i = 0; cap->has_budget && i < cap->budget.nr_skipped; i++)
		strbuf_addf(&sb, "%s%s (about %.0f s)", i ? ", " : "; skipped to keep within the "
			    "budget (--budget): ", cap->budget.skipped[i].step,
			    cap->budget.skipped[i].estimate_seconds);
	return strbuf_detach(&sb, NULL);
}
