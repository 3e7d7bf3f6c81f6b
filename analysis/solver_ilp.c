/*
 * The exact solver: the seed's ILP (section 5.2) through GLPK's branch and
 * cut. docs/model.md explains each step; bench/results/solve.md measures
 * them.
 *
 *   maximise  sum_i W(v_i) N_i + sum_{i<j} W(e_ij) M_ij
 *   N_i, M_ij in {0, 1};  M_ij = N_i N_j, linearised as
 *   M_ij <= N_i,  M_ij <= N_j,  M_ij >= N_i + N_j - 1
 *
 * One M per edge of nonzero weight. Maximising pushes a positive edge's M
 * up, so only its two upper constraints matter, and a negative edge's M
 * down, so only its lower one: by default each edge gets just the ones its
 * sign needs (ilp_full_linearisation restores all three).
 *
 * Before GLPK sees the problem, loads whose decision cannot matter are
 * fixed (ilp_fix_persistent): if W(v_i) plus every negative edge to the
 * loads still undecided (plus the edges to loads already cached) is >= 0,
 * caching i never hurts; if W(v_i) plus every positive such edge is <= 0,
 * caching it never helps. Repeated until nothing changes. Each fixing keeps
 * an optimal solution reachable, so the answer stays exact.
 *
 * During the search the callback adds violated triangle inequalities (the
 * plain linearisation's LP bound is far too weak on dense graphs), gives
 * GLPK the heuristic's answer as its first incumbent, and tracks the best
 * bound for the gap reported when a time limit stops the search. Both need
 * the columns numbered as built here, so GLPK's MIP presolver is off by
 * default.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "base/error.h"
#include "analysis/solver.h"
#include "base/xalloc.h"

enum fixing { FREE = -1, BYPASS = 0, CACHE = 1 };

struct ilp_model {
	const struct graph *g;
	signed char *state;         /* per node: FREE, BYPASS or CACHE */
	size_t nf;                  /* free nodes ... */
	size_t *node;               /* ... free index -> node */
	double *lin;                /* free index -> objective coefficient of N */
	double constant;            /* weights of the fixed cached loads */
	size_t ne;                  /* edges of nonzero weight between free nodes */
	size_t *eu, *ev;            /* free indices */
	double *ew;
	int *pair_col;              /* nf*nf: GLPK column of M_uv, 0 for none */
};

/* A violated triangle inequality: sum coef * x <= rhs. */
struct cut {
	double violation;
	int col[6];
	double coef[6];
	int len;
	double rhs;
};

struct ilp_callback {
	const struct ilp_model *m;
	const unsigned char *warm;  /* heuristic answer (per node) or NULL */
	int warm_given;
	int triangles;              /* separate triangle inequalities */
	double bound;               /* best bound of the open subproblems */
	const struct solver_options *opt;
	double t0, next_progress;   /* for solver_progress_maybe() */
	double warm_objective;
	size_t nr_cuts;
	struct cut *cuts;           /* the most violated of a round (push_cut) */
	size_t cuts_cap;
};

/* The time limit has passed (0: none). */
static int out_of_time(const struct ilp_callback *cb)
{
	return cb->opt->time_limit_seconds > 0 &&
	       solver_clock() - cb->t0 >= cb->opt->time_limit_seconds;
}

static void fix_persistent(struct ilp_model *m)
{
	const struct graph *g = m->g;
	size_t n = g->n, i, j;
	int changed = 1;

	while (changed) {
		changed = 0;
		for (i = 0; i < n; i++) {
			double lo, hi;

			if (m->state[i] != FREE)
				continue;
			lo = hi = g->nodes[i].weight;
			for (j = 0; j < n; j++) {
				double e = graph_edge(g, i, j);

				if (m->state[j] == CACHE) {
					lo += e;
					hi += e;
				} else if (m->state[j] == FREE) {
					if (e < 0)
						lo += e;
					else
						hi += e;
				}
			}
			if (hi <= 0) {
				m->state[i] = BYPASS;
				changed = 1;
			} else if (lo >= 0) {
				m->state[i] = CACHE;
				changed = 1;
			}
		}
	}
}

