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

/*
 * The L2 oracle: every form per load, each plan once; digit and index
 * invert each other; the advice's L1 action stays unless a form has an L1
 * part of its own (Triton's); the count is refused above the limit.
 */
static void test_l2_enumeration(void)
{
	static const struct oracle_l2_form cuda[] = {
		{ LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_FIRST },
		{ LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST },
	};
	static const struct oracle_l2_form triton[] = {
		{ LOAD_ACTION_EVICT_FIRST, L2_PRIORITY_EVICT_FIRST },
		{ LOAD_ACTION_EVICT_LAST, L2_PRIORITY_EVICT_LAST },
	};
	unsigned measured[] = { 2, 5, 9 }, digits[3];
	enum load_action l1[] = { LOAD_ACTION_NO_ALLOCATE, LOAD_ACTION_AS_BUILT,
				  LOAD_ACTION_AS_BUILT };
	size_t p, b, n = oracle_l2_plan_count(3, 2, NULL, 1000);
	unsigned char seen[27] = { 0 };

	CHECK_INT(n, 27);
	CHECK_INT(oracle_l2_plan_count(3, 2, NULL, 26), 0);
	CHECK_INT(oracle_l2_plan_count(0, 2, NULL, 1000), 0);
	CHECK_INT(oracle_l2_plan_count(41, 2, NULL, (size_t)-1), 0);   /* 3^41 > 2^64 */
	for (p = 0; p < n; p++) {
		struct plan plan;

		plan_init(&plan);
		CHECK_INT(oracle_l2_plan_add(&plan, "m", "k", measured, l1, 3, NULL, 0, cuda, 2, NULL, p), 1);
		for (b = 0; b < 3; b++) {
			int l2 = plan_l2(&plan, "m", "k", measured[b]);

			digits[b] = oracle_l2_digit(p, b, 2, NULL);
			/* no priority, or the digit's */
			CHECK_INT(l2 < 0 ? 0 : l2 == L2_PRIORITY_NONE ? 0 :
				  l2 == L2_PRIORITY_EVICT_FIRST ? 1 : 2, digits[b]);
		}
		/* the advice's L1 action on load 2, in every plan */
		CHECK_INT(plan_action(&plan, "m", "k", 2), LOAD_ACTION_NO_ALLOCATE);
		CHECK_INT(oracle_l2_plan_index(digits, 3, 2, NULL), p);
		seen[p]++;
		plan_release(&plan);
	}
	for (p = 0; p < 27; p++)
		CHECK_INT(seen[p], 1);
	/* Triton's forms carry their L1 part: digit 2 on load 2 is evict_last
	 * in both levels, replacing the advice's no_allocate */
	{
		struct plan plan;
		unsigned d[3] = { 2, 0, 1 };

		plan_init(&plan);
		CHECK_INT(oracle_l2_plan_add(&plan, "m", "k", measured, l1, 3, NULL, 0, triton, 2, NULL,
					     oracle_l2_plan_index(d, 3, 2, NULL)), 1);
		CHECK_INT(plan_action(&plan, "m", "k", 2), LOAD_ACTION_EVICT_LAST);
		CHECK_INT(plan_l2(&plan, "m", "k", 2), L2_PRIORITY_EVICT_LAST);
		CHECK_INT(plan_action(&plan, "m", "k", 5), -1);
		CHECK_INT(plan_action(&plan, "m", "k", 9), LOAD_ACTION_EVICT_FIRST);
		CHECK_INT(oracle_l2_plan_add(&plan, "m", "k", measured, l1, 3, NULL, 0, triton, 2, NULL, 27),
			  0);
		plan_release(&plan);
	}
	/* sites: loads 2 and 9 are one call, sharing digit 0; load 5 digit 1 */
	{
		static const size_t site[] = { 0, 1, 0 };
		struct plan plan;
		unsigned d[2] = { 2, 1 };

		CHECK_INT(oracle_l2_plan_count(2, 2, NULL, 1000), 9);
		plan_init(&plan);
		CHECK_INT(oracle_l2_plan_add(&plan, "m", "k", measured, l1, 3, site, 2, triton, 2, NULL,
					     oracle_l2_plan_index(d, 2, 2, NULL)), 1);
		CHECK_INT(plan_l2(&plan, "m", "k", 2), L2_PRIORITY_EVICT_LAST);
		CHECK_INT(plan_l2(&plan, "m", "k", 9), L2_PRIORITY_EVICT_LAST);
		CHECK_INT(plan_l2(&plan, "m", "k", 5), L2_PRIORITY_EVICT_FIRST);
		CHECK_INT(oracle_l2_plan_add(&plan, "m", "k", measured, l1, 3, site, 2, triton, 2, NULL, 9),
			  0);
		plan_release(&plan);
	}
}

