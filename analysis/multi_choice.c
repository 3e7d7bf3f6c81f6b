/*
 * Several choices per load: the solvers of analysis/multi_choice.h.
 */
#include "analysis/multi_choice.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glpk.h>

#include "analysis/solver.h"
#include "base/error.h"
#include "base/xalloc.h"

/* Gains closer than this are equal: a choice must win by more to replace another. */
#define EPS 1e-9

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void multi_choice_init(struct multi_choice *mc, size_t n, const unsigned *forms)
{
	size_t i;

	mc->n = n;
	mc->forms = xcalloc(n + 1, sizeof(*mc->forms));
	mc->unary = xcalloc(n + 1, sizeof(*mc->unary));
	mc->pair = xcalloc(n * n + 1, sizeof(*mc->pair));
	for (i = 0; i < n; i++) {
		mc->forms[i] = forms[i];
		mc->unary[i] = xcalloc(forms[i] + 1, sizeof(double));
	}
}

void multi_choice_release(struct multi_choice *mc)
{
	size_t i;

	for (i = 0; i < mc->n; i++)
		free(mc->unary[i]);
	for (i = 0; i < mc->n * mc->n; i++)
		free(mc->pair[i]);
	free(mc->unary);
	free(mc->pair);
	free(mc->forms);
	memset(mc, 0, sizeof(*mc));
}

void multi_choice_set_unary(struct multi_choice *mc, size_t i, unsigned s, double gain)
{
	mc->unary[i][s] = gain;
}

void multi_choice_set_pair(struct multi_choice *mc, size_t i, unsigned s, size_t j, unsigned t,
			   double gain)
{
	double **m;

	if (i > j) {
		size_t tmp = i;
		unsigned ts = s;

		i = j;
		j = tmp;
		s = t;
		t = ts;
	}
	m = &mc->pair[i * mc->n + j];
	if (!*m) {
		if (gain == 0)
			return;
		*m = xcalloc((size_t)mc->forms[i] * mc->forms[j] + 1, sizeof(double));
	}
	(*m)[(size_t)s * mc->forms[j] + t] = gain;
}

double multi_choice_pair_gain(const struct multi_choice *mc, size_t i, unsigned s, size_t j,
			      unsigned t)
{
	const double *m;

	if (i > j)
		return multi_choice_pair_gain(mc, j, t, i, s);
	m = mc->pair[i * mc->n + j];
	return m ? m[(size_t)s * mc->forms[j] + t] : 0;
}

double multi_choice_value(const struct multi_choice *mc, const unsigned *form)
{
	double v = 0;
	size_t i, j;

	for (i = 0; i < mc->n; i++) {
		v += mc->unary[i][form[i]];
		for (j = i + 1; j < mc->n; j++)
			v += multi_choice_pair_gain(mc, i, form[i], j, form[j]);
	}
	return v;
}

void multi_choice_options_init(struct multi_choice_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->time_limit_seconds = 60;
	opt->exhaustive_max = (size_t)1 << 22;
}

void multi_choice_result_release(struct multi_choice_result *res)
{
	free(res->form);
	memset(res, 0, sizeof(*res));
}

static int check_forms(const struct multi_choice *mc)
{
	size_t i;

	for (i = 0; i < mc->n; i++)
		if (mc->forms[i] < 1 || mc->forms[i] > MULTI_CHOICE_MAX_FORMS)
			return error_set(CA_E_INPUT, "load %zu has %u forms: 1 to %d are accepted", i,
					 mc->forms[i], MULTI_CHOICE_MAX_FORMS);
	return 0;
}

static void start(struct multi_choice_result *res, const char *method, size_t n)
{
	memset(res, 0, sizeof(*res));
	res->method = method;
	res->form = xcalloc(n + 1, sizeof(*res->form));
}

/* ---- exhaustive --------------------------------------------------------- */

int multi_choice_exhaustive(const struct multi_choice *mc, const struct multi_choice_options *opt,
			    struct multi_choice_result *res)
{
	size_t total = 1, i, c;
	unsigned *cur;
	double t0 = now();
	int ret;

	if ((ret = check_forms(mc)))
		return ret;
	for (i = 0; i < mc->n; i++) {
		if (total > opt->exhaustive_max / mc->forms[i])
			return error_set(CA_E_INPUT, "exhaustive search of %zu loads would try more "
					 "than %zu choices: use bnb or the ILP", mc->n,
					 opt->exhaustive_max);
		total *= mc->forms[i];
	}
	start(res, "exhaustive", mc->n);
	cur = xcalloc(mc->n + 1, sizeof(*cur));
	res->objective = -DBL_MAX;
	for (c = 0; c < total; c++) {
		size_t x = c;
		double v;

		for (i = 0; i < mc->n; i++) {
			cur[i] = (unsigned)(x % mc->forms[i]);
			x /= mc->forms[i];
		}
		v = multi_choice_value(mc, cur);
		if (v > res->objective + EPS || c == 0) {
			res->objective = v;
			memcpy(res->form, cur, mc->n * sizeof(*cur));
		}
	}
	free(cur);
	res->optimal = 1;
	res->bound = res->objective;
	res->seconds = now() - t0;
	return 0;
}

