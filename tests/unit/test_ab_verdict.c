#include <math.h>

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
	/* the accessors read what the capture's reader reads */
	CHECK_NEAR(ab_program_gpu_speedup(p), 3.0, 1e-12);
	json_decref(p);
	ab_result_release(&ab);
	CHECK(isnan(ab_program_gpu_speedup(NULL)));
	p = json_pack("{s:f}", "gpu_speedup", 1.5);          /* one number: the median */
	CHECK_NEAR(ab_program_gpu_speedup(p), 1.5, 1e-12);
	json_decref(p);
	p = json_pack("{s:s}", "gpu_speedup", "fast");       /* refused: no number */
	CHECK(isnan(ab_program_gpu_speedup(p)));
	json_decref(p);
}

/* A job's ranks (issue 29): kept only where every rank that launches the
 * kernel keeps it; a slower or untimed rank rejects it and is named. */
static void test_rank_verdicts(void)
{
	double b[] = { 100, 101, 99, 100, 102 }, fast[] = { 90, 91, 90, 89, 92 };
	double slow[] = { 120, 121, 119, 120, 122 };
	struct ab_rank_verdicts rv = { NULL, NULL };
	int kept = -1, k0 = -1, k1 = -1;
	json_t *v = ab_verdict_judge(b, fast, 5, 1, NULL, &kept), *r0, *r1, *ranks;

	CHECK_INT(kept, 1);
	r0 = ab_verdict_judge(b, fast, 5, 1, NULL, &k0);
	r1 = ab_verdict_judge(b, slow, 5, 1, NULL, &k1);
	ab_rank_verdict_add(&rv, 0, "0000:1b:00.0", r0, k0, NULL, 1);
	ab_rank_verdict_add(&rv, 1, "0000:2a:00.0", r1, k1, NULL, 1);
	ab_rank_verdict_add(&rv, 2, NULL, NULL, 0, NULL, 0);   /* does not launch it */
	ab_rank_verdicts_apply(&rv, v, &kept);
	CHECK_INT(kept, 0);
	CHECK(json_is_false(json_object_get(v, "kept")));
	CHECK(strstr(json_string_value(json_object_get(v, "reason")),
		     "rank 1 rejects it: 0.833x median kernel speedup there (") != NULL);
	ranks = json_object_get(v, "ranks");
	CHECK_INT(json_array_size(ranks), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(ranks, 2), "not_timed")),
		  "the rank does not launch it");
	CHECK(json_is_null(json_object_get(json_array_get(ranks, 2), "verdict")));
	CHECK_STR(json_string_value(json_object_get(json_array_get(ranks, 1), "gpu")), "0000:2a:00.0");
	json_decref(v);

	/* every rank faster: kept, with the ranks' verdicts */
	v = ab_verdict_judge(b, fast, 5, 1, NULL, &kept);
	r0 = ab_verdict_judge(b, fast, 5, 1, NULL, &k0);
	r1 = ab_verdict_judge(b, fast, 5, 1, NULL, &k1);
	ab_rank_verdict_add(&rv, 0, NULL, r0, k0, NULL, 1);
	ab_rank_verdict_add(&rv, 1, NULL, r1, k1, NULL, 1);
	ab_rank_verdicts_apply(&rv, v, &kept);
	CHECK_INT(kept, 1);
	CHECK_INT(json_array_size(json_object_get(v, "ranks")), 2);
	json_decref(v);

	/* a rank that could not be timed rejects it */
	v = ab_verdict_judge(b, fast, 5, 1, NULL, &kept);
	r0 = ab_verdict_judge(b, fast, 5, 1, NULL, &k0);
	ab_rank_verdict_add(&rv, 0, NULL, r0, k0, NULL, 1);
	ab_rank_verdict_add(&rv, 3, NULL, NULL, 0, "too few of its launches were timed in-run", 1);
	ab_rank_verdicts_apply(&rv, v, &kept);
	CHECK_INT(kept, 0);
	CHECK(strstr(json_string_value(json_object_get(v, "reason")),
		     "not timed on rank 3 (too few of its launches were timed in-run)") != NULL);
	json_decref(v);
}

