#ifndef CACHEADVISE_ANALYSIS_CAPTURE_MODEL_INTERNAL_H
#define CACHEADVISE_ANALYSIS_CAPTURE_MODEL_INTERNAL_H

/*
 * What the files of the capture model share. Only they include this;
 * everyone else uses analysis/capture_model.h. The model, one file per
 * section of capture.json, each section's reader, writer and release side
 * by side:
 *   capture_model.c               the document: capture_from_json() reads the
 *                                 sections in order, then checks the
 *                                 cross-references; capture_to_json(),
 *                                 capture_release(), load, validate, settle
 *   capture_model_io.c            the reader's typed getters, the writer's puts
 *   capture_model_program.c       program, options, device
 *   capture_model_kernels.c       modules, kernels with their counters, loads
 *                                 and pairs, all_kernels, allocations; lookups
 *   capture_model_runs.c          runs, measure, cost, budget
 *   capture_model_verification.c  speedups, verdicts, output checks,
 *                                 baseline_check, verification, oracle
 *   capture_model_l2.c            l2 (the windows), kernels[].l2_priority
 *   capture_model_softcache.c     kernels[].software_cache and register_cache,
 *                                 carveout
 *   capture_model_ranks.c         kernels[].ranks
 *
 * A section's reader, capture_read_<section>(r, o, path, out), reads o (the
 * section as written, path its JSON path for refusals) into out, zeroed by
 * the caller, and keeps o as out's source; it returns 0, or CA_E_INPUT with
 * the error set, leaving what it read in out for out's release. Its writer,
 * capture_<section>_json(), starts from the source and writes the typed
 * fields over it (a new reference). capture_<section>_release() frees what
 * the reader allocated in a struct the caller holds; capture_<section>_free()
 * frees a struct the reader allocated too (NULL does nothing).
 */

#include <stddef.h>

#include <jansson.h>

#include "analysis/capture_model.h"

/* A section is a jansson value; the cast hides jansson from the header's users. */
#define SEC(j) ((const struct capture_section *)(j))
#define JS(s) ((json_t *)(s))

/* ---- reading and writing (capture_model_io.c) -------------------------- */

/* The reader's context. */
struct rd {
	const char *name;           /* the file, for messages */
};