static void model_build(struct ilp_model *m, const struct graph *g, int fix)
{
	size_t n = g->n, i, j, alloc = 0;
	size_t *index = xmalloc((n ? n : 1) * sizeof(*index));

	memset(m, 0, sizeof(*m));
	m->g = g;
	m->state = xmalloc(n ? n : 1);
	memset(m->state, FREE, n ? n : 1);
	if (fix)
		fix_persistent(m);
	m->node = xmalloc((n ? n : 1) * sizeof(*m->node));
	m->lin = xcalloc(n ? n : 1, sizeof(*m->lin));
	for (i = 0; i < n; i++) {
		if (m->state[i] == FREE) {
			index[i] = m->nf;
			m->node[m->nf++] = i;
		}
		if (m->state[i] == CACHE)
			m->constant += g->nodes[i].weight;
	}
	m->pair_col = xcalloc(m->nf * m->nf + 1, sizeof(*m->pair_col));
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			double e = graph_edge(g, i, j);

			if (e == 0)
				continue;
			if (m->state[i] == CACHE && m->state[j] == CACHE) {
				m->constant += e;
			} else if (m->state[i] == FREE && m->state[j] == CACHE) {
				m->lin[index[i]] += e;
			} else if (m->state[i] == CACHE && m->state[j] == FREE) {
				m->lin[index[j]] += e;
			} else if (m->state[i] == FREE && m->state[j] == FREE) {
				if (m->ne == alloc) {
					/* the three grow together, each only when full (a
					 * realloc a pair copied 16 GB on 300 dense loads) */
					alloc = alloc ? 2 * alloc : 64;
					m->eu = xrealloc(m->eu, alloc * sizeof(*m->eu));
					m->ev = xrealloc(m->ev, alloc * sizeof(*m->ev));
					m->ew = xrealloc(m->ew, alloc * sizeof(*m->ew));
				}
				m->eu[m->ne] = index[i];
				m->ev[m->ne] = index[j];
				m->ew[m->ne] = e;
				m->pair_col[index[i] * m->nf + index[j]] = (int)(1 + m->nf + m->ne);
				m->pair_col[index[j] * m->nf + index[i]] = (int)(1 + m->nf + m->ne);
				m->ne++;
			}
		}
	}
	for (i = 0; i < m->nf; i++)
		m->lin[i] += g->nodes[m->node[i]].weight;
	free(index);
}

static void model_release(struct ilp_model *m)
{
	free(m->state);
	free(m->node);
	free(m->lin);
	free(m->eu);
	free(m->ev);
	free(m->ew);
	free(m->pair_col);
}

/* An upper bound that needs no LP: every positive term taken. */
static double trivial_bound(const struct ilp_model *m)
{
	double b = m->constant;
	size_t k;

	for (k = 0; k < m->nf; k++)
		b += m->lin[k] > 0 ? m->lin[k] : 0;
	for (k = 0; k < m->ne; k++)
		b += m->ew[k] > 0 ? m->ew[k] : 0;
	return b;
}

/*
 * The cuts kept are the cb->cuts_cap most violated of a separation round,
 * in a min-heap on violation: memory stays O(loads) where a dense graph has
 * millions of violated triples (300 loads: 4.5 million triples, which an
 * array of every violated one held as half a gigabyte).
 */
