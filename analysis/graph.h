#ifndef CACHEADVISE_GRAPH_H
#define CACHEADVISE_GRAPH_H

#include <stddef.h>

#include <jansson.h>

/*
 * The traffic reduction graph of the cache-bypassing seed: one node per
 * global load of a kernel, W(v_i) the L2 traffic (bytes) saved by caching
 * load i alone, W(e_ij) the traffic saved (positive: reuse) or added
 * (negative: conflict) by caching i and j together. Complete graph: a
 * missing edge weighs 0. graph.json (docs/graph-json.md):
 *   {"nodes": [{"id": "ld0", "weight": 120.0}],
 *    "edges": [{"u": "ld0", "v": "ld1", "weight": -40.0}]}
 */
struct graph_node {
	char *id;
	double weight;
};

struct graph {
	size_t n;
	struct graph_node *nodes;
	double *edges;              /* n*n, symmetric, diagonal 0 */
};

void graph_init(struct graph *g);
void graph_release(struct graph *g);
/* Appends a node; returns its index. */
size_t graph_add_node(struct graph *g, const char *id, double weight);
void graph_set_edge(struct graph *g, size_t u, size_t v, double weight);
static inline double graph_edge(const struct graph *g, size_t u, size_t v)
{
	return g->edges[u * g->n + v];
}

/*
 * Reads graph JSON. Returns 0, or CA_E_INPUT with a message giving the JSON
 * path of the bad item ("edges[3].v: unknown node 'ld9'"): unknown node in
 * an edge, duplicate node id, self-loop, duplicate edge, NaN/inf or missing
 * weight, wrong types. name is used in messages.
 */
int graph_from_json(struct graph *g, json_t *doc, const char *name);
json_t *graph_to_json(const struct graph *g);

/* T(G') of the seed: sum of cached nodes' weights and of edges between cached nodes. */
double graph_objective(const struct graph *g, const unsigned char *cached);

#endif
