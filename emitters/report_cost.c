/*
 * The cost line of the reports (emitters/report_cost.h).
 */
#include <stdlib.h>

#include "base/strbuf.h"
#include "emitters/progress_text.h"
#include "emitters/report_cost.h"

char *report_cost_line(json_t *capture)
{
	static const char *const steps[] = { "discover", "monitor", "capture", "baseline",
					     "verify", "l2", "oracle", "other" };
	json_t *cost = json_object_get(capture, "cost"), *by, *secs, *ratio, *native;
	json_t *skipped = json_object_get(json_object_get(capture, "budget"), "skipped"), *x;
	struct strbuf sb = STRBUF_INIT;
	json_int_t runs;
	const char *sep = " (";
	char *d;
	size_t i;

	if (!json_is_object(cost))
		return NULL;
	runs = json_integer_value(json_object_get(cost, "program_runs"));
	by = json_object_get(cost, "runs_by_step");
	secs = json_object_get(cost, "seconds_by_step");
	strbuf_addf(&sb, "%lld program run%s", (long long)runs, runs == 1 ? "" : "s");
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		json_int_t n = json_integer_value(json_object_get(by, steps[i]));
		json_t *s = json_object_get(secs, steps[i]);

		if (n > 0) {
			strbuf_addf(&sb, "%s%s %lld", sep, steps[i], (long long)n);
			/* the cost of each step (issue 25) */
			if (json_is_number(s))
				strbuf_addf(&sb, " in %.1f s", json_number_value(s));
			sep = ", ";
		}
	}
	if (*sep == ',')
		strbuf_addch(&sb, ')');
	d = progress_text_duration(json_number_value(json_object_get(cost, "wall_seconds")));
	strbuf_addf(&sb, ", %s", d);
	free(d);
	ratio = json_object_get(cost, "ratio");
	native = json_object_get(cost, "native_seconds");
	if (json_is_number(ratio) && json_is_number(native))
		strbuf_addf(&sb, ", %.*fx the program's native time (%.2g s)",
			    json_number_value(ratio) < 10 ? 1 : 0, json_number_value(ratio),
			    json_number_value(native));
	strbuf_addf(&sb, "; %lld launches counted",
		    (long long)json_integer_value(json_object_get(cost, "launches_counted")));
	json_array_foreach(skipped, i, x)
		strbuf_addf(&sb, "%s%s (about %.0f s)", i ? ", " : "; skipped to keep within the "
			    "budget (--budget): ", json_string_value(json_object_get(x, "step")) ?: "?",
			    json_number_value(json_object_get(x, "estimate_seconds")));
	return strbuf_detach(&sb, NULL);
}
