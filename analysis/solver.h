#ifndef CACHEADVISE_SOLVER_H
#define CACHEADVISE_SOLVER_H

#include <stddef.h>

#include <jansson.h>

#include "analysis/graph.h"

/*
 * Solvers of the traffic reduction maximization problem, one interface
 * (STYLE.md "back-ends as tables of functions"): adding a solver is adding a
 * file and a row in solver.c's table. docs/model.md gives the formulations.
 *
 *   ilp         GLPK branch and cut on the seed's linearisation (exact)
 *   bnb         branch and bound specialised for the 0-1 quadratic program,
 *               with SDP bounds (exact; the fastest on dense graphs)
 *   heuristic   the seed's Algorithm 1, O(n^2)
 *   exhaustive  every one of the 2^n subsets in Gray-code order, O(n 2^n)
 */
/*
 * What a long run has reached so far, for a progress line: seconds since
 * the method started, the best objective found, the best proven bound
 * (NAN when not known yet) and the search nodes (bnb) so far.
 */
struct solver_progress {
	const char *method;
	double seconds;
	double best;
	double bound;
	unsigned long nodes;
};

struct solver_options {
	double time_limit_seconds;  /* ILP and bnb: 0 = no limit */
	/*
	 * ILP and bnb call progress (when set) with progress_ctx once
	 * progress_first_seconds have passed, then every
	 * progress_every_seconds, from their time-limit checks; library code
	 * prints nothing, the caller decides what to show.
	 */
	void (*progress)(void *ctx, const struct solver_progress *p);
	void *progress_ctx;
	double progress_first_seconds;  /* default 2 */
	double progress_every_seconds;  /* default 5 */
	size_t exhaustive_max_n;    /* exhaustive refuses larger graphs (default 24, at most 62) */
	/*
	 * ILP formulation switches, for experiments (bench/bench_solve.c and
	 * bench/results/solve.md say what each costs); the defaults are what
	 * docs/model.md describes.
	 */
	int ilp_full_linearisation; /* 1: all three constraints on every edge (the seed's
				       text); 0 (default): only the ones the edge's sign needs */
	int ilp_continuous_pairs;   /* 1: M_ij continuous in [0,1] (integral anyway once the
				       N are); 0 (default): binary, as in the seed */
	int ilp_warm_start;         /* 1 (default): give GLPK the heuristic's answer as the
				       first incumbent (not with ilp_presolve) */
	int ilp_fix_persistent;     /* 1 (default): fix loads whose best/worst marginal gain
				       decides them before calling GLPK (docs/model.md) */
	int ilp_cuts;               /* 1: GLPK's GMI, MIR, cover and clique cuts; 0 (default) */
	int ilp_presolve;           /* 1: GLPK's MIP presolver, which renumbers the columns
				       and so disables the warm start and the triangle cuts;
				       0 (default) */
	int ilp_triangle_cuts;      /* 1 (default): separate the triangle inequalities of the
				       boolean quadric polytope (not with ilp_presolve) */
	int ilp_branching;          /* GLP_BR_* or 0 for GLPK's default */
	int ilp_backtracking;       /* GLP_BT_* or 0 for GLPK's default */
	unsigned long bnb_node_limit; /* bnb stops after this many nodes (0 = no limit) */
	int bnb_sdp;                /* 1 (default): bnb bounds nodes by the SDP relaxation;
				       0: only by the cheap bound (for experiments) */
};

struct solver_result {
	const char *method;         /* static: "ilp", "bnb", "heuristic", "exhaustive" */
	unsigned char *cached;      /* n flags, 1 = cache (owned, free with solver_result_release) */
	double objective;           /* graph_objective of cached */
	int optimal;                /* proven optimal */
	double gap;                 /* relative gap (bound - objective) / |objective| when a
				       limit stopped the ILP or bnb, else 0 */
	double seconds;
	double bound;               /* proven upper bound of the objective (= objective
				       when optimal); NAN from the heuristic */
	unsigned long nodes;        /* search tree nodes (bnb), else 0 */
};

