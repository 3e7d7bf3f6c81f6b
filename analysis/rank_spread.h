#ifndef CACHEADVISE_RANK_SPREAD_H
#define CACHEADVISE_RANK_SPREAD_H

#include <stddef.h>

#include "analysis/capture_model.h"

/*
 * How the ranks of an MPI or Slurm job agree on a kernel's loads (issue
 * 29). The advice comes from the ranks' counters merged (SPMD: the same
 * kernel on every rank); kernels[].ranks holds each measured rank's hit_i
 * per launch, and this says how far apart they are and which rank behaves
 * differently.
 *
 * A load counts when it was measured on two ranks or more. Its spread is
 * (max - min) / median of hit_i per launch over those ranks. A rank
 * differs on a load that matters (median at least RANK_SPREAD_MATTERS of
 * the kernel's largest load median) when it is more than RANK_SPREAD_DIFFERS
 * away from the median, relative to it, and more than RANK_SPREAD_FLOOR
 * sectors per launch; each rank is named once, on the load where it is
 * farthest off. With two ranks apart, both are named: neither is the
 * majority.
 */
#define RANK_SPREAD_MATTERS 0.10
#define RANK_SPREAD_DIFFERS 0.25
#define RANK_SPREAD_FLOOR 1.0

struct rank_spread_load {
	unsigned ordinal;
	size_t nr_ranks;            /* ranks that measured it */
	double min, median, max;    /* hit_i per launch, sectors */
	int min_rank, max_rank;
	double spread;              /* (max - min) / median; 0 when median is 0 */
};

struct rank_spread_differs {
	int rank;
	char *gpu;                  /* its GPU, NULL unknown (owned) */
	unsigned ordinal;           /* the load where it is farthest off */
	double hit_per_launch, median;
};

struct rank_spread {
	size_t nr_ranks;            /* ranks of the kernel's "ranks" */
	struct rank_spread_load *loads; /* by ordinal */
	size_t nr_loads;
	double max_spread;          /* over the loads that matter; NAN none */
	struct rank_spread_differs *differs;
	size_t nr_differs;
};

/* Fills rs (zeroed here) from k->ranks; nr_ranks 0 outside a job. */
void rank_spread_compute(const struct capture_kernel *k, struct rank_spread *rs);
void rank_spread_release(struct rank_spread *rs);

#endif
