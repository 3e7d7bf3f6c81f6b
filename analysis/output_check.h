#ifndef CACHEADVISE_OUTPUT_CHECK_H
#define CACHEADVISE_OUTPUT_CHECK_H

/*
 * The output check of A/B runs (DESIGN.md "Keeping advice"): is what a
 * variant run printed and wrote what the baseline runs printed and wrote?
 * Pure computation on texts and file hashes that the runs recorded
 * (collectors/file_snapshot.h finds the files); nothing here runs a program.
 *
 * stdout and stderr are compared line by line, their numbers within a
 * relative and an absolute tolerance (a re-JIT-compiled kernel may round
 * the last bits of a float differently: that is no change). A line whose
 * numbers differ between baseline runs beyond the tolerance is volatile (a
 * timing): it is compared with its numbers masked. A line whose words
 * differ between baselines is unstable: it is left out of the comparison
 * and listed, and the rest is still checked. Files are compared by their
 * bytes' hash, and where they differ and the runs kept their contents, as
 * text (numbers within the tolerance) or as float32/float64 values (each
 * within the tolerance). A file that differs between baselines beyond the
 * tolerance is unchecked. The output is "unchecked" only where nothing
 * stable is left to compare, never "changed" for what differs between
 * baselines.
 *
 * The first baseline is the reference: the run of the program's own,
 * unchanged code (the others only show what varies from run to run).
 *
 *     struct run_output *base[2] = ..., *adv[5] = ...;
 *     json_t *o = output_check_judge(base, 2, adv, 5, &opt, &ok);
 */

#include <regex.h>
#include <stddef.h>

#include <jansson.h>

#include "base/strbuf.h"

/* How a file's contents are compared where its bytes differ. */
enum output_file_kind {
	OUTPUT_FILE_AUTO,   /* text, else float32, else float64 where they read as such */
	OUTPUT_FILE_BYTES,  /* byte for byte only */
	OUTPUT_FILE_TEXT,   /* line by line, numbers within the tolerance */
	OUTPUT_FILE_F32,    /* little-endian float32 values, each within the tolerance */
	OUTPUT_FILE_F64,    /* little-endian float64 values */
};

/* "f32", "f64", "text", "bytes", "auto" */
const char *output_file_kind_name(enum output_file_kind k);

/*
 * A --compare operand: "FILE" (auto) or "FILE:f32", "FILE:f64", "FILE:text",
 * "FILE:bytes". Sets *path (a new string) and *kind. Returns 0, or
 * CA_E_USAGE for an empty path or an unknown kind after the last colon
 * that looks like one (a path may hold colons: "a:b.bin" stays a path).
 */
int output_compare_parse(const char *spec, char **path, enum output_file_kind *kind);

/* What the judge compares and how closely. */
struct output_check_options {
	int strict;         /* anything left out of the comparison stands against the advice */
	/* Numbers (in text lines and in float files) are equal when
	 * |a - b| <= atol + rtol * max(|a|, |b|): numpy.allclose's rule. */
	double rtol, atol;
	/* Files named with a kind (--compare FILE:f32); others are AUTO. */
	const char *const *format_paths;
	const enum output_file_kind *format_kinds;
	size_t nr_formats;
};

#define OUTPUT_RTOL_DEFAULT 1e-5
#define OUTPUT_ATOL_DEFAULT 1e-8

/* strict 0, the default tolerances, no named formats. */
void output_check_options_init(struct output_check_options *o);

/* A file that a run created, changed or removed (or the --compare file). */
struct output_file {
	char *path;         /* as found: relative to the working directory, or as named */
	int exists;         /* 0: the run removed it */
	long long size;
	char sha256[65];    /* "" when it could not be read */
	/* Its contents where the run kept a copy: in memory (data), or in a
	 * file read only where the hashes differ (data_path); both NULL: only
	 * the hash is known, and a difference is judged on it alone. Owned. */
	char *data;
	size_t data_len;
	char *data_path;
};

