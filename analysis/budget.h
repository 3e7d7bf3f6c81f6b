#ifndef CACHEADVISE_BUDGET_H
#define CACHEADVISE_BUDGET_H

/*
 * The whole profile's time budget (issue 25, item 4): `profile --budget X`
 * (default 20) allows X times the program's native wall time, or
 * BUDGET_MIN_SECONDS, whichever is larger. A step that would take the
 * profile past it is skipped, with a note that says how to run it. The
 * capture and the verification of the advice are never skipped: the
 * budget governs the steps after them (the source patch's own timing, the
 * carve-out check, the software cache, each L2 window).
 *
 * Pure decisions on numbers, unit-tested (tests/unit/test_budget.c).
 */

#define BUDGET_DEFAULT_FACTOR 20.0
#define BUDGET_MIN_SECONDS 15.0

/*
 * The budget in seconds: max(factor * native_seconds, BUDGET_MIN_SECONDS);
 * INFINITY when factor is 0 (no budget) or the native time is unknown
 * (NAN or not above 0: nothing to scale).
 */
double budget_limit_seconds(double factor, double native_seconds);

/*
 * What a step of `runs` program runs is expected to take, each run taking
 * run_seconds (the profile's own timed runs so far say how long one takes
 * under the injection library). NAN run_seconds: 0 (unknown, not held
 * against the step).
 */
double budget_estimate_seconds(unsigned runs, double run_seconds);

/* 1 when spent + estimate stays within limit. */
int budget_allows(double limit, double spent, double estimate);

#endif
