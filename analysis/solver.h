#ifndef CACHEADVISE_SOLVER_H
#define CACHEADVISE_SOLVER_H

#include <stddef.h>

#include "analysis/graph.h"

/*
 * Solvers of the traffic reduction maximization problem, one interface
 * (STYLE.md "back-ends as tables of functions"): adding a solver is adding a
 * file and a row in solver.c's table.
 */
struct solver_options {
	double time_limit_seconds;  /* ILP: 0 = no limit */
	size_t exhaustive_max_n;    /* exhaustive refuses larger graphs (default 24) */
};

struct solver_result {
	const char *method;         /* static: "ilp", "heuristic", "exhaustive" */
	unsigned char *cached;      /* n flags, 1 = cache (owned, free with solver_result_release) */
	double objective;           /* graph_objective of cached */
	int optimal;                /* proven optimal */
	double gap;                 /* relative MIP gap when a limit stopped the ILP, else 0 */
	double seconds;
};

struct solver {
	const char *name;
	/* Returns 0, or a negative CA_E_* code with the message set. */
	int (*solve)(const struct graph *g, const struct solver_options *opt,
		     struct solver_result *res);
};

void solver_options_init(struct solver_options *opt);
void solver_result_release(struct solver_result *res);
/* NULL-terminated table of every solver; solver_find returns NULL for unknown names. */
extern const struct solver *const solver_table[];
const struct solver *solver_find(const char *name);

#endif
