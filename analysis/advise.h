#ifndef CACHEADVISE_ADVISE_H
#define CACHEADVISE_ADVISE_H

#include <jansson.h>

#include "analysis/capture_model.h"
#include "analysis/plan.h"

/*
 * From a capture (capture.json, docs/capture-json.md) to advice: for every
 * measured kernel the traffic reduction graph (sector or classic model,
 * DESIGN.md "The model"), every solver's answer, the chosen plan and the
 * per-load decisions with the numbers behind them.
 */
enum advise_model {
	ADVISE_MODEL_SECTOR,
	ADVISE_MODEL_CLASSIC,
};

struct advise_options {
	enum advise_model model;
	const char *method;         /* solver whose answer becomes the plan: "bnb" default,
				       the exact method that proves fastest at every size
				       bench/results/solve.md measures */
	size_t exhaustive_max_n;    /* exhaustive search runs on kernels with at most this
				       many nodes (default 20) */
	size_t ilp_max_n;           /* the ILP runs, as a cross-check, on kernels with at
				       most this many nodes (default 40, where GLPK proves
				       dense graphs in about a second), and always when it
				       is the method */
	double time_limit_seconds;  /* per kernel for the ILP and for bnb (default 60;
				       0 = none) */
};

void advise_options_init(struct advise_options *opt);

/*
 * Fills plan with the chosen action for every measured load (cached loads
 * keep their current form: "default" when they had none, nothing in the
 * plan when they already carry a cache operator or L1 eviction priority;
 * bypassed loads get "L1::no_allocate"; ties keep the current form and are
 * left out of the plan) and returns in *analysis a new JSON object (caller
 * owns), documented in docs/analysis-json.md:
 *   {"schema": "cacheadvise.analysis/1", "model": "sector",
 *    "kernels": [{"module": ..., "name": ..., "graph": <graph.json>,
 *       "solutions": [{"method", "cached", "bypassed", "objective", "optimal", "seconds"}],
 *       "chosen": "bnb",
 *       "loads": [{"ordinal", "decision": "cache"|"bypass"|"keep", "action",
 *                  "hit", "access", "hit_rate", "weight_bytes",
 *                  "traffic_saved_bytes"}],
 *       "expected_l2_traffic_saved_bytes": ...}]}
 * The nodes of a kernel's graph are its patchable loads with a measured
 * "hit"; the others are listed under "left_out" with the reason. Every
 * solver that applies runs (exhaustive only up to exhaustive_max_n nodes,
 * the ILP up to ilp_max_n unless it is the method); opt->method's answer
 * becomes the plan (bnb's when exhaustive was asked for but the kernel is
 * too large; "note" says so).
 * cap is the capture as its reader (analysis/capture_model.h) accepted it.
 * Returns 0, CA_E_INPUT (the classic model and a capture without the
 * monitor's counts it needs: the message names the kernel),
 * CA_E_USAGE for an unknown opt->method, or CA_E_INTERNAL when the ILP
 * library fails. On error *analysis is NULL and plan may hold the kernels
 * done so far.
 */
int advise_capture(const struct capture *cap, const struct advise_options *opt,
		   struct plan *plan, json_t **analysis);

/*
 * How many times advise_capture() has run in this process. The analysis
 * (every solver) is the expensive part of emitting; `profile` runs it once
 * and the tests check that emitting does not run it again.
 */
unsigned long advise_capture_count(void);

#endif
