#ifndef CACHEADVISE_REWRITE_BACKEND_H
#define CACHEADVISE_REWRITE_BACKEND_H

#include <stddef.h>

/*
 * Source rewriting's back-ends, one per language the user writes, behind
 * one interface (STYLE.md "Back-ends as tables of functions"; as
 * emitters/report.h's formats and analysis/solver.h's solvers). A row names
 * the language, recognises its files and turns the decided loads into the
 * rewritten lines that source_patch.c writes as hunks of the one unified
 * diff (source.patch). Adding a language is adding a file and a row.
 *
 * source_hints_resolve() drives them: every load is located
 * (source_locate.h) and given to the first row that recognises its file
 * (find); where its source line is there, that row decides it (decide);
 * then each row, in table order, rewrites its decided loads together
 * (rewrite: conflicts, templates, helper copies, the lines).
 *
 * The register-cache row rewrites a stencil kernel's loop, not a load: it
 * has no per-load hooks and writes its own diff (regcache.patch,
 * regcache_patch.h) from the capture's register-cache sections.
 */

struct report_input;
struct rewrite_resolver;
struct rewrite_cand;
struct strbuf;

struct rewrite_backend {
	const char *name;           /* "cuda", "triton", "regcache" */
	const char *language;       /* for the user: "CUDA C++", ... */
	/* Whether path (as the PTX's line info names it, NULL: none) is its file. */
	int (*recognises)(const char *path);
	/* One located load: what its source form is and where its expression is. */
	void (*find)(struct rewrite_resolver *r, struct rewrite_cand *c);
	/* One load whose source line is there: hint status and message. */
	void (*decide)(struct rewrite_resolver *r, struct rewrite_cand *c);
	/* All the loads, once: its own (c->backend) become rewritten lines. */
	void (*rewrite)(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n);
	/* A diff of its own (NULL: its lines go into source.patch) appended to
	 * out; returns the bytes appended (0: nothing rewritten). */
	size_t (*patch)(const struct report_input *in, struct strbuf *out);
};

extern const struct rewrite_backend rewrite_backend_cuda;     /* rewrite_cuda.c */
extern const struct rewrite_backend rewrite_backend_triton;   /* rewrite_triton.c */
extern const struct rewrite_backend rewrite_backend_regcache; /* regcache_patch.c */

/* The table, in the order the back-ends rewrite; NULL-terminated. */
extern const struct rewrite_backend *const rewrite_backends[];

/* The first row that recognises path (the CUDA row takes what no other
 * row does, a load without line info among them). Never NULL. */
const struct rewrite_backend *rewrite_backend_for(const char *path);

/* The row named name, NULL when none is. */
const struct rewrite_backend *rewrite_backend_find(const char *name);

#endif
