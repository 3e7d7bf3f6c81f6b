/*
 * Source sites that are one decision: see load_sites.h.
 */
#include "analysis/load_sites.h"

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

void load_sites_merge_graph(const struct graph *g, const size_t *group, size_t nr_sites,
			    struct graph *out)
{
	double *w = xcalloc(nr_sites + 1, sizeof(*w));
	double *e = xcalloc(nr_sites * nr_sites + 1, sizeof(*e));
	long *first = xcalloc(nr_sites + 1, sizeof(*first));
	size_t u, v, a, b;

	for (a = 0; a < nr_sites; a++)
		first[a] = -1;
	for (u = 0; u < g->n; u++) {
		w[group[u]] += g->nodes[u].weight;
		if (first[group[u]] < 0)
			first[group[u]] = (long)u;
	}
	for (u = 0; u < g->n; u++)
		for (v = u + 1; v < g->n; v++) {
			double x = graph_edge(g, u, v);

			a = group[u];
			b = group[v];
			if (a == b) {
				w[a] += x;              /* both members: counted when the site caches */
			} else {
				e[a * nr_sites + b] += x;
				e[b * nr_sites + a] += x;
			}
		}
	for (a = 0; a < nr_sites; a++)
		graph_add_node(out, first[a] >= 0 ? g->nodes[first[a]].id : "site", w[a]);
	for (a = 0; a < nr_sites; a++)
		for (b = a + 1; b < nr_sites; b++)
			if (e[a * nr_sites + b] != 0)
				graph_set_edge(out, a, b, e[a * nr_sites + b]);
	free(first);
	free(e);
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
