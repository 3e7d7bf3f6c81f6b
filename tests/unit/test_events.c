#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/events.h"
#include "tests/unit/check.h"

/* events.jsonl as the injection library writes it (docs/injection.md), with
 * the torn last line a crashed program leaves. */
static const char events[] =
	"{\"ev\":\"start\",\"pid\":1,\"substitute\":true,\"metrics\":true,\"timing\":true,\"monitor\":false}\n"
	"{\"ev\":\"module\",\"api\":\"cuLibraryLoadData\",\"id\":\"abf65e38ca1dcd3e\",\"has_ptx\":true,"
	"\"origin\":\"cuLibraryLoadData#0\",\"functions\":[\"k1\",\"k2\"],\"substituted\":true}\n"
	"{\"ev\":\"module\",\"api\":\"cuModuleLoadData\",\"id\":\"0000111122223333\",\"has_ptx\":true,"
	"\"substituted\":false,\"substitute_error\":\"a PTX JIT compilation failed\"}\n"
	"{\"ev\":\"alloc\",\"seq\":0,\"bytes\":4096,\"ptr\":1000}\n"
	"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k1\",\"module\":\"abf65e38ca1dcd3e\",\"grid\":[4,1,1],"
	"\"block\":[256,1,1],\"dynamic_shared\":1024,\"stream\":0,\"correlation\":7,"
	"\"args\":[{\"param\":0,\"alloc\":0,\"offset\":0,\"alloc_bytes\":4096}]}\n"
	"{\"ev\":\"launch\",\"seq\":1,\"kernel\":\"k1\",\"module\":\"abf65e38ca1dcd3e\",\"grid\":[8,1,1],"
	"\"block\":[128,1,1],\"dynamic_shared\":0,\"stream\":0,\"correlation\":8,\"args\":[]}\n"
	"{\"ev\":\"metrics\",\"seq\":0,\"kernel\":\"k1\",\"values\":{\"l1_hits\":10.0,\"l1_sectors\":40.0}}\n"
	"{\"ev\":\"metrics\",\"seq\":1,\"kernel\":\"k1\",\"values\":{\"l1_hits\":5.0,\"l1_sectors\":40.0}}\n"
	"{\"ev\":\"kernel_time\",\"kernel\":\"k1\",\"start\":100,\"end\":350,\"correlation\":7,"
	"\"static_shared\":512,\"dynamic_shared\":1024,\"registers\":32}\n"
	"{\"ev\":\"kernel_time\",\"kernel\":\"k1\",\"start\":400,\"end\":450,\"correlation\":8,"
	"\"static_shared\":512,\"dynamic_shared\":0,\"registers\":32}\n"
	"{\"ev\":\"counters\",\"seq\":0,\"kernel\":\"k1\",\"module\":\"abf65e38ca1dcd3e\",\"values\":[1,2,3]}\n"
	"{\"ev\":\"counters\",\"seq\":1,\"kernel\":\"k1\",\"module\":\"abf65e38ca1dcd3e\",\"values\":[10,20,30,40]}\n"
	"{\"ev\":\"error\",\"what\":\"metric 'x' does not exist on this GPU (unknown): it is left out\"}\n"
	"{\"ev\":\"launch\",\"seq\":2,\"kernel\":\"k2\",\"gri";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* Two CUDA processes of one run (a wrapper's children): the second wrote
 * events.<pid>.jsonl; the kernels merge, the seq numbers are each its own. */
static void test_several_processes(void)
{
	char dir[] = "/tmp/ca-test-events-dir-XXXXXX", path[300], cmd[320];
	struct run_events ev;
	struct event_kernel *k;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	write_file(path,
		"{\"ev\":\"start\",\"pid\":100}\n"
		"{\"ev\":\"rank\",\"rank\":1}\n"
		"{\"ev\":\"alloc\",\"seq\":0,\"bytes\":4096,\"ptr\":1000}\n"
		"{\"ev\":\"alloc\",\"seq\":1,\"bytes\":64,\"ptr\":9000}\n"
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k1\",\"grid\":[4,1,1],\"block\":[256,1,1]}\n"
		"{\"ev\":\"kernel_time\",\"kernel\":\"k1\",\"start\":100,\"end\":350}\n"
		"{\"ev\":\"cost\",\"injected_seconds\":2.5,\"seconds\":{\"module_jit\":0.75,"
		"\"replays\":0.25,\"later\":3}}\n"
		"{\"ev\":\"exit\",\"launches\":1}\n");
	snprintf(path, sizeof(path), "%s/events.20.jsonl", dir);
	write_file(path,
		"{\"ev\":\"start\",\"pid\":20}\n"
		"{\"ev\":\"rank\",\"rank\":0}\n"
		"{\"ev\":\"rank\",\"rank\":1}\n"
		"{\"ev\":\"alloc\",\"seq\":0,\"bytes\":8192,\"ptr\":2000}\n"
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k1\",\"grid\":[8,1,1],\"block\":[128,1,1]}\n"
		"{\"ev\":\"launch\",\"seq\":1,\"kernel\":\"k3\",\"grid\":[1,1,1],\"block\":[32,1,1]}\n"
		"{\"ev\":\"kernel_time\",\"kernel\":\"k1\",\"start\":400,\"end\":450}\n"
		"{\"ev\":\"cost\",\"injected_seconds\":1.5,\"seconds\":{\"module_jit\":0.5,"
		"\"replays\":-4}}\n"
		"{\"ev\":\"exit\",\"launches\":2}\n");
	/* not a process's file: left alone */
	snprintf(path, sizeof(path), "%s/events.jsonl.bak", dir);
	write_file(path, "{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k9\"}\n");

	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	run_events_init(&ev);
	CHECK_INT(run_events_load(&ev, path), 0);
	CHECK(ev.saw_start);
	CHECK(ev.saw_exit);
	CHECK_INT(ev.launches, 3);
	CHECK_INT(ev.nr_kernels, 2);
	k = run_events_kernel(&ev, "k1");
	CHECK_INT(k->launches, 2);
	CHECK_INT(k->grid[0], 4);          /* events.jsonl first */
	CHECK_INT(k->gpu_time_ns, 300);
	CHECK_INT(k->timed_launches, 2);
	CHECK_INT(run_events_kernel(&ev, "k3")->launches, 1);
	/* the job's ranks, each once (a rank event repeated counts once) */
	CHECK_INT(ev.nr_ranks, 2);
	CHECK(ev.nr_ranks == 2 && ev.ranks[0] == 1 && ev.ranks[1] == 0);
	/* each process numbers its allocations from 0: one entry a seq, the
	 * largest size (an MPI job's capture listed allocation 0 twice) */
	CHECK_INT(json_array_size(ev.allocations), 2);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(ev.allocations, 0), "seq")), 0);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(ev.allocations, 0), "bytes")), 8192);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(ev.allocations, 1), "seq")), 1);
	/* each process's cost summed; a negative time or an unknown name left out */
	CHECK(ev.has_cost);
	CHECK(ev.injected_seconds == 4.0);
	CHECK(ev.cost_seconds[RUN_COST_MODULE_JIT] == 1.25);
	CHECK(ev.cost_seconds[RUN_COST_REPLAYS] == 0.25);
	CHECK(ev.cost_seconds[RUN_COST_COUNTER_SETUP] == 0);
	run_events_release(&ev);

	/* a process that died (start, no exit) makes the run unclean */
	snprintf(path, sizeof(path), "%s/events.7.jsonl", dir);
	write_file(path, "{\"ev\":\"start\",\"pid\":7}\n");
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	run_events_init(&ev);
	CHECK_INT(run_events_load(&ev, path), 0);
	CHECK(ev.saw_start);
	CHECK(!ev.saw_exit);
	run_events_release(&ev);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* A job of two ranks on two GPUs: each rank's processes read apart as well
 * (per-rank hit_i and timing, issue 29); a process naming no rank is in
 * the merged events alone. */
