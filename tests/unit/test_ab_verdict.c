#include "analysis/ab_verdict.h"
#include "tests/unit/check.h"

static int reason_is(json_t *v, const char *want)
{
	const char *r = json_string_value(json_object_get(v, "reason"));
	return r && !strcmp(r, want);
}

/* 10% faster, baseline spread 2%: kept. */
static void test_kept(void)
{
	double b[] = { 100, 101, 99, 100, 102 }, a[] = { 90, 91, 90, 89, 92 };
	int kept = -1;
	json_t *v = ab_verdict_judge(b, a, 5, 1, NULL, &kept);

	CHECK_INT(kept, 1);
	CHECK(json_is_true(json_object_get(v, "kept")));
	CHECK_NEAR(json_number_value(json_object_get(v, "noise")), 3.0 / 100, 1e-9);
	CHECK(json_number_value(json_object_get(json_object_get(v, "speedup"), "median")) > 1.09);
	CHECK(reason_is(v, "the median speedup exceeds the baseline-against-baseline spread"));
	json_decref(v);
}

/* 2% faster but the baselines spread by 10%: within the noise, rejected. */
static void test_within_noise(void)
{
	double b[] = { 100, 110, 100, 105, 100 }, a[] = { 98, 108, 98, 103, 98 };
	int kept = -1;
	json_t *v = ab_verdict_judge(b, a, 5, 1, NULL, &kept);

	CHECK_INT(kept, 0);
	CHECK(reason_is(v, "the speedup is within the baseline-against-baseline spread"));
	json_decref(v);
}

static void test_slower(void)
{
	double b[] = { 100, 100, 101 }, a[] = { 120, 121, 119 };
	int kept = -1;
	json_t *v = ab_verdict_judge(b, a, 3, 1, NULL, &kept);

	CHECK_INT(kept, 0);
	CHECK(reason_is(v, "slower than the baseline"));
	json_decref(v);
}

/* Much faster, but the output changed: rejected with the reason given. */
static void test_output_changed(void)
{
	double b[] = { 100, 100, 101 }, a[] = { 50, 50, 50 };
	struct ab_result ab;
	int kept = -1;
	json_t *v;

	ab_result_init(&ab, 1, 3);
	ab.outputs_equal = 0;
	ab.reject_reason = "the program's output changed with the advice applied";
	v = ab_verdict(b, a, 3, &ab, &kept);
	CHECK_INT(kept, 0);
	CHECK(reason_is(v, "the program's output changed with the advice applied"));
	json_decref(v);
	ab_result_release(&ab);
}

/* One round: no spread can be measured, so nothing is kept. */
static void test_one_round(void)
{
	double b[] = { 100 }, a[] = { 50 };
	int kept = -1;
	json_t *v = ab_verdict_judge(b, a, 1, 1, NULL, &kept);

	CHECK_INT(kept, 0);
	CHECK(json_is_null(json_object_get(v, "noise")));
	json_decref(v);
}

/* Rounds that measured nothing (NAN) do not count. */
static void test_unmeasured(void)
{
	double b[] = { NAN, NAN }, a[] = { 1, 1 };
	double b2[] = { 100, 100, NAN }, a2[] = { 80, NAN, 80 };
	int kept = -1;
	json_t *v = ab_verdict_judge(b, a, 2, 1, NULL, &kept);

	CHECK_INT(kept, 0);
	CHECK(reason_is(v, "no kernel times were measured"));
	json_decref(v);
	v = ab_verdict_judge(b2, a2, 3, 1, NULL, &kept);
	CHECK_INT(kept, 1);
	CHECK_INT(json_array_size(json_object_get(v, "advice_ns")), 3);
	CHECK(json_is_null(json_array_get(json_object_get(v, "advice_ns"), 1)));
	json_decref(v);
}

static void test_median_and_program(void)
{
	double v[] = { 5, 1, 3, 2 };
	struct ab_result ab;
	json_t *p;

	CHECK_NEAR(ab_median(v, 4), 2.5, 1e-12);
	CHECK(isnan(ab_median(v, 0)));
	ab_result_init(&ab, 0, 2);
	ab.base_wall[0] = ab.base_wall[1] = 2.0;
	ab.adv_wall[0] = ab.adv_wall[1] = 1.0;
	ab.base_total[0] = ab.base_total[1] = 300;
	ab.adv_total[0] = ab.adv_total[1] = 100;
	p = ab_program_json(&ab);
	CHECK_NEAR(json_number_value(json_object_get(json_object_get(p, "wall_speedup"), "median")), 2.0, 1e-12);
	CHECK_NEAR(json_number_value(json_object_get(json_object_get(p, "gpu_speedup"), "median")), 3.0, 1e-12);
	json_decref(p);
	ab_result_release(&ab);
}

int main(void)
{
	test_kept();
	test_within_noise();
	test_slower();
	test_output_changed();
	test_one_round();
	test_unmeasured();
	test_median_and_program();
	return check_done();
}
