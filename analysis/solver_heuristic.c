/*
 * The seed's heuristic (Algorithm 1), exactly as written:
 *
 *   V_remain = V
 *   while V_remain is not empty:
 *     min_v = the v_i in V_remain with the least T_other(v_i), where
 *             T_other(v_i) = sum of W(e(v_i, v_j)) over v_j in V_cache
 *                          + sum of W(e(v_i, v_k)) over v_k in V_remain, v_k != v_i
 *             (scanned in node order with "<=", so a tie goes to the LAST one)
 *     T = T_other(min_v) + W(min_v)
 *     if T <= 0: bypass min_v and delete it from the graph
 *     else:      cache min_v (it stays in the graph)
 *     delete min_v from V_remain
 *
 * V_cache and V_remain together are the nodes still in the graph, so
 * T_other(v) is the sum of v's edges to every node not bypassed yet. It is
 * kept as a running sum, updated only when a node is bypassed (the graph
 * changes only then): O(n) per step and O(n^2) overall instead of O(n^3).
 * With integral weights (the model's are whole bytes) the running sums are
 * exact, so the ties fall exactly as the literal algorithm's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/solver.h"
#include "base/xalloc.h"

int solver_heuristic_trace(const struct graph *g, struct solver_result *res,
			   struct heuristic_step *steps)
{
	double t0 = solver_clock();
	size_t n = g->n, nr_remain = n, step, i, j;
	size_t *remain = xmalloc((n ? n : 1) * sizeof(*remain));
	double *t_other = xcalloc(n ? n : 1, sizeof(*t_other));

	solver_result_start(res, "heuristic", n);
	for (i = 0; i < n; i++) {
		const double *row = g->edges + i * n;

		remain[i] = i;
		for (j = 0; j < n; j++)
			t_other[i] += row[j];
	}
	for (step = 0; step < n; step++) {
		double min_t = INFINITY, t;
		size_t k, min_k = 0, v;

		for (k = 0; k < nr_remain; k++) {
			if (t_other[remain[k]] <= min_t) {
				min_t = t_other[remain[k]];
				min_k = k;
			}
		}
		v = remain[min_k];
		t = t_other[v] + g->nodes[v].weight;
		if (steps) {
			steps[step].node = v;
			steps[step].t_other = t_other[v];
			steps[step].t = t;
			steps[step].cached = t > 0;
		}
		memmove(remain + min_k, remain + min_k + 1,
			(nr_remain - min_k - 1) * sizeof(*remain));
		nr_remain--;
		if (t > 0) {
			res->cached[v] = 1;
			continue;
		}
		/* Bypassed: delete v from the graph. Only the nodes still to be
		 * visited read T_other again. */
		for (k = 0; k < nr_remain; k++)
			t_other[remain[k]] -= graph_edge(g, remain[k], v);
	}
	free(remain);
	free(t_other);
	res->objective = graph_objective(g, res->cached);
	res->optimal = 0;
	res->seconds = solver_clock() - t0;
	return 0;
}

static int heuristic_solve(const struct graph *g, const struct solver_options *opt,
			   struct solver_result *res)
{
	(void)opt;
	return solver_heuristic_trace(g, res, NULL);
}

const struct solver solver_heuristic = {
	.name = "heuristic",
	.solve = heuristic_solve,
};
