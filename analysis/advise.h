#ifndef CACHEADVISE_ADVISE_H
#define CACHEADVISE_ADVISE_H

#include <jansson.h>

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
	const char *method;         /* solver whose answer becomes the plan: "ilp" default */
};

void advise_options_init(struct advise_options *opt);

/*
 * Fills plan with the chosen action for every measured load (cached loads
 * keep their current form: "default" when they had none; bypassed loads get
 * "L1::no_allocate"; ties keep the current form) and returns in *analysis a
 * new JSON object (caller owns), documented in docs/analysis-json.md:
 *   {"schema": "cacheadvise.analysis/1", "model": "sector",
 *    "kernels": [{"module": ..., "name": ..., "graph": <graph.json>,
 *       "solutions": [{"method", "cached", "bypassed", "objective", "optimal", "seconds"}],
 *       "chosen": "ilp",
 *       "loads": [{"ordinal", "decision": "cache"|"bypass"|"keep", "action",
 *                  "hit", "access", "hit_rate", "weight_bytes",
 *                  "traffic_saved_bytes"}],
 *       "expected_l2_traffic_saved_bytes": ...}]}
 * Returns 0 or CA_E_INPUT (a capture missing what the model needs, named).
 */
int advise_capture(json_t *capture, const struct advise_options *opt,
		   struct plan *plan, json_t **analysis);

#endif
