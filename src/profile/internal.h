#ifndef CACHEADVISE_PROFILE_INTERNAL_H
#define CACHEADVISE_PROFILE_INTERNAL_H

/*
 * Private to src/profile/: the state one profile carries from step to step
 * (struct profile_ctx) and the services every step uses (context.c: notes,
 * progress, program runs, the capture document, substituted PTX). Each
 * step lives in its own file and is called by profile.c alone; steps do
 * not call each other.
 */

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/ab_verdict.h"
#include "analysis/advise.h"
#include "analysis/device_model.h"
#include "analysis/ptx.h"
#include "analysis/variants.h"
#include "collectors/events.h"
#include "collectors/run_request.h"
#include "collectors/runner.h"
#include "src/profile/profile.h"

struct plan;

struct profile_module {
	char *id;
	char *path;                 /* absolute path of modules/<id>.ptx, NULL without PTX */
	char *origin;
	struct ptx_module *pm;      /* parsed PTX, NULL without PTX */
	int has_ptx;                /* the driver saw PTX in it */
	char *load_path;            /* the file cuModuleLoad read, NULL for an image */
	const char *library;        /* "cuBLAS", ...: a library's module without PTX; NULL */
	json_t *json;               /* its capture.json "modules" object (borrowed) */
};

/*
 * One rank of an MPI or Slurm job as the in-run capture measured it
 * (issue 29): the L1 hits of each measured load's single, summed over the
 * launches it was sampled at, so that hit per launch can be compared across
 * ranks whatever their launch counts.
 */
struct profile_rank_hits {
	int rank;
	char *gpu;                  /* PCI bus id, NULL unknown */
	unsigned launches;          /* the rank's launches of the kernel in one run */
	double *hits;               /* per node: l1_hits summed over the samples */
	double *samples;            /* per node: launches sampled, 0 not measured */
};

struct profile_kernel {
	char *name;
	struct profile_module *module;
	const struct ptx_function *fn;
	struct variant_kernel vk;   /* measured and patchable loads */
	size_t left_out;            /* patchable loads beyond --max-loads */
	struct event_kernel disc;   /* what the discovery run saw (owns its json) */
	/* its launches in one process (run_events_launches_per_process): in a
	 * job, disc.launches counts every rank's, but a launch ordinal of a
	 * launch plan counts one process's */
	unsigned launches_per_process;
	json_t *counters;           /* variant label -> metrics object, as written (profile_set_counters) */
	struct capture_counters *tcounters; /* the same typed, read by the capture's reader */
	size_t nr_tcounters;
	double *hit;                /* per node: hit_i, NAN when not measured */
	int *hit_run;
	double *pair_hit;           /* n*n, hit_{i,j}, NAN when not measured */
	int *pair_run;
	double *pair_noise;         /* n*n, the negative hit_{i,j} measured before it was
				       resolved to 0 (count_resolve_noise), NAN none */
	json_t *allocs_used;        /* [{"param","alloc","launches"}] over all launches */
	json_t *l2_priority;        /* the kernel's "l2_priority" (--l2-priority), NULL none (owned) */
	struct profile_rank_hits *ranks; /* a job's measured ranks apart (owned) */
	size_t nr_ranks;
	unsigned long long advised; /* bit i: node i cached in the advice before verification */
	uint64_t *mon;              /* monitor counters summed over launches, NULL if none */
	size_t nr_mon;
	double monitor_gpu_ns;      /* GPU time of the instrumented kernel, summed */
	json_t *layout;             /* the module's counter layout (owned), NULL if none */
	json_t *json;               /* the kernel's capture.json object (owned by the capture) */
	struct capture_kernel typed;/* json as the capture's reader reads it (profile_kernel_read) */
	int has_typed;
};

