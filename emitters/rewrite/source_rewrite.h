#ifndef CACHEADVISE_SOURCE_REWRITE_H
#define CACHEADVISE_SOURCE_REWRITE_H

#include <stddef.h>

#include "analysis/ptx.h"
#include "base/strbuf.h"

struct source_file;

/*
 * Rewriting one advised global load in CUDA C++ source: on the source line
 * the load comes from, find the one expression that reads the kernel
 * parameter the load's address derives from (a[i], p->x, p[i].x, *q,
 * *(q + k), s.a[i]) and wrap it in a load helper whose inline PTX carries
 * the advised L1 form: a[i] -> ca_ld_na(&a[i]), *(q + k) -> ca_ld_na(q + k).
 *
 * Conservative by design: a line that reads the parameter more than once,
 * or reads it in a form this matcher cannot wrap (a compound assignment, an
 * increment, a double dereference, a dereference it does not recognise), is
 * not rewritten, and the reason says why. A wrong rewrite is worse than
 * none.
 */

enum source_rewrite_status {
	SOURCE_REWRITE_OK,          /* exactly one read, and it can be wrapped */
	SOURCE_REWRITE_NOT_FOUND,   /* the line does not read the parameter directly */
	SOURCE_REWRITE_AMBIGUOUS,   /* the line reads it more than once */
	SOURCE_REWRITE_UNSUPPORTED, /* one read, in a form that cannot be wrapped */
};

struct source_rewrite {
	enum source_rewrite_status status;
	char *reason;               /* why not (owned), NULL when OK */
	size_t nr_reads;            /* reads of the parameter found on the line */
	/* For OK: the read spans [begin, end) of the line. The rewrite deletes
	 * open_del bytes at begin and inserts "<helper>(" (plus "&" when
	 * take_address), and inserts ")" at end. */
	size_t begin, end;
	size_t open_del;
	int keeps_close;            /* the expression's own ")" closes the helper's call */
	int take_address;
	char *elem_type;            /* the element type when the source says it
				       ("float"), NULL when it does not (members,
				       typedefs, templates); owned */
	char *member;               /* the member read, when the read goes through
				       exactly one (p[i].m, p->m): its type is the
				       struct's to tell (source_member_type); owned */
};

/*
 * Looks for reads of the parameter called param in line[0, len). in_comment
 * says whether the line starts inside a block comment. param_type is the
 * parameter's declared type without its name ("const float *__restrict__",
 * "float []"), or NULL. Fills *rw (release with source_rewrite_release).
 */
void source_rewrite_find(struct source_rewrite *rw, const char *line, size_t len,
			 int in_comment, const char *param, const char *param_type);
void source_rewrite_release(struct source_rewrite *rw);

/*
 * Applies n rewrites found on the same line, the i-th wrapped in helpers[i].
 * Rewrites may nest (b[idx[i]] with both b and idx advised). Returns the
 * new line (caller frees), or NULL when two rewrites touch the same place.
 */
char *source_rewrite_apply(const char *line, size_t len, const struct source_rewrite *const *rws,
			   const char *const *helpers, size_t n);

/*
 * The element type of a declared parameter type: "const float *__restrict__"
 * -> "float", "unsigned *" -> "unsigned int", "float []" -> "float". NULL
 * when the parameter is not a pointer to one element type (float **,
 * templates are kept as written: "T"). Caller frees.
 */
char *source_pointee_type(const char *param_type);

/*
 * The declared type of member `member` of the struct, class or union named
 * name in text (C or C++ source: "struct name {...}", "typedef struct
 * [tag] {...} name;"), normalized as source_pointee_type() does ("long",
 * "unsigned int", "float"); a pointer member ends in " *", an array member
 * in " []". NULL when text does not define the struct (*defined 0), or
 * defines it without such a member in a form read here (*defined 1).
 */
char *source_member_type(const char *text, size_t len, const char *name, const char *member,
			 int *defined);

