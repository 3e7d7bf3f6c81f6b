/*
 * The profile library's driver: sets up the capture directory and runs the
 * steps in order (DESIGN.md "The data flow"):
 *
 *   discover    run 000: modules and kernels, GPU time of the program's own cubins
 *   monitor     instrumented PTX: exact per-load requests/sectors/bytes (first when
 *               a kernel has more loads than --max-loads, so the busiest are measured)
 *   capture     baselines, all_bypassed, single i (hit_i), pair i,j (hit_{i,j})
 *   analyse     graph + solvers -> plan (analysis/advise.h), once
 *   emit        plan.json, patched/, reports (after every later step again)
 *   verify      A/B runs of the plan; what is not faster is dropped; then
 *               the plan source.patch delivers, timed the same way (verify_patch.c)
 *   l2          persisting-L2 windows, A/B runs
 *   oracle      --oracle: every plan of the small kernels timed
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/device_model.h"
#include "analysis/plan.h"
#include "analysis/ptx.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "collectors/gpu.h"
#include "collectors/runner.h"
#include "emitters/capture_layout.h"
#include "collectors/launcher.h"
#include "src/profile/internal.h"

const char *profile_step_name(enum profile_step step)
{
	static const char *const names[] = {
		[PROFILE_STEP_SETUP] = "setup", [PROFILE_STEP_DISCOVER] = "discover",
		[PROFILE_STEP_MONITOR] = "monitor", [PROFILE_STEP_CAPTURE] = "capture",
		[PROFILE_STEP_ANALYSE] = "analyse", [PROFILE_STEP_VERIFY] = "verify",
		[PROFILE_STEP_L2] = "l2", [PROFILE_STEP_ORACLE] = "oracle",
		[PROFILE_STEP_EMIT] = "emit", [PROFILE_STEP_DONE] = "done",
	};

	return step <= PROFILE_STEP_DONE ? names[step] : "?";
}

/* What the probe measured; the driver's numbers stay where it gave them. */
static void merge_device(struct device_model *dst, const struct device_model *p)
{
	dst->l1_line_bytes = p->l1_line_bytes;
	dst->sector_bytes = p->sector_bytes;
	dst->l1_bytes = p->l1_bytes;
	dst->l1_bytes_min = p->l1_bytes_min;
	dst->l1_sets = p->l1_sets;
	dst->l1_ways = p->l1_ways;
	dst->readonly_bytes = p->readonly_bytes;
	dst->l2_bytes_measured = p->l2_bytes_measured;
	dst->lat_l1_hit = p->lat_l1_hit;
	dst->lat_readonly_hit = p->lat_readonly_hit;
	dst->lat_l2_hit = p->lat_l2_hit;
	dst->lat_dram = p->lat_dram;
	free(dst->origin);
	dst->origin = p->origin ? xstrdup(p->origin) : NULL;
}

static void kernel_release(struct profile_kernel *k)
{
	free(k->name);
	free(k->vk.module_id);
	free(k->vk.function);
	free(k->vk.measured);
	free(k->vk.patchable);
	free(k->disc.name);
	free(k->disc.module);
	json_decref(k->disc.metrics);
	json_decref(k->disc.args);
	free(k->disc.counters);
	json_decref(k->counters);
	for (size_t t = 0; t < k->nr_tcounters; t++)
		capture_counters_release(&k->tcounters[t]);
	free(k->tcounters);
	if (k->has_typed)
		capture_kernel_release(&k->typed);
	free(k->hit);
	free(k->hit_run);
	free(k->pair_hit);
	free(k->pair_run);
	free(k->pair_noise);
	free(k->mon);
	json_decref(k->layout);
	json_decref(k->allocs_used);
	json_decref(k->l2_priority);
	for (size_t r = 0; r < k->nr_ranks; r++) {
		free(k->ranks[r].gpu);
		free(k->ranks[r].hits);
		free(k->ranks[r].samples);
	}
	free(k->ranks);
}

