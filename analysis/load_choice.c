#include "analysis/load_choice.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

struct load_traffic {
	unsigned ordinal;
	uint64_t sectors;
};

/* Most sectors first; the text order breaks ties. */
static int cmp_traffic(const void *a, const void *b)
{
	const struct load_traffic *x = a, *y = b;

	if (x->sectors != y->sectors)
		return x->sectors > y->sectors ? -1 : 1;
	return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

void load_choice_pick(const unsigned *patchable, const uint64_t *sectors, size_t nr,
		      size_t max_loads, unsigned *measured, struct load_choice *out)
{
	struct load_traffic *order;
	size_t j, n = nr < max_loads ? nr : max_loads;

	memset(out, 0, sizeof(*out));
	out->nr_measured = n;
	out->left_out = nr - n;
	if (!sectors || nr <= max_loads) {
		memcpy(measured, patchable, n * sizeof(*measured));
		for (j = 0; sectors && j < nr; j++)
			out->kept_sectors = out->total_sectors += sectors[j];
		return;
	}
	order = xcalloc(nr + 1, sizeof(*order));
	for (j = 0; j < nr; j++) {
		order[j].ordinal = patchable[j];
		order[j].sectors = sectors[j];
		out->total_sectors += sectors[j];
	}
	qsort(order, nr, sizeof(*order), cmp_traffic);
	for (j = 0; j < n; j++) {
		measured[j] = order[j].ordinal;
		out->kept_sectors += order[j].sectors;
	}
	qsort(measured, n, sizeof(*measured), cmp_unsigned);
	out->by_traffic = 1;
	free(order);
}
