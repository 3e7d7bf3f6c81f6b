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

/* Site b's allowed digits as a mask (bit 0 always). */
static unsigned site_mask(size_t b, size_t nr_forms, const unsigned *allowed)
{
	unsigned all = nr_forms >= 31 ? ~0u : (2u << nr_forms) - 1;

	return ((allowed ? allowed[b] : all) & all) | 1u;
}

static unsigned popcount(unsigned m)
{
	unsigned n = 0;

	for (; m; m &= m - 1)
		n++;
	return n;
}

size_t oracle_l2_plan_count(size_t n, size_t nr_forms, const unsigned *allowed,
			    size_t max_plans)
{
	size_t count = 1, b;

	if (!n)
		return 0;
	for (b = 0; b < n; b++) {
		size_t radix = popcount(site_mask(b, nr_forms, allowed));

		if (count > max_plans / radix)
			return 0;
		count *= radix;
	}
	return count <= max_plans ? count : 0;
}

unsigned oracle_l2_digit(size_t p, size_t b, size_t nr_forms, const unsigned *allowed)
{
	size_t s;
	unsigned m, k, d;

	for (s = 0; s < b; s++)
		p /= popcount(site_mask(s, nr_forms, allowed));
	m = site_mask(b, nr_forms, allowed);
	k = (unsigned)(p % popcount(m));
	for (d = 0; d < 32; d++)        /* the k-th allowed digit */
		if (m >> d & 1 && !k--)
			return d;
	return 0;
}

int oracle_l2_plan_add(struct plan *plan, const char *module, const char *fn,
		       const unsigned *measured, const enum load_action *l1, size_t n,
		       const size_t *site, size_t nr_sites, const struct oracle_l2_form *forms,
		       size_t nr_forms, const unsigned *allowed, size_t p)
{
	size_t count, b;

	if (!site)
		nr_sites = n;
	count = oracle_l2_plan_count(nr_sites, nr_forms, allowed, (size_t)-1);
	if (!count || p >= count)
		return 0;
	for (b = 0; b < n; b++) {
		unsigned d = oracle_l2_digit(p, site ? site[b] : b, nr_forms, allowed);
		enum load_action a = l1[b];

		if (d && forms[d - 1].action != LOAD_ACTION_AS_BUILT)
			a = forms[d - 1].action;
		if (a != LOAD_ACTION_AS_BUILT)
			plan_set(plan, module, fn, measured[b], a);
		if (d && forms[d - 1].l2 != L2_PRIORITY_NONE)
			plan_set_l2(plan, module, fn, measured[b], forms[d - 1].l2);
	}
	return 1;
}

size_t oracle_l2_plan_index(const unsigned *digits, size_t n, size_t nr_forms,
			    const unsigned *allowed)
{
	size_t p = 0, b = n;

	while (b--) {
		unsigned m = site_mask(b, nr_forms, allowed), d = digits[b];
		unsigned rank = d < 32 && m >> d & 1 ? popcount(m & ((1u << d) - 1)) : 0;

		p = p * popcount(m) + rank;
	}
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
