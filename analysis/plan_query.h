#ifndef CACHEADVISE_PLAN_QUERY_H
#define CACHEADVISE_PLAN_QUERY_H

/*
 * Questions asked of a plan (analysis/plan.h) while `profile` verifies and
 * times it, and the one edit verification makes: dropping the advice of a
 * kernel whose advice was rejected.
 */

#include "analysis/plan.h"

/* The action the plan gives load ordinal of function fn in module (an
 * entry without an id matches every module), or -1 when it has none. */
int plan_action(const struct plan *p, const char *module, const char *fn, unsigned ordinal);

/* The L2 priority the plan gives that load (L2_PRIORITY_NONE: as built),
 * or -1 when it has no entry for it. */
int plan_l2(const struct plan *p, const char *module, const char *fn, unsigned ordinal);
/* Whether an action keeps the load out of L1 (no_allocate or .cg). */
int plan_action_bypasses(int action);

/* 1 when the plan gives some load an L2 priority, else 0. */
int plan_has_l2(const struct plan *p);
/* 1 when some function of the plan changes a load, else 0. */
int plan_has_loads(const struct plan *p);

/* 1 when the plan changes a load of function fn (in any module), else 0. */
int plan_mentions(const struct plan *p, const char *fn);

/* 1 when a and b give function fn (NULL: every function) the same loads,
 * entry for entry (module id, ordinal, action, L2 priority), else 0. */
int plan_same_loads(const struct plan *a, const struct plan *b, const char *fn);

/* Removes every load of function fn from the plan, in every module. */
void plan_drop_function(struct plan *p, const char *fn);

/*
 * The advice for a kernel as a bit mask over its measured loads
 * (measured[0..n), n <= 64): bit b set when the plan leaves measured[b]
 * allocating in L1 (cached), clear when it bypasses it.
 */
unsigned long long plan_cached_mask(const struct plan *p, const char *module, const char *fn,
				    const unsigned *measured, size_t n);

#endif
