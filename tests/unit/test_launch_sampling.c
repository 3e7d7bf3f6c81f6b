/*
 * In-run capture decisions (analysis/launch_sampling.c): sampled launch
 * ordinals are spread, distinct, avoid the first launch when they can and
 * never exceed the launches; the first pass lists all, none and every
 * single load; pairs of two hitless loads are left out and counted.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/launch_sampling.h"
#include "tests/unit/check.h"

static void test_ordinals(void)
{
	uint64_t o[8];
	size_t n, i;

	CHECK_INT(launch_sample_ordinals(0, 3, o), 0);
	CHECK_INT(launch_sample_ordinals(5, 0, o), 0);
	n = launch_sample_ordinals(1, 3, o);
	CHECK_INT(n, 1);
	CHECK_INT(o[0], 0);
	n = launch_sample_ordinals(3, 3, o);
	CHECK_INT(n, 3);
	CHECK_INT(o[2], 2);
	n = launch_sample_ordinals(2000, 3, o);
	CHECK_INT(n, 3);
	CHECK(o[0] >= 1);                       /* not the first launch */
	CHECK(o[0] < o[1] && o[1] < o[2]);
	CHECK(o[2] < 2000);
	CHECK(o[0] < 700 && o[2] > 1300);       /* spread over the run */
	n = launch_sample_ordinals(4, 3, o);
	CHECK_INT(n, 3);
	for (i = 0; i < n; i++)
		CHECK(o[i] >= 1 && o[i] < 4);
	CHECK(o[0] < o[1] && o[1] < o[2]);
}

static void test_singles(void)
{
	size_t nr = 0;
	struct measure_variant *v = measure_singles(3, &nr);

	CHECK_INT(nr, 5);
	CHECK_STR(v[0].label, "all");
	CHECK_INT(v[0].mask, 7);
	CHECK_STR(v[1].label, "none");
	CHECK_INT(v[1].mask, 0);
	CHECK_STR(v[4].label, "2");
	CHECK_INT(v[4].mask, 4);
	free(v);
	v = measure_singles(64, &nr);
	CHECK(v[0].mask == ~(uint64_t)0);
	CHECK(v[65].mask == (uint64_t)1 << 63);
	free(v);
}

static void test_pairs(void)
{
	const double hit[4] = { 0, 100, 0, 0 }, unknown[3] = { 0, NAN, 0 };
	size_t nr = 0, skipped = 0, i;
	struct measure_variant *v = measure_pairs(4, hit, 0, &nr, &skipped);

	/* pairs with load 1: (0,1) (1,2) (1,3); the other three are additive */
	CHECK_INT(nr, 3);
	CHECK_INT(skipped, 3);
	for (i = 0; i < nr; i++)
		CHECK(v[i].mask & 2);
	CHECK_STR(v[0].label, "0,1");
	free(v);
	v = measure_pairs(4, hit, 1, &nr, &skipped);
	CHECK_INT(nr, 6);
	CHECK_INT(skipped, 0);
	CHECK_STR(v[5].label, "2,3");
	CHECK_INT(v[5].mask, 12);
	free(v);
	/* a load not measured is never assumed hitless */
	v = measure_pairs(3, unknown, 0, &nr, &skipped);
	CHECK_INT(nr, 2);
	CHECK_INT(skipped, 1);
	free(v);
	v = measure_pairs(1, hit, 0, &nr, &skipped);
	CHECK_INT(nr, 0);
	free(v);
}

/* All pairs in the first pass only when their replays cost less than a pass. */
static void test_pairs_first_pass(void)
{
	double ns[2] = { 1e6, 2e5 }, est = -1;   /* 1 ms and 0.2 ms per launch */
	size_t loads[2] = { 4, 4 };

	/* 6 pairs x 3 x (1 ms x 8 + 50 ms) + 6 x 3 x (0.2 ms x 8 + 50 ms) = 1.044 + 0.9288 s */
	CHECK_INT(measure_pairs_in_first_pass(ns, loads, 2, 3, 0.5, &est), 1);
	CHECK_NEAR(est, 1.9728, 1e-9);
	/* lud's 24 loads: 276 pairs x 3 ranges cost 41 s, far more than a pass */
	loads[1] = 24;
	CHECK_INT(measure_pairs_in_first_pass(ns, loads, 2, 3, 0.5, &est), 0);
	CHECK(est > 40);
	/* a native time unknown (0): never */
	loads[1] = 4;
	CHECK_INT(measure_pairs_in_first_pass(ns, loads, 2, 3, 0, &est), 0);
	/* one load: no pair, nothing to pay */
	loads[0] = 1;
	loads[1] = 1;
	CHECK_INT(measure_pairs_in_first_pass(ns, loads, 2, 3, 0.5, &est), 1);
	CHECK_NEAR(est, 0, 1e-12);
}

int main(void)
{
	test_pairs_first_pass();
	test_ordinals();
	test_singles();
	test_pairs();
	return check_done();
}