struct profile_ctx {
	const struct profile_options *opt;
	/* How outputs are compared: opt's --strict-output, tolerance and
	 * --compare kind (format_paths points at opt->compare_file). */
	struct output_check_options output_check;
	enum output_file_kind compare_kind;
	unsigned long long kept_bytes;  /* output files kept under runs/files/ */
	const struct profile_progress *progress;
	enum profile_step step;
	char *dir;
	char *program;
	char *inject_path;          /* the injection library (absolute) */
	const char *ranks;          /* the ranks measured (CACHEADVISE_RANKS), NULL: all */
	/* A job's ranks whose events the discovery run read, in rank order,
	 * each with its GPU (PCI bus id, NULL unknown); none outside a job. */
	struct profile_job_rank {
		int rank;
		char *gpu;
	} *job_ranks;
	size_t nr_job_ranks;
	struct device_model dm;
	json_t *capture;
	json_t *runs_json;          /* capture's "runs" (borrowed from it) */
	json_t *notes_json;         /* capture's "notes" (borrowed): profile_note() */
	json_t *kernels_json;       /* capture's "kernels" (borrowed): profile_fill_kernels() */
	json_t *modules_json;       /* capture's "modules" (borrowed) */
	json_t *device_json;        /* capture's "device" (borrowed) */
	json_t *budget_skipped;     /* capture's "budget.skipped" (borrowed), NULL until a step is */
	json_t *verification;       /* capture's "verification" (borrowed), NULL until verified */
	/* The same runs typed (capture_run_from_json of each record as it is
	 * written; their sources point into runs_json), in the order run. */
	struct capture_run *runs;
	size_t nr_runs, alloc_runs;
	/* The runs the output check's baselines came from (baseline_check.runs);
	 * NULL until profile_baseline_check() wrote the check. */
	unsigned *reference_runs;
	size_t nr_reference_runs;
	char **gpu_names;           /* --gpus: each GPU's CUDA_VISIBLE_DEVICES value, nr_gpus of them */
	unsigned run_index;
	unsigned runs_done, runs_planned;
	/* set by a step that planned all its runs up front (the L2 window
	 * step): the A/B helpers leave runs_planned alone */
	int runs_planned_fixed;
	unsigned progress_mark;     /* runs_done at the last run-start event */
	double started;
	double unbudgeted;          /* seconds of steps --budget leaves out (the rebuild) */
	struct profile_module *modules;
	size_t nr_modules;
	struct profile_kernel *kernels;
	size_t nr_kernels;
	/* Every kernel the discovery run launched (capture.json "all_kernels"),
	 * busiest first: its name and launches. */
	struct profile_launched {
		char *name;
		unsigned launches;
	} *launched;
	size_t nr_launched;
	json_t *options_json;       /* capture's "options" (borrowed) */
	/* The in-run capture passes that ran a module per variant (their
	 * program launches ran the unpatched modules: "measure".passes). */
	unsigned *module_passes;
	size_t nr_module_passes;
	struct plan *plan;          /* the advice, once analysed (owned) */
	/* the plan source.patch writes, each load in a form its source can
	 * carry (advise_capture's source_plan), once analysed (owned) */
	struct plan *source_plan;
	struct analysis analysis;   /* the analysis the plan came from, once plan is set */
	int monitored;              /* the monitor run is done */
	unsigned monitor_run;       /* its index, where monitor_output_pending */
	int monitor_output_pending; /* its output awaits the reference runs (profile_monitor_output) */
};

/* ---- context.c: services of every step ---------------------------------- */

/* Seconds on a monotonic clock (c->started and elapsed times). */
double profile_now(void);
/* Tells the caller an event without a label or message (done, incomplete). */
void profile_report_event(struct profile_ctx *c, enum profile_event_kind kind);

/* Tells the caller a run starts or ended (label names it). */
/*
 * Tells the caller's progress a run of that label starts or has ended:
 * call it before profile_run_program() and after it, with the same label.
 * Which one it is follows from whether a run finished since the last call.
 */
void profile_progress(struct profile_ctx *c, const char *label);
/* Tells the caller a sentence (shown on the terminal, not in the capture). */
void profile_message(struct profile_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Sets the kernel's counters of a variant ("baseline", "all_bypassed",
 * "in_run_all", "baseline#2") to metrics (stolen): written as the kernel's
 * capture.json "counters", kept typed as the capture's reader reads them
 * (a refused object is noted and left untyped).
 */
void profile_set_counters(struct profile_ctx *c, struct profile_kernel *k, const char *variant,
			  json_t *metrics);
/*
 * The kernel's capture.json object read by the capture's reader, typed
 * (k->typed, its sources pointing into k->json): read anew at each call,
 * since the steps add to it. NULL, with a note, when the reader refuses it.
 */
const struct capture_kernel *profile_kernel_read(struct profile_ctx *c, struct profile_kernel *k);
/* The kernel's counters of a variant, NULL when not measured. */
const struct capture_counters *profile_counters(const struct profile_kernel *k,
						const char *variant);
/* Kernel k's entry for a job's rank (created, with its arrays per measured
 * load), with the rank's GPU and its launches of k taken from its events rev. */
struct profile_rank_hits *profile_rank_hits(struct profile_kernel *k, int rank,
					    struct run_events *rev);
/* Whether run `run` was an in-run capture pass with a module per variant
 * (its program launches ran the unpatched modules). */
