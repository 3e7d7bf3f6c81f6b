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
	/* Private bookkeeping of graph.c: capacities, and whether any edge
	 * was set (an all-zero matrix needs no relayout when n grows). */
	size_t nodes_alloc;
	size_t edges_alloc;
	int edges_set;
};

/* An empty graph; graph_release frees what the graph owns (ids, arrays). */
void graph_init(struct graph *g);
void graph_release(struct graph *g);
/*
 * Appends a node (the id is copied); returns its index. Its edges weigh 0.
 * Cheap while no edge is set yet (amortised O(1)); after graph_set_edge it
 * costs O(n^2), so add every node first, then the edges.
 */
size_t graph_add_node(struct graph *g, const char *id, double weight);
/* Sets W(e_uv) = W(e_vu) = weight; u == v is ignored (the diagonal stays 0). */
void graph_set_edge(struct graph *g, size_t u, size_t v, double weight);
static inline double graph_edge(const struct graph *g, size_t u, size_t v)
{
	return g->edges[u * g->n + v];
}
/* Index of the node called id, or -1. O(n). */
long graph_find(const struct graph *g, const char *id);
/* Number of unordered pairs u < v with a nonzero edge. */
size_t graph_nr_edges(const struct graph *g);

/* graph_from_json refuses larger graphs: the edge matrix is n^2 doubles
 * (512 MiB at this size), and a kernel has far fewer loads. */
#define GRAPH_MAX_NODES 8192
/* The sum of the magnitudes of all weights must stay below this, so that
 * every objective, bound and gap is finite (traffic in bytes is far below). */
#define GRAPH_MAX_ABS_SUM 1e300

/*
 * Reads graph JSON into g (which must be freshly initialised). Returns 0, or
 * CA_E_INPUT with a message naming name and the JSON path of the bad item
 * ("g.json: edges[3].v: unknown node 'ld9'"): unknown node in an edge,
 * duplicate node id, empty id, self-loop, duplicate edge, NaN/inf or missing
 * weight, wrong types, more than GRAPH_MAX_NODES nodes, weights whose
 * magnitudes add up to more than GRAPH_MAX_ABS_SUM. "edges" may be absent (no edges). Unknown keys are
 * ignored (fields may be added). On error g holds whatever was read so far:
 * release it.
 */
int graph_from_json(struct graph *g, json_t *doc, const char *name);
/* A new graph.json document (caller owns): every node, and every edge u < v
 * with a nonzero weight. */
json_t *graph_to_json(const struct graph *g);

/*
 * A JSON number for a weight or objective (bytes): an integer when w is
 * integral and exact in a double (|w| < 2^53), so writers that print reals
 * with few digits keep byte counts exact; else a real. Caller owns it.
 */
json_t *graph_weight_json(double w);

/* T(G') of the seed: sum of cached nodes' weights and of edges between cached nodes. */
double graph_objective(const struct graph *g, const unsigned char *cached);

#endif
