/*
 * The specialised exact solver: depth-first branch and bound on the
 * traffic reduction problem as what it is, an unconstrained 0-1 quadratic
 * program,
 *
 *   maximise  T(x) = sum_i W(v_i) x_i + sum_{i<j} W(e_ij) x_i x_j,  x in {0,1}^n.
 *
 * docs/model.md ("Branch and bound") explains each part; bench/results/
 * solve.md measures them. In short, at every node of the search tree:
 *
 * 1. Persistency fixing, to a fixpoint: with lin_i = W(v_i) + the edges to
 *    the loads fixed cached, and pos_i / neg_i the sums of the positive /
 *    negative edges to the loads still free, caching i never helps when
 *    lin_i + pos_i <= 0 (fix it bypassed) and never hurts when
 *    lin_i + neg_i >= 0 (fix it cached). Each fixing keeps an optimum
 *    reachable. Fixing one load updates lin, pos and neg in O(n).
 * 2. A cheap bound: T(x) = sum_i x_i (lin_i + 1/2 sum_j W(e_ij) x_j) over the
 *    free loads, at most sum_i max(0, lin_i + pos_i / 2).
 * 3. The semidefinite (SDP) bound of the node's subproblem, written in +-1
 *    variables as t^T L t with t_0 = 1: the max-cut relaxation
 *    max <L, X> s.t. diag X = 1, X psd. Its value is approached from below
 *    by the low-rank coordinate ascent of Burer and Monteiro ("mixing
 *    method": each t_i a unit vector of R^rank, set in turn to the
 *    direction of sum_j L_ij t_j), warm-started from the parent's vectors.
 *    Any u gives the upper bound sum_i u_i + m lambda_max(L - Diag u)
 *    (m = size of L), whatever the vectors' quality; u_i = |sum_j L_ij t_j|
 *    makes it tight at the optimum. A node is pruned only on this
 *    certificate, checked by a Cholesky factorisation of c I - (L - Diag u),
 *    never on the coordinate ascent's own value (a lower estimate). The
 *    ascent stops early when its value is clearly above what would prune.
 * 4. The SDP vectors also round to a plan (x_i = 1 where t_i leans to t_0),
 *    improved by a 1-flip local search, which keeps the incumbent good.
 *
 * The incumbent starts from the best of the empty plan and the heuristic's
 * plan, each improved by the same local search. Branching takes the free
 * load whose expected marginal gain lin_i + (pos_i + neg_i) / 2 is largest
 * in magnitude, its likelier value first.
 *
 * Exactness: with integral weights (the model's are whole bytes) every
 * objective is an integer and a subtree is pruned when its bound, plus a
 * rounding margin of 1e-9 of the sum of |weights|, is below best + 1; with
 * other weights, when it is below best + that margin (a plan better by less
 * than the margin may then be missed). A time or node limit stops the
 * search with the best plan so far, "optimal" false and the bound over the
 * subtrees left: the root's SDP bound, or tighter ones found below it.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/solver.h"
#include "base/xalloc.h"

/* The SDP bound runs on subproblems of at most this many free loads; larger
 * ones get the cheap bound only (an L of 513^2 doubles, ~2 MiB, per copy). */
#define BNB_SDP_MAX 512
#define BNB_RANK_MAX 24
/* Most sweeps of the coordinate ascent at one node. */
#define BNB_SWEEPS_MAX 500

enum { FREE = -1 };

struct bnb {
	const struct graph *g;
	size_t n;
	const struct solver_options *opt;
	/* The partial assignment. */
	signed char *val;           /* FREE, 0 (bypass) or 1 (cache) */
	double *lin;                /* W(v_i) + edges to the loads fixed cached */
	double *pos, *neg;          /* sums of positive / negative edges to free loads */
	double fixed;               /* T of the loads fixed cached */
	size_t nr_free;
	size_t *trail, nr_trail;    /* fixed loads, in order, for undoing */
	/* The incumbent. */
	double best;
	unsigned char *best_x;
	unsigned char *x;           /* scratch plan for rounding */
	unsigned char *last_round;  /* the last rounded plan (searched from already) */
	double *gain;               /* scratch for the local search */
	/* Pruning. */
	int integral;
	double tol;
	/* The SDP bound. */
	size_t rank;
	double *vec;                /* (n + 1) x rank: load i's vector, row n is t_0's */
	size_t *free_list;
	double *lmat, *amat;        /* m x m */
	double *vm;                 /* m x rank */
	double *u, *work;           /* m each */
	double *lean;               /* per load: <t_0, t_i> from the last SDP */
	/* Limits and statistics. */
	double deadline;            /* solver_clock() value, 0 = none */
	double t0, next_progress;   /* for solver_progress_maybe() */
	unsigned long node_limit, nodes;
	int stopped;
	double open_bound;          /* largest bound of a subtree left unexplored */
};

