#include "base/error.h"
#include "base/xalloc.h"
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

	/* a metric list goes with the counters only */
	req.metric_list = "dram__bytes_read.sum";
	env = run_request_env(&req);
	CHECK(!has(env, "CACHEADVISE_METRIC_LIST=dram__bytes_read.sum"));
	run_request_env_free(env);
	req.metrics = 1;
	env = run_request_env(&req);
	CHECK_INT(count(env), 6);
	CHECK(has(env, "CACHEADVISE_METRIC_LIST=dram__bytes_read.sum"));
	run_request_env_free(env);
}

/* A/B pairs alternate baseline and advice; an advice run that prints other
 * output is rejected; a failing baseline is an error. */
struct fake {
	unsigned calls;
	char order[16];
	int advice_differs, baseline_fails, file_varies;
};

static int fake_run(void *data, const char *label, const struct run_request *req,
		    struct run_events *ev, struct run_result *res, struct run_output *out)
{
	struct fake *f = data;
	int adv = req->l2_windows != NULL;

	(void)label;
	(void)ev;
	f->order[f->calls++ % 15] = adv ? 'a' : 'b';
	memset(res, 0, sizeof(*res));
	res->status = !adv && f->baseline_fails ? RUN_FAILED : RUN_OK;
	res->wall_seconds = adv ? 1.0 : 2.0;
	/* a timing that varies from run to run, and a result */
	out->out = xasprintf("Kernel : 0.0%u\nresult %s\n", f->calls,
			     adv && f->advice_differs ? "other" : "same");
	out->err = xstrdup("");
	if (f->file_varies)
		run_output_add_file(out, "grid.bin", 1, 8, adv || f->calls % 4 == 1 ? "g1" : "g2");
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
	struct ab_pairs pp = { .baseline = &base, .advice = &adv, .rounds = 3, .name = "t",
			       .run = fake_run, .failed = fake_failed, .data = &f };
	struct ab_result ab;
	struct output_check_options strict;

	CHECK_INT(ab_pairs_run(&pp, &ab), 0);
	CHECK_STR(f.order, "bababa");
	CHECK_INT(ab.outputs_equal, 1);
	CHECK_STR(json_string_value(json_object_get(ab.output, "status")), "identical");
	CHECK_INT(json_integer_value(json_object_get(ab.output, "volatile_lines")), 1);
	CHECK_NEAR(ab.base_wall[2], 2.0, 0);
	CHECK_NEAR(ab.adv_wall[2], 1.0, 0);
	ab_result_release(&ab);

	memset(&f, 0, sizeof(f));
	f.advice_differs = 1;
	CHECK_INT(ab_pairs_run(&pp, &ab), 0);
	CHECK_INT(ab.outputs_equal, 0);
	CHECK(!strncmp(ab.reject_reason, "the program's output changed with the advice applied: "
		       "stdout line 2 'result same' became 'result other'", 200));
	ab_result_release(&ab);

	/* a file that differs between baselines: left out (the lines are
	 * still checked), kept on timing unless strict */
	memset(&f, 0, sizeof(f));
	f.file_varies = 1;
	CHECK_INT(ab_pairs_run(&pp, &ab), 0);
	CHECK_INT(ab.outputs_equal, 1);
	CHECK_INT(ab.baseline_stable, 0);
	CHECK_STR(json_string_value(json_object_get(ab.output, "status")), "identical");
	CHECK_INT(json_integer_value(json_object_get(ab.output, "left_out")), 1);
	ab_result_release(&ab);
	memset(&f, 0, sizeof(f));
	f.file_varies = 1;
	output_check_options_init(&strict);
	strict.strict = 1;
	pp.output_check = &strict;
	CHECK_INT(ab_pairs_run(&pp, &ab), 0);
	CHECK_INT(ab.outputs_equal, 0);
	CHECK(strstr(ab.reject_reason, "left out, as they differ between baseline runs") != NULL);
	CHECK(strstr(ab.reject_reason, "--strict-output rejects the advice") != NULL);
	ab_result_release(&ab);
	pp.output_check = NULL;

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