/*
 * The local pointers of a function body (lines first..last of sf) that
 * point into parameter param: names declared with a '*' in the body
 * ("const float *row = a + i * k;", "T *p; ... p = &a[j];") whose every
 * assignment reads param and none of the parameters in others (the
 * function's other pointer parameters), so that a load through one is a
 * load of param's memory. Returns how many; (*names)[i] and (*types)[i]
 * (the declared type, "const float *") are new strings, free them with
 * source_aliases_free.
 */
size_t source_pointer_aliases(const struct source_file *sf, size_t first, size_t last,
			      const char *param, const char *const *others, size_t nr_others,
			      char ***names, char ***types);
void source_aliases_free(char **names, char **types, size_t n);

/*
 * What a type name stands for when text says it in one step: "#define name
 * T" or "typedef T name;" (normalized); NULL when it does not.
 */
char *source_type_alias(const char *text, size_t len, const char *name);

/* The type a PTX load instruction reads ("ld.global.nc.v4.f32"). */
struct source_ld_type {
	int vector;                 /* 1, 2 or 4 */
	int bits;                   /* per element */
	char kind;                  /* 'f' float, 'i' integer or untyped bits */
};
/* Returns 0, or -1 when the instruction's type cannot be read. */
int source_ld_type_parse(const char *instruction, struct source_ld_type *t);

/*
 * Whether a C++ element type can be read by a helper as the PTX load reads
 * it: 1 yes, 0 no (a different size or kind: the line's expression is not
 * the load's), -1 the type is not one the helpers know (a struct, a
 * typedef, a template parameter).
 */
int source_type_matches(const char *elem_type, const struct source_ld_type *t);
/* 1 when some helper overload reads what t describes. */
int source_ld_type_supported(const struct source_ld_type *t);

/*
 * The helper that expresses a load action in source, or NULL when the
 * action has no source form here (strong .ca/.cg/.cv, .cs, .lu, or
 * "default", which needs no change). nc: the original load is ld.global.nc
 * (the helper keeps the read-only path). read_only: the kernel never writes
 * through the load's parameter (1); otherwise (0 or unknown -1) the helper
 * carries a "memory" clobber so the compiler keeps it after the kernel's own
 * stores. Names: ca_ld{,g}_{na,el,ef}[_ro].
 * With an L2 priority l2 (docs/plan-json.md) the helper also makes a
 * createpolicy.fractional.L2::<priority> policy and loads with
 * .L2::cache_hint and it; the L1 part is the action's ("default" or the
 * form as built: none). Names: ca_ld{,g}[_{na,el,ef}]_l2{ef,el,en,eu}[_ro],
 * e.g. ca_ld_l2el, ca_ldg_na_l2ef.
 */
const char *source_helper_name(enum load_action action, enum l2_priority l2, int nc,
			       int read_only);

/* The short code of a form in helper names: "na", "el", "ef", "l2el",
 * "na_l2ef", ...; NULL for a form without one (static). */
const char *source_form_code(enum load_action action, enum l2_priority l2);

/* One rewritten load's need of a helper. */
struct source_helper_need {
	const char *helper;         /* from source_helper_name() */
	const char *elem_type;      /* the source's element type, NULL when unknown */
	struct source_ld_type type; /* what the PTX load reads */
};

/*
 * Appends the helper definitions the needs call for: one
 * `__device__ __forceinline__` overload per element type (inline: no
 * "declared but never referenced" warnings for the unused ones), written
 * with non-volatile asm (the compiler may combine or drop it like a load).
 * Overloads come in groups by PTX type (F32: float; I32: int, unsigned
 * int; ...), each group under its own macro guard, so a file patched twice
 * still compiles; where the element type is unknown every group the PTX
 * type can be is written and overload resolution picks (a wrong type is a
 * compile error, never a silent conversion: the helpers take pointers).
 * existing_text (or NULL) is the file: groups it already defines are left
 * out. Returns the number of groups written.
 */
size_t source_helpers_write(struct strbuf *out, const struct source_helper_need *needs, size_t n,
			    const char *existing_text);

#endif
