#include "analysis/carveout_verdict.h"

#include <stdio.h>
#include <stdlib.h>

#include "analysis/ab_verdict.h"
#include "base/xalloc.h"

static json_t *entry(const char *name, int program_value, const char *library, json_t *speedup,
		     int keep_default, const char *reason)
{
	json_t *e = json_pack("{s:s, s:i, s:i, s:o, s:s, s:s}", "name", name, "program_value",
			      program_value, "default_value", CARVEOUT_DEFAULT, "speedup_of_default",
			      speedup ? speedup : json_null(), "kept",
			      keep_default ? "default" : "program", "reason", reason);

	if (keep_default) {
		char *advice = carveout_advice(name, program_value, library);
		json_object_set_new(e, "advice", json_string(advice));
		free(advice);
	}
	return e;
}

char *carveout_advice(const char *name, int program_value, const char *library)
{
	if (library)
		return xasprintf("%s sets this carve-out (%d) inside its own code for its kernel %s: "
				 "there is no call in your source to change. The measured difference "
				 "is for %s's developers (or another version or algorithm of it); "
				 "cacheadvise cannot apply a carve-out without a rebuild", library,
				 program_value, name, library);
	return xasprintf("remove the cudaFuncSetAttribute(..., "
			 "cudaFuncAttributePreferredSharedMemoryCarveout, %d) call for kernel %s "
			 "(or set it to -1, the driver's default)", program_value, name);
}

json_t *carveout_verdict(const char *name, int program_value, const char *library,
			 const struct carveout_times *t, double max_noise, const char *why_unmeasured)
{
	json_t *v = NULL, *e;
	int kept = 0, noisy = 0;
	char *why;

	if (program_value == CARVEOUT_DEFAULT)
		return entry(name, program_value, library, NULL, 0,
			     "the program sets the driver's default: kept as it is");
	if (t && t->replays && t->nr_program >= 2 && t->nr_default >= 2) {
		size_t n = t->nr_program < t->nr_default ? t->nr_program : t->nr_default;

		v = ab_verdict_judge(t->program, t->deflt, (unsigned)n, 1, NULL, &kept);
		json_object_set_new(v, "method", json_string("in-run, replays of one launch"));
	} else if (t && !t->replays && t->nr_program / 2 >= 3 && t->nr_default / 2 >= 3) {
		v = ab_verdict_abba(t->program, t->nr_program, t->deflt, t->nr_default, 1, NULL,
				    max_noise, &kept, &noisy);
		if (noisy)
			return entry(name, program_value, library, v, 0, "its launches differ too much to be "
				     "compared in-run: the program's setting is kept, not judged");
	}
	if (!v) {
		why = xasprintf("not measured (%s): the program's setting is kept as it is",
				why_unmeasured ? why_unmeasured :
				"too few launches were timed with each setting");
		e = entry(name, program_value, library, NULL, 0, why);
		free(why);
		return e;
	}
	if (kept) {
		why = xasprintf("the driver's default is faster than the program's carve-out %d beyond "
				"the noise", program_value);
	} else {
		double sp = ab_verdict_median(v);
		why = xasprintf("the driver's default is not faster beyond the noise (median speedup "
				"%.3fx): the program's carve-out %d is kept as it is", sp, program_value);
	}
	e = entry(name, program_value, library, v, kept, why);
	free(why);
	return e;
}
