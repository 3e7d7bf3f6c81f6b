#ifndef CACHEADVISE_SOURCE_MACRO_H
#define CACHEADVISE_SOURCE_MACRO_H

#include <stddef.h>

#include "emitters/rewrite/source_rewrite.h"

/*
 * Loads read through a function-like macro (the rewrite layer's source
 * model): the .loc of such a load is the line that uses the macro, and the
 * read is in the #define, in the same file or a header:
 *
 *     #define LOAD_ROW(m, cols, r, c) ((m)[(size_t)(r) * (cols) + (c)])
 *     float v = LOAD_ROW(rows, nrows, c, r);
 *
 * Where the macro's whole body is one indexed read of one of its
 * parameters (an lvalue), the use is wrapped where it stands, so the form
 * is this use's alone and the macro stays as it is:
 * ca_ld_l2ef(&LOAD_ROW(rows, nrows, c, r)). Anything else is named, not
 * rewritten.
 */

struct source_file;

struct source_macro {
	char *name;                 /* owned */
	char **params;              /* parameter names (owned) */
	size_t nr_params;
	char *body;                 /* the replacement text, trimmed (owned) */
	size_t line;                /* line of the #define, from 1 */
	int continued;              /* the definition goes on past its line (a '\') */
};

/* The #define of the function-like macro name in sf: 1 and *m (release
 * with source_macro_release), 0 when sf does not define it so. */
int source_macro_find(const struct source_file *sf, const char *name, struct source_macro *m);
void source_macro_release(struct source_macro *m);

/* The index of the parameter whose element the whole body reads ("m" of
 * "((m)[i])", "m[i]"), -1 when the body is anything else. */
int source_macro_indexed_param(const struct source_macro *m);

/*
 * Looks on line[0, len) for the use of a function-like macro defined in
 * one of files[0, nr) that passes param as the argument the macro's body
 * reads. Returns 1 with *rw (status OK: the use wrapped, its address
 * taken; elem_type from param_type; release it); 0 when the line uses no such macro with param;
 * -1 with *why (caller frees) when it does but the use cannot be wrapped
 * (a body that is not one indexed read, a definition over several lines,
 * two uses on the line).
 */
int source_macro_read(const struct source_file *const *files, size_t nr, const char *line,
		      size_t len, int in_comment, const char *param, const char *param_type,
		      struct source_rewrite *rw, char **why);

#endif
