#ifndef CACHEADVISE_PATCHED_PTX_H
#define CACHEADVISE_PATCHED_PTX_H

#include <stddef.h>

#include "analysis/plan.h"
#include "base/strbuf.h"

struct ptx_module;
struct report_input;
struct intake;

/*
 * patched/<id>.ptx: each module's PTX with the plan's load actions applied
 * (analysis/ptx.h ptx_rewrite_loads; nothing else in the text changes), the
 * PTX `cacheadvise run --plan` substitutes and the verification measured.
 */

/*
 * Appends to out the PTX text with the plan's edits for module id applied
 * (entries with that id and entries without one). name is for messages.
 * Returns the number of edits applied (0: out gets the text unchanged), or
 * a negative CA_E_INPUT when the PTX cannot be parsed or an edit is illegal
 * for its load (message names the module and the load).
 */
int patched_ptx_render(const char *name, const char *text, size_t len, const char *id,
		       const struct plan *plan, struct strbuf *out);

/*
 * The one writer of plan-patched PTX (`profile`'s substitutes, `run
 * --plan`, patched/ of a capture). Appends to out the parsed module pm
 * with the plan's edits for module id applied. Returns the number of edits
 * (0: out is unchanged), or a negative CA_E_INPUT when an edit is illegal
 * for its load.
 */
int patched_ptx_render_module(const struct ptx_module *pm, const char *id,
			      const struct plan *plan, struct strbuf *out);

/*
 * Writes path (atomically) with module pm as plan patches it (plan may be
 * NULL: no edits). A module the plan leaves unchanged gets a symbolic link
 * to unpatched when that is given, and no file otherwise; a patched one
 * replaces whatever path was (a link to unpatched is never written
 * through). Returns the
 * number of edits (>= 0), or a negative CA_E_* code with the message set.
 */
int patched_ptx_write_module(const struct ptx_module *pm, const char *id,
			     const struct plan *plan, const char *path, const char *unpatched);

/*
 * Writes <out_dir>/patched/<id>.ptx (atomically) for every module of the
 * capture that has PTX under in->dir, and removes nothing else. A module
 * whose PTX no longer matches its id (the file was edited) is CA_E_INPUT.
 * Returns the number of files written, or a negative CA_E_* code.
 */
int patched_ptx_write_all(const struct report_input *in, const char *out_dir);

/*
 * `run --plan`: writes <dir>/<id>.ptx, the file the injection library
 * substitutes (docs/injection.md), for every module of in with PTX that
 * the plan patches; *patched counts them. Returns 0 or a negative CA_E_*
 * code with the message set.
 */
int patched_ptx_write_intake(const struct intake *in, const struct plan *plan, const char *dir,
			     size_t *patched);
/* The plan's "l2_windows" section as <dir>/l2_windows.json, its path in
 * *path (the caller frees); *path NULL and 0 when the plan has none. */
int patched_ptx_write_l2_windows(const struct plan *plan, const char *dir, char **path);

#endif
