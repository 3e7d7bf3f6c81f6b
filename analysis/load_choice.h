#ifndef CACHEADVISE_LOAD_CHOICE_H
#define CACHEADVISE_LOAD_CHOICE_H

/*
 * Which loads of a kernel `profile` measures (--max-loads): every patchable
 * load when there are few enough; else the busiest by the monitor run's
 * sector counts, and without monitor counts the first in PTX text order.
 * The others stay L1::no_allocate in the variants and keep their form in
 * the advice.
 */

#include <stddef.h>
#include <stdint.h>

struct load_choice {
	size_t nr_measured;         /* loads written to measured[] */
	size_t left_out;            /* patchable loads not measured */
	uint64_t kept_sectors;      /* monitor sectors of the measured loads */
	uint64_t total_sectors;     /* monitor sectors of every patchable load */
	int by_traffic;             /* chosen by sectors (0: PTX order) */
};

/*
 * patchable[0..nr) are the patchable loads' ordinals in PTX text order;
 * sectors[i] is the monitor run's sector count of patchable[i], or sectors
 * is NULL without monitor counts. Writes at most max_loads ordinals to
 * measured (room for nr), in increasing ordinal order: all of them when
 * nr <= max_loads; else the max_loads with the most sectors (ties: the
 * earlier in the text), or the first max_loads without sectors. Fills
 * *out. Never fails.
 */
void load_choice_pick(const unsigned *patchable, const uint64_t *sectors, size_t nr,
		      size_t max_loads, unsigned *measured, struct load_choice *out);

#endif