/* A verdict's median and noise as `report` reads them. */
static void test_verdict_numbers(void)
{
	double b[] = { 100, 101, 99, 100, 102 }, a[] = { 90, 91, 90, 89, 92 };
	int kept = -1;
	json_t *v = ab_verdict_judge(b, a, 5, 1, NULL, &kept);

	CHECK_NEAR(ab_verdict_median(v), json_number_value(json_object_get(json_object_get(v,
		   "speedup"), "median")), 0);
	CHECK_NEAR(ab_verdict_noise(v), 0.03, 1e-9);
	json_decref(v);
	v = json_pack("{s:f, s:b}", "speedup", 1.25, "kept", 1);   /* an older capture's */
	CHECK_NEAR(ab_verdict_median(v), 1.25, 0);
	CHECK(isnan(ab_verdict_noise(v)));
	json_decref(v);
	v = json_pack("{s:f}", "speedup", -2.0);                    /* refused: not a count */
	CHECK(isnan(ab_verdict_median(v)));
	json_decref(v);
	CHECK(isnan(ab_verdict_median(NULL)));
}

/* In-run ABBA launches: a drifting workload is compared fairly; noise and
 * too few groups are caught. */
static void test_abba(void)
{
	double base[20], adv[20];
	int kept = -1, noisy = -1;
	size_t g;
	json_t *v;

	/* work shrinks 5% a launch (lud-like); advice 10% faster */
	for (g = 0; g < 10; g++) {
		double t = 1000.0 * (1.0 - 0.05 * (double)g);   /* launch 4g drifts down */
		base[2 * g] = t;                       /* a1 at 4g */
		adv[2 * g] = 0.9 * (t - 12.5);         /* b2 at 4g+1 */
		adv[2 * g + 1] = 0.9 * (t - 25.0);     /* b3 at 4g+2 */
		base[2 * g + 1] = t - 37.5;            /* a4 at 4g+3 */
	}
	v = ab_verdict_abba(base, 10, adv, 10, 1, NULL, 0.05, &kept, &noisy);
	CHECK_INT(kept, 1);
	CHECK_INT(noisy, 0);
	CHECK_INT(json_integer_value(json_object_get(v, "groups")), 4);
	json_decref(v);
	/* plain 20 launches of 5 groups: the first group is left out */
	for (g = 0; g < 20; g++) {
		base[g] = 1000 + 5 * (g % 3);   /* baseline against baseline: +-1% */
		adv[g] = 1000;
	}
	v = ab_verdict_abba(base, 10, adv, 10, 1, NULL, 0.05, &kept, &noisy);
	CHECK_INT(kept, 0);             /* 0.5% faster: within the noise */
	CHECK(json_number_value(json_object_get(v, "noise")) > 0.005);
	CHECK_INT(json_integer_value(json_object_get(v, "groups")), 4);
	json_decref(v);
	/* an output change rejects whatever the speed */
	for (g = 0; g < 10; g++) {
		base[g] = 1000;
		adv[g] = 500;
	}
	v = ab_verdict_abba(base, 10, adv, 10, 0, "the output changed", 0.05, &kept, &noisy);
	CHECK_INT(kept, 0);
	CHECK_STR(json_string_value(json_object_get(v, "reason")), "the output changed");
	json_decref(v);
	/* launches that differ wildly (BFS levels): too noisy to judge in-run */
	for (g = 0; g < 10; g++) {
		base[g] = (g % 2) ? 100 : 1000 * (double)(g + 1);
		adv[g] = 400;
	}
	v = ab_verdict_abba(base, 10, adv, 10, 1, NULL, 0.05, &kept, &noisy);
	CHECK_INT(noisy, 1);
	CHECK_INT(kept, 0);
	json_decref(v);
	/* two groups are not enough */
	v = ab_verdict_abba(base, 4, adv, 4, 1, NULL, 0.05, &kept, &noisy);
	CHECK_INT(kept, 0);
	CHECK(strstr(json_string_value(json_object_get(v, "reason")), "fewer than three") != NULL);
	json_decref(v);
}