static void test_rank_events(void)
{
	char dir[] = "/tmp/ca-test-events-ranks-XXXXXX", path[300], cmd[320];
	struct run_events ev, *r0, *r1;
	double sum = 0, samples = 0;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	write_file(path,
		"{\"ev\":\"start\",\"pid\":10}\n"
		"{\"ev\":\"rank\",\"rank\":1}\n"
		"{\"ev\":\"device\",\"ordinal\":1,\"pci_bus_id\":\"0000:2a:00.0\"}\n"
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k1\"}\n"
		"{\"ev\":\"metrics\",\"seq\":0,\"kernel\":\"k1\",\"variant\":\"0\",\"ordinal\":0,\"values\":{\"l1_hits\":30}}\n"
		"{\"ev\":\"exit\",\"launches\":1}\n");
	snprintf(path, sizeof(path), "%s/events.11.jsonl", dir);
	write_file(path,
		"{\"ev\":\"start\",\"pid\":11}\n"
		"{\"ev\":\"rank\",\"rank\":0}\n"
		"{\"ev\":\"device\",\"ordinal\":0,\"pci_bus_id\":\"0000:1b:00.0\"}\n"
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k1\"}\n"
		"{\"ev\":\"metrics\",\"seq\":0,\"kernel\":\"k1\",\"variant\":\"0\",\"ordinal\":0,\"values\":{\"l1_hits\":10}}\n"
		"{\"ev\":\"exit\",\"launches\":1}\n");
	/* a second process of rank 1 (a wrapper's child) */
	snprintf(path, sizeof(path), "%s/events.12.jsonl", dir);
	write_file(path,
		"{\"ev\":\"start\",\"pid\":12}\n"
		"{\"ev\":\"rank\",\"rank\":1}\n"
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k1\"}\n"
		"{\"ev\":\"exit\",\"launches\":1}\n");
	/* a helper process outside the job's ranks */
	snprintf(path, sizeof(path), "%s/events.13.jsonl", dir);
	write_file(path,
		"{\"ev\":\"start\",\"pid\":13}\n"
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k2\"}\n"
		"{\"ev\":\"exit\",\"launches\":1}\n");

	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	run_events_init(&ev);
	CHECK_INT(run_events_load(&ev, path), 0);
	CHECK(ev.saw_exit);
	CHECK_INT(run_events_kernel(&ev, "k1")->launches, 3);
	CHECK(event_kernel_variant(run_events_kernel(&ev, "k1"), "0", "l1_hits", &sum, &samples));
	CHECK_NEAR(sum, 40, 1e-9);
	CHECK_NEAR(samples, 2, 1e-9);
	CHECK(!event_kernel_variant(run_events_kernel(&ev, "k1"), "1", "l1_hits", &sum, &samples));
	CHECK_STR(ev.gpu, "0000:2a:00.0");      /* events.jsonl first */
	/* each rank apart, in the order the ranks were read */
	CHECK_INT(ev.nr_rank_events, 2);
	CHECK(ev.nr_rank_events == 2 && ev.rank_events[0].rank == 1 && ev.rank_events[1].rank == 0);
	r0 = run_events_of_rank(&ev, 0);
	r1 = run_events_of_rank(&ev, 1);
	CHECK(r0 && r1 && !run_events_of_rank(&ev, 2));
	if (r0 && r1) {
		CHECK_STR(r0->gpu, "0000:1b:00.0");
		CHECK_STR(r1->gpu, "0000:2a:00.0");
		CHECK_INT(run_events_kernel(r0, "k1")->launches, 1);
		CHECK_INT(run_events_kernel(r1, "k1")->launches, 2);
		CHECK(event_kernel_variant(run_events_kernel(r0, "k1"), "0", "l1_hits", &sum, &samples));
		CHECK_NEAR(sum, 10, 1e-9);
		CHECK_NEAR(samples, 1, 1e-9);
		CHECK(event_kernel_variant(run_events_kernel(r1, "k1"), "0", "l1_hits", &sum, &samples));
		CHECK_NEAR(sum, 30, 1e-9);
		/* the helper's kernel is in no rank's events */
		CHECK_INT(r0->nr_kernels + r1->nr_kernels, 2);
		CHECK_INT(r0->nr_rank_events + r1->nr_rank_events, 0);
	}
	CHECK_INT(run_events_kernel(&ev, "k2")->launches, 1);
	/* both ranks measured variant 0 at their launch 0: two samples, each
	 * its own process's (issue 35: one replaced the other) */
	{
		struct event_hits_at *at;
		size_t n = event_kernel_variant_hits_at(run_events_kernel(&ev, "k1"), "0", &at), i;
		double by_rank[2] = { -1, -1 };

		CHECK_INT(n, 2);
		for (i = 0; i < n; i++) {
			CHECK_INT(at[i].ordinal, 0);
			if (at[i].process == 0 || at[i].process == 1)
				by_rank[at[i].process] = at[i].l1_hits;
		}
		CHECK_NEAR(by_rank[0], 10, 1e-9);
		CHECK_NEAR(by_rank[1], 30, 1e-9);
		free(at);
	}
	/* a process's launches: the fewest of the ranks' (rank 0 launched k1
	 * once, rank 1 twice); a kernel no rank launched, all of the run's */
	CHECK_INT(run_events_launches_per_process(&ev, "k1"), 1);
	CHECK_INT(run_events_launches_per_process(&ev, "k2"), 1);
	CHECK_INT(run_events_launches_per_process(&ev, "k9"), 0);
	run_events_release(&ev);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* Which allocations a kernel's pointer arguments pointed into: a parameter
 * and allocation once a launch (two pointers of one struct parameter into
 * one buffer count once), summed over launches, other kernels apart. */
static void test_allocs_used(void)
{
	char path[] = "/tmp/ca-test-events-allocs-XXXXXX";
	int fd = mkstemp(path);
	struct run_events ev;
	json_t *u, *want;
	static const char text[] =
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k\",\"args\":[{\"param\":0,\"alloc\":0,\"at\":0},"
		"{\"param\":0,\"alloc\":0,\"at\":8},{\"param\":1,\"alloc\":1}]}\n"
		"{\"ev\":\"launch\",\"seq\":1,\"kernel\":\"j\",\"args\":[{\"param\":0,\"alloc\":1}]}\n"
		"{\"ev\":\"launch\",\"seq\":2,\"kernel\":\"k\",\"args\":[{\"param\":0,\"alloc\":0},"
		"{\"param\":1,\"alloc\":2}]}\n";

	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1)) {
		perror("temporary file");
		exit(1);
	}
	close(fd);
	run_events_init(&ev);
	CHECK_INT(run_events_load(&ev, path), 0);
	u = run_events_allocs_used(&ev, "k");
	want = json_pack("[{s:i, s:i, s:i}, {s:i, s:i, s:i}, {s:i, s:i, s:i}]",
			 "param", 0, "alloc", 0, "launches", 2, "param", 1, "alloc", 1, "launches", 1,
			 "param", 1, "alloc", 2, "launches", 1);
	CHECK(json_equal(u, want));
	json_decref(want);
	json_decref(u);
	u = run_events_allocs_used(&ev, "none");
	CHECK_INT(json_array_size(u), 0);
	json_decref(u);
	run_events_release(&ev);
	unlink(path);
}