static int bnb_out_of_time(struct bnb *b)
{
	solver_progress_maybe(b->opt, "bnb", b->t0, &b->next_progress, b->best, NAN, b->nodes);
	if (!b->stopped && b->deadline > 0 && solver_clock() > b->deadline)
		b->stopped = 1;
	return b->stopped;
}

static void bnb_fix(struct bnb *b, size_t v, int value)
{
	const double *row = b->g->edges + v * b->n;
	size_t i;

	b->val[v] = (signed char)value;
	b->trail[b->nr_trail++] = v;
	b->nr_free--;
	if (value) {
		b->fixed += b->lin[v];
		for (i = 0; i < b->n; i++)
			b->lin[i] += row[i];
	}
	for (i = 0; i < b->n; i++) {
		if (b->val[i] != FREE)
			continue;
		if (row[i] > 0)
			b->pos[i] -= row[i];
		else
			b->neg[i] -= row[i];
	}
}

static void bnb_undo(struct bnb *b, size_t mark)
{
	size_t i;

	while (b->nr_trail > mark) {
		size_t v = b->trail[--b->nr_trail];
		const double *row = b->g->edges + v * b->n;
		int value = b->val[v];

		b->val[v] = FREE;
		b->nr_free++;
		for (i = 0; i < b->n; i++) {
			if (b->val[i] != FREE || i == v)
				continue;
			if (row[i] > 0)
				b->pos[i] += row[i];
			else
				b->neg[i] += row[i];
		}
		if (value) {
			for (i = 0; i < b->n; i++)
				b->lin[i] -= row[i];
			b->fixed -= b->lin[v];
		}
	}
}

/* First-order persistency, to a fixpoint (bypass first on a tie, as the
 * ILP's fixing does). */
static void bnb_propagate(struct bnb *b)
{
	int changed = 1;
	size_t i;

	while (changed) {
		changed = 0;
		for (i = 0; i < b->n; i++) {
			if (b->val[i] != FREE)
				continue;
			if (b->lin[i] + b->pos[i] <= 0) {
				bnb_fix(b, i, 0);
				changed = 1;
			} else if (b->lin[i] + b->neg[i] >= 0) {
				bnb_fix(b, i, 1);
				changed = 1;
			}
		}
	}
}

static double bnb_cheap_bound(const struct bnb *b)
{
	double bound = b->fixed;
	size_t i;

	for (i = 0; i < b->n; i++) {
		double t;

		if (b->val[i] != FREE)
			continue;
		t = b->lin[i] + 0.5 * b->pos[i];
		if (t > 0)
			bound += t;
	}
	return bound;
}

/* A subtree whose bound is below this cannot hold a better plan. */
static double bnb_target(const struct bnb *b)
{
	return b->integral ? b->best + 1 - b->tol : b->best + b->tol;
}

/*
 * 1-flip local search from x: while flipping one load raises T, flip the
 * one that raises it most. Returns T(x). gain[i] = W(v_i) + the edges from
 * i to the cached loads, so flipping i changes T by +-gain[i].
 */
