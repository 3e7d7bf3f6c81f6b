#ifndef CACHEADVISE_PROFILE_H
#define CACHEADVISE_PROFILE_H

/*
 * The main job (DESIGN.md "The data flow"): intake, capture runs, analysis,
 * emit, verify. cmd_profile.c parses the options into struct
 * profile_options and calls profile_main(), which prints progress to
 * stderr and returns the exit status.
 */

struct profile_options {
	char **argv;                 /* program and its arguments */
	const char *out_dir;         /* NULL: ./cacheadvise-out/PROGRAM-TIMESTAMP */
	const char *kernels_regex;   /* NULL: every kernel */
	unsigned top;                /* kernels by GPU time (default 5) */
	unsigned max_loads;          /* loads per kernel measured (default 24) */
	double timeout;              /* seconds per run (default 300) */
	unsigned repeat;             /* A/B rounds of verification (default 5) */
	const char *compare_file;    /* an output file that must stay the same */
	const char *output_ignore;   /* stdout lines matching it are not compared (timings) */
	unsigned oracle_max;         /* 0: no oracle; else kernels with <= this many loads */
	const char *model;           /* "sector" or "classic" */
	const char *device_file;     /* --device FILE */
	const char *bypass_form;     /* "no_allocate" (default) or "cg" */
	int no_verify;
	int no_monitor;
	int no_l2;                   /* skip the persisting-L2 window step */
};

int profile_main(const struct profile_options *opt);

/*
 * The paths of the helpers installed beside the CLI: the injection library
 * (bin/../lib/libcacheadvise_inject.so). Returns a new string, or NULL with
 * the message set when it is missing.
 */
char *profile_injection_library(void);

#endif