/* Launch plans: variant counters apart from the program's, versions'
 * per-launch times joined through seq and correlation, replays. */
static void test_launch_plan_events(void)
{
	char path[] = "/tmp/ca-test-events-plan-XXXXXX";
	int fd = mkstemp(path);
	struct run_events ev;
	struct event_kernel *k;
	json_t *none, *base, *adv;
	static const char text[] =
		"{\"ev\":\"start\",\"pid\":1}\n"
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k\",\"correlation\":10}\n"
		"{\"ev\":\"metrics\",\"seq\":0,\"kernel\":\"k\",\"variant\":\"none\",\"ordinal\":0,\"values\":{\"l1_hits\":0,\"l1_sectors\":50}}\n"
		"{\"ev\":\"metrics\",\"seq\":0,\"kernel\":\"k\",\"variant\":\"0\",\"ordinal\":0,\"values\":{\"l1_hits\":7,\"l1_sectors\":50}}\n"
		"{\"ev\":\"replay\",\"kernel\":\"k\",\"seq\":0,\"ordinal\":0,\"variants\":2,\"saved_bytes\":4096,\"save_ms\":0.1,\"restore_ms\":0.2,\"total_ms\":3.0}\n"
		"{\"ev\":\"version\",\"seq\":0,\"kernel\":\"k\",\"ordinal\":0,\"version\":\"base\"}\n"
		"{\"ev\":\"launch\",\"seq\":1,\"kernel\":\"k\",\"correlation\":11}\n"
		"{\"ev\":\"metrics\",\"seq\":1,\"kernel\":\"k\",\"variant\":\"none\",\"ordinal\":1,\"values\":{\"l1_hits\":1,\"l1_sectors\":50}}\n"
		"{\"ev\":\"replay_refused\",\"kernel\":\"k\",\"seq\":1,\"ordinal\":1,\"reason\":\"too big\"}\n"
		"{\"ev\":\"version\",\"seq\":1,\"kernel\":\"k\",\"ordinal\":1,\"version\":\"advice\"}\n"
		/* replays of launch 0 (times from CUDA events), one of launch 1
		 * without records of its own, and one of a library too old to
		 * name the launch */
		"{\"ev\":\"replay_time\",\"kernel\":\"k\",\"seq\":0,\"ordinal\":0,\"round\":0,\"version\":\"base\",\"ns\":900.0}\n"
		"{\"ev\":\"replay_time\",\"kernel\":\"k\",\"seq\":0,\"ordinal\":0,\"round\":0,\"version\":\"advice\",\"ns\":800.0}\n"
		"{\"ev\":\"replay_time\",\"kernel\":\"k\",\"seq\":1,\"ordinal\":1,\"round\":0,\"version\":\"advice\",\"ns\":700.0}\n"
		"{\"ev\":\"replay_time\",\"kernel\":\"k\",\"ordinal\":0,\"round\":1,\"version\":\"base\",\"ns\":650.0}\n"
		/* CUPTI gives the replays the correlation of the launch they ran
		 * in; the program's own record is the last to start (records
		 * arrive in any order) */
		"{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":100,\"end\":300,\"correlation\":10}\n"
		"{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":70,\"end\":100,\"correlation\":10}\n"
		"{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":20,\"end\":60,\"correlation\":10}\n"
		"{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":400,\"end\":550,\"correlation\":11}\n"
		/* a launch no event names (not the program's, as far as we know) */
		"{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":600,\"end\":1600,\"correlation\":12}\n"
		"{\"ev\":\"exit\",\"launches\":2}\n";

	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1)) {
		perror("temporary file");
		check_failed_++;
		return;
	}
	close(fd);
	run_events_init(&ev);
	CHECK_INT(run_events_load(&ev, path), 0);
	k = run_events_kernel(&ev, "k");
	/* variant counters do not leak into the program's own */
	CHECK(k->metrics == NULL);
	CHECK_INT(k->metric_launches, 0);
	none = json_object_get(k->variants, "none");
	CHECK_NEAR(json_number_value(json_object_get(none, "l1_hits")), 1.0, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(none, "l1_sectors")), 100.0, 1e-9);
	CHECK_INT(json_integer_value(json_object_get(none, "samples")), 2);
	CHECK_NEAR(json_number_value(json_object_get(json_object_get(k->variants, "0"), "l1_hits")), 7.0, 1e-9);
	/* each sample's hits kept apart, by ordinal (of the run's first and only
	 * process, which named no rank) */
	{
		struct event_hits_at *at;
		size_t n = event_kernel_variant_hits_at(k, "none", &at), i;

		CHECK_INT(n, 2);
		for (i = 0; i < n; i++) {
			CHECK_INT(at[i].process, -1);
			CHECK_NEAR(at[i].l1_hits, at[i].ordinal == 0 ? 0.0 : 1.0, 1e-9);
		}
		free(at);
		CHECK_INT(event_kernel_variant_hits_at(k, "0", &at), 1);
		free(at);
	}
	CHECK_INT(json_array_size(k->replays), 1);
	CHECK_STR(json_string_value(json_array_get(k->replay_refused, 0)), "too big");
	/* correlation 10 ran "base", 11 ran "advice" */
	base = json_object_get(k->version_ns, "base");
	adv = json_object_get(k->version_ns, "advice");
	CHECK_INT(json_array_size(base), 1);
	CHECK_INT(json_integer_value(json_array_get(base, 0)), 200);
	CHECK_INT(json_integer_value(json_array_get(adv, 0)), 150);
	/* replays timed by their own records, in the order of their events;
	 * the event's time where no record matches */
	base = json_object_get(k->replay_ns, "base");
	adv = json_object_get(k->replay_ns, "advice");
	CHECK_INT(json_array_size(base), 2);
	CHECK_INT(json_integer_value(json_array_get(base, 0)), 40);
	CHECK_INT(json_integer_value(json_array_get(base, 1)), 650);
	CHECK_INT(json_array_size(adv), 2);
	CHECK_INT(json_integer_value(json_array_get(adv, 0)), 30);
	CHECK_INT(json_integer_value(json_array_get(adv, 1)), 700);
	/* the same through the accessor the profile uses */
	{
		size_t n;
		double *t = event_kernel_times(k, EVENT_REPLAY_NS, "base", &n);

		CHECK_INT(n, 2);
		CHECK_NEAR(t[0], 40, 0);
		CHECK_NEAR(t[1], 650, 0);
		free(t);
		t = event_kernel_times(k, EVENT_VERSION_NS, "advice", &n);
		CHECK_INT(n, 1);
		CHECK_NEAR(t[0], 150, 0);
		free(t);
		t = event_kernel_times(k, EVENT_VERSION_NS, "nothing", &n);
		CHECK_INT(n, 0);
		free(t);
	}
	CHECK_INT(k->gpu_time_ns, 1420);
	CHECK_INT(k->timed_launches, 5);
	/* the program's own launches alone: the replays are left out */
	CHECK_INT(k->program_gpu_time_ns, 350);
	CHECK_INT(k->program_timed_launches, 2);
	run_events_release(&ev);
	unlink(path);
}

