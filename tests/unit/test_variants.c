#include "analysis/variants.h"
#include "tests/unit/check.h"

static void test_pairs(void)
{
	size_t i, j, p, n = 5, seen = 0;

	CHECK_INT(variant_nr_pairs(0), 0);
	CHECK_INT(variant_nr_pairs(1), 0);
	CHECK_INT(variant_nr_pairs(5), 10);
	for (p = 0; p < variant_nr_pairs(n); p++) {
		variant_pair(n, p, &i, &j);
		CHECK(i < j && j < n);
		seen |= (size_t)1 << (i * n + j);
	}
	/* every (i, j) pair exactly once: 10 distinct bits */
	CHECK_INT(__builtin_popcountl(seen), 10);
	variant_pair(n, 0, &i, &j);
	CHECK(i == 0 && j == 1);
	variant_pair(n, 9, &i, &j);
	CHECK(i == 3 && j == 4);
}

static void test_schedule(void)
{
	unsigned m1[] = { 0, 2, 5 }, p1[] = { 0, 1, 2, 5 };
	unsigned m2[] = { 1 }, p2[] = { 0, 1 };
	struct variant_kernel ks[2] = {
		{ "aaaa", "k1", m1, 3, p1, 4 },
		{ "bbbb", "k2", m2, 1, p2, 2 },
	};
	struct variant_run *runs;
	size_t n = variants_schedule(ks, 2, 2, &runs), nodes[2];

	/* 2 baselines + all-bypassed + max N (3) + max pairs (3) */
	CHECK_INT(n, 9);
	CHECK_INT(runs[0].kind, VARIANT_BASELINE);
	CHECK_INT(runs[2].kind, VARIANT_ALL_BYPASSED);
	CHECK_INT(runs[3].kind, VARIANT_SINGLE);
	CHECK_INT(runs[6].kind, VARIANT_PAIR);
	CHECK_INT(variant_nodes(&ks[0], &runs[4], nodes), 1);
	CHECK_INT(nodes[0], 1);
	CHECK_INT(variant_nodes(&ks[1], &runs[4], nodes), -1);
	CHECK_INT(variant_nodes(&ks[1], &runs[6], nodes), -1);
	CHECK_INT(variant_nodes(&ks[0], &runs[8], nodes), 2);
	CHECK(nodes[0] == 1 && nodes[1] == 2);
	free(runs);
}

static void test_plan(void)
{
	unsigned m1[] = { 0, 2, 5 }, p1[] = { 0, 1, 2, 5 };
	struct variant_kernel k = { "aaaa", "k1", m1, 3, p1, 4 };
	struct variant_run single = { VARIANT_SINGLE, 1 }, base = { VARIANT_BASELINE, 0 };
	struct plan plan;
	size_t i, count = 0;
	int saw_two = 0;

	plan_init(&plan);
	variant_add_to_plan(&k, &base, LOAD_ACTION_NO_ALLOCATE, &plan);
	CHECK_INT(plan.nr_modules, 0);
	variant_add_to_plan(&k, &single, LOAD_ACTION_NO_ALLOCATE, &plan);
	CHECK_INT(plan.nr_modules, 1);
	for (i = 0; plan.nr_modules && i < plan.modules[0].functions[0].nr_loads; i++) {
		const struct plan_load *l = &plan.modules[0].functions[0].loads[i];
		CHECK_INT(l->action, LOAD_ACTION_NO_ALLOCATE);
		if (l->ordinal == 2)
			saw_two = 1;
		count++;
	}
	/* ordinal 2 (node 1) allocates; 0, 1 and 5 are bypassed */
	CHECK_INT(count, 3);
	CHECK(!saw_two);
	plan_release(&plan);
}

int main(void)
{
	test_pairs();
	test_schedule();
	test_plan();
	return check_done();
}
