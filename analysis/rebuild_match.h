#ifndef CACHEADVISE_REBUILD_MATCH_H
#define CACHEADVISE_REBUILD_MATCH_H

#include <stddef.h>

#include "analysis/ptx.h"

/*
 * Finding an advised load again in a program rebuilt from the patched
 * sources (`cacheadvise check`). Ordinals can move after a rebuild (the
 * compiler may order, merge or split loads differently), so a load is
 * matched by kernel, source file and line, and its order among the loads
 * of that line. The line is the load's anchor: the call site in the
 * kernel's body for a load inside an inlined helper (the patch may route it
 * through a copy of the helper and a load helper, so the rebuilt load's own
 * line says little), else its own line; the original anchor is moved
 * through source.patch's hunks to its line in the patched file. A load of
 * Python source (a Triton kernel's tl.load) is matched by its column too:
 * the tl.load calls of one line differ by it, and the rewrite of one call
 * can make the compiler add, merge or reorder the loads of another (a load
 * that was shared with an earlier line is no longer when one of them gets
 * an eviction policy); the column is moved through the rewritten line.
 */

/*
 * The line old_line of the file named file (a path as the PTX names it,
 * matched to the diff's "+++ b/PATH" by path suffix) has in the file once
 * the unified diff is applied. A line the diff replaces maps to the line
 * replacing it. Lines of files the diff does not change stay.
 */
size_t rebuild_diff_new_line(const char *diff, const char *file, size_t old_line);

/*
 * The column that the character at column (0-based) of old_line of file
 * has once the diff is applied: the same where the diff does not replace
 * the line, else where it lands when the old line is aligned with the line
 * replacing it (their longest common subsequence). A character the diff
 * removed, or a line longer than 1,024 bytes, keeps its column.
 */
int rebuild_diff_new_column(const char *diff, const char *file, size_t old_line, int column);
/* Whether the diff replaces old_line of file (a '-' line of one of its hunks):
 * a load there is one the patch rewrote, whatever the sources say now. */
int rebuild_diff_replaces_line(const char *diff, const char *file, size_t old_line);

/*
 * 1 when ld carries the form that action writes (L1::no_allocate,
 * L1::evict_last, L1::evict_first, .cs, .lu, .ca, .cg; "default": neither a
 * cache operator nor an L1 priority), else 0.
 */
int rebuild_load_has_form(const struct ptx_load *ld, enum load_action action);

/* The anchor of a load: file and line as described above (0 unknown). */
const char *rebuild_anchor(const struct ptx_load *ld, int *line);

enum rebuild_status {
	REBUILD_FOUND,          /* found, with the advised form */
	REBUILD_WRONG_FORM,     /* found, in another form */
	REBUILD_MISSING,        /* no load at that line and order */
	REBUILD_NO_LINEINFO,    /* the original or rebuilt PTX has no source lines */
};

struct rebuild_check {
	enum rebuild_status status;
	const struct ptx_load *found;   /* the rebuilt load, NULL unless found */
	int line;                       /* the anchor line looked at in the patched file */
	int column;                     /* and column (Python sources), else 0 */
	int merged;                     /* found, though the place has fewer loads than the
					   capture's (every one in the advised form) */
	size_t order;                   /* the load's order among its anchor's loads */
};

/* Static names ("found", "wrong form", "missing", "no line info"). */
const char *rebuild_status_name(enum rebuild_status s);

/*
 * Looks for load ordinal of orig (the captured kernel) in rebuilt (the
 * same kernel in the rebuilt program, a function of rebuilt_module) through
 * diff (source.patch, may be NULL or empty: nothing moved), and whether it
 * carries action's form and, unless l2 is L2_PRIORITY_NONE, an L2 cache
 * hint whose policy is a createpolicy of that priority
 * (ptx_load_l2_priority).
 */
void rebuild_match_load(const struct ptx_function *orig, unsigned ordinal,
			const struct ptx_module *rebuilt_module,
			const struct ptx_function *rebuilt, const char *diff,
			enum load_action action, enum l2_priority l2, struct rebuild_check *out);

#endif
