#ifndef CACHEADVISE_SOURCE_APPLY_H
#define CACHEADVISE_SOURCE_APPLY_H

#include <stddef.h>

#include <jansson.h>

#include "base/strbuf.h"
#include "emitters/report_input.h"
#include "emitters/sources_file.h"

/*
 * `cacheadvise apply`'s work short of running `git apply`
 * (collectors/patch_tool.h): reads and checks the capture, reads its
 * source.patch and sources.json (or makes them again from the sources as
 * they are now, writing them unless it is a dry run), finds the source
 * root, checks that the files the patch changes are the ones the capture
 * saw and, unless it is a dry run, that they can be written. Prints
 * nothing: what the command says is in struct source_apply.
 */

struct source_apply_options {
	const char *dir;            /* the capture directory */
	const char *source_root;    /* --source-root, NULL: as recorded */
	const char *python;         /* --python, NULL: report_input_options says */
	int dry_run;                /* write nothing */
};

enum source_apply_made {
	SOURCE_APPLY_READ,          /* source.patch read as the capture wrote it */
	SOURCE_APPLY_MADE,          /* there was none: made from the sources now */
	SOURCE_APPLY_REMADE,        /* it was empty: made from the sources now */
};

enum source_apply_state {
	SOURCE_APPLY_TODO,          /* patch is to be applied in root */
	SOURCE_APPLY_ALREADY,       /* it is already applied in root */
	SOURCE_APPLY_NO_CHANGES,    /* the patch is empty and the plan changes no load */
};

/* A load the plan changes that the (empty) patch leaves, and why. */
struct source_apply_skip {
	char *label;                /* the kernel (owned) */
	unsigned ordinal;
	const char *path;           /* source path as shown, NULL: none recorded */
	int line;
	const char *action;
	const char *reason;
};

struct source_apply {
	struct report_input in;
	enum source_apply_made made;
	size_t remade_lines;        /* SOURCE_APPLY_REMADE: lines the patch rewrites */
	enum source_apply_state state;
	struct source_apply_skip *skips;
	size_t nr_skips;
	struct strbuf patch;
	char *name;                 /* the patch, for messages ("'DIR/source.patch'") */
	const char *root;           /* where it applies */
	struct sources_file sources;
	char *patch_path;
	char *sources_path;
};

/*
 * Fills *res (release it with source_apply_release() whatever the
 * answer). Returns 0, or a negative CA_E_* with the message set; what
 * *res already says (made, skips) is still to be shown then.
 */
int source_apply_prepare(const struct source_apply_options *o, struct source_apply *res);
void source_apply_release(struct source_apply *res);

#endif
