#ifndef CACHEADVISE_AB_VERDICT_H
#define CACHEADVISE_AB_VERDICT_H

/*
 * Keeping advice (DESIGN.md "Keeping advice"): the verdict on baseline
 * against advice timings. Pure computation on numbers the A/B runs
 * measured (collectors/run_request.h runs them); nothing here runs a
 * program.
 */

#include <stddef.h>

#include <jansson.h>

/* What alternating baseline / advice runs measured. */
/* One rank of an MPI or Slurm job in an A/B of program runs: its own
 * kernels' times, laid out as ab_result's base_ns/adv_ns (NAN: the rank did
 * not time the kernel in that run). */
struct ab_rank_times {
	int rank;
	char *gpu;                      /* PCI bus id, NULL unknown */
	double *base_ns, *adv_ns;
};

struct ab_result {
	unsigned rounds;
	double *base_ns, *adv_ns;       /* per measured kernel and round: [k * rounds + r], NAN unmeasured */
	unsigned *base_launches, *adv_launches; /* the launches timed in them, laid out alike */
	struct ab_rank_times *ranks;    /* a job's ranks apart (two or more), else none */
	size_t nr_ranks;
	double *base_total, *adv_total; /* GPU time of all kernels, per round */
	double *base_wall, *adv_wall;   /* program wall time, per round */
	int outputs_equal;              /* the output check does not stand against the advice */
	int baseline_stable;            /* the baseline runs agree with each other */
	const char *reject_reason;      /* why the output check failed (static, or output_reason) */
	json_t *output;                 /* the output check (analysis/output_check.h), NULL before */
	char *output_reason;            /* owned: the output check's reason when it rejects */
};

/* Allocates the series for nr_kernels kernels and rounds rounds, NAN-free
 * zeros, outputs_equal and baseline_stable set. Release with ab_result_release
 * (which also drops output and output_reason). */
void ab_result_init(struct ab_result *ab, size_t nr_kernels, unsigned rounds);
void ab_result_release(struct ab_result *ab);

/* ab's entry for a job's rank (created, its series NAN) for nr_kernels kernels. */
struct ab_rank_times *ab_result_rank(struct ab_result *ab, int rank, size_t nr_kernels);

/* Keeps the first done rounds of ab's series (laid out for ab->rounds) and
 * sets ab->rounds to done. */
void ab_result_truncate(struct ab_result *ab, size_t nr_kernels, unsigned done);

/*
 * The first of the nr_kernels kernels that the baseline and the advice
 * runs of a round launched a different number of times (both timed some),
 * with those counts in *base and *adv; -1 when every kernel was launched
 * alike. Their GPU times then measure different work.
 */
long ab_launches_differ(const struct ab_result *ab, size_t nr_kernels, unsigned *base,
			unsigned *adv);

/* Every kernel's times in ab become its mean launch's (where launches
 * were counted). */
void ab_per_launch(struct ab_result *ab, size_t nr_kernels);

/*
 * Whether the advice cannot win on the rounds done so far: at least two
 * rounds, and the fastest advice run's GPU time (all kernels) above the
 * slowest baseline run's. Used to end a losing A/B early (the L2 step).
 */
int ab_clearly_slower(const struct ab_result *ab, unsigned done);

/* The median of v[0..n) (sorts v in place); NAN when n is 0. */
double ab_median(double *v, size_t n);

/* {"min","median","max"} of v[0..n) (sorts v), or JSON null when n is 0. */
json_t *ab_stats_json(double *v, size_t n);

/*
 * The verdict for one timing series (base[r], adv[r] for r < rounds; NAN or
 * <= 0 where a round measured nothing). The advice is kept (*kept = 1) only
 * when the outputs were equal (outputs_equal; else it is rejected with
 * reject_reason) and the median speedup base/adv exceeds 1 by more than the
 * spread of the baseline times, (max - min) / median; with fewer than two
 * baseline times the spread is unknown and the advice is not kept. Returns a
 * new object: baseline_ns, advice_ns, speedup, noise, kept, reason.
 */
json_t *ab_verdict_judge(const double *base, const double *adv, unsigned rounds,
			 int outputs_equal, const char *reject_reason, int *kept);

/* ab_verdict_judge with the output check of ab. */
json_t *ab_verdict(const double *base, const double *adv, unsigned rounds,
		   const struct ab_result *ab, int *kept);

/*
 * The verdict for launches timed inside one run in the pattern A B B A
 * (in-run verification, docs/cmd-profile.md): base[] are the A launches'
 * times and adv[] the B launches', each in launch order, so group g is
 * base[2g], adv[2g], adv[2g+1], base[2g+1]. The first group (module load,
 * cold caches) is left out when there are three or more. Per group the
 * speedup is (a1 + a4) / (b2 + b3), which cancels a linear drift of the
 * launches' work, and the baseline-against-baseline figure a1 / a4. The
 * noise is half the spread between the 10th and 90th percentiles of a1 / a4;
 * the advice is kept when the outputs were equal, there are at least three
 * groups, and the median speedup exceeds 1 by more than the noise.
 * *too_noisy is set when the noise exceeds max_noise: the kernel's launches
 * differ too much to be compared in-run (the caller then times it in
 * program runs). Returns a new object like ab_verdict_judge's, with
 * "groups" and "method": "in-run, ABBA launches".
 */
json_t *ab_verdict_abba(const double *base, size_t nr_base, const double *adv, size_t nr_adv,
			int outputs_equal, const char *reject_reason, double max_noise,
			int *kept, int *too_noisy);

/* Program-level figures: wall time and total GPU time speedups (new object). */
json_t *ab_program_json(const struct ab_result *ab);

/*
 * The figures of a verdict of ab_verdict*(): its median speedup and its
 * noise, NAN where it has none (no rounds measured). The one reader of
 * that object: callers never take it apart by key.
 */
double ab_verdict_median(json_t *verdict);

/*
 * A job's ranks (issue 29): each measured rank's verdict on one kernel,
 * gathered with ab_rank_verdict_add() and applied to the kernel's verdict
 * by ab_rank_verdicts_apply(): it gets "ranks" ([{"rank", "gpu", "verdict",
 * "not_timed"}]), and the advice is kept only where it holds on every rank
 * that launches the kernel: a rank where it is slower, or that could not be
 * timed, rejects it, and the reason names the rank.
 */
struct ab_rank_verdicts {
	json_t *arr;
	char *why_not;              /* the first rank that rejects, NULL none */
};
/* v: the rank's verdict (stolen), or NULL with not_timed saying why;
 * launched 0: the rank does not launch the kernel and has no say. */
void ab_rank_verdict_add(struct ab_rank_verdicts *rv, int rank, const char *gpu, json_t *v,
			int rank_kept, const char *not_timed, int launched);
/* Adds "ranks" to verdict and rejects it where a rank did; *kept follows. */
void ab_rank_verdicts_apply(struct ab_rank_verdicts *rv, json_t *verdict, int *kept);
double ab_verdict_noise(json_t *verdict);
/* The median program GPU speedup of ab_program_json()'s object, NAN if none. */
double ab_program_gpu_speedup(json_t *program);

#endif
