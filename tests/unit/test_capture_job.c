/*
 * The in-run capture and verification of an MPI job (issues 29 and 35), on
 * the CPU: the profile's own steps (src/profile: discovery, the in-run
 * capture, the in-run A/B) run a program that stands for
 * `mpirun -np 2 ./mpi_gather iters=12`: it writes, for each of the job's two
 * ranks, the events file the injection library writes (docs/injection.md:
 * events.jsonl for the first process, events.<pid>.jsonl for the other,
 * each with its own `rank` and `device`) for the launch plan and the
 * CACHEADVISE_RANKS it is given, and never touches a GPU.
 *
 * What the library does on a GPU is followed where it decides what comes
 * back: each process launches the kernel 12 times (its own launch ordinals
 * 0..11, whatever the job's total); at a sampled ordinal it replays the
 * sample's variants, the conditional pairs once one of their singles has
 * hit; and the range profiler is one process's at a time on a GPU: of the
 * measured processes that share one, the first takes it and the others get
 * CUPTI_ERROR_HARDWARE_BUSY and measure nothing (range_metrics_new fails;
 * seen on an H200, 2026-11-28). With "race", two measured processes of one
 * GPU in the first capture run both get it, as the H200's 'even' job did;
 * with "busy", every process does in every run (another program profiles).
 *
 * Hits per launch (sectors) at launch ordinal o: load 0 never hits; load a
 * alone hits H[rank][a] + o; a pair of loads the sum of its singles less
 * the rank's interaction; "all" and "none" count every default metric.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/digest.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/launcher.h"
#include "emitters/capture_layout.h"
#include "src/profile/internal.h"
#include "tests/unit/check.h"

#define KERNEL "_Z11grid_stridePKfPKiS0_Pfi"
#define LAUNCHES 12                 /* each rank's launches of the kernel */
#define NR_LOADS 4
#define BUSY "cuptiProfilerGetCounterAvailability(&avail) failed " \
	"(collectors/inject/range_metrics.c:291): CUPTI_ERROR_HARDWARE_BUSY"

static const double hits_even[NR_LOADS] = { 0, 1000, 900, 800 };
static const double hits_skew[NR_LOADS] = { 0, 300, 250, 200 };

/* ---- the job ------------------------------------------------------------- */

struct job {
	int gpus;                   /* 1: both ranks on one GPU, 2: one each */
	int skew;                   /* rank 1 reads another table (fewer hits) */
	int race;                   /* see the top */
	int busy;                   /* another program holds the profiler all along */
	const char *ptx_path;
};

static const char *gpu_name(const struct job *j, int rank)
{
	return j->gpus == 2 && rank == 1 ? "0000:00:07.0" : "0000:00:06.0";
}

static double single_hits(const struct job *j, int rank, unsigned load, unsigned ordinal)
{
	const double *h = rank == 1 && j->skew ? hits_skew : hits_even;

	return h[load] > 0 ? h[load] + ordinal : 0;
}

/* What a variant's replay counts at launch `ordinal` of `rank`. */
static double variant_hits(const struct job *j, int rank, const char *label, unsigned ordinal)
{
	unsigned a, b;

	if (!strcmp(label, "all"))
		return 2000 + ordinal;
	if (!strcmp(label, "none"))
		return 0;
	if (sscanf(label, "%u,%u", &a, &b) == 2)
		return single_hits(j, rank, a, ordinal) + single_hits(j, rank, b, ordinal) -
		       (rank == 1 && j->skew ? 20 : 100);
	return single_hits(j, rank, (unsigned)atoi(label), ordinal);
}

static void emit(FILE *f, json_t *ev)
{
	char *s = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);

	fprintf(f, "%s\n", s);
	free(s);
	json_decref(ev);
}

/* The plan's kernel, NULL when it has none for ours. */
static json_t *plan_kernel(json_t *plan)
{
	json_t *k;
	size_t i;

	json_array_foreach(json_object_get(plan, "kernels"), i, k)
		if (!strcmp(json_string_value(json_object_get(k, "name")), KERNEL))
			return k;
	return NULL;
}

