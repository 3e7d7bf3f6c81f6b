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

	/* profile --gpus: the run's GPU */
	req.visible_devices = "1";
	env = run_request_env(&req);
	CHECK_INT(count(env), 7);
	CHECK(has(env, "CUDA_VISIBLE_DEVICES=1"));
	run_request_env_free(env);
}

/*
 * run_request_run_many runs at once: each of two real programs (sh) writes
 * the GPU it was given, then waits for the other's file; run one after the
 * other, the first would wait in vain (its 60 s bound) and fail. No
 * timing is judged: only whether both saw each other.
 */
static void test_run_many(void)
{
	char dir[] = "/tmp/ca-test-run-many-XXXXXX", logs[2][300], mark[2][300], cmd[400];
	const char *script =
		"echo \"$CUDA_VISIBLE_DEVICES\" > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"; i=0; "
		"while [ ! -e \"$2\" ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 3; sleep 0.05; done";
	struct run_request reqs[2];
	struct run_spec specs[2];
	struct run_result res[2];
	char *argv[2][7];
	int i;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	for (i = 0; i < 2; i++) {
		snprintf(mark[i], sizeof(mark[i]), "%s/gpu%d", dir, i);
		snprintf(logs[i], sizeof(logs[i]), "%s/log%d", dir, i);
	}
	for (i = 0; i < 2; i++) {
		memset(&reqs[i], 0, sizeof(reqs[i]));
		reqs[i].inject_path = "/nonexistent/inject.so";
		reqs[i].events_dir = dir;
		reqs[i].visible_devices = i ? "1" : "0";
		argv[i][0] = "sh";
		argv[i][1] = "-c";
		argv[i][2] = (char *)script;
		argv[i][3] = "sh";
		argv[i][4] = mark[i];
		argv[i][5] = mark[1 - i];
		argv[i][6] = NULL;
		memset(&specs[i], 0, sizeof(specs[i]));
		specs[i].argv = argv[i];
		specs[i].log_path = logs[i];
		specs[i].timeout_seconds = 120;
	}
	CHECK_INT(run_request_run_many(reqs, specs, res, 2), 0);
	for (i = 0; i < 2; i++) {
		char got[16] = "";
		FILE *f = fopen(mark[i], "r");

		CHECK_INT(res[i].status, RUN_OK);
		CHECK(f && fgets(got, sizeof(got), f));
		CHECK_STR(got, i ? "1\n" : "0\n");
		if (f)
			fclose(f);
	}
	/* a run that cannot write its log: the error comes back with its message */
	specs[1].log_path = "/nonexistent-dir/log";
	argv[0][2] = "true";
	argv[1][2] = "true";
	CHECK_INT(run_request_run_many(reqs, specs, res, 2), CA_E_IO);
	CHECK(strstr(error_message(), "/nonexistent-dir/log") != NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* A/B pairs alternate baseline and advice; an advice run that prints other
 * output is rejected; a failing baseline is an error. */
struct fake {
	unsigned calls;
	char order[16];
	int advice_differs, baseline_fails, file_varies;
	const char *job_dir;       /* a job of two ranks: their events written here and read */
};

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A run of a two-rank job, as the injection library writes it: kernel k
 * takes 1000 ns on each rank as built; the advice makes rank 0 faster
 * (800) and rank 1 slower (1200). Read by the events reader into ev. */
static void job_events(const char *dir, int adv, struct run_events *ev)
{
	char path[300], text[600];
	int rank;

	for (rank = 0; rank < 2; rank++) {
		snprintf(path, sizeof(path), rank ? "%s/events.77.jsonl" : "%s/events.jsonl", dir);
		snprintf(text, sizeof(text),
			 "{\"ev\":\"start\",\"pid\":%d}\n{\"ev\":\"rank\",\"rank\":%d}\n"
			 "{\"ev\":\"device\",\"ordinal\":%d,\"pci_bus_id\":\"0000:%d0:00.0\"}\n"
			 "{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k\"}\n"
			 "{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":100,\"end\":%d}\n"
			 "{\"ev\":\"exit\",\"launches\":1}\n", 10 + rank, rank, rank, rank + 1,
			 100 + (adv ? (rank ? 1200 : 800) : 1000));
		write_text(path, text);
	}
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	CHECK_INT(run_events_load(ev, path), 0);
}

static int fake_run(void *data, const char *label, const struct run_request *req,
		    struct run_events *ev, struct run_result *res, struct run_output *out)
{
	struct fake *f = data;
	int adv = req->l2_windows != NULL;

	(void)label;
	if (f->job_dir)
		job_events(f->job_dir, adv, ev);
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

	/* a job of two ranks (issue 29): each rank's kernel times apart, the
	 * merged ones summed */
	{
		char dir[] = "/tmp/ca-test-ab-ranks-XXXXXX", cmd[64];
		const char *kernels[] = { "k" };

		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			exit(1);
		}
		memset(&f, 0, sizeof(f));
		f.job_dir = dir;
		pp.kernels = kernels;
		pp.nr_kernels = 1;
		CHECK_INT(ab_pairs_run(&pp, &ab), 0);
		CHECK_NEAR(ab.base_ns[0], 2000, 0);
		CHECK_NEAR(ab.adv_ns[2], 2000, 0);
		CHECK_INT(ab.nr_ranks, 2);
		if (ab.nr_ranks == 2) {
			const struct ab_rank_times *r0 = ab.ranks[0].rank == 0 ? &ab.ranks[0] : &ab.ranks[1];
			const struct ab_rank_times *r1 = r0 == &ab.ranks[0] ? &ab.ranks[1] : &ab.ranks[0];

			CHECK_INT(r0->rank, 0);
			CHECK_NEAR(r0->base_ns[1], 1000, 0);
			CHECK_NEAR(r0->adv_ns[1], 800, 0);
			CHECK_NEAR(r1->adv_ns[2], 1200, 0);
			CHECK_STR(r1->gpu, "0000:20:00.0");
		}
		/* a truncated A/B keeps each rank's first rounds */
		ab_result_truncate(&ab, 1, 2);
		CHECK_INT(ab.rounds, 2);
		CHECK_NEAR(ab.ranks[0].base_ns[1], 1000, 0);
		ab_result_release(&ab);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
		pp.kernels = NULL;
		pp.nr_kernels = 0;
	}
}

int main(void)
{
	test_env();
	test_pairs();
	test_run_many();
	return check_done();
}
