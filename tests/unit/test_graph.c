/* The traffic reduction graph: building, graph.json in and out, objective. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "analysis/graph.h"
#include "tests/unit/check.h"

/* Parses text and returns graph_from_json's code; g is released. */
static int parse(const char *text)
{
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);
	struct graph g;
	int ret;

	if (!doc) {
		fprintf(stderr, "test JSON does not parse: %s\n", jerr.text);
		return 99;
	}
	graph_init(&g);
	ret = graph_from_json(&g, doc, "t.json");
	graph_release(&g);
	json_decref(doc);
	return ret;
}

/* Expects CA_E_INPUT with message containing want. */
#define CHECK_BAD(text, want)                                                 \
	do {                                                                  \
		CHECK_INT(parse(text), CA_E_INPUT);                           \
		if (!strstr(error_message(), want)) {                         \
			fprintf(stderr, "message '%s' lacks '%s'\n", error_message(), want); \
			CHECK(0);                                             \
		}                                                             \
	} while (0)

static void test_build(void)
{
	struct graph g;
	unsigned char all[3] = { 1, 1, 1 }, none[3] = { 0 }, two[3] = { 1, 0, 1 };

	graph_init(&g);
	CHECK_INT(graph_add_node(&g, "a", 10), 0);
	CHECK_INT(graph_add_node(&g, "b", -2), 1);
	graph_set_edge(&g, 0, 1, 4);
	/* adding a node after an edge keeps the edges where they were */
	CHECK_INT(graph_add_node(&g, "c", 7), 2);
	CHECK_NEAR(graph_edge(&g, 0, 1), 4, 0);
	CHECK_NEAR(graph_edge(&g, 1, 0), 4, 0);
	CHECK_NEAR(graph_edge(&g, 0, 2), 0, 0);
	CHECK_NEAR(graph_edge(&g, 2, 1), 0, 0);
	graph_set_edge(&g, 2, 0, -30);
	CHECK_NEAR(graph_edge(&g, 0, 2), -30, 0);
	graph_set_edge(&g, 1, 1, 99); /* ignored */
	CHECK_NEAR(graph_edge(&g, 1, 1), 0, 0);
	CHECK_INT(graph_find(&g, "c"), 2);
	CHECK_INT(graph_find(&g, "zz"), -1);
	CHECK_INT(graph_nr_edges(&g), 2);
	CHECK_NEAR(graph_objective(&g, none), 0, 0);
	CHECK_NEAR(graph_objective(&g, all), 10 - 2 + 7 + 4 - 30, 0);
	CHECK_NEAR(graph_objective(&g, two), 10 + 7 - 30, 0);
	graph_release(&g);
	CHECK_INT(g.n, 0);
	graph_release(&g); /* releasing twice is harmless */
}

/* Many nodes, edges set as they come: the relayout keeps every edge. */
static void test_grow(void)
{
	struct graph g;
	size_t i, j, bad = 0;
	char id[16];

	graph_init(&g);
	for (i = 0; i < 100; i++) {
		snprintf(id, sizeof(id), "n%zu", i);
		graph_add_node(&g, id, (double)i);
		for (j = 0; j < i; j++)
			graph_set_edge(&g, i, j, (double)(i * 1000 + j));
	}
	for (i = 0; i < 100; i++)
		for (j = 0; j < 100; j++) {
			double want = i == j ? 0 : i > j ? (double)(i * 1000 + j) : (double)(j * 1000 + i);

			bad += graph_edge(&g, i, j) != want;
		}
	CHECK_INT(bad, 0);
	graph_release(&g);
}

static void test_json_roundtrip(void)
{
	const char *text =
		"{\"nodes\": [{\"id\": \"ld0\", \"weight\": 120}, {\"id\": \"ld1\", \"weight\": -3.5},"
		" {\"id\": \"ld2\", \"weight\": 0, \"extra\": true}],"
		" \"edges\": [{\"u\": \"ld1\", \"v\": \"ld0\", \"weight\": -40},"
		" {\"u\": \"ld0\", \"v\": \"ld2\", \"weight\": 0}], \"comment\": \"ignored\"}";
	json_t *doc = json_loads(text, 0, NULL), *out;
	struct graph g, h;

	graph_init(&g);
	CHECK_INT(graph_from_json(&g, doc, "t.json"), 0);
	CHECK_INT(g.n, 3);
	CHECK_STR(g.nodes[1].id, "ld1");
	CHECK_NEAR(g.nodes[1].weight, -3.5, 0);
	CHECK_NEAR(graph_edge(&g, 0, 1), -40, 0);
	CHECK_NEAR(graph_edge(&g, 1, 0), -40, 0);
	out = graph_to_json(&g);
	/* zero-weight edges are not written */
	CHECK_INT(json_array_size(json_object_get(out, "edges")), 1);
	graph_init(&h);
	CHECK_INT(graph_from_json(&h, out, "out"), 0);
	CHECK_INT(h.n, 3);
	CHECK_NEAR(graph_edge(&h, 1, 0), -40, 0);
	CHECK_NEAR(h.nodes[0].weight, 120, 0);
	graph_release(&g);
	graph_release(&h);
	json_decref(doc);
	json_decref(out);

	/* no "edges" at all: a graph of isolated nodes */
	CHECK_INT(parse("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}]}"), 0);
	CHECK_INT(parse("{\"nodes\": []}"), 0);
}

