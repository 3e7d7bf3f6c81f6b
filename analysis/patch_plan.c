#include "analysis/patch_plan.h"

#include <string.h>

static int delivered_has(const struct patch_plan_load *d, size_t n, const char *module,
			 const char *function, unsigned ordinal)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (d[i].ordinal == ordinal && !strcmp(d[i].function, function) &&
		    (!d[i].module || !module || !strcmp(d[i].module, module)))
			return 1;
	return 0;
}

size_t patch_plan_from(const struct plan *advice, const struct patch_plan_load *delivered,
		       size_t n, struct plan *out)
{
	size_t m, f, l, left = 0;

	for (m = 0; m < advice->nr_modules; m++) {
		const struct plan_module *pm = &advice->modules[m];

		for (f = 0; f < pm->nr_functions; f++) {
			const struct plan_function *pf = &pm->functions[f];

			for (l = 0; l < pf->nr_loads; l++) {
				const struct plan_load *pl = &pf->loads[l];

				if (delivered_has(delivered, n, pm->id, pf->name, pl->ordinal)) {
					plan_set(out, pm->id, pf->name, pl->ordinal, pl->action);
					plan_set_l2(out, pm->id, pf->name, pl->ordinal, pl->l2);
				} else {
					left++;
				}
			}
		}
	}
	return left;
}
