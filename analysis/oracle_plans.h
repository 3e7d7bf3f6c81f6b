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
#include "analysis/ptx.h"

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
 * The L2 oracle (with --l2-priority): for a kernel whose L2 priorities were
 * measured, every choice of a form per measured load, the L1 side as the
 * advice has it. A load takes digit d of plan p in base 1 + nr_forms: 0
 * the advice's L1 action and no L2 priority, d > 0 forms[d - 1] (an L2
 * priority, with the advice's L1 action, or a form with an L1 part of its
 * own: Triton's). Plan 0 is the advice's L1 alone.
 *
 * allowed (may be NULL: every digit) restricts site s to the digits whose
 * bit is set in allowed[s] (bit 0, the advice's L1 alone, always is): a
 * form a site is built in already is not measured, and a plan giving it
 * that form is the plan without it. Plans are then numbered in the mixed
 * radix of the sites' allowed digits.
 */
struct oracle_l2_form {
	enum load_action action;    /* LOAD_ACTION_AS_BUILT: the advice's L1 action */
	enum l2_priority l2;
};

/* The product over the n sites of their allowed digits ((1 + nr_forms)^n
 * without allowed), or 0 when that exceeds max_plans (or n is 0). */
size_t oracle_l2_plan_count(size_t n, size_t nr_forms, const unsigned *allowed,
			    size_t max_plans);
/* Site b's digit in plan p: 0 as advised in L1, d > 0 form d - 1. */
unsigned oracle_l2_digit(size_t p, size_t b, size_t nr_forms, const unsigned *allowed);
/*
 * Adds plan p (p < oracle_l2_plan_count(nr_sites, ...)) of one kernel to
 * plan: each measured[b] (b < n) with l1[b] (the advice's L1 action,
 * LOAD_ACTION_AS_BUILT for none) and the form of its site's digit,
 * site[b] < nr_sites (the loads of one source site share a digit:
 * analysis/load_sites.h); site NULL: every load its own (nr_sites = n).
 * Returns 1, or 0 (nothing added) when p is beyond the kernel's plans.
 */
int oracle_l2_plan_add(struct plan *plan, const char *module, const char *fn,
		       const unsigned *measured, const enum load_action *l1, size_t n,
		       const size_t *site, size_t nr_sites, const struct oracle_l2_form *forms,
		       size_t nr_forms, const unsigned *allowed, size_t p);
/* The plan index of digits[0..n) (each <= nr_forms; a digit a site does not
 * allow counts as 0). */
size_t oracle_l2_plan_index(const unsigned *digits, size_t n, size_t nr_forms,
			    const unsigned *allowed);

/*
 * The fastest plan: median_ns[p] for p < nplans (NAN: not measured) against
 * the baseline's median base_ns. Returns the plan with the largest speedup
 * base_ns / median_ns[p] (ties: the lower p) and sets *speedup, or returns
 * 0 with *speedup = -1 when nothing was measured.
 */
size_t oracle_best_plan(const double *median_ns, size_t nplans, double base_ns, double *speedup);

#endif