static double local_search(const struct graph *g, unsigned char *x, double *gain)
{
	size_t n = g->n, i, j;
	double t = 0;

	for (i = 0; i < n; i++) {
		const double *row = g->edges + i * n;

		gain[i] = g->nodes[i].weight;
		for (j = 0; j < n; j++)
			if (x[j])
				gain[i] += row[j];
	}
	for (;;) {
		double step = 0;
		size_t flip = n;

		for (i = 0; i < n; i++) {
			double d = x[i] ? -gain[i] : gain[i];

			if (d > step) {
				step = d;
				flip = i;
			}
		}
		if (flip == n)
			break;
		x[flip] ^= 1;
		{
			const double *row = g->edges + flip * n;
			double sign = x[flip] ? 1 : -1;

			for (j = 0; j < n; j++)
				gain[j] += sign * row[j];
		}
	}
	/* T = sum over cached i of (W(v_i) + gain[i]) / 2 */
	for (i = 0; i < n; i++)
		if (x[i])
			t += 0.5 * (g->nodes[i].weight + gain[i]);
	return t;
}

static void bnb_offer(struct bnb *b, const unsigned char *x, double t)
{
	if (t > b->best) {
		b->best = t;
		memcpy(b->best_x, x, b->n);
	}
}

/*
 * The largest eigenvalue of the symmetric m x m matrix a (destroyed), from
 * above: Householder reduction to tridiagonal form, then bisection on the
 * Sturm sequence, keeping the upper end of the bracket (no eigenvalue above
 * it), plus a margin for the reduction's rounding. work holds 2m doubles.
 */
static double top_eigenvalue(size_t m, double *a, double *work)
{
	double *d = work, *e = work + m, lo = INFINITY, hi = -INFINITY, frob = 0, scale;
	size_t k, i, j;
	int it;

	for (i = 0; i < m * m; i++)
		frob += a[i] * a[i];
	frob = sqrt(frob);
	for (k = 0; k + 2 < m; k++) {
		double *x = a + k * m, alpha = 0, norm = 0, kk = 0;
		double *v = a + k * m;  /* row k is dead after this step: keep v there */

		for (i = k + 1; i < m; i++)
			alpha += x[i] * x[i];
		d[k] = a[k * m + k];
		if (alpha == 0) {
			e[k] = 0;
			continue;
		}
		alpha = sqrt(alpha);
		if (x[k + 1] > 0)
			alpha = -alpha;
		e[k] = alpha;
		v[k + 1] -= alpha;
		for (i = k + 1; i < m; i++)
			norm += v[i] * v[i];
		norm = 1 / sqrt(norm);
		for (i = k + 1; i < m; i++)
			v[i] *= norm;
		/* trailing block: A -= 2 (v w^T + w v^T), w = p - (v^T p) v, p = A v */
		for (i = k + 1; i < m; i++) {
			const double *ai = a + i * m;
			double s = 0;

			for (j = k + 1; j < m; j++)
				s += ai[j] * v[j];
			a[i * m + k] = s;       /* column k below the diagonal is dead too */
			kk += v[i] * s;
		}
		for (i = k + 1; i < m; i++)
			a[i * m + k] -= kk * v[i];
		for (i = k + 1; i < m; i++) {
			double *ai = a + i * m, vi = 2 * v[i], wi = 2 * a[i * m + k];

			for (j = k + 1; j < m; j++)
				ai[j] -= vi * a[j * m + k] + wi * v[j];
		}
	}
	if (m >= 2) {
		d[m - 2] = a[(m - 2) * m + m - 2];
		e[m - 2] = a[(m - 2) * m + m - 1];
	}
	d[m - 1] = a[(m - 1) * m + m - 1];
	for (i = 0; i < m; i++) {
		double r = (i > 0 ? fabs(e[i - 1]) : 0) + (i + 1 < m ? fabs(e[i]) : 0);

		lo = fmin(lo, d[i] - r);
		hi = fmax(hi, d[i] + r);
	}
	scale = fmax(fabs(lo), fabs(hi));
	for (it = 0; it < 200 && hi - lo > 1e-15 * scale; it++) {
		double mid = 0.5 * (lo + hi), qv = 1;
		size_t above = 0;

		for (i = 0; i < m; i++) {
			qv = d[i] - mid - (i ? e[i - 1] * e[i - 1] / qv : 0);
			if (qv == 0)
				qv = -DBL_MIN;
			above += qv > 0;
		}
		if (above)
			lo = mid;
		else
			hi = mid;
	}
	return hi + 1e-12 * (double)m * frob;
}