/* The sample of launch `ordinal`, NULL when none. */
static json_t *sample_at(json_t *pk, unsigned ordinal)
{
	json_t *s;
	size_t i;

	json_array_foreach(json_object_get(pk, "samples"), i, s)
		if (json_integer_value(json_object_get(s, "ordinal")) == ordinal)
			return s;
	return NULL;
}

/* A variant's replay: its metrics event, as range_metrics.c writes it. */
static void emit_variant(FILE *f, const struct job *j, int rank, json_t *v, unsigned ordinal,
			 double *hits)
{
	const char *label = json_string_value(json_object_get(v, "label"));
	double h = variant_hits(j, rank, label, ordinal);
	json_t *vals;

	if (json_object_get(v, "counters"))
		vals = json_pack("{s:f}", "l1_hits", h);
	else
		vals = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "l1_requests", 4096.0,
				 "l1_sectors", 16384.0, "l1_hits", h, "l1_misses", 16384.0 - h,
				 "l2_sectors_from_l1", 16384.0 - h, "dram_bytes_read", 65536.0,
				 "duration_ns", 5000.0);
	emit(f, json_pack("{s:s, s:i, s:s, s:o, s:s, s:i}", "ev", "metrics", "seq", (int)ordinal,
			  "kernel", KERNEL, "values", vals, "variant", label, "ordinal", (int)ordinal));
	*hits += h;
}

/* The replays of one sample (launch_plan.c replay_variants). */
static void replay_sample(FILE *f, const struct job *j, int rank, json_t *pk, json_t *sample,
			  unsigned ordinal, double *hits, int *replayed)
{
	json_t *variants = json_object_get(pk, "variants"), *idx;
	size_t i, n = 0, m = 0;
	int round;

	for (round = 0; round < 2; round++)
		json_array_foreach(json_object_get(sample, "variants"), i, idx) {
			size_t vi = (size_t)json_integer_value(idx);
			json_t *v = json_array_get(variants, vi), *when = json_object_get(v, "when_hits");

			if (!!when != round)
				continue;
			if (when) {
				json_int_t a = json_integer_value(json_array_get(when, 0));
				json_int_t b = json_integer_value(json_array_get(when, 1));

				if (replayed[vi] || !((a >= 0 && hits[a] > 0) || (b >= 0 && hits[b] > 0)))
					continue;
				m++;
			}
			emit_variant(f, j, rank, v, ordinal, &hits[vi]);
			replayed[vi] = 1;
			n++;
		}
	emit(f, json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:f}", "ev", "replay",
			  "kernel", KERNEL, "seq", (int)ordinal, "ordinal", (int)ordinal,
			  "variants", (int)n, "conditional", (int)m, "saved_bytes", 4,
			  "save_ms", 0.05, "restore_ms", 0.7, "total_ms", 600.0));
}

/* The time (ns) of a version at a launch: the advice 1.25x faster. */
static double version_ns(int rank, const char *version, unsigned round)
{
	return (strcmp(version, "advice") ? 10000 : 8000) + 10 * (round % 3) + rank;
}

