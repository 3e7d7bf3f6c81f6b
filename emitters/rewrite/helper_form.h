#ifndef CACHEADVISE_HELPER_FORM_H
#define CACHEADVISE_HELPER_FORM_H

#include <stddef.h>

#include "base/strbuf.h"

/*
 * The CUDA back-end's rewrite of an inlined __device__ helper whose uses
 * (its call sites, from the PTX's inlined_at) are advised different forms
 * and which cannot be copied beside its calls (it is in a header of the
 * source tree): the helper gets the form as a template parameter with a
 * default that keeps the form as built,
 *
 *     template <typename T, int CA_FORM = CA_FORM_AS_BUILT>
 *
 * its load's line becomes a compile-time dispatch on it (`if constexpr`,
 * C++17, nvcc's default since CUDA 11) to the load helpers, the last
 * branch the line as written, and each advised call site passes its own
 * form (`load_at<float, CA_FORM_L2EF>(src, i)`); calls no advised load
 * comes from keep the default. The form names are written once into the
 * helper's file, beside the load helpers (helper_form_macros_write).
 */

struct rewrite_resolver;
struct rewrite_cand;

/*
 * Rewrites the helper of c (an inlined load of cands, advised, one call
 * deep) and every use of it among cands: their hints get the helper's
 * dispatching line (rewritten), its template line and their call lines
 * (hint.edits). Returns 1; or 0, with *why (caller frees) where it cannot
 * and can say why, NULL where the refusal is the caller's to name (a
 * helper two calls deep, a call in a file outside the source root).
 */
int helper_form_rewrite(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n,
			struct rewrite_cand *c, char **why);

/* Appends the form names (#define CA_FORM_AS_BUILT 0, CA_FORM_NA, ...,
 * CA_FORM_L2EF, ...), guarded, unless existing_text (may be NULL) defines
 * them already. Returns 1 when written. */
int helper_form_macros_write(struct strbuf *out, const char *existing_text);

/* "CA_FORM_L2EF" for plan form "L2::evict_first"; NULL when the form has
 * no load helper. Caller frees. */
char *helper_form_name(const char *form);

#endif