/*
 * Whether c I - a is positive definite, i.e. lambda_max(a) < c (a m x m,
 * destroyed): a Cholesky factorisation of it, in place, succeeds. c should
 * carry a margin for rounding (bnb_sdp does).
 */
static int below_spectrum_bound(size_t m, double *a, double c)
{
	size_t i, j, k;

	for (i = 0; i < m * m; i++)
		a[i] = -a[i];
	for (i = 0; i < m; i++)
		a[i * m + i] += c;
	for (j = 0; j < m; j++) {
		double *aj = a + j * m, djj = aj[j];

		for (k = 0; k < j; k++)
			djj -= aj[k] * aj[k];
		if (!(djj > 0))
			return 0;
		djj = sqrt(djj);
		aj[j] = djj;
		for (i = j + 1; i < m; i++) {
			double *ai = a + i * m, s = ai[j];

			for (k = 0; k < j; k++)
				s -= ai[k] * aj[k];
			ai[j] = s / djj;
		}
	}
	return 1;
}

/*
 * One sweep of the coordinate ascent over the m vectors vm (rank r each):
 * t_i = g_i / |g_i| with g_i = sum_j L_ij t_j, in turn. Leaves u_i = |g_i|
 * in b->u and returns their sum (the ascent's running value). Inlined with
 * a constant r by bnb_sweep, so the compiler can unroll the inner loops.
 */
static inline double sweep_rank(struct bnb *b, size_t m, const size_t r)
{
	size_t i, j, t;
	double total = 0, g[BNB_RANK_MAX];

	for (i = 0; i < m; i++) {
		const double *li = b->lmat + i * m;
		double norm = 0;

		for (t = 0; t < r; t++)
			g[t] = 0;
		for (j = 0; j < m; j++) {
			const double *vj = b->vm + j * r;
			double l = li[j];

			if (l == 0)
				continue;
			for (t = 0; t < r; t++)
				g[t] += l * vj[t];
		}
		for (t = 0; t < r; t++)
			norm += g[t] * g[t];
		norm = sqrt(norm);
		b->u[i] = norm;
		total += norm;
		if (norm > 0)
			for (t = 0; t < r; t++)
				b->vm[i * r + t] = g[t] / norm;
	}
	return total;
}

static double bnb_sweep(struct bnb *b, size_t m)
{
	switch (b->rank) {
	case 4: return sweep_rank(b, m, 4);
	case 8: return sweep_rank(b, m, 8);
	case 12: return sweep_rank(b, m, 12);
	case 16: return sweep_rank(b, m, 16);
	default: return sweep_rank(b, m, BNB_RANK_MAX);
	}
}

/*
 * The SDP bound of the node's subproblem (module comment, step 3). Returns
 * a proven upper bound of T over the subtree, or INFINITY when it gave up
 * (the bound would not prune) or the time ran out. With exact set, it runs
 * the ascent to convergence and returns the bound's value (the root's, for
 * the gap of a stopped run); otherwise it proves only whether the bound is
 * below bnb_target(). Leaves <t_0, t_i> in b->lean and offers the rounded
 * plan to the incumbent.
 */
