#ifndef CACHEADVISE_REGCACHE_PATCH_H
#define CACHEADVISE_REGCACHE_PATCH_H

#include <stddef.h>

#include <jansson.h>

#include "base/strbuf.h"

/*
 * The register-cache rewrite of a kernel the stencil detector flagged
 * (analysis/stencil_detect.h): its own stencil loop rewritten to read the
 * structure through device/regcache.cuh, one window load per thread and
 * the neighbours by warp shuffles, as regcache.patch in the capture
 * directory (a unified diff against the source root, like source.patch).
 *
 * The rewrite must keep every lane of a warp in the window's loads and
 * shuffles, so it changes control flow, and it is made only for the shape
 * it can prove right from the source:
 *
 *     for (T i = ... threadIdx.x ...; i < BOUND; i += STEP) {   grid-stride
 *             <declarations without memory accesses>
 *             for (int j = 0; j <= R; j++)                       the taps
 *                     acc += P[i + j];                           (or P[i] + P[i + 1] + ...)
 *             <the rest: stores>
 *     }
 *
 * becomes a loop that every lane of the warp runs while any lane has work
 * (i - lane < BOUND), with the window loaded at the top, P[i + j] read as
 * ca_rc.read(j), and the rest guarded by the original i < BOUND. Where R is
 * a run-time value the original loop is kept for radii the window cannot
 * hold (2k > 30). Anything else (another loop shape, memory accesses the
 * idle lanes would make, an early return) gets the text to paste instead,
 * with the reason. Nothing here is verified on the user's program: the
 * reports say so.
 */

struct source_file;
struct report_input;

enum regcache_rewrite_status {
	REGCACHE_REWRITE_PATCHED,   /* regcache.patch rewrites the loop */
	REGCACHE_REWRITE_PASTE,     /* the shape is not certain: text to paste, and why */
};

/* What the detector found, in source terms. */
struct regcache_target {
	const char *kernel;         /* the kernel's unqualified name ("stencil_global") */
	int param;                  /* the structure's parameter index */
	unsigned k;                 /* radius (a lower bound unless k_exact) */
	int k_exact;
	const size_t *lines;        /* the loads' source lines (1-based), repeats allowed */
	size_t nr_lines;
};

struct regcache_rewrite {
	enum regcache_rewrite_status status;
	char *reason;               /* PASTE: why not patched (owned); NULL for PATCHED */
	/* PATCHED: the rewritten loop; PASTE: the code to paste. Owned. */
	char *text;
	/* PATCHED: source lines first_line..last_line (1-based) become new_lines. */
	size_t first_line, last_line;
	char **new_lines;           /* each without its line terminator (owned) */
	size_t nr_new_lines;
};

/*
 * Rewrites t's loop in sf. Always fills *rw (release with
 * regcache_rewrite_release): PATCHED with the new lines, or PASTE with the
 * text and the reason.
 */
void regcache_rewrite_find(struct regcache_rewrite *rw, const struct source_file *sf,
			   const struct regcache_target *t);
/* A PASTE rewrite from the detector alone (no source to match), with reason. */
void regcache_rewrite_paste(struct regcache_rewrite *rw, const struct regcache_target *t,
			    const char *reason);
void regcache_rewrite_release(struct regcache_rewrite *rw);

/*
 * Appends to out the unified diff of the PATCHED rewrites of one file
 * (path relative to the source root, as "a/<path>", "b/<path>"): the loops
 * replaced, and `#include <cacheadvise/regcache.cuh>` (the header
 * installed with cacheadvise, include/cacheadvise/) added after the file's
 * last leading #include unless it has one. Returns the number of loops
 * rewritten (0: out unchanged).
 */
size_t regcache_patch_file(struct strbuf *out, const char *path, const struct source_file *sf,
			   const struct regcache_rewrite *const *rws, size_t n);

/*
 * The rewrites of a capture: one per kernel with a "register_cache"
 * section (hints from the stencil detector) whose loads have source lines.
 */
struct regcache_patch_kernel {
	const char *kernel;         /* mangled name (borrowed from the input) */
	const char *path;           /* source path as shown (borrowed), NULL unknown */
	struct regcache_rewrite rw;
};

struct regcache_patch {
	struct regcache_patch_kernel *kernels;
	size_t nr_kernels;
	struct strbuf diff;         /* regcache.patch; empty when nothing is patched */
};

/* Builds p from in (its sources as read for the source hints). Never fails. */
void regcache_patch_build(struct regcache_patch *p, const struct report_input *in);
void regcache_patch_release(struct regcache_patch *p);

/* The kernel's rewrite, NULL when there is none. */
const struct regcache_patch_kernel *regcache_patch_find(const struct regcache_patch *p,
							const char *kernel);

/* The sentence that says what the report shows for k: "regcache.patch rewrites ...
 * (not verified on this program)" or "paste ... : <reason>". Caller frees. */
char *regcache_patch_sentence(const struct regcache_patch_kernel *k);

/*
 * The rewrites as JSON (new reference): [{"kernel", "file", "status":
 * "patched"|"paste", "reason", "lines": [first, last], "text", "verified":
 * "not verified on this program", "patch": "regcache.patch"}].
 */
json_t *regcache_patch_to_json(const struct regcache_patch *p);

/*
 * For the report formats: the rewrite of kernel (mangled) under its
 * register-cache section, as text lines or HTML (the sentence, then the
 * rewritten loop or the text to paste); and report.json's
 * "register_cache_rewrites" (regcache_patch_to_json), set on doc where the
 * capture has any. Each builds the rewrites from in.
 */
void regcache_patch_text(struct strbuf *out, const struct report_input *in, const char *kernel);
void regcache_patch_html(struct strbuf *out, const struct report_input *in, const char *kernel);
void regcache_patch_json(json_t *doc, const struct report_input *in);

#endif