/* ---- greedy local search ------------------------------------------------ */

/* Improves form one load at a time until no single change gains. */
static void local_search(const struct multi_choice *mc, unsigned *form)
{
	int changed = 1;
	size_t i, j;

	while (changed) {
		changed = 0;
		for (i = 0; i < mc->n; i++) {
			unsigned s, best = form[i];
			double best_v = -DBL_MAX;

			for (s = 0; s < mc->forms[i]; s++) {
				double v = mc->unary[i][s];

				for (j = 0; j < mc->n; j++)
					if (j != i)
						v += multi_choice_pair_gain(mc, i, s, j, form[j]);
				if (v > best_v + EPS) {
					best_v = v;
					best = s;
				}
			}
			if (best != form[i]) {
				/* only a strict gain moves: the loop ends */
				double old = mc->unary[i][form[i]];

				for (j = 0; j < mc->n; j++)
					if (j != i)
						old += multi_choice_pair_gain(mc, i, form[i], j, form[j]);
				if (best_v > old + EPS) {
					form[i] = best;
					changed = 1;
				}
			}
		}
	}
}

int multi_choice_greedy(const struct multi_choice *mc, const struct multi_choice_options *opt,
			struct multi_choice_result *res)
{
	unsigned *alt;
	double t0 = now(), v;
	size_t i;
	int ret;

	(void)opt;
	if ((ret = check_forms(mc)))
		return ret;
	start(res, "greedy", mc->n);
	/* from every load as built, and from each load's best form alone */
	local_search(mc, res->form);
	res->objective = multi_choice_value(mc, res->form);
	alt = xcalloc(mc->n + 1, sizeof(*alt));
	for (i = 0; i < mc->n; i++) {
		unsigned s;

		for (s = 1; s < mc->forms[i]; s++)
			if (mc->unary[i][s] > mc->unary[i][alt[i]] + EPS)
				alt[i] = s;
	}
	local_search(mc, alt);
	v = multi_choice_value(mc, alt);
	if (v > res->objective + EPS) {
		res->objective = v;
		memcpy(res->form, alt, mc->n * sizeof(*alt));
	}
	free(alt);
	res->bound = NAN;
	res->seconds = now() - t0;
	return 0;
}

/* ---- branch and bound --------------------------------------------------- */

struct bnb {
	const struct multi_choice *mc;
	size_t *order;              /* depth -> load */
	size_t *depth_of;           /* load -> depth */
	unsigned *cur, *best;
	double best_v;
	unsigned long nodes, node_limit;
	double deadline;            /* 0: none */
	int stopped;
	double open_bound;          /* the largest bound of a subtree a limit left open */
};

/*
 * An upper bound of what the loads at depths >= d can add, given the forms
 * of the loads above: each such load's best form counting its gains with
 * the loads above, and with each load below it the best form of that pair.
 */
static double bound_below(const struct bnb *b, size_t d)
{
	const struct multi_choice *mc = b->mc;
	double total = 0;
	size_t e, f, a;

	for (e = d; e < mc->n; e++) {
		size_t i = b->order[e];
		double best = -DBL_MAX;
		unsigned s, t;

		for (s = 0; s < mc->forms[i]; s++) {
			double v = mc->unary[i][s];

			for (a = 0; a < d; a++)
				v += multi_choice_pair_gain(mc, i, s, b->order[a], b->cur[b->order[a]]);
			for (f = e + 1; f < mc->n; f++) {
				size_t j = b->order[f];
				double m = -DBL_MAX;

				for (t = 0; t < mc->forms[j]; t++)
					if (multi_choice_pair_gain(mc, i, s, j, t) > m)
						m = multi_choice_pair_gain(mc, i, s, j, t);
				v += m;
			}
			if (v > best)
				best = v;
		}
		total += best;
	}
	return total;
}

/* What load i in form s adds to the loads above depth d. */
static double gain_at(const struct bnb *b, size_t d, size_t i, unsigned s)
{
	double v = b->mc->unary[i][s];
	size_t a;

	for (a = 0; a < d; a++)
		v += multi_choice_pair_gain(b->mc, i, s, b->order[a], b->cur[b->order[a]]);
	return v;
}

