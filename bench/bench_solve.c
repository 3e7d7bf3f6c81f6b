/*
 * Solver benchmark (not a test): prints
 *   1. ILP time against the number of loads on dense random graphs,
 *   2. the ILP formulation switches compared on the same graphs,
 *   3. heuristic time against the number of loads, up to 4096,
 *   4. heuristic / optimum objective ratio on random graphs,
 *   5. bnb (branch and bound with SDP bounds) time against the number of
 *      loads, dense and sparse, on the graphs of section 1,
 *   6. what bnb's SDP bound buys.
 * Results committed in bench/results/solve.md.
 *
 * usage: bench_solve [--quick] [--time-limit SEC] [--seeds N] [--section N]
 *                    [--max-n N]
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#include "base/error.h"
#include "analysis/graph.h"
#include "analysis/solver.h"

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_unit(void)
{
	return (double)(rng_next() >> 11) / 9007199254740992.0;
}

enum family {
	FAMILY_MIXED,   /* node and edge weights uniform integers in [-100, 100] */
	FAMILY_SECTOR,  /* sector model shape: W(v) = 32 hit >= 0, gain >= -(hit_i + hit_j) */
};

static const char *family_name(enum family f)
{
	return f == FAMILY_MIXED ? "mixed" : "sector";
}