static double bnb_sdp(struct bnb *b, int exact)
{
	size_t n = b->n, k = 0, m, r = b->rank, a, c, i, sweep;
	double cst = b->fixed, prev = INFINITY, result = INFINITY, retry = INFINITY;
	const double *q = b->g->edges;

	for (i = 0; i < n; i++)
		if (b->val[i] == FREE)
			b->free_list[k++] = i;
	m = k + 1;
	/* T = cst + t^T L t with t = (1, 2x - 1): L_0a = b_a / 2, L_ac = W(e) / 8 */
	b->lmat[0] = 0;
	for (a = 0; a < k; a++) {
		size_t va = b->free_list[a];
		double *la = b->lmat + (1 + a) * m, lin_s = 0.5 * b->lin[va];
		const double *qa = q + va * n;

		cst += 0.5 * b->lin[va];
		for (c = 0; c < k; c++) {
			double e = qa[b->free_list[c]];

			lin_s += 0.25 * e;
			if (c > a)
				cst += 0.25 * e;
			la[1 + c] = 0.125 * e;
		}
		la[1 + a] = 0;
		la[0] = b->lmat[1 + a] = 0.5 * lin_s;
	}
	memcpy(b->vm, b->vec + n * r, r * sizeof(*b->vm));
	for (a = 0; a < k; a++)
		memcpy(b->vm + (1 + a) * r, b->vec + b->free_list[a] * r, r * sizeof(*b->vm));

	for (sweep = 0; sweep < BNB_SWEEPS_MAX; sweep++) {
		double value, delta, target = bnb_target(b);
		int converged, certify;

		if (bnb_out_of_time(b))
			break;
		value = cst + bnb_sweep(b, m);
		delta = fabs(prev - value);
		prev = value;
		converged = delta <= 1e-9 * (fabs(value) + 1) || sweep + 1 == BNB_SWEEPS_MAX;
		if (!exact && sweep >= 2 && value >= target && delta < 0.1 * (value - target))
			break;  /* the SDP bound is above the target: no pruning here */
		/* after a failed certificate, try again once the ascent has
		 * settled ten times more */
		certify = converged || (!exact && value < target && delta < 0.01 * (target - value) &&
					delta < retry);
		if (!certify)
			continue;
		{
			/* u from this sweep: the bound holds for any u */
			double su = cst, maxabs = 0;

			memcpy(b->amat, b->lmat, m * m * sizeof(*b->amat));
			for (i = 0; i < m; i++) {
				b->amat[i * m + i] -= b->u[i];
				su += b->u[i];
			}
			if (exact) {
				result = su + (double)m * top_eigenvalue(m, b->amat, b->work);
				break;
			}
			for (i = 0; i < m * m; i++) {
				double v = fabs(b->amat[i]);

				maxabs = v > maxabs ? v : maxabs;
			}
			/* bound = su + m lambda_max < target iff lambda_max < (target - su) / m */
			if (below_spectrum_bound(m, b->amat,
						 (target - su) / (double)m - 1e-10 * (double)m * maxabs)) {
				result = -INFINITY; /* proven below the target */
				break;
			}
			if (converged)
				break;
			retry = 0.1 * delta;
		}
	}
	memcpy(b->vec + n * r, b->vm, r * sizeof(*b->vm));
	for (a = 0; a < k; a++) {
		const double *va = b->vm + (1 + a) * r;
		double d = 0;
		size_t t;

		memcpy(b->vec + b->free_list[a] * r, va, r * sizeof(*b->vm));
		for (t = 0; t < r; t++)
			d += b->vm[t] * va[t];
		b->lean[b->free_list[a]] = d;
	}
	if (!b->stopped) {
		for (i = 0; i < n; i++)
			b->x[i] = b->val[i] == FREE ? b->lean[i] > 0 : b->val[i];
		/* neighbouring nodes often round alike: search each plan once */
		if (memcmp(b->x, b->last_round, n)) {
			memcpy(b->last_round, b->x, n);
			bnb_offer(b, b->x, local_search(b->g, b->x, b->gain));
		}
	}
	return result;
}

/* The free load to branch on, and the value to try first. */
static size_t bnb_choose(const struct bnb *b, int *first)
{
	size_t i, pick = b->n;
	double score = -1;

	for (i = 0; i < b->n; i++) {
		double expect, s;

		if (b->val[i] != FREE)
			continue;
		expect = b->lin[i] + 0.5 * (b->pos[i] + b->neg[i]);
		s = fabs(expect);
		if (s > score) {
			score = s;
			pick = i;
			*first = expect > 0;
		}
	}
	return pick;
}

static void bnb_leave_open(struct bnb *b, double bound)
{
	if (bound > b->open_bound)
		b->open_bound = bound;
}

