/*
 * cacheadvise solve [--method ilp|bnb|heuristic|exhaustive|all] [--json]
 *                   [--time-limit SEC] GRAPH.json
 *
 * Solves a traffic reduction graph (docs/graph-json.md) with one solver or
 * all of them and prints which loads to cache and which to bypass
 * (docs/cmd-solve.md). Needs no GPU.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "analysis/graph.h"
#include "base/json_file.h"
#include "analysis/solver.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "src/cli.h"

/* Without --time-limit, ilp and bnb stop after this many seconds each. */
#define SOLVE_DEFAULT_TIME_LIMIT 10.0
/* The largest --time-limit, as --timeout's (the solvers clamp what GLPK
 * takes, whole milliseconds in an int, about 24.8 days). */
#define SOLVE_MAX_TIME_LIMIT 1e7

struct solve_options {
	const char *method;         /* a solver's name or "all" */
	int json;
	double time_limit;          /* seconds per exact method, 0 = none */
	const char *path;
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise solve [--method ilp|bnb|heuristic|exhaustive|all] [--json]\n"
		"                         [--time-limit SEC] GRAPH.json\n"
		"\n"
		"Chooses which loads of a traffic reduction graph to cache in L1 and which to\n"
		"bypass, maximising the L2 traffic saved (node and edge weights, bytes).\n"
		"GRAPH.json: {\"nodes\": [{\"id\", \"weight\"}], \"edges\": [{\"u\", \"v\", \"weight\"}]};\n"
		"a capture directory holds one per kernel under graphs/. Needs no GPU.\n"
		"\n"
		"  --method M        ilp (default: GLPK, proven optimal), bnb (branch and\n"
		"                    bound with SDP bounds, proven optimal, the fastest on\n"
		"                    dense graphs), heuristic (the seed's Algorithm 1),\n"
		"                    exhaustive (all 2^N plans, N <= 24), or all (every\n"
		"                    method that applies)\n"
		"  --json            print {\"method\", \"cached\", \"bypassed\", \"objective\",\n"
		"                    \"optimal\", \"seconds\"} (a list of them for --method all)\n"
		"  --time-limit SEC  stop ilp and bnb after SEC seconds each (default 10; 0:\n"
		"                    no limit); a stopped method reports the best plan\n"
		"                    found, \"optimal\": false, its bound and the gap. A run\n"
		"                    past 2 s prints a progress line on stderr every 5 s\n"
		"  -h, --help        show this help\n"
		"\n"
		"Exit status: 0 solved, 1 usage error, 2 unreadable or invalid graph (the\n"
		"message gives the JSON path of the bad item) or a graph too large for\n"
		"exhaustive search.\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise solve cacheadvise-out/app-20261122-031000/graphs/_Z3mixPKfS0_PKiPfii.json\n"
		"  cacheadvise solve --method all graph.json\n"
		"  cacheadvise solve --method bnb dense-64-loads.json\n"
		"  cacheadvise solve --method heuristic --json graph.json | jq .cached\n"
		"  cacheadvise solve --time-limit 10 big-graph.json\n");
}

static int parse_options(int argc, char **argv, struct solve_options *o)
{
	static const struct option longopts[] = {
		{ "method", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "time-limit", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->method = "ilp";
	o->time_limit = SOLVE_DEFAULT_TIME_LIMIT;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":hm:jt:", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "all") && !solver_find(optarg))
				return cli_usage_error("unknown method '%s': use ilp, bnb, heuristic, "
						       "exhaustive or all", optarg);
			o->method = optarg;
			break;
		case 'j':
			o->json = 1;
			break;
		case 't':
			if (cli_parse_number(optarg, "--time-limit", 0, SOLVE_MAX_TIME_LIMIT,
					     "a number of seconds from 0 (no limit) to 1e7",
					     &o->time_limit))
				return 1;
			break;
		case 'h':
			print_usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("no graph given: cacheadvise solve GRAPH.json");
	if (optind + 1 < argc)
		return cli_usage_error("one graph at a time: unexpected '%s'", argv[optind + 1]);
	o->path = argv[optind];
	return 0;
}

static void print_ids(const struct graph *g, const unsigned char *cached, int want)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, nr = 0;

	for (i = 0; i < g->n; i++)
		nr += !cached[i] == !want;
	strbuf_addf(&sb, "  %s (%zu):", want ? "cache " : "bypass", nr);
	/* the ids are the graph's: their control characters as \xHH */
	for (i = 0; i < g->n; i++) {
		if (!cached[i] == !want) {
			strbuf_addch(&sb, ' ');
			strbuf_add_printable(&sb, g->nodes[i].id);
		}
	}
	printf("%s\n", sb.buf);
	strbuf_release(&sb);
}

