#include "analysis/solver.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/xalloc.h"

extern const struct solver solver_ilp;
extern const struct solver solver_bnb;
extern const struct solver solver_heuristic;
extern const struct solver solver_exhaustive;

const struct solver *const solver_table[] = {
	&solver_ilp,
	&solver_bnb,
	&solver_heuristic,
	&solver_exhaustive,
	NULL,
};

void solver_options_init(struct solver_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->time_limit_seconds = 0;
	opt->exhaustive_max_n = 24;
	opt->ilp_full_linearisation = 0;
	opt->ilp_continuous_pairs = 0;
	opt->ilp_warm_start = 1;
	opt->ilp_fix_persistent = 1;
	opt->ilp_cuts = 0;
	opt->ilp_presolve = 0;
	opt->ilp_triangle_cuts = 1;
	opt->ilp_branching = 0;
	opt->ilp_backtracking = 0;
	opt->bnb_node_limit = 0;
	opt->bnb_sdp = 1;
	opt->progress = NULL;
	opt->progress_ctx = NULL;
	opt->progress_first_seconds = 2;
	opt->progress_every_seconds = 5;
}

void solver_progress_maybe(const struct solver_options *opt, const char *method, double t0,
			   double *next, double best, double bound, unsigned long nodes)
{
	struct solver_progress p;
	double now;

	if (!opt->progress)
		return;
	now = solver_clock();
	if (!*next)
		*next = t0 + opt->progress_first_seconds;
	if (now < *next)
		return;
	*next = now + opt->progress_every_seconds;
	p.method = method;
	p.seconds = now - t0;
	p.best = best;
	p.bound = bound;
	p.nodes = nodes;
	opt->progress(opt->progress_ctx, &p);
}

void solver_result_start(struct solver_result *res, const char *method, size_t n)
{
	memset(res, 0, sizeof(*res));
	res->method = method;
	res->cached = xcalloc(n ? n : 1, 1);
	res->bound = NAN;
}

void solver_result_release(struct solver_result *res)
{
	free(res->cached);
	res->cached = NULL;
}

const struct solver *solver_find(const char *name)
{
	size_t i;

	for (i = 0; solver_table[i]; i++)
		if (!strcmp(solver_table[i]->name, name))
			return solver_table[i];
	return NULL;
}

/* The graph of g's free nodes (free_of[i]: the node of g that is its
 * node i): each keeps its id and edges, and takes the edges to the nodes
 * fixed cached into its weight (a node fixed bypassed gives nothing).
 * Returns what the nodes fixed cached give alone. */
static double graph_without_fixed(const struct graph *g, const unsigned char *fixed,
				  struct graph *out, size_t *free_of)
{
	double constant = 0;
	size_t u, v, nf = 0;

	for (v = 0; v < g->n; v++) {
		double w = g->nodes[v].weight;

		if (fixed[v] == SOLVER_FIXED_CACHED) {
			constant += w;
			for (u = v + 1; u < g->n; u++)
				constant += fixed[u] == SOLVER_FIXED_CACHED ? graph_edge(g, u, v) : 0;
			continue;
		}
		if (fixed[v])
			continue;
		for (u = 0; u < g->n; u++)
			w += fixed[u] == SOLVER_FIXED_CACHED ? graph_edge(g, u, v) : 0;
		free_of[nf++] = v;
		graph_add_node(out, g->nodes[v].id, w);
	}
	for (u = 0; u < nf; u++)
		for (v = u + 1; v < nf; v++)
			if (graph_edge(g, free_of[u], free_of[v]) != 0)
				graph_set_edge(out, u, v, graph_edge(g, free_of[u], free_of[v]));
	return constant;
}

int solver_solve_fixed(const struct solver *s, const struct graph *g,
		       const unsigned char *fixed, const struct solver_options *opt,
		       struct solver_result *res)
{
	struct solver_result sub;
	struct graph rest;
	size_t *free_of = xcalloc(g->n + 1, sizeof(*free_of)), v, i = 0;
	double constant;
	int ret;

	graph_init(&rest);
	constant = graph_without_fixed(g, fixed, &rest, free_of);
	ret = s->solve(&rest, opt, &sub);
	if (!ret) {
		*res = sub;
		res->cached = xcalloc(g->n + 1, 1);
		for (v = 0; v < g->n; v++)
			res->cached[v] = fixed[v] ? fixed[v] == SOLVER_FIXED_CACHED :
					   sub.cached[i++];
		res->objective = graph_objective(g, res->cached);
		res->bound = sub.bound + constant;
		solver_result_release(&sub);
	}
	graph_release(&rest);
	free(free_of);
	return ret;
}

double solver_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int solver_glpk_ms(double seconds)
{
	double ms = ceil(seconds * 1000.0);

	if (!(ms < (double)INT_MAX))
		return INT_MAX;
	return ms < 1 ? 1 : (int)ms;
}

json_t *solver_result_to_json(const struct graph *g, const struct solver_result *res)
{
	json_t *obj = json_object(), *cached = json_array(), *bypassed = json_array();
	size_t i;

	for (i = 0; i < g->n; i++)
		json_array_append_new(res->cached[i] ? cached : bypassed,
				      json_string(g->nodes[i].id));
	json_object_set_new(obj, "method", json_string(res->method));
	json_object_set_new(obj, "cached", cached);
	json_object_set_new(obj, "bypassed", bypassed);
	json_object_set_new(obj, "objective", graph_weight_json(res->objective));
	json_object_set_new(obj, "optimal", json_boolean(res->optimal));
	json_object_set_new(obj, "seconds", json_real(res->seconds));
	if (!res->optimal && isfinite(res->bound)) {
		json_object_set_new(obj, "gap", json_real(res->gap));
		json_object_set_new(obj, "bound", graph_weight_json(res->bound));
	}
	return obj;
}
