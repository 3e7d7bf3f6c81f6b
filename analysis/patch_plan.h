#ifndef CACHEADVISE_PATCH_PLAN_H
#define CACHEADVISE_PATCH_PLAN_H

#include <stddef.h>

#include "analysis/plan.h"

/*
 * The plan a source patch delivers (DESIGN.md "Keeping advice": the source
 * patch is verified as its own plan). The advice asks an action of some
 * loads; the patch rewrites only some of them (emitters/rewrite/source_hints.h
 * says which). A program rebuilt from the patched sources runs the advice's
 * entries for those loads and the original form of every other load: that
 * is the patch's plan, which verification times like the advice.
 */

/* A load whose advice the patch delivers: rewritten in source, or an
 * entry that changes nothing. module NULL: any module. */
struct patch_plan_load {
	const char *module;
	const char *function;
	unsigned ordinal;
};

/*
 * Fills out (plan_init'd by the caller; released by the caller) with the
 * entries of advice whose load is listed in delivered (n of them), in the
 * advice's order; advice's other sections (L2 windows, ...) are not part of
 * it. Returns the number of advice entries left out: 0 means the patch's
 * plan is the advice, and need not be timed again.
 */
size_t patch_plan_from(const struct plan *advice, const struct patch_plan_load *delivered,
		       size_t n, struct plan *out);

#endif
