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
	int when_hits[2];           /* measured only if load a or b hits alone; -1: always */
	/* An L2-priority variant (issue 26): every load as built but nr_l2
	 * parts, each a set of measured loads (bit b = node b: one load, or the
	 * loads of one site measured as one) given the form l2_form (an index
	 * into the pass's forms); 0: an L1 variant as above. */
	unsigned char nr_l2;
	uint64_t l2_nodes[2];
	unsigned char l2_form[2];
};

/*
 * The first pass over n measured loads (n <= 64): every load allocating
 * ("all", the kernel as built), none ("none", all L1::no_allocate), and
 * each load alone. Returns a new array of n + 2 variants (caller frees).
 */
struct measure_variant *measure_singles(size_t n, size_t *nr);

/*
 * Whether a single's L1 hits (`hits`, its variant's: of the measured loads
 * only that one allocating) differ from the hits of the variant where
 * every measured load bypasses (`none_hits`, the same launches; NAN or 0
 * where there is none), by more than LAUNCH_HITS_TOLERANCE of them: the
 * load's lines are hit, or it evicts the lines of loads that allocate in
 * every variant (those beyond --max-loads, or not patchable). lavaMD's 40
 * unmeasured loads hit 8.4 M sectors in each variant, so every single
 * "hit" and all 276 pairs of its 24 measured loads were replayed, where 6
 * singles move those 8.4 M by less than 0.02%.
 */
#define LAUNCH_HITS_TOLERANCE 1e-3
int launch_single_moves_hits(double hits, double none_hits);

/*
 * The pairs worth measuring, given each load's hit_i (sectors the kernel
 * hits in L1 when only load i allocates; NAN when not measured) and the
 * all-bypassed variant's hits: a pair (i, j) can interact only when one of
 * them moves the kernel's hits alone (launch_single_moves_hits): a load
 * whose lines nobody hits and that evicts nothing when it alone allocates
 * gains nothing from a partner. Pairs of two such loads are additive (gain
 * 0) and are not measured. With all_pairs set every pair is listed.
 * Returns a new array (caller frees), *nr its length, and counts the pairs
 * left out in *skipped.
 */
struct measure_variant *measure_pairs(size_t n, const double *hit, double none_hits, int all_pairs,
				      size_t *nr, size_t *skipped);

/*
 * Every pair of n measured loads, each to be measured only where the rule of
 * measure_pairs() holds at the sampled launch itself: the library replays
 * pair (i, j) after the singles of the same launch were decoded, and only
 * when load i or load j moves the hits against the "none" variant there
 * (launch_single_moves_hits; when_hits = {i, j}), and once:
 * at the first sampled launch where that holds (pair_hits_at_one_launch()
 * puts it on the singles' scale). One pass then measures singles and the
 * pairs that can interact, instead of a second program run for the pairs,
 * and the pairs cost one replay each, not one a sample. Returns a new
 * array of n(n-1)/2 variants (caller frees).
 */
struct measure_variant *measure_pairs_when_hits(size_t n, size_t *nr);

/*
 * hit_{i,j} of a pair measured at one sampled launch, on the scale of the
 * singles measured at several (each scaled to all `launches`): what the
 * pair gains at that launch over its two singles there, scaled, added to
 * the singles' own scaled hits. So the interaction is measured within one
 * launch even where launches differ in work.
 */
/*
 * A measured count as the capture records it: counts are non-negative, so a
 * negative value (hit_{i,j} from pair_hits_at_one_launch() is a difference
 * of replays, and counter noise can take it below 0) is resolved here, where
 * it is measured: the count becomes 0 and *noise gets the value measured.
 * *noise is NAN when nothing was resolved; NAN (not measured) passes.
 */
double count_resolve_noise(double measured, double *noise);

double pair_hits_at_one_launch(double pair_at, double i_at, double j_at, double hit_i,
			       double hit_j, double launches);

/*
 * Whether a kernel's launches may be replayed (docs/injection.md "Launch
 * plans"): the PTX model must know the parameter behind every store and
 * atomic, so that the memory they write can be saved and restored. A store
 * to a module-scope variable (a __device__ counter) is harmless where the
 * replays run in modules of the library's own (own_modules: capture
 * variants as modules, verification versions), whose variables are their
 * own copies, refilled from the program's before each launch; not where
 * they run the program's own module (the mask form, the carve-out check).
 * Returns 1 and the parameters written in written[0..*nr) (room for
 * fn->nr_params, each once), or 0 with a new sentence in *why (caller
 * frees).
 */
struct ptx_function;
int launch_replay_written(const struct ptx_function *fn, int own_modules, unsigned *written,
			  size_t *nr, char **why);

/* Whether a store or atomic of fn writes a module-scope variable. */
int launch_writes_module_var(const struct ptx_function *fn);

#endif
