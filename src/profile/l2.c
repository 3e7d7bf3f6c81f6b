/*
 * `profile`'s L2 persistence step (issue 8): windows advised from the
 * capture (analysis/l2_advise.c) are applied by the injection library
 * around the launches of the kernels that read the buffer, measured against
 * the baseline, and kept only when the program's GPU time falls by more
 * than the baseline-against-baseline spread with unchanged output.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json_file.h"
#include "analysis/capture_model.h"
#include "analysis/l2_advise.h"
#include "analysis/plan.h"
#include "base/xalloc.h"
#include "analysis/launch_sampling.h"
#include "collectors/gpu.h"
#include "emitters/capture_layout.h"
#include "analysis/plan_query.h"
#include "src/profile/internal.h"

/* The least cut in DRAM bytes read for a window to be timed at all. */
#define L2_MIN_DRAM_CUT 0.02

/*
 * With --measure launches, for a program with a kernel launched more than 64
 * times: a launch plan that counts --samples launches of every kernel the
 * discovery run saw (all of them where there are fewer),
 * so that the DRAM-measuring runs cost about a native run instead of one
 * profiled launch after another (issue 15). Returns its path (caller
 * frees) or NULL.
 */
static char *sampled_plan(struct profile_ctx *c)
{
	json_t *kernels = json_array(), *plan;
	char *path = capture_layout_run_launch_plan(c->dir, c->run_index);
	size_t i, j, n, want = c->opt->samples ? c->opt->samples : 3;
	uint64_t *ord = xcalloc(want + 1, sizeof(*ord));

	for (i = 0; i < c->nr_launched; i++) {
		json_t *ords = json_array();
		n = launch_sample_ordinals(c->launched[i].launches, want, ord);
		for (j = 0; j < n; j++)
			json_array_append_new(ords, json_integer((json_int_t)ord[j]));
		json_array_append_new(kernels, json_pack("{s:s, s:o}", "name", c->launched[i].name,
							 "profile_ordinals", ords));
	}
	free(ord);
	plan = json_pack("{s:s, s:o}", "schema", "cacheadvise.launch_plan/1", "kernels", kernels);
	if (json_file_write(path, plan)) {
		free(path);
		path = NULL;
	}
	json_decref(plan);
	return path;
}

/* Whether a kernel was launched more than 64 times (the monitor's rule,
 * monitor.c): only then are the DRAM-measuring runs sampled. */
static int many_launches(struct profile_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nr_launched; i++)
		if (c->launched[i].launches > 64)
			return 1;
	return 0;
}

/* A kernel's DRAM bytes read in the run: summed, or sampled and scaled. */
static double kernel_dram(const struct event_kernel *ek)
{
	double sum, samples;

	if (event_kernel_variant(ek, "own", "dram_bytes_read", &sum, &samples) && samples > 0)
		return sum * (double)ek->launches / samples;
	return event_kernel_metric(ek, "dram_bytes_read");
}

/*
 * DRAM bytes read by all kernels of one counters run, the program's modules
 * unpatched (subst_dir) and, when windows_file is given, the window applied
 * (NAN when it failed), and in *gpu_ns the GPU time of all its kernels
 * (NAN unknown). The DRAM metric needs one counter pass, so a profiled launch runs once and the
 * run's kernel times stay comparable with a baseline run's.
 */
static double dram_of_run(struct profile_ctx *c, const char *subst_dir, const char *windows_file,
			  double *gpu_ns)
{
	struct run_request req = {
		.subst_dir = subst_dir, .metrics = 1, .metric_list = "dram__bytes_read.sum",
		.timing = 1, .l2_windows = windows_file,
	};
	struct run_events ev;
	struct run_result res;
	double sum = NAN;
	char *plan = c->opt->measure_runs || !many_launches(c) ? NULL : sampled_plan(c);
	size_t i;

	*gpu_ns = NAN;
	req.launch_plan = plan;
	run_events_init(&ev);
	if (!profile_run_program(c, windows_file ? "l2-metrics" : "l2-metrics-baseline", &req, &ev,
				 &res, NULL) && res.status == RUN_OK) {
		sum = 0;
		*gpu_ns = 0;
		for (i = 0; i < ev.nr_kernels; i++) {
			double d = kernel_dram(&ev.kernels[i]);
			sum += isnan(d) ? 0 : d;
			*gpu_ns += (double)ev.kernels[i].gpu_time_ns;
		}
		if (!(*gpu_ns > 0))
			*gpu_ns = NAN;
	}
	run_events_release(&ev);
	free(plan);
	return sum;
}

