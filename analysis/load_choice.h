#ifndef CACHEADVISE_LOAD_CHOICE_H
#define CACHEADVISE_LOAD_CHOICE_H

/*
 * Which loads of a kernel `profile` measures (--max-loads): every patchable
 * load when there are few enough; else one load of every source site (a
 * CUDA expression, a Triton call: analysis/load_sites.h) before a second
 * of any, the busiest by the monitor run's sector counts first, and
 * without monitor counts in PTX text order. The loads of a site take one
 * decision, so a second copy of a site tells less than a site not measured
 * at all (helper_loads' consume on the H200: six copies of the table's
 * gather were measured and none of the stream beside it). The others stay
 * L1::no_allocate in the variants and keep their form in the advice.
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
 * is NULL without monitor counts; site[i] names patchable[i]'s source site
 * (equal numbers: one site), or site is NULL (every load its own). Writes
 * at most max_loads ordinals to measured (room for nr), in increasing
 * ordinal order: all of them when nr <= max_loads; else by rounds (a
 * site's busiest load in the first, its next in the second...), within a
 * round the most sectors first, ties to the earlier in the text. Fills
 * *out. Never fails.
 */
void load_choice_pick(const unsigned *patchable, const uint64_t *sectors, const size_t *site,
		      size_t nr, size_t max_loads, unsigned *measured, struct load_choice *out);

#endif
