#ifndef CACHEADVISE_PATCHED_PTX_H
#define CACHEADVISE_PATCHED_PTX_H

#include <stddef.h>

#include "analysis/plan.h"
#include "base/strbuf.h"

struct report_input;

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
 * Writes <out_dir>/patched/<id>.ptx (atomically) for every module of the
 * capture that has PTX under in->dir, and removes nothing else. A module
 * whose PTX no longer matches its id (the file was edited) is CA_E_INPUT.
 * Returns the number of files written, or a negative CA_E_* code.
 */
int patched_ptx_write_all(const struct report_input *in, const char *out_dir);

#endif