static void random_graph(struct graph *g, size_t n, double density, enum family f,
			 uint64_t seed)
{
	size_t i, j;
	char id[32];

	rng_state = seed;
	graph_init(g);
	for (i = 0; i < n; i++) {
		double w = f == FAMILY_MIXED ? floor(rng_unit() * 201) - 100
					     : 32 * floor(rng_unit() * 1001);

		snprintf(id, sizeof(id), "ld%zu", i);
		graph_add_node(g, id, w);
	}
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			double w;

			if (rng_unit() >= density)
				continue;
			if (f == FAMILY_MIXED) {
				w = floor(rng_unit() * 201) - 100;
			} else {
				/* conflicts as deep as the pair's own hits, reuse up to
				 * a third of a typical load's hits */
				double hit_i = g->nodes[i].weight / 32, hit_j = g->nodes[j].weight / 32;
				double lo = -(hit_i + hit_j) * 0.5;

				w = 32 * floor(lo + rng_unit() * (-lo + 300));
			}
			graph_set_edge(g, i, j, w);
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct ilp_stats {
	double median_s, max_s, worst_gap, median_nodes;
	int proven, runs;
	int checked, disagree;      /* bnb "proven" results cross-checked, and wrong */
};

/* Over the whole run, printed at the end (and the exit status). */
static int total_checked, total_disagree;

/*
 * bnb's "proven" is bnb's own word: a sample of its proven answers (the
 * first graph of each row) is solved again by exhaustive search (N <= 24,
 * exact) and by the ILP under the same limit. A proven bnb answer is wrong
 * when exhaustive search or a proven ILP finds another optimum, when the
 * ILP finds any better plan, or when its objective is not its plan's.
 */
static void cross_check(const struct graph *g, const struct solver_result *bnb,
			const struct solver_options *opt, struct ilp_stats *st)
{
	double tol = 1e-9 * (1.0 + fabs(bnb->objective));
	struct solver_result r;
	int wrong = 0;

	if (!bnb->optimal)
		return;
	wrong += fabs(graph_objective(g, bnb->cached) - bnb->objective) > tol;
	if (g->n <= 24 && !solver_find("exhaustive")->solve(g, opt, &r)) {
		if (fabs(r.objective - bnb->objective) > tol) {
			fprintf(stderr, "cross-check: N=%zu: bnb proved %.17g, exhaustive finds %.17g\n",
				g->n, bnb->objective, r.objective);
			wrong++;
		}
		solver_result_release(&r);
	}
	if (!solver_find("ilp")->solve(g, opt, &r)) {
		if (r.objective > bnb->objective + tol ||
		    (r.optimal && fabs(r.objective - bnb->objective) > tol) ||
		    (!r.optimal && r.bound < bnb->objective - tol)) {
			fprintf(stderr, "cross-check: N=%zu: bnb proved %.17g, ilp finds %.17g "
				"(%s, bound %.17g)\n", g->n, bnb->objective, r.objective,
				r.optimal ? "proven" : "not proven", r.bound);
			wrong++;
		}
		solver_result_release(&r);
	}
	st->checked++;
	st->disagree += wrong > 0;
	total_checked++;
	total_disagree += wrong > 0;
}

/* Runs method on the graphs of seeds 0..seeds-1 (the same graphs for every
 * method and section). */
static void run_method(const char *method, size_t n, double density, enum family f, int seeds,
		       const struct solver_options *opt, struct ilp_stats *st)
{
	const struct solver *solver = solver_find(method);
	double *times = calloc((size_t)seeds, sizeof(*times));
	double *nodes = calloc((size_t)seeds, sizeof(*nodes));
	int s;

	memset(st, 0, sizeof(*st));
	for (s = 0; s < seeds; s++) {
		struct graph g;
		struct solver_result res;

		random_graph(&g, n, density, f, 1000 + (uint64_t)s * 7919 + n);
		if (solver->solve(&g, opt, &res)) {
			fprintf(stderr, "%s failed: %s\n", method, error_message());
			exit(1);
		}
		times[s] = res.seconds;
		nodes[s] = (double)res.nodes;
		if (!s && !strcmp(method, "bnb"))
			cross_check(&g, &res, opt, st);
		st->proven += res.optimal;
		if (res.gap > st->worst_gap)
			st->worst_gap = res.gap;
		if (res.seconds > st->max_s)
			st->max_s = res.seconds;
		solver_result_release(&res);
		graph_release(&g);
	}
	qsort(times, (size_t)seeds, sizeof(*times), cmp_double);
	qsort(nodes, (size_t)seeds, sizeof(*nodes), cmp_double);
	st->median_s = times[seeds / 2];
	st->median_nodes = nodes[seeds / 2];
	st->runs = seeds;
	free(times);
	free(nodes);
}

static void run_ilp(size_t n, double density, enum family f, int seeds,
		    const struct solver_options *opt, struct ilp_stats *st)
{
	run_method("ilp", n, density, f, seeds, opt, st);
}

static void section_ilp_scaling(double limit, int seeds, int quick, double density)
{
	static const size_t sizes[] = { 8, 16, 24, 32, 40, 48, 64, 96, 128 };
	size_t k;
	int f;

	printf("## 1%s. ILP (default formulation) against N, %s graphs (edge density %.1f)\n\n",
	       density < 1 ? "b" : "", density < 1 ? "sparse" : "dense", density);
	printf("time limit %.0f s per graph, %d graphs per row; gap = (bound - objective) / "
	       "objective of the worst graph\n\n", limit, seeds);
	printf("| family | N | median s | max s | proven optimal | worst gap |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");
	for (f = 0; f < 2; f++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			struct solver_options opt;
			struct ilp_stats st;

			if (quick && sizes[k] > 32)
				break;
			if (density < 1 && sizes[k] < 32)
				continue;
			solver_options_init(&opt);
			opt.time_limit_seconds = limit;
			run_ilp(sizes[k], density, (enum family)f, seeds, &opt, &st);
			printf("| %s | %zu | %.3f | %.3f | %d/%d | %.3g |\n", family_name((enum family)f),
			       sizes[k], st.median_s, st.max_s, st.proven, st.runs, st.worst_gap);
			fflush(stdout);
		}
	}
	printf("\n");
}

struct variant {
	const char *name;
	void (*set)(struct solver_options *opt);
};

