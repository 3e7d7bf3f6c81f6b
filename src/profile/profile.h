#ifndef CACHEADVISE_PROFILE_H
#define CACHEADVISE_PROFILE_H

/*
 * The profile library: `cacheadvise profile`'s work (DESIGN.md "The data
 * flow"), below the command (src/cmd_profile.c parses the options and
 * prints). profile_run() runs the steps in order
 *
 *   discover -> [monitor] -> capture -> [monitor] -> analyse -> emit
 *            -> verify -> L2 -> oracle   (each followed by emit)
 *
 * and writes the capture directory (emitters/capture_layout.h). It never
 * prints, exits or reads argv: it tells the caller what happens through
 * struct profile_progress.
 */

#include <stddef.h>

#include "analysis/output_check.h"

/*
 * Variants in one pass up to which auto loads a module per variant (each is
 * JIT-compiled at its first replay, about 50 ms for a kernel of 27 loads):
 * 64 holds records' 12 singles and 45 pairs. Above it the mask form: with
 * 302 modules (24 measured loads: 26 singles, 276 pairs) lavaMD's capture
 * run took 31 s and particlefilter's 77 s against 22 s and 58 s for whole
 * profiles that measured their pairs with the mask (H100, 2026-11-24).
 */
#define PROFILE_MAX_VARIANT_MODULES 64

struct profile_options {
	char **argv;                 /* program and its arguments */
	const char *tool_dir;        /* directory of the cacheadvise binary: the injection
				      * library is ../lib/ from it (collectors/run_request.h) */
	const char *out_dir;         /* NULL: ./cacheadvise-out/PROGRAM-TIMESTAMP */
	const char *kernels_regex;   /* NULL: every kernel */
	unsigned top;                /* kernels by GPU time (default 5) */
	double min_share;            /* percent of the GPU time below which a kernel is
	                              * not measured unless --kernels names it (default 1) */
	unsigned max_loads;          /* loads per kernel measured (default 24) */
	double timeout;              /* seconds per run (default 300) */
	unsigned repeat;             /* A/B rounds of verification (default 5) */
	const char *compare_file;    /* an output file that must stay the same */
	const char *build;           /* --build: the command that builds the program in
	                              * its source tree (sh -c), for the rebuild; NULL */
	enum output_file_kind compare_kind; /* how it is compared (--compare FILE:f32) */
	double output_rtol, output_atol; /* numbers equal within these (--output-rtol/-atol) */
	const char *output_ignore;   /* stdout and stderr lines matching it are not compared */
	int strict_output;           /* --strict-output: output "unchecked" rejects the advice */
	unsigned oracle_max;         /* 0: no oracle; else kernels with <= this many loads */
	const char *model;           /* "sector" or "classic" */
	const char *device_file;     /* --device FILE */
	const char *bypass_form;     /* "no_allocate" (default) or "cg" */
	int no_verify;
	int no_monitor;
	int no_l2;                   /* skip the persisting-L2 window step */
	int no_softcache;            /* skip the automatic software-cache step */
	double budget;               /* --budget: the profile's time in native runs (0: none) */
	int measure_runs;            /* --measure runs: one program run per variant */
	unsigned samples;            /* --samples: launches per kernel with counters (default 3) */
	int all_pairs;               /* --all-pairs: measure every pair, none assumed additive */
	int l2_priority;             /* measure each load's L2 eviction priorities in-run
				      * (issue 26; on by default since issue 39, off with
				      * --no-l2-priority) */
	int l2_priority_asked;       /* --l2-priority given: the pass is never skipped for
				      * the budget (issue 35) */
	/* --gpus: the GPUs (CUDA device numbers) the profile's independent
	 * runs spread over, nr_gpus of them (0: the program's default GPU); A/B
	 * comparisons and output references run on the first */
	const int *gpus;
	size_t nr_gpus;
	const char *ranks;           /* --ranks: an MPI/Slurm job's ranks measured; NULL: the
				      * default (collectors/launcher.h, profile.c) */
	/* --variant-form: 0 auto (a module per variant while a pass has at most
	 * PROFILE_MAX_VARIANT_MODULES variants, else the mask), 1 mask, 2 modules */
	int variant_form;
};

enum profile_step {
	PROFILE_STEP_SETUP,
	PROFILE_STEP_DISCOVER,
	PROFILE_STEP_MONITOR,
	PROFILE_STEP_CAPTURE,
	PROFILE_STEP_ANALYSE,
	PROFILE_STEP_VERIFY,
	PROFILE_STEP_L2,
	PROFILE_STEP_ORACLE,
	PROFILE_STEP_EMIT,
	PROFILE_STEP_DONE,
};

/* A static name of the step ("discover", "monitor", ...). */
const char *profile_step_name(enum profile_step step);

enum profile_event_kind {
	PROFILE_EVENT_RUN,           /* a program run starts or ended (label, counts) */
	PROFILE_EVENT_MESSAGE,       /* a sentence for the user (message) */
	PROFILE_EVENT_DONE,          /* the capture is written (dir, runs_done) */
	PROFILE_EVENT_INCOMPLETE,    /* stopped: the capture in dir is incomplete */
};

struct profile_event {
	enum profile_event_kind kind;
	enum profile_step step;
	const char *label;           /* the run ("baseline", "single 3", "monitor run") */
	/* PROFILE_EVENT_RUN comes twice a run: as it starts (run_ended 0) and
	 * once it has ended (run_ended 1, runs_done counts it). run_number is
	 * its number, from 1. */
	int run_ended;
	unsigned run_number;
	const char *message;         /* PROFILE_EVENT_MESSAGE; PROFILE_EVENT_DONE: the
					reports' cost line (what the profile cost, where
					the time went), NULL none */
	const char *dir;             /* the capture directory, once known */
	unsigned runs_done;          /* program runs finished so far */
	unsigned runs_planned;       /* runs of the current batch, 0 unknown */
	double elapsed;              /* seconds since profile_run began */
};

struct profile_progress {
	void (*report)(void *data, const struct profile_event *ev);
	void *data;
};

/*
 * Profiles opt->argv and writes the capture directory. progress may be
 * NULL. Returns 0 when the capture completes (even with no advice kept),
 * or a negative CA_E_* code with the message set: CA_E_NOGPU without a
 * usable GPU, CA_E_PROGRAM when the baseline run fails, CA_E_INTERRUPTED
 * after Ctrl-C (the capture is kept, marked "incomplete"), CA_E_USAGE when
 * the directory already holds a capture, CA_E_INPUT / CA_E_IO otherwise.
 */
int profile_run(const struct profile_options *opt, const struct profile_progress *progress);

/*
 * --device FILE and --compare FILE must be readable regular files, and the
 * device file a device model, before any GPU work (issue 16: a typo is an
 * input error, exit 2, on any machine). Returns 0, or the error with the
 * message set.
 */
int profile_check_files(const struct profile_options *opt);

#endif