/* Searches the subtree of the current assignment, whose bound is bound_in. */
static void bnb_dfs(struct bnb *b, double bound_in, int root)
{
	size_t mark = b->nr_trail, v, saved_rows = 0;
	double bound, *saved = NULL;
	int first = 1, k;

	if (bnb_out_of_time(b) || (b->node_limit && b->nodes >= b->node_limit)) {
		b->stopped = 1;
		bnb_leave_open(b, bound_in);
		return;
	}
	b->nodes++;
	bnb_propagate(b);
	bound = fmin(bound_in, bnb_cheap_bound(b));
	if (!b->nr_free) {
		if (b->fixed > b->best) {
			size_t i;

			for (i = 0; i < b->n; i++)
				b->x[i] = (unsigned char)b->val[i];
			bnb_offer(b, b->x, b->fixed);
		}
		goto out;
	}
	if (bound < bnb_target(b))
		goto out;
	if (b->opt->bnb_sdp && b->nr_free <= BNB_SDP_MAX) {
		double s = bnb_sdp(b, root);

		if (root && isfinite(s)) {
			bound = fmin(bound, s);
		} else if (s == -INFINITY) {
			goto out;
		}
		if (b->stopped) {
			bnb_leave_open(b, bound);
			goto out;
		}
		if (bound < bnb_target(b))
			goto out;
	}
	v = bnb_choose(b, &first);
	if (b->opt->bnb_sdp && b->nr_free <= BNB_SDP_MAX) {
		/* the second child starts from this node's vectors, not from
		 * what the first child's subtree left */
		size_t i, row = 0, r = b->rank;

		saved_rows = b->nr_free + 1;
		saved = xmalloc(saved_rows * r * sizeof(*saved));
		for (i = 0; i <= b->n; i++)
			if (i == b->n || b->val[i] == FREE)
				memcpy(saved + r * row++, b->vec + i * r, r * sizeof(*saved));
	}
	for (k = 0; k < 2; k++) {
		size_t m2 = b->nr_trail;

		if (k && saved) {
			size_t i, row = 0, r = b->rank;

			for (i = 0; i <= b->n; i++)
				if (i == b->n || b->val[i] == FREE)
					memcpy(b->vec + i * r, saved + r * row++, r * sizeof(*saved));
		}
		bnb_fix(b, v, k ? !first : first);
		bnb_dfs(b, bound, 0);
		bnb_undo(b, m2);
		if (b->stopped) {
			if (!k)
				bnb_leave_open(b, bound);
			break;
		}
	}
	free(saved);
out:
	bnb_undo(b, mark);
}

