#ifndef CACHEADVISE_SOURCE_LOCATE_H
#define CACHEADVISE_SOURCE_LOCATE_H

#include <stddef.h>

#include "emitters/rewrite/source_file.h"
#include "emitters/rewrite/source_rewrite.h"
#include "emitters/rewrite/source_types.h"

/*
 * Locating a PTX load in the user's source (the rewrite layer's own header,
 * included by source_hints.c and the back-ends alone): the load's file in
 * report_input.sources, its line and column, the inlined-at call line, the
 * PTX line it came from; the kernel's definition (whose template arguments
 * the mangled name gives); the module's PTX and its model. The resolver
 * caches what it read; source_locate_release frees it.
 */

struct report_input;
struct report_kernel;
struct rewrite_backend;
struct ptx_module;

/* Per-load working state while hints are resolved. */
struct rewrite_cand {
	struct report_kernel *k;
	struct report_load *l;
	const char *helper;         /* what the plan asks in source, NULL: no change */
	int ok;                     /* the expression was found and can be wrapped */
	char *why;                  /* why not (owned) */
	struct source_rewrite rw;
	/* In an inlined helper (hint.inlined_in): its definition. */
	int inl;
	struct source_kernel fn;
	/*
	 * The PTX's inlining chain of the load's line (ptx_load.inlined_at,
	 * innermost call first; borrowed from the module's model) and the
	 * files, in in->sources, of its innermost call (the helper's caller)
	 * and of its outermost (the kernel's body); NULL, 0 and -1 when the
	 * line is the kernel's own.
	 */
	const struct ptx_call_site *at;
	size_t nr_at;
	long direct_source, call_source;
	/* The call sites of the helper want different forms: this call site
	 * gets its own copy of the helper. */
	int variant;
	/* The back-end of the load's file (rewrite_backend_for); py: Triton's. */
	const struct rewrite_backend *backend;
	int py;
	/* The element type is a kernel template's parameter, this instantiation's
	 * argument: the rewrite changes every instantiation (check_templates) */
	int from_template;
	/* Read through a local pointer into the parameter alias_of: its name
	 * and declared type (find_through_alias), owned; NULL otherwise. */
	char *alias, *alias_type, *alias_of;
};

struct rewrite_kernel_def {
	long source;
	char *name;
	int found;                  /* source_file_find_kernel's answer */
	struct source_kernel def;
};

struct rewrite_resolver {
	struct report_input *in;
	struct rewrite_kernel_def *defs;
	size_t nr_defs;
	struct { const char *id; const char *ptx; struct source_file *sf;
		 struct ptx_module *pm; } *mods;
	size_t nr_mods;
	/* what the sources say a struct's member or a type name is */
	struct source_types types;
};


void source_locate_init(struct rewrite_resolver *r, struct report_input *in);
void source_locate_release(struct rewrite_resolver *r);

/* The index of file in in->sources, read from the source root (or where the
 * file's directory was moved to) on first sight. Never fails: an unreadable
 * file has file == NULL. */
long source_locate_file(struct report_input *in, const char *file);

/* The module's PTX as text (*ptx: modules/<id>.ptx, relative to the capture
 * directory) and its model; NULL when unreadable. Owned by r. */
struct source_file *source_locate_ptx(struct rewrite_resolver *r, const char *id, const char **ptx);
const struct ptx_module *source_locate_module(struct rewrite_resolver *r, const char *id);

/* The kernel k's definition in source `source` (found: 1), cached in r. */
struct rewrite_kernel_def *source_locate_kernel(struct rewrite_resolver *r, long source,
						 const struct report_kernel *k);

/* Fills c's hint with where its load is: PTX path and text, column,
 * inlined-at call line, source path and text. */
void source_locate_load(struct rewrite_resolver *r, struct rewrite_cand *c);

/* The kernel's async copies from its module's PTX (report_kernel.async_copies). */
void source_locate_async_copies(struct rewrite_resolver *r, struct report_kernel *k);

#endif