int profile_pass_used_modules(const struct profile_ctx *c, unsigned run);
/* Sets capture.json's "verification" to ver (stolen), kept as c->verification. */
void profile_set_verification(struct profile_ctx *c, json_t *ver);
/* Appends a sentence to capture.notes (the reports show them). */
void profile_note(struct profile_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Runs the program once as run number c->run_index under the injection
 * library with req (its inject_path and events_dir are filled in here, and
 * its ranks, where it names none, are --ranks's) and
 * records it in capture.runs (and c->runs, typed). ev may be NULL; *run_index
 * (may be NULL) gets its index. Returns 0 or CA_E_IO/CA_E_INPUT.
 */
int profile_run_program(struct profile_ctx *c, const char *variant, const struct run_request *req,
			struct run_events *ev, struct run_result *res, unsigned *run_index);
/* The run recorded with that index, NULL when there is none. */
const struct capture_run *profile_run_record(const struct profile_ctx *c, unsigned index);
/*
 * What the output check compares of a recorded run: stdout and stderr
 * without the --output-ignore lines, and the files it wrote. out is
 * initialised by the caller. Returns 0, or CA_E_INPUT when run is NULL.
 */
int profile_run_output(struct profile_ctx *c, const struct capture_run *run, struct run_output *out);
/*
 * Runs n program runs at once (profile --gpus: run i on GPU i % nr_gpus),
 * each recorded as profile_run_program records one, in order. They may
 * write the same files, so their files are not kept or compared
 * ("files_compared": false): only measurement runs go here, never a run
 * an output is checked on. evs may be NULL, else n of them. Returns 0 or
 * the first error.
 */
int profile_run_programs(struct profile_ctx *c, size_t n, const char *const *variants,
			 const struct run_request *reqs, struct run_events *evs,
			 struct run_result *res);
/* The CA_E_PROGRAM error for the run just done: its status, last lines, log. */
int profile_run_failed(struct profile_ctx *c, const char *what, const struct run_result *res);
/* Rounds of baseline (base) against advice (adv) runs, recorded as runs. */
int profile_ab_runs(struct profile_ctx *c, const char *name, const struct run_request *base,
		    const struct run_request *adv, unsigned rounds, struct ab_result *ab);
/* profile_ab_runs that ends after two rounds where the advice is slower in
 * every round than the slowest baseline (ab_clearly_slower; ab->rounds says
 * how many ran). */
int profile_ab_runs_screened(struct profile_ctx *c, const char *name,
			     const struct run_request *base, const struct run_request *adv,
			     unsigned rounds, struct ab_result *ab);
/*
 * Whether a step of `runs` program runs fits in what is left of the
 * profile's budget (--budget, analysis/budget.h). When it does not, notes
 * that `what` is skipped, with the estimate, the budget and how to measure
 * it, records it in capture.json's "budget" section and returns 0.
 */
int profile_budget_allows(struct profile_ctx *c, const char *what, unsigned runs);
/* How many of `units` equal parts of `runs_each` program runs, after
 * `first_runs` more, fit in what is left of the budget (0..units); notes
 * nothing. */
size_t profile_budget_units(struct profile_ctx *c, unsigned first_runs, unsigned runs_each,
			    size_t units);

/* Writes capture.json with the given status. */
int profile_write_capture(struct profile_ctx *c, const char *status);
/*
 * Writes runs/<label>.subst/ with, for every module with PTX, the module as
 * the plan patches it (or a link to the unpatched copy) and returns the
 * directory (caller frees), or NULL with the message set.
 */
char *profile_write_substitutes(struct profile_ctx *c, const char *label, const struct plan *plan);

/* ---- profile.c: the context ---------------------------------------------- */

/* capture.json as it starts (c->capture and its borrowed parts): what was
 * run, where, on what GPU (c->dm), with which options. */
void profile_start_capture(struct profile_ctx *c);
/* Frees everything c owns (c itself is the caller's). */
void profile_ctx_release(struct profile_ctx *c);

/* ---- the steps, in the order profile.c runs them ------------------------ */

/* discover.c: the discovery run, modules, the kernels to measure. */
int profile_discover(struct profile_ctx *c);
/* discover.c: a module the discovery run saw: seen_dir/<id>.ptx moves to
 * modules/<id>.ptx and is parsed (a module whose PTX does not parse is
 * noted and kept without kernels). */
int profile_adopt_module(struct profile_ctx *c, const struct event_module *em, const char *seen_dir);
/* discover.c: takes a kernel the discovery run launched (ek's contents move
 * into it) for measuring; returns 0 (noted) when its module has no PTX. */
int profile_take_kernel(struct profile_ctx *c, struct event_kernel *ek, const struct run_events *ev);
/* discover.c: after an early monitor run, measure the busiest loads. */
void profile_choose_measured_loads(struct profile_ctx *c);
/* monitor.c: the instrumented run (exact per-load counts). */
int profile_monitor(struct profile_ctx *c);
/* The monitor run's output against the reference runs' (a note where it
 * differs), once both exist; called again when profile_baseline_check()
 * writes the reference. */
void profile_monitor_output(struct profile_ctx *c);
/* monitor.c: the monitor's counts, software-cache ranking and register-cache
 * hints in k->json. */
void profile_apply_monitor(struct profile_ctx *c, struct profile_kernel *k);
/* capture.c: the variants (hit_i, hit_{i,j}), in-run (--measure launches,
 * capture_launches.c) or one program run each (--measure runs), and the
 * kernels' entries. */
int profile_capture_variants(struct profile_ctx *c);
int profile_capture_runs(struct profile_ctx *c);
int profile_capture_launches(struct profile_ctx *c);
/* capture_launches.c: the parameters a kernel writes through, appended to
 * written (a JSON array, the launch plan's "written_params"); 0 with *why
 * (caller frees) when its launches cannot be replayed (own_modules: the
 * replays run modules of our own, launch_replay_written()). */
int profile_replay_written(const struct ptx_function *fn, int own_modules, json_t *written,
			   char **why);
/* verify_launches.c: verification inside one run (--measure launches):
 * A B B A launches, replays for kernels launched a few times, one
 * baseline/advice pair of program runs for the output check. */
int profile_verify_launches(struct profile_ctx *c);

/*
 * verify_launches.c: one A/B comparison inside one run, for verification
 * and the software cache. The kernels with want[i] run the baseline
 * (base_dir's PTX) and the advice (adv_dir's) chosen launch by launch
 * (A B B A), or timed replays of one launch when launched fewer than 16
 * times; the output check (one baseline and one advice run of the whole
 * program, STEP-baseline and STEP-advice) runs only when the in-run timing
 * would keep a kernel; a kernel that cannot be timed in-run is timed in
 * --repeat program runs (screened: profile_ab_runs_screened). Fills
 * verdicts[i] (ab_verdict JSON with "method") and kept[i] for each wanted
 * kernel, out (the output check, when checked_output) and program.
 */
struct in_run_ab {
	const char *step;          /* run labels: STEP-in-run, STEP-baseline, STEP-advice */
	const char *progress;      /* the progress line's words */
	const char *base_dir, *adv_dir;
	const int *want;           /* per c->kernels */
	int screened;
	json_t **verdicts;         /* per c->kernels, NULL where not wanted */
	int *kept;
	struct ab_result out;
	int checked_output;
	json_t *program;           /* ab_program_json of the runs timed */
};
int profile_ab_in_run(struct profile_ctx *c, struct in_run_ab *ab);
void in_run_ab_release(struct in_run_ab *ab, size_t nr_kernels);
/* capture.c: baseline_check in capture.json from the baseline runs given
 * (their outputs, and their counters where they have them). */
void profile_baseline_check(struct profile_ctx *c, json_t *baseline_runs);
/* capture_launches.c: baseline_check of in-run capture, from its reference
 * runs (discovery, and monitor or the first capture pass): after both. */
void profile_reference_check(struct profile_ctx *c);
void profile_fill_kernels(struct profile_ctx *c);
/* analyse.c: the analysis, once (c->plan, c->source_plan, c->analysis, graphs/). */
int profile_analyse(struct profile_ctx *c);
/* analyse.c: every file of the capture from c->analysis, c->plan and c->source_plan. */
int profile_emit(struct profile_ctx *c);
/* verify.c: A/B runs of the plan; drops what is not kept. */
int profile_verify(struct profile_ctx *c);
/* verify.c: drops a kernel's advice that the verification rejected from
 * the plan, and from the source plan where the two give the kernel the
 * same loads (the same advice, timed once); a kernel the source plan
 * gives loads of its own is verify_patch.c's to judge. */
void profile_drop_advice(struct profile_ctx *c, const char *kernel);
/* verify_patch.c: the plan source.patch delivers (the source plan, where
 * the patch rewrites its loads), timed like the advice; its kernels that
 * are not faster leave the source plan. */
int profile_verify_patch(struct profile_ctx *c);
/* rebuild.c: the program rebuilt from source.patch in a private copy, timed
 * (verification.rebuilt). */
int profile_rebuild(struct profile_ctx *c);
/* verify.c: per kernel, which measured loads the advice caches. */
void profile_note_advised(struct profile_ctx *c);
/* carveout.c: the carve-out a program sets on a kernel, timed against the
 * driver's default in one run (kernels without PTX too). */
int profile_carveout(struct profile_ctx *c);
/* softcache.c: the automatic software cache, rewritten, timed, kept or not. */
int profile_softcache(struct profile_ctx *c);
/* l2.c: persisting-L2 windows, advised and measured. */
int profile_l2(struct profile_ctx *c);
/* oracle.c: --oracle, every plan of the small kernels timed. */
int profile_oracle(struct profile_ctx *c);

#endif