/* One rank's process: its events file. */
static void run_rank(const struct job *j, const char *out, json_t *plan, int rank, int first,
		     int profiler)
{
	json_t *pk = plan_kernel(plan), *versions = json_object_get(pk, "versions");
	const char *pattern = json_string_value(json_object_get(pk, "pattern"));
	json_t *rr = json_object_get(pk, "replay_rounds");
	char *path = first ? xasprintf("%s/events.jsonl", out) :
		     xasprintf("%s/events.%d.jsonl", out, (int)getpid() + rank);
	size_t nv = json_array_size(json_object_get(pk, "variants"));
	double *hits = xcalloc(nv + 1, sizeof(*hits));
	int *replayed = xcalloc(nv + 1, sizeof(*replayed));
	long long t = 1000000;
	char hex[65], id[17];
	struct strbuf ptx = STRBUF_INIT;
	FILE *f = fopen(path, "w");
	unsigned o;

	if (!f || strbuf_read_file(&ptx, j->ptx_path, 0))
		exit(3);
	digest_sha256_hex(ptx.buf, ptx.len, hex);
	memcpy(id, hex, 16);
	id[16] = 0;
	emit(f, json_pack("{s:s, s:i}", "ev", "start", "pid", (int)getpid() + rank));
	emit(f, json_pack("{s:s, s:i}", "ev", "rank", "rank", rank));
	if (getenv("CACHEADVISE_SAVE_MODULES")) {
		char *seen = xasprintf("%s/seen", out), *p = capture_layout_subst_ptx(seen, id);
		FILE *pf;

		mkdir(seen, 0777);
		pf = fopen(p, "w");
		if (!pf || fwrite(ptx.buf, 1, ptx.len, pf) != ptx.len || fclose(pf))
			exit(3);
		free(p);
		free(seen);
	}
	emit(f, json_pack("{s:s, s:s, s:s, s:b, s:s, s:[s], s:b}", "ev", "module", "api",
			  "cuModuleLoadData", "id", id, "has_ptx", 1, "origin", "mpi_gather#0",
			  "functions", KERNEL, "substituted", getenv("CACHEADVISE_SUBST") != NULL));
	emit(f, json_pack("{s:s, s:i, s:s}", "ev", "device", "ordinal", 0, "pci_bus_id",
			  gpu_name(j, rank)));
	for (o = 0; o < LAUNCHES; o++) {
		json_t *sample = sample_at(pk, o);
		int corr = 100 + (int)o;
		const char *version = NULL;
		size_t r, v;

		emit(f, json_pack("{s:s, s:i, s:s, s:s, s:[i,i,i], s:[i,i,i], s:i, s:i, s:i, s:[]}",
				  "ev", "launch", "seq", (int)o, "kernel", KERNEL, "module", id,
				  "grid", 132, 1, 1, "block", 256, 1, 1, "dynamic_shared", 0,
				  "stream", 0, "correlation", corr, "args"));
		if (o == 0 && nv && !profiler)
			emit(f, json_pack("{s:s, s:s}", "ev", "error", "what", BUSY));
		if (sample && profiler)
			replay_sample(f, j, rank, pk, sample, o, hits, replayed);
		/* verification: timed replays of one launch, then the launch's version */
		json_array_foreach(json_object_get(rr, "ordinals"), r, sample) {
			unsigned round;

			if (json_integer_value(sample) != o)
				continue;
			for (round = 0; round < json_integer_value(json_object_get(rr, "rounds")); round++)
				for (v = 0; v < json_array_size(versions); v++) {
					size_t vi = round & 1 ? json_array_size(versions) - 1 - v : v;
					const char *label = json_string_value(json_object_get(
						json_array_get(versions, vi), "label"));
					double ns = version_ns(rank, label, round);

					emit(f, json_pack("{s:s, s:s, s:i, s:i, s:i, s:s, s:f}", "ev",
							  "replay_time", "kernel", KERNEL, "seq", (int)o,
							  "ordinal", (int)o, "round", (int)round, "version",
							  label, "ns", ns + 8000));
					emit(f, json_pack("{s:s, s:s, s:I, s:I, s:i}", "ev", "kernel_time",
							  "kernel", KERNEL, "start", (json_int_t)t, "end",
							  (json_int_t)(t + (long long)ns), "correlation", corr));
					t += 100000;
				}
		}
		if (pattern && *pattern && json_array_size(versions)) {
			size_t vi = (size_t)(pattern[o % strlen(pattern)] - 'a');

			version = json_string_value(json_object_get(json_array_get(versions, vi), "label"));
			emit(f, json_pack("{s:s, s:i, s:s, s:i, s:s}", "ev", "version", "seq", (int)o,
					  "kernel", KERNEL, "ordinal", (int)o, "version", version));
		}
		emit(f, json_pack("{s:s, s:s, s:I, s:I, s:i, s:i, s:i, s:i}", "ev", "kernel_time",
				  "kernel", KERNEL, "start", (json_int_t)t, "end",
				  (json_int_t)(t + (long long)version_ns(rank, version ? version : "base", o)),
				  "correlation", corr, "static_shared", 0, "dynamic_shared", 0,
				  "registers", 32));
		t += 100000;
	}
	emit(f, json_pack("{s:s, s:i}", "ev", "exit", "launches", LAUNCHES));
	fclose(f);
	strbuf_release(&ptx);
	free(hits);
	free(replayed);
	free(path);
}

