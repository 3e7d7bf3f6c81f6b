/*
 * The profile's own code on the CPU (src/profile), with real inputs and
 * real program runs, without the GPU that measures:
 * - a module as the discovery run saves it (nvcc's PTX of
 *   tests/fixtures/ptx/loop.cu, its .file naming this checkout's source) is
 *   adopted and its two kernels taken as the discovery events give them;
 * - hit_i and hit_{i,j} are set as the capture step sets them (a pair
 *   resolved from noise, a kernel with a hit no capture holds), the
 *   monitor's counters as the injection library sums them over the layout
 *   the real instrumenter made, L2 priorities as --l2-priority records them;
 * - the profile's code writes capture.json (through the capture's one
 *   reader and writer), analyses it and emits the plan and the reports;
 * - then every later step runs for real with /bin/true as the program, so
 *   nothing is ever timed: the source patch's verification, the L2 oracle,
 *   verification in-run and in program runs, the carve-out, the software
 *   cache, the L2 window step, the monitor run, the in-run capture (with
 *   --variant-form mask and with --gpus 0,1) and one run per variant.
 * Checked: what the reader reads back is what was measured, each step says
 * why nothing was kept, the reports say what ran, the output reference is
 * never the monitor run, and the capture's own module stays as saved.
 * CA_KEEP=1 keeps the capture directory.
 */
#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/capture_model.h"
#include "analysis/load_sites.h"
#include "analysis/plan_query.h"
#include "analysis/ptx_instrument.h"
#include "base/digest.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/events.h"
#include "emitters/capture_layout.h"
#include "src/profile/internal.h"
#include "tests/unit/check.h"

/* The module's id: the first 16 hex digits of its PTX's SHA-256, set by
 * main() once the PTX names this checkout's loop.cu. */
static char MODULE_ID[17];
#define WALK "_Z4walkPKfS0_Pf"
#define GRID_STRIDE "_Z11grid_stridePKfPKiS0_Pfi"

static char *read_text(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 0)) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The discovery run's event for a kernel of the module. */
static void kernel_event(struct event_kernel *ek, const char *name, unsigned launches)
{
	memset(ek, 0, sizeof(*ek));
	ek->name = xstrdup(name);
	ek->module = xstrdup(MODULE_ID);
	ek->launches = launches;
	ek->grid[0] = 132;
	ek->grid[1] = ek->grid[2] = 1;
	ek->block[0] = 256;
	ek->block[1] = ek->block[2] = 1;
	ek->static_shared = 0;
	ek->registers = 32;
	ek->gpu_time_ns = 1000000;
}

static struct profile_kernel *find_kernel(struct profile_ctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++)
		if (!strcmp(c->kernels[i].name, name))
			return &c->kernels[i];
	return NULL;
}

static const struct capture_kernel *model_kernel(const struct capture *cap, const char *name)
{
	size_t i;

	for (i = 0; i < cap->nr_kernels; i++)
		if (!strcmp(cap->kernels[i].name, name))
			return &cap->kernels[i];
	return NULL;
}

static int has_note(const struct capture *cap, const char *part)
{
	size_t i;

	for (i = 0; i < cap->nr_notes; i++)
		if (strstr(cap->notes[i], part))
			return 1;
	return 0;
}

/* A profile of argv as profile_run() starts one, on an H100's device
 * model (the L2 window step reads its L2), its capture in dir/cap. */
static void setup(struct profile_ctx *c, struct profile_options *opt, char **argv, const char *dir)
{
	memset(opt, 0, sizeof(*opt));
	opt->argv = argv;
	opt->top = 5;
	opt->min_share = 1;
	opt->max_loads = 24;
	opt->timeout = 300;
	opt->repeat = 5;
	opt->model = "sector";
	opt->bypass_form = "no_allocate";
	memset(c, 0, sizeof(*c));
	c->opt = opt;
	c->started = profile_now();
	device_model_init(&c->dm);
	free(c->dm.name);
	c->dm.name = xstrdup("NVIDIA H100 80GB HBM3");
	free(c->dm.cc);
	c->dm.cc = xstrdup("9.0");
	c->dm.persisting_l2_max_bytes = 82837504;
	c->dm.access_policy_max_window_bytes = 134213632;
	c->program = xstrdup(argv[0]);
	c->dir = xasprintf("%s/cap", dir);
	CHECK_INT(capture_layout_create(c->dir), 0);
	profile_start_capture(c);
}

/* Writes text as the discovery run saves a module (seen/<id>.ptx, id its
 * hash) and adopts it; the id goes to id[17]. */
static void adopt(struct profile_ctx *c, const char *dir, const char *text, const char *origin,
		  char id[17])
{
	char hex[65], *seen = xasprintf("%s/seen", dir), *path;
	struct event_module em;

	digest_sha256_hex(text, strlen(text), hex);
	memcpy(id, hex, 16);
	id[16] = 0;
	mkdir(seen, 0755);
	path = capture_layout_subst_ptx(seen, id);
	write_text(path, text);
	memset(&em, 0, sizeof(em));
	em.id = id;
	em.origin = (char *)origin;
	em.has_ptx = 1;
	CHECK_INT(profile_adopt_module(c, &em, seen), 0);
	free(path);
	free(seen);
}

