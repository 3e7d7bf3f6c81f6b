#include "analysis/oracle_plans.h"

#include <math.h>

size_t oracle_plan_count(unsigned max_n)
{
	return max_n ? (size_t)1 << max_n : 0;
}

int oracle_plan_add(struct plan *plan, const char *module, const char *fn,
		    const unsigned *measured, size_t n, size_t p)
{
	size_t b;

	if (n >= sizeof(size_t) * 8 || p >= ((size_t)1 << n))
		return 0;
	for (b = 0; b < n; b++)
		if (!(p & ((size_t)1 << b)))
			plan_set(plan, module, fn, measured[b], LOAD_ACTION_NO_ALLOCATE);
	return 1;
}

size_t oracle_best_plan(const double *median_ns, size_t nplans, double base_ns, double *speedup)
{
	size_t p, best = 0;

	*speedup = -1;
	for (p = 0; p < nplans; p++) {
		double m = median_ns[p];
		if (!isnan(m) && !isnan(base_ns) && base_ns / m > *speedup) {
			*speedup = base_ns / m;
			best = p;
		}
	}
	return best;
}