/* The job: mpirun's two ranks, as the library writes them. */
static int fake_job(const struct job *j)
{
	const char *out = getenv("CACHEADVISE_OUT"), *spec = getenv("CACHEADVISE_RANKS");
	const char *plan_path = getenv("CACHEADVISE_LAUNCH_PLAN");
	json_t *plan = plan_path && *plan_path ? json_file_load(plan_path) : NULL;
	int measured[2], holder[2] = { -1, -1 }, sharing[2] = { 0, 0 }, rank, first = 1, race = 0;
	struct rank_set set;

	if (!out || !*out)
		return 0;
	if (plan_path && *plan_path && !plan)
		return 3;
	if (launcher_ranks_parse(spec && *spec ? spec : "all", &set))
		return 3;
	mkdir(out, 0777);
	for (rank = 0; rank < 2; rank++) {
		int g = j->gpus == 2 ? rank : 0;

		measured[rank] = launcher_rank_in(&set, rank);
		if (!measured[rank])
			continue;
		sharing[g]++;
		if (holder[g] < 0)
			holder[g] = rank;
	}
	if (j->race && (sharing[0] > 1 || sharing[1] > 1) && plan_kernel(plan) &&
	    json_array_size(json_object_get(plan_kernel(plan), "samples"))) {
		char *mark = xasprintf("%s/../race-done", out);
		FILE *f;

		race = access(mark, F_OK) != 0;
		f = fopen(mark, "w");
		if (f)
			fclose(f);
		free(mark);
	}
	for (rank = 0; rank < 2; rank++) {
		int g = j->gpus == 2 ? rank : 0;

		if (!measured[rank])
			continue;   /* a rank --ranks leaves out writes nothing */
		run_rank(j, out, plan, rank, first, holder[g] == rank && !race && !j->busy);
		first = 0;
	}
	json_decref(plan);
	return 0;
}

/* ---- the profile ------------------------------------------------------- */

static struct profile_kernel *find_kernel(struct profile_ctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++)
		if (!strcmp(c->kernels[i].name, name))
			return &c->kernels[i];
	return NULL;
}

static const struct profile_rank_hits *rank_hits(const struct profile_kernel *k, int rank)
{
	size_t i;

	for (i = 0; i < k->nr_ranks; i++)
		if (k->ranks[i].rank == rank)
			return &k->ranks[i];
	return NULL;
}

/*
 * Profiles job j through discovery, the in-run capture and the in-run A/B
 * of its kernel, and checks what a correct merge of the ranks gives.
 */
