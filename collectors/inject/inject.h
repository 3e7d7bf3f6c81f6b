#ifndef CACHEADVISE_INJECT_H
#define CACHEADVISE_INJECT_H

/*
 * The injection library: loaded into the target program by the CUDA driver
 * (CUDA_INJECTION64_PATH), it records what the program does on the GPU and
 * substitutes the PTX the CLI prepared. It decides nothing (DESIGN.md): the
 * CLI writes the files and the environment below, the library follows them.
 * The protocol is documented in docs/injection.md.
 *
 * Environment:
 *   CACHEADVISE_OUT         directory for events.jsonl and seen/ (required;
 *                           a second process of a run writes events.<pid>.jsonl)
 *   CACHEADVISE_SUBST       directory of <module id>.ptx files to load in
 *                           place of the program's modules
 *   CACHEADVISE_SAVE_MODULES=1  write each module's PTX to OUT/seen/<id>.ptx
 *   CACHEADVISE_METRICS=1   read L1/L2/DRAM counters of every launch (CUPTI
 *                           range profiler, auto range, kernel replay)
 *   CACHEADVISE_TIMING=1    kernel start/end from CUPTI activity records
 *   CACHEADVISE_MONITOR=1   read the monitor counters of instrumented modules
 *                           after each launch
 *   CACHEADVISE_L2_WINDOWS  a JSON file of persisting-L2 windows to set on
 *                           launches (docs/injection.md)
 *   CACHEADVISE_METRIC_LIST comma-separated metric names overriding the default
 *   CACHEADVISE_LAUNCH_PLAN a JSON launch plan (launch_plan.h): variants
 *                           replayed at sampled launches, versions chosen
 *                           per launch
 */

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <jansson.h>

/* Appends one event (a JSON object; the reference is stolen) as one line of
 * events.jsonl with a single write(), so a crash never leaves a torn line
 * in the middle of the file. */
void inject_event(json_t *ev);
/* Records an error event {"ev":"error","what":...}. */
void inject_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The driver's description of r. */
const char *inject_cu_error(CUresult r);

/* CUPTI range profiler per launch (range_metrics.c). */
struct range_metrics;
/* Sets up profiling for the current context. Returns NULL (with an error
 * event recorded) when the profiler cannot be used. */
/* per_launch = 0: every launch is profiled from now on; 1: only launches
 * between range_metrics_begin and range_metrics_end (launch plans). */
struct range_metrics *range_metrics_new(void *cu_context, const char *metric_list, int per_launch);
/* Called before each launch (per_launch = 0): decodes the ranges of earlier
 * launches and records a "metrics" event for each, labelled with their seq
 * numbers. Does nothing in per-launch mode. */
void range_metrics_before_launch(struct range_metrics *rm, uint64_t seq, const char *kernel);
/* Per-launch mode: profile the next launch as the variant `label` of the
 * kernel's launch `ordinal`. Calls before range_metrics_end() add launches
 * to the same profiler session (one range each, at most 64; a full session
 * is ended first); range_metrics_end() stops the profiler and records one
 * "metrics" event per launch (with "variant" and "ordinal"). hits_only
 * counts the L1 hits alone (key "l1_hits"), a lighter configuration whose
 * ranges cost half as much, where the metrics in use include it; a session
 * holds ranges of one configuration, so a change ends the session. */
void range_metrics_begin(struct range_metrics *rm, uint64_t seq, const char *kernel,
			 const char *label, uint64_t ordinal, int hits_only);
/* Called for each labelled range as it is decoded, with its values (keys
 * as in the "metrics" event; borrowed): launch plans read the hits of the
 * variants measured so far. */
typedef void range_metrics_listener(void *arg, const char *kernel, const char *label,
				    json_t *values);
void range_metrics_set_listener(struct range_metrics *rm, range_metrics_listener *fn, void *arg);
void range_metrics_end(struct range_metrics *rm);
/* Decodes what is pending and releases the profiler. */
void range_metrics_free(struct range_metrics *rm);

#endif
