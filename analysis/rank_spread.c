#include "analysis/rank_spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

/* One rank's hit_i per launch of one load. */
struct entry {
	unsigned ordinal;
	size_t rank;                /* index in the kernel's ranks */
	double hit;
};

static int by_load_then_hit(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->ordinal != y->ordinal)
		return x->ordinal < y->ordinal ? -1 : 1;
	return x->hit < y->hit ? -1 : x->hit > y->hit;
}

/*
 * Every (rank, load) measurement sorted by load, then by hits: each load's
 * ranks are one run of the array, its min first, max last and median in
 * the middle. O(T log T) in the measurements, whatever the ranks and loads.
 */
void rank_spread_compute(const struct capture_kernel *k, struct rank_spread *rs)
{
	struct entry *e;
	size_t *group, nr_e = 0, nr_g = 0, i, r, g;
	double largest = 0, *off;
	size_t *where;

	memset(rs, 0, sizeof(*rs));
	rs->nr_ranks = k->nr_ranks;
	rs->max_spread = NAN;
	if (k->nr_ranks < 2)
		return;
	for (r = 0; r < k->nr_ranks; r++)
		nr_e += k->ranks[r].nr_loads;
	e = xcalloc(nr_e + 1, sizeof(*e));
	group = xcalloc(nr_e + 1, sizeof(*group));   /* each load's first entry */
	nr_e = 0;
	for (r = 0; r < k->nr_ranks; r++)
		for (i = 0; i < k->ranks[r].nr_loads; i++)
			e[nr_e++] = (struct entry){ k->ranks[r].loads[i].ordinal, r,
						    k->ranks[r].loads[i].hit_per_launch };
	qsort(e, nr_e, sizeof(*e), by_load_then_hit);
	rs->loads = xcalloc(nr_e + 1, sizeof(*rs->loads));
	for (i = 0; i < nr_e; i = r) {
		struct rank_spread_load *l = &rs->loads[rs->nr_loads];
		size_t n;

		for (r = i; r < nr_e && e[r].ordinal == e[i].ordinal; r++)
			;
		n = r - i;
		if (n < 2)
			continue;   /* measured on one rank: nothing to compare */
		l->ordinal = e[i].ordinal;
		l->nr_ranks = n;
		l->min = e[i].hit;
		l->min_rank = k->ranks[e[i].rank].rank;
		l->max = e[r - 1].hit;
		l->max_rank = k->ranks[e[r - 1].rank].rank;
		l->median = n % 2 ? e[i + n / 2].hit : (e[i + n / 2 - 1].hit + e[i + n / 2].hit) / 2;
		l->spread = l->median > 0 ? (l->max - l->min) / l->median : 0;
		if (l->median > largest)
			largest = l->median;
		group[rs->nr_loads++] = i;
		nr_g++;
	}
	/* the loads that matter: their spread, and the ranks off the median */
	off = xcalloc(k->nr_ranks + 1, sizeof(*off));
	where = xcalloc(k->nr_ranks + 1, sizeof(*where));
	for (g = 0; g < nr_g; g++) {
		const struct rank_spread_load *l = &rs->loads[g];

		if (!(largest > 0) || l->median < RANK_SPREAD_MATTERS * largest)
			continue;
		if (isnan(rs->max_spread) || l->spread > rs->max_spread)
			rs->max_spread = l->spread;
		for (i = group[g]; i < group[g] + l->nr_ranks; i++) {
			double d = fabs(e[i].hit - l->median);

			if (d > RANK_SPREAD_FLOOR && d > RANK_SPREAD_DIFFERS * l->median &&
			    d / l->median > off[e[i].rank]) {
				off[e[i].rank] = d / l->median;
				where[e[i].rank] = i;
			}
		}
	}
	for (r = 0; r < k->nr_ranks; r++) {
		struct rank_spread_differs *d;
		const struct entry *x = &e[where[r]];

		if (!(off[r] > 0))
			continue;
		rs->differs = xrealloc(rs->differs, (rs->nr_differs + 1) * sizeof(*rs->differs));
		d = &rs->differs[rs->nr_differs++];
		d->rank = k->ranks[r].rank;
		d->gpu = k->ranks[r].gpu ? xstrdup(k->ranks[r].gpu) : NULL;
		d->ordinal = x->ordinal;
		d->hit_per_launch = x->hit;
		for (g = 0; g < nr_g && rs->loads[g].ordinal != x->ordinal; g++)
			;
		d->median = rs->loads[g].median;
	}
	free(off);
	free(where);
	free(group);
	free(e);
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
