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

size_t oracle_l2_plan_count(size_t n, size_t nr_forms, size_t max_plans)
{
	size_t count = 1, b;

	if (!n)
		return 0;
	for (b = 0; b < n; b++) {
		if (count > max_plans / (1 + nr_forms))
			return 0;
		count *= 1 + nr_forms;
	}
	return count <= max_plans ? count : 0;
}

unsigned oracle_l2_digit(size_t p, size_t b, size_t nr_forms)
{
	while (b--)
		p /= 1 + nr_forms;
	return (unsigned)(p % (1 + nr_forms));
}

int oracle_l2_plan_add(struct plan *plan, const char *module, const char *fn,
		       const unsigned *measured, const enum load_action *l1, size_t n,
		       const size_t *site, size_t nr_sites, const struct oracle_l2_form *forms,
		       size_t nr_forms, size_t p)
{
	size_t count, b;

	if (!site)
		nr_sites = n;
	count = oracle_l2_plan_count(nr_sites, nr_forms, (size_t)-1);
	if (!count || p >= count)
		return 0;
	for (b = 0; b < n; b++) {
		unsigned d = oracle_l2_digit(p, site ? site[b] : b, nr_forms);
		enum load_action a = l1[b];

		if (d && forms[d - 1].action != LOAD_ACTION_AS_BUILT)
			a = forms[d - 1].action;
		if (a != LOAD_ACTION_AS_BUILT)
			plan_set(plan, module, fn, measured[b], a);
		if (d)
			plan_set_l2(plan, module, fn, measured[b], forms[d - 1].l2);
	}
	return 1;
}

size_t oracle_l2_plan_index(const unsigned *digits, size_t n, size_t nr_forms)
{
	size_t p = 0, b = n;

	while (b--)
		p = p * (1 + nr_forms) + digits[b];
	return p;
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
