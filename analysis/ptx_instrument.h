#ifndef CACHEADVISE_PTX_INSTRUMENT_H
#define CACHEADVISE_PTX_INSTRUMENT_H

#include <stddef.h>

#include <jansson.h>

#include "analysis/ptx.h"
#include "base/strbuf.h"

/*
 * The monitor run's instrumentation (issue 4): PTX in, PTX out, computing
 * the same results as the original.
 *
 * After every global load, one elected lane of each warp adds to a counter
 * array that lives in the module itself:
 *     .visible .global .align 8 .u64 __cacheadvise_counters[N];
 * per load: requests, distinct 32-byte sectors, distinct 128-byte lines,
 * bytes requested by the active lanes; per data structure (pointer
 * parameter) of each entry: the software-cache seed's simulateCache hits and
 * accesses (one thread-private 16-byte line, first `threshold` accesses of
 * each thread, loads and stores).
 *
 * The injection library reads the array by that symbol name after each
 * launch of the module's kernels and writes it out raw; the layout returned
 * here maps its slots back to loads and data structures.
 */

#define PTX_INSTRUMENT_SYMBOL "__cacheadvise_counters"
#define PTX_INSTRUMENT_DEFAULT_THRESHOLD 300
#define PTX_INSTRUMENT_LAYOUT_SCHEMA "cacheadvise.monitor_layout/1"

/*
 * Zero in any field means its default, so `{ .threshold = n }` or a NULL
 * options pointer are both fine.
 */
struct ptx_instrument_options {
	unsigned threshold;     /* simulateCache accesses per thread (default 300, at most 2^24) */
	unsigned sector_bytes;  /* block size of the "sectors" count (default 32, power of two) */
	unsigned line_bytes;    /* block size of the "lines" count (default 128, power of two) */
};

/*
 * Appends the instrumented module to out and sets *layout to a new JSON
 * object (caller owns, json_decref) describing the counter slots
 * (docs/monitor.md):
 *   {"schema": "cacheadvise.monitor_layout/1",
 *    "symbol": "__cacheadvise_counters", "slots": N, "threshold": 300,
 *    "sector_bytes": 32, "line_bytes": 128, "sim_line_bytes": 16,
 *    "exit_aggregation": "warp",            (or "lane" below sm_80)
 *    "functions": [{"name": ..., "kind": "entry",   (or "func")
 *      "loads": [{"ordinal": 0, "requests": 0, "sectors": 1, "lines": 2,
 *                 "bytes": 3}],
 *      "skipped_loads": [{"ordinal": 5, "reason": "..."}],
 *      "data_structures": [{"param": 0, "name": "..._param_0",
 *                           "read_only": true, "hits": 40, "accesses": 41}]}]}
 * (numbers under loads and data_structures are slot indices). The array in
 * the module has max(N, 1) elements; the injection library reads the first
 * N. Every entry is listed, and every .func with loads.
 *
 * Returns 0, or CA_E_INPUT (out and *layout untouched) when the module
 * cannot be instrumented: a target below sm_70, PTX ISA below 6.2, a
 * 32-bit module, a module that already declares the counter symbol, or bad
 * options.
 */
int ptx_instrument(const struct ptx_module *m, const struct ptx_instrument_options *opt,
		   struct strbuf *out, json_t **layout);

#endif
