#ifndef CACHEADVISE_MULTI_CHOICE_H
#define CACHEADVISE_MULTI_CHOICE_H

/*
 * Several choices per load (issue 26): each load of a kernel takes one of
 * its forms (L1 form x L2 priority; form 0 is the load as built), and the
 * traffic a choice saves is a gain of the load's own form plus a gain of
 * each pair of loads' forms together (one load's data keeping or evicting
 * another's). The seed's graph is the case of two forms (bypass, cache)
 * with gains only on "cache" and "cache, cache"; docs/model.md, "Several
 * forms per load", derives this one.
 *
 *   maximise  sum_i u_i(s_i) + sum_{i<j} p_ij(s_i, s_j)
 *   over s_i in {0 .. k_i - 1}
 *
 * Gains are bytes of traffic saved against every load as built (form 0 of
 * each), so the all-zero choice scores sum_i u_i(0) + sum p_ij(0, 0), which
 * a measured graph makes 0. Solvers: exhaustive (the reference, small
 * kernels), bnb (exact, with a bound that needs no LP), the ILP through
 * GLPK (the local marginal polytope: x_is per form, y_ijst per pair of
 * forms with sum_t y_ijst = x_is and sum_s y_ijst = x_jt), and a greedy
 * local search that gives bnb and the ILP their first incumbent.
 */

#include <stddef.h>

/* The forms one load can take, at most this many. */
#define MULTI_CHOICE_MAX_FORMS 32

struct multi_choice {
	size_t n;                   /* loads */
	unsigned *forms;            /* per load: k_i >= 1 */
	double **unary;             /* per load: k_i gains */
	/* per pair i < j: k_i x k_j gains row-major ([s * k_j + t]), or NULL
	 * when every gain of the pair is 0; index i * n + j */
	double **pair;
};

struct multi_choice_result {
	const char *method;         /* static: "exhaustive", "bnb", "ilp", "greedy" */
	unsigned *form;             /* per load (owned) */
	double objective;
	int optimal;                /* proven optimal */
	double bound;               /* proven upper bound (= objective when optimal) */
	unsigned long nodes;        /* search nodes (bnb), else 0 */
	double seconds;
};

struct multi_choice_options {
	double time_limit_seconds;  /* bnb and the ILP; 0 = none */
	unsigned long node_limit;   /* bnb; 0 = none */
	size_t exhaustive_max;      /* exhaustive refuses more than this many choices
				       in all (the product of the k_i; default 1 << 22) */
};

/* n loads with forms[i] forms each (copied), every gain 0. */
void multi_choice_init(struct multi_choice *mc, size_t n, const unsigned *forms);
void multi_choice_release(struct multi_choice *mc);
/* Sets a gain (finite). */
void multi_choice_set_unary(struct multi_choice *mc, size_t i, unsigned s, double gain);
void multi_choice_set_pair(struct multi_choice *mc, size_t i, unsigned s, size_t j, unsigned t,
			   double gain);
/* p_ij(s, t) for either order of i and j (0 when the pair has no gains). */
double multi_choice_pair_gain(const struct multi_choice *mc, size_t i, unsigned s, size_t j,
			      unsigned t);
/* The objective of a choice of forms. */
double multi_choice_value(const struct multi_choice *mc, const unsigned *form);

void multi_choice_options_init(struct multi_choice_options *opt);
void multi_choice_result_release(struct multi_choice_result *res);

/*
 * The solvers. Each fills every field of res and returns 0, or a negative
 * CA_E_* code with the message set (res then needs no release): CA_E_INPUT
 * when a load has no form or more than MULTI_CHOICE_MAX_FORMS, or when
 * exhaustive search would exceed opt->exhaustive_max choices;
 * CA_E_INTERNAL when GLPK fails. A limit that stops bnb or the ILP leaves
 * the best choice found, optimal 0, and the bound proven so far.
 */
int multi_choice_exhaustive(const struct multi_choice *mc, const struct multi_choice_options *opt,
			    struct multi_choice_result *res);
int multi_choice_bnb(const struct multi_choice *mc, const struct multi_choice_options *opt,
		     struct multi_choice_result *res);
int multi_choice_ilp(const struct multi_choice *mc, const struct multi_choice_options *opt,
		     struct multi_choice_result *res);
int multi_choice_greedy(const struct multi_choice *mc, const struct multi_choice_options *opt,
			struct multi_choice_result *res);

#endif