/*
 * A Triton kernel under the L2 oracle: the committed rownorm kernel's 24
 * PTX loads are 3 tl.load calls, so with --oracle 4 (24 loads, but 3
 * sites) it gets 3^3 plans, each call's 8 loads in one form. With Triton's
 * third form, "default" (a tl.load without eviction_policy), measured where
 * a call has a policy of its own (the second call's evict_first: its
 * evict_first is not measured again), still 3^3: each call takes the forms
 * measured for it; the advice removes the second call's policy.
 */
static void test_triton_oracle(int with_default)
{
	char tmpl[] = "/tmp/ca-profile-triton-XXXXXX";
	char *dir = mkdtemp(tmpl), *argv[] = { "/bin/true", NULL }, *text, id[17];
	struct profile_options opt;
	struct profile_ctx c;
	struct event_kernel ek;
	struct run_events ev;
	struct profile_kernel *k;
	struct capture cap;
	size_t group[64], i, s, nr;
	json_t *loads;
	glob_t g;

	CHECK(dir != NULL);
	if (!dir)
		return;
	CHECK(glob(check_source_path("tests/fixtures/triton/cache/*/rownorm_kernel.ptx"), 0, NULL,
		   &g) == 0 && g.gl_pathc == 1);
	if (g.gl_pathc != 1)
		return;
	text = read_text(g.gl_pathv[0]);
	globfree(&g);
	setup(&c, &opt, argv, dir);
	adopt(&c, dir, text, "cuModuleLoad#0", id);
	free(text);
	memset(&ek, 0, sizeof(ek));
	ek.name = xstrdup("rownorm_kernel");
	ek.module = xstrdup(id);
	ek.launches = 4;
	ek.static_shared = ek.registers = -1;
	run_events_init(&ev);
	CHECK_INT(profile_take_kernel(&c, &ek, &ev), 1);
	run_events_release(&ev);
	if (c.nr_kernels != 1)
		return;
	k = &c.kernels[0];
	CHECK_INT(k->vk.nr_measured, 24);
	for (i = 0; i < k->vk.nr_measured; i++)
		k->hit[i] = 10;
	/* --l2-priority's record: one entry a call, the second call saving most
	 * with evict_last */
	nr = load_sites_group_ptx(k->fn, k->vk.measured, k->vk.nr_measured, group);
	CHECK_INT(nr, 3);
	loads = json_array();
	for (s = 0; s < nr; s++) {
		json_t *ords = json_array();

		for (i = 0; i < k->vk.nr_measured; i++)
			if (group[i] == s)
				json_array_append_new(ords, json_integer(k->vk.measured[i]));
		if (with_default)
			json_array_append_new(loads, json_pack("{s:O, s:o, s:[o,o,o]}", "ordinal",
				json_array_get(ords, 0), "ordinals", ords, "dram_bytes",
				s == 1 ? json_null() : json_real(1000.0), json_real(1000.0),
				s == 1 ? json_real(650.0) : json_null()));
		else
			json_array_append_new(loads, json_pack("{s:O, s:o, s:[f,f]}", "ordinal",
				json_array_get(ords, 0), "ordinals", ords, "dram_bytes", 1000.0,
				s == 1 ? 700.0 : 1000.0));
	}
	if (with_default)
		k->l2_priority = json_pack("{s:[s,s,s], s:f, s:f, s:o, s:[]}", "forms",
			"L1::evict_first+L2::evict_first", "L1::evict_last+L2::evict_last",
			"default", "baseline_dram_bytes", 1000.0, "noise_dram_bytes", 10.0, "loads",
			loads, "pairs");
	else
		k->l2_priority = json_pack("{s:[s,s], s:f, s:f, s:o, s:[]}", "forms",
			"L1::evict_first+L2::evict_first", "L1::evict_last+L2::evict_last",
			"baseline_dram_bytes", 1000.0, "noise_dram_bytes", 10.0, "loads", loads,
			"pairs");
	profile_fill_kernels(&c);
	CHECK_INT(profile_write_capture(&c, "complete"), 0);
	CHECK_INT(profile_analyse(&c), 0);
	CHECK_INT(chdir(dir), 0);
	opt.oracle_max = 4;
	opt.l2_priority = 1;
	opt.repeat = 1;
	profile_note_advised(&c);
	CHECK_INT(profile_oracle(&c), 0);
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, c.capture, "capture.json"), 0);
	CHECK(cap.oracle && cap.oracle->nr_kernels == 1);
	if (cap.oracle && cap.oracle->nr_kernels == 1) {
		const struct capture_oracle_kernel *o = &cap.oracle->kernels[0];

		CHECK_STR(o->dimension, "l2");
		CHECK_INT(o->nr_plans, 27);
		/* the advice: the second call in evict_last (without default: digit 2
		 * of site 1, plan 2 * 3^1) or without its policy (with default: the
		 * third of site 1's measured forms, again digit 2) */
		CHECK_INT(o->advised_plan, 6);
		if (o->nr_plans == 27) {
			CHECK_INT(o->plans[6].nr_l2, 8);
			CHECK_STR(o->plans[6].l2[0].form, with_default ? "default" :
				  "L1::evict_last+L2::evict_last");
			CHECK_INT(o->plans[26].nr_l2, 24);
			if (with_default) {
				/* site 1 never takes evict_first (as built), sites 0 and 2
				 * never default (as built) */
				size_t p, j;

				for (p = 0; p < o->nr_plans; p++)
					for (j = 0; j < o->plans[p].nr_l2; j++) {
						const struct capture_oracle_l2 *e = &o->plans[p].l2[j];
						int second = e->ordinal >= 8 && e->ordinal < 16;

						CHECK(!(second && !strcmp(e->form,
								"L1::evict_first+L2::evict_first")));
						CHECK(!(!second && !strcmp(e->form, "default")));
					}
			}
		}
	}
	if (with_default) {
		/* the analysis' plan: the second call's loads "default" (their policy
		 * removed), no L2 priority of the plan's */
		int a = plan_action(c.plan, k->module->id, k->name, k->vk.measured[8]);

		CHECK_INT(a, LOAD_ACTION_DEFAULT);
		CHECK_INT(plan_l2(c.plan, k->module->id, k->name, k->vk.measured[8]), 0);
	}
	capture_release(&cap);
	profile_ctx_release(&c);
	check_remove_dir(dir);
}

