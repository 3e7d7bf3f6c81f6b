#include "analysis/plan_query.h"

#include <string.h>

/* The plan's entry for a load, NULL when it has none. */
static const struct plan_load *plan_load_of(const struct plan *p, const char *module,
					    const char *fn, unsigned ordinal)
{
	size_t m, f, l;

	for (m = 0; m < p->nr_modules; m++) {
		if (p->modules[m].id && strcmp(p->modules[m].id, module))
			continue;
		for (f = 0; f < p->modules[m].nr_functions; f++) {
			const struct plan_function *pf = &p->modules[m].functions[f];
			if (strcmp(pf->name, fn))
				continue;
			for (l = 0; l < pf->nr_loads; l++)
				if (pf->loads[l].ordinal == ordinal)
					return &pf->loads[l];
		}
	}
	return NULL;
}

int plan_action(const struct plan *p, const char *module, const char *fn, unsigned ordinal)
{
	const struct plan_load *l = plan_load_of(p, module, fn, ordinal);

	return l ? (int)l->action : -1;
}

int plan_l2(const struct plan *p, const char *module, const char *fn, unsigned ordinal)
{
	const struct plan_load *l = plan_load_of(p, module, fn, ordinal);

	return l ? (int)l->l2 : -1;
}

int plan_action_bypasses(int action)
{
	return action == LOAD_ACTION_NO_ALLOCATE || action == LOAD_ACTION_BYPASS;
}

int plan_has_l2(const struct plan *p)
{
	size_t m, f, l;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++)
			for (l = 0; l < p->modules[m].functions[f].nr_loads; l++)
				if (p->modules[m].functions[f].loads[l].l2 != L2_PRIORITY_NONE)
					return 1;
	return 0;
}

int plan_has_loads(const struct plan *p)
{
	size_t m, f;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++)
			if (p->modules[m].functions[f].nr_loads)
				return 1;
	return 0;
}

int plan_mentions(const struct plan *p, const char *fn)
{
	size_t m, f;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++)
			if (!strcmp(p->modules[m].functions[f].name, fn) &&
			    p->modules[m].functions[f].nr_loads)
				return 1;
	return 0;
}

/* The entry for a load under exactly that module id (NULL: the entries
 * without one), or NULL. */
static const struct plan_load *entry_of(const struct plan *p, const char *id, const char *fn,
					unsigned ordinal)
{
	size_t m, f, l;

	for (m = 0; m < p->nr_modules; m++) {
		const struct plan_module *pm = &p->modules[m];

		if (!id != !pm->id || (id && strcmp(id, pm->id)))
			continue;
		for (f = 0; f < pm->nr_functions; f++) {
			const struct plan_function *pf = &pm->functions[f];

			if (strcmp(pf->name, fn))
				continue;
			for (l = 0; l < pf->nr_loads; l++)
				if (pf->loads[l].ordinal == ordinal)
					return &pf->loads[l];
		}
	}
	return NULL;
}

/* How many entries of a b gives the same (every entry of a when fn is NULL). */
static size_t entries_in(const struct plan *a, const struct plan *b, const char *fn,
			 size_t *total)
{
	size_t m, f, l, same = 0;

	*total = 0;
	for (m = 0; m < a->nr_modules; m++) {
		const struct plan_module *pm = &a->modules[m];

		for (f = 0; f < pm->nr_functions; f++) {
			const struct plan_function *pf = &pm->functions[f];

			if (fn && strcmp(pf->name, fn))
				continue;
			for (l = 0; l < pf->nr_loads; l++) {
				const struct plan_load *o = entry_of(b, pm->id, pf->name,
								     pf->loads[l].ordinal);

				same += o && o->action == pf->loads[l].action &&
					o->l2 == pf->loads[l].l2;
				(*total)++;
			}
		}
	}
	return same;
}

int plan_same_loads(const struct plan *a, const struct plan *b, const char *fn)
{
	size_t na, nb;

	return entries_in(a, b, fn, &na) == na && entries_in(b, a, fn, &nb) == nb && na == nb;
}

void plan_drop_function(struct plan *p, const char *fn)
{
	size_t m, f;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++)
			if (!strcmp(p->modules[m].functions[f].name, fn))
				p->modules[m].functions[f].nr_loads = 0;
}

unsigned long long plan_cached_mask(const struct plan *p, const char *module, const char *fn,
				    const unsigned *measured, size_t n)
{
	unsigned long long mask = 0;
	size_t b;

	for (b = 0; b < n && b < 64; b++)
		if (!plan_action_bypasses(plan_action(p, module, fn, measured[b])))
			mask |= 1ull << b;
	return mask;
}
