/*
 * `profile`'s monitor step: one run with instrumented PTX
 * (analysis/ptx_instrument.h) counts every load's requests, sectors and
 * bytes exactly and simulates the software cache per data structure; the
 * counts, the software-cache ranking and the register-cache hints go into
 * each kernel's entry.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/launch_sampling.h"
#include "analysis/monitor_counts.h"
#include "analysis/output_check.h"
#include "analysis/ptx_instrument.h"
#include "analysis/softcache_rank.h"
#include "analysis/stencil_detect.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/patched_ptx.h"
#include "src/profile/internal.h"

static int module_is_measured(struct profile_ctx *c, const struct profile_module *m)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++)
		if (c->kernels[i].module == m)
			return 1;
	return 0;
}

/*
 * The monitor run's output judged against the output check's reference
 * runs (c->reference_runs: in-run, the discovery run and the first capture
 * pass; with --measure runs, the baselines) by output_check_changed():
 * numbers on lines that differ between them, or that read as timings, are
 * masked, and what differs between them is left out. The discovery run
 * alone taught it nothing: "Kernel : 0.012076" against "Kernel : 0.013001"
 * read as a change, and every real program got the note (issue 35 item 4).
 * Judged once both runs exist: at the monitor step where the reference
 * check was written before it, else when profile_baseline_check() writes
 * it (in-run capture's comes after the monitor run).
 */
void profile_monitor_output(struct profile_ctx *c)
{
	struct run_output *outs, mon;
	const struct run_output **base;
	size_t i, nb = 0;
	char *what;

	if (!c->monitor_output_pending || !c->reference_runs)
		return;
	c->monitor_output_pending = 0;
	outs = xcalloc(c->nr_reference_runs + 1, sizeof(*outs));
	base = xcalloc(c->nr_reference_runs + 1, sizeof(*base));
	for (i = 0; i < c->nr_reference_runs; i++) {
		run_output_init(&outs[nb]);
		if (profile_run_output(c, profile_run_record(c, c->reference_runs[i]), &outs[nb]) == 0)
			base[nb] = &outs[nb], nb++;
		else
			run_output_release(&outs[nb]);
	}
	run_output_init(&mon);
	if (profile_run_output(c, profile_run_record(c, c->monitor_run), &mon) == 0 &&
	    (what = output_check_changed(base, nb, &mon, &c->output_check))) {
		profile_note(c, "the instrumented (monitor) run printed other output than the baseline "
			     "(%s): the instrumented kernels use more registers, and a program that "
			     "sizes its grid with the occupancy calculator then splits its work "
			     "differently (seen on samples/l2_reuse before it fixed its grid); its counts "
			     "describe that execution, so treat access counts and the software-cache "
			     "ranking with care", what);
		free(what);
	}
	run_output_release(&mon);
	for (i = 0; i < nb; i++)
		run_output_release(&outs[i]);
	free(outs);
	free(base);
}

/* Launches of a kernel above which the monitor instruments a sample only. */
#define MONITOR_SAMPLE_LAUNCHES 64

/* Whether module m has a measured kernel launched too often to instrument
 * every launch (issue 15: the instrumented kernels run 2x-100x slower). */
static int module_is_sampled(const struct profile_ctx *c, const struct profile_module *m)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++)
		if (c->kernels[i].module == m &&
		    c->kernels[i].launches_per_process > MONITOR_SAMPLE_LAUNCHES)
			return 1;
	return 0;
}

/*
 * The launch plan's "monitor" entries for the measured kernels of a
 * sampled module: every launch of the kernels launched at most
 * MONITOR_SAMPLE_LAUNCHES times, --samples launches spread over the run of
 * the others; those launches run the instrumented module (path).
 */
static void monitor_plan_kernels(struct profile_ctx *c, const struct profile_module *m,
				 const char *path, json_t *kernels)
{
	size_t i, j, n;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		/* ordinals count one process's launches (a job's rank's) */
		uint64_t launches = k->launches_per_process, *ord;
		json_t *ords = json_array();

		if (k->module != m)
			continue;
		n = launches > MONITOR_SAMPLE_LAUNCHES ? (c->opt->samples ? c->opt->samples : 3) :
		    (size_t)launches;
		ord = xcalloc(n + 1, sizeof(*ord));
		n = launch_sample_ordinals(launches, n, ord);
		for (j = 0; j < n; j++)
			json_array_append_new(ords, json_integer((json_int_t)ord[j]));
		free(ord);
		json_array_append_new(kernels, json_pack("{s:s, s:{s:s, s:o}}", "name", k->name,
			"monitor", "ptx", path, "ordinals", ords));
	}
}

