#ifndef CACHEADVISE_REBUILD_TIMING_H
#define CACHEADVISE_REBUILD_TIMING_H

#include <jansson.h>
#include <stddef.h>

#include "analysis/capture_model.h"
#include "collectors/events.h"

/*
 * `cacheadvise check`'s timed part: the rebuilt program against the
 * capture's baseline (the original program, its unpatched PTX substituted
 * as verification does), in alternating rounds (analysis/ab_verdict.h).
 * Prints nothing.
 */

struct rebuild_timing_options {
	const char *dir;            /* the capture directory (its modules/) */
	/* The baseline: the original program and its arguments as the user typed
	 * them (check --baseline). Never the capture's program: nothing named
	 * in a capture is run (docs/security.md). */
	char **baseline_argv;
	const char *const *kernels; /* the kernels the plan changes */
	size_t nr_kernels;
	char **argv;                /* the rebuilt program and its arguments */
	/* Where the rebuilt program is and runs (a private copy of the sources,
	 * emitters/rewrite/rebuild_copy.h): the file argv[0] names (NULL:
	 * found from argv[0]), the folder it starts in and its
	 * TRITON_CACHE_DIR (NULL: ours, as inherited). */
	const char *rebuilt_path;
	const char *rebuilt_cwd;
	const char *rebuilt_triton_cache;
	/* The baseline as built, its own code (the rebuild of a private copy:
	 * both sides compiled as the user compiles them, so the figure is what
	 * apply changes), not the capture's unpatched PTX JIT-compiled as
	 * verification runs it. */
	int baseline_as_built;
	unsigned repeat;            /* rounds */
	double timeout;             /* seconds a run */
	const char *exe_dir;        /* where the injection library is found */
};

struct rebuild_timing_kernel {
	const char *name;           /* borrowed from the options */
	double median;              /* median kernel speedup */
	double noise;               /* the baseline's spread */
	int kept;
};

struct rebuild_timing {
	struct rebuild_timing_kernel *kernels;
	size_t nr_kernels;
	double program_speedup;     /* median program GPU time speedup; NAN when the two
				       programs launched a kernel a different number of
				       times (different work: their GPU times do not compare) */
	/* The first kernel launched a different number of times in a round by
	 * the original and the rebuilt program (borrowed), and how often; NULL
	 * when every kernel was launched alike. Its kernel figures, and every
	 * kernel's then, compare the mean launch. */
	const char *launches_differ;
	unsigned base_launches, rebuilt_launches;
	int kept;                   /* every kernel kept its speedup */
	char *tmp_left;             /* a temporary directory that could not be removed, or NULL */
};

/* Returns 0 with r filled, or CA_E_* (CA_E_NOGPU without a GPU); release r
 * either way. */
int rebuild_timing_run(const struct rebuild_timing_options *o, struct rebuild_timing *r);

/* The original command itself as the baseline (argv copied, argv[0]
 * apart: freed as rebuild_timing_baseline_argv's answer is). */
char **rebuild_timing_same_argv(char *const *argv);
void rebuild_timing_release(struct rebuild_timing *r);

/*
 * Runs the rebuilt program (o->argv, o->timeout, o->exe_dir) once under the
 * injection library, untimed and as built, and reads its events into ev
 * (initialised by the caller, who releases it): which module each kernel
 * it launched came from, which tells the compile of a Triton kernel it
 * loaded from the others in Triton's cache (issue 35). *tmp_left gets a
 * temporary directory that could not be removed (caller frees), else NULL.
 * Returns 0, CA_E_NOGPU without a GPU, CA_E_PROGRAM when the run failed,
 * or another CA_E_* with the message set.
 */
int rebuild_timing_loaded(const struct rebuild_timing_options *o, struct run_events *ev,
			  char **tmp_left);

/*
 * --baseline's command as baseline_argv: one word runs with the rebuilt
 * program's arguments (rebuilt, argv[0] first), several are the whole
 * command (split at spaces; no shell). NULL-ended, or NULL for an empty
 * command; the caller frees the array and its first element.
 */
char **rebuild_timing_baseline_argv(const char *cmd, char *const *rebuilt);

#endif