/* Every switch set explicitly, so a row does not depend on the defaults. */
static void v_seed(struct solver_options *o)
{
	o->ilp_full_linearisation = 1;
	o->ilp_continuous_pairs = 0;
	o->ilp_fix_persistent = 0;
	o->ilp_presolve = 1;
	o->ilp_warm_start = 0;
	o->ilp_triangle_cuts = 0;
	o->ilp_cuts = 0;
	o->ilp_branching = 0;
	o->ilp_backtracking = 0;
}
static void v_tight(struct solver_options *o) { v_seed(o); o->ilp_full_linearisation = 0; }
static void v_fix(struct solver_options *o) { v_tight(o); o->ilp_fix_persistent = 1; }
static void v_fix_cont(struct solver_options *o) { v_fix(o); o->ilp_continuous_pairs = 1; }
static void v_fix_cuts(struct solver_options *o) { v_fix(o); o->ilp_cuts = 1; }
static void v_fix_mfv(struct solver_options *o) { v_fix(o); o->ilp_branching = GLP_BR_MFV; }
static void v_fix_pch(struct solver_options *o) { v_fix(o); o->ilp_branching = GLP_BR_PCH; }
static void v_fix_dfs(struct solver_options *o) { v_fix(o); o->ilp_backtracking = GLP_BT_DFS; }
static void v_fix_bph(struct solver_options *o) { v_fix(o); o->ilp_backtracking = GLP_BT_BPH; }
static void v_nopre_warm(struct solver_options *o)
{
	v_fix(o);
	o->ilp_presolve = 0;
	o->ilp_warm_start = 1;
}
static void v_nopre_tri(struct solver_options *o)
{
	v_fix(o);
	o->ilp_presolve = 0;
	o->ilp_triangle_cuts = 1;
}
static void v_default(struct solver_options *o)
{
	v_nopre_tri(o);
	o->ilp_warm_start = 1;
}
static void v_default_cont(struct solver_options *o) { v_default(o); o->ilp_continuous_pairs = 1; }
static void v_default_mfv(struct solver_options *o) { v_default(o); o->ilp_branching = GLP_BR_MFV; }
static void v_default_cuts(struct solver_options *o) { v_default(o); o->ilp_cuts = 1; }
static void v_default_full(struct solver_options *o) { v_default(o); o->ilp_full_linearisation = 1; }

static const struct variant variants[] = {
	{ "A seed as written: 3 rows per edge, binary M, GLPK presolve", v_seed },
	{ "B A + sign tightening (rows the edge's sign needs)", v_tight },
	{ "C B + persistency fixing", v_fix },
	{ "C + continuous M", v_fix_cont },
	{ "C + GMI, MIR, cover, clique cuts", v_fix_cuts },
	{ "C + branching most fractional", v_fix_mfv },
	{ "C + branching pseudocost", v_fix_pch },
	{ "C + backtracking depth first", v_fix_dfs },
	{ "C + backtracking best projection", v_fix_bph },
	{ "C, no presolve, heuristic warm start", v_nopre_warm },
	{ "C, no presolve, triangle cuts", v_nopre_tri },
	{ "D default: C, no presolve, triangle cuts, warm start", v_default },
	{ "D + continuous M", v_default_cont },
	{ "D + branching most fractional", v_default_mfv },
	{ "D + GMI, MIR, cover, clique cuts", v_default_cuts },
	{ "D with 3 rows per edge", v_default_full },
};

static const char *variant_filter;

static void section_variants(double limit, int seeds, size_t n, enum family f)
{
	size_t k;

	printf("## 2. ILP formulation switches, dense %s graphs, N = %zu\n\n", family_name(f), n);
	printf("time limit %.0f s per graph, %d graphs per row\n\n", limit, seeds);
	printf("| variant | median s | max s | proven optimal | worst gap |\n");
	printf("|---|---:|---:|---:|---:|\n");
	for (k = 0; k < sizeof(variants) / sizeof(variants[0]); k++) {
		struct solver_options opt;
		struct ilp_stats st;

		if (variant_filter && !strstr(variants[k].name, variant_filter))
			continue;
		solver_options_init(&opt);
		opt.time_limit_seconds = limit;
		variants[k].set(&opt);
		run_ilp(n, 1.0, f, seeds, &opt, &st);
		printf("| %s | %.3f | %.3f | %d/%d | %.3g |\n", variants[k].name, st.median_s,
		       st.max_s, st.proven, st.runs, st.worst_gap);
		fflush(stdout);
	}
	printf("\n");
}

