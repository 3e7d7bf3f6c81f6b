/*
 * Several choices per load (analysis/multi_choice.c): bnb and the ILP
 * against exhaustive search on random instances (forms of every count,
 * gains of both signs, pairs with and without gains), greedy never above
 * them, the two-form case against the seed's solvers on the same graph,
 * stopped searches (a bound that holds), and the refusals.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph.h"
#include "analysis/multi_choice.h"
#include "analysis/solver.h"
#include "base/error.h"
#include "tests/unit/check.h"

static uint64_t rng_state = 42;

static uint64_t rng_next(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static long rng_int(long lo, long hi)
{
	return lo + (long)(rng_next() % (uint64_t)(hi - lo + 1));
}

/* n loads of 1..max_forms forms; gains in [-100, 100], integer or not;
 * about half the pairs without gains. */
static void random_instance(struct multi_choice *mc, size_t n, unsigned max_forms, int reals)
{
	unsigned forms[16];
	size_t i, j;
	unsigned s, t;

	for (i = 0; i < n; i++)
		forms[i] = (unsigned)rng_int(1, max_forms);
	multi_choice_init(mc, n, forms);
	for (i = 0; i < n; i++)
		for (s = 0; s < forms[i]; s++)
			multi_choice_set_unary(mc, i, s, (double)rng_int(-100, 100) +
					       (reals ? (double)rng_int(0, 999) / 1000 : 0));
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			if (rng_int(0, 1))
				continue;
			for (s = 0; s < forms[i]; s++)
				for (t = 0; t < forms[j]; t++)
					multi_choice_set_pair(mc, i, s, j, t,
							      (double)rng_int(-100, 100));
		}
}

static void test_against_exhaustive(void)
{
	struct multi_choice_options opt;
	int round;

	multi_choice_options_init(&opt);
	for (round = 0; round < 300; round++) {
		struct multi_choice mc;
		struct multi_choice_result ex, bnb, ilp, gr;
		size_t n = (size_t)rng_int(1, 7);

		random_instance(&mc, n, (unsigned)rng_int(1, 5), round % 2);
		CHECK_INT(multi_choice_exhaustive(&mc, &opt, &ex), 0);
		CHECK_INT(multi_choice_bnb(&mc, &opt, &bnb), 0);
		CHECK_INT(multi_choice_ilp(&mc, &opt, &ilp), 0);
		CHECK_INT(multi_choice_greedy(&mc, &opt, &gr), 0);
		CHECK_NEAR(bnb.objective, ex.objective, 1e-6);
		CHECK_NEAR(ilp.objective, ex.objective, 1e-6);
		CHECK(bnb.optimal && ilp.optimal && ex.optimal);
		CHECK(gr.objective <= ex.objective + 1e-6);
		/* the objective is the value of the forms returned */
		CHECK_NEAR(multi_choice_value(&mc, bnb.form), bnb.objective, 1e-9);
		CHECK_NEAR(multi_choice_value(&mc, ilp.form), ilp.objective, 1e-9);
		multi_choice_result_release(&ex);
		multi_choice_result_release(&bnb);
		multi_choice_result_release(&ilp);
		multi_choice_result_release(&gr);
		multi_choice_release(&mc);
	}
}

/* Two forms (0 bypass, 1 cache) with gains only on "cache": the seed's
 * graph, which the seed's bnb solves. */