static void cut_sift_down(struct cut *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct cut t;

		if (l < n && h[l].violation < h[m].violation)
			m = l;
		if (r < n && h[r].violation < h[m].violation)
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void push_cut(struct ilp_callback *cb, double violation, double rhs, int len,
		     const int *col, const double *coef)
{
	struct cut *c, t;
	size_t i;

	if (cb->nr_cuts == cb->cuts_cap) {
		if (!cb->cuts_cap || violation <= cb->cuts[0].violation)
			return;
		c = &cb->cuts[0];       /* replaces the least violated */
	} else {
		c = &cb->cuts[cb->nr_cuts++];
	}
	c->violation = violation;
	c->rhs = rhs;
	c->len = len;
	memcpy(c->col, col, (size_t)len * sizeof(*col));
	memcpy(c->coef, coef, (size_t)len * sizeof(*coef));
	if (c == &cb->cuts[0] && cb->nr_cuts == cb->cuts_cap) {
		cut_sift_down(cb->cuts, cb->nr_cuts, 0);
		return;
	}
	for (i = cb->nr_cuts - 1; i > 0 && cb->cuts[(i - 1) / 2].violation > cb->cuts[i].violation;
	     i = (i - 1) / 2) {
		t = cb->cuts[i];
		cb->cuts[i] = cb->cuts[(i - 1) / 2];
		cb->cuts[(i - 1) / 2] = t;
	}
}

static int cmp_cut(const void *a, const void *b)
{
	const struct cut *x = a, *y = b;

	return x->violation > y->violation ? -1 : x->violation < y->violation;
}

/* The four triangle inequalities of i < j < k (free indices) at x, y. */
static void check_triple(struct ilp_callback *cb, const double *x, const double *y,
			 size_t i, size_t j, size_t k, int cij, int cik, int cjk)
{
	static const double rot[4] = { 1, 1, -1, -1 };
	static const double all[6] = { 1, 1, 1, -1, -1, -1 };
	size_t nf = cb->m->nf;
	double yij = y[cij - 1 - (int)nf], yik = y[cik - 1 - (int)nf], yjk = y[cjk - 1 - (int)nf];
	const double eps = 1e-6;
	double v;

	if ((v = yij + yik - yjk - x[i]) > eps) {
		int col[4] = { cij, cik, cjk, (int)(1 + i) };
		push_cut(cb, v, 0, 4, col, rot);
	}
	if ((v = yij + yjk - yik - x[j]) > eps) {
		int col[4] = { cij, cjk, cik, (int)(1 + j) };
		push_cut(cb, v, 0, 4, col, rot);
	}
	if ((v = yik + yjk - yij - x[k]) > eps) {
		int col[4] = { cik, cjk, cij, (int)(1 + k) };
		push_cut(cb, v, 0, 4, col, rot);
	}
	if ((v = x[i] + x[j] + x[k] - yij - yik - yjk - 1) > eps) {
		int col[6] = { (int)(1 + i), (int)(1 + j), (int)(1 + k), cij, cik, cjk };
		push_cut(cb, v, 1, 6, col, all);
	}
}

/*
 * The triangle inequalities of the boolean quadric polytope (Padberg 1989),
 * valid wherever M_ij = N_i N_j, for every triple i, j, k whose three pairs
 * have an M:
 *   M_ij + M_ik - M_jk <= N_i   (and the two rotations)
 *   N_i + N_j + N_k - M_ij - M_ik - M_jk <= 1
 * They cut off the fractional points (N = 1/2) that make the plain
 * linearisation weak on dense graphs. The optimum stays feasible: for each
 * integral N the best M is the product. The most violated ones go to
 * GLPK's cut pool, which keeps the useful ones.
 */
static void separate_triangles(glp_tree *tree, struct ilp_callback *cb)
{
	const struct ilp_model *m = cb->m;
	glp_prob *lp = glp_ios_get_prob(tree);
	size_t nf = m->nf, i, j, k, take, c;
	double *x = xmalloc((nf ? nf : 1) * sizeof(*x));
	double *y = xmalloc((m->ne ? m->ne : 1) * sizeof(*y));

	for (i = 0; i < nf; i++)
		x[i] = glp_get_col_prim(lp, (int)(1 + i));
	for (i = 0; i < m->ne; i++)
		y[i] = glp_get_col_prim(lp, (int)(1 + nf + i));
	cb->nr_cuts = 0;
	if (!cb->cuts) {
		cb->cuts_cap = 4 * nf + 16;
		cb->cuts = xcalloc(cb->cuts_cap, sizeof(*cb->cuts));
	}
	for (i = 0; i < nf; i++) {
		if (!(i & 15) && out_of_time(cb))
			break;
		for (j = i + 1; j < nf; j++) {
			int cij = m->pair_col[i * nf + j];

			if (!cij)
				continue;
			for (k = j + 1; k < nf; k++) {
				int cik = m->pair_col[i * nf + k], cjk = m->pair_col[j * nf + k];

				if (cik && cjk)
					check_triple(cb, x, y, i, j, k, cij, cik, cjk);
			}
		}
	}
	if (cb->nr_cuts)
		qsort(cb->cuts, cb->nr_cuts, sizeof(*cb->cuts), cmp_cut);
	take = cb->nr_cuts;
	for (c = 0; c < take; c++) {
		const struct cut *cut = &cb->cuts[c];
		int ind[7];
		double val[7];

		memcpy(ind + 1, cut->col, (size_t)cut->len * sizeof(*ind));
		memcpy(val + 1, cut->coef, (size_t)cut->len * sizeof(*val));
		glp_ios_add_row(tree, NULL, 0, 0, cut->len, ind, val, GLP_UP, cut->rhs);
	}
	free(x);
	free(y);
}

static void ilp_callback(glp_tree *tree, void *info)
{
	struct ilp_callback *cb = info;
	const struct ilp_model *m = cb->m;
	int best, active;

	if (cb->opt->progress) {
		double inc = cb->warm_objective;

		if (glp_mip_status(glp_ios_get_prob(tree)) == GLP_FEAS &&
		    glp_mip_obj_val(glp_ios_get_prob(tree)) > inc)
			inc = glp_mip_obj_val(glp_ios_get_prob(tree));
		solver_progress_maybe(cb->opt, "ilp", cb->t0, &cb->next_progress, inc,
				      cb->bound, 0);
	}
	/* GLPK checks tm_lim between its own steps; a round of cuts or a
	 * heuristic in between is ended here, so the limit holds */
	if (out_of_time(cb)) {
		glp_ios_terminate(tree);
		return;
	}
	switch (glp_ios_reason(tree)) {
	case GLP_ISELECT:
		/* A subproblem not solved yet has the bound DBL_MAX; the
		 * global bound never rises, so keep the least seen. */
		best = glp_ios_best_node(tree);
		if (best) {
			double b = glp_ios_node_bound(tree, best);

			if (b < 1e300 && b < cb->bound)
				cb->bound = b;
		}
		break;
	case GLP_IHEUR:
		if (cb->warm && !cb->warm_given) {
			/* Only reached without the presolver, whose transformed
			 * problem has other columns. */
			double *x = xcalloc(1 + m->nf + m->ne, sizeof(*x));
			size_t k;

			for (k = 0; k < m->nf; k++)
				x[1 + k] = cb->warm[m->node[k]];
			for (k = 0; k < m->ne; k++)
				x[1 + m->nf + k] = x[1 + m->eu[k]] * x[1 + m->ev[k]];
			glp_ios_heur_sol(tree, x);
			free(x);
			cb->warm_given = 1;
		}
		break;
	case GLP_ICUTGEN:
		/* While the root is the only subproblem, its LP optimum (with
		 * the cuts so far) bounds everything: a time limit that stops
		 * the root's cut loop still reports a real bound. */
		glp_ios_tree_size(tree, &active, NULL, NULL);
		if (active == 1) {
			double b = glp_get_obj_val(glp_ios_get_prob(tree));

			if (b < cb->bound)
				cb->bound = b;
		}
		if (cb->triangles)
			separate_triangles(tree, cb);
		break;
	default:
		break;
	}
}

static void add_row(glp_prob *lp, int *ia, int *ja, double *ar, size_t *nz,
		    int type, double rhs, int c1, double v1, int c2, double v2,
		    int c3, double v3)
{
	int row = glp_add_rows(lp, 1);

	if (type == GLP_UP)
		glp_set_row_bnds(lp, row, GLP_UP, 0.0, rhs);
	else
		glp_set_row_bnds(lp, row, GLP_LO, rhs, 0.0);
	ia[++*nz] = row, ja[*nz] = c1, ar[*nz] = v1;
	ia[++*nz] = row, ja[*nz] = c2, ar[*nz] = v2;
	if (c3)
		ia[++*nz] = row, ja[*nz] = c3, ar[*nz] = v3;
}

static glp_prob *model_to_glpk(const struct ilp_model *m, const struct solver_options *opt)
{
	glp_prob *lp = glp_create_prob();
	size_t k, nz = 0, max_nz = m->ne * 7 + 1;
	int *ia = xmalloc(max_nz * sizeof(*ia)), *ja = xmalloc(max_nz * sizeof(*ja));
	double *ar = xmalloc(max_nz * sizeof(*ar));
	int pair_kind = opt->ilp_continuous_pairs ? GLP_CV : GLP_BV;

	glp_set_obj_dir(lp, GLP_MAX);
	glp_set_obj_coef(lp, 0, m->constant);
	glp_add_cols(lp, (int)(m->nf + m->ne));
	for (k = 0; k < m->nf; k++) {
		int col = (int)(1 + k);

		glp_set_col_kind(lp, col, GLP_BV);
		glp_set_obj_coef(lp, col, m->lin[k]);
	}
	for (k = 0; k < m->ne; k++) {
		int col = (int)(1 + m->nf + k), ci = (int)(1 + m->eu[k]), cj = (int)(1 + m->ev[k]);
		int upper = opt->ilp_full_linearisation || m->ew[k] > 0;
		int lower = opt->ilp_full_linearisation || m->ew[k] < 0;

		glp_set_col_kind(lp, col, pair_kind);
		glp_set_col_bnds(lp, col, GLP_DB, 0.0, 1.0);
		glp_set_obj_coef(lp, col, m->ew[k]);
		if (upper) {
			/* M - N_i <= 0, M - N_j <= 0 */
			add_row(lp, ia, ja, ar, &nz, GLP_UP, 0.0, col, 1.0, ci, -1.0, 0, 0);
			add_row(lp, ia, ja, ar, &nz, GLP_UP, 0.0, col, 1.0, cj, -1.0, 0, 0);
		}
		if (lower) /* M - N_i - N_j >= -1 */
			add_row(lp, ia, ja, ar, &nz, GLP_LO, -1.0, col, 1.0, ci, -1.0, cj, -1.0);
	}
	glp_load_matrix(lp, (int)nz, ia, ja, ar);
	free(ia);
	free(ja);
	free(ar);
	return lp;
}

static const char *glpk_strerror(int ret)
{
	switch (ret) {
	case GLP_EBOUND: return "invalid bounds";
	case GLP_EROOT: return "no optimal basis for the root LP";
	case GLP_ENOPFS: return "no primal feasible solution";
	case GLP_ENODFS: return "no dual feasible solution";
	case GLP_EFAIL: return "the solver failed";
	case GLP_ESTOP: return "the search was stopped";
	default: return "unknown error";
	}
}

static int ilp_solve(const struct graph *g, const struct solver_options *opt,
		     struct solver_result *res)
{
	double t0 = solver_clock();
	struct ilp_model m;
	struct ilp_callback cb;
	struct solver_result warm = { 0 };
	glp_prob *lp = NULL;
	glp_iocp parm;
	unsigned char *cached;
	int ret = 0, glp_ret = 0, status = GLP_OPT, old_term;
	size_t k;

	model_build(&m, g, opt->ilp_fix_persistent);
	cached = xcalloc(g->n ? g->n : 1, 1);
	memset(&cb, 0, sizeof(cb));
	cb.m = &m;
	cb.bound = trivial_bound(&m);
	solver_heuristic_trace(g, &warm, NULL);
	cb.opt = opt;
	cb.t0 = t0;
	cb.warm_objective = warm.objective;
	if (m.nf) {
		lp = model_to_glpk(&m, opt);
		glp_init_iocp(&parm);
		parm.msg_lev = GLP_MSG_OFF;
		parm.presolve = opt->ilp_presolve ? GLP_ON : GLP_OFF;
		parm.cb_func = ilp_callback;
		parm.cb_info = &cb;
		if (opt->ilp_warm_start && !opt->ilp_presolve)
			cb.warm = warm.cached;
		cb.triangles = opt->ilp_triangle_cuts && !opt->ilp_presolve;
		if (opt->ilp_cuts) {
			parm.gmi_cuts = GLP_ON;
			parm.mir_cuts = GLP_ON;
			parm.cov_cuts = GLP_ON;
			parm.clq_cuts = GLP_ON;
		}
		if (opt->ilp_branching)
			parm.br_tech = opt->ilp_branching;
		if (opt->ilp_backtracking)
			parm.bt_tech = opt->ilp_backtracking;
		if (opt->time_limit_seconds > 0) {
			parm.tm_lim = solver_glpk_ms(opt->time_limit_seconds - (solver_clock() - t0));
		}
		old_term = glp_term_out(GLP_OFF);
		if (!opt->ilp_presolve) {
			/* Without the presolver glp_intopt starts from an
			 * optimal basis of the LP relaxation. */
			glp_smcp smcp;

			glp_init_smcp(&smcp);
			smcp.msg_lev = GLP_MSG_OFF;
			/* In slices of a second when someone watches, so that a
			 * long LP relaxation still shows progress; glp_simplex
			 * resumes from the basis it stopped at. */
			for (;;) {
				double left = opt->time_limit_seconds > 0 ?
					opt->time_limit_seconds - (solver_clock() - t0) : 1e9;

				smcp.tm_lim = solver_glpk_ms(left);
				if (opt->progress && smcp.tm_lim > 1000)
					smcp.tm_lim = 1000;
				glp_ret = glp_simplex(lp, &smcp);
				if (glp_ret != GLP_ETMLIM || !opt->progress ||
				    (opt->time_limit_seconds > 0 &&
				     solver_clock() - t0 >= opt->time_limit_seconds))
					break;
				solver_progress_maybe(opt, "ilp", t0, &cb.next_progress,
						      warm.objective, cb.bound, 0);
			}
		}
		if (!glp_ret && opt->time_limit_seconds > 0) {
			/* what the LP relaxation left of the limit */
			parm.tm_lim = solver_glpk_ms(opt->time_limit_seconds - (solver_clock() - t0));
		}
		if (!glp_ret)
			glp_ret = glp_intopt(lp, &parm);
		glp_term_out(old_term);
		/* GLP_ESTOP: the callback ended the search at the time limit */
		if (glp_ret == GLP_ESTOP)
			glp_ret = GLP_ETMLIM;
		if (glp_ret && glp_ret != GLP_ETMLIM) {
			ret = error_set(CA_E_INTERNAL,
					"GLPK failed on the traffic reduction ILP (%zu loads): %s (code %d)",
					g->n, glpk_strerror(glp_ret), glp_ret);
			goto out;
		}
		status = glp_mip_status(lp);
	}
	for (k = 0; k < g->n; k++)
		cached[k] = m.state[k] == CACHE;
	if (status == GLP_OPT || status == GLP_FEAS) {
		for (k = 0; k < m.nf; k++)
			cached[m.node[k]] = glp_mip_col_val(lp, (int)(1 + k)) > 0.5;
	} else {
		memcpy(cached, warm.cached, g->n);
	}
	solver_result_start(res, "ilp", g->n);
	memcpy(res->cached, cached, g->n);
	res->objective = graph_objective(g, res->cached);
	res->optimal = !glp_ret && status == GLP_OPT;
	if (!res->optimal && warm.objective > res->objective) {
		memcpy(res->cached, warm.cached, g->n);
		res->objective = warm.objective;
	}
	if (res->optimal) {
		res->bound = res->objective;
	} else {
		res->bound = cb.bound > res->objective ? cb.bound : res->objective;
		res->gap = (res->bound - res->objective) / (fabs(res->objective) + DBL_EPSILON);
	}
	res->seconds = solver_clock() - t0;
out:
	if (lp)
		glp_delete_prob(lp);
	free(cached);
	free(cb.cuts);
	solver_result_release(&warm);
	model_release(&m);
	return ret;
}

const struct solver solver_ilp = {
	.name = "ilp",
	.solve = ilp_solve,
};
