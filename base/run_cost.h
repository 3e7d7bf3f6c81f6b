#ifndef CACHEADVISE_BASE_RUN_COST_H
#define CACHEADVISE_BASE_RUN_COST_H

/*
 * The mechanisms a measured run's time is split into (issue 39 item 1),
 * named once for the injection library that measures them
 * (collectors/inject/cost_clock.h) and the capture that records them (a
 * run's "cost", capture.json's cost.seconds_by_mechanism):
 *
 *   injection_setup   InitializeInjection: CUPTI callbacks, the plan read
 *   module_reading    identifying each loaded module: hashing, the fatbin's
 *                     PTX found and saved
 *   module_jit        loading a substituted module or a variant module the
 *                     library builds itself: the driver's JIT of the PTX
 *   counter_config    the counters' configuration and counter data images,
 *                     built on the host (NVPW) in each process
 *   counter_setup     the range profiler's other setup: enabling it on the
 *                     context, the counter availability, the sessions
 *   counter_reading   decoding and evaluating the counters of the ranges
 *   replays           replayed launches of variants, versions and carve-outs
 *                     with the memory they write saved and restored
 *   event_writing     the events.jsonl lines
 *
 * What remains of a run's wall time is the program itself (with the
 * callbacks' small per-call cost).
 */

enum run_cost_mechanism {
	RUN_COST_INJECTION_SETUP,
	RUN_COST_MODULE_READING,
	RUN_COST_MODULE_JIT,
	RUN_COST_COUNTER_CONFIG,
	RUN_COST_COUNTER_SETUP,
	RUN_COST_COUNTER_READING,
	RUN_COST_REPLAYS,
	RUN_COST_EVENT_WRITING,
	RUN_COST_NR_MECHANISMS
};

extern const char *const run_cost_mechanisms[RUN_COST_NR_MECHANISMS];

/* The index of a mechanism's name, or -1. */
int run_cost_mechanism_of(const char *name);

#endif
