#include "analysis/graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

void graph_init(struct graph *g)
{
	memset(g, 0, sizeof(*g));
}

void graph_release(struct graph *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->nodes[i].id);
	free(g->nodes);
	free(g->edges);
	graph_init(g);
}

/*
 * Makes room for an n-by-n matrix after the graph grew from n - 1 nodes.
 * An all-zero matrix is the same at every stride, so until an edge is set
 * growing is just a larger zeroed buffer; afterwards the rows move in place,
 * last row first (each row only moves up), and the new column is zeroed.
 */
static void grow_edges(struct graph *g, size_t n)
{
	size_t need = n * n, old = n - 1, u;

	if (need > g->edges_alloc) {
		size_t alloc = g->edges_alloc ? g->edges_alloc : 16;

		while (alloc < need)
			alloc *= 2;
		g->edges = xrealloc(g->edges, alloc * sizeof(*g->edges));
		memset(g->edges + g->edges_alloc, 0,
		       (alloc - g->edges_alloc) * sizeof(*g->edges));
		g->edges_alloc = alloc;
	}
	if (!g->edges_set || !old)
		return;
	for (u = old; u-- > 0;) {
		memmove(g->edges + u * n, g->edges + u * old, old * sizeof(*g->edges));
		g->edges[u * n + old] = 0;
	}
	memset(g->edges + old * n, 0, n * sizeof(*g->edges));
}

size_t graph_add_node(struct graph *g, const char *id, double weight)
{
	size_t i = g->n;

	ALLOC_GROW(g->nodes, i + 1, g->nodes_alloc);
	g->nodes[i].id = xstrdup(id);
	g->nodes[i].weight = weight;
	grow_edges(g, i + 1);
	g->n = i + 1;
	return i;
}

void graph_set_edge(struct graph *g, size_t u, size_t v, double weight)
{
	if (u == v)
		return;
	g->edges[u * g->n + v] = weight;
	g->edges[v * g->n + u] = weight;
	if (weight != 0)
		g->edges_set = 1;
}

long graph_find(const struct graph *g, const char *id)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (!strcmp(g->nodes[i].id, id))
			return (long)i;
	return -1;
}

size_t graph_nr_edges(const struct graph *g)
{
	size_t u, v, nr = 0;

	for (u = 0; u < g->n; u++)
		for (v = u + 1; v < g->n; v++)
			nr += graph_edge(g, u, v) != 0;
	return nr;
}

double graph_objective(const struct graph *g, const unsigned char *cached)
{
	double t = 0;
	size_t u, v;

	for (u = 0; u < g->n; u++) {
		if (!cached[u])
			continue;
		t += g->nodes[u].weight;
		for (v = u + 1; v < g->n; v++)
			if (cached[v])
				t += graph_edge(g, u, v);
	}
	return t;
}

/* Node ids sorted, for duplicate detection and lookups by id in O(log n). */
struct id_entry {
	const char *id;
	size_t node;
};

struct id_index {
	struct id_entry *entries;
	size_t n;
};

static int cmp_id_entry(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	if (c)
		return c;
	return x->node < y->node ? -1 : x->node > y->node;
}

static long index_find(const struct id_index *ix, const char *id)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(ix->entries[mid].id, id);

		if (!c)
			return (long)ix->entries[mid].node;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int read_weight(json_t *obj, const char *name, const char *what, size_t k,
		       double *out)
{
	json_t *w = json_object_get(obj, "weight");

	if (!w)
		return error_set(CA_E_INPUT, "%s: %s[%zu].weight: missing", name, what, k);
	if (!json_is_number(w))
		return error_set(CA_E_INPUT, "%s: %s[%zu].weight: not a number", name, what, k);
	*out = json_number_value(w);
	if (!isfinite(*out))
		return error_set(CA_E_INPUT, "%s: %s[%zu].weight: not a finite number",
				 name, what, k);
	return 0;
}

static int read_nodes(struct graph *g, json_t *nodes, const char *name)
{
	size_t k;
	json_t *node;

	if (!nodes)
		return error_set(CA_E_INPUT, "%s: nodes: missing", name);
	if (!json_is_array(nodes))
		return error_set(CA_E_INPUT, "%s: nodes: not an array", name);
	if (json_array_size(nodes) > GRAPH_MAX_NODES)
		return error_set(CA_E_INPUT, "%s: nodes: %zu nodes, more than the %d cacheadvise "
				 "takes", name, json_array_size(nodes), GRAPH_MAX_NODES);
	json_array_foreach(nodes, k, node) {
		json_t *id;
		double w;
		int ret;

		if (!json_is_object(node))
			return error_set(CA_E_INPUT, "%s: nodes[%zu]: not an object", name, k);
		id = json_object_get(node, "id");
		if (!id)
			return error_set(CA_E_INPUT, "%s: nodes[%zu].id: missing", name, k);
		if (!json_is_string(id))
			return error_set(CA_E_INPUT, "%s: nodes[%zu].id: not a string", name, k);
		if (!*json_string_value(id))
			return error_set(CA_E_INPUT, "%s: nodes[%zu].id: empty", name, k);
		ret = read_weight(node, name, "nodes", k, &w);
		if (ret)
			return ret;
		graph_add_node(g, json_string_value(id), w);
	}
	return 0;
}