/* The most of a kept file the check reads (larger ones: hash alone). */
#define OUTPUT_DATA_MAX (64ULL << 20)

/* One run's output as the check sees it. */
struct run_output {
	int ok;             /* the run exited with status 0; failed runs are not judged */
	char *out, *err;    /* standard output and error (after --output-ignore), NULL unknown */
	struct output_file *files;
	size_t nr_files, alloc_files;
};

void run_output_init(struct run_output *o);
void run_output_release(struct run_output *o);
/* Adds a file (copies path; sha256 may be NULL). Returns it, so that the
 * caller may give it its contents (data, malloc'ed, owned by o). */
struct output_file *run_output_add_file(struct run_output *o, const char *path, int exists,
					long long size, const char *sha256);

/*
 * Whether two texts of one line each (no newline) say the same with their
 * numbers within the tolerance: words and punctuation equal, each number
 * (as output_mask_numbers() finds them) close to the other's. Returns 1 or
 * 0 and raises *max_abs / *max_rel to the largest differences seen.
 */
int output_line_close(const char *a, size_t alen, const char *b, size_t blen, double rtol,
		      double atol, double *max_abs, double *max_rel);

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
 *   {"status": "identical"|"within_tolerance"|"changed"|"unchecked",
 *    "rtol", "atol",             the tolerance used
 *    "max_difference": {"abs", "rel", "where"},  within_tolerance: the largest
 *    "volatile_lines": N,        lines compared with their numbers masked
 *    "volatile_examples": [...], the first few, "stdout line 3: Kernel : 0.012"
 *    "unstable_lines": N,        lines whose words differ between baselines:
 *    "unstable_examples": [...], left out of the comparison (the first few)
 *    "left_out": N,              unstable lines and unchecked files
 *    "files": [{"path", "status": "identical"|"within_tolerance"|"changed"|
 *               "unchecked"|"created"|"missing", "size", "sha256",
 *               ["compared_as": "f32"|"f64"|"text", "max_abs_difference",
 *                "max_rel_difference"], ["advice_size", "advice_sha256"]}],
 *    "reason": "..."}
 * *ok is 1 when the output does not stand against the advice: "identical"
 * or "within_tolerance", and "unchecked" or lines and files left out
 * unless opt->strict. opt NULL: output_check_options_init()'s.
 */
json_t *output_check_judge(const struct run_output *const *base, size_t nb,
			   const struct run_output *const *variant, size_t nv,
			   const struct output_check_options *opt, int *ok);

/*
 * Judges one run of changed code against the program's reference runs (the
 * monitor run, whose instrumented kernels may split their work otherwise)
 * as output_check_judge() judges a variant without opt->strict: numbers
 * within the tolerance, volatile lines with their numbers masked, what
 * differs between the references left out. Returns NULL where its output
 * stands with theirs, where it failed or where no reference ran to the
 * end; else a new string naming the first few places that differ, in
 * order (caller frees):
 *   "stdout line 12: 'sum 42' became 'sum 41', file 'out.bin'"
 * (a file "(not written)" or "(new)"; ", ..." after the fourth). opt NULL:
 * output_check_options_init()'s.
 */
char *output_check_changed(const struct run_output *const *ref, size_t nr,
			   const struct run_output *run, const struct output_check_options *opt);

/*
 * Of a judgement of output_check_judge(), as the capture's reader reads it
 * (analysis/capture_model.h): its status ("identical", "within_tolerance",
 * "changed", "unchecked"; static, "" when absent or unknown), its reason
 * (a new string, "" when none; caller frees), and whether the baselines
 * agreed on everything (not "unchecked", nothing left out).
 */
const char *output_check_status(json_t *judgement);
char *output_check_reason(json_t *judgement);
int output_check_baselines_agree(json_t *judgement);

#endif
