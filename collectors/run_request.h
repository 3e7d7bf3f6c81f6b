#ifndef CACHEADVISE_RUN_REQUEST_H
#define CACHEADVISE_RUN_REQUEST_H

/*
 * One run of the target program under the injection library
 * (collectors/inject/, docs/injection.md), as a typed request. This module
 * is the only place that turns a request into the CACHEADVISE_*
 * environment settings the injection library reads; `profile` and `run`
 * describe what they want here and never spell the variables.
 *
 * It also runs A/B pairs: rounds of a baseline run and an advice run,
 * alternating, with their kernel times and output checks
 * (analysis/ab_verdict.h judges them).
 */

#include <stddef.h>

#include "analysis/ab_verdict.h"
#include "analysis/output_check.h"
#include "collectors/events.h"
#include "collectors/runner.h"

struct run_request {
	const char *inject_path;   /* the injection library (CUDA_INJECTION64_PATH); required */
	const char *events_dir;    /* where it writes events.jsonl (and seen/); required */
	const char *subst_dir;     /* <module id>.ptx files that replace the modules; NULL: none */
	const char *l2_windows;    /* persisting-L2 window file to apply; NULL: none */
	int save_modules;          /* save every module's PTX under events_dir/seen/ */
	int metrics;               /* CUPTI counters per kernel */
	const char *metric_list;   /* with metrics: these metrics (comma-separated); NULL: the default set */
	int timing;                /* GPU time per kernel */
	int monitor;               /* read the monitor counters of instrumented PTX */
	const char *launch_plan;   /* a launch plan file (docs/injection.md); NULL: none */
	/* An MPI or Slurm job (collectors/launcher.h): the ranks measured
	 * (CACHEADVISE_RANKS, "all" or "0,2-3"); the others run with the
	 * advice's modules but unmeasured. NULL: every process. */
	const char *ranks;
	/* CUDA_VISIBLE_DEVICES of the run ("1": the GPU `profile --gpus` gave
	 * it); NULL: as the program inherits it. */
	const char *visible_devices;
	/* TRITON_CACHE_DIR of the run (a private one: the patched .py of a
	 * Triton program compiles afresh, issue 38); NULL: as inherited. */
	const char *triton_cache_dir;
};

/*
 * The "NAME=value" entries for the request, NULL-terminated (for
 * run_spec.env_add). Caller frees with run_request_env_free.
 */
char **run_request_env(const struct run_request *req);
void run_request_env_free(char **env);

/*
 * Runs spec (argv, log and stdout paths, timeout, stdio) with the
 * request's environment (spec->env_add is ignored). Where argv[0] is Open
 * MPI's mpirun, "-x NAME" for each of the request's variables goes before
 * the user's arguments, so every rank on every node gets them
 * (launcher_args). Returns what runner_run returns.
 */
int run_request_run(const struct run_request *req, const struct run_spec *spec,
		    struct run_result *res);

/*
 * Runs n requests at once, each (reqs[i], specs[i]) as run_request_run
 * runs it but in a thread of its own, and waits for them all: the
 * independent program runs `profile --gpus` spreads over a node's GPUs.
 * res[i] gets each run's result. Returns 0 when every run happened
 * (whatever its status), else the first run's error, with its message.
 */
int run_request_run_many(const struct run_request *reqs, const struct run_spec *specs,
			 struct run_result *res, size_t n);

/* events_dir/events.jsonl and events_dir/seen, as the injection library
 * writes them. Caller frees. */
char *run_request_events_file(const char *events_dir);
char *run_request_seen_dir(const char *events_dir);

/*
 * The injection library installed beside the CLI (exe_dir/../lib/cacheadvise/
 * libcacheadvise_inject.so: the build tree and an install alike), as an
 * absolute path the caller frees; NULL
 * with the message set (CA_E_INPUT) when it is missing.
 */
char *run_request_injection_library(const char *exe_dir);

/* A/B pairs: `rounds` times a baseline run, then an advice run. */
struct ab_pairs {
	const struct run_request *baseline;
	const struct run_request *advice;
	unsigned rounds;
	const char *name;                /* runs are "<name>-baseline" / "<name>-advice" */
	const char *const *kernels;      /* kernels timed, in the order of ab->base_ns */
	size_t nr_kernels;
	/* How outputs are compared (--strict-output, the tolerance, --compare
	 * FILE:f32); NULL: output_check_options_init()'s. */
	const struct output_check_options *output_check;
	/*
	 * Runs one request (filling in inject_path and events_dir, recording
	 * the run) and loads its events into ev; fills out (initialised by
	 * the caller) with what the output check compares: the run's stdout
	 * and stderr and the files it wrote. Returns 0 or a negative CA_E_*
	 * code.
	 */
	int (*run)(void *data, const char *label, const struct run_request *req,
		   struct run_events *ev, struct run_result *res, struct run_output *out);
	/* The error for a baseline run that did not succeed (message set). */
	int (*failed)(void *data, const char *label, const struct run_result *res);
	void *data;
	/*
	 * Earlier baseline runs of the same program (the capture's), judged
	 * with the pairs' own: with one round, two baselines are still there
	 * to tell a timing line from a result. They come first: the first is
	 * the output's reference (the profile's discovery run, the program's
	 * own code unchanged). NULL: none.
	 */
	const struct run_output *const *more_baselines;
	size_t nr_more_baselines;
	/*
	 * Called after each round with the rounds done so far (ab's series
	 * hold them at [k * pairs->rounds + r]); nonzero ends the pairs there,
	 * and ab then holds those rounds only (ab->rounds). NULL: all rounds.
	 */
	int (*enough)(const struct ab_result *ab, unsigned done, void *data);
};

/*
 * Runs the pairs (fewer when pairs->enough says so) and fills ab (initialised here; release with
 * ab_result_release). Once all runs are done, the advice runs' outputs are
 * judged against the baselines' (output_check_judge) into ab->output. An
 * advice run that fails, or output that changed ("unchecked" too with
 * strict_output), clears ab->outputs_equal with the reason; baselines whose
 * results differ from each other clear ab->baseline_stable. Returns 0, the
 * run callback's error, CA_E_INTERRUPTED, or pairs->failed()'s error when
 * a baseline run fails.
 */
int ab_pairs_run(const struct ab_pairs *pairs, struct ab_result *ab);

#endif