/* Refuses the field key of the object at path: CA_E_INPUT, the message set. */
int capture_fail(const struct rd *r, const char *path, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A member, or NULL when absent or null. */
json_t *capture_member(json_t *o, const char *key);

enum num_kind {
	NUM_COUNT,                  /* 0 <= v <= CAPTURE_COUNT_MAX */
	NUM_POSITIVE,               /* 0 < v <= CAPTURE_COUNT_MAX */
	NUM_FINITE,                 /* any finite number */
};

/*
 * The typed getters: each reads member key of o (the object at path) into
 * *out and refuses a member of another type or out of its bounds. An absent
 * or null member is NULL (a string; refused when required), NAN (a number),
 * `unknown` (an integer), -1 (a boolean) or an absent list (*arr NULL).
 */
int capture_check_num(const struct rd *r, const char *path, const char *key, double d,
		      enum num_kind kind);
int capture_rd_object(const struct rd *r, json_t *v, const char *path);
int capture_rd_str(const struct rd *r, json_t *o, const char *path, const char *key,
		   char **out, int required);
int capture_rd_num(const struct rd *r, json_t *o, const char *path, const char *key,
		   double *out, enum num_kind kind);
int capture_rd_int(const struct rd *r, json_t *o, const char *path, const char *key,
		   long long *out, long long lo, long long hi, long long unknown);
int capture_rd_intv(const struct rd *r, json_t *o, const char *path, const char *key,
		    int *out, long long lo, long long hi, int unknown);
int capture_rd_bool(const struct rd *r, json_t *o, const char *path, const char *key, int *out);
int capture_rd_array(const struct rd *r, json_t *o, const char *path, const char *key,
		     json_t **arr);
int capture_rd_strings(const struct rd *r, json_t *o, const char *path, const char *key,
		       char ***out, size_t *nr, int *has);
int capture_rd_ints(const struct rd *r, json_t *o, const char *path, const char *key,
		    long long **out, size_t *nr, int *has, long long lo, long long hi);

/* A writer's object: a copy of source, or a new object. */
json_t *capture_start(const struct capture_section *source);
/*
 * Writes key: a string (NULL: unknown), a number as the source wrote it (an
 * integer stays an integer; NAN: unknown), an integer (`unknown`: unknown)
 * or a boolean (-1: unknown). An unknown value is not written, or null where
 * the source had the key.
 */
void capture_put_str(json_t *o, const char *key, const char *s);
void capture_put_num(json_t *o, const char *key, double d);
void capture_put_int(json_t *o, const char *key, long long v, long long unknown);
void capture_put_bool(json_t *o, const char *key, int b);
/* A new array of the n strings s. */
json_t *capture_strings_json(char **s, size_t n);
/* Frees the n strings of s and s. */
void capture_free_strings(char **s, size_t n);

/* ---- program and device (capture_model_program.c) ---------------------- */

int capture_read_program(const struct rd *r, json_t *o, struct capture_program *p);
json_t *capture_program_json(const struct capture_program *prog);
void capture_program_release(struct capture_program *p);
int capture_read_options(const struct rd *r, json_t *o, struct capture_options *p);
json_t *capture_options_json(const struct capture_options *op);
void capture_options_release(struct capture_options *op);
/* "device" into cap->device (its writer: device_model_to_json()). */
int capture_read_device(const struct rd *r, json_t *o, struct capture *cap);

/* ---- modules, kernels and loads (capture_model_kernels.c) -------------- */

int capture_read_module(const struct rd *r, json_t *o, const char *path, struct capture_module *m);
json_t *capture_module_json(const struct capture_module *m);
void capture_module_release(struct capture_module *m);
int capture_read_kernel_seen(const struct rd *r, json_t *v, const char *path,
			     struct capture_kernel_seen *s);
json_t *capture_kernel_seen_json(const struct capture_kernel_seen *s);
void capture_kernel_seen_release(struct capture_kernel_seen *s);
int capture_read_allocation(const struct rd *r, json_t *v, const char *path,
			    struct capture_allocation *a);
json_t *capture_allocation_json(const struct capture_allocation *a);
int capture_read_kernel(const struct rd *r, json_t *o, const char *path, struct capture_kernel *k);
json_t *capture_kernel_json(const struct capture_kernel *k);

/* ---- runs, measure, cost and budget (capture_model_runs.c) ------------- */

int capture_read_run(const struct rd *r, json_t *o, const char *path, struct capture_run *run);
json_t *capture_run_json(const struct capture_run *run);
/* doc's "measure", when present, into cap->measure (written as read). */
int capture_read_measure(const struct rd *r, json_t *doc, struct capture *cap);
/* "cost" (its writer: capture_cost_to_json()). */
int capture_read_cost(const struct rd *r, json_t *o, struct capture_cost *c);
int capture_read_budget(const struct rd *r, json_t *o, struct capture_budget *b);
json_t *capture_budget_json(const struct capture_budget *b);
void capture_budget_release(struct capture_budget *b);

/* ---- verification, oracle and baseline_check (capture_model_verification.c) */

int capture_read_speedup(const struct rd *r, json_t *o, const char *path, const char *key,
			 struct capture_speedup *sp);
/* Writes sp as member key of into; returns into. */
json_t *capture_speedup_json(json_t *into, const char *key, const struct capture_speedup *sp);
int capture_read_verdict(const struct rd *r, json_t *o, const char *path, struct capture_verdict *v);
json_t *capture_verdict_json(const struct capture_verdict *v);
void capture_verdict_free(struct capture_verdict *v);
int capture_read_output_check(const struct rd *r, json_t *o, const char *path,
			      struct capture_output_check *oc);
json_t *capture_output_check_json(const struct capture_output_check *oc);
int capture_read_baseline_check(const struct rd *r, json_t *o, struct capture_baseline_check *bc);
/* "baseline_check", with "output" when output is not NULL. */
json_t *capture_baseline_check_json(const struct capture_baseline_check *b,
				    const struct capture_output_check *output);
void capture_baseline_check_release(struct capture_baseline_check *bc);
int capture_read_verification(const struct rd *r, json_t *o, struct capture_verification *ver);
json_t *capture_verification_json(const struct capture_verification *ver);
void capture_verification_release(struct capture_verification *ver);
int capture_read_oracle_kernel(const struct rd *r, json_t *v, const char *sub,
			       struct capture_oracle_kernel *k);
json_t *capture_oracle_kernel_json(const struct capture_oracle_kernel *k);
void capture_oracle_kernel_free(struct capture_oracle_kernel *k);
int capture_read_oracle(const struct rd *r, json_t *o, struct capture_oracle *orc);
json_t *capture_oracle_json(const struct capture_oracle *orc);
void capture_oracle_free(struct capture_oracle *orc);

/* ---- L2: windows and priorities (capture_model_l2.c) ------------------- */

/* kernels[].l2_priority, read after k's loads (written as read). */
int capture_read_l2_priority(const struct rd *r, json_t *o, const char *path,
			     const struct capture_kernel *k, struct capture_l2_priority *lp);
void capture_l2_priority_free(struct capture_l2_priority *lp);
/* "l2" (the persisting-L2 windows). */
int capture_read_l2(const struct rd *r, json_t *o, struct capture_l2 *l2);
json_t *capture_l2_json(const struct capture_l2 *l2);

/* ---- software cache, register cache and carve-out (capture_model_softcache.c) */

/* A kernel's "software_cache" and "register_cache" (written as read). */
int capture_read_software_cache(const struct rd *r, json_t *o, const char *path,
				struct capture_software_cache *sc);
void capture_software_cache_free(struct capture_software_cache *sc);
int capture_read_register_cache(const struct rd *r, json_t *o, const char *path,
				struct capture_register_cache *rc);
void capture_register_cache_free(struct capture_register_cache *rc);
/* "carveout". */
int capture_read_carveout(const struct rd *r, json_t *o, struct capture_carveout *co);
json_t *capture_carveout_json(const struct capture_carveout *co);
void capture_carveout_release(struct capture_carveout *co);

/* ---- kernels[].ranks (capture_model_ranks.c) --------------------------- */

/* arr, a kernel's "ranks", into k->ranks, read after k's loads. */
int capture_read_ranks(const struct rd *r, json_t *arr, const char *path, struct capture_kernel *k);
json_t *capture_ranks_json(const struct capture_kernel *k);
void capture_ranks_release(struct capture_kernel *k);

#endif
