#ifndef CACHEADVISE_REBUILD_CHECK_H
#define CACHEADVISE_REBUILD_CHECK_H

#include <stddef.h>

#include "base/strbuf.h"
#include "collectors/events.h"
#include "collectors/intake.h"
#include "collectors/rebuild_timing.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/sources_file.h"

/*
 * `cacheadvise check`'s static part: does a program rebuilt from the
 * capture's source.patch carry every advised load's form (each load
 * matched by kernel, source line and order: analysis/rebuild_match.h)?
 * Prints nothing: the lines come back as text.
 */

struct rebuild_input {
	struct report_input in;     /* the capture */
	struct intake rb;           /* the rebuilt program */
	struct strbuf diff;         /* source.patch, empty without one */
	/* Which compile of each Triton kernel was read and why, where there
	 * was a choice: lines for the check's output (empty: none) */
	struct strbuf notes;
	int no_patch;               /* the capture has no readable source.patch */
	int python;                 /* the program is Python: rb holds its Triton
				       kernels once rebuild_input_read_triton read them */
	/* sources.json as source.patch was written with it (empty when missing
	 * or unreadable): why each load it leaves alone was left out */
	struct sources_file written;
};

/*
 * Reads the capture in dir (checked as report does), its source.patch
 * and the rebuilt program; the sources are read under source_root when
 * given (as apply --source-root does), else where the line info says;
 * python (may be NULL) rewrites Triton calls as report_input_options says.
 * A Python program (python3 prog.py) is its Triton kernels, which
 * rebuild_input_read_triton reads: ri->python is set and ri->rb left empty.
 * Returns 0 or CA_E_*; release ri either way.
 */
int rebuild_input_load(struct rebuild_input *ri, const char *dir, const char *program,
		       const char *source_root, const char *python);
void rebuild_input_release(struct rebuild_input *ri);

/*
 * Reads into ri->rb, for each kernel the plan changes, one compile of it in
 * Triton's cache (intake_triton_compiles), chosen by identity, never by
 * time, since a rerun in the same environment leaves the original compile
 * beside the patched one (issue 35): the one a run of the program loaded,
 * where loaded (may be NULL) holds the events of such a run (the module id
 * each kernel was launched from, as the injection library identifies the
 * cubin it was given); else the only one; else the one whose PTX carries
 * the advised forms, or, where none does, the newest, with a note that the
 * choice cannot be told. ri->notes names the compile read where there was
 * a choice. Returns 0 or CA_E_* (an unreadable compile).
 */
int rebuild_input_read_triton(struct rebuild_input *ri, const struct run_events *loaded);

/*
 * A Python program's kernels are compiled into Triton's cache, where
 * compiles of the original may lie beside them: with run (check without
 * --static), the rebuilt program is run once under the injection library
 * to see which compile it loads (issue 35), then rebuild_input_read_triton.
 * Without a GPU there is no such run: the compiles are chosen by the
 * advised forms, and the timed part says that it needs a GPU. *tmp_left:
 * a temporary directory the run could not remove (caller frees), or NULL.
 */
int rebuild_input_run_triton(struct rebuild_input *ri, const struct rebuild_timing_options *run,
			     char **tmp_left);

/*
 * The timed check's lines (`check` without --static): each kernel's median
 * speedup of the rebuilt program over t->repeat alternating rounds (the
 * baseline as t says), kept or
 * lost, and the program's GPU time against the advice's verified figure,
 * with RESULT lines for scripts; appended to out.
 */
void rebuild_check_timed_text(const struct report_input *in, const struct rebuild_timing *tr,
			      const struct rebuild_timing_options *t, struct strbuf *out);

/* The names of the kernels whose loads the plan changes (an array of
 * *nr borrowed names; caller frees the array). */
const char **rebuild_changed_kernels(const struct report_input *in, size_t *nr);

struct rebuild_check_counts {
	size_t checked, carried, lost, left_out;
};

/*
 * Appends to out ri->notes, then one line per advised load of the plan:
 * found / wrong form / missing, with where it was looked for, then a line
 * of totals. Loads
 * the patch does not rewrite are expected to be left as they were, with
 * the reason sources.json recorded when the patch was written (the sources
 * may be patched by now, which would change what their hint reads), else
 * their hint's.
 */
void rebuild_check_static(const struct rebuild_input *ri, struct rebuild_check_counts *sr,
			  struct strbuf *out);

/* The same under a "STATIC CHECK" heading, the capture's and the binary's
 * names made printable, and a line where the plan changes no load. */
void rebuild_check_static_printable(const struct rebuild_input *ri,
				    struct rebuild_check_counts *sr, struct strbuf *out);

/* 0 when every advised load rewritten by source.patch carries its form,
 * else CA_E_INPUT saying how many of program's do not. */
int rebuild_check_verdict(const struct rebuild_check_counts *sr, const char *program);

/*
 * check's timed part, after the static check passed: the rebuilt program
 * (t's argv and where it runs; t->dir, repeat, timeout, exe_dir set)
 * against the original, baseline as typed (--baseline, split at spaces)
 * or, where NULL, the command original itself. Appends its text to out.
 * Returns 0, 5 when the rebuilt program lost the speedup, or a CA_E_*
 * (CA_E_NOGPU prefixed with what the static check said). *tmp_left: a
 * folder it could not remove (caller frees), or NULL.
 */
int rebuild_check_timed(const struct rebuild_input *ri, const struct rebuild_timing_options *t,
			const char *baseline, char *const *original, struct strbuf *out,
			char **tmp_left);

#endif
