#ifndef CACHEADVISE_CLOSE_CALLS_H
#define CACHEADVISE_CLOSE_CALLS_H

/*
 * Close calls (issue 38 item 5, docs/model.md "Close calls"): a site's
 * decision whose margin, what the chosen form gains over the best other
 * form with every other site as chosen, is within the kernel's measured
 * noise. A close call takes the form as built where that form is within
 * the noise too, else the form the source can carry, else the first in
 * the capture's order of forms; the exact solver then solves the rest
 * with those sites fixed, so two captures that differ within the noise
 * give one plan.
 */

#include <stddef.h>

#include "analysis/graph.h"
#include "analysis/multi_choice.h"

/* The rule, in one place: a margin within the noise (both in one unit). */
int close_call_within(double margin, double noise);

/*
 * The L1 margins of an answer on g (one node per site): margin[v] is
 * |W(v) + sum of v's edges to the other cached nodes|, what flipping v
 * alone changes T by, in the graph's unit (bytes). Where margin[v] is
 * within noise_bytes, close[v] is set and fixed[v] becomes the node's
 * state as built (as_built[v]: 1 cached): SOLVER_FIXED_CACHED or
 * SOLVER_FIXED_BYPASSED (analysis/solver.h); the other entries of fixed
 * are left as they are. Returns how many nodes were fixed away from the
 * answer (0: the answer stands).
 */
size_t close_calls_graph(const struct graph *g, const unsigned char *cached,
			 const unsigned char *as_built, double noise_bytes,
			 double *margin, unsigned char *close, unsigned char *fixed);

/* How far a form is from being chosen: lower ranks win a close call. */
typedef unsigned (*close_call_rank_fn)(const void *ctx, size_t item, unsigned form);

/* A close call of the several-forms problem: the item's chosen form, the
 * best other, the form it keeps, and the margin (the gain's unit). */
struct close_choice {
	int close;
	unsigned chosen, other, kept;
	double margin;
};

/*
 * The several-forms counterpart of close_calls_graph: for each item of
 * mc at the answer form[], the value of each of its forms with the others
 * as chosen (forms with a gain below -1e29, never chosen, left out); out[i]
 * the margin to the best other form and, as kept, the form of lowest rank
 * (then lowest index) among those within noise of the chosen one. It is a
 * close call where one of those forms gains something else than the
 * chosen one (forms that all gain the same, nothing measurable, are no
 * choice, though they too keep the form of lowest rank). Returns how many
 * items keep a form other than the answer's.
 */
size_t close_calls_choices(const struct multi_choice *mc, const unsigned *form, double noise,
			   close_call_rank_fn rank, const void *ctx, struct close_choice *out);

/* Fixes item i of mc to form s: its other forms become never chosen. */
void close_calls_fix_choice(struct multi_choice *mc, size_t i, unsigned s);

struct analysis_kernel;

/* A close call as the analysis records it (analysis_close_call): the
 * strings are copied; total is what margin and noise are fractions of. */
struct close_call_site {
	const char *layer;
	const unsigned *ordinals;
	size_t nr_ordinals;
	const char *where, *chosen, *other, *kept;
	double margin_bytes, noise_bytes, total;
};

/* Appends a close call to ak's; close_calls_release frees them all. */
void close_calls_record(struct analysis_kernel *ak, const struct close_call_site *site);
void close_calls_release(struct analysis_kernel *ak);

#endif
