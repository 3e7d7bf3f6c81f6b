#ifndef CACHEADVISE_INJECT_LAUNCH_PLAN_H
#define CACHEADVISE_INJECT_LAUNCH_PLAN_H

/*
 * Launch plans (issue 15, docs/injection.md "Launch plans"): what the CLI
 * asks the injection library to do at chosen launches of chosen kernels,
 * so that many variants are measured inside one program run. The CLI
 * decides everything (which launches, which masks, which versions, whether
 * memory may be saved and restored); this file only carries it out.
 *
 * At a sampled launch of a kernel with "variants" the library waits for
 * the device, saves the allocations behind the kernel's written pointer
 * parameters, and for each variant writes the kernel's mask
 * (analysis/ptx_switch.h) and launches the kernel itself under the range
 * profiler, restoring the saved memory after each; then it writes the
 * default mask back and the program's own launch runs, unprofiled. Where
 * memory cannot be saved (too large, or a written parameter that is not a
 * known allocation) only the launch's first variant is measured, on the
 * program's own launch, and a "replay_refused" event says why.
 *
 * At a launch of a kernel with "versions" (verification), the program's
 * launch runs the version the plan's pattern names for its ordinal; at a
 * launch listed under "replay_rounds" the versions are also replayed
 * alternately, each timed with CUDA events, with memory restored.
 *
 * At a launch of a kernel with "carveout" (issue 18), the launch runs with
 * the preferred L1/shared carve-out the plan's pattern names for its
 * ordinal (the program's own value or the driver's default), set on the
 * launch's function just before it and put back to what it was just
 * after; at its "replay_rounds" the launch is also replayed with each
 * setting alternately, timed with CUDA events, memory restored.
 *
 * Not thread-safe: inject.c holds its lock and marks the library's own
 * driver calls.
 */

#include <stdint.h>

#include <cuda.h>

#include "collectors/inject/alloc_table.h"
#include "collectors/inject/module_table.h"

struct range_metrics;
struct launch_plan;

/* One launch as the program made it. f may be rewritten (versions). */
struct launch_info {
	const char *kernel;
	uint64_t seq;
	CUfunction *f;              /* the launch's function parameter */
	unsigned grid[3], block[3];
	unsigned shared;
	CUstream stream;
	void **params;
	const CUlaunchConfig *config;   /* cuLaunchKernelEx, else NULL */
};

/* Reads the plan file; NULL with an error event when it is unusable. */
struct launch_plan *launch_plan_load(const char *path);
void launch_plan_free(struct launch_plan *p);

/* Whether the plan profiles launches of kernel (the range profiler must
 * then exist, in per-launch mode). */
int launch_plan_wants_counters(const struct launch_plan *p, const char *kernel);

/*
 * Before the program's launch li: carries out what the plan asks for it.
 * rm may be NULL when no kernel of the plan wants counters.
 */
void launch_plan_before(struct launch_plan *p, struct module_table *mods,
			const struct alloc_table *allocs, struct range_metrics *rm,
			const struct launch_info *li);
/* After the program's launch li returned. */
void launch_plan_after(struct launch_plan *p, struct range_metrics *rm,
		       const struct launch_info *li);

#endif
