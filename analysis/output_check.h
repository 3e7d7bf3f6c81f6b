#ifndef CACHEADVISE_OUTPUT_CHECK_H
#define CACHEADVISE_OUTPUT_CHECK_H

/*
 * The output check of A/B runs (DESIGN.md "Keeping advice"): is what a
 * variant run printed and wrote what the baseline runs printed and wrote?
 * Pure computation on texts and file hashes that the runs recorded
 * (collectors/file_snapshot.h finds the files); nothing here runs a program.
 *
 * stdout and stderr are compared line by line. A line that differs between
 * baseline runs is volatile (a timing): it is compared with its numbers
 * masked. A line whose text differs between baselines beyond its numbers, a
 * stream whose line count differs, or a file whose bytes differ between
 * baselines shows that the program's results differ from run to run: the
 * output is "unchecked" there, never "changed".
 *
 *     struct run_output *base[2] = ..., *adv[5] = ...;
 *     json_t *o = output_check_judge(base, 2, adv, 5, strict, &ok);
 */

#include <regex.h>
#include <stddef.h>

#include <jansson.h>

#include "base/strbuf.h"

/* A file that a run created, changed or removed (or the --compare file). */
struct output_file {
	char *path;         /* as found: relative to the working directory, or as named */
	int exists;         /* 0: the run removed it */
	long long size;
	char sha256[65];    /* "" when it could not be read */
};

/* One run's output as the check sees it. */
struct run_output {
	int ok;             /* the run exited with status 0; failed runs are not judged */
	char *out, *err;    /* standard output and error (after --output-ignore), NULL unknown */
	struct output_file *files;
	size_t nr_files, alloc_files;
};

void run_output_init(struct run_output *o);
void run_output_release(struct run_output *o);
/* Adds a file (copies path; sha256 may be NULL). */
void run_output_add_file(struct run_output *o, const char *path, int exists, long long size,
			 const char *sha256);

/*
 * Appends line[0..len) to out with every number replaced by '#': decimal
 * integers and floats with an optional sign and exponent (-1.5e-03, .5,
 * 12.), and hex (0x7ffd). Digits inside a word (sm_90, x86_64, md5) stay.
 */
void output_mask_numbers(const char *line, size_t len, struct strbuf *out);

/*
 * Does the line (no newline) read as a timing: a word such as "time",
 * "elapsed", "ms", "sec", "GB/s" among its words? Such a line is accepted
 * with its numbers masked even where the baselines happened to agree.
 */
int output_line_is_timing(const char *line, size_t len);

/*
 * text without the lines that ignore matches (each line is matched without
 * its newline, so ^ and $ anchor at the line). Returns a new string (caller
 * frees); ignore NULL keeps every line.
 */
char *output_filter_lines(const char *text, const regex_t *ignore);

/*
 * Judges variant runs against baseline runs. Runs with ok == 0 are left
 * out. With nv == 0 it classifies the baselines only ("identical" or
 * "unchecked"), as the capture's baseline check does.
 *
 * Returns a new object:
 *   {"status": "identical"|"changed"|"unchecked",
 *    "volatile_lines": N,        lines compared with their numbers masked
 *    "volatile_examples": [...], the first few, "stdout line 3: Kernel : 0.012"
 *    "unstable_lines": N,        lines whose text differs between baselines
 *    "files": [{"path", "status": "identical"|"changed"|"unchecked"|"created"|"missing",
 *               "size", "sha256", ["advice_size", "advice_sha256"]}],
 *    "reason": "..."}
 * *ok is 1 when the output does not stand against the advice: "identical",
 * or "unchecked" unless strict.
 */
json_t *output_check_judge(const struct run_output *const *base, size_t nb,
			   const struct run_output *const *variant, size_t nv, int strict, int *ok);

#endif
