#ifndef CACHEADVISE_SOURCE_PATCH_H
#define CACHEADVISE_SOURCE_PATCH_H

#include <stddef.h>

#include <jansson.h>

#include "base/strbuf.h"

/*
 * source.patch: a unified diff (paths "a/<file>" and "b/<file>", relative
 * to the report's source root; `cacheadvise apply` applies it itself,
 * emitters/rewrite/unified_diff.h, and `git apply` or `patch -p1` in that
 * directory would too) that rewrites every load whose hint is "rewritten" and adds,
 * once per file after its #include lines, the load helpers it uses
 * (emitters/rewrite/source_rewrite.h). Files the hints do not rewrite are left out.
 *
 * sources.json ("cacheadvise.sources/1", docs/cmd-apply.md): the source
 * root and the SHA-256 of every source file the hints read, taken when the
 * patch was written, and for the files the patch changes the SHA-256 they
 * will have once it is applied, so `cacheadvise apply` can refuse a file
 * that changed since and recognise one already patched.
 */

struct report_input;
struct sources_file;

/*
 * Appends the diff to out. Returns the number of source lines it rewrites
 * (0: the patch is empty and out is unchanged).
 */
size_t source_patch_write(const struct report_input *in, struct strbuf *out);

/* sources.json for this patch: sf (initialised) gets the root and every
 * file the patch may change (emitters/rewrite/sources_file.h). */
void source_patch_sources(const struct report_input *in, struct sources_file *sf);

/*
 * Checks that every patched file listed in sources.json (sf) still has its
 * recorded SHA-256 under root (NULL: the directory sf says
 * the files were read from, "read_from", else its "root").
 * Returns 0; 1 when every one of them already has the patch applied (its
 * SHA-256 is the recorded "patched_sha256"); or CA_E_INPUT naming the
 * first file that changed or is missing and saying what to do. name is the
 * document's path, for messages.
 */
int source_patch_check_sources(const struct sources_file *sf, const char *name,
			       const char *root);

/*
 * The sentence that puts the advice's verified speedup beside the source
 * patch's own (capture.json verification.source_patch, written by profile's
 * verify_patch step): "advice via `run --plan`: 1.78x; the source patch as
 * written: 1.00x (load 2 of decode_keys not rewritten: ...)". NULL when
 * the capture has no such verification. *patch_speedup (may be NULL) gets
 * the patch's speedup, NAN when not known or when the patch's plan is the
 * advice. Caller frees.
 */
char *source_patch_summary(const struct report_input *in, double *patch_speedup);

/* The program GPU-time speedup of the program rebuilt from source.patch
 * (verification.rebuilt, issue 38), NAN where it was not timed. */
double report_rebuilt_speedup(const struct report_input *in);

#endif