static void section_heuristic(int quick)
{
	size_t n;

	printf("## 3. Heuristic (Algorithm 1, running T_other sums) against N, dense mixed graphs\n\n");
	printf("| N | seconds | per N^2 (ns) |\n|---:|---:|---:|\n");
	for (n = 64; n <= (quick ? 1024u : 4096u); n *= 2) {
		const struct solver *h = solver_find("heuristic");
		struct solver_options opt;
		struct solver_result res;
		struct graph g;

		solver_options_init(&opt);
		random_graph(&g, n, 1.0, FAMILY_MIXED, 42 + n);
		h->solve(&g, &opt, &res);
		printf("| %zu | %.4f | %.2f |\n", n, res.seconds,
		       res.seconds * 1e9 / ((double)n * (double)n));
		fflush(stdout);
		solver_result_release(&res);
		graph_release(&g);
	}
	printf("\n");
}

static void section_ratio(int quick)
{
	static const size_t sizes[] = { 8, 12, 16, 20, 24 };
	static const double densities[] = { 0.2, 1.0 };
	int graphs = quick ? 20 : 100;
	size_t k, d;
	int f;

	printf("## 4. Heuristic / optimum objective, random graphs (optimum by the ILP, proven)\n\n");
	printf("%d graphs per row; ratio over graphs whose optimum is > 0\n\n", graphs);
	printf("| family | N | density | mean ratio | min ratio | heuristic optimal |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");
	for (f = 0; f < 2; f++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			for (d = 0; d < 2; d++) {
				const struct solver *ilp = solver_find("ilp"), *h = solver_find("heuristic");
				double sum = 0, min = INFINITY;
				int s, counted = 0, same = 0;

				for (s = 0; s < graphs; s++) {
					struct solver_options opt;
					struct solver_result a, b;
					struct graph g;

					solver_options_init(&opt);
					random_graph(&g, sizes[k], densities[d], (enum family)f,
						     77 + (uint64_t)s * 131 + sizes[k] * 7 + d);
					ilp->solve(&g, &opt, &a);
					h->solve(&g, &opt, &b);
					if (!a.optimal)
						fprintf(stderr, "warning: ILP not proven\n");
					if (a.objective > 0) {
						double r = b.objective / a.objective;

						sum += r;
						min = r < min ? r : min;
						counted++;
					}
					same += fabs(a.objective - b.objective) <= 1e-9 * (1 + fabs(a.objective));
					solver_result_release(&a);
					solver_result_release(&b);
					graph_release(&g);
				}
				printf("| %s | %zu | %.1f | %.4f | %.4f | %d/%d |\n",
				       family_name((enum family)f), sizes[k], densities[d],
				       counted ? sum / counted : NAN, min, same, graphs);
				fflush(stdout);
			}
		}
	}
	printf("\n");
}

/* The cross-check column: what the first graph's proven answer was checked
 * against, and whether it held. */
static const char *check_word(const struct ilp_stats *st, size_t n)
{
	if (!st->checked)
		return "not proven";
	if (st->disagree)
		return "WRONG";
	return n <= 24 ? "agrees (exhaustive, ilp)" : "agrees (ilp)";
}

static void section_bnb_scaling(double limit, int seeds, int quick, double density,
				size_t max_n)
{
	static const size_t sizes[] = { 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 128 };
	size_t k;
	int f;

	printf("## 5%s. bnb against N, %s graphs (edge density %.1f)\n\n",
	       density < 1 ? "b" : "", density < 1 ? "sparse" : "dense", density);
	printf("time limit %.0f s per graph, %d graphs per row (seeds as in section 1, whose graphs "
	       "are the first ones here); gap = (bound - objective) / objective of the worst "
	       "graph\n\n", limit, seeds);
	printf("| family | N | median s | max s | proven optimal | worst gap | median nodes | "
	       "cross-checked |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---|\n");
	for (f = 0; f < 2; f++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			struct solver_options opt;
			struct ilp_stats st;

			if ((quick && sizes[k] > 64) || sizes[k] > max_n)
				break;
			if (density < 1 && sizes[k] < 32)
				continue;
			solver_options_init(&opt);
			opt.time_limit_seconds = limit;
			run_method("bnb", sizes[k], density, (enum family)f, seeds, &opt, &st);
			printf("| %s | %zu | %.3f | %.3f | %d/%d | %.3g | %.0f | %s |\n",
			       family_name((enum family)f), sizes[k], st.median_s, st.max_s, st.proven,
			       st.runs, st.worst_gap, st.median_nodes, check_word(&st, sizes[k]));
			fflush(stdout);
		}
	}
	printf("\n");
}