int profile_monitor(struct profile_ctx *c)
{
	char *dir = capture_layout_run_subst_dir(c->dir, c->run_index);
	char *plan_path = NULL;
	json_t *plan_kernels = json_array();
	json_t **layouts = xcalloc(c->nr_modules + 1, sizeof(*layouts));
	struct ptx_instrument_options io = {
		.threshold = PTX_INSTRUMENT_DEFAULT_THRESHOLD,
		.sector_bytes = c->dm.sector_bytes,
		.line_bytes = c->dm.l1_line_bytes,
	};
	struct run_events ev;
	struct run_result res;
	unsigned run;
	struct run_request req = {
		.subst_dir = dir, .monitor = 1,
		.timing = 1,  /* the instrumentation's cost, for the report */
	};
	size_t i;
	int ret;

	ret = mkdir_p(dir);
	for (i = 0; i < c->nr_modules && !ret; i++) {
		struct profile_module *m = &c->modules[i];
		char *path;

		if (!m->pm)
			continue;
		path = capture_layout_subst_ptx(dir, m->id);
		if (module_is_measured(c, m)) {
			struct strbuf sb = STRBUF_INIT;
			int sampled = module_is_sampled(c, m);
			char *ipath = sampled ? xasprintf("%s/%s.monitor.ptx", dir, m->id) : xstrdup(path);

			ret = ptx_instrument(m->pm, &io, &sb, &layouts[i]);
			if (!ret)
				ret = write_file_atomic(ipath, sb.buf, sb.len);
			strbuf_release(&sb);
			if (!ret && sampled) {
				/* the module runs as it is; the plan swaps in the instrumented one */
				int w = patched_ptx_write_module(m->pm, m->id, NULL, path, m->path);
				char *abs = realpath(ipath, NULL);
				ret = w < 0 ? w : 0;
				monitor_plan_kernels(c, m, abs ? abs : ipath, plan_kernels);
				free(abs);
			}
			free(ipath);
			if (!ret) {
				char *lp = capture_layout_subst_layout(dir, m->id);
				ret = json_file_write(lp, layouts[i]);
				free(lp);
			}
		} else {
			/* the unmeasured modules run as they are */
			int w = patched_ptx_write_module(m->pm, m->id, NULL, path, m->path);
			ret = w < 0 ? w : 0;
		}
		free(path);
	}
	if (ret) {
		/* The instrumentation could not handle this PTX: carry on without it. */
		profile_note(c, "monitor run skipped: %s", error_message());
		ret = 0;
		goto out;
	}
	if (json_array_size(plan_kernels)) {
		json_t *lp = json_pack("{s:s, s:O}", "schema", "cacheadvise.launch_plan/1",
				       "kernels", plan_kernels);
		plan_path = capture_layout_run_launch_plan(c->dir, c->run_index);
		ret = json_file_write(plan_path, lp);
		json_decref(lp);
		if (ret)
			goto out;
		req.launch_plan = plan_path;
	}
	run_events_init(&ev);
	profile_progress(c, "monitor run");
	ret = profile_run_program(c, "monitor", &req, &ev, &res, &run);
	if (!ret && res.status == RUN_OK) {
		c->monitor_run = run;
		c->monitor_output_pending = 1;
		profile_monitor_output(c);
	}
	if (!ret && res.status == RUN_INTERRUPTED)
		ret = error_set(CA_E_INTERRUPTED, "interrupted during the monitor run");
	if (!ret && res.status != RUN_OK) {
		char *log = capture_layout_run_log(NULL, c->run_index - 1);
		profile_note(c, "the monitor run failed (%s): access counts are missing; see %s",
		     res.status == RUN_TIMEOUT ? "timeout" : "non-zero exit", log);
		free(log);
	}
	if (!ret && res.status == RUN_OK) {
		for (i = 0; i < c->nr_kernels; i++) {
			struct profile_kernel *k = &c->kernels[i];
			struct event_kernel *ek = run_events_kernel(&ev, k->name);
			size_t mi = (size_t)(k->module - c->modules);

			if (!ek->nr_counters) {
				profile_note(c, "monitor run: no counters for kernel %s", k->name);
				continue;
			}
			k->monitor_gpu_ns = ek->timed_launches ? (double)ek->gpu_time_ns : -1;
			k->mon = ek->counters;
			k->nr_mon = ek->nr_counters;
			if (ek->counter_launches && ek->counter_launches < k->disc.launches) {
				/* sampled: scale the counts to all launches */
				double scale = (double)k->disc.launches / ek->counter_launches;
				size_t j;

				for (j = 0; j < k->nr_mon; j++)
					k->mon[j] = (uint64_t)((double)k->mon[j] * scale + 0.5);
				k->monitor_gpu_ns = -1;   /* mostly uninstrumented launches */
				profile_note(c, "kernel %s: the monitor instrumented %u of its %u launches; "
					     "its counts are scaled to all of them", k->name,
					     ek->counter_launches, k->disc.launches);
			}
			ek->counters = NULL;
			ek->nr_counters = 0;
			k->layout = json_incref(layouts[mi]);
		}
	}
	run_events_release(&ev);
	profile_progress(c, "monitor run");
out:
	c->monitored = 1;
	for (i = 0; i < c->nr_modules; i++)
		json_decref(layouts[i]);
	free(layouts);
	free(dir);
	free(plan_path);
	json_decref(plan_kernels);
	return ret;
}