/*
 * Sites that take only the forms measured for them: Triton's three forms,
 * a site built with evict_first not measured in it again, sites without a
 * policy not measured in "default". Plans are numbered in the mixed radix
 * of what each site allows, round trip, and never give a site a form it
 * does not allow.
 */
static void test_l2_allowed(void)
{
	static const struct oracle_l2_form triton[] = {
		{ LOAD_ACTION_EVICT_FIRST, L2_PRIORITY_EVICT_FIRST },
		{ LOAD_ACTION_EVICT_LAST, L2_PRIORITY_EVICT_LAST },
		{ LOAD_ACTION_DEFAULT, L2_PRIORITY_NONE },
	};
	/* bit d: digit d; site 1 is built evict_first: 0, evict_last, default */
	const unsigned allowed[] = { 1 | 2 | 4, 1 | 4 | 8, 1 | 2 | 4, 1 };
	unsigned measured[] = { 2, 5, 9, 11 }, digits[4];
	enum load_action l1[] = { LOAD_ACTION_AS_BUILT, LOAD_ACTION_AS_BUILT,
				  LOAD_ACTION_AS_BUILT, LOAD_ACTION_AS_BUILT };
	size_t n = oracle_l2_plan_count(4, 3, allowed, 1000), p, b, seen_default = 0;

	CHECK_INT(n, 27);          /* 3 * 3 * 3 * 1, not 4^4 */
	CHECK_INT(oracle_l2_plan_count(4, 3, NULL, 1000), 256);
	CHECK_INT(oracle_l2_plan_count(4, 3, allowed, 26), 0);
	for (p = 0; p < n; p++) {
		struct plan plan;

		for (b = 0; b < 4; b++) {
			digits[b] = oracle_l2_digit(p, b, 3, allowed);
			CHECK(allowed[b] >> digits[b] & 1);
		}
		CHECK_INT(oracle_l2_plan_index(digits, 4, 3, allowed), p);
		plan_init(&plan);
		CHECK_INT(oracle_l2_plan_add(&plan, "m", "k", measured, l1, 4, NULL, 0, triton, 3,
					     allowed, p), 1);
		if (digits[1] == 3) {
			/* "default": the plain load, no L2 priority of the plan's */
			seen_default++;
			CHECK_INT(plan_action(&plan, "m", "k", 5), LOAD_ACTION_DEFAULT);
			CHECK_INT(plan_l2(&plan, "m", "k", 5), 0);
		}
		CHECK(plan_action(&plan, "m", "k", 5) != LOAD_ACTION_EVICT_FIRST);
		CHECK(plan_action(&plan, "m", "k", 11) < 0);
		plan_release(&plan);
	}
	CHECK_INT(seen_default, 9);
	{
		struct plan plan;

		plan_init(&plan);
		CHECK_INT(oracle_l2_plan_add(&plan, "m", "k", measured, l1, 4, NULL, 0, triton, 3,
					     allowed, 27), 0);
		plan_release(&plan);
	}
	/* a digit a site does not allow counts as 0 */
	digits[0] = 3;
	digits[1] = digits[2] = digits[3] = 0;
	CHECK_INT(oracle_l2_plan_index(digits, 4, 3, allowed), 0);
}

int main(void)
{
	test_l2_allowed();
	test_l2_enumeration();
	test_enumeration();
	test_smaller_kernel();
	test_best();
	return check_done();
}