/*
 * The GPU time of all kernels in the profile's earlier baseline runs timed
 * without counters, appended to v (at most max); returns how many. Those
 * are verification's "verify-baseline" runs, and the in-run capture passes
 * with a module per variant, whose program launches (the library's replays
 * left out) ran the unpatched modules.
 */
static size_t earlier_baselines(struct profile_ctx *c, double *v, size_t n, size_t max)
{
	size_t i, k;

	for (i = 0; i < c->nr_runs; i++) {
		const struct capture_run *r = &c->runs[i];
		const char *variant = r->variant, *events = r->events;
		int capture;
		struct run_events ev;
		char *path;
		double sum = 0;

		if (n >= max || !variant || !events || !r->status || strcmp(r->status, "ok"))
			continue;
		/* timings compare on one GPU: --gpus times on the first */
		if (r->has_gpu && c->opt->nr_gpus && r->gpu != c->opt->gpus[0])
			continue;
		capture = !strcmp(variant, "capture") && profile_pass_used_modules(c, (unsigned)r->index);
		if (!capture && strcmp(variant, "baseline") && strcmp(variant, "verify-baseline"))
			continue;
		path = xasprintf("%s/%s", c->dir, events);
		run_events_init(&ev);
		if (!run_events_load(&ev, path)) {
			for (k = 0; k < ev.nr_kernels; k++)
				sum += (double)(capture ? ev.kernels[k].program_gpu_time_ns :
						ev.kernels[k].gpu_time_ns);
			if (sum > 0)
				v[n++] = sum;
		} else {
			error_clear();
		}
		run_events_release(&ev);
		free(path);
	}
	return n;
}

/*
 * The verdict on a window from its one DRAM-measuring run when that run is
 * slower than every baseline run of the profile by more than their spread:
 * a window that loses this clearly is not timed in pairs (FACTS.md: windows
 * measured 0.52x-0.76x on Hopper). NULL when the run decides nothing.
 */
static json_t *screened_slower(const double *base, size_t nb, double adv)
{
	double lo = INFINITY, hi = 0, sorted[16], med, spread;
	size_t i;
	json_t *bj, *v;

	if (nb < 2 || isnan(adv))
		return NULL;
	for (i = 0; i < nb; i++) {
		lo = fmin(lo, base[i]);
		hi = fmax(hi, base[i]);
		sorted[i] = base[i];
	}
	med = ab_median(sorted, nb);
	spread = (hi - lo) / med;
	if (!(adv > hi * (1 + spread)))
		return NULL;
	bj = json_array();
	for (i = 0; i < nb; i++)
		json_array_append_new(bj, json_real(base[i]));
	v = json_pack("{s:b, s:s, s:s, s:{s:f, s:f, s:f}, s:f, s:[f], s:i, s:{s:o, s:[f]}}",
		      "kept", 0, "reason", "slower than the baseline",
		      "method", "screened: its DRAM-measuring run against the profile's baseline runs",
		      "speedup", "min", lo / adv, "median", med / adv, "max", hi / adv,
		      "noise", spread, "advice_ns", adv, "ended_after_rounds", 1,
		      "program", "baseline_gpu_ns", bj, "advice_gpu_ns", adv);
	return v;
}

/* A window ended before its last planned run: the runs it did not need
 * come off the count (the ETA only falls). */
static void window_done(struct profile_ctx *c, unsigned window_end)
{
	unsigned unused = window_end > c->runs_done ? window_end - c->runs_done : 0;

	if (c->runs_planned >= c->runs_done + unused)
		c->runs_planned -= unused;
}