static void print_text(const struct graph *g, const struct solver_result *res, size_t nr)
{
	size_t k, i;

	printf("%-11s %16s  %-8s %9s  %s\n", "method", "objective", "optimal", "seconds",
	       "cached");
	for (k = 0; k < nr; k++) {
		size_t cached = 0;

		for (i = 0; i < g->n; i++)
			cached += res[k].cached[i];
		printf("%-11s %16.10g  %-8s %9.4f  %zu of %zu\n", res[k].method, res[k].objective,
		       res[k].optimal ? "yes" : !strcmp(res[k].method, "heuristic") ? "-" : "no",
		       res[k].seconds, cached, g->n);
	}
	for (k = 0; k < nr; k++) {
		printf("\n%s:\n", res[k].method);
		if (!res[k].optimal && isfinite(res[k].bound))
			printf("  stopped by the time limit: best bound %.10g, gap %.2f%%\n",
			       res[k].bound, 100.0 * res[k].gap);
		print_ids(g, res[k].cached, 1);
		print_ids(g, res[k].cached, 0);
	}
}

/* The progress line of a long run, on stderr (stdout holds the answer). */
static void print_progress(void *ctx, const struct solver_progress *p)
{
	const struct solve_options *o = ctx;
	char limit[64] = "no time limit";

	if (o->time_limit > 0)
		snprintf(limit, sizeof(limit), "stops at %g s", o->time_limit);
	if (isfinite(p->bound))
		fprintf(stderr, "cacheadvise solve: %s: %.0f s, best %.10g, bound %.10g "
			"(gap %.2f%%), still searching (%s)\n", p->method, p->seconds, p->best,
			p->bound, 100.0 * (p->bound - p->best) / (fabs(p->best) + 1e-300), limit);
	else
		fprintf(stderr, "cacheadvise solve: %s: %.0f s, best %.10g, %lu nodes, still "
			"searching (%s)\n", p->method, p->seconds, p->best, p->nodes, limit);
	fflush(stderr);
}

static int solve_graph(const struct solve_options *o)
{
	struct solver_options sopt;
	struct solver_result res[8];
	struct graph g;
	json_t *doc;
	size_t nr = 0, i;
	int ret = 0, all = !strcmp(o->method, "all");

	doc = json_file_load(o->path);
	if (!doc)
		return cli_fail(CA_E_INPUT, NULL);
	graph_init(&g);
	ret = graph_from_json(&g, doc, o->path);
	json_decref(doc);
	if (ret)
		goto out;
	solver_options_init(&sopt);
	sopt.time_limit_seconds = o->time_limit;
	sopt.progress = print_progress;
	sopt.progress_ctx = (void *)o;
	for (i = 0; solver_table[i] && nr < ARRAY_SIZE(res); i++) {
		const struct solver *s = solver_table[i];

		if (!all && strcmp(s->name, o->method))
			continue;
		if (all && !strcmp(s->name, "exhaustive") && g.n > sopt.exhaustive_max_n) {
			cli_warn("'%s' has %zu loads: exhaustive search (at most %zu) skipped",
				 o->path, g.n, sopt.exhaustive_max_n);
			continue;
		}
		if (!strcmp(s->name, "exhaustive") && g.n > sopt.exhaustive_max_n) {
			ret = error_set(CA_E_INPUT, "'%s' has %zu loads, more than exhaustive "
					"search takes (%zu): use --method bnb or ilp", o->path, g.n,
					sopt.exhaustive_max_n);
			goto out;
		}
		ret = s->solve(&g, &sopt, &res[nr]);
		if (ret) {
			error_prefix(ret, "cannot solve '%s' with %s", o->path, s->name);
			goto out;
		}
		if (!res[nr].optimal && isfinite(res[nr].bound))
			cli_warn("%s stopped by the time limit (%g s): best %.10g, bound %.10g, "
				 "gap %.2f%%; give --time-limit more seconds, or 0 for none",
				 s->name, o->time_limit, res[nr].objective, res[nr].bound,
				 100.0 * res[nr].gap);
		nr++;
	}
	if (o->json) {
		json_t *out = all ? json_array() : NULL;
		char *s;

		for (i = 0; i < nr; i++) {
			json_t *one = solver_result_to_json(&g, &res[i]);

			if (all)
				json_array_append_new(out, one);
			else
				out = one;
		}
		s = json_to_string(out);
		printf("%s\n", s);
		free(s);
		json_decref(out);
	} else {
		printf("graph '%s': %zu loads, %zu nonzero edges\n\n", o->path, g.n,
		       graph_nr_edges(&g));
		print_text(&g, res, nr);
	}
out:
	for (i = 0; i < nr; i++)
		solver_result_release(&res[i]);
	graph_release(&g);
	return ret ? cli_fail(ret, NULL) : 0;
}

int cmd_solve(int argc, char **argv)
{
	struct solve_options o;
	int ret = parse_options(argc, argv, &o);

	if (ret < 0)
		return 0;   /* --help */
	if (ret)
		return ret;
	return solve_graph(&o);
}
