#ifndef CACHEADVISE_LOAD_SITES_H
#define CACHEADVISE_LOAD_SITES_H

#include <stddef.h>

#include "analysis/capture_model.h"
#include "analysis/graph.h"
#include "analysis/multi_choice.h"
#include "analysis/ptx.h"

/*
 * Source sites that are one decision (issue 27, "Load sites"; issue 38,
 * "Plans a source can carry"): one source expression compiles to several
 * PTX loads, and its source can carry only one form for them all. A
 * Triton tl.load of a block gives vector chunks and predicated halves, all
 * with the .loc of the call, and the user can only set eviction_policy=
 * and cache_modifier= on the call; a CUDA C++ expression in a loop the
 * compiler unrolled gives a copy per iteration, and the source patch
 * rewrites the expression once. So the analysis decides per site: the
 * loads of one site are merged into one item before solving, and the
 * answer is given to each of them.
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
 * column share a site (one tl.load call, wherever its function was
 * inlined). Loads of any other source (CUDA C++) share a site when they
 * have the same file, line and column, read through the same kernel
 * parameter (the column CUDA's .loc gives is the statement's, so x[c] and
 * w[c] on one line differ only by it) and were inlined at the same chain
 * of calls (capture_load.inlined_at): the copies an unrolled loop makes
 * of one expression are one site, a helper's load inlined at two calls
 * two sites, which the source patch can give different forms. A load
 * without a file, a line or a column, a CUDA load whose parameter is not
 * known, and an ordinal that is no load of k are sites of their own.
 * Returns the number of sites (n when nothing merges).
 *
 * A capture written before loads recorded inlined_at reads as if none was
 * inlined: a helper's load at two calls is then one site, one form for
 * the helper.
 */
size_t load_sites_group(const struct capture_kernel *k, const unsigned *ordinals, size_t n,
			size_t *group);

/* The same for loads of a PTX function (the profile, before any capture):
 * by the .loc, param and inlined_at of fn->loads[ordinals[i]]. */
size_t load_sites_group_ptx(const struct ptx_function *fn, const unsigned *ordinals, size_t n,
			    size_t *group);

/* Whether a source file is Python (".py": a Triton kernel's), whose sites
 * are tl.load calls. */
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
 * the first member's id). out must be freshly initialised. A site's
 * weight counts the hits its members share once (a spanning tree of their
 * overlaps, not every pair), and the edges its overlapping members have
 * alike count once (docs/model.md "Sites"); where no two members share
 * hits it is the per-load graph's objective exactly. */
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
