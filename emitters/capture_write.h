#ifndef CACHEADVISE_CAPTURE_WRITE_H
#define CACHEADVISE_CAPTURE_WRITE_H

#include <jansson.h>

#include "analysis/plan.h"

struct report_input;

/*
 * The files a capture directory holds besides capture.json, modules/ and
 * runs/ (DESIGN.md "Files"): plan.json, source-plan.json (the plan
 * source.patch writes), patched/<id>.ptx, report.txt,
 * report.html, report.json, hints.sarif, source.patch and sources.json
 * (the SHA-256 of every source file source.patch changes, which
 * `cacheadvise apply` checks); paths come from emitters/capture_layout.h.
 * `profile` analyses once and calls capture_write_analysed() after the
 * analysis and again after each later step (verification, L2, oracle), so
 * the reports show them; `report --all` re-writes them from a finished
 * capture. Every file is written to
 * a temporary name and renamed: a crash never leaves a half-written one.
 */

struct capture_write_options {
	/* Where the program's sources are now (for hints and source.patch);
	 * NULL: where the PTX's -lineinfo says they were built. */
	const char *source_root;
};

/*
 * Writes every artifact into dir, which already holds modules/ as capture
 * names them. capture is capture.json's document and plan the advice to
 * write (after verification: only what was kept; NULL: the analysis'
 * plan); the per-load decisions shown beside it come from
 * advise_capture(capture) (analysis/advise.h), recomputed here. An
 * "incomplete" capture that cannot be analysed is written without advice.
 * Nothing is stolen. Returns 0, or a negative CA_E_* code with the message
 * naming the file: CA_E_IO when a file cannot be written, CA_E_INPUT when
 * the capture is inconsistent (a complete capture the analysis rejects, a
 * module's PTX missing or edited, a plan action illegal for its load).
 */
int capture_write_all(const char *dir, json_t *capture, const struct plan *plan);

/*
 * The same with the analysis supplied: analysis is advise_capture()'s
 * result for capture (not stolen; NULL: the capture could not be
 * analysed) and is written as it is, never recomputed. plan is the advice
 * to write (required), source_plan the plan source.patch writes (NULL:
 * plan's loads). Returns as capture_write_all.
 */
struct analysis;
int capture_write_analysed(const char *dir, json_t *capture, const struct analysis *analysis,
			   const struct plan *plan, const struct plan *source_plan,
			   const struct capture_write_options *opt);

/* The same with options (may be NULL). */
int capture_write_all_opts(const char *dir, json_t *capture, const struct plan *plan,
			   const struct capture_write_options *opt);

/* The same from an input already built; files go to in->dir. */
int capture_write_input(const struct report_input *in);

/*
 * Whether the capture directory dir, perhaps from someone else, may be
 * re-written (`report --all`): each file written above (plan.json,
 * source-plan.json, the reports, source.patch, sources.json,
 * regcache.patch, patched/<id>.ptx) must be a regular file or absent, and
 * patched/ a folder or absent, none of them a symbolic link, which would
 * send the write outside dir, nor a FIFO that would stall it. Returns 0,
 * or CA_E_INPUT naming the first that is not ("refusing to write in the
 * capture 'c': 'c/report.txt' is a symbolic link ..."). Checks before
 * anything is written.
 */
int capture_write_check_dir(const char *dir);

/*
 * `report --all`: capture_write_check_dir, then the capture's lock
 * (CAPTURE_LAYOUT_LOCK, base/file_lock.h) held in lock, so that one --all
 * at a time re-writes the files. Returns 0 or the error, message set.
 */
struct file_lock;
int capture_write_lock(struct file_lock *lock, const char *dir);

/*
 * The inputs `report -o` may not replace, added to g: the files of the
 * capture directory dir at its top level (own, the format's own report
 * file, may be re-written) and everything in its folders.
 */
struct output_guard;
void capture_write_guard(struct output_guard *g, const char *dir, const char *own);
/*
 * Refuses output when it is one of the inputs of g: CA_E_INPUT with the
 * message set (the capture dir's files named as such), else 0.
 */
int capture_write_check_output(const struct output_guard *g, const char *output, const char *dir);

#endif
