/*
 * Source sites that are one decision: see load_sites.h.
 */
#include "analysis/load_sites.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

int load_sites_is_python(const char *file)
{
	size_t n = file ? strlen(file) : 0;

	return n > 3 && !strcmp(file + n - 3, ".py");
}

int load_sites_triton_form(enum load_action a, enum l2_priority p, const char **eviction_policy,
			   const char **cache_modifier)
{
	const char *ev = NULL, *cm = NULL;

	if (a == LOAD_ACTION_EVICT_FIRST && p == L2_PRIORITY_EVICT_FIRST)
		ev = "evict_first";
	else if (a == LOAD_ACTION_EVICT_LAST && p == L2_PRIORITY_EVICT_LAST)
		ev = "evict_last";
	else if (a == LOAD_ACTION_BYPASS && p == L2_PRIORITY_NONE)
		cm = ".cg";
	else if (a == LOAD_ACTION_CACHE && p == L2_PRIORITY_NONE)
		cm = ".ca";
	else if (!(a == LOAD_ACTION_DEFAULT && p == L2_PRIORITY_NONE))
		return 0;
	if (eviction_policy)
		*eviction_policy = ev;
	if (cache_modifier)
		*cache_modifier = cm;
	return 1;
}

/* A call of a load's inlining chain, from either model. */
struct site_call {
	const char *file;
	long line;
	int column;
};

/* What makes two loads one site (load_sites.h). */
struct site_key {
	const char *file;
	long line;
	int column;
	int param;
	struct site_call *calls;    /* the inlining chain, innermost first (owned) */
	size_t nr_calls;
};

static void key_of_capture(struct site_key *key, const struct capture_load *l)
{
	size_t i;

	*key = (struct site_key){ l->file, l->line, l->column, l->param, NULL, l->nr_inlined_at };
	key->calls = xcalloc(key->nr_calls + 1, sizeof(*key->calls));
	for (i = 0; i < key->nr_calls; i++)
		key->calls[i] = (struct site_call){ l->inlined_at[i].file, l->inlined_at[i].line,
						    l->inlined_at[i].column };
}

static void key_of_ptx(struct site_key *key, const struct ptx_load *l)
{
	size_t i;

	*key = (struct site_key){ l->file, l->line, l->column, l->param, NULL,
				  (size_t)l->inline_depth };
	key->calls = xcalloc(key->nr_calls + 1, sizeof(*key->calls));
	for (i = 0; i < key->nr_calls; i++)
		key->calls[i] = (struct site_call){ l->inlined_at[i].file, l->inlined_at[i].line,
						    l->inlined_at[i].column };
}

