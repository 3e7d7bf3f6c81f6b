#ifndef CACHEADVISE_ANALYSIS_CAPTURE_COST_H
#define CACHEADVISE_ANALYSIS_CAPTURE_COST_H

/*
 * What a profile cost (issue 15: "capture.json and the report state the
 * program runs, the launches counted, the wall time, and the ratio to
 * native"), computed from the capture alone, so that a capture read back
 * gives the same figures (docs/capture-json.md "cost").
 */

#include "analysis/capture_model.h"

/*
 * The step a run of capture.json belongs to, from its "variant":
 * "discover", "monitor", "capture" (in-run passes; all_bypassed, single and
 * pair with --measure runs), "baseline", "verify" (verify-*), "l2" (l2-*),
 * "oracle" (oracle*), or "other". Never NULL.
 */
const char *capture_cost_step(const char *variant);

/*
 * The cost of the capture so far, wall_seconds being the profile's elapsed
 * time (cost->source is NULL: write it with capture_cost_to_json()):
 *   program_runs      runs[] recorded
 *   runs_by_step      per capture_steps[], the runs of that step (capture_cost_step)
 *   seconds_by_step   per step, the wall seconds of its runs; NAN none
 *   launches_counted  launches whose cache counters were read: the sampled
 *                     launches and replays of every in-run variant
 *                     (measure.kernels.*.variants.*.samples) plus, for the
 *                     runs with counters of --measure runs (baseline,
 *                     all_bypassed, single, pair), every launch of the
 *                     measured kernels (their baseline counters' launches)
 *   wall_seconds      as given
 *   native_seconds    the discovery run's wall_seconds, NAN without one
 *   ratio             (wall_seconds less the rebuild step's seconds) /
 *                     native_seconds, NAN without native: the profile's own
 *                     cost, the rebuild from source.patch apart
 *   mechanism_seconds the runs' cost by mechanism (the runs' "cost"), with
 *                     program_seconds and tool_seconds (capture_model.h);
 *                     has_mechanisms when a run has one
 */
void capture_cost_compute(const struct capture *cap, double wall_seconds,
			  struct capture_cost *cost);

#endif