static int edge_end(const struct id_index *ix, json_t *edge, const char *key,
		    const char *name, size_t k, size_t *out)
{
	json_t *end = json_object_get(edge, key);
	long i;

	if (!end)
		return error_set(CA_E_INPUT, "%s: edges[%zu].%s: missing", name, k, key);
	if (!json_is_string(end))
		return error_set(CA_E_INPUT, "%s: edges[%zu].%s: not a string", name, k, key);
	i = index_find(ix, json_string_value(end));
	if (i < 0)
		return error_set(CA_E_INPUT, "%s: edges[%zu].%s: unknown node '%s'", name, k,
				 key, json_string_value(end));
	*out = (size_t)i;
	return 0;
}

static int read_edges(struct graph *g, const struct id_index *ix, json_t *edges,
		      const char *name)
{
	unsigned char *seen;
	json_t *edge;
	size_t k;
	int ret = 0;

	if (!edges)
		return 0;
	if (!json_is_array(edges))
		return error_set(CA_E_INPUT, "%s: edges: not an array", name);
	seen = xcalloc(g->n * g->n / 8 + 1, 1);
	json_array_foreach(edges, k, edge) {
		size_t u, v, bit;
		double w;

		if (!json_is_object(edge)) {
			ret = error_set(CA_E_INPUT, "%s: edges[%zu]: not an object", name, k);
			break;
		}
		if ((ret = edge_end(ix, edge, "u", name, k, &u)) ||
		    (ret = edge_end(ix, edge, "v", name, k, &v)))
			break;
		if (u == v) {
			ret = error_set(CA_E_INPUT, "%s: edges[%zu]: self-loop on node '%s'",
					name, k, g->nodes[u].id);
			break;
		}
		bit = u < v ? u * g->n + v : v * g->n + u;
		if (seen[bit / 8] & (1u << (bit % 8))) {
			ret = error_set(CA_E_INPUT, "%s: edges[%zu]: duplicate edge '%s'-'%s'",
					name, k, g->nodes[u].id, g->nodes[v].id);
			break;
		}
		seen[bit / 8] |= 1u << (bit % 8);
		if ((ret = read_weight(edge, name, "edges", k, &w)))
			break;
		graph_set_edge(g, u, v, w);
	}
	free(seen);
	return ret;
}

/*
 * Every objective and bound the solvers compute is a sum of weights: when
 * the sum of their magnitudes overflows, "optimal" answers disagree and the
 * objective prints as inf. Refuse such graphs (GRAPH_MAX_ABS_SUM leaves
 * room for the solvers' scaled sums).
 */
static int check_sums(const struct graph *g, const char *name)
{
	double sum = 0;
	size_t u, v;

	for (u = 0; u < g->n; u++) {
		sum += fabs(g->nodes[u].weight);
		for (v = u + 1; v < g->n; v++)
			sum += fabs(graph_edge(g, u, v));
	}
	if (!(sum <= GRAPH_MAX_ABS_SUM))
		return error_set(CA_E_INPUT, "%s: weights too large: their magnitudes add up to "
				 "%g, more than %g, so objectives would not stay finite: scale the "
				 "weights down", name, sum, GRAPH_MAX_ABS_SUM);
	return 0;
}

int graph_from_json(struct graph *g, json_t *doc, const char *name)
{
	struct id_index ix;
	size_t k;
	int ret;

	if (!json_is_object(doc))
		return error_set(CA_E_INPUT, "%s: not a JSON object", name);
	ret = read_nodes(g, json_object_get(doc, "nodes"), name);
	if (ret)
		return ret;
	ix.n = g->n;
	ix.entries = xmalloc((g->n ? g->n : 1) * sizeof(*ix.entries));
	for (k = 0; k < g->n; k++) {
		ix.entries[k].id = g->nodes[k].id;
		ix.entries[k].node = k;
	}
	qsort(ix.entries, ix.n, sizeof(*ix.entries), cmp_id_entry);
	for (k = 1; k < ix.n; k++) {
		const struct id_entry *a = &ix.entries[k - 1], *b = &ix.entries[k];

		if (!strcmp(a->id, b->id)) {
			ret = error_set(CA_E_INPUT,
					"%s: nodes[%zu].id: duplicate node '%s' (first at nodes[%zu])",
					name, b->node, b->id, a->node);
			goto out;
		}
	}
	ret = read_edges(g, &ix, json_object_get(doc, "edges"), name);
	if (!ret)
		ret = check_sums(g, name);
out:
	free(ix.entries);
	return ret;
}

json_t *graph_weight_json(double w)
{
	if (w == floor(w) && fabs(w) < 9007199254740992.0)
		return json_integer((json_int_t)w);
	return json_real(w);
}

json_t *graph_to_json(const struct graph *g)
{
	json_t *doc = json_object(), *nodes = json_array(), *edges = json_array();
	size_t u, v;

	for (u = 0; u < g->n; u++) {
		json_t *node = json_object();

		json_object_set_new(node, "id", json_string(g->nodes[u].id));
		json_object_set_new(node, "weight", graph_weight_json(g->nodes[u].weight));
		json_array_append_new(nodes, node);
	}
	for (u = 0; u < g->n; u++) {
		for (v = u + 1; v < g->n; v++) {
			json_t *edge;

			if (graph_edge(g, u, v) == 0)
				continue;
			edge = json_object();
			json_object_set_new(edge, "u", json_string(g->nodes[u].id));
			json_object_set_new(edge, "v", json_string(g->nodes[v].id));
			json_object_set_new(edge, "weight", graph_weight_json(graph_edge(g, u, v)));
			json_array_append_new(edges, edge);
		}
	}
	json_object_set_new(doc, "nodes", nodes);
	json_object_set_new(doc, "edges", edges);
	return doc;
}
