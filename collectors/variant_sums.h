#ifndef CACHEADVISE_VARIANT_SUMS_H
#define CACHEADVISE_VARIANT_SUMS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/capture_model.h"
#include "collectors/events.h"

/*
 * The variants of one kernel's launch plan (in-run capture,
 * src/profile/capture_launches.c), summed over the capture passes that
 * measured them: each variant's metric sums (the events' keys,
 * docs/injection.md "Metrics"), the launches it was measured at, the run
 * that measured it last, and its L1 hits at each sampled launch apart (a
 * pair replayed at one launch is compared with its singles there). What
 * the passes' events say, typed: the profile reads no event by key.
 */

struct variant_hits_at {
	int process;                /* the process's rank, or its file (event_hits_at) */
	uint64_t ordinal;           /* the kernel's launch in that process */
	double l1_hits;
};

struct variant_sum {
	char *label;                /* "all", "none", "3", "2,5", "l2:..." */
	int run;                    /* the last run that measured it */
	double samples;             /* launches it was measured at */
	double sums[CAPTURE_NR_COUNTER_KEYS]; /* NAN: never measured */
	struct variant_hits_at *at; /* one a launch of a process; a later pass replaces a
				       launch's value */
	size_t nr_at;
};

struct variant_sums {
	struct variant_sum *v;
	size_t nr, alloc;
};

void variant_sums_init(struct variant_sums *s);
void variant_sums_release(struct variant_sums *s);
/*
 * Adds what kernel k's events of one run measured of variant `label` in
 * run `run`. Returns 1 when the events have the variant, else 0 (nothing
 * added).
 */
int variant_sums_add(struct variant_sums *s, const struct event_kernel *k, const char *label,
		     int run);
/* The variant's entry, NULL when never measured. */
const struct variant_sum *variant_sums_get(const struct variant_sums *s, const char *label);
/* A metric's sum by its key, NAN when unknown or not measured. */
double variant_sum_metric(const struct variant_sum *v, const char *key);
/* The variant's hits at one launch of one process: 1 with *hits, 0 when not
 * measured there. */
int variant_sum_hits_at(const struct variant_sum *v, int process, uint64_t ordinal,
			double *hits);
/*
 * The variant's metrics scaled from its sampled launches to `launches`
 * (the kernel's in one run): capture.json counters, {key: value...,
 * "run", "launches", "sampled_launches"} (a new object).
 */
json_t *variant_sum_scaled_json(const struct variant_sum *v, unsigned long long launches);
/* {label: {key: sum..., "samples"}}: capture.json's measure.kernels[].variants. */
json_t *variant_sums_to_json(const struct variant_sums *s);

#endif
