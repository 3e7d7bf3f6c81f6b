#ifndef CACHEADVISE_PROBE_RUN_H
#define CACHEADVISE_PROBE_RUN_H

#include "analysis/device_model.h"
#include "base/strbuf.h"

/*
 * Runs the P-chase helper (device/probe.cu, built as cacheadvise-probe
 * beside the CLI so that the CLI itself never links the CUDA driver) and
 * reads what it measured into a device model (analysis/device_model.h).
 * Prints nothing.
 */

struct probe_run_options {
	const char *exe_dir;        /* where the helper is, without $CACHEADVISE_PROBE */
	int device;                 /* GPU index */
	double timeout;             /* seconds for the helper */
	int verbose;                /* ask the helper for its progress (in log) */
	const char *output;         /* probe_keep(): write it there too, or NULL */
	int cache;                  /* probe_keep(): store it in the cache folder */
};

/*
 * Runs the helper ($CACHEADVISE_PROBE, else cacheadvise-probe in
 * opt->exe_dir) and reads its result into dm (initialised here, release it
 * either way), with the creation time set to now. log receives the
 * helper's output once it has run (empty when it could not be read).
 * Returns 0, CA_E_NOGPU with the helper's reason, CA_E_INTERRUPTED, or
 * CA_E_INTERNAL / CA_E_IO with the message set.
 */
int probe_run(const struct probe_run_options *opt, struct device_model *dm, struct strbuf *log);

struct probe_kept {
	int cached;                 /* stored in the cache folder */
	char *cache_path;           /* where (when caching was asked for), or NULL */
	char *cache_error;          /* why it could not be cached (with output), or NULL */
};

/*
 * Writes dm to opt->output (when not NULL) and, with opt->cache, to the cache folder
 * (device_model_save_cached()). Failing to cache is an error only without
 * output; with output, k->cache_error says why. Returns 0 or CA_E_*.
 */
int probe_keep(const struct probe_run_options *opt, const struct device_model *dm,
	       struct probe_kept *k);
void probe_kept_release(struct probe_kept *k);

#endif