struct solver {
	const char *name;
	/*
	 * Fills every field of res (res need not be initialised; on error it
	 * is left empty and needs no release). Returns 0, or a negative
	 * CA_E_* code with the message set: CA_E_INPUT when the graph is too
	 * large for the method, CA_E_INTERNAL when the ILP library fails.
	 */
	int (*solve)(const struct graph *g, const struct solver_options *opt,
		     struct solver_result *res);
};

void solver_options_init(struct solver_options *opt);
void solver_result_release(struct solver_result *res);
/* NULL-terminated table of every solver; solver_find returns NULL for unknown names. */
extern const struct solver *const solver_table[];
const struct solver *solver_find(const char *name);

/* fixed[v] of solver_solve_fixed: free, or fixed in one state. */
enum {
	SOLVER_FREE = 0,
	SOLVER_FIXED_CACHED = 1,
	SOLVER_FIXED_BYPASSED = 2,
};

/*
 * The problem on g with the nodes where fixed[v] is SOLVER_FIXED_CACHED
 * cached and those where it is SOLVER_FIXED_BYPASSED bypassed, solved
 * exactly as s solves any graph: the fixed nodes leave the graph, each
 * edge from a cached one to a free node joins that node's weight, and s
 * solves the graph of the free nodes (docs/model.md, "Loads a source
 * cannot bypass", "Close calls"). res is on g's nodes (the fixed ones in
 * their state), its objective graph_objective(g, ...) and its bound the
 * free part's plus what the nodes fixed cached give. Returns s->solve's
 * result; on error res is empty.
 */
int solver_solve_fixed(const struct solver *s, const struct graph *g,
		       const unsigned char *fixed, const struct solver_options *opt,
		       struct solver_result *res);

/*
 * The JSON form of a result, as `solve --json` prints it and the analysis
 * JSON embeds it (caller owns): {"method", "cached": [ids], "bypassed":
 * [ids], "objective", "optimal", "seconds"}, plus "gap" and "bound" when
 * an exact method (ilp, bnb) was stopped by a limit.
 */
json_t *solver_result_to_json(const struct graph *g, const struct solver_result *res);

/*
 * One decision of Algorithm 1, in the order they were taken: the node
 * visited, its T_other (edges to the cached and remaining nodes), T =
 * T_other + W(v), and whether it was cached (T > 0) or bypassed.
 */
struct heuristic_step {
	size_t node;
	double t_other;
	double t;
	int cached;
};

/*
 * The heuristic with its trace: steps (may be NULL) receives g->n entries.
 * Same result as the table's "heuristic" solver.
 */
int solver_heuristic_trace(const struct graph *g, struct solver_result *res,
			   struct heuristic_step *steps);

/*
 * For the back-ends: calls opt->progress when one is due (see
 * solver_options), given the method's start time t0 and *next, the time of
 * the next report (0 before the first; the caller keeps it, starting at 0).
 */
void solver_progress_maybe(const struct solver_options *opt, const char *method, double t0,
			   double *next, double best, double bound, unsigned long nodes);

/* For the back-ends: a monotonic clock in seconds. */
double solver_clock(void);

/*
 * For the back-ends: seconds as GLPK's tm_lim wants them, whole
 * milliseconds in an int, rounded up: at least 1, and at most INT_MAX
 * (about 24.8 days) however many seconds are left (a NaN or larger value
 * included), so that no double-to-int conversion overflows (issue 36: a
 * limit of 2147484 s became tm_lim -2147483648 and GLPK aborted).
 */
int solver_glpk_ms(double seconds);
/* For the back-ends: res zeroed, method set, cached allocated (n flags, all 0). */
void solver_result_start(struct solver_result *res, const char *method, size_t n);

#endif