void profile_ctx_release(struct profile_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nr_modules; i++) {
		free(c->modules[i].id);
		free(c->modules[i].path);
		free(c->modules[i].origin);
		free(c->modules[i].load_path);
		ptx_module_free(c->modules[i].pm);
	}
	free(c->modules);
	for (i = 0; i < c->nr_kernels; i++)
		kernel_release(&c->kernels[i]);
	free(c->kernels);
	if (c->plan) {
		plan_release(c->plan);
		free(c->plan);
	}
	if (c->source_plan) {
		plan_release(c->source_plan);
		free(c->source_plan);
	}
	analysis_release(&c->analysis);
	json_decref(c->capture);
	device_model_release(&c->dm);
	free(c->dir);
	free(c->program);
	free(c->inject_path);
	for (i = 0; c->gpu_names && i < c->opt->nr_gpus; i++)
		free(c->gpu_names[i]);
	for (i = 0; i < c->nr_runs; i++)
		capture_run_release(&c->runs[i]);
	free(c->runs);
	free(c->reference_runs);
	free(c->module_passes);
	for (i = 0; i < c->nr_launched; i++)
		free(c->launched[i].name);
	free(c->launched);
	free(c->gpu_names);
	for (i = 0; i < c->nr_job_ranks; i++)
		free(c->job_ranks[i].gpu);
	free(c->job_ranks);
}

static char *default_out_dir(const char *program)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	char *copy = xstrdup(program), *dir;

	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	dir = xasprintf("cacheadvise-out/%s-%s", basename(copy), stamp);
	free(copy);
	return dir;
}

static json_t *device_json(const struct device_model *dm)
{
	json_t *d = device_model_to_json(dm);

	json_object_set_new(d, "source", json_string(device_model_source_name(dm->source)));
	return d;
}

/* The driver's view of the GPU, with what was probed (--device, or the probe cache). */
static int setup_device(struct profile_ctx *c)
{
	struct device_model probed;
	int ret = gpu_query(&c->dm);

	if (ret)
		return ret;
	device_model_init(&probed);
	ret = device_model_resolve(&probed, c->opt->device_file, c->dm.uuid);
	if (!ret) {
		if (probed.source != DEVICE_MODEL_DEFAULTS)
			merge_device(&c->dm, &probed);
		c->dm.source = probed.source;
	}
	device_model_release(&probed);
	return ret;
}

void profile_start_capture(struct profile_ctx *c)
{
	const struct profile_options *opt = c->opt;
	char stamp[32], cwd[4096];
	time_t t = time(NULL);
	struct tm tm;
	json_t *args = json_array();
	size_t i;

	c->capture = json_object();
	json_object_set_new(c->capture, "schema", json_string("cacheadvise.capture/1"));
	json_object_set_new(c->capture, "status", json_string("incomplete"));
	json_object_set_new(c->capture, "tool_version", json_string(CACHEADVISE_VERSION));
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(c->capture, "created", json_string(stamp));
	for (i = 1; opt->argv[i]; i++)
		json_array_append_new(args, json_string(opt->argv[i]));
	json_object_set_new(c->capture, "program",
		json_pack("{s:s, s:o, s:s}", "path", c->program, "args", args, "cwd",
			  getcwd(cwd, sizeof(cwd)) ? cwd : "."));
	c->device_json = device_json(&c->dm);
	json_object_set_new(c->capture, "device", c->device_json);
	c->options_json = json_pack("{s:i, s:f, s:i, s:s, s:s, s:s?, s:f, s:i, s:b}", "top", opt->top,
			  "min_share", opt->min_share, "max_loads", opt->max_loads, "model", opt->model,
			  "bypass_form", opt->bypass_form, "kernels_regex", opt->kernels_regex,
			  "timeout", opt->timeout, "repeat", opt->repeat,
			  /* a pass asked for: the report says when it did not run */
			  "l2_priority", opt->l2_priority_asked);
	json_object_set_new(c->capture, "options", c->options_json);
	c->modules_json = json_array();
	json_object_set_new(c->capture, "modules", c->modules_json);
	c->runs_json = json_array();
	json_object_set_new(c->capture, "runs", c->runs_json);
	c->kernels_json = json_array();
	json_object_set_new(c->capture, "kernels", c->kernels_json);
	c->notes_json = json_array();
	json_object_set_new(c->capture, "notes", c->notes_json);
	json_object_set_new(c->capture, "verification", json_null());
}

