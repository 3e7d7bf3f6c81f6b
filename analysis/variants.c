#include "analysis/variants.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/xalloc.h"

void variant_pair(size_t n, size_t p, size_t *i, size_t *j)
{
	size_t a;

	for (a = 0; a + 1 < n; a++) {
		size_t row = n - 1 - a;
		if (p < row) {
			*i = a;
			*j = a + 1 + p;
			return;
		}
		p -= row;
	}
	*i = *j = 0;
}

const char *variant_kind_name(enum variant_kind k)
{
	switch (k) {
	case VARIANT_BASELINE: return "baseline";
	case VARIANT_ALL_BYPASSED: return "all_bypassed";
	case VARIANT_SINGLE: return "single";
	case VARIANT_PAIR: return "pair";
	}
	return "?";
}

size_t variants_schedule(const struct variant_kernel *ks, size_t nr, unsigned baselines,
			 struct variant_run **runs)
{
	size_t max_n = 0, max_pairs = 0, i, n = 0, total;

	for (i = 0; i < nr; i++) {
		if (ks[i].nr_measured > max_n)
			max_n = ks[i].nr_measured;
		if (variant_nr_pairs(ks[i].nr_measured) > max_pairs)
			max_pairs = variant_nr_pairs(ks[i].nr_measured);
	}
	total = baselines + 1 + max_n + max_pairs;
	*runs = xcalloc(total, sizeof(**runs));
	for (i = 0; i < baselines; i++)
		(*runs)[n++] = (struct variant_run){ VARIANT_BASELINE, (unsigned)i };
	(*runs)[n++] = (struct variant_run){ VARIANT_ALL_BYPASSED, 0 };
	for (i = 0; i < max_n; i++)
		(*runs)[n++] = (struct variant_run){ VARIANT_SINGLE, (unsigned)i };
	for (i = 0; i < max_pairs; i++)
		(*runs)[n++] = (struct variant_run){ VARIANT_PAIR, (unsigned)i };
	return n;
}

int variant_nodes(const struct variant_kernel *k, const struct variant_run *r, size_t nodes[2])
{
	switch (r->kind) {
	case VARIANT_BASELINE:
	case VARIANT_ALL_BYPASSED:
		return 0;
	case VARIANT_SINGLE:
		if (r->index >= k->nr_measured)
			return -1;
		nodes[0] = r->index;
		return 1;
	case VARIANT_PAIR:
		if (r->index >= variant_nr_pairs(k->nr_measured))
			return -1;
		variant_pair(k->nr_measured, r->index, &nodes[0], &nodes[1]);
		return 2;
	}
	return -1;
}

void variant_add_to_plan(const struct variant_kernel *k, const struct variant_run *r,
			 enum load_action bypass, struct plan *plan)
{
	size_t nodes[2];
	uint64_t mask = 0;
	int n, a;

	if (r->kind == VARIANT_BASELINE)
		return;
	n = variant_nodes(k, r, nodes);
	for (a = 0; a < n; a++)
		mask |= (uint64_t)1 << nodes[a];
	variant_add_mask_to_plan(k, mask, bypass, plan);
}

void variant_add_mask_to_plan(const struct variant_kernel *k, uint64_t mask,
			      enum load_action bypass, struct plan *plan)
{
	size_t i, b;

	for (i = 0; i < k->nr_patchable; i++) {
		int allocates = 0;
		for (b = 0; b < k->nr_measured && b < 64; b++)
			if (k->measured[b] == k->patchable[i] && (mask >> b) & 1)
				allocates = 1;
		if (!allocates)
			plan_set(plan, k->module_id, k->function, k->patchable[i], bypass);
	}
}
