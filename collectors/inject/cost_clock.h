#ifndef CACHEADVISE_COLLECTORS_INJECT_COST_CLOCK_H
#define CACHEADVISE_COLLECTORS_INJECT_COST_CLOCK_H

/*
 * Where a measured run's time goes inside the program's process (issue 39
 * item 1): the injection library's own work, by mechanism, exclusive (a
 * mechanism entered inside another is subtracted from the outer one). The
 * `cost` event at exit carries the sums (docs/injection.md "Events").
 *
 *   cost_clock_start()           at InitializeInjection: the process's clock
 *   t = cost_clock_enter(M) ... cost_clock_leave(t)
 *                                around one piece of mechanism M's work, on
 *                                any thread (nesting is per thread)
 *   cost_clock_json()            {"injected_seconds": since the start,
 *                                 "seconds": {mechanism: seconds, ...}}
 *
 * The mechanisms are base/run_cost.h's, which the capture's per-run
 * "cost" names too.
 */

#include <jansson.h>

#include "base/run_cost.h"

struct cost_clock_token {
	int outer;                  /* the mechanism it interrupted, -1 none */
};

void cost_clock_start(void);
struct cost_clock_token cost_clock_enter(enum run_cost_mechanism m);
void cost_clock_leave(struct cost_clock_token t);
json_t *cost_clock_json(void);

#endif