/* The carve-out (issue 18): what the program set per kernel, and the
 * settings a launch plan chose joined to the launches' times. */
static void test_carveout_events(void)
{
	char path[] = "/tmp/ca-test-events-carveout-XXXXXX";
	int fd = mkstemp(path);
	struct run_events ev;
	struct event_kernel *k;
	json_t *prog, *def, *attrs;
	static const char text[] =
		"{\"ev\":\"start\",\"pid\":1}\n"
		"{\"ev\":\"attribute\",\"kernel\":\"k\",\"attribute\":\"preferred_shared_memory_carveout\",\"value\":50,\"api\":\"cuKernelSetAttribute\"}\n"
		"{\"ev\":\"attribute\",\"kernel\":\"k\",\"attribute\":\"preferred_shared_memory_carveout\",\"value\":100,\"api\":\"cuKernelSetAttribute\"}\n"
		"{\"ev\":\"attribute\",\"kernel\":\"k\",\"attribute\":\"max_dynamic_shared_size_bytes\",\"value\":65536,\"api\":\"cuFuncSetAttribute\"}\n"
		"{\"ev\":\"attribute\",\"kernel\":null,\"attribute\":\"cache_config\",\"value\":\"prefer_l1\",\"api\":\"cuCtxSetCacheConfig\"}\n"
		"{\"ev\":\"attribute\",\"kernel\":\"k2\",\"attribute\":\"cache_config\",\"value\":\"prefer_shared\"}\n"
		"{\"ev\":\"launch\",\"seq\":0,\"kernel\":\"k\",\"correlation\":20}\n"
		"{\"ev\":\"carveout\",\"seq\":0,\"kernel\":\"k\",\"ordinal\":0,\"setting\":\"program\",\"value\":100}\n"
		"{\"ev\":\"launch\",\"seq\":1,\"kernel\":\"k\",\"correlation\":21}\n"
		"{\"ev\":\"carveout\",\"seq\":1,\"kernel\":\"k\",\"ordinal\":1,\"setting\":\"default\",\"value\":-1}\n"
		"{\"ev\":\"launch\",\"seq\":2,\"kernel\":\"k\",\"correlation\":22}\n"
		"{\"ev\":\"carveout_replay_time\",\"kernel\":\"k\",\"ordinal\":2,\"round\":0,\"setting\":\"default\",\"value\":-1,\"ns\":700.0}\n"
		"{\"ev\":\"carveout_replay_time\",\"kernel\":\"k\",\"ordinal\":2,\"round\":0,\"setting\":\"program\",\"value\":100,\"ns\":900.0}\n"
		"{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":100,\"end\":400,\"correlation\":20}\n"
		"{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":500,\"end\":700,\"correlation\":21}\n"
		"{\"ev\":\"kernel_time\",\"kernel\":\"k\",\"start\":800,\"end\":900,\"correlation\":22}\n"
		"{\"ev\":\"exit\",\"launches\":3}\n";

	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1)) {
		perror("temporary file");
		check_failed_++;
		return;
	}
	close(fd);
	run_events_init(&ev);
	CHECK_INT(run_events_load(&ev, path), 0);
	k = run_events_kernel(&ev, "k");
	/* the last value set wins */
	attrs = json_object_get(ev.attributes, "k");
	CHECK_INT(json_integer_value(json_object_get(attrs, "preferred_shared_memory_carveout")), 100);
	CHECK_INT(json_integer_value(json_object_get(attrs, "max_dynamic_shared_size_bytes")), 65536);
	{
		long long v = -7;

		CHECK(run_events_attribute_int(&ev, "k", "preferred_shared_memory_carveout", &v));
		CHECK_INT(v, 100);
		/* a name is no number; a kernel or attribute never set is none */
		CHECK(!run_events_attribute_int(&ev, "k2", "cache_config", &v));
		CHECK(!run_events_attribute_int(&ev, "k9", "preferred_shared_memory_carveout", &v));
		CHECK(!run_events_attribute_int(&ev, "k2", "preferred_shared_memory_carveout", &v));
		CHECK_INT(v, 100);
	}
	CHECK_STR(json_string_value(json_object_get(json_object_get(ev.attributes, "k2"),
						    "cache_config")), "prefer_shared");
	CHECK_STR(json_string_value(json_object_get(json_object_get(ev.attributes, ""),
						    "cache_config")), "prefer_l1");
	/* a kernel that was only given attributes was not launched: no entry */
	CHECK_INT(ev.nr_kernels, 1);
	/* correlation 20 ran the program's setting, 21 the default, 22 neither */
	prog = json_object_get(k->carveout_ns, "program");
	def = json_object_get(k->carveout_ns, "default");
	CHECK_INT(json_array_size(prog), 1);
	CHECK_INT(json_integer_value(json_array_get(prog, 0)), 300);
	CHECK_INT(json_array_size(def), 1);
	CHECK_INT(json_integer_value(json_array_get(def, 0)), 200);
	CHECK(k->version_ns == NULL);
	{
		size_t n;
		double *t = event_kernel_times(k, EVENT_CARVEOUT_REPLAY_NS, "program", &n);

		CHECK_INT(n, 1);
		CHECK_NEAR(t[0], 900, 0);
		free(t);
		t = event_kernel_times(k, EVENT_CARVEOUT_NS, "default", &n);
		CHECK_INT(n, 1);
		CHECK_NEAR(t[0], 200, 0);
		free(t);
	}
	CHECK_INT(json_integer_value(json_array_get(json_object_get(k->carveout_replay_ns, "default"), 0)), 700);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(k->carveout_replay_ns, "program"), 0)), 900);
	CHECK_INT(k->gpu_time_ns, 600);
	run_events_release(&ev);
	unlink(path);
}

