#ifndef CACHEADVISE_LAUNCH_SAMPLING_H
#define CACHEADVISE_LAUNCH_SAMPLING_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decisions of in-run capture (issue 15, docs/cmd-profile.md "How variants
 * are measured"): which launches of a kernel carry counters, and which
 * variants (sets of loads that allocate in L1) are measured. Pure
 * functions; the profile library turns them into a launch plan.
 */

/*
 * Chooses min(samples, launches) launch ordinals spread evenly over a
 * kernel's `launches` launches, in increasing order, into out (room for
 * `samples`). The first launch (module load, cold caches, JIT) is avoided
 * when there are more launches than samples. Returns how many were chosen.
 */
size_t launch_sample_ordinals(uint64_t launches, size_t samples, uint64_t *out);

/* One variant: the loads (bit b = measured load b) that allocate in L1. */
struct measure_variant {
	uint64_t mask;
	char label[48];             /* "all", "none", "3", "3,7" (capture.json labels) */
};

/*
 * The first pass over n measured loads (n <= 64): every load allocating
 * ("all", the kernel as built), none ("none", all L1::no_allocate), and
 * each load alone. Returns a new array of n + 2 variants (caller frees).
 */
struct measure_variant *measure_singles(size_t n, size_t *nr);

/*
 * The pairs worth measuring, given each load's hit_i (sectors the kernel
 * hits in L1 when only load i allocates; NAN when not measured): a pair
 * (i, j) can interact only when at least one of them has hits, since a
 * load whose lines nobody hits when it alone allocates gains nothing
 * from a partner and can only evict it. Pairs of two hitless loads are
 * additive (gain 0) and are not measured. With all_pairs set every pair is
 * listed. Returns a new array (caller frees), *nr its length, and counts
 * the pairs left out in *skipped.
 */
struct measure_variant *measure_pairs(size_t n, const double *hit, int all_pairs,
				      size_t *nr, size_t *skipped);

/*
 * Whether to measure every pair in the first in-run pass, beside the
 * singles, instead of a second pass with only the pairs that can interact:
 * yes when replaying all pairs at the sampled launches is estimated to cost
 * no more than the pass it saves (the program's run and a pass's own fixed
 * cost, PASS_SECONDS). For kernel k, launch_ns[k] is its mean GPU time per
 * launch and loads[k] its measured loads; each replay costs
 * REPLAY_COST_FACTOR launches (the range profiler's passes) and
 * REPLAY_RANGE_SECONDS (a profiled range's own cost: 48-63 ms on an H100
 * whatever the kernel, measured on lud's 302-variant replays and cfd_iter's
 * 111 ranges). *estimate gets the seconds the pairs would take.
 */
#define REPLAY_COST_FACTOR 8.0
#define REPLAY_RANGE_SECONDS 0.05
#define PASS_SECONDS 2.0
int measure_pairs_in_first_pass(const double *launch_ns, const size_t *loads, size_t nr_kernels,
				size_t samples, double native_seconds, double *estimate);

/*
 * Whether a kernel's launches may be replayed (docs/injection.md "Launch
 * plans"): the PTX model must know the parameter behind every store and
 * atomic, so that the memory they write can be saved and restored. Returns
 * 1 and the parameters written in written[0..*nr) (room for fn->nr_params,
 * each once), or 0 with a new sentence in *why (caller frees).
 */
struct ptx_function;
int launch_replay_written(const struct ptx_function *fn, unsigned *written, size_t *nr, char **why);

#endif
