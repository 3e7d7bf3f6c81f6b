/*
 * Close calls: decisions within the noise, and the form they keep
 * (analysis/close_calls.h, docs/model.md "Close calls").
 */
#include "analysis/close_calls.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/solver.h"
#include "base/xalloc.h"

/* A gain at or below this is a form never chosen (advise.c's -1e30). */
#define NEVER_CHOSEN -1e29

int close_call_within(double margin, double noise)
{
	return !isnan(margin) && !isnan(noise) && fabs(margin) <= noise;
}

size_t close_calls_graph(const struct graph *g, const unsigned char *cached,
			 const unsigned char *as_built, double noise_bytes,
			 double *margin, unsigned char *close, unsigned char *fixed)
{
	size_t u, v, moved = 0;

	for (v = 0; v < g->n; v++) {
		double d = g->nodes[v].weight;

		for (u = 0; u < g->n; u++)
			if (u != v && cached[u])
				d += graph_edge(g, u, v);
		margin[v] = fabs(d);
		close[v] = close_call_within(margin[v], noise_bytes);
		if (!close[v])
			continue;
		fixed[v] = as_built[v] ? SOLVER_FIXED_CACHED : SOLVER_FIXED_BYPASSED;
		moved += !cached[v] != !as_built[v];
	}
	return moved;
}

/* Item i's value in form s, every other item in its form[]. */
static double form_value(const struct multi_choice *mc, const unsigned *form, size_t i,
			 unsigned s)
{
	double v = mc->unary[i][s];
	size_t j;

	for (j = 0; j < mc->n; j++)
		if (j != i)
			v += multi_choice_pair_gain(mc, i, s, j, form[j]);
	return v;
}

/* One item's close call at the answer form[]. */
static void close_choice_of(const struct multi_choice *mc, const unsigned *form, size_t i,
			    double noise, close_call_rank_fn rank, const void *ctx,
			    struct close_choice *c)
{
	unsigned s, chosen = form[i];
	double best = form_value(mc, form, i, chosen), other = -INFINITY;
	int differs = 0;

	c->close = 0;
	c->chosen = c->kept = c->other = chosen;
	c->margin = NAN;
	for (s = 0; s < mc->forms[i]; s++) {
		double v;

		if (s == chosen || mc->unary[i][s] <= NEVER_CHOSEN)
			continue;
		v = form_value(mc, form, i, s);
		if (v > other) {
			other = v;
			c->other = s;
		}
		if (!close_call_within(best - v, noise))
			continue;
		differs |= v != best;
		if (rank(ctx, i, s) < rank(ctx, i, c->kept) ||
		    (rank(ctx, i, s) == rank(ctx, i, c->kept) && s < c->kept))
			c->kept = s;
	}
	if (isinf(other))
		return;
	c->margin = best - other;
	/* forms that all gain the same (nothing measurable) are no close call,
	 * but take the same form in every capture all the same */
	c->close = differs;
}

size_t close_calls_choices(const struct multi_choice *mc, const unsigned *form, double noise,
			   close_call_rank_fn rank, const void *ctx, struct close_choice *out)
{
	size_t i, moved = 0;

	for (i = 0; i < mc->n; i++) {
		close_choice_of(mc, form, i, noise, rank, ctx, &out[i]);
		moved += out[i].kept != out[i].chosen;
	}
	return moved;
}

void close_calls_fix_choice(struct multi_choice *mc, size_t i, unsigned s)
{
	unsigned t;

	for (t = 0; t < mc->forms[i]; t++)
		if (t != s)
			mc->unary[i][t] = -1e30;
}

void close_calls_record(struct analysis_kernel *ak, const struct close_call_site *site)
{
	struct analysis_close_call *c;

	ak->close_calls = xrealloc(ak->close_calls, (ak->nr_close_calls + 1) * sizeof(*c));
	c = &ak->close_calls[ak->nr_close_calls++];
	c->layer = site->layer;
	c->nr_ordinals = site->nr_ordinals;
	c->ordinals = xcalloc(site->nr_ordinals + 1, sizeof(*c->ordinals));
	memcpy(c->ordinals, site->ordinals, site->nr_ordinals * sizeof(*c->ordinals));
	c->where = site->where ? xstrdup(site->where) : NULL;
	c->chosen = xstrdup(site->chosen);
	c->other = xstrdup(site->other);
	c->kept = xstrdup(site->kept);
	c->margin_bytes = site->margin_bytes;
	c->noise_bytes = site->noise_bytes;
	c->margin = site->total > 0 ? site->margin_bytes / site->total : NAN;
	c->noise = site->total > 0 ? site->noise_bytes / site->total : NAN;
}

void close_calls_release(struct analysis_kernel *ak)
{
	size_t i;

	for (i = 0; i < ak->nr_close_calls; i++) {
		struct analysis_close_call *c = &ak->close_calls[i];

		free(c->ordinals);
		free(c->where);
		free(c->chosen);
		free(c->other);
		free(c->kept);
	}
	free(ak->close_calls);
	ak->close_calls = NULL;
	ak->nr_close_calls = 0;
}
