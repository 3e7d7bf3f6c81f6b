#ifndef CACHEADVISE_STENCIL_DETECT_H
#define CACHEADVISE_STENCIL_DETECT_H

#include <stddef.h>

#include <jansson.h>

#include "analysis/ptx.h"

/*
 * Finds where a warp register cache (device/regcache.cuh,
 * seeds/register-cache-warp-shuffle.ko.txt) could replace global loads:
 * the 1-D stencil shape, i.e. several global loads of one kernel that
 *   - use the same base register (after folding `add R, S, imm` chains),
 *     so they read one data structure through one index chain,
 *   - at small constant byte offsets (ld.global [%rd+OFF]) that are
 *     multiples of the element size, spanning at most 33 elements,
 *   - from a base whose value differs between neighbouring lanes by
 *     exactly one element: the index is tid.x (plus anything uniform
 *     across the warp) times the element size.
 * Neighbouring lanes then read overlapping elements, which is what a warp
 * window of 32 + 2k registers and 2k shuffles per thread replace.
 *
 * The lane-stride analysis reads the function's PTX instructions
 * (mov/cvt/cvta/add/sub/mul/mad/shl/neg and loop-carried registers; every
 * other operation on a lane-varying value makes it unknown). Loads in a
 * loop (a base register with several definitions, as nvcc writes a
 * partially unrolled loop over a run-time k) give only a lower bound on k:
 * `k_exact` is then false.
 */

struct stencil_hint {
	char *function;             /* kernel name */
	int param;                  /* the structure's parameter index, -1 unknown */
	unsigned element_bytes;     /* bytes per element (the load's width) */
	unsigned *ordinals;         /* the loads, ascending */
	long *offsets;              /* each load's byte offset from the lowest */
	size_t nr_loads;
	unsigned points;            /* distinct elements read per thread */
	unsigned span;              /* elements from the lowest to the highest offset */
	unsigned k;                 /* stencil radius: span = 2k + 1 (at least) */
	int k_exact;                /* 0: loads in a loop, k is a lower bound */
	unsigned shuffles_per_thread; /* 2k (element lane + 0 needs none) */
	unsigned loads_after;       /* global loads per thread with the window: 2 */
};

struct stencil_detect {
	struct stencil_hint *hints;
	size_t nr_hints, alloc_hints;
};

void stencil_detect_init(struct stencil_detect *sd);
void stencil_detect_release(struct stencil_detect *sd);

/*
 * Appends to sd a hint for every kernel (.entry) of m, and data structure
 * in it, that has the stencil shape. Returns 0 (finding nothing is not an
 * error), or CA_E_INPUT when a function's body cannot be read.
 */
int stencil_detect_run(struct stencil_detect *sd, const struct ptx_module *m);

/*
 * The hints as a JSON array (new reference, caller owns), one object each:
 *   {"kernel": "_Z7stencilPKiPii", "param": 0, "element_bytes": 4,
 *    "loads": [0, 1, 2], "offsets_bytes": [0, 4, 8], "points": 3,
 *    "span": 3, "k": 1, "k_exact": true, "shuffles_per_thread": 2,
 *    "global_loads_per_thread": {"before": 3, "after": 2},
 *    "helper": "regcache::window<T, 1>"}
 */
json_t *stencil_detect_to_json(const struct stencil_detect *sd);

#endif
