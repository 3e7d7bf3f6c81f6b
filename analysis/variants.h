#ifndef CACHEADVISE_VARIANTS_H
#define CACHEADVISE_VARIANTS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/plan.h"

/*
 * The capture schedule (DESIGN.md "Capture"): which loads allocate in L1 in
 * each variant run. Every measured kernel gets its own variant in the same
 * run, so the runs needed are baselines + 1 (all bypassed) + max N + max
 * pairs, not a sum over kernels. In a variant, the loads of the set S keep
 * their original weak form and every other patchable load of the kernel is
 * L1::no_allocate, so hit_S = the kernel's L1 sector hits.
 */

enum variant_kind {
	VARIANT_BASELINE,       /* unpatched PTX, loaded through the same path */
	VARIANT_ALL_BYPASSED,   /* S = {} */
	VARIANT_SINGLE,         /* S = {i} */
	VARIANT_PAIR,           /* S = {i, j} */
};

struct variant_kernel {
	char *module_id;
	char *function;
	unsigned *measured;     /* ordinals of the measured loads (the nodes), text order */
	size_t nr_measured;
	unsigned *patchable;    /* ordinals of every patchable load of the function */
	size_t nr_patchable;
};

struct variant_run {
	enum variant_kind kind;
	unsigned index;         /* i for SINGLE, pair number for PAIR, repeat for BASELINE */
};

/* Number of pairs among n loads. */
static inline size_t variant_nr_pairs(size_t n)
{
	return n * (n - (n > 0)) / 2;
}
/* Pair number p (0-based, lexicographic (0,1), (0,2), ...) to node indices i < j. */
void variant_pair(size_t n, size_t p, size_t *i, size_t *j);

/*
 * The runs for the kernels, in order: baselines, all-bypassed, singles,
 * pairs. Returns the count; *runs is a new array (caller frees).
 */
size_t variants_schedule(const struct variant_kernel *ks, size_t nr, unsigned baselines,
			 struct variant_run **runs);
const char *variant_kind_name(enum variant_kind k);

/*
 * The node indices (into k->measured) that allocate in run r, written to
 * nodes[0..1]. Returns how many (0, 1 or 2), or -1 when the run has no
 * variant for this kernel (its N or pair count is smaller): the kernel then
 * runs all-bypassed and the run's numbers for it are not used.
 */
int variant_nodes(const struct variant_kernel *k, const struct variant_run *r, size_t nodes[2]);

/*
 * Adds the run's edits for kernel k to plan: every patchable load not
 * allocating gets the bypass action (L1::no_allocate by default;
 * "bypass" (.cg) only to reproduce the seed). A baseline adds nothing.
 */
void variant_add_to_plan(const struct variant_kernel *k, const struct variant_run *r,
			 enum load_action bypass, struct plan *plan);
/* The same for a set of measured loads given as a mask (bit b: node b
 * allocates; in-run capture's variants, analysis/launch_sampling.h). */
void variant_add_mask_to_plan(const struct variant_kernel *k, uint64_t mask,
			      enum load_action bypass, struct plan *plan);

#endif
