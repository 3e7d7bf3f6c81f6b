#ifndef CACHEADVISE_SOURCE_APPLY_H
#define CACHEADVISE_SOURCE_APPLY_H

#include <stddef.h>

#include <jansson.h>

#include "base/strbuf.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/sources_file.h"
#include "emitters/rewrite/unified_diff.h"

/*
 * `cacheadvise apply`'s work: source_apply_prepare() reads and checks the
 * capture, reads its source.patch and sources.json (or makes them again
 * from the sources as they are now, writing them unless it is a dry run),
 * parses the patch once (emitters/rewrite/unified_diff.h), finds the source root,
 * checks that the files the patch changes are the ones the capture saw,
 * that none is reached through a symbolic link and, unless it is a dry
 * run, that they can be written; source_apply_write() then applies exactly
 * the hunks it parsed, to every file or to none. No other program reads
 * the patch (no git, no patch(1)). Prints nothing: what the command says
 * is in struct source_apply.
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
	struct unified_diff diff;   /* the patch as parsed: what is applied */
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

/*
 * After source_apply_prepare() answered 0 with SOURCE_APPLY_TODO: applies
 * res->diff to the files under res->root. Each file is read once (not
 * through a link), checked against its sources.json SHA-256, patched in
 * memory (every context and removed line must match where its hunk
 * says), and the result checked against "patched_sha256". Unless dry_run,
 * each result is then written to a new temporary file beside its file
 * (mkstemp, the file's permissions) and, once every file is written, all
 * are renamed into place; should a rename fail, the files already renamed
 * get their old contents back. Returns 0, or CA_E_INPUT / CA_E_IO with the
 * message set and no source file changed.
 */
int source_apply_write(const struct source_apply *res, int dry_run);

/*
 * apply's guard: every file diff changes is one sf (sources.json, read
 * from sources_name) records as patched. Returns 0, or CA_E_INPUT naming
 * the first file that is not ("'P' changes 'F', which 'S' does not record
 * as a file of the advice"). patch_name is the patch in messages.
 */
int source_apply_check_files(const struct unified_diff *diff, const struct sources_file *sf,
			     const char *patch_name, const char *sources_name);

void source_apply_release(struct source_apply *res);

#endif
