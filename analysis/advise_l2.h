#ifndef CACHEADVISE_ADVISE_L2_H
#define CACHEADVISE_ADVISE_L2_H

/*
 * The L2 eviction priorities of one kernel, the second problem of the
 * analysis (analysis/advise.c solves the L1 one first; docs/model.md
 * "Several forms per load", "Pairs not measured", "Close calls"): from
 * the kernel's "l2_priority" measurements, the exact choice (bnb) goes
 * into plan beside the L1 decision, and into source_plan (when not NULL)
 * the choice among the forms each load's source can write. ak receives
 * the method, the DRAM bytes saved, each load's priority and the close
 * calls. Returns 0 or a CA_E_* code with the error set.
 */

#include "analysis/advise.h"

struct capture_kernel;
struct plan;

int advise_l2_priorities(const struct capture_kernel *ck, const struct advise_options *opt,
			 struct plan *plan, struct plan *source_plan, struct analysis_kernel *ak);

#endif