/*
 * The register-cache detector (analysis/stencil_detect.h) on the kernel's
 * PTX. Adopting a register cache is a source rewrite the tool cannot apply,
 * so the hint is a candidate; bench/results/device.md holds what it did on
 * the stencil sample.
 */
static void register_cache_hints(struct profile_ctx *c, struct profile_kernel *k)
{
	struct stencil_detect sd;
	json_t *all, *mine;
	size_t i;

	stencil_detect_init(&sd);
	if (stencil_detect_run(&sd, k->module->pm)) {
		profile_note(c, "kernel %s: the register-cache detector failed: %s", k->name, error_message());
		stencil_detect_release(&sd);
		return;
	}
	all = stencil_detect_to_json(&sd);
	mine = json_array();
	/* stencil_detect_to_json writes one object per hint, in order */
	for (i = 0; i < sd.nr_hints; i++)
		if (!strcmp(sd.hints[i].function, k->name))
			json_array_append(mine, json_array_get(all, i));
	if (json_array_size(mine))
		json_object_set_new(k->json, "register_cache", json_pack("{s:s, s:o, s:s}",
			"status", "candidate, not verified on this program", "hints", mine,
			"measured_on_sample", "register cache vs plain loads on the stencil sample: "
			"0.86-0.94x on an H200 (L1 served the plain kernel's overlap), vs shared "
			"memory 1.03-1.12x: bench/results/device.md"));
	else
		json_decref(mine);
	json_decref(all);
	stencil_detect_release(&sd);
}

void profile_apply_monitor(struct profile_ctx *c, struct profile_kernel *k)
{
	struct monitor_counts mc;
	struct softcache_rank rank;
	const struct capture_kernel *ck;

	if (k->monitor_gpu_ns >= 0 && k->layout)
		json_object_set_new(k->json, "monitor_gpu_time_ns", json_real(k->monitor_gpu_ns));
	if (k->layout && k->mon) {
		/* the kernel's entry typed, its loads' sources the objects written */
		const struct capture_kernel *typed = profile_kernel_read(c, k);

		monitor_counts_init(&mc);
		if (typed && (monitor_counts_read(&mc, k->layout, k->mon, k->nr_mon) ||
			      monitor_counts_update_kernel(&mc, typed, 1)))
			profile_note(c, "kernel %s: monitor counters unusable: %s", k->name, error_message());
		monitor_counts_release(&mc);
	}
	register_cache_hints(c, k);
	/* the kernel as `report` will read it: through the capture's reader */
	ck = profile_kernel_read(c, k);
	if (!ck)
		return;
	softcache_rank_init(&rank);
	if (!softcache_rank_from_capture(&rank, ck, &c->dm))
		json_object_set_new(k->json, "software_cache", softcache_rank_to_json(&rank));
	else
		profile_note(c, "kernel %s: no software-cache ranking: %s", k->name, error_message());
	softcache_rank_release(&rank);
}
