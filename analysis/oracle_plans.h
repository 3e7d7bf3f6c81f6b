#ifndef CACHEADVISE_ORACLE_PLANS_H
#define CACHEADVISE_ORACLE_PLANS_H

/*
 * `profile --oracle N`: every plan of a kernel with at most N measured
 * loads. Plan p is a bit mask over the kernel's measured loads: bit b set
 * means measured load b keeps its form (cached), clear means it gets
 * L1::no_allocate. Plan 0 bypasses them all; plan 2^n - 1 is the baseline's
 * form. One program run times plan p of every kernel at once, so a kernel
 * with n loads takes part in runs p < 2^n only.
 */

#include <stddef.h>

#include "analysis/plan.h"

/* Plans to time for the kernels: 2^max_n. 0 when max_n is 0. */
size_t oracle_plan_count(unsigned max_n);

/*
 * Adds plan p of one kernel (module, fn, measured[0..n)) to plan. Returns
 * 1 when the kernel takes part in plan p (p < 2^n), else 0 and adds
 * nothing.
 */
int oracle_plan_add(struct plan *plan, const char *module, const char *fn,
		    const unsigned *measured, size_t n, size_t p);

/*
 * The fastest plan: median_ns[p] for p < nplans (NAN: not measured) against
 * the baseline's median base_ns. Returns the plan with the largest speedup
 * base_ns / median_ns[p] (ties: the lower p) and sets *speedup, or returns
 * 0 with *speedup = -1 when nothing was measured.
 */
size_t oracle_best_plan(const double *median_ns, size_t nplans, double base_ns, double *speedup);

#endif