static int same_file(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Whether a load can share a site: its .loc has a file, a line and a
 * column and, in CUDA C++, it reads through a known parameter (the .loc's
 * column there is the statement's: x[c] and w[c] on one line share it).
 */
static int sited(const struct site_key *k)
{
	return k->file && k->line > 0 && k->column > 0 &&
	       (load_sites_is_python(k->file) || k->param >= 0);
}

static int same_site(const struct site_key *a, const struct site_key *b)
{
	size_t i;

	if (a->line != b->line || a->column != b->column || !same_file(a->file, b->file))
		return 0;
	/* a tl.load carries one form wherever its function was inlined */
	if (load_sites_is_python(a->file))
		return 1;
	if (a->param != b->param || a->nr_calls != b->nr_calls)
		return 0;
	for (i = 0; i < a->nr_calls; i++)
		if (a->calls[i].line != b->calls[i].line ||
		    a->calls[i].column != b->calls[i].column ||
		    !same_file(a->calls[i].file, b->calls[i].file))
			return 0;
	return 1;
}

/* Frees keys[0..n) and their chains. */
static void keys_free(struct site_key *keys, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(keys[i].calls);
	free(keys);
}

static size_t group_keys(const struct site_key *keys, size_t n, size_t *group)
{
	const struct site_key **first = xcalloc(n + 1, sizeof(*first));
	size_t nr = 0, i, s;

	for (i = 0; i < n; i++) {
		const struct site_key *k = &keys[i];
		int shares = sited(k);

		for (s = 0; shares && s < nr; s++)
			if (first[s] && same_site(first[s], k))
				break;
		if (!shares || s == nr) {
			first[nr] = shares ? k : NULL;
			s = nr++;
		}
		group[i] = s;
	}
	free(first);
	return nr;
}

size_t load_sites_group(const struct capture_kernel *k, const unsigned *ordinals, size_t n,
			size_t *group)
{
	struct site_key *keys = xcalloc(n + 1, sizeof(*keys));
	size_t i, nr;

	for (i = 0; i < n; i++) {
		const struct capture_load *l = capture_kernel_find_load(k, ordinals[i]);

		if (l)
			key_of_capture(&keys[i], l);
	}
	nr = group_keys(keys, n, group);
	keys_free(keys, n);
	return nr;
}

size_t load_sites_group_ptx(const struct ptx_function *fn, const unsigned *ordinals, size_t n,
			    size_t *group)
{
	struct site_key *keys = xcalloc(n + 1, sizeof(*keys));
	size_t i, nr;

	for (i = 0; i < n; i++)
		if (ordinals[i] < fn->nr_loads)
			key_of_ptx(&keys[i], &fn->loads[ordinals[i]]);
	nr = group_keys(keys, n, group);
	keys_free(keys, n);
	return nr;
}

/* The root of u in a union-find forest. */
static size_t find_root(size_t *parent, size_t u)
{
	while (parent[u] != u)
		u = parent[u] = parent[parent[u]];
	return u;
}

/* An edge between two loads of one site; overlap: the share of the
 * smaller one's hits the two share (0 to 1). */
struct site_edge {
	size_t u, v;
	double w, overlap;
};

static int site_edge_cmp(const void *a, const void *b)
{
	double x = ((const struct site_edge *)a)->w, y = ((const struct site_edge *)b)->w;

	return x < y ? -1 : x > y;
}

/*
 * Each site's weight when all its loads cache (w), and the forest its
 * overlaps were taken along (tree, nr_tree). Positive edges between
 * members all add; of the negative ones (hits two members share), only a
 * spanning forest of the largest does (Hunter's bound on a union: the sum
 * of the members' hits less the overlaps along a maximum spanning tree).
 * All pairs would subtract a shared hit once per pair: four unrolled
 * copies of one gather that hit the same lines (each alone enables H, each
 * pair H) are worth H, not 4H - 6H. (No floor at the largest member's
 * weight: a second member can evict the first's lines, and the pair then
 * hits less than the one alone.)
 */
static void merge_site_weights(const struct graph *g, const size_t *group, size_t nr_sites,
			       double *w, struct site_edge *tree, size_t *nr_tree)
{
	struct site_edge *neg = xcalloc(g->n * g->n / 2 + 1, sizeof(*neg));
	size_t *parent = xcalloc(g->n + 1, sizeof(*parent)), nr_neg = 0, u, v, a, i;
	unsigned char *all_gain = xcalloc(nr_sites + 1, 1);

	for (a = 0; a < nr_sites; a++)
		all_gain[a] = 1;
	for (u = 0; u < g->n; u++) {
		double x = g->nodes[u].weight;

		parent[u] = u;
		w[group[u]] += x;
		if (x <= 0)
			all_gain[group[u]] = 0;
	}
	for (u = 0; u < g->n; u++)
		for (v = u + 1; v < g->n; v++) {
			double x = graph_edge(g, u, v);

			if (group[u] != group[v] || x == 0)
				continue;
			if (x > 0)
				w[group[u]] += x;
			else
				neg[nr_neg++] = (struct site_edge){ u, v, x, 0 };
		}
	qsort(neg, nr_neg, sizeof(*neg), site_edge_cmp);
	*nr_tree = 0;
	for (i = 0; i < nr_neg; i++) {
		size_t ru = find_root(parent, neg[i].u), rv = find_root(parent, neg[i].v);
		double smaller = fmin(g->nodes[neg[i].u].weight, g->nodes[neg[i].v].weight);

		if (ru == rv)
			continue;   /* a cycle: these hits were taken off already */
		parent[ru] = rv;
		w[group[neg[i].u]] += neg[i].w;
		/* only hits (weights above 0) overlap */
		neg[i].overlap = all_gain[group[neg[i].u]] ? fmin(1, -neg[i].w / smaller) : 0;
		tree[(*nr_tree)++] = neg[i];
	}
	free(all_gain);
	free(parent);
	free(neg);
}

/*
 * The edge to something outside a site from its members' edges x[] (by
 * load, 0 for the site's other loads): their sum, less along the site's
 * forest what two overlapping members' edges of one sign count twice (the
 * smaller, times their overlap). The copies of one gather each lose the
 * same hits to a stream beside them: the site loses them once.
 */
static double reduce_edges(const double *x, const struct site_edge *tree, size_t nr_tree,
			   const size_t *group, size_t site, size_t n)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (group[i] == site)
			sum += x[i];
	for (i = 0; i < nr_tree; i++) {
		double a = x[tree[i].u], b = x[tree[i].v];

		if (group[tree[i].u] != site || (a > 0) != (b > 0) || a == 0 || b == 0)
			continue;
		sum -= copysign(fmin(fabs(a), fabs(b)), a) * tree[i].overlap;
	}
	return sum;
}

void load_sites_merge_graph(const struct graph *g, const size_t *group, size_t nr_sites,
			    struct graph *out)
{
	double *w = xcalloc(nr_sites + 1, sizeof(*w)), *x = xcalloc(g->n + 1, sizeof(*x));
	/* by_site[u * nr_sites + b]: load u's edge to site b, b's overlaps taken off */
	double *by_site = xcalloc(g->n * nr_sites + 1, sizeof(*by_site));
	struct site_edge *tree = xcalloc(g->n + 1, sizeof(*tree));
	long *first = xcalloc(nr_sites + 1, sizeof(*first));
	size_t u, v, a, b, nr_tree;

	merge_site_weights(g, group, nr_sites, w, tree, &nr_tree);
	for (a = 0; a < nr_sites; a++)
		first[a] = -1;
	for (u = 0; u < g->n; u++)
		if (first[group[u]] < 0)
			first[group[u]] = (long)u;
	for (u = 0; u < g->n; u++)
		for (b = 0; b < nr_sites; b++) {
			if (group[u] == b)
				continue;   /* in the site's weight */
			for (v = 0; v < g->n; v++)
				x[v] = group[v] == b ? graph_edge(g, u, v) : 0;
			by_site[u * nr_sites + b] = reduce_edges(x, tree, nr_tree, group, b, g->n);
		}
	for (a = 0; a < nr_sites; a++)
		graph_add_node(out, first[a] >= 0 ? g->nodes[first[a]].id : "site", w[a]);
	for (a = 0; a < nr_sites; a++)
		for (b = a + 1; b < nr_sites; b++) {
			double e;

			for (u = 0; u < g->n; u++)
				x[u] = group[u] == a ? by_site[u * nr_sites + b] : 0;
			e = reduce_edges(x, tree, nr_tree, group, a, g->n);
			if (e != 0)
				graph_set_edge(out, a, b, e);
		}
	free(first);
	free(tree);
	free(by_site);
	free(x);
	free(w);
}

void load_sites_merge_choices(const struct multi_choice *mc, const size_t *group,
			      size_t nr_sites, struct multi_choice *out)
{
	unsigned *forms = xcalloc(nr_sites + 1, sizeof(*forms));
	double *acc;
	size_t a, b, i, j;
	unsigned s, t, max = 0;

	for (i = 0; i < mc->n; i++) {
		a = group[i];
		if (!forms[a] || mc->forms[i] < forms[a])
			forms[a] = mc->forms[i];
	}
	for (a = 0; a < nr_sites; a++)
		if (forms[a] > max)
			max = forms[a];
	multi_choice_init(out, nr_sites, forms);
	for (i = 0; i < mc->n; i++)
		for (s = 0; s < forms[group[i]]; s++)
			out->unary[group[i]][s] += mc->unary[i][s];
	acc = xcalloc((size_t)max * max + 1, sizeof(*acc));
	for (a = 0; a < nr_sites; a++) {
		for (b = a; b < nr_sites; b++) {
			int any = 0;

			memset(acc, 0, (size_t)max * max * sizeof(*acc));
			for (i = 0; i < mc->n; i++) {
				if (group[i] != a)
					continue;
				for (j = 0; j < mc->n; j++) {
					if (group[j] != b || j == i || (a == b && j < i))
						continue;
					if (!mc->pair[i < j ? i * mc->n + j : j * mc->n + i])
						continue;
					any = 1;
					for (s = 0; s < forms[a]; s++)
						for (t = 0; t < forms[b]; t++)
							acc[(size_t)s * forms[b] + t] +=
								multi_choice_pair_gain(mc, i, s, j, t);
				}
			}
			if (!any)
				continue;
			if (a == b) {
				/* members of one site take one form: p_uv(s, s) is the site's */
				for (s = 0; s < forms[a]; s++)
					out->unary[a][s] += acc[(size_t)s * forms[a] + s];
				continue;
			}
			for (s = 0; s < forms[a]; s++)
				for (t = 0; t < forms[b]; t++)
					multi_choice_set_pair(out, a, s, b, t,
							      acc[(size_t)s * forms[b] + t]);
		}
	}
	free(acc);
	free(forms);
}