static void search(struct bnb *b, size_t d, double value)
{
	const struct multi_choice *mc = b->mc;
	size_t i;
	unsigned s, k;
	double bound;
	unsigned tried[MULTI_CHOICE_MAX_FORMS] = { 0 };

	if (b->stopped)
		return;
	b->nodes++;
	if (d == mc->n) {
		if (value > b->best_v + EPS) {
			b->best_v = value;
			memcpy(b->best, b->cur, mc->n * sizeof(*b->cur));
		}
		return;
	}
	bound = value + bound_below(b, d);
	if (bound <= b->best_v + EPS)
		return;
	if ((b->node_limit && b->nodes >= b->node_limit) ||
	    (b->deadline > 0 && (b->nodes & 255) == 0 && now() > b->deadline)) {
		b->stopped = 1;
		if (bound > b->open_bound)
			b->open_bound = bound;
		return;
	}
	i = b->order[d];
	/* the forms in order of what they add now, the best first */
	for (k = 0; k < mc->forms[i]; k++) {
		unsigned pick = mc->forms[i];
		double pv = -DBL_MAX;

		for (s = 0; s < mc->forms[i]; s++) {
			double v;

			if (tried[s])
				continue;
			v = gain_at(b, d, i, s);
			if (pick == mc->forms[i] || v > pv) {
				pick = s;
				pv = v;
			}
		}
		tried[pick] = 1;
		b->cur[i] = pick;
		search(b, d + 1, value + pv);
		if (b->stopped) {
			/* the forms not tried are open too */
			if (bound > b->open_bound)
				b->open_bound = bound;
			return;
		}
	}
}

static double max_abs_gain(const struct multi_choice *mc, size_t i)
{
	double m = 0;
	size_t j;
	unsigned s, t;

	for (s = 0; s < mc->forms[i]; s++)
		m = fmax(m, fabs(mc->unary[i][s]));
	for (j = 0; j < mc->n; j++)
		if (j != i)
			for (s = 0; s < mc->forms[i]; s++)
				for (t = 0; t < mc->forms[j]; t++)
					m = fmax(m, fabs(multi_choice_pair_gain(mc, i, s, j, t)));
	return m;
}

static const struct multi_choice *sort_mc;

