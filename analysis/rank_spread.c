#include "analysis/rank_spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ab_verdict.h"
#include "base/xalloc.h"

/* Rank r's hit_i per launch of load ordinal, or NAN when it did not measure it. */
static double rank_hit(const struct capture_kernel_rank *r, unsigned ordinal)
{
	size_t i;

	for (i = 0; i < r->nr_loads; i++)
		if (r->loads[i].ordinal == ordinal)
			return r->loads[i].hit_per_launch;
	return NAN;
}

void rank_spread_compute(const struct capture_kernel *k, struct rank_spread *rs)
{
	double *v = xcalloc(k->nr_ranks + 1, sizeof(*v)), largest = 0;
	double *off = xcalloc(k->nr_ranks + 1, sizeof(*off));
	size_t *where = xcalloc(k->nr_ranks + 1, sizeof(*where));
	size_t i, r, n;

	memset(rs, 0, sizeof(*rs));
	rs->nr_ranks = k->nr_ranks;
	rs->max_spread = NAN;
	if (k->nr_ranks < 2)
		goto out;
	rs->loads = xcalloc(k->nr_loads + 1, sizeof(*rs->loads));
	for (i = 0; i < k->nr_loads; i++) {
		struct rank_spread_load *l = &rs->loads[rs->nr_loads];

		l->ordinal = k->loads[i].ordinal;
		l->min = INFINITY;
		l->max = -INFINITY;
		for (r = n = 0; r < k->nr_ranks; r++) {
			double h = rank_hit(&k->ranks[r], l->ordinal);

			if (isnan(h))
				continue;
			v[n++] = h;
			if (h < l->min) {
				l->min = h;
				l->min_rank = k->ranks[r].rank;
			}
			if (h > l->max) {
				l->max = h;
				l->max_rank = k->ranks[r].rank;
			}
		}
		if (n < 2)
			continue;
		l->nr_ranks = n;
		l->median = ab_median(v, n);
		l->spread = l->median > 0 ? (l->max - l->min) / l->median : 0;
		if (l->median > largest)
			largest = l->median;
		rs->nr_loads++;
	}
	/* the loads that matter: their spread, and the ranks off the median */
	for (r = 0; r < k->nr_ranks; r++)
		off[r] = 0;
	for (i = 0; i < rs->nr_loads; i++) {
		const struct rank_spread_load *l = &rs->loads[i];

		if (!(largest > 0) || l->median < RANK_SPREAD_MATTERS * largest)
			continue;
		if (isnan(rs->max_spread) || l->spread > rs->max_spread)
			rs->max_spread = l->spread;
		for (r = 0; r < k->nr_ranks; r++) {
			double h = rank_hit(&k->ranks[r], l->ordinal), d;

			if (isnan(h))
				continue;
			d = fabs(h - l->median);
			if (d > RANK_SPREAD_FLOOR && d > RANK_SPREAD_DIFFERS * l->median &&
			    d / l->median > off[r]) {
				off[r] = d / l->median;
				where[r] = i;
			}
		}
	}
	for (r = 0; r < k->nr_ranks; r++) {
		struct rank_spread_differs *d;

		if (!(off[r] > 0))
			continue;
		rs->differs = xrealloc(rs->differs, (rs->nr_differs + 1) * sizeof(*rs->differs));
		d = &rs->differs[rs->nr_differs++];
		d->rank = k->ranks[r].rank;
		d->gpu = k->ranks[r].gpu ? xstrdup(k->ranks[r].gpu) : NULL;
		d->ordinal = rs->loads[where[r]].ordinal;
		d->hit_per_launch = rank_hit(&k->ranks[r], d->ordinal);
		d->median = rs->loads[where[r]].median;
	}
out:
	free(v);
	free(off);
	free(where);
}

void rank_spread_release(struct rank_spread *rs)
{
	size_t i;

	for (i = 0; i < rs->nr_differs; i++)
		free(rs->differs[i].gpu);
	free(rs->differs);
	free(rs->loads);
	memset(rs, 0, sizeof(*rs));
}