static void bnb_init(struct bnb *b, const struct graph *g, const struct solver_options *opt)
{
	size_t n = g->n, i, j, m0, r;
	double total = 0;
	uint64_t state = 0x2026112205u;

	memset(b, 0, sizeof(*b));
	b->g = g;
	b->n = n;
	b->opt = opt;
	b->val = xmalloc(n + 1);
	memset(b->val, FREE, n + 1);
	b->lin = xcalloc(n + 1, sizeof(*b->lin));
	b->pos = xcalloc(n + 1, sizeof(*b->pos));
	b->neg = xcalloc(n + 1, sizeof(*b->neg));
	b->trail = xmalloc((n + 1) * sizeof(*b->trail));
	b->best_x = xcalloc(n + 1, 1);
	b->x = xcalloc(n + 1, 1);
	b->last_round = xcalloc(n + 1, 1);
	b->gain = xcalloc(n + 1, sizeof(*b->gain));
	b->nr_free = n;
	b->integral = 1;
	for (i = 0; i < n; i++) {
		const double *row = g->edges + i * n;
		double w = g->nodes[i].weight;

		b->lin[i] = w;
		total += fabs(w);
		b->integral &= w == floor(w);
		for (j = 0; j < n; j++) {
			if (row[j] > 0)
				b->pos[i] += row[j];
			else
				b->neg[i] += row[j];
			if (j > i) {
				total += fabs(row[j]);
				b->integral &= row[j] == floor(row[j]);
			}
		}
	}
	/* every partial sum of an integral objective is exact below 2^53 */
	b->integral &= total < 4503599627370496.0;
	b->tol = 1e-9 * (total + 1);
	/* rank: r (r + 1) / 2 > m leaves the ascent no spurious local
	 * optimum (Boumal, Voroninski, Bandeira 2016); one of the ranks
	 * bnb_sweep unrolls, capped since the bound holds at any rank */
	m0 = (n < BNB_SDP_MAX ? n : BNB_SDP_MAX) + 1;
	for (r = 4; r < BNB_RANK_MAX && r * (r + 1) / 2 <= m0; r += r < 16 ? 4 : 8)
		;
	b->rank = r;
	if (!opt->bnb_sdp)
		return;
	b->vec = xmalloc((n + 1) * b->rank * sizeof(*b->vec));
	for (i = 0; i < (n + 1) * b->rank; i++) {
		/* splitmix64: a fixed start, so runs repeat exactly */
		uint64_t z = (state += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		b->vec[i] = (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0 - 0.5;
	}
	for (i = 0; i <= n; i++) {
		double *v = b->vec + i * b->rank, norm = 0;

		for (j = 0; j < b->rank; j++)
			norm += v[j] * v[j];
		norm = 1 / sqrt(norm);
		for (j = 0; j < b->rank; j++)
			v[j] *= norm;
	}
	b->free_list = xmalloc(m0 * sizeof(*b->free_list));
	b->lmat = xmalloc(m0 * m0 * sizeof(*b->lmat));
	b->amat = xmalloc(m0 * m0 * sizeof(*b->amat));
	b->vm = xmalloc(m0 * b->rank * sizeof(*b->vm));
	b->u = xmalloc(m0 * sizeof(*b->u));
	b->work = xmalloc(2 * m0 * sizeof(*b->work));
	b->lean = xcalloc(n + 1, sizeof(*b->lean));
}

static void bnb_release(struct bnb *b)
{
	free(b->val);
	free(b->lin);
	free(b->pos);
	free(b->neg);
	free(b->trail);
	free(b->best_x);
	free(b->x);
	free(b->last_round);
	free(b->gain);
	free(b->vec);
	free(b->free_list);
	free(b->lmat);
	free(b->amat);
	free(b->vm);
	free(b->u);
	free(b->work);
	free(b->lean);
}

/* Every positive node and edge weight summed: no plan can score more. */
static double trivial_bound(const struct graph *g)
{
	double sum = 0;
	size_t i, j;

	for (i = 0; i < g->n; i++) {
		sum += fmax(0, g->nodes[i].weight);
		for (j = i + 1; j < g->n; j++)
			sum += fmax(0, g->edges[i * g->n + j]);
	}
	return sum;
}

static int bnb_solve(const struct graph *g, const struct solver_options *opt,
		     struct solver_result *res)
{
	double t0 = solver_clock();
	struct solver_result heur;
	struct bnb b;
	size_t n = g->n;

	bnb_init(&b, g, opt);
	b.t0 = t0;
	b.next_progress = 0;
	if (opt->time_limit_seconds > 0)
		b.deadline = t0 + opt->time_limit_seconds;
	b.node_limit = opt->bnb_node_limit;
	b.open_bound = -INFINITY;
	/* first incumbents: bypass everything (T = 0), the heuristic's plan
	 * and the empty plan, each improved by the local search */
	b.best = 0;
	solver_heuristic_trace(g, &heur, NULL);
	memcpy(b.x, heur.cached, n);
	bnb_offer(&b, b.x, local_search(g, b.x, b.gain));
	solver_result_release(&heur);
	memset(b.x, 0, n);
	bnb_offer(&b, b.x, local_search(g, b.x, b.gain));

	bnb_dfs(&b, INFINITY, 1);

	solver_result_start(res, "bnb", n);
	memcpy(res->cached, b.best_x, n);
	res->objective = graph_objective(g, res->cached);
	res->optimal = !b.stopped;
	res->nodes = b.nodes;
	if (res->optimal) {
		res->bound = res->objective;
	} else {
		/* stopped before a subtree's bound was known: the trivial one */
		res->bound = fmin(b.open_bound, trivial_bound(g));
		if (res->bound < res->objective)
			res->bound = res->objective;
		res->gap = (res->bound - res->objective) / (fabs(res->objective) + DBL_EPSILON);
	}
	res->seconds = solver_clock() - t0;
	bnb_release(&b);
	return 0;
}

const struct solver solver_bnb = {
	.name = "bnb",
	.solve = bnb_solve,
};
