#ifndef CACHEADVISE_PTX_INSTRUMENT_H
#define CACHEADVISE_PTX_INSTRUMENT_H

#include <stddef.h>

#include <jansson.h>

#include "analysis/ptx.h"
#include "analysis/strbuf.h"

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

struct ptx_instrument_options {
	unsigned threshold;     /* simulateCache accesses per thread (default 300) */
};

/*
 * Writes the instrumented module to out and, in *layout, a new JSON object
 * (caller owns) describing the counter slots:
 *   {"symbol": "__cacheadvise_counters", "slots": N,
 *    "functions": [{"name": ..., "loads": [{"ordinal": 0, "requests": 0,
 *       "sectors": 1, "lines": 2, "bytes": 3}],
 *      "data_structures": [{"param": 0, "hits": 40, "accesses": 41}]}]}
 * (numbers are slot indices). Returns 0 or CA_E_INPUT.
 */
int ptx_instrument(const struct ptx_module *m, const struct ptx_instrument_options *opt,
		   struct strbuf *out, json_t **layout);

#endif
