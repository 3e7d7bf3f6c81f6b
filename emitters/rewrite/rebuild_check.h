#ifndef CACHEADVISE_REBUILD_CHECK_H
#define CACHEADVISE_REBUILD_CHECK_H

#include <stddef.h>

#include "base/strbuf.h"
#include "collectors/intake.h"
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
	int no_patch;               /* the capture has no readable source.patch */
	/* sources.json as source.patch was written with it (empty when missing
	 * or unreadable): why each load it leaves alone was left out */
	struct sources_file written;
};

/*
 * Reads the capture in dir (checked as report does), its source.patch
 * and the rebuilt program; the sources are read under source_root when
 * given (as apply --source-root does), else where the line info says;
 * python (may be NULL) rewrites Triton calls as report_input_options says.
 * A Python program (python3 prog.py) is its Triton kernels: for each
 * kernel the plan changes, the newest compile in Triton's cache
 * (intake_triton_compiles' first), as the rerun left it.
 * Returns 0 or CA_E_*; release ri either way.
 */
int rebuild_input_load(struct rebuild_input *ri, const char *dir, const char *program,
		       const char *source_root, const char *python);
void rebuild_input_release(struct rebuild_input *ri);

/* The names of the kernels whose loads the plan changes (an array of
 * *nr borrowed names; caller frees the array). */
const char **rebuild_changed_kernels(const struct report_input *in, size_t *nr);

struct rebuild_check_counts {
	size_t checked, carried, lost, left_out;
};

/*
 * Appends to out one line per advised load of the plan: found / wrong form
 * / missing, with where it was looked for, then a line of totals. Loads
 * the patch does not rewrite are expected to be left as they were, with
 * the reason sources.json recorded when the patch was written (the sources
 * may be patched by now, which would change what their hint reads), else
 * their hint's.
 */
void rebuild_check_static(const struct rebuild_input *ri, struct rebuild_check_counts *sr,
			  struct strbuf *out);

/* 0 when every advised load rewritten by source.patch carries its form,
 * else CA_E_INPUT saying how many of program's do not. */
int rebuild_check_verdict(const struct rebuild_check_counts *sr, const char *program);

#endif