static int by_influence(const void *a, const void *b)
{
	double x = max_abs_gain(sort_mc, *(const size_t *)a);
	double y = max_abs_gain(sort_mc, *(const size_t *)b);

	if (x != y)
		return x > y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

int multi_choice_bnb(const struct multi_choice *mc, const struct multi_choice_options *opt,
		     struct multi_choice_result *res)
{
	struct multi_choice_result greedy;
	struct bnb b;
	double t0 = now();
	size_t i;
	int ret;

	if ((ret = multi_choice_greedy(mc, opt, &greedy)))
		return ret;
	start(res, "bnb", mc->n);
	memset(&b, 0, sizeof(b));
	b.mc = mc;
	b.order = xcalloc(mc->n + 1, sizeof(*b.order));
	b.depth_of = xcalloc(mc->n + 1, sizeof(*b.depth_of));
	b.cur = xcalloc(mc->n + 1, sizeof(*b.cur));
	b.best = res->form;
	for (i = 0; i < mc->n; i++)
		b.order[i] = i;
	/* the loads with the most at stake first: their choice bounds the rest best */
	sort_mc = mc;
	qsort(b.order, mc->n, sizeof(*b.order), by_influence);
	for (i = 0; i < mc->n; i++)
		b.depth_of[b.order[i]] = i;
	memcpy(b.best, greedy.form, mc->n * sizeof(*b.best));
	b.best_v = greedy.objective;
	b.node_limit = opt->node_limit;
	b.deadline = opt->time_limit_seconds > 0 ? t0 + opt->time_limit_seconds : 0;
	b.open_bound = -DBL_MAX;
	search(&b, 0, 0);
	res->objective = multi_choice_value(mc, res->form);
	res->optimal = !b.stopped;
	res->bound = b.stopped ? fmax(res->objective, b.open_bound) : res->objective;
	res->nodes = b.nodes;
	res->seconds = now() - t0;
	free(b.order);
	free(b.depth_of);
	free(b.cur);
	multi_choice_result_release(&greedy);
	return 0;
}

/* ---- the ILP (GLPK) ----------------------------------------------------- */

static void add_row(glp_prob *lp, const int *ind, const double *val, int len)
{
	int row = glp_add_rows(lp, 1);

	glp_set_row_bnds(lp, row, GLP_FX, 0.0, 0.0);
	glp_set_mat_row(lp, row, len, ind, val);
}

int multi_choice_ilp(const struct multi_choice *mc, const struct multi_choice_options *opt,
		     struct multi_choice_result *res)
{
	struct multi_choice_result greedy;
	glp_prob *lp;
	glp_smcp smcp;
	glp_iocp iocp;
	int *xcol, *ind, old_term, ret, status;
	double *val, t0 = now(), lp_bound;
	size_t i, j, nx = 0;
	unsigned s, t;

	if ((ret = multi_choice_greedy(mc, opt, &greedy)))
		return ret;
	start(res, "ilp", mc->n);
	lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MAX);
	xcol = xcalloc(mc->n + 1, sizeof(*xcol));
	ind = xcalloc(2 * MULTI_CHOICE_MAX_FORMS + 2, sizeof(*ind));
	val = xcalloc(2 * MULTI_CHOICE_MAX_FORMS + 2, sizeof(*val));
	/* x_is, one per form; sum_s x_is = 1 */
	for (i = 0; i < mc->n; i++) {
		xcol[i] = glp_add_cols(lp, (int)mc->forms[i]);
		for (s = 0; s < mc->forms[i]; s++) {
			glp_set_col_kind(lp, xcol[i] + (int)s, GLP_BV);
			glp_set_obj_coef(lp, xcol[i] + (int)s, mc->unary[i][s]);
			ind[s + 1] = xcol[i] + (int)s;
			val[s + 1] = 1;
		}
		{
			int row = glp_add_rows(lp, 1);

			glp_set_row_bnds(lp, row, GLP_FX, 1.0, 1.0);
			glp_set_mat_row(lp, row, (int)mc->forms[i], ind, val);
		}
		nx += mc->forms[i];
	}
	/* y_ijst per pair with gains, tied to both loads' x by its marginals */
	for (i = 0; i < mc->n; i++) {
		for (j = i + 1; j < mc->n; j++) {
			const double *m = mc->pair[i * mc->n + j];
			unsigned ki = mc->forms[i], kj = mc->forms[j];
			int y;

			if (!m)
				continue;
			y = glp_add_cols(lp, (int)(ki * kj));
			for (s = 0; s < ki; s++)
				for (t = 0; t < kj; t++) {
					glp_set_col_bnds(lp, y + (int)(s * kj + t), GLP_DB, 0.0, 1.0);
					glp_set_obj_coef(lp, y + (int)(s * kj + t), m[s * kj + t]);
				}
			for (s = 0; s < ki; s++) {       /* sum_t y_ijst - x_is = 0 */
				for (t = 0; t < kj; t++) {
					ind[t + 1] = y + (int)(s * kj + t);
					val[t + 1] = 1;
				}
				ind[kj + 1] = xcol[i] + (int)s;
				val[kj + 1] = -1;
				add_row(lp, ind, val, (int)kj + 1);
			}
			for (t = 0; t < kj; t++) {       /* sum_s y_ijst - x_jt = 0 */
				for (s = 0; s < ki; s++) {
					ind[s + 1] = y + (int)(s * kj + t);
					val[s + 1] = 1;
				}
				ind[ki + 1] = xcol[j] + (int)t;
				val[ki + 1] = -1;
				add_row(lp, ind, val, (int)ki + 1);
			}
		}
	}
	(void)nx;
	old_term = glp_term_out(GLP_OFF);
	glp_init_smcp(&smcp);
	smcp.msg_lev = GLP_MSG_OFF;
	status = glp_simplex(lp, &smcp);
	lp_bound = status == 0 && glp_get_status(lp) == GLP_OPT ? glp_get_obj_val(lp) : NAN;
	glp_init_iocp(&iocp);
	iocp.msg_lev = GLP_MSG_OFF;
	if (opt->time_limit_seconds > 0)
		iocp.tm_lim = solver_glpk_ms(opt->time_limit_seconds);
	status = status == 0 ? glp_intopt(lp, &iocp) : status;
	glp_term_out(old_term);
	if (status != 0 && status != GLP_ETMLIM) {
		ret = error_set(CA_E_INTERNAL, "GLPK failed on the multi-choice ILP (code %d)", status);
		multi_choice_result_release(res);
		goto out;
	}
	memcpy(res->form, greedy.form, mc->n * sizeof(*res->form));
	if (glp_mip_status(lp) == GLP_OPT || glp_mip_status(lp) == GLP_FEAS) {
		unsigned *f = xcalloc(mc->n + 1, sizeof(*f));

		for (i = 0; i < mc->n; i++)
			for (s = 0; s < mc->forms[i]; s++)
				if (glp_mip_col_val(lp, xcol[i] + (int)s) > 0.5)
					f[i] = s;
		if (multi_choice_value(mc, f) > greedy.objective + EPS ||
		    glp_mip_status(lp) == GLP_OPT)
			memcpy(res->form, f, mc->n * sizeof(*f));
		free(f);
	}
	res->objective = multi_choice_value(mc, res->form);
	res->optimal = glp_mip_status(lp) == GLP_OPT;
	res->bound = res->optimal ? res->objective : fmax(res->objective, lp_bound);
	res->seconds = now() - t0;
out:
	glp_delete_prob(lp);
	free(xcol);
	free(ind);
	free(val);
	multi_choice_result_release(&greedy);
	return ret;
}