/* What the SDP bound buys: bnb with the cheap bound only (persistency, the
 * half-split bound, the same branching and local search) against the default. */
static void section_bnb_sdp(double limit, int seeds)
{
	static const size_t sizes[] = { 24, 32, 40, 48 };
	size_t k;
	int f, sdp;

	printf("## 6. bnb with and without the SDP bound, dense graphs\n\n");
	printf("time limit %.0f s per graph, %d graphs per row\n\n", limit, seeds);
	printf("| family | N | bound | median s | max s | proven optimal | worst gap | median nodes "
	       "| cross-checked |\n");
	printf("|---|---:|---|---:|---:|---:|---:|---:|---|\n");
	for (f = 0; f < 2; f++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			for (sdp = 0; sdp < 2; sdp++) {
				struct solver_options opt;
				struct ilp_stats st;

				solver_options_init(&opt);
				opt.time_limit_seconds = limit;
				opt.bnb_sdp = sdp;
				run_method("bnb", sizes[k], 1.0, (enum family)f, seeds, &opt, &st);
				printf("| %s | %zu | %s | %.3f | %.3f | %d/%d | %.3g | %.0f | %s |\n",
				       family_name((enum family)f), sizes[k],
				       sdp ? "SDP (default)" : "cheap only", st.median_s, st.max_s,
				       st.proven, st.runs, st.worst_gap, st.median_nodes,
				       check_word(&st, sizes[k]));
				fflush(stdout);
			}
		}
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "time-limit", required_argument, NULL, 't' },
		{ "seeds", required_argument, NULL, 's' },
		{ "section", required_argument, NULL, 'S' },
		{ "variant-n", required_argument, NULL, 'n' },
		{ "variants", required_argument, NULL, 'v' },
		{ "max-n", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	double limit = 30;
	int quick = 0, seeds = 5, section = 0, c;
	size_t variant_n = 32, max_n = 128;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': quick = 1; break;
		case 't': limit = atof(optarg); break;
		case 's': seeds = atoi(optarg); break;
		case 'S': section = atoi(optarg); break;
		case 'n': variant_n = (size_t)atoi(optarg); break;
		case 'v': variant_filter = optarg; break;
		case 'N': max_n = (size_t)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bench_solve [--quick] [--time-limit SEC] [--seeds N] "
					"[--section 1-6] [--variant-n N] [--variants SUBSTRING] "
					"[--max-n N]\n");
			return 1;
		}
	}
	if (seeds < 1)
		seeds = 1;
	if (!section || section == 1) {
		section_ilp_scaling(limit, seeds, quick, 1.0);
		section_ilp_scaling(limit, seeds, quick, 0.1);
	}
	if (!section || section == 2) {
		section_variants(limit, seeds, variant_n, FAMILY_MIXED);
		section_variants(limit, seeds, variant_n, FAMILY_SECTOR);
	}
	if (!section || section == 3)
		section_heuristic(quick);
	if (!section || section == 4)
		section_ratio(quick);
	if (!section || section == 5) {
		section_bnb_scaling(limit, seeds, quick, 1.0, max_n);
		section_bnb_scaling(limit, seeds, quick, 0.1, max_n);
	}
	if (!section || section == 6)
		section_bnb_sdp(limit, seeds);
	if (total_checked) {
		printf("cross-check: %d proven bnb answers checked against exhaustive search "
		       "(N <= 24) and the ILP: %d %s\n", total_checked, total_disagree,
		       total_disagree ? "WRONG (see stderr)" : "wrong");
		return total_disagree ? 2 : 0;
	}
	return 0;
}