/*
 * The monitor run's output against the program's own runs (issue 35 item
 * 4), as profile runs them at the defaults: the discovery run, the in-run
 * capture pass, the monitor run (CACHEADVISE_MONITOR=1 in its environment),
 * then the output reference. The program prints its timings as real
 * programs do (FACTS.md "Real programs under profile": "Kernel : 0.012076",
 * "Timer Wall Time: 0.61", a bare "0.018891"), each run others (a count
 * of the runs), and writes out.bin. With result_differs the monitor run
 * prints another result line and writes another out.bin. With
 * monitor_first it runs before the capture pass (a kernel with more loads
 * than --max-loads), and is judged once the reference is written.
 */
static void test_monitor_note(int result_differs, int monitor_first)
{
	/* each run its own count (not its pid: pids wrap and repeat) */
	static const char common[] =
		"n=$(cat run-count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > run-count; "
		"echo 'Rodinia srad'; echo \"Kernel : 0.0${n}7\"; echo \"Timer Wall Time: 0.${n}3\"; "
		"echo \"0.01${n}9\"; ";
	char tmpl[] = "/tmp/ca-profile-monitor-XXXXXX";
	char *dir = mkdtemp(tmpl), *script, *argv[4], *cwd = getcwd(NULL, 0);
	struct profile_options opt;
	struct profile_ctx c;
	struct run_request req = { .timing = 1 };
	struct run_result res;
	struct capture cap;
	size_t i;

	CHECK(dir != NULL);
	if (!dir)
		return;
	script = xasprintf("%sif [ -n \"$CACHEADVISE_MONITOR\" ]; then r=%d; else r=42; fi; "
			   "echo \"result $r\"; echo \"$r\" > out.bin", common,
			   result_differs ? 41 : 42);
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
	setup(&c, &opt, argv, dir);
	output_check_options_init(&c.output_check);
	CHECK_INT(chdir(dir), 0);
	CHECK_INT(profile_run_program(&c, "discovery", &req, NULL, &res, NULL), 0);
	CHECK_INT(res.status, RUN_OK);
	if (monitor_first)
		CHECK_INT(profile_monitor(&c), 0);
	CHECK_INT(profile_capture_launches(&c), 0);
	if (!monitor_first)
		CHECK_INT(profile_monitor(&c), 0);
	profile_reference_check(&c);
	CHECK_INT(profile_write_capture(&c, "complete"), 0);
	capture_init(&cap);
	CHECK_INT(capture_from_json(&cap, c.capture, "capture.json"), 0);
	/* the runs compared: discovery and capture, each printing its own timings */
	CHECK(cap.has_baseline_check && cap.baseline_check.nr_runs == 2);
	CHECK_INT(cap.baseline_output.volatile_lines, 3);
	CHECK_INT(cap.baseline_output.unstable_lines, 0);
	if (result_differs) {
		CHECK(has_note(&cap, "the instrumented (monitor) run printed other output than the "
			       "baseline (stdout line 5: 'result 42' became 'result 41', file 'out.bin')"));
	} else {
		CHECK(!has_note(&cap, "the instrumented (monitor) run printed other output"));
	}
	for (i = 0; i < cap.nr_notes; i++)
		if (strstr(cap.notes[i], "monitor) run printed") && !result_differs)
			fprintf(stderr, "unexpected note: %s\n", cap.notes[i]);
	capture_release(&cap);
	profile_ctx_release(&c);
	free(script);
	/* out of the directory about to go, back where the test started */
	CHECK_INT(chdir(cwd ? cwd : "/tmp"), 0);
	free(cwd);
	check_remove_dir(dir);
}

