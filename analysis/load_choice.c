#include "analysis/load_choice.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

struct load_traffic {
	unsigned ordinal;
	uint64_t sectors;
	size_t text;                /* its place in the text: ties, and the order without counts */
	size_t round;               /* how many loads of its site come before it */
};

/* The earlier rounds first (one load of every site before a second of
 * any), then most sectors, then the text order. */
static int cmp_traffic(const void *a, const void *b)
{
	const struct load_traffic *x = a, *y = b;

	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	if (x->sectors != y->sectors)
		return x->sectors > y->sectors ? -1 : 1;
	return x->text < y->text ? -1 : x->text > y->text;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* Each load's round: the loads of its site busier than it (or as busy and
 * earlier in the text). Without sites every load is its own. */
static void set_rounds(struct load_traffic *order, const size_t *site, size_t nr)
{
	size_t i, j;

	for (i = 0; site && i < nr; i++)
		for (j = 0; j < nr; j++)
			if (j != i && site[j] == site[i] &&
			    (order[j].sectors > order[i].sectors ||
			     (order[j].sectors == order[i].sectors && j < i)))
				order[i].round++;
}

void load_choice_pick(const unsigned *patchable, const uint64_t *sectors, const size_t *site,
		      size_t nr, size_t max_loads, unsigned *measured, struct load_choice *out)
{
	struct load_traffic *order;
	size_t j, n = nr < max_loads ? nr : max_loads;

	memset(out, 0, sizeof(*out));
	out->nr_measured = n;
	out->left_out = nr - n;
	order = xcalloc(nr + 1, sizeof(*order));
	for (j = 0; j < nr; j++) {
		order[j].ordinal = patchable[j];
		order[j].sectors = sectors ? sectors[j] : 0;
		order[j].text = j;
		out->total_sectors += order[j].sectors;
	}
	if (nr > max_loads) {
		set_rounds(order, site, nr);
		qsort(order, nr, sizeof(*order), cmp_traffic);
		out->by_traffic = sectors != NULL;
	}
	for (j = 0; j < n; j++) {
		measured[j] = order[j].ordinal;
		out->kept_sectors += order[j].sectors;
	}
	qsort(measured, n, sizeof(*measured), cmp_unsigned);
	free(order);
}