static void test_two_forms_are_the_seed_graph(void)
{
	struct multi_choice_options opt;
	int round;

	multi_choice_options_init(&opt);
	for (round = 0; round < 40; round++) {
		size_t n = (size_t)rng_int(2, 14), i, j;
		unsigned forms[16];
		struct multi_choice mc;
		struct multi_choice_result bnb, ilp;
		struct solver_options so;
		struct solver_result sr;
		struct graph g;
		char id[32];

		graph_init(&g);
		for (i = 0; i < n; i++) {
			forms[i] = 2;
			snprintf(id, sizeof(id), "ld%zu", i);
			graph_add_node(&g, id, (double)rng_int(-50, 100));
		}
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (rng_int(0, 2) == 0)
					graph_set_edge(&g, i, j, (double)rng_int(-80, 40));
		multi_choice_init(&mc, n, forms);
		for (i = 0; i < n; i++) {
			multi_choice_set_unary(&mc, i, 1, g.nodes[i].weight);
			for (j = i + 1; j < n; j++)
				multi_choice_set_pair(&mc, i, 1, j, 1, graph_edge(&g, i, j));
		}
		solver_options_init(&so);
		CHECK_INT(solver_find("bnb")->solve(&g, &so, &sr), 0);
		CHECK_INT(multi_choice_bnb(&mc, &opt, &bnb), 0);
		CHECK_INT(multi_choice_ilp(&mc, &opt, &ilp), 0);
		CHECK_NEAR(bnb.objective, sr.objective, 1e-6);
		CHECK_NEAR(ilp.objective, sr.objective, 1e-6);
		solver_result_release(&sr);
		multi_choice_result_release(&bnb);
		multi_choice_result_release(&ilp);
		multi_choice_release(&mc);
		graph_release(&g);
	}
}

/* A node limit stops bnb: not optimal, and the bound it reports holds. */
static void test_stopped(void)
{
	struct multi_choice_options opt;
	struct multi_choice mc;
	struct multi_choice_result ex, bnb;

	multi_choice_options_init(&opt);
	random_instance(&mc, 9, 4, 1);
	CHECK_INT(multi_choice_exhaustive(&mc, &opt, &ex), 0);
	opt.node_limit = 3;
	CHECK_INT(multi_choice_bnb(&mc, &opt, &bnb), 0);
	CHECK_INT(bnb.nodes <= 3, 1);
	if (!bnb.optimal) {
		CHECK(bnb.bound >= ex.objective - 1e-6);
		CHECK(bnb.objective <= ex.objective + 1e-6);
	} else {
		CHECK_NEAR(bnb.objective, ex.objective, 1e-6);
	}
	multi_choice_result_release(&ex);
	multi_choice_result_release(&bnb);
	multi_choice_release(&mc);
}

/* Larger kernels than exhaustive search reaches: bnb and the ILP agree. */
static void test_larger(void)
{
	struct multi_choice_options opt;
	int round;

	multi_choice_options_init(&opt);
	for (round = 0; round < 5; round++) {
		struct multi_choice mc;
		struct multi_choice_result bnb, ilp;

		random_instance(&mc, 14, 4, 0);
		CHECK_INT(multi_choice_bnb(&mc, &opt, &bnb), 0);
		CHECK_INT(multi_choice_ilp(&mc, &opt, &ilp), 0);
		CHECK(bnb.optimal && ilp.optimal);
		CHECK_NEAR(bnb.objective, ilp.objective, 1e-6);
		multi_choice_result_release(&bnb);
		multi_choice_result_release(&ilp);
		multi_choice_release(&mc);
	}
}

static void test_refusals(void)
{
	struct multi_choice_options opt;
	struct multi_choice mc;
	struct multi_choice_result res;
	unsigned forms[20];
	size_t i;

	multi_choice_options_init(&opt);
	forms[0] = 0;
	multi_choice_init(&mc, 1, forms);
	CHECK_INT(multi_choice_bnb(&mc, &opt, &res), CA_E_INPUT);
	CHECK(strstr(error_message(), "0 forms") != NULL);
	multi_choice_release(&mc);
	for (i = 0; i < 20; i++)
		forms[i] = 4;
	multi_choice_init(&mc, 20, forms);   /* 4^20 choices */
	CHECK_INT(multi_choice_exhaustive(&mc, &opt, &res), CA_E_INPUT);
	CHECK(strstr(error_message(), "use bnb or the ILP") != NULL);
	/* nothing to gain: every load as built */
	CHECK_INT(multi_choice_bnb(&mc, &opt, &res), 0);
	CHECK_NEAR(res.objective, 0, 0);
	CHECK(res.optimal);
	multi_choice_result_release(&res);
	multi_choice_release(&mc);
}

int main(void)
{
	test_against_exhaustive();
	test_two_forms_are_the_seed_graph();
	test_stopped();
	test_larger();
	test_refusals();
	return check_done();
}
