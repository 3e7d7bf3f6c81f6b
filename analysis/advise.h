#ifndef CACHEADVISE_ADVISE_H
#define CACHEADVISE_ADVISE_H

#include <jansson.h>

#include "analysis/capture_model.h"
#include "analysis/graph.h"
#include "analysis/solver.h"
#include "analysis/plan.h"

/*
 * From a capture (capture.json, docs/capture-json.md) to advice: for every
 * measured kernel the traffic reduction graph (sector or classic model,
 * DESIGN.md "The model"), every solver's answer, the chosen plan and the
 * per-load decisions with the numbers behind them.
 */
enum advise_model {
	ADVISE_MODEL_SECTOR,
	ADVISE_MODEL_CLASSIC,
};

struct advise_options {
	enum advise_model model;
	const char *method;         /* solver whose answer becomes the plan: "bnb" default,
				       the exact method that proves fastest at every size
				       bench/results/solve.md measures */
	size_t exhaustive_max_n;    /* exhaustive search runs on kernels with at most this
				       many nodes (default 20) */
	size_t ilp_max_n;           /* the ILP runs, as a cross-check, on kernels with at
				       most this many nodes (default 40, where GLPK proves
				       dense graphs in about a second), and always when it
				       is the method */
	double time_limit_seconds;  /* per kernel for the ILP and for bnb (default 60;
				       0 = none) */
};

void advise_options_init(struct advise_options *opt);

/* One load of a kernel's analysis: a node of its graph. */
struct analysis_load {
	unsigned ordinal;
	char *node;                 /* its node id in the graph, "ld<ordinal>" (owned) */
	const char *decision;       /* static: "cache", "bypass" or "keep" (a tie, or a load
				       that never ran) */
	const char *action;         /* static: the plan's action for it, NULL when the plan
				       leaves it as is */
	char *reason;               /* why, where the decision needs one (owned), or NULL */
	double hit, access;         /* the capture's hit_i and access_i, sectors; NAN unknown */
	double hit_rate;            /* hit / access, NAN when access is unknown or 0 */
	double weight_bytes;        /* W(v_i), the node's weight */
	double traffic_saved_bytes; /* L2 traffic the decision saves: W(v_i) plus half of
				       each edge to another cached load; 0 unless cached */
	/* Its L2 eviction priority (the kernel's "l2_priority" measurements,
	 * issue 26): the plan's, NULL when it stays as built; the DRAM bytes
	 * that priority alone saved when measured (NAN unknown). */
	const char *l2_action;
	double l2_saved_dram_bytes;
	/* Its whole form in the source plan (plan.json spelling, static),
	 * NULL when that plan leaves it as is or was not asked for. */
	const char *source_action;
};

/*
 * A close call (docs/model.md "Close calls"): a site whose decision's
 * margin is within the kernel's noise, and the form it keeps.
 */
struct analysis_close_call {
	const char *layer;          /* static: "L1" or "L2" */
	unsigned *ordinals;         /* the site's measured loads (owned) */
	size_t nr_ordinals;
	char *where;                /* "file:line" of its first load, NULL unknown (owned) */
	char *chosen;               /* the form the solver chose without the rule, plan.json
				       spelling or "as built" (owned) */
	char *other;                /* the best other form (owned) */
	char *kept;                 /* the form the plan keeps (owned) */
	double margin, noise;       /* fractions: L1 of the kernel's total (sum of |W(v)|),
				       L2 of the baseline's DRAM bytes */
	double margin_bytes, noise_bytes;
};

/* A load of the kernel that is not a node, and why (static text). */
struct analysis_left_out {
	unsigned ordinal;
	const char *reason;         /* "not patchable" or "not measured" */
};

