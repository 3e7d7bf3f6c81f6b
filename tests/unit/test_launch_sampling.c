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
#include "analysis/ptx.h"
#include "base/error.h"
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
	struct measure_variant *v = measure_pairs(4, hit, NAN, 0, &nr, &skipped);

	/* pairs with load 1: (0,1) (1,2) (1,3); the other three are additive */
	CHECK_INT(nr, 3);
	CHECK_INT(skipped, 3);
	for (i = 0; i < nr; i++)
		CHECK(v[i].mask & 2);
	CHECK_STR(v[0].label, "0,1");
	free(v);
	v = measure_pairs(4, hit, NAN, 1, &nr, &skipped);
	CHECK_INT(nr, 6);
	CHECK_INT(skipped, 0);
	CHECK_STR(v[5].label, "2,3");
	CHECK_INT(v[5].mask, 12);
	free(v);
	/* a load not measured is never assumed hitless */
	v = measure_pairs(3, unknown, NAN, 0, &nr, &skipped);
	CHECK_INT(nr, 2);
	CHECK_INT(skipped, 1);
	free(v);
	v = measure_pairs(1, hit, NAN, 0, &nr, &skipped);
	CHECK_INT(nr, 0);
	free(v);
}

/*
 * Loads beyond --max-loads allocate in every variant (lavaMD on the H200:
 * 8,367,680 hits with every measured load bypassing). A single within
 * 0.1% of those moves nothing; one 1.3% above, or one that evicts 1% of
 * them, does: only the pairs with loads 1 or 3 are measured.
 */
static void test_pairs_beside_allocating_loads(void)
{
	const double none = 8367680;
	const double hit[4] = { 8368540, 8475768, 8368336, 8284003 };
	size_t nr = 0, skipped = 0, i;
	struct measure_variant *v = measure_pairs(4, hit, none, 0, &nr, &skipped);

	CHECK(!launch_single_moves_hits(hit[0], none));
	CHECK(launch_single_moves_hits(hit[1], none));
	CHECK(launch_single_moves_hits(hit[3], none));
	CHECK(launch_single_moves_hits(1, 0));
	CHECK(!launch_single_moves_hits(0, NAN));
	CHECK_INT(nr, 5);
	CHECK_INT(skipped, 1);   /* (0, 2) */
	for (i = 0; i < nr; i++)
		CHECK(v[i].mask & 10);
	free(v);
}

/* Conditional pairs: every pair, each replayed only when one of its loads hits. */
static void test_pairs_when_hits(void)
{
	size_t nr, i, seen = 0;
	struct measure_variant *v = measure_pairs_when_hits(4, &nr);

	CHECK_INT(nr, 6);
	for (i = 0; i < nr; i++) {
		int a = v[i].when_hits[0], b = v[i].when_hits[1];
		CHECK(a >= 0 && b > a && b < 4);
		CHECK(v[i].mask == ((1ull << a) | (1ull << b)));
		seen |= (size_t)1 << (a * 4 + b);
	}
	CHECK_INT(seen, (1 << 1) | (1 << 2) | (1 << 3) | (1 << 6) | (1 << 7) | (1 << 11));
	CHECK(!strcmp(v[5].label, "2,3"));
	free(v);
	/* singles and "all" are measured always */
	v = measure_singles(3, &nr);
	for (i = 0; i < nr; i++)
		CHECK(v[i].when_hits[0] < 0 && v[i].when_hits[1] < 0);
	free(v);
}

/* A pair measured at one launch, put on the scale of singles measured at three. */
static void test_pair_at_one_launch(void)
{
	/* at the launch: pair 30, singles 20 and 15 (a 5-sector loss); 100 launches,
	 * singles scaled from three launches to 2100 and 1400 */
	CHECK_NEAR(pair_hits_at_one_launch(30, 20, 15, 2100, 1400, 100), 3000, 1e-9);
	/* additive at the launch: the singles' sum */
	CHECK_NEAR(pair_hits_at_one_launch(35, 20, 15, 2100, 1400, 100), 3500, 1e-9);
}

/* Noise resolved where it is measured: a pair whose singles hit nearly
 * nothing, measured a little below its singles at the launch, comes out
 * negative; the capture gets 0 and the value measured. */
static void test_noise(void)
{
	double noise = 0, h = pair_hits_at_one_launch(0.2, 0.3, 0.1, 10, 3.1, 100);

	CHECK_NEAR(h, -6.9, 1e-9);
	CHECK_NEAR(count_resolve_noise(h, &noise), 0, 0);
	CHECK_NEAR(noise, -6.9, 1e-9);
	CHECK_NEAR(count_resolve_noise(12.5, &noise), 12.5, 0);
	CHECK(isnan(noise));
	CHECK(isnan(count_resolve_noise(NAN, &noise)));
	CHECK(isnan(noise));
	CHECK_NEAR(count_resolve_noise(0, &noise), 0, 0);
	CHECK(isnan(noise));
}

/* Replays: stores through a parameter are saved and restored; a store to a
 * module-scope variable is harmless in modules of our own only; a store
 * through a pointer read from memory stops replays. */
static void test_replay_written(void)
{
	static const char ptx[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".global .align 8 .u64 counter;\n"
		".visible .entry k(.param .u64 a, .param .u64 b)\n{\n"
		"\t.reg .b64 %rd<4>;\n"
		"\tld.param.u64 %rd1, [b];\n"
		"\tcvta.to.global.u64 %rd2, %rd1;\n"
		"\tst.global.u32 [%rd2], 1;\n"
		"\tatom.global.add.u64 %rd3, [counter], 1;\n"
		"\tret;\n}\n"
		".visible .entry loaded(.param .u64 a)\n{\n"
		"\t.reg .b64 %rd<3>;\n"
		"\tld.param.u64 %rd1, [a];\n"
		"\tld.global.u64 %rd2, [%rd1];\n"
		"\tst.global.u32 [%rd2], 1;\n"
		"\tret;\n}\n";
	struct ptx_module *m = NULL;
	unsigned w[2] = { 9, 9 };
	size_t n = 9;
	char *why = NULL;

	if (ptx_parse("t.ptx", ptx, sizeof(ptx) - 1, &m)) {
		CHECK(0);
		error_clear();
		return;
	}
	CHECK_INT(launch_replay_written(&m->functions[0], 1, w, &n, &why), 1);
	CHECK_INT(n, 1);
	CHECK_INT(w[0], 1);
	CHECK(why == NULL);
	CHECK_INT(launch_writes_module_var(&m->functions[0]), 1);
	CHECK_INT(launch_writes_module_var(&m->functions[1]), 0);
	CHECK_INT(launch_replay_written(&m->functions[0], 0, w, &n, &why), 0);
	CHECK(why && strstr(why, "module-scope variable"));
	free(why);
	why = NULL;
	CHECK_INT(launch_replay_written(&m->functions[1], 1, w, &n, &why), 0);
	CHECK(why && strstr(why, "not derived from one parameter"));
	free(why);
	ptx_module_free(m);
}

int main(void)
{
	test_replay_written();
	test_pairs_beside_allocating_loads();
	test_pairs_when_hits();
	test_pair_at_one_launch();
	test_noise();
	test_ordinals();
	test_singles();
	test_pairs();
	return check_done();
}
