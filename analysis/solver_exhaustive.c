/*
 * Exhaustive search: every subset of the nodes, in Gray-code order so that
 * consecutive subsets differ by one node. For each node v, lin[v] keeps the
 * sum of its edges to the cached nodes, so flipping node b changes the
 * objective by +-(W(b) + lin[b]) and costs one row update: O(n 2^n) in all.
 * Among equal objectives the first subset in Gray order wins (the empty set
 * first), so ties lean towards bypassing.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"
#include "analysis/solver.h"
#include "base/xalloc.h"

#define EXHAUSTIVE_HARD_MAX 62

static int exhaustive_solve(const struct graph *g, const struct solver_options *opt,
			    struct solver_result *res)
{
	double t0 = solver_clock(), cur = 0, best = 0;
	size_t n = g->n, max_n = opt->exhaustive_max_n, i;
	uint64_t k, end, mask = 0, best_mask = 0;
	double *lin;

	if (max_n > EXHAUSTIVE_HARD_MAX)
		max_n = EXHAUSTIVE_HARD_MAX;
	if (n > max_n)
		return error_set(CA_E_INPUT,
				 "exhaustive search is limited to %zu loads and the graph has %zu: "
				 "use the bnb or ilp method", max_n, n);
	lin = xcalloc(n ? n : 1, sizeof(*lin));
	end = n ? (uint64_t)1 << n : 1;
	for (k = 1; k < end; k++) {
		unsigned b = (unsigned)__builtin_ctzll(k);
		const double *row = g->edges + (size_t)b * n;

		if (mask & ((uint64_t)1 << b)) {
			for (i = 0; i < n; i++)
				lin[i] -= row[i];
			cur -= g->nodes[b].weight + lin[b];
		} else {
			cur += g->nodes[b].weight + lin[b];
			for (i = 0; i < n; i++)
				lin[i] += row[i];
		}
		mask ^= (uint64_t)1 << b;
		if (cur > best) {
			best = cur;
			best_mask = mask;
		}
	}
	free(lin);
	solver_result_start(res, "exhaustive", n);
	for (i = 0; i < n; i++)
		res->cached[i] = (best_mask >> i) & 1;
	res->objective = graph_objective(g, res->cached);
	res->optimal = 1;
	res->bound = res->objective;
	res->seconds = solver_clock() - t0;
	return 0;
}

const struct solver solver_exhaustive = {
	.name = "exhaustive",
	.solve = exhaustive_solve,
};