/* One step after the analysis, then the files again so the reports show it. */
static int step_then_emit(struct profile_ctx *c, enum profile_step step,
			  int (*fn)(struct profile_ctx *))
{
	int ret;

	c->step = step;
	ret = fn(c);
	if (ret)
		return ret;
	c->step = PROFILE_STEP_EMIT;
	return profile_emit(c);
}

/* The steps after setup; on error the capture so far is kept. */
static int run_steps(struct profile_ctx *c)
{
	const struct profile_options *opt = c->opt;
	size_t i;
	int ret;

	c->step = PROFILE_STEP_DISCOVER;
	ret = profile_discover(c);
	if (ret || !c->nr_kernels)  /* kernels without PTX still get the carve-out check */
		return ret || opt->no_verify ? ret : profile_carveout(c);
	/*
	 * A kernel with more loads than --max-loads: the monitor run goes
	 * first, so the loads measured are the ones with the most traffic.
	 */
	for (i = 0; i < c->nr_kernels && !c->kernels[i].left_out; i++)
		;
	if (i < c->nr_kernels) {
		if (!opt->no_monitor) {
			c->step = PROFILE_STEP_MONITOR;
			ret = profile_monitor(c);
			if (ret)
				return ret;
		}
		profile_choose_measured_loads(c);
	}
	c->step = PROFILE_STEP_CAPTURE;
	ret = profile_capture_variants(c);
	if (ret)
		return ret;
	if (!opt->no_monitor && !c->monitored) {
		c->step = PROFILE_STEP_MONITOR;
		ret = profile_monitor(c);
		if (ret)
			return ret;
	}
	/* in-run capture has no baseline runs of its own */
	if (!c->reference_runs)   /* no baseline_check written yet */
		profile_reference_check(c);
	profile_fill_kernels(c);
	for (i = 0; i < c->nr_kernels; i++)
		profile_apply_monitor(c, &c->kernels[i]);
	ret = profile_write_capture(c, "complete");
	if (ret)
		return ret;
	ret = step_then_emit(c, PROFILE_STEP_ANALYSE, profile_analyse);
	if (ret)
		return ret;
	profile_note_advised(c);
	if (!opt->no_verify) {
		/* the advice's own verification is never left to the budget */
		ret = step_then_emit(c, PROFILE_STEP_VERIFY, profile_verify);
		if (!ret)
			ret = step_then_emit(c, PROFILE_STEP_VERIFY, profile_verify_patch);
		if (!ret)
			ret = step_then_emit(c, PROFILE_STEP_VERIFY, profile_rebuild);
		if (!ret)
			ret = step_then_emit(c, PROFILE_STEP_VERIFY, profile_carveout);
		if (ret)
			return ret;
	}
	if (!opt->no_verify && !opt->no_softcache) {
		ret = step_then_emit(c, PROFILE_STEP_VERIFY, profile_softcache);
		if (ret)
			return ret;
	}
	if (!opt->no_verify && !opt->no_l2) {
		ret = step_then_emit(c, PROFILE_STEP_L2, profile_l2);
		if (ret)
			return ret;
	}
	if (opt->oracle_max) {
		ret = step_then_emit(c, PROFILE_STEP_ORACLE, profile_oracle);
		if (ret)
			return ret;
	}
	return 0;
}

/* An MPI or Slurm job's ranks to measure (--ranks; by default every rank of
 * a job of up to PROFILE_MAX_MEASURED_RANKS, else rank 0, with a note). */
#define PROFILE_MAX_MEASURED_RANKS 8

