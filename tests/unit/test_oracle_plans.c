#include "analysis/oracle_plans.h"
#include "analysis/plan_query.h"
#include "tests/unit/check.h"

/* Every plan of a 3-load kernel, each exactly once: bit b set = cached. */
static void test_enumeration(void)
{
	unsigned measured[] = { 2, 5, 9 };
	size_t p, seen = 0, nplans = oracle_plan_count(3);

	CHECK_INT(nplans, 8);
	CHECK_INT(oracle_plan_count(0), 0);
	for (p = 0; p < nplans; p++) {
		struct plan plan;
		unsigned long long mask;

		plan_init(&plan);
		CHECK_INT(oracle_plan_add(&plan, "m1", "k", measured, 3, p), 1);
		mask = plan_cached_mask(&plan, "m1", "k", measured, 3);
		CHECK_INT(mask, p);
		seen |= (size_t)1 << mask;
		/* the loads of a clear bit get no_allocate, the others no entry */
		CHECK_INT(plan_action(&plan, "m1", "k", 2), p & 1 ? -1 : (int)LOAD_ACTION_NO_ALLOCATE);
		CHECK_INT(plan_action(&plan, "m1", "k", 9), p & 4 ? -1 : (int)LOAD_ACTION_NO_ALLOCATE);
		plan_release(&plan);
	}
	CHECK_INT(seen, 0xff);
}

/* A kernel with fewer loads takes part only in the plans it has. */
static void test_smaller_kernel(void)
{
	unsigned measured[] = { 0 };
	struct plan plan;

	plan_init(&plan);
	CHECK_INT(oracle_plan_add(&plan, "m1", "small", measured, 1, 1), 1);
	CHECK_INT(oracle_plan_add(&plan, "m1", "small", measured, 1, 2), 0);
	CHECK_INT(oracle_plan_add(&plan, "m1", "small", measured, 1, 0), 1);
	CHECK_INT(plan_action(&plan, "m1", "small", 0), LOAD_ACTION_NO_ALLOCATE);
	plan_release(&plan);
}

static void test_best(void)
{
	double med[] = { 120, 80, NAN, 80 }, sp;

	CHECK_INT(oracle_best_plan(med, 4, 100, &sp), 1);
	CHECK_NEAR(sp, 1.25, 1e-12);
	CHECK_INT(oracle_best_plan(med, 4, NAN, &sp), 0);
	CHECK_NEAR(sp, -1, 0);
}

int main(void)
{
	test_enumeration();
	test_smaller_kernel();
	test_best();
	return check_done();
}
