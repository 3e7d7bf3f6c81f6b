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
 *   CACHEADVISE_OUT         directory for events.jsonl and seen/ (required)
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
 */

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Appends one event (a JSON object; the reference is stolen) as one line of
 * events.jsonl with a single write(), so a crash never leaves a torn line
 * in the middle of the file. */
void inject_event(json_t *ev);
/* Records an error event {"ev":"error","what":...}. */
void inject_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CUPTI range profiler per launch (range_metrics.c). */
struct range_metrics;
/* Sets up profiling for the current context. Returns NULL (with an error
 * event recorded) when the profiler cannot be used. */
struct range_metrics *range_metrics_new(void *cu_context, const char *metric_list);
/* Called before each launch: decodes the ranges of earlier launches and
 * records a "metrics" event for each, labelled with their seq numbers. */
void range_metrics_before_launch(struct range_metrics *rm, uint64_t seq, const char *kernel);
/* Decodes what is pending and releases the profiler. */
void range_metrics_free(struct range_metrics *rm);

#endif
