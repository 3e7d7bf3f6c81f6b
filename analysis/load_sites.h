#ifndef CACHEADVISE_LOAD_SITES_H
#define CACHEADVISE_LOAD_SITES_H

#include <stddef.h>

#include "analysis/capture_model.h"
#include "analysis/graph.h"
#include "analysis/multi_choice.h"
#include "analysis/ptx.h"

/*
 * Source sites that are one decision (issue 27, "Load sites"): a Triton
 * tl.load of a block compiles to several PTX loads (vector chunks,
 * predicated halves), all with the .loc of the call, and the user can only
 * set eviction_policy= and cache_modifier= on the call. So the analysis
 * decides per call: the loads of one site are merged into one item before
 * solving, and the answer is given to each of them.
 *
 * The merge is exact for the seed's objective and its several-forms form
 * (docs/model.md): with the loads of a site M all in one form,
 *   W(M)      = sum_{v in M} W(v) + sum_{u < v in M} W(e_uv)
 *   W(e_MN)   = sum_{u in M, v in N} W(e_uv)
 * (and per form, u_M(s) = sum u_v(s) + sum p_uv(s, s); p_MN(s, t) = sum
 * p_uv(s, t)), so the merged problem's objective of a choice is the
 * per-load problem's objective of that choice given to every member.
 */

/*
 * Groups n loads of kernel k (by ordinal) into sites: group[i] is the site
 * of load ordinals[i], numbered from 0 in order of first appearance.
 * Loads of a Python source (".py": Triton) with the same file, line and
 * column share a site; every other load is a site of its own. Returns the
 * number of sites (n when nothing merges).
 */
size_t load_sites_group(const struct capture_kernel *k, const unsigned *ordinals, size_t n,
			size_t *group);

/* The same for loads of a PTX function (the profile, before any capture):
 * by the .loc of fn->loads[ordinals[i]]. */
size_t load_sites_group_ptx(const struct ptx_function *fn, const unsigned *ordinals, size_t n,
			    size_t *group);

/* Whether a source file is one whose loads are decided per site (".py"). */
int load_sites_is_python(const char *file);

/*
 * The forms a tl.load can write (docs/triton.md), the one list of them:
 * eviction_policy="evict_first" or "evict_last" (each sets L1 and L2 at
 * once: "L1::evict_first+L2::evict_first", as Triton compiles it),
 * cache_modifier=".cg" ("bypass") or ".ca" ("cache"), or neither
 * ("default": a plain load). Returns 1 and sets *eviction_policy and
 * *cache_modifier (NULL: the keyword not written; either pointer may be
 * NULL), or 0 when tl.load has no spelling for the form (L1::no_allocate,
 * an L2 priority alone, ...).
 */
int load_sites_triton_form(enum load_action a, enum l2_priority p, const char **eviction_policy,
			   const char **cache_modifier);

/* The graph of nr_sites nodes that merges g's nodes by group (node ids:
 * the first member's id). out must be freshly initialised. */
void load_sites_merge_graph(const struct graph *g, const size_t *group, size_t nr_sites,
			    struct graph *out);

/*
 * The several-forms problem of nr_sites items that merges mc's loads by
 * group, a site taking one form for all its loads. Every load of a site
 * must have the same number of forms (a site whose loads differ takes the
 * fewest). out is initialised here.
 */
void load_sites_merge_choices(const struct multi_choice *mc, const size_t *group,
			      size_t nr_sites, struct multi_choice *out);

#endif