int main(void)
{
	char tmpl[] = "/tmp/ca-profile-capture-XXXXXX";
	char *dir = mkdtemp(tmpl), *text, *path, *report, *orig_text;
	char *argv[] = { "/bin/true", "--size", "big", NULL };
	struct profile_options opt;
	struct profile_ctx c;
	struct event_kernel ek;
	struct run_events ev;
	struct profile_kernel *gs, *walk;
	struct capture cap;
	const struct capture_kernel *mk;
	json_t *doc;
	size_t i, n;

	CHECK(dir != NULL);
	if (!dir)
		return check_done();
	setup(&c, &opt, argv, dir);

	/* the module as the discovery run saved it: its .file names loop.cu
	 * where this checkout has it (the source patch reads it) */
	text = read_text(check_source_path("tests/fixtures/ptx/loop.ptx"));
	CHECK(text != NULL);
	if (!text)
		return check_done();
	{
		const char *at = strstr(text, "/tests/fixtures/ptx/src/loop.cu\"");
		const char *open = at;

		while (open && open > text && *open != '"')
			open--;
		if (open && *open != '"')
			open = NULL;
		CHECK(open != NULL);
		if (open) {
			char *fixed = xasprintf("%.*s\"%s%s", (int)(open - text), text,
						check_source_path("tests/fixtures/ptx/src/loop.cu"),
						at + strlen("/tests/fixtures/ptx/src/loop.cu"));

			free(text);
			text = fixed;
		}
	}
	orig_text = xstrdup(text);
	adopt(&c, dir, text, "loop#fatbin0", MODULE_ID);
	free(text);
	CHECK_INT(c.nr_modules, 1);
	CHECK(c.modules[0].pm != NULL);
	/* taken from the discovery run's events, one after the other, as
	 * profile_discover does: a kernel taken leaves its event empty (an
	 * H200 profile with --top 2 crashed looking the second one up) */
	run_events_init(&ev);
	{
		struct event_kernel *k;

		k = run_events_kernel(&ev, GRID_STRIDE);
		free(k->name);
		kernel_event(k, GRID_STRIDE, 11);
		k = run_events_kernel(&ev, WALK);
		free(k->name);
		kernel_event(k, WALK, 11);
		CHECK_INT(profile_take_kernel(&c, &ev.kernels[0], &ev), 1);
		CHECK_INT(profile_take_kernel(&c, &ev.kernels[1], &ev), 1);
	}
	/* a kernel of a module the run never saw: noted, not taken */
	kernel_event(&ek, "_Z7missingv", 1);
	free(ek.module);
	ek.module = xstrdup("0000000000000000");
	CHECK_INT(profile_take_kernel(&c, &ek, &ev), 0);
	free(ek.name);
	free(ek.module);
	run_events_release(&ev);
	if (c.nr_kernels != 2 || !c.modules[0].pm)
		return check_done();

	/* what the capture step measured: grid_stride's four loads, with load
	 * 1 and 2 reusing each other, load 3 conflicting with the three others,
	 * and the pair (0, 2) resolved from noise as the capture step resolves
	 * it (hit 0: a conflict of 32 * (0 - 140) = -4480 bytes) */
	gs = find_kernel(&c, GRID_STRIDE);
	walk = find_kernel(&c, WALK);
	CHECK(gs && walk && gs->vk.nr_measured == 4 && walk->vk.nr_measured == 1);
	if (!gs || !walk || gs->vk.nr_measured != 4 || walk->vk.nr_measured != 1)
		return check_done();
	n = gs->vk.nr_measured;
	gs->hit[0] = 100;
	gs->hit[1] = 50;
	gs->hit[2] = 40;
	gs->hit[3] = 80;
	for (i = 0; i < n * n; i++)
		gs->pair_hit[i] = NAN;
	gs->pair_hit[0 * n + 1] = 150;
	gs->pair_hit[0 * n + 2] = 0;
	gs->pair_noise[0 * n + 2] = -13.3;
	gs->pair_hit[0 * n + 3] = 90;
	gs->pair_hit[1 * n + 2] = 190;
	gs->pair_hit[1 * n + 3] = 60;
	gs->pair_hit[2 * n + 3] = 50;
	/* walk: a number no capture holds (above 2^53) */
	walk->hit[0] = 1e300;
	/* --l2-priority: load 1 reads 200 bytes less with evict_last */
	gs->l2_priority = json_loads("{\"forms\": [\"L2::evict_first\", \"L2::evict_last\"],"
		" \"baseline_dram_bytes\": 1000, \"noise_dram_bytes\": 10, \"loads\": ["
		"{\"ordinal\": 0, \"dram_bytes\": [1000, 1000]},"
		"{\"ordinal\": 1, \"dram_bytes\": [1100, 800]},"
		"{\"ordinal\": 2, \"dram_bytes\": [1000, 1000]},"
		"{\"ordinal\": 3, \"dram_bytes\": [1000, 1000]}], \"pairs\": []}", 0, NULL);
	CHECK(gs->l2_priority != NULL);

	profile_fill_kernels(&c);
	/* the monitor run: the module instrumented as the monitor run's is, and
	 * its counters as the injection library sums them over launches (load
	 * o: 100 (o + 1) requests, 400 (o + 1) sectors, 100 (o + 1) lines;
	 * every data structure 40 simulated hits of 100 accesses) */
	{
		struct strbuf instrumented = STRBUF_INIT;
		json_t *fnl, *ld, *ds;
		size_t f, j;

		CHECK_INT(ptx_instrument(c.modules[0].pm, NULL, &instrumented, &gs->layout), 0);
		strbuf_release(&instrumented);
		gs->nr_mon = (size_t)json_integer_value(json_object_get(gs->layout, "slots"));
		gs->mon = xcalloc(gs->nr_mon + 1, sizeof(*gs->mon));
		gs->monitor_gpu_ns = 2500000;
		json_array_foreach(json_object_get(gs->layout, "functions"), f, fnl) {
			if (strcmp(json_string_value(json_object_get(fnl, "name")), GRID_STRIDE))
				continue;
			json_array_foreach(json_object_get(fnl, "loads"), j, ld) {
				uint64_t o = (uint64_t)json_integer_value(json_object_get(ld, "ordinal"));

				gs->mon[json_integer_value(json_object_get(ld, "requests"))] = 100 * (o + 1);
				gs->mon[json_integer_value(json_object_get(ld, "sectors"))] = 400 * (o + 1);
				gs->mon[json_integer_value(json_object_get(ld, "lines"))] = 100 * (o + 1);
				gs->mon[json_integer_value(json_object_get(ld, "bytes"))] = 12800 * (o + 1);
			}
			json_array_foreach(json_object_get(fnl, "data_structures"), j, ds) {
				gs->mon[json_integer_value(json_object_get(ds, "hits"))] = 40;
				gs->mon[json_integer_value(json_object_get(ds, "accesses"))] = 100;
			}
		}
		gs->disc.counter_launches = 11;
	}
	for (i = 0; i < c.nr_kernels; i++)
		profile_apply_monitor(&c, &c.kernels[i]);
	CHECK_INT(profile_write_capture(&c, "complete"), 0);

	/* what `report` will read */
	path = capture_layout_file(c.dir, CAPTURE_LAYOUT_CAPTURE);
	doc = json_file_load(path);
	CHECK(doc != NULL);
	capture_init(&cap);
	error_clear();
	CHECK_INT(capture_from_json(&cap, doc, path), 0);
	CHECK_STR(cap.status, "complete");
	CHECK(cap.has_cost && cap.cost.program_runs == 0);
	CHECK_INT(cap.nr_modules, 1);
	{
		char *want = xasprintf("modules/%s.ptx", MODULE_ID);

		CHECK_STR(cap.modules[0].ptx, want);
		free(want);
	}
	CHECK_INT(cap.program.nr_args, 2);
	mk = model_kernel(&cap, GRID_STRIDE);
	CHECK(mk != NULL);
	if (mk) {
		CHECK_INT(mk->nr_loads, 4);
		CHECK_INT(mk->launches, 11);
		CHECK_NEAR(mk->loads[0].hit, 100, 0);
		CHECK_NEAR(mk->loads[3].hit, 80, 0);
		/* -lineinfo's .loc: loop.cu, its line and column */
		CHECK(mk->loads[0].file && strstr(mk->loads[0].file, "loop.cu") != NULL);
		CHECK_INT(mk->loads[0].line, 14);
		CHECK(mk->loads[0].column > 0);
		/* the monitor's exact counts: access_i and the rest */
		CHECK_NEAR(mk->loads[0].access, 400, 0);
		CHECK_NEAR(mk->loads[3].access, 1600, 0);
		CHECK_NEAR(mk->loads[2].requests, 300, 0);
		CHECK_NEAR(mk->loads[1].lines, 200, 0);
		CHECK_NEAR(mk->monitor_gpu_time_ns, 2500000, 0);
		CHECK(mk->software_cache != NULL);
		CHECK_INT(mk->nr_pairs, 6);
		for (i = 0; i < mk->nr_pairs; i++)
			if (mk->pairs[i].i == 0 && mk->pairs[i].j == 2) {
				CHECK_NEAR(mk->pairs[i].hit, 0, 0);
				CHECK_NEAR(mk->pairs[i].noise_measured, -13.3, 1e-9);
			}
	}
	/* walk lost its numbers, with a note; the profile went on */
	mk = model_kernel(&cap, WALK);
	CHECK(mk && mk->nr_loads == 1 && isnan(mk->loads[0].hit));
	CHECK(has_note(&cap, "kernel " WALK " is not analysed"));
	CHECK(has_note(&cap, "kernel _Z7missingv: its module is unknown"));
	capture_release(&cap);
	/* written by the one writer: what it writes of what the reader took */
	{
		struct capture again;
		json_t *back;

		capture_init(&again);
		CHECK_INT(capture_from_json(&again, doc, path), 0);
		back = capture_to_json(&again);
		CHECK(json_equal(back, doc));
		json_decref(back);
		capture_release(&again);
	}
	json_decref(doc);
	free(path);

	/* the analysis and the files, from the profile's own state: caching
	 * loads 1 and 2 together pays (W = 1600 + 1280 + 32 * (190 - 90) =
	 * 6080 bytes); load 0 with them adds 3200 + 0 - 4480 = -1280, load 3
	 * adds 2560 + 32 * (60 - 130) + 32 * (50 - 120) = -1920, and no other
	 * set does better (load 0 alone 3200, with 1 4800), so 1 and 2 are
	 * cached */
	CHECK_INT(profile_analyse(&c), 0);
	CHECK_INT(profile_emit(&c), 0);
	path = capture_layout_file(c.dir, "plan.json");
	CHECK(access(path, R_OK) == 0);
	free(path);
	report = xasprintf("%s/report.txt", c.dir);
	text = read_text(report);
	CHECK(text != NULL);
	if (text) {
		CHECK(strstr(text, "grid_stride") != NULL);
		CHECK(strstr(text, "bnb (proven optimal)") != NULL);
		free(text);
	}
	free(report);
	{
		const struct analysis_kernel *ak = analysis_find_kernel(&c.analysis, MODULE_ID,
									GRID_STRIDE);

		CHECK(ak != NULL);
		if (ak) {
			CHECK_STR(analysis_kernel_load(ak, 1)->decision, "cache");
			CHECK_STR(analysis_kernel_load(ak, 2)->decision, "cache");
			CHECK_STR(analysis_kernel_load(ak, 3)->decision, "bypass");
			CHECK_STR(analysis_kernel_load(ak, 0)->decision, "bypass");
			CHECK_NEAR(ak->chosen->objective, 6080, 1e-9);
		}
	}

	/*
	 * --oracle with --l2-priority, run for real with a program that has no
	 * kernels (/bin/true: every time is unmeasured, so nothing is timed):
	 * grid_stride gets the L2 oracle, 3^4 plans of its four loads' forms
	 * with the advised L1 side, walk (no L2 measurement) the L1 oracle, and
	 * each plan's PTX is written as the plan says.
	 */
	{
		char *subst;
		const struct capture_oracle_kernel *ok = NULL, *wk = NULL;
		size_t nruns;

		CHECK_INT(chdir(dir), 0);
		/*
		 * The source patch's own verification (as verify leaves it when it
		 * kept the plan): loop.cu's loads rewritten as source.patch writes
		 * them, load 3 (a compound assignment) left out and said why, and
		 * the figure it could not measure said so, not "verified".
		 */
		profile_set_verification(&c, json_pack("{s:s, s:b}", "status", "verified", "kept", 1));
		CHECK_INT(profile_verify_patch(&c), 0);
		CHECK_INT(profile_emit(&c), 0);
		capture_init(&cap);
		CHECK_INT(capture_from_json(&cap, c.capture, "capture.json"), 0);
		CHECK(cap.has_verification && cap.verification.has_source_patch);
		if (cap.has_verification && cap.verification.has_source_patch) {
			const struct capture_source_patch *sp = &cap.verification.source_patch;

			CHECK_INT(sp->rewritten, 2);
			CHECK(sp->nr_left_out == 1 && sp->left_out[0].ordinal == 3 &&
			      strstr(sp->left_out[0].reason, "compound assignment"));
		}
		capture_release(&cap);
		report = xasprintf("%s/report.txt", c.dir);
		text = read_text(report);
		CHECK(text && strstr(text, "the source patch as written: not timed (load 3 of "
				     "grid_stride not rewritten"));
		free(text);
		free(report);
		/*
		 * The rebuild (issue 38): a CUDA program without --build is not
		 * rebuilt, and says how to have it; with --build, /bin/true shares
		 * no folder with the sources short of "/", so nothing is copied.
		 * Either way the advice stands and the reason is in the capture.
		 */
		for (i = 0; i < 2; i++) {
			opt.build = i ? "true" : NULL;
			CHECK_INT(profile_rebuild(&c), 0);
			capture_init(&cap);
			CHECK_INT(capture_from_json(&cap, c.capture, "capture.json"), 0);
			CHECK(cap.has_verification && cap.verification.has_rebuilt);
			if (cap.has_verification && cap.verification.has_rebuilt) {
				const struct capture_rebuilt *rb = &cap.verification.rebuilt;

				CHECK_STR(rb->status, "not rebuilt");
				CHECK(isnan(rb->speedup));
				CHECK(rb->reason && strstr(rb->reason, i ?
				      "share no folder short of '/'" : "profile --build 'CMD'"));
			}
			capture_release(&cap);
		}
		opt.build = NULL;
		CHECK_INT(profile_emit(&c), 0);
		report = xasprintf("%s/report.txt", c.dir);
		text = read_text(report);
		CHECK(text && strstr(text, "not rebuilt (the sources ("));
		free(text);
		free(report);
		/* no kernel with few enough loads: said so, nothing run */
		opt.oracle_max = 0;
		nruns = c.nr_runs;
		CHECK_INT(profile_oracle(&c), 0);
		CHECK_INT(c.nr_runs, nruns);
		capture_init(&cap);
		CHECK_INT(capture_from_json(&cap, c.capture, "capture.json"), 0);
		CHECK(cap.oracle && cap.oracle->status &&
		      strstr(cap.oracle->status, "no measured kernel has few enough loads"));
		capture_release(&cap);
		opt.oracle_max = 4;
		opt.l2_priority = 1;
		opt.repeat = 1;
		profile_note_advised(&c);
		nruns = c.nr_runs;
		CHECK_INT(profile_oracle(&c), 0);
		CHECK_INT(c.nr_runs - nruns, 82);   /* 81 plans and the baseline, one round */
		path = capture_layout_file(c.dir, CAPTURE_LAYOUT_CAPTURE);
		doc = json_file_load(path);
		capture_init(&cap);
		CHECK_INT(capture_from_json(&cap, doc, path), 0);
		CHECK(cap.oracle != NULL);
		for (i = 0; cap.oracle && i < cap.oracle->nr_kernels; i++) {
			if (!strcmp(cap.oracle->kernels[i].kernel, GRID_STRIDE))
				ok = &cap.oracle->kernels[i];
			if (!strcmp(cap.oracle->kernels[i].kernel, WALK))
				wk = &cap.oracle->kernels[i];
		}
		CHECK(ok && wk);
		if (ok && wk) {
			CHECK_STR(ok->dimension, "l2");
			CHECK_INT(ok->nr_plans, 81);
			/* load 1 (node 1) in form 2 (evict_last): plan 2 * 3 */
			CHECK_INT(ok->advised_plan, 6);
			CHECK_INT(ok->plans[6].nr_l2, 1);
			if (ok->plans[6].nr_l2 == 1) {
				CHECK_INT(ok->plans[6].l2[0].ordinal, 1);
				CHECK_STR(ok->plans[6].l2[0].form, "L2::evict_last");
			}
			CHECK_INT(ok->plans[80].nr_l2, 4);
			CHECK(isnan(ok->plans[6].speedup));
			CHECK_STR(wk->dimension, "l1");
			CHECK_INT(wk->nr_plans, 2);
		}
		capture_release(&cap);
		json_decref(doc);
		free(path);
		/* plan 6's PTX: load 1 with the policy, the advised L1 side kept */
		subst = capture_layout_subst_dir(c.dir, "oracle-6");
		path = capture_layout_subst_ptx(subst, MODULE_ID);
		text = read_text(path);
		CHECK(text != NULL);
		if (text) {
			CHECK(strstr(text, "createpolicy.fractional.L2::evict_last.b64") != NULL);
			CHECK(strstr(text, "L2::cache_hint") != NULL);
			CHECK(strstr(text, "ld.global.L1::no_allocate") != NULL);
			free(text);
		}
		free(path);
		free(subst);
		/* the report says what the oracle did, and that nothing was timed */
		CHECK_INT(profile_emit(&c), 0);
		report = xasprintf("%s/report.txt", c.dir);
		text = read_text(report);
		CHECK(text != NULL);
		if (text) {
			CHECK(strstr(text, "4 loads, 81 L2 priority plans x 1 rounds") != NULL);
			CHECK(strstr(text, "advised plan {load 1 L2::evict_last}: no plan was timed") != NULL);
			CHECK(strstr(text, "nan") == NULL);
			free(text);
		}
		free(report);
		report = xasprintf("%s/report.html", c.dir);
		text = read_text(report);
		CHECK(text != NULL);
		if (text) {
			CHECK(strstr(text, "81 plans, 1 rounds each; no plan was timed") != NULL);
			CHECK(strstr(text, "<th>L2 priorities (the rest as advised)</th>") != NULL);
			free(text);
		}
		free(report);
	}

	/*
	 * The steps after the analysis, run for real on a program without
	 * kernels: nothing is timed, so verification keeps nothing and says
	 * why; the software cache rewrites the module (its ranking chose
	 * structures) and times it in program runs; the L2 step finds no
	 * persisting L2 on an unknown GPU. After each the files are written
	 * again, and the capture's own module stays byte for byte what the
	 * discovery run saved (the rewrite once wrote through the substitute
	 * directory's link into it).
	 */
	{
		const char *const steps[] = { "verify", "carveout", "softcache", "l2", "verify runs" };
		char *module_path = capture_layout_module_ptx(c.dir, MODULE_ID), *now, *orig;
		size_t st;

		orig = xstrdup(orig_text);
		for (st = 0; st < ARRAY_SIZE(steps); st++) {
			int ret;

			error_clear();
			opt.measure_runs = st == 4;
			ret = st == 1 ? profile_carveout(&c) : st == 2 ? profile_softcache(&c) :
			      st == 3 ? profile_l2(&c) : profile_verify(&c);
			if (ret)
				fprintf(stderr, "%s: %s\n", steps[st], error_message());
			CHECK_INT(ret, 0);
			CHECK_INT(profile_emit(&c), 0);
			now = read_text(module_path);
			CHECK(now && orig && !strcmp(now, orig));
			free(now);
		}
		free(orig);
		free(module_path);
		path = capture_layout_file(c.dir, CAPTURE_LAYOUT_CAPTURE);
		doc = json_file_load(path);
		capture_init(&cap);
		CHECK_INT(capture_from_json(&cap, doc, path), 0);
		free(path);
		mk = model_kernel(&cap, GRID_STRIDE);
		/* the rewrite was written, or (a build without nvcc: no read
		 * functions to call) refused saying so */
		path = capture_layout_softcache_ptx(c.dir, MODULE_ID);
		if (mk && mk->software_cache && mk->software_cache->has_verification &&
		    mk->software_cache->verification.has_rewrite)
			CHECK(access(path, R_OK) == 0);
		else
			CHECK(mk && mk->software_cache && mk->software_cache->verification.reason &&
			      strstr(mk->software_cache->verification.reason, "not built with nvcc"));
		free(path);
		path = NULL;
		CHECK(mk && mk->verification && mk->verification->kept == 0);
		if (mk && mk->verification)
			CHECK_STR(mk->verification->reason, "no kernel times were measured");
		CHECK(mk && mk->software_cache && mk->software_cache->has_verification);
		CHECK(cap.has_l2 && cap.l2.status && !strcmp(cap.l2.status, "none"));
		CHECK(cap.l2.reason && strstr(cap.l2.reason, "no kernel argument points into a device allocation"));
		/* nothing kept: the plan no longer changes grid_stride */
		CHECK(!plan_mentions(c.plan, GRID_STRIDE));
		capture_release(&cap);
		json_decref(doc);
		free(path);
	}

	/*
	 * The measuring steps themselves, run for real on a program with no
	 * kernels: the monitor run, the in-run capture (with --l2-priority) and
	 * one run per variant end without a number, record their runs and say
	 * what was not measured, and the capture they leave still reads.
	 */
	{
		static const char *const variants[] = { "monitor", "capture", "single", "pair" };
		size_t from = c.nr_runs, v, r;

		opt.l2_priority = 1;
		CHECK_INT(profile_monitor(&c), 0);
		CHECK_INT(profile_capture_launches(&c), 0);
		CHECK_INT(profile_capture_runs(&c), 0);
		profile_fill_kernels(&c);
		CHECK_INT(profile_write_capture(&c, "complete"), 0);
		for (v = 0; v < ARRAY_SIZE(variants); v++) {
			int seen_variant = 0;

			for (r = from; r < c.nr_runs; r++)
				seen_variant |= !strcmp(c.runs[r].variant, variants[v]);
			if (!seen_variant)
				fprintf(stderr, "no %s run\n", variants[v]);
			CHECK(seen_variant);
		}
		/* --variant-form mask, and --gpus 0,1: the variant runs side by side,
		 * each recorded with its GPU and files not compared */
		{
			static const int gpus[] = { 0, 1 };
			int on_second = 0;

			opt.variant_form = 1;
			CHECK_INT(profile_capture_launches(&c), 0);
			opt.variant_form = 0;
			opt.gpus = gpus;
			opt.nr_gpus = 2;
			c.gpu_names = xcalloc(3, sizeof(*c.gpu_names));
			c.gpu_names[0] = xstrdup("0");
			c.gpu_names[1] = xstrdup("1");
			from = c.nr_runs;
			CHECK_INT(profile_capture_runs(&c), 0);
			CHECK_INT(profile_write_capture(&c, "complete"), 0);
			for (r = from; r < c.nr_runs; r++)
				if (c.runs[r].has_gpu && c.runs[r].gpu == 1 &&
				    c.runs[r].files_compared == 0)
					on_second = 1;
			CHECK(on_second);
			/* profile_ctx_release frees the names, as choose_gpus made them */
		}
		/* the output reference: the first capture pass (its program launches
		 * run the code as built), never the monitor run (instrumented code)
		 * nor a run beside others */
		profile_reference_check(&c);
		CHECK_INT(profile_write_capture(&c, "complete"), 0);
		path = capture_layout_file(c.dir, CAPTURE_LAYOUT_CAPTURE);
		doc = json_file_load(path);
		capture_init(&cap);
		CHECK_INT(capture_from_json(&cap, doc, path), 0);
		CHECK(cap.has_baseline_check && cap.baseline_check.nr_runs == 1);
		if (cap.has_baseline_check && cap.baseline_check.nr_runs == 1) {
			const struct capture_run *ref = capture_find_run(&cap,
				(int)cap.baseline_check.runs[0]);

			CHECK(ref && !strcmp(ref->variant, "capture") && ref->files_compared != 0);
		}
		CHECK_INT(cap.baseline_check.output_identical, 1);
		CHECK(cap.has_measure && cap.measure.method && !strcmp(cap.measure.method, "launches"));
		mk = model_kernel(&cap, GRID_STRIDE);
		CHECK(mk && mk->nr_loads == 4 && isnan(mk->loads[0].hit) && isnan(mk->loads[3].hit));
		CHECK(has_note(&cap, "no counters for kernel " GRID_STRIDE));
		capture_release(&cap);
		json_decref(doc);
		free(path);
	}

	free(orig_text);
	profile_ctx_release(&c);
	/* CA_KEEP=1 keeps the capture directory to look at */
	check_remove_dir(dir);
	test_triton_oracle(0);
	test_triton_oracle(1);
	test_monitor_note(0, 0);
	test_monitor_note(1, 0);
	test_monitor_note(0, 1);
	test_monitor_note(1, 1);
	return check_done();
}