struct analysis_kernel {
	char *module;               /* the capture's kernel module ("" if none) (owned) */
	char *name;                 /* (owned) */
	struct graph g;             /* the traffic reduction graph (docs/graph-json.md) */
	struct solver_result *solutions; /* every solver that ran, in solver_table order */
	size_t nr_solutions;
	const struct solver_result *chosen; /* the one whose answer is the plan */
	const char *note;           /* static, NULL: why chosen is not opt->method */
	struct analysis_load *loads;/* the graph's nodes, in capture order */
	size_t nr_loads;
	struct analysis_left_out *left_out;
	size_t nr_left_out;
	size_t pairs_missing;       /* node pairs without a measured hit_{i,j} */
	/* Loads decided per source site (analysis/load_sites.h: the PTX loads of
	 * one Triton tl.load, or of one CUDA expression, take one decision):
	 * site_loads of the graph's nodes were decided as `sites` sites; both 0
	 * when no loads share a site. */
	size_t site_loads, sites;
	/* The L2 priorities chosen from the kernel's "l2_priority": the
	 * solver, whether proven optimal, the DRAM bytes the choice is
	 * expected to save against every load as built, and a note where no
	 * priority is advised. NULL method: nothing decided; the note then
	 * says why when the kernel has an "l2_priority" that measured no load
	 * (the pass did not run), else it is NULL too. */
	const char *l2_method;
	int l2_optimal;
	double l2_saved_dram_bytes;
	const char *l2_note;        /* static, NULL */
	/*
	 * The source plan's own solve (issue 38: the plan source.patch
	 * writes, solved as its own problem, never the plan with loads
	 * dropped). A load of a Triton .py keeps its L1 form as built (tl.load
	 * cannot write L1::no_allocate, and .cg, a strong load that also
	 * destroys other loads' hits, is no equivalent of it and was not
	 * measured) and takes only the measured L2 forms tl.load can write
	 * (analysis/load_sites.h load_sites_triton_form); every other load
	 * takes any form. source_constrained: the kernel has such loads (else
	 * the source plan is its plan); the L1 objective of the answer,
	 * whether proven optimal, and the DRAM bytes its L2 part is expected
	 * to save.
	 * NEEDSWORK: a CUDA load the CUDA back-end cannot rewrite (a header
	 * outside the tree, a compound assignment) is still free here, so the
	 * patch's plan drops it (verify_patch.c) rather than solving without it.
	 */
	int source_constrained;
	double source_objective;
	int source_optimal;
	double source_l2_saved_dram_bytes;
	/* The close calls of the plan's L1 and L2 decisions, in site order;
	 * where one moved a site from the solver's answer, the L1 answer
	 * solved again with the close sites fixed is `stable` and chosen
	 * points to it (has_stable). */
	struct analysis_close_call *close_calls;
	size_t nr_close_calls;
	struct solver_result stable;
	int has_stable;
};

/* What advise_capture() found (docs/analysis-json.md is its JSON form). */
struct analysis {
	enum advise_model model;
	const char *method;         /* the solver asked for (static) */
	double sector_bytes;        /* s, from capture.device (default 32) */
	double line_bytes;          /* B, from capture.device (default 128) */
	struct analysis_kernel *kernels; /* one per capture kernel, in capture order */
	size_t nr_kernels;
};

/*
 * Fills plan with the chosen action for every measured load (cached loads
 * keep their current form: "default" when they had none, nothing in the
 * plan when they already carry a cache operator or L1 eviction priority;
 * bypassed loads get "L1::no_allocate"; ties keep the current form and are
 * left out of the plan) and *out with the analysis (release it with
 * analysis_release()). The nodes of a kernel's graph are its patchable
 * loads with a measured "hit"; the others are left out, with the reason.
 * Every solver that applies runs (exhaustive only up to exhaustive_max_n
 * nodes, the ILP up to ilp_max_n unless it is the method); opt->method's
 * answer becomes the plan (bnb's when exhaustive was asked for but the
 * kernel is too large; "note" says so).
 * source_plan (may be NULL: not wanted) gets the plan a source patch can
 * carry, solved per kernel as its own problem by the same method
 * (analysis_kernel's source_*): the run --plan plan where no load is a
 * Triton .py's.
 * cap is the capture as its reader (analysis/capture_model.h) accepted it.
 * Returns 0, CA_E_INPUT (the classic model and a capture without the
 * monitor's counts it needs: the message names the kernel),
 * CA_E_USAGE for an unknown opt->method, or CA_E_INTERNAL when the ILP
 * library fails. On error *out is empty and plan may hold the kernels
 * done so far.
 */
int advise_capture(const struct capture *cap, const struct advise_options *opt,
		   struct plan *plan, struct plan *source_plan, struct analysis *out);

void analysis_init(struct analysis *a);
void analysis_release(struct analysis *a);

/* The analysis' kernel of that module and name, or NULL. */
const struct analysis_kernel *analysis_find_kernel(const struct analysis *a, const char *module,
						   const char *name);
/* The close call of a load of the kernel in that layer ("L1", "L2"), or NULL. */
const struct analysis_close_call *analysis_close_call(const struct analysis_kernel *k,
						      const char *layer, unsigned ordinal);
/* The kernel's decision for a load, or NULL when it is no node. */
const struct analysis_load *analysis_kernel_load(const struct analysis_kernel *k,
						 unsigned ordinal);
/* Why a load is no node of the kernel's graph, or NULL when it is one (or unknown). */
const char *analysis_left_out_reason(const struct analysis_kernel *k, unsigned ordinal);

/* The analysis as JSON, docs/analysis-json.md (caller owns). */
json_t *analysis_to_json(const struct analysis *a);

/*
 * How many times advise_capture() has run in this process. The analysis
 * (every solver) is the expensive part of emitting; `profile` runs it once
 * and the tests check that emitting does not run it again.
 */
unsigned long advise_capture_count(void);

#endif