int profile_l2(struct profile_ctx *c)
{
	json_t *l2, *best = NULL;
	struct capture_l2 t;
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 1;
	double best_speedup = 0, base_dram = NAN, base_ns[16], gpu_ns;
	size_t nr_base = 0;
	int with_priorities;
	unsigned per_window, planned_before;
	size_t nr_timed;
	char why[256], *base_dir = NULL;
	size_t i;
	int ret = 0;

	memset(&t, 0, sizeof(t));
	if (gpu_shared_partitioned(why, sizeof(why)))
		json_object_set_new(c->device_json, "partitioned", json_string(why));
	{
		struct capture cap;

		capture_init(&cap);
		ret = capture_from_json(&cap, c->capture, CAPTURE_LAYOUT_CAPTURE);
		l2 = ret ? NULL : l2_advise(&cap);
		capture_release(&cap);
	}
	if (!l2)
		return CA_E_INPUT;
	json_object_set_new(c->capture, "l2", l2);
	/* the section typed, its windows' sources the objects in l2 */
	if (capture_l2_from_json(&t, l2, CAPTURE_LAYOUT_CAPTURE)) {
		capture_l2_release(&t);
		return CA_E_INTERNAL;
	}
	if (!t.status || strcmp(t.status, "advised")) {
		capture_l2_release(&t);
		return profile_write_capture(c, "complete");
	}

	/*
	 * The step's runs are counted before the first (issue 39): the
	 * baseline's DRAM run, then each window's DRAM run and its A/B rounds.
	 * A window is timed when its DRAM run and two screening rounds fit in
	 * the budget (most windows end there: DRAM reads that do not fall, or
	 * slower in both rounds), best-ranked first; the count shown is every
	 * timed window's runs, never grows, and falls when a window ends early.
	 */
	per_window = 1 + 2 * rounds;
	nr_timed = profile_budget_units(c, 1, 1 + 2 * 2, t.nr_windows);
	/* at the least: the baseline's DRAM run, a window's and two screening rounds */
	if (!nr_timed && !profile_budget_allows(c, "the L2 window step", 6)) {
		json_object_set_new(l2, "reason", json_string(
			"windows were advised but not timed: beyond the profile's budget (--budget)"));
		capture_l2_release(&t);
		return profile_write_capture(c, "complete");
	}
	/*
	 * A window is advised only where it beats the per-load L2 priorities on
	 * the same data (issue 26): with priorities kept, the window's runs and
	 * their baseline both run the program with them, so a kept window adds
	 * to them. Else both run the program as built.
	 */
	with_priorities = c->plan && plan_has_l2(c->plan);
	base_dir = profile_write_substitutes(c, "l2-baseline", with_priorities ? c->plan : NULL);
	if (!base_dir) {
		capture_l2_release(&t);
		return CA_E_IO;
	}
	if (with_priorities)
		json_object_set_new(l2, "baseline", json_string("the kept per-load L2 priorities"));
	if (!nr_timed)
		nr_timed = 1;    /* the first window fits alone, as the check above said */
	c->runs_planned = c->runs_done + 1 + (unsigned)nr_timed * per_window;
	c->runs_planned_fixed = 1;
	base_dram = dram_of_run(c, base_dir, NULL, &gpu_ns);
	/*
	 * With in-run capture the baseline runs carry no counters, and where
	 * the DRAM runs count only --samples launches a kernel (a kernel
	 * launched more than 64 times) their kernel times are those of a plain
	 * run: all of these times are baselines for the window's DRAM run (not
	 * with priorities: the earlier runs ran without them).
	 */
	if (!c->opt->measure_runs && many_launches(c) && !with_priorities) {
		if (!isnan(gpu_ns))
			base_ns[nr_base++] = gpu_ns;
		nr_base = earlier_baselines(c, base_ns, nr_base, 16);
	}
	json_object_set_new(l2, "baseline_dram_bytes", isnan(base_dram) ? json_null() : json_real(base_dram));
	for (i = 0; i < t.nr_windows; i++) {
		const struct capture_l2_window *tw = &t.windows[i];
		json_t *w = capture_section_json(tw->source);   /* where its verification goes */
		json_t *file_doc = l2_advise_window_file(tw), *ver;
		char *file = capture_layout_l2_windows(c->dir, tw->variant ? tw->variant : "window");
		struct run_request base = { .subst_dir = base_dir, .timing = 1 };
		struct run_request adv = { .subst_dir = base_dir, .timing = 1, .l2_windows = file };
		struct ab_result ab;
		double dram;
		int kept = 0;

		if (i >= nr_timed) {
			if (i == nr_timed)   /* noted once, with what the rest would take */
				profile_budget_allows(c, "the timing of the other L2 windows",
						      (unsigned)(t.nr_windows - nr_timed) * per_window);
			json_object_set_new(w, "verification", json_pack("{s:b, s:s}", "kept", 0,
				"reason", "not timed: beyond the profile's budget (--budget)"));
			json_decref(file_doc);
			free(file);
			continue;
		}
		planned_before = c->runs_done + per_window;   /* where this window ends at most */
		ret = json_file_write(file, file_doc);
		if (ret) {
			json_decref(file_doc);
			free(file);
			break;
		}
		/* a window that leaves DRAM reads as they are cannot save time */
		dram = dram_of_run(c, base_dir, file, &gpu_ns);
		ver = screened_slower(base_ns, nr_base, gpu_ns);
		if (ver) {
			json_object_set_new(ver, "dram_bytes", isnan(dram) ? json_null() : json_real(dram));
			json_object_set_new(w, "verification", ver);
			json_decref(file_doc);
			free(file);
			profile_write_capture(c, "complete");
			window_done(c, planned_before);
			continue;
		}
		if (!isnan(dram) && !isnan(base_dram) && dram > base_dram * (1 - L2_MIN_DRAM_CUT)) {
			char why[160];

			snprintf(why, sizeof(why), "DRAM reads fell by less than %.0f%% (%.3g to %.3g bytes): "
				 "not timed", 100 * L2_MIN_DRAM_CUT, base_dram, dram);
			ver = json_pack("{s:b, s:s, s:f}", "kept", 0, "reason", why, "dram_bytes", dram);
			json_object_set_new(w, "verification", ver);
			json_decref(file_doc);
			free(file);
			profile_write_capture(c, "complete");
			window_done(c, planned_before);
			continue;
		}
		/* a window slower in both of the first two rounds is not timed further */
		ret = profile_ab_runs_screened(c, "l2", &base, &adv, rounds, &ab);
		if (ret) {
			ab_result_release(&ab);
			json_decref(file_doc);
			free(file);
			break;
		}
		/* Judged on all kernels' GPU time: a window can slow the others. */
		ver = ab_verdict(ab.base_total, ab.adv_total, ab.rounds, &ab, &kept);
		if (ab.rounds < rounds)
			json_object_set_new(ver, "ended_after_rounds", json_integer(ab.rounds));
		json_object_set_new(ver, "program", ab_program_json(&ab));
		json_object_set(ver, "output", ab.output);
		json_object_set_new(ver, "dram_bytes", isnan(dram) ? json_null() : json_real(dram));
		json_object_set_new(w, "verification", ver);
		if (kept) {
			double sp = ab_verdict_median(ver);
			if (sp > best_speedup) {
				best_speedup = sp;
				json_decref(best);
				best = json_incref(file_doc);
				json_object_set_new(l2, "kept", tw->variant ? json_string(tw->variant) :
						    json_null());
			}
		}
		ab_result_release(&ab);
		json_decref(file_doc);
		free(file);
		window_done(c, planned_before);
		profile_write_capture(c, "complete");
	}
	if (!ret) {
		if (best) {
			if (!c->plan->extra)
				c->plan->extra = json_object();
			json_object_set(c->plan->extra, "l2_windows", best);
		} else {
			json_object_set_new(l2, "kept", json_null());
		}
		ret = profile_write_capture(c, "complete");
	}
	c->runs_planned_fixed = 0;
	json_decref(best);
	free(base_dir);
	capture_l2_release(&t);
	return ret;
}
