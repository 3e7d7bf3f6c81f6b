#ifndef CACHEADVISE_SOURCE_HINTS_H
#define CACHEADVISE_SOURCE_HINTS_H

#include <stddef.h>

/*
 * Source hints: for every load of a report, where it is in the user's
 * source (or, without -lineinfo, in the PTX), what the advice means there,
 * and whether source.patch rewrites it. Filled by source_hints_resolve()
 * while a report_input is built; every report format and the source patch
 * read them.
 */

struct report_input;

enum source_hint_status {
	SOURCE_HINT_NONE,           /* nothing to change in source */
	SOURCE_HINT_REWRITTEN,      /* source.patch rewrites the load's expression */
	SOURCE_HINT_NO_LINEINFO,    /* the PTX has no source lines */
	SOURCE_HINT_NO_SOURCE,      /* the source file cannot be read */
	SOURCE_HINT_OUTSIDE_ROOT,   /* the file is outside the source root (a system header) */
	SOURCE_HINT_NOT_REWRITTEN,  /* found, but not safely rewritable (message says why) */
	SOURCE_HINT_NO_SOURCE_FORM, /* the action has no source form (a strong .cg/.ca) */
};

struct source_hint {
	enum source_hint_status status;
	char *message;              /* one sentence for the user (owned) */
	char *path;                 /* source path as shown (relative to the source
				       root when under it), NULL without -lineinfo */
	long source_index;          /* into report_input.sources, -1 none */
	char *source_text;          /* the source line, NULL when unknown */
	char *rewritten;            /* the line after source.patch, NULL unless REWRITTEN */
	const char *helper;         /* helper used (static), NULL unless REWRITTEN */
	char *elem_type;            /* the expression's C++ element type, NULL when unknown */
	char *ptx_path;             /* modules/<id>.ptx, relative to the capture directory */
	char *ptx_text;             /* the PTX instruction line, trimmed, NULL when unknown */
	/* Where the load's expression is on its line (for grouping). */
	int has_span;
	size_t span_begin, span_end;
	/*
	 * A load in an inlined __device__ helper: the helper's name (owned)
	 * and the call site in the kernel's body; NULL and 0 otherwise.
	 */
	char *inlined_in;
	int call_line;
	/*
	 * Where source.patch gives the call site its own copy of the helper
	 * (the call sites of the helper want different forms): rewritten
	 * replaces line rewrite_line (the call, renamed to the copy), and
	 * insert_text (the copy, owned) goes after line insert_after. 0 and
	 * NULL when rewritten replaces the load's own line.
	 */
	size_t rewrite_line;
	char *insert_text;
	size_t insert_after;
	/*
	 * A Python file (a Triton tl.load, issue 27): rewritten, which may hold
	 * several lines, replaces lines rewrite_line..rewrite_last (the call may
	 * span several); 0 otherwise.
	 */
	size_t rewrite_last;
	/*
	 * A load the plan leaves as it is, in the same expression as an
	 * advised load that reads far more (a copy of a loop body the compiler
	 * peeled): the source patch rewrites the expression, so this load
	 * takes the advised load's action (static string), and the patch's
	 * own plan says so. NULL otherwise.
	 */
	const char *follows;
	/*
	 * Lines of other places the rewrite changes too, each replaced by its
	 * text (one or more lines; owned): a helper given the form as a
	 * template parameter (helper_form.h) changes its template line, and
	 * each call site passes its form. form_macros: the hint's file gets
	 * the form names (CA_FORM_*) beside the load helpers. NULL, 0 otherwise.
	 */
	struct source_edit *edits;
	size_t nr_edits;
	int form_macros;
};

/* One line of a source file that a rewrite replaces. */
struct source_edit {
	long source_index;          /* into report_input.sources */
	size_t line;
	char *text;                 /* the new line(s), without the last newline (owned) */
};

/* The line source.patch changes for h's load (line: the load's own). */
size_t source_hint_patch_line(const struct source_hint *h, int line);

/* Static names of the statuses, as in report.json ("rewritten", ...). */
const char *source_hint_status_name(enum source_hint_status s);

/*
 * Fills the hint of every load of in and in->sources (reading the source
 * files under in->lookup_root and the module PTX under in->dir). Files that
 * cannot be read are not an error: their loads say so. Never fails.
 */
void source_hints_resolve(struct report_input *in);

void source_hint_release(struct source_hint *h);

#endif