static void profile_job(const char *self, const struct job *j)
{
	char tmpl[] = "/tmp/ca-capture-job-XXXXXX", *dir = mkdtemp(tmpl);
	char gpus[8], skew[8], race[8], busy[8];
	char *argv[] = { (char *)self, "fake-job", gpus, skew, race, busy, NULL };
	struct profile_options opt;
	struct profile_ctx c;
	struct profile_kernel *k;
	struct in_run_ab ab;
	json_t *measure, *variants;
	char label[16];
	int want[2] = { 1, 0 };
	unsigned a, b, r;

	fprintf(stderr, "-- the job on %d GPU(s)%s%s%s\n", j->gpus, j->skew ? ", skew" : "",
		j->race ? ", race" : "", j->busy ? ", profiler busy" : "");
	CHECK(dir != NULL);
	if (!dir)
		return;
	snprintf(gpus, sizeof(gpus), "%d", j->gpus);
	snprintf(skew, sizeof(skew), "%d", j->skew);
	snprintf(race, sizeof(race), "%d", j->race);
	snprintf(busy, sizeof(busy), "%d", j->busy);
	memset(&opt, 0, sizeof(opt));
	opt.argv = argv;
	opt.top = 1;
	opt.min_share = 1;
	opt.max_loads = 24;
	opt.timeout = 60;
	opt.repeat = 5;
	opt.model = "sector";
	opt.bypass_form = "no_allocate";
	opt.no_monitor = 1;
	memset(&c, 0, sizeof(c));
	c.opt = &opt;
	c.started = profile_now();
	device_model_init(&c.dm);
	c.program = xstrdup(self);
	c.dir = xasprintf("%s/cap", dir);
	CHECK_INT(capture_layout_create(c.dir), 0);
	profile_start_capture(&c);

	CHECK_INT(profile_discover(&c), 0);
	k = find_kernel(&c, KERNEL);
	CHECK(k && k->vk.nr_measured == NR_LOADS);
	if (!k || k->vk.nr_measured != NR_LOADS)
		goto out;
	CHECK_INT(k->disc.launches, 2 * LAUNCHES);
	/* the launch plans' ordinals count one rank's launches */
	CHECK_INT(k->launches_per_process, LAUNCHES);
	CHECK_INT(c.nr_job_ranks, 2);

	CHECK_INT(profile_capture_launches(&c), 0);
	measure = json_object_get(json_object_get(json_object_get(c.capture, "measure"), "kernels"),
				  KERNEL);
	variants = json_object_get(measure, "variants");
	if (j->busy) {
		/* nothing came back: every variant of the singles' pass is listed
		 * unmeasured, with why, and no pass of pairs measures pairs of
		 * loads whose singles are unknown */
		json_t *left = json_object_get(measure, "unmeasured");
		json_t *notes = json_object_get(c.capture, "notes"), *x;
		size_t i;
		int noted = 0;

		for (a = 0; a < NR_LOADS; a++)
			CHECK(isnan(k->hit[a]));
		CHECK_INT(json_object_size(variants), 0);
		CHECK_INT(json_array_size(left), 2 + NR_LOADS);
		CHECK_STR(json_string_value(json_array_get(left, 0)), "all");
		json_array_foreach(notes, i, x)
			noted |= strstr(json_string_value(x), "no counters came back") &&
				 strstr(json_string_value(x), "CUPTI_ERROR_HARDWARE_BUSY");
		CHECK(noted);
		if (!noted) {
			char *text = json_dumps(notes, 0);

			fprintf(stderr, "notes: %s\n", text);
			free(text);
		}
		CHECK_INT(json_array_size(json_object_get(json_object_get(c.capture, "measure"),
							  "passes")), 2);   /* ranks 0 and 1 */
		goto out;
	}
	/* hit_i: each load's single summed over both ranks' sampled launches,
	 * scaled to the job's 24 launches */
	for (a = 0; a < NR_LOADS; a++) {
		double want_hit = 0;

		/* a rank's mean over its sampled launches 2, 6 and 10 is H + 6 */
		for (r = 0; r < 2; r++)
			want_hit += single_hits(j, (int)r, a, 6) * LAUNCHES;
		if (isnan(k->hit[a]))
			fprintf(stderr, "load %u: hit_i not measured\n", a);
		CHECK_NEAR(k->hit[a], want_hit, 1e-6 * want_hit + 1e-9);
	}
	/* hit_{0,b}: load 0 never hits, so the pair's gain is its interaction:
	 * -100 a launch on rank 0 and (skew) -20 on rank 1, over 12 launches each */
	for (b = 1; b < NR_LOADS; b++) {
		double inter = LAUNCHES * (-100.0 + (j->skew ? -20.0 : -100.0));

		if (isnan(k->pair_hit[b]))
			fprintf(stderr, "pair 0,%u: not measured\n", b);
		CHECK_NEAR(k->pair_hit[0 * NR_LOADS + b] - k->hit[0] - k->hit[b], inter, 1e-6);
	}
	/* each rank apart, every load's single at its three sampled launches */
	CHECK_INT(k->nr_ranks, 2);
	for (r = 0; r < 2; r++) {
		const struct profile_rank_hits *rh = rank_hits(k, (int)r);
		CHECK(rh != NULL);
		if (!rh)
			continue;
		CHECK_STR(rh->gpu, gpu_name(j, (int)r));
		CHECK_INT(rh->launches, LAUNCHES);
		for (a = 0; a < NR_LOADS; a++) {
			CHECK_NEAR(rh->samples[a], 3, 0);
			CHECK_NEAR(rh->samples[a] > 0 ? rh->hits[a] / rh->samples[a] : NAN,
				   single_hits(j, (int)r, a, 6), 1e-9);
		}
	}
	/* capture.json's measure: every variant measured, none left; on one
	 * GPU a pass is a run a rank */
	CHECK_INT(json_array_size(json_object_get(json_object_get(c.capture, "measure"), "passes")),
		  j->gpus == 1 ? 2 : 1);
	CHECK(json_object_get(variants, "all") && json_object_get(variants, "none"));
	for (a = 0; a < NR_LOADS; a++) {
		snprintf(label, sizeof(label), "%u", a);
		CHECK(json_object_get(variants, label) != NULL);
	}
	CHECK(json_object_get(variants, "0,1") != NULL);
	CHECK(json_object_get(measure, "unmeasured") == NULL);

	/* verification in-run: each rank timed on its own launches (12 each:
	 * too few for A B B A, so replays of one launch), the advice 1.25x */
	profile_fill_kernels(&c);
	memset(&ab, 0, sizeof(ab));
	ab.step = "verify";
	ab.progress = "verify (in-run A/B)";
	ab.want = want;
	ab.base_dir = profile_write_substitutes(&c, "verify-baseline", NULL);
	ab.adv_dir = profile_write_substitutes(&c, "verify-plan", NULL);
	CHECK(ab.base_dir && ab.adv_dir);
	if (ab.base_dir && ab.adv_dir && profile_ab_in_run(&c, &ab) == 0) {
		json_t *ranks = json_object_get(ab.verdicts[0], "ranks"), *rv;
		size_t i;

		CHECK(ab.verdicts[0] != NULL);
		CHECK_INT(json_array_size(ranks), 2);
		json_array_foreach(ranks, i, rv) {
			json_t *v = json_object_get(rv, "verdict");

			CHECK(json_is_true(json_object_get(v, "kept")));
			CHECK_NEAR(json_number_value(json_object_get(json_object_get(v, "speedup"),
								     "median")), 1.25, 0.01);
		}
		CHECK_INT(ab.kept[0], 1);
	} else {
		CHECK(!"profile_ab_in_run failed");
	}
	free((char *)ab.base_dir);
	free((char *)ab.adv_dir);
	in_run_ab_release(&ab, c.nr_kernels);
	CHECK_INT(profile_write_capture(&c, "complete"), 0);
out:
	profile_ctx_release(&c);
	check_remove_dir(dir);
}

int main(int argc, char **argv)
{
	char *self, *ptx = xstrdup(check_source_path("tests/fixtures/ptx/loop.ptx"));

	if (argc == 6 && !strcmp(argv[1], "fake-job")) {
		struct job j = { atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), ptx };
		int ret = fake_job(&j);

		free(ptx);
		return ret;
	}
	self = realpath("/proc/self/exe", NULL);
	/* both ranks on one GPU (t_mpi on the H200): the even job, its first
	 * capture pass losing the profiler on both ranks, and the skew job */
	profile_job(self, &(struct job){ 1, 0, 1, 0, ptx });
	profile_job(self, &(struct job){ 1, 1, 0, 0, ptx });
	/* one GPU each: both ranks measured in one pass */
	profile_job(self, &(struct job){ 2, 0, 0, 0, ptx });
	profile_job(self, &(struct job){ 2, 1, 0, 0, ptx });
	/* the profiler never free: nothing measured, and the capture says so */
	profile_job(self, &(struct job){ 1, 0, 0, 1, ptx });
	free(self);
	free(ptx);
	return check_done();
}
