#ifndef CACHEADVISE_PYTHON_REWRITE_H
#define CACHEADVISE_PYTHON_REWRITE_H

#include <stddef.h>

/*
 * Triton tl.load calls rewritten in their Python source (issue 27):
 * emitters/rewrite/tl_load_rewrite.py, embedded in cacheadvise, run with a python3
 * and its ast module. A call is named by the line and column Triton's PTX
 * .loc gives it (the column of its "(").
 */

struct tl_load_edit {
	int line, column;           /* 1-based */
	/* Each keyword: set == 0 leaves it as it is; set == 1 with value NULL
	 * removes it (Triton's default); else it becomes value. */
	int set_eviction_policy;
	const char *eviction_policy; /* "evict_first", "evict_last" */
	int set_cache_modifier;
	const char *cache_modifier;  /* ".ca", ".cg" */
};

enum tl_load_status {
	TL_LOAD_REWRITTEN,
	TL_LOAD_UNCHANGED,           /* the call already says so */
	TL_LOAD_NOT_FOUND,           /* why says why */
};

struct tl_load_result {
	enum tl_load_status status;
	char *why;                   /* TL_LOAD_NOT_FOUND (owned) */
	size_t first, last;          /* TL_LOAD_REWRITTEN: lines first..last (1-based) ... */
	char *text;                  /* ... become text (lines joined by '\n', owned) */
};

/* Whether a program is a Python interpreter ("python3", "/usr/bin/python3.11"):
 * its kernels are then Triton's, its source Python. */
int python_program(const char *program);

/*
 * The Triton form of a plan action (docs/plan-json.md), exact or none:
 * "L1::evict_first+L2::evict_first" is eviction_policy="evict_first" (the
 * PTX Triton writes for it), "L1::evict_last+L2::evict_last" evict_last,
 * "bypass" cache_modifier=".cg", "cache" ".ca", "default" neither. Fills
 * e's keywords and returns 1, or 0 when Triton has no such form.
 */
int tl_load_form_of_action(const char *action, struct tl_load_edit *e);

/*
 * The Python that runs the rewrite helper: named (--python) when not NULL,
 * else $CACHEADVISE_PYTHON when set and not empty, else "python3" (found
 * in PATH). Never a path a capture names: a capture may come from someone
 * else, and nothing named in it is ever executed (docs/security.md).
 */
const char *python_rewrite_interpreter(const char *named);

/*
 * Whether python runs and has its ast module (`doctor`): 0, or CA_E_IO
 * with the message set.
 */
int python_rewrite_check(const char *python);

/*
 * Rewrites the calls edits name in source (a Python file's bytes, in its
 * own encoding and line ends: a BOM, a PEP 263 coding line, CR line ends)
 * with python (NULL: python_rewrite_interpreter(NULL)). out[i] is edit i's
 * result; edits whose lines overlap share one replacement, whose first and
 * last count the file's lines at '\n' and whose text is bytes of the
 * file's encoding. Returns 0, or CA_E_IO when python cannot be run or fails
 * (the message, one line, says why: no python3, the file does not decode
 * or parse, is nested too deeply).
 */
int tl_load_rewrite(const char *python, const char *source, const struct tl_load_edit *edits,
		    size_t nr, struct tl_load_result *out);

void tl_load_result_release(struct tl_load_result *r);

#endif
