#ifndef CACHEADVISE_MONITOR_COUNTS_H
#define CACHEADVISE_MONITOR_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * The monitor run's counters, decoded (docs/monitor.md). The injection
 * library reads a module's __cacheadvise_counters array after each launch
 * (and zeroes it); the lead sums the arrays of one kernel's launches
 * element by element and hands the sum, with the layout that
 * ptx_instrument() wrote for the module, to monitor_counts_read(). The
 * result holds, per function of the layout, the capture's per-load fields
 * (requests, sectors = access_i, lines, bytes) and per-data-structure
 * fields (sim_hits, sim_accesses), and gives the load efficiencies of the
 * cache-bypassing seed (section 4.3):
 *   E_on  = bytes requested / (lines   * line_bytes)    (L1 used, 128-byte blocks)
 *   E_off = bytes requested / (sectors * sector_bytes)  (L1 bypassed, 32-byte sectors)
 * Lanes of one warp reading the same bytes each count their bytes, so a
 * broadcast load can exceed 1; the ratio is not clamped.
 */

struct monitor_load {
	unsigned ordinal;
	uint64_t requests;      /* warp executions with at least one lane accessing */
	uint64_t sectors;       /* distinct sectors per request, summed: access_i */
	uint64_t lines;         /* distinct lines per request, summed */
	uint64_t bytes;         /* bytes the accessing lanes asked for */
};

struct monitor_ds {
	int param;
	int read_only;          /* 1, 0, -1 unknown */
	uint64_t sim_hits;
	uint64_t sim_accesses;
};

struct monitor_function {
	char *name;
	int is_entry;
	struct monitor_load *loads;
	size_t nr_loads;
	struct monitor_ds *ds;
	size_t nr_ds;
};

struct monitor_counts {
	unsigned sector_bytes;  /* from the layout (32) */
	unsigned line_bytes;    /* from the layout (128) */
	unsigned threshold;     /* simulateCache accesses per thread */
	struct monitor_function *functions;
	size_t nr_functions;
};

void monitor_counts_init(struct monitor_counts *mc);
void monitor_counts_release(struct monitor_counts *mc);

/*
 * Decodes counters[0..nr_counters) with layout (the JSON that
 * ptx_instrument() returned, or the same read back from a file) into mc
 * (initialised; previous contents are released). A layout that is not the
 * expected schema, names a slot at or beyond "slots", or has more "slots"
 * than nr_counters is CA_E_INPUT with the JSON path of the bad item; mc is
 * then left empty.
 */
int monitor_counts_read(struct monitor_counts *mc, const json_t *layout,
			const uint64_t *counters, size_t nr_counters);

/* The function called name, or NULL. */
const struct monitor_function *monitor_counts_find(const struct monitor_counts *mc,
						   const char *name);

/*
 * E_on and E_off over the loads of the function called name, and, when
 * with_funcs is set, also over the loads of every non-entry function in mc
 * (device functions the kernel calls: pass counters summed over this
 * kernel's launches only, so they hold nothing from other kernels).
 * Returns 0, or -1 when nothing was requested (the values are then NaN).
 */
int monitor_counts_efficiency(const struct monitor_counts *mc, const char *name, int with_funcs,
			      double *e_on, double *e_off);

/*
 * Writes the monitor fields into a capture.json kernel object, given as
 * the capture's reader read it (capture_kernel_from_json: k's sources are
 * the objects written into; k->name names an entry of mc): for each counted
 * load of that entry, the kernel's load with the same ordinal (one the
 * capture does not list is left out) gets "access" (sectors), "requests",
 * "lines" and "bytes";
 * "efficiency" becomes {"on": E_on, "off": E_off} (null values when no
 * bytes were requested; .func loads included per with_funcs, as above);
 * "data_structures" becomes [{"param", "read_only", "sim_hits",
 * "sim_accesses"}]. Loads the instrumentation skipped are left as they
 * are. Returns 0, or CA_E_INPUT when k was not read from JSON or its name
 * is not an entry of mc.
 */
struct capture_kernel;
int monitor_counts_update_kernel(const struct monitor_counts *mc, const struct capture_kernel *k,
				 int with_funcs);

#endif