static void test_json_errors(void)
{
	CHECK_BAD("[]", "t.json: not a JSON object");
	CHECK_BAD("{}", "t.json: nodes: missing");
	CHECK_BAD("{\"nodes\": {}}", "nodes: not an array");
	CHECK_BAD("{\"nodes\": [1]}", "nodes[0]: not an object");
	CHECK_BAD("{\"nodes\": [{\"weight\": 1}]}", "nodes[0].id: missing");
	CHECK_BAD("{\"nodes\": [{\"id\": 3, \"weight\": 1}]}", "nodes[0].id: not a string");
	CHECK_BAD("{\"nodes\": [{\"id\": \"\", \"weight\": 1}]}", "nodes[0].id: empty");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\"}]}", "nodes[0].weight: missing");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": null}]}", "nodes[0].weight: not a number");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": \"5\"}]}", "nodes[0].weight: not a number");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}, {\"id\": \"b\", \"weight\": 1},"
		  " {\"id\": \"a\", \"weight\": 2}]}", "nodes[2].id: duplicate node 'a' (first at nodes[0])");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}], \"edges\": 5}", "edges: not an array");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}], \"edges\": [[]]}",
		  "edges[0]: not an object");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}],"
		  " \"edges\": [{\"u\": \"a\", \"v\": \"ld9\", \"weight\": 1}]}",
		  "t.json: edges[0].v: unknown node 'ld9'");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}],"
		  " \"edges\": [{\"v\": \"a\", \"weight\": 1}]}", "edges[0].u: missing");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}],"
		  " \"edges\": [{\"u\": 0, \"v\": \"a\", \"weight\": 1}]}", "edges[0].u: not a string");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}],"
		  " \"edges\": [{\"u\": \"a\", \"v\": \"a\", \"weight\": 1}]}",
		  "edges[0]: self-loop on node 'a'");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}, {\"id\": \"b\", \"weight\": 1}],"
		  " \"edges\": [{\"u\": \"a\", \"v\": \"b\", \"weight\": 1},"
		  " {\"u\": \"b\", \"v\": \"a\", \"weight\": 2}]}",
		  "edges[1]: duplicate edge 'b'-'a'");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}, {\"id\": \"b\", \"weight\": 1}],"
		  " \"edges\": [{\"u\": \"a\", \"v\": \"b\"}]}", "edges[0].weight: missing");
	CHECK_BAD("{\"nodes\": [{\"id\": \"a\", \"weight\": 1}, {\"id\": \"b\", \"weight\": 1}],"
		  " \"edges\": [{\"u\": \"a\", \"v\": \"b\", \"weight\": true}]}",
		  "edges[0].weight: not a number");
}

/* A weight that is not finite cannot come from JSON text, but can from a
 * document built in memory. */
static void test_not_finite(void)
{
	json_t *doc = json_pack("{s:[{s:s, s:f}]}", "nodes", "id", "a", "weight", 1.0);
	json_t *w = json_object_get(json_array_get(json_object_get(doc, "nodes"), 0), "weight");
	struct graph g;

	/* jansson refuses to hold NaN or inf; check its refusal and our check of
	 * huge but finite values instead */
	CHECK(json_real_set(w, NAN) == -1);
	CHECK(json_real_set(w, 1e299) == 0);
	graph_init(&g);
	CHECK_INT(graph_from_json(&g, doc, "mem"), 0);
	CHECK_NEAR(g.nodes[0].weight, 1e299, 0);
	graph_release(&g);
	/* finite, but past GRAPH_MAX_ABS_SUM: sums of such weights overflow */
	CHECK(json_real_set(w, 1e308) == 0);
	graph_init(&g);
	CHECK_INT(graph_from_json(&g, doc, "mem"), CA_E_INPUT);
	CHECK(strstr(error_message(), "mem: weights too large") != NULL);
	graph_release(&g);
	json_decref(doc);
}

static void test_too_large(void)
{
	json_t *doc = json_object(), *nodes = json_array();
	struct graph g;
	size_t i;

	for (i = 0; i <= GRAPH_MAX_NODES; i++)
		json_array_append_new(nodes, json_pack("{s:s, s:f}", "id", "x", "weight", 1.0));
	json_object_set_new(doc, "nodes", nodes);
	graph_init(&g);
	CHECK_INT(graph_from_json(&g, doc, "big"), CA_E_INPUT);
	CHECK(strstr(error_message(), "big: nodes: 8193 nodes, more than the 8192") != NULL);
	graph_release(&g);
	json_decref(doc);
}

int main(void)
{
	test_build();
	test_grow();
	test_json_roundtrip();
	test_json_errors();
	test_not_finite();
	test_too_large();
	return check_done();
}
