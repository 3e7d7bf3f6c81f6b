#ifndef CACHEADVISE_PROFILE_STEPS_H
#define CACHEADVISE_PROFILE_STEPS_H

/*
 * The steps of `profile`, shared between src/profile*.c. Private to src/.
 */

#include <stddef.h>

#include <jansson.h>

#include "analysis/device_model.h"
#include "analysis/ptx.h"
#include "analysis/variants.h"
#include "collectors/events.h"
#include "collectors/runner.h"
#include "src/profile.h"

struct profile_module {
	char *id;
	char *path;                 /* absolute path of modules/<id>.ptx, NULL without PTX */
	char *origin;
	struct ptx_module *pm;      /* parsed PTX, NULL without PTX */
};

struct profile_kernel {
	char *name;
	struct profile_module *module;
	const struct ptx_function *fn;
	struct variant_kernel vk;   /* measured and patchable loads */
	size_t left_out;            /* patchable loads beyond --max-loads */
	struct event_kernel disc;   /* what the discovery run saw (owns its json) */
	json_t *counters;           /* variant label -> metrics object */
	double *hit;                /* per node: hit_i, NAN when not measured */
	int *hit_run;
	double *pair_hit;           /* n*n, hit_{i,j}, NAN when not measured */
	int *pair_run;
	json_t *allocs_used;        /* [{"param","alloc","launches"}] over all launches */
	unsigned long long advised; /* bit i: node i cached in the advice before verification */
	uint64_t *mon;              /* monitor counters summed over launches, NULL if none */
	size_t nr_mon;
	double monitor_gpu_ns;      /* GPU time of the instrumented kernel, summed */
	json_t *layout;             /* the module's counter layout (owned), NULL if none */
	json_t *json;               /* the kernel's capture.json object (owned by the capture) */
};

struct profile_ctx {
	const struct profile_options *opt;
	char *dir;
	char *program;
	char *inject_path;
	struct device_model dm;
	json_t *capture;
	unsigned run_index;
	unsigned runs_done, runs_planned;
	double started;
	struct profile_module *modules;
	size_t nr_modules;
	struct profile_kernel *kernels;
	size_t nr_kernels;
	struct plan *plan;          /* the advice, once analysed (owned) */
	int monitored;              /* the monitor run is done */
};

void profile_progress(struct profile_ctx *c, const char *label);
/* Appends a sentence to capture.notes (the reports show them). */
void profile_note(struct profile_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Baseline-against-advice timing runs (DESIGN.md "Keeping advice"). */
struct ab_result {
	unsigned rounds;
	double *base_ns, *adv_ns;       /* per measured kernel and round: [k * rounds + r] */
	double *base_total, *adv_total; /* GPU time of all kernels, per round */
	double *base_wall, *adv_wall;   /* program wall time, per round */
	int outputs_equal;              /* every advice run printed what the baseline did */
	int baseline_stable;            /* the baseline runs agree with each other */
	const char *reject_reason;      /* why the output check failed */
};
/*
 * Runs the program `rounds` times alternating baseline (base_dir
 * substituted, kernel timing on) and advice (the same plus adv_env, which
 * may override CACHEADVISE_SUBST), and collects times and output checks.
 */
int profile_ab_runs(struct profile_ctx *c, const char *name, const char *base_dir,
		    char *const *adv_env, unsigned rounds, struct ab_result *ab);
void ab_result_release(struct ab_result *ab);
/* The verdict for one timing series: speedups, noise, kept and why. */
json_t *ab_verdict(const double *base, const double *adv, unsigned rounds,
		   const struct ab_result *ab, int *kept);
/* Program-level figures: wall time and total GPU time speedups. */
json_t *ab_program_json(const struct ab_result *ab);
/* Runs the program once as run number c->run_index with the injection
 * library and env_extra ("NAME=value", NULL-terminated); records it in
 * capture.runs. ev may be NULL. Returns 0 or CA_E_IO/CA_E_INPUT. */
int profile_run_program(struct profile_ctx *c, const char *variant, char *const *env_extra,
			struct run_events *ev, struct run_result *res, json_t **run_json);
int profile_run_failed(struct profile_ctx *c, const char *what, const struct run_result *res);
int profile_write_capture(struct profile_ctx *c, const char *status);
void profile_merge_device(struct device_model *dst, const struct device_model *probed);
void profile_kernel_release(struct profile_kernel *k);

/*
 * Writes runs/<label>.subst/ with, for every module with PTX, the module as
 * the plan patches it (or a link to the unpatched copy) and returns the
 * directory (caller frees), or NULL with the message set.
 */
char *profile_write_substitutes(struct profile_ctx *c, const char *label, const struct plan *plan);

int profile_discover(struct profile_ctx *c);
int profile_capture_variants(struct profile_ctx *c);
int profile_monitor(struct profile_ctx *c);
/* After an early monitor run: measure the loads with the most traffic. */
void profile_choose_measured_loads(struct profile_ctx *c);
void profile_fill_kernels(struct profile_ctx *c);
/* Adds the monitor run's per-load counts, efficiencies, data structures and
 * the software-cache ranking to k->json. */
void profile_apply_monitor(struct profile_ctx *c, struct profile_kernel *k);
int profile_analyse_and_emit(struct profile_ctx *c);
int profile_verify(struct profile_ctx *c);
/* Records, per kernel, which measured loads the advice caches (before
 * verification may drop it): the oracle compares against this. */
void profile_note_advised(struct profile_ctx *c);
/* --oracle: measures every plan of the kernels with at most opt->oracle_max
 * measured loads and records the best against the advice. */
int profile_oracle(struct profile_ctx *c);
/* L2 persistence (issue 8): advise windows from the capture, measure each
 * variant against the baseline, keep the best that wins. */
int profile_l2(struct profile_ctx *c);

#endif