int main(void)
{
	test_launch_plan_events();
	test_carveout_events();
	test_rank_events();
	test_allocs_used();
	char path[] = "/tmp/ca-test-events-XXXXXX";
	int fd = mkstemp(path);
	struct run_events ev;
	struct event_kernel *k;

	if (fd < 0 || write(fd, events, sizeof(events) - 1) != (ssize_t)(sizeof(events) - 1)) {
		perror("temporary file");
		return 1;
	}
	close(fd);
	run_events_init(&ev);
	CHECK_INT(run_events_load(&ev, path), 0);
	CHECK(ev.saw_start);
	CHECK(!ev.saw_exit);
	CHECK_INT(ev.nr_modules, 2);
	CHECK(ev.modules[0].substituted);
	CHECK(!ev.modules[1].substituted);
	CHECK_STR(ev.modules[1].substitute_error, "a PTX JIT compilation failed");
	/* the torn launch of k2 is ignored */
	CHECK_INT(ev.launches, 2);
	CHECK_INT(ev.nr_kernels, 1);
	k = &ev.kernels[0];
	CHECK_STR(k->name, "k1");
	CHECK_STR(k->module, "abf65e38ca1dcd3e");
	CHECK_INT(k->launches, 2);
	/* the first launch's configuration */
	CHECK_INT(k->grid[0], 4);
	CHECK_INT(k->block[0], 256);
	CHECK_INT(k->dynamic_shared, 1024);
	/* counters and times summed over launches */
	CHECK_NEAR(json_number_value(json_object_get(k->metrics, "l1_hits")), 15.0, 1e-9);
	CHECK_NEAR(json_number_value(json_object_get(k->metrics, "l1_sectors")), 80.0, 1e-9);
	CHECK_INT(k->metric_launches, 2);
	CHECK_INT(k->gpu_time_ns, 300);
	CHECK_INT(k->timed_launches, 2);
	CHECK_INT(k->registers, 32);
	CHECK_INT(k->nr_counters, 4);
	CHECK_INT(k->counters[0], 11);
	CHECK_INT(k->counters[2], 33);
	CHECK_INT(k->counters[3], 40);
	CHECK_INT(json_array_size(ev.errors), 1);
	CHECK_INT(json_array_size(ev.allocations), 1);
	CHECK_INT(json_array_size(ev.launch_sequence), 2);
	{
		json_t *u = run_events_allocs_used(&ev, "k1"), *want;

		want = json_pack("[{s:i, s:i, s:i}]", "param", 0, "alloc", 0, "launches", 1);
		CHECK(json_equal(u, want));
		json_decref(want);
		json_decref(u);
	}
	run_events_release(&ev);

	/* a run that never initialised CUDA leaves no file: empty, not an error */
	run_events_init(&ev);
	CHECK_INT(run_events_load(&ev, "/tmp/ca-test-events-does-not-exist"), 0);
	CHECK_INT(ev.launches, 0);
	CHECK(!ev.saw_start);
	run_events_release(&ev);
	unlink(path);
	test_several_processes();
	return check_done();
}
