/* The profile's time budget (analysis/budget.h). */
#include "analysis/budget.h"

#include <math.h>

double budget_limit_seconds(double factor, double native_seconds)
{
	if (!(factor > 0) || !(native_seconds > 0) || !isfinite(native_seconds))
		return INFINITY;
	return fmax(factor * native_seconds, BUDGET_MIN_SECONDS);
}

double budget_estimate_seconds(unsigned runs, double run_seconds)
{
	if (!(run_seconds > 0) || !isfinite(run_seconds))
		return 0;
	return runs * run_seconds;
}

int budget_allows(double limit, double spent, double estimate)
{
	return !(spent + estimate > limit);
}
