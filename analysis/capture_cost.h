#ifndef CACHEADVISE_ANALYSIS_CAPTURE_COST_H
#define CACHEADVISE_ANALYSIS_CAPTURE_COST_H

/*
 * What a profile cost (issue 15: "capture.json and the report state the
 * program runs, the launches counted, the wall time, and the ratio to
 * native"), computed from the capture document alone, so that a capture
 * read back gives the same figures (docs/capture-json.md "cost").
 *
 *     json_object_set_new(capture, "cost", capture_cost_json(capture, elapsed));
 */

#include <jansson.h>

/*
 * The step a run of capture.json belongs to, from its "variant":
 * "discover", "monitor", "capture" (in-run passes; all_bypassed, single and
 * pair with --measure runs), "baseline", "verify" (verify-*), "l2" (l2-*),
 * "oracle" (oracle*), or "other". Never NULL.
 */
const char *capture_cost_step(const char *variant);

/*
 * A new "cost" object for the capture document so far, wall_seconds being
 * the profile's elapsed time:
 *   program_runs      runs[] recorded
 *   runs_by_step      step -> runs (capture_cost_step), steps with none left out
 *   seconds_by_step   step -> the wall seconds of its runs
 *   launches_counted  launches whose cache counters were read: the sampled
 *                     launches and replays of every in-run variant
 *                     (measure.kernels.*.variants.*.samples) plus, for the
 *                     runs with counters of --measure runs (baseline,
 *                     all_bypassed, single, pair), every launch of the
 *                     measured kernels (their baseline counters' launches)
 *   wall_seconds      as given
 *   native_seconds    the discovery run's wall_seconds, null without one
 *   ratio             wall_seconds / native_seconds, null without native
 * Never NULL; the caller owns the reference.
 */
json_t *capture_cost_json(json_t *capture, double wall_seconds);

#endif