static void choose_ranks(struct profile_ctx *c)
{
	char **argv = c->opt->argv;
	enum launcher_kind kind = launcher_of(argv[0]);
	size_t n = 0;
	long ranks;

	if (kind == LAUNCHER_NONE)
		return;
	while (argv[n])
		n++;
	ranks = launcher_job_ranks(kind, argv + 1, n - 1);
	if (c->opt->ranks) {
		c->ranks = c->opt->ranks;
	} else if (ranks > PROFILE_MAX_MEASURED_RANKS) {
		c->ranks = "0";
		profile_note(c, "a job of %ld ranks: rank 0 is measured, the others run with the "
			     "advice unmeasured (--ranks chooses)", ranks);
	}
	json_object_set_new(c->options_json, "ranks",
			    json_string(c->ranks ? c->ranks : "all"));
	json_object_set_new(c->options_json, "launcher",
			    json_string(kind == LAUNCHER_OPENMPI ? "openmpi" : "slurm"));
}

/* --gpus: each GPU's CUDA_VISIBLE_DEVICES value, and the options' record. */
static void choose_gpus(struct profile_ctx *c)
{
	json_t *ids;
	size_t i;

	if (!c->opt->nr_gpus)
		return;
	ids = json_array();
	c->gpu_names = xcalloc(c->opt->nr_gpus + 1, sizeof(*c->gpu_names));
	for (i = 0; i < c->opt->nr_gpus; i++) {
		c->gpu_names[i] = xasprintf("%d", c->opt->gpus[i]);
		json_array_append_new(ids, json_integer(c->opt->gpus[i]));
	}
	json_object_set_new(c->options_json, "gpus", ids);
}

int profile_run(const struct profile_options *opt, const struct profile_progress *progress)
{
	struct profile_ctx c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.opt = opt;
	output_check_options_init(&c.output_check);
	c.output_check.strict = opt->strict_output;
	if (opt->output_rtol >= 0)
		c.output_check.rtol = opt->output_rtol;
	if (opt->output_atol >= 0)
		c.output_check.atol = opt->output_atol;
	if (opt->compare_file) {
		c.compare_kind = opt->compare_kind;
		c.output_check.format_paths = &opt->compare_file;
		c.output_check.format_kinds = &c.compare_kind;
		c.output_check.nr_formats = 1;
	}
	c.progress = progress;
	c.step = PROFILE_STEP_SETUP;
	c.started = profile_now();
	device_model_init(&c.dm);

	ret = runner_resolve_program(opt->argv[0], &c.program);
	if (!ret)
		ret = setup_device(&c);
	if (!ret && !(c.inject_path = run_request_injection_library(opt->tool_dir)))
		ret = CA_E_INPUT;
	if (ret)
		goto out;
	c.dir = opt->out_dir ? xstrdup(opt->out_dir) : default_out_dir(opt->argv[0]);
	ret = capture_layout_create(c.dir);
	if (ret)
		goto out;
	profile_start_capture(&c);
	choose_ranks(&c);
	choose_gpus(&c);
	ret = profile_write_capture(&c, "incomplete");
	if (ret)
		goto out;

	ret = run_steps(&c);
	if (!ret && !c.nr_kernels) {
		/* Nothing to measure (no kernel with PTX, none launched): the
		 * reports still say so, and list the modules without PTX. */
		ret = profile_write_capture(&c, "complete");
		if (!ret)
			ret = step_then_emit(&c, PROFILE_STEP_ANALYSE, profile_analyse);
		/* kernels without PTX still get L2 windows: they need no patching */
		if (!ret && c.nr_launched &&
		    !opt->no_verify && !opt->no_l2)
			ret = step_then_emit(&c, PROFILE_STEP_L2, profile_l2);
	}
	if (ret) {
		/* Keep what was measured: the capture says it is incomplete. */
		profile_note(&c, "stopped: %s", error_message());
		profile_write_capture(&c, "incomplete");
		profile_report_event(&c, PROFILE_EVENT_INCOMPLETE);
		if (runner_interrupted())
			ret = CA_E_INTERRUPTED;
		goto out;
	}
	c.step = PROFILE_STEP_DONE;
	profile_report_event(&c, PROFILE_EVENT_DONE);
out:
	profile_ctx_release(&c);
	return ret;
}