/* the L2 step's early end: slower in every round than the slowest baseline */
static void test_clearly_slower(void)
{
	struct ab_result ab;

	ab_result_init(&ab, 2, 5);
	ab.base_total[0] = 100; ab.adv_total[0] = 130;
	CHECK_INT(ab_clearly_slower(&ab, 1), 0);        /* one round decides nothing */
	ab.base_total[1] = 104; ab.adv_total[1] = 120;
	CHECK_INT(ab_clearly_slower(&ab, 2), 1);
	ab.adv_total[1] = 103;                           /* faster than one baseline */
	CHECK_INT(ab_clearly_slower(&ab, 2), 0);
	ab.adv_total[1] = NAN;                           /* unmeasured */
	CHECK_INT(ab_clearly_slower(&ab, 2), 0);
	/* truncation keeps each kernel's first rounds, packed */
	ab.base_ns[0] = 1; ab.base_ns[1] = 2; ab.base_ns[5] = 11; ab.base_ns[6] = 12;
	ab.adv_ns[5] = 21; ab.adv_ns[6] = 22;
	ab_result_truncate(&ab, 2, 2);
	CHECK_INT((int)ab.rounds, 2);
	CHECK(ab.base_ns[0] == 1 && ab.base_ns[1] == 2 && ab.base_ns[2] == 11 && ab.base_ns[3] == 12);
	CHECK(ab.adv_ns[2] == 21 && ab.adv_ns[3] == 22);
	ab_result_release(&ab);
}

/*
 * A rebuilt program run with other arguments launches its kernels another
 * number of times (t_triton on an H200: the baseline's default iterations
 * against iters=5 read 1.56x): the first kernel so launched is named, and
 * the times become the mean launch's, which compare.
 */
static void test_launches_differ(void)
{
	struct ab_result ab;
	unsigned b = 0, a = 0;
	size_t i;

	ab_result_init(&ab, 2, 2);
	for (i = 0; i < 4; i++) {
		ab.base_launches[i] = ab.adv_launches[i] = 10;
		ab.base_ns[i] = 1000;
		ab.adv_ns[i] = 800;
	}
	CHECK(ab_launches_differ(&ab, 2, &b, &a) == -1);
	/* kernel 1, round 1: 10 launches against 4 */
	ab.adv_launches[3] = 4;
	ab.adv_ns[3] = 320;
	CHECK(ab_launches_differ(&ab, 2, &b, &a) == 1);
	CHECK_INT((int)b, 10);
	CHECK_INT((int)a, 4);
	ab_per_launch(&ab, 2);
	CHECK_NEAR(ab.base_ns[3], 100, 1e-12);
	CHECK_NEAR(ab.adv_ns[3], 80, 1e-12);   /* 1.25x a launch, not 3.1x */
	CHECK_NEAR(ab.adv_ns[0], 80, 1e-12);
	/* a kernel one side did not time is no difference */
	ab.adv_launches[3] = 0;
	CHECK(ab_launches_differ(&ab, 2, &b, &a) == -1);
	/* truncation keeps the launches with the times */
	ab.base_launches[2] = 7;
	ab_result_truncate(&ab, 2, 1);
	CHECK_INT((int)ab.base_launches[1], 7);
	ab_result_release(&ab);
}

int main(void)
{
	test_clearly_slower();
	test_launches_differ();
	test_abba();
	test_kept();
	test_within_noise();
	test_slower();
	test_output_changed();
	test_one_round();
	test_unmeasured();
	test_median_and_program();
	test_verdict_numbers();
	test_rank_verdicts();
	return check_done();
}
