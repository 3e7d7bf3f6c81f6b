#include "base/error.h"
#include "collectors/run_request.h"
#include "tests/unit/check.h"

static int has(char **env, const char *entry)
{
	size_t i;

	for (i = 0; env[i]; i++)
		if (!strcmp(env[i], entry))
			return 1;
	return 0;
}

static size_t count(char **env)
{
	size_t n = 0;

	while (env[n])
		n++;
	return n;
}

static void test_env(void)
{
	struct run_request req = { .inject_path = "/lib/inj.so", .events_dir = "/c/runs/003.d",
				   .subst_dir = "/c/runs/003.subst", .metrics = 1 };
	char **env = run_request_env(&req);

	CHECK_INT(count(env), 4);
	CHECK(has(env, "CUDA_INJECTION64_PATH=/lib/inj.so"));
	CHECK(has(env, "CACHEADVISE_OUT=/c/runs/003.d"));
	CHECK(has(env, "CACHEADVISE_SUBST=/c/runs/003.subst"));
	CHECK(has(env, "CACHEADVISE_METRICS=1"));
	run_request_env_free(env);

	memset(&req, 0, sizeof(req));
	req.save_modules = req.timing = req.monitor = 1;
	req.l2_windows = "/w.json";
	env = run_request_env(&req);
	CHECK_INT(count(env), 4);
	CHECK(has(env, "CACHEADVISE_SAVE_MODULES=1"));
	CHECK(has(env, "CACHEADVISE_TIMING=1"));
	CHECK(has(env, "CACHEADVISE_MONITOR=1"));
	CHECK(has(env, "CACHEADVISE_L2_WINDOWS=/w.json"));
	run_request_env_free(env);
}

/* A/B pairs alternate baseline and advice; an advice run that prints other
 * output is rejected; a failing baseline is an error. */
struct fake {
	unsigned calls;
	char order[16];
	int advice_differs, baseline_fails;
};

static int fake_run(void *data, const char *label, const struct run_request *req,
		    struct run_events *ev, struct run_result *res, char sha[65])
{
	struct fake *f = data;
	int adv = req->l2_windows != NULL;

	(void)label;
	(void)ev;
	f->order[f->calls++ % 15] = adv ? 'a' : 'b';
	memset(res, 0, sizeof(*res));
	res->status = !adv && f->baseline_fails ? RUN_FAILED : RUN_OK;
	res->wall_seconds = adv ? 1.0 : 2.0;
	snprintf(sha, 65, "%s", adv && f->advice_differs ? "other" : "same");
	return 0;
}

static int fake_failed(void *data, const char *label, const struct run_result *res)
{
	(void)data;
	(void)label;
	(void)res;
	return CA_E_PROGRAM;
}

static void test_pairs(void)
{
	struct run_request base = { .timing = 1 }, adv = { .timing = 1, .l2_windows = "w" };
	struct fake f = { 0 };
	struct ab_pairs pp = { &base, &adv, 3, "t", NULL, 0, NULL, fake_run, fake_failed, &f };
	struct ab_result ab;

	CHECK_INT(ab_pairs_run(&pp, &ab), 0);
	CHECK_STR(f.order, "bababa");
	CHECK_INT(ab.outputs_equal, 1);
	CHECK_NEAR(ab.base_wall[2], 2.0, 0);
	CHECK_NEAR(ab.adv_wall[2], 1.0, 0);
	ab_result_release(&ab);

	memset(&f, 0, sizeof(f));
	f.advice_differs = 1;
	CHECK_INT(ab_pairs_run(&pp, &ab), 0);
	CHECK_INT(ab.outputs_equal, 0);
	CHECK_STR(ab.reject_reason, "the program's output changed with the advice applied");
	ab_result_release(&ab);

	memset(&f, 0, sizeof(f));
	f.baseline_fails = 1;
	CHECK_INT(ab_pairs_run(&pp, &ab), CA_E_PROGRAM);
	CHECK_INT(f.calls, 1);
	ab_result_release(&ab);
}

int main(void)
{
	test_env();
	test_pairs();
	return check_done();
}
