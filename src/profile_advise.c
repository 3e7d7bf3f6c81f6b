/*
 * The steps of `profile` after the variant runs: the monitor run, analysis
 * (graph + solvers -> plan), the files, and verification (DESIGN.md
 * "Keeping advice").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/advise.h"
#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/error.h"
#include "base/json_file.h"
#include "analysis/monitor_counts.h"
#include "analysis/plan.h"
#include "analysis/ptx_instrument.h"
#include "analysis/softcache_rank.h"
#include "analysis/stencil_detect.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/capture_write.h"
#include "src/profile_steps.h"


static int module_is_measured(struct profile_ctx *c, const struct profile_module *m)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++)
		if (c->kernels[i].module == m)
			return 1;
	return 0;
}

/* ---- monitor ------------------------------------------------------------ */

/* Whether a run printed what the discovery (else the first baseline) run printed. */
static int same_output_as_baseline(struct profile_ctx *c, json_t *run)
{
	json_t *runs = json_object_get(c->capture, "runs"), *r;
	const char *mine = json_string_value(json_object_get(run, "stdout_sha256"));
	size_t i;

	json_array_foreach(runs, i, r) {
		const char *v = json_string_value(json_object_get(r, "variant"));

		/* the discovery run stands in when the monitor run comes first */
		if (strcmp(v, "baseline") && strcmp(v, "discovery"))
			continue;
		return mine && !strcmp(mine, json_string_value(json_object_get(r, "stdout_sha256")) ?
					   json_string_value(json_object_get(r, "stdout_sha256")) : "");
	}
	return 1;
}

int profile_monitor(struct profile_ctx *c)
{
	char *dir = xasprintf("%s/runs/%03u.subst", c->dir, c->run_index);
	json_t **layouts = xcalloc(c->nr_modules + 1, sizeof(*layouts));
	struct ptx_instrument_options io = {
		.threshold = PTX_INSTRUMENT_DEFAULT_THRESHOLD,
		.sector_bytes = c->dm.sector_bytes,
		.line_bytes = c->dm.l1_line_bytes,
	};
	struct run_events ev;
	struct run_result res;
	json_t *rj = NULL;
	char *env[4];
	size_t i;
	int ret;

	ret = mkdir_p(dir);
	for (i = 0; i < c->nr_modules && !ret; i++) {
		struct profile_module *m = &c->modules[i];
		char *path;

		if (!m->pm)
			continue;
		path = xasprintf("%s/%s.ptx", dir, m->id);
		if (module_is_measured(c, m)) {
			struct strbuf sb = STRBUF_INIT;
			ret = ptx_instrument(m->pm, &io, &sb, &layouts[i]);
			if (!ret)
				ret = write_file_atomic(path, sb.buf, sb.len);
			strbuf_release(&sb);
			if (!ret) {
				char *lp = xasprintf("%s/%s.layout.json", dir, m->id);
				ret = json_file_write(lp, layouts[i]);
				free(lp);
			}
		} else if (symlink(m->path, path)) {
			ret = error_set(CA_E_IO, "cannot link '%s': %s", path, strerror(errno));
		}
		free(path);
	}
	if (ret) {
		/* The instrumentation could not handle this PTX: carry on without it. */
		profile_note(c, "monitor run skipped: %s", error_message());
		ret = 0;
		goto out;
	}
	env[0] = xasprintf("CACHEADVISE_SUBST=%s", dir);
	env[1] = "CACHEADVISE_MONITOR=1";
	env[2] = "CACHEADVISE_TIMING=1";  /* the instrumentation's cost, for the report */
	env[3] = NULL;
	run_events_init(&ev);
	profile_progress(c, "monitor run");
	ret = profile_run_program(c, "monitor", env, &ev, &res, &rj);
	free(env[0]);
	if (!ret && res.status == RUN_OK && !same_output_as_baseline(c, rj))
		profile_note(c, "the instrumented (monitor) run printed other output than the baseline: the "
		     "instrumented kernels use more registers, and a program that sizes its grid "
		     "with the occupancy calculator then splits its work differently (seen on "
		     "samples/l2_reuse before it fixed its grid); its counts describe that "
		     "execution, so treat access counts and the software-cache ranking with care");
	if (!ret && res.status == RUN_INTERRUPTED)
		ret = error_set(CA_E_INTERRUPTED, "interrupted during the monitor run");
	if (!ret && res.status != RUN_OK)
		profile_note(c, "the monitor run failed (%s): access counts are missing; see runs/%03u.log",
		     res.status == RUN_TIMEOUT ? "timeout" : "non-zero exit", c->run_index - 1);
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
	json_t *all, *h, *mine;
	size_t i;

	stencil_detect_init(&sd);
	if (stencil_detect_run(&sd, k->module->pm)) {
		profile_note(c, "kernel %s: the register-cache detector failed: %s", k->name, error_message());
		stencil_detect_release(&sd);
		return;
	}
	all = stencil_detect_to_json(&sd);
	mine = json_array();
	json_array_foreach(all, i, h)
		if (!strcmp(json_string_value(json_object_get(h, "kernel")), k->name))
			json_array_append(mine, h);
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

	if (k->monitor_gpu_ns >= 0 && k->layout)
		json_object_set_new(k->json, "monitor_gpu_time_ns", json_real(k->monitor_gpu_ns));
	if (k->layout && k->mon) {
		monitor_counts_init(&mc);
		if (monitor_counts_read(&mc, k->layout, k->mon, k->nr_mon) ||
		    monitor_counts_update_kernel(&mc, k->json, 1))
			profile_note(c, "kernel %s: monitor counters unusable: %s", k->name, error_message());
		monitor_counts_release(&mc);
	}
	register_cache_hints(c, k);
	softcache_rank_init(&rank);
	if (!softcache_rank_from_capture(&rank, k->json, json_object_get(c->capture, "device")))
		json_object_set_new(k->json, "software_cache", softcache_rank_to_json(&rank));
	else
		profile_note(c, "kernel %s: no software-cache ranking: %s", k->name, error_message());
	softcache_rank_release(&rank);
}

/* ---- analysis and files ------------------------------------------------- */

/* graphs/<kernel>.json: each kernel's traffic reduction graph, as `solve` reads it. */
static int write_graphs(struct profile_ctx *c, json_t *analysis)
{
	json_t *k;
	size_t i;

	json_array_foreach(json_object_get(analysis, "kernels"), i, k) {
		const char *name = json_string_value(json_object_get(k, "name"));
		json_t *g = json_object_get(k, "graph");
		char *path;
		int ret;

		if (!name || !g || strchr(name, '/'))
			continue;
		path = xasprintf("%s/graphs/%s.json", c->dir, name);
		ret = json_file_write(path, g);
		free(path);
		if (ret)
			return ret;
	}
	return 0;
}

int profile_analyse_and_emit(struct profile_ctx *c)
{
	struct advise_options ao;
	json_t *analysis = NULL;
	int ret;

	advise_options_init(&ao);
	ao.model = !strcmp(c->opt->model, "classic") ? ADVISE_MODEL_CLASSIC : ADVISE_MODEL_SECTOR;
	if (!c->plan) {
		c->plan = xcalloc(1, sizeof(*c->plan));
		plan_init(c->plan);
		ret = advise_capture(c->capture, &ao, c->plan, &analysis);
		if (ret)
			return error_prefix(ret, "cannot analyse the capture in '%s'", c->dir);
		ret = write_graphs(c, analysis);
		json_decref(analysis);
		if (ret)
			return ret;
	}
	ret = capture_write_all(c->dir, c->capture, c->plan);
	if (ret)
		return error_prefix(ret, "cannot write the results into '%s'", c->dir);
	return 0;
}

/* ---- verification ------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static json_t *stats_json(double *v, size_t n)
{
	double med;

	if (!n)
		return json_null();
	med = median(v, n);
	return json_pack("{s:f, s:f, s:f}", "min", v[0], "median", med, "max", v[n - 1]);
}

static json_t *array_json(const double *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, isnan(v[i]) ? json_null() : json_real(v[i]));
	return a;
}

/* Removes every load of function fn from the plan (its advice is rejected). */
static void plan_drop_function(struct plan *p, const char *fn)
{
	size_t m, f;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++)
			if (!strcmp(p->modules[m].functions[f].name, fn))
				p->modules[m].functions[f].nr_loads = 0;
}

static int plan_has_loads(const struct plan *p)
{
	size_t m, f;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++)
			if (p->modules[m].functions[f].nr_loads)
				return 1;
	return 0;
}

static int plan_mentions(const struct plan *p, const char *fn)
{
	size_t m, f;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++)
			if (!strcmp(p->modules[m].functions[f].name, fn) &&
			    p->modules[m].functions[f].nr_loads)
				return 1;
	return 0;
}

/* The SHA-256 of --compare FILE after a run ("" when it cannot be read). */
static void compare_hash(struct profile_ctx *c, char out[65])
{
	out[0] = '\0';
	if (c->opt->compare_file && digest_file_sha256_hex(c->opt->compare_file, out))
		out[0] = '\0';
}

void ab_result_release(struct ab_result *ab)
{
	free(ab->base_ns);
	free(ab->adv_ns);
	free(ab->base_total);
	free(ab->adv_total);
	free(ab->base_wall);
	free(ab->adv_wall);
	memset(ab, 0, sizeof(*ab));
}

int profile_ab_runs(struct profile_ctx *c, const char *name, const char *base_dir,
		    char *const *adv_env, unsigned rounds, struct ab_result *ab)
{
	size_t nk = c->nr_kernels, i;
	char base_out[65] = "", base_cmp[65] = "";
	unsigned r;
	int ret = 0;

	memset(ab, 0, sizeof(*ab));
	ab->rounds = rounds;
	ab->base_ns = xcalloc(nk * rounds + 1, sizeof(double));
	ab->adv_ns = xcalloc(nk * rounds + 1, sizeof(double));
	ab->base_total = xcalloc(rounds + 1, sizeof(double));
	ab->adv_total = xcalloc(rounds + 1, sizeof(double));
	ab->base_wall = xcalloc(rounds + 1, sizeof(double));
	ab->adv_wall = xcalloc(rounds + 1, sizeof(double));
	ab->outputs_equal = 1;
	ab->baseline_stable = 1;
	c->runs_planned = c->runs_done + 2 * rounds;
	for (r = 0; r < rounds && !ret; r++) {
		int adv;
		for (adv = 0; adv < 2 && !ret; adv++) {
			char *env[8], hex_cmp[65], label[64];
			struct run_events ev;
			struct run_result res;
			json_t *rj = NULL;
			const char *hex;
			double total = 0;
			size_t n = 0;

			int own_subst = 0;

			for (i = 0; adv && adv_env && adv_env[i] && n < 6; i++) {
				own_subst |= !strncmp(adv_env[i], "CACHEADVISE_SUBST=", 18);
				env[n++] = xstrdup(adv_env[i]);
			}
			if (!own_subst)
				env[n++] = xasprintf("CACHEADVISE_SUBST=%s", base_dir);
			env[n++] = xstrdup("CACHEADVISE_TIMING=1");
			env[n] = NULL;
			snprintf(label, sizeof(label), "%s-%s", name, adv ? "advice" : "baseline");
			run_events_init(&ev);
			profile_progress(c, label);
			ret = profile_run_program(c, label, env, &ev, &res, &rj);
			for (i = 0; i < n; i++)
				free(env[i]);
			if (!ret && res.status == RUN_INTERRUPTED)
				ret = error_set(CA_E_INTERRUPTED, "interrupted during %s", label);
			if (!ret && res.status != RUN_OK) {
				if (!adv) {
					ret = profile_run_failed(c, label, &res);
				} else {
					ab->outputs_equal = 0;
					ab->reject_reason = "the program failed with the advice applied";
				}
			}
			if (ret) {
				run_events_release(&ev);
				break;
			}
			hex = json_string_value(json_object_get(rj, "stdout_sha256"));
			if (!hex)
				hex = "";
			compare_hash(c, hex_cmp);
			if (!adv) {
				if (!base_out[0]) {
					snprintf(base_out, sizeof(base_out), "%s", hex);
					snprintf(base_cmp, sizeof(base_cmp), "%s", hex_cmp);
				} else if (strcmp(base_out, hex) || strcmp(base_cmp, hex_cmp)) {
					ab->baseline_stable = 0;
				}
			} else if (res.status == RUN_OK &&
				   (strcmp(base_out, hex) || strcmp(base_cmp, hex_cmp))) {
				ab->outputs_equal = 0;
				if (!ab->reject_reason)
					ab->reject_reason = c->opt->compare_file && strcmp(base_cmp, hex_cmp) ?
						"the --compare file changed with the advice applied" :
						"the program's output changed with the advice applied";
			}
			(adv ? ab->adv_wall : ab->base_wall)[r] = res.wall_seconds;
			for (i = 0; i < ev.nr_kernels; i++)
				total += (double)ev.kernels[i].gpu_time_ns;
			(adv ? ab->adv_total : ab->base_total)[r] = total;
			for (i = 0; i < nk; i++) {
				struct event_kernel *ek = run_events_kernel(&ev, c->kernels[i].name);
				(adv ? ab->adv_ns : ab->base_ns)[i * rounds + r] =
					ek->timed_launches ? (double)ek->gpu_time_ns : NAN;
			}
			run_events_release(&ev);
			profile_progress(c, label);
		}
	}
	return ret;
}

json_t *ab_verdict(const double *b, const double *p, unsigned rounds, const struct ab_result *ab,
		   int *kept)
{
	double sp[64], bs[64], noise, med_sp, med_b;
	size_t n = 0, nb = 0, j;
	const char *why;
	json_t *v;

	for (j = 0; j < rounds && j < 64; j++) {
		if (!isnan(b[j]) && b[j] > 0)
			bs[nb++] = b[j];
		if (!isnan(b[j]) && !isnan(p[j]) && p[j] > 0)
			sp[n++] = b[j] / p[j];
	}
	v = json_pack("{s:o, s:o}", "baseline_ns", array_json(b, rounds),
		      "advice_ns", array_json(p, rounds));
	json_object_set_new(v, "speedup", stats_json(sp, n));
	med_b = median(bs, nb);
	med_sp = median(sp, n);
	/* baseline against baseline: the relative spread of the baseline times */
	noise = nb >= 2 && med_b > 0 ? (bs[nb - 1] - bs[0]) / med_b : NAN;
	json_object_set_new(v, "noise", isnan(noise) ? json_null() : json_real(noise));
	if (!n) {
		*kept = 0;
		why = "no kernel times were measured";
	} else if (!ab->outputs_equal) {
		*kept = 0;
		why = ab->reject_reason;
	} else if (isnan(noise)) {
		*kept = 0;
		why = "the baseline noise could not be measured (use --repeat 2 or more)";
	} else if (med_sp - 1 > noise) {
		*kept = 1;
		why = "the median speedup exceeds the baseline-against-baseline spread";
	} else {
		*kept = 0;
		why = med_sp < 1 ? "slower than the baseline" :
		      "the speedup is within the baseline-against-baseline spread";
	}
	json_object_set_new(v, "kept", json_boolean(*kept));
	json_object_set_new(v, "reason", json_string(why));
	return v;
}

json_t *ab_program_json(const struct ab_result *ab)
{
	double sp[64], tsp[64];
	size_t n = 0, nt = 0;
	unsigned r;
	json_t *v;

	for (r = 0; r < ab->rounds && r < 64; r++) {
		if (ab->adv_wall[r] > 0)
			sp[n++] = ab->base_wall[r] / ab->adv_wall[r];
		if (ab->adv_total[r] > 0)
			tsp[nt++] = ab->base_total[r] / ab->adv_total[r];
	}
	v = json_pack("{s:o, s:o, s:o, s:o, s:o}",
		      "baseline_wall_seconds", array_json(ab->base_wall, ab->rounds),
		      "advice_wall_seconds", array_json(ab->adv_wall, ab->rounds),
		      "baseline_gpu_ns", array_json(ab->base_total, ab->rounds),
		      "advice_gpu_ns", array_json(ab->adv_total, ab->rounds),
		      "wall_speedup", stats_json(sp, n));
	json_object_set_new(v, "gpu_speedup", stats_json(tsp, nt));
	return v;
}

/*
 * The sector model counts traffic, not time: where the capture's
 * all-bypassed run was clearly faster than the verified advice, say so, so
 * the reader can time that plan (the oracle does it for small kernels).
 */
static void note_faster_bypass(struct profile_ctx *c, const struct profile_kernel *k, json_t *verdict)
{
	double base = json_number_value(json_object_get(json_object_get(k->counters, "baseline"), "duration_ns"));
	double byp = json_number_value(json_object_get(json_object_get(k->counters, "all_bypassed"), "duration_ns"));
	double adv = json_number_value(json_object_get(json_object_get(verdict, "speedup"), "median"));
	double noise = json_number_value(json_object_get(verdict, "noise"));
	json_int_t run = json_integer_value(json_object_get(json_object_get(k->counters, "all_bypassed"), "run"));

	if (base <= 0 || byp <= 0 || adv <= 0 || base / byp <= adv * (1.0 + 2.0 * noise + 0.01))
		return;
	profile_note(c, "kernel %s: the capture timed every measured load bypassed at %.3fx the baseline, "
	     "faster than the verified advice (%.3fx): the traffic model saves L2 sectors where the "
	     "clock prefers fewer L1 allocations; its PTX is in runs/%03d.subst/ (time it with "
	     "CACHEADVISE_SUBST, see docs/injection.md), or profile with --oracle", k->name,
	     base / byp, adv, (int)run);
}

int profile_verify(struct profile_ctx *c)
{
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 1;
	size_t i;
	char *base_dir = NULL, *plan_dir = NULL, *env[2];
	struct ab_result ab;
	json_t *ver, *kernels;
	int ret = 0;

	memset(&ab, 0, sizeof(ab));
	if (!plan_has_loads(c->plan)) {
		json_object_set_new(c->capture, "verification",
			json_pack("{s:s, s:b}", "status", "nothing to verify: the plan changes no load",
				  "kept", 0));
		return 0;
	}
	base_dir = profile_write_substitutes(c, "verify-baseline", NULL);
	plan_dir = profile_write_substitutes(c, "verify-plan", c->plan);
	if (!base_dir || !plan_dir) {
		ret = CA_E_IO;
		goto out;
	}
	/* The advice runs are the baseline runs with the plan's PTX instead. */
	env[0] = xasprintf("CACHEADVISE_SUBST=%s", plan_dir);
	env[1] = NULL;
	ret = profile_ab_runs(c, "verify", base_dir, env, rounds, &ab);
	free(env[0]);
	if (ret)
		goto out;
	ver = json_object();
	kernels = json_array();
	json_object_set_new(ver, "repeat", json_integer(rounds));
	json_object_set_new(ver, "order", json_string("baseline, advice, alternating"));
	json_object_set_new(ver, "output_identical", json_boolean(ab.outputs_equal));
	json_object_set_new(ver, "baseline_output_stable", json_boolean(ab.baseline_stable));
	if (c->opt->compare_file)
		json_object_set_new(ver, "compare_file", json_string(c->opt->compare_file));
	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		int kept;
		json_t *kj;

		if (!plan_mentions(c->plan, k->name))
			continue;
		kj = ab_verdict(&ab.base_ns[i * rounds], &ab.adv_ns[i * rounds], rounds, &ab, &kept);
		json_object_set_new(kj, "name", json_string(k->name));
		json_array_append_new(kernels, kj);
		json_object_set(k->json, "verification", kj);
		note_faster_bypass(c, k, kj);
		if (!kept)
			plan_drop_function(c->plan, k->name);
	}
	json_object_set_new(ver, "kernels", kernels);
	json_object_set_new(ver, "program", ab_program_json(&ab));
	json_object_set_new(ver, "kept", json_boolean(plan_has_loads(c->plan)));
	json_object_set_new(ver, "status", json_string("verified"));
	json_object_set_new(c->capture, "verification", ver);
	ret = profile_write_capture(c, "complete");
out:
	ab_result_release(&ab);
	free(base_dir);
	free(plan_dir);
	return ret;
}

/* ---- the oracle --------------------------------------------------------- */

/* The action the plan gives a load, or -1 when it has none. */
static int plan_action(const struct plan *p, const char *module, const char *fn, unsigned ordinal)
{
	size_t m, f, l;

	for (m = 0; m < p->nr_modules; m++) {
		if (p->modules[m].id && strcmp(p->modules[m].id, module))
			continue;
		for (f = 0; f < p->modules[m].nr_functions; f++) {
			const struct plan_function *pf = &p->modules[m].functions[f];
			if (strcmp(pf->name, fn))
				continue;
			for (l = 0; l < pf->nr_loads; l++)
				if (pf->loads[l].ordinal == ordinal)
					return (int)pf->loads[l].action;
		}
	}
	return -1;
}

static int bypasses(int action)
{
	return action == LOAD_ACTION_NO_ALLOCATE || action == LOAD_ACTION_BYPASS;
}

void profile_note_advised(struct profile_ctx *c)
{
	size_t i, b;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		k->advised = 0;
		for (b = 0; b < k->vk.nr_measured && b < 64; b++)
			if (!bypasses(plan_action(c->plan, k->module->id, k->name, k->vk.measured[b])))
				k->advised |= 1ull << b;
	}
}

int profile_oracle(struct profile_ctx *c)
{
	unsigned rounds = c->opt->repeat < 3 ? (c->opt->repeat ? c->opt->repeat : 1) : 3;
	size_t nk = c->nr_kernels, i, maxn = 0, nplans, p, b;
	unsigned r;
	double *t, *base;
	char *base_dir = NULL;
	json_t *out = json_array();
	int ret = 0;

	for (i = 0; i < nk; i++)
		if (c->kernels[i].vk.nr_measured <= c->opt->oracle_max &&
		    c->kernels[i].vk.nr_measured > maxn)
			maxn = c->kernels[i].vk.nr_measured;
	if (!maxn) {
		json_object_set_new(c->capture, "oracle", json_pack("{s:s}", "status",
			"no measured kernel has few enough loads for --oracle"));
		json_decref(out);
		return 0;
	}
	nplans = (size_t)1 << maxn;
	t = xcalloc(nk * nplans * rounds + 1, sizeof(double));
	base = xcalloc(nk * rounds + 1, sizeof(double));
	for (i = 0; i < nk * nplans * rounds; i++)
		t[i] = NAN;
	for (i = 0; i < nk * rounds; i++)
		base[i] = NAN;
	base_dir = profile_write_substitutes(c, "oracle-baseline", NULL);
	if (!base_dir) {
		ret = CA_E_IO;
		goto out;
	}
	c->runs_planned = c->runs_done + rounds * (unsigned)(nplans + 1);
	for (r = 0; r < rounds && !ret; r++) {
		for (p = 0; p <= nplans && !ret; p++) {
			/* p == nplans: the baseline of this round */
			char label[48], *dir, *env[3];
			struct run_events ev;
			struct run_result res;

			if (p < nplans) {
				struct plan plan;
				plan_init(&plan);
				for (i = 0; i < nk; i++) {
					struct profile_kernel *k = &c->kernels[i];
					if (k->vk.nr_measured > c->opt->oracle_max ||
					    p >= ((size_t)1 << k->vk.nr_measured))
						continue;
					for (b = 0; b < k->vk.nr_measured; b++)
						if (!(p & ((size_t)1 << b)))
							plan_set(&plan, k->module->id, k->name,
								 k->vk.measured[b], LOAD_ACTION_NO_ALLOCATE);
				}
				snprintf(label, sizeof(label), "oracle-%zu", p);
				dir = profile_write_substitutes(c, label, &plan);
				plan_release(&plan);
			} else {
				snprintf(label, sizeof(label), "oracle-baseline");
				dir = xstrdup(base_dir);
			}
			if (!dir) {
				ret = CA_E_IO;
				break;
			}
			env[0] = xasprintf("CACHEADVISE_SUBST=%s", dir);
			env[1] = "CACHEADVISE_TIMING=1";
			env[2] = NULL;
			run_events_init(&ev);
			profile_progress(c, label);
			ret = profile_run_program(c, p < nplans ? "oracle" : "oracle-baseline", env, &ev,
						  &res, NULL);
			free(env[0]);
			free(dir);
			if (!ret && res.status == RUN_INTERRUPTED)
				ret = error_set(CA_E_INTERRUPTED, "interrupted during the oracle runs");
			if (!ret && res.status == RUN_OK) {
				for (i = 0; i < nk; i++) {
					struct event_kernel *ek = run_events_kernel(&ev, c->kernels[i].name);
					double v = ek->timed_launches ? (double)ek->gpu_time_ns : NAN;
					if (p < nplans)
						t[(i * nplans + p) * rounds + r] = v;
					else
						base[i * rounds + r] = v;
				}
			}
			run_events_release(&ev);
			profile_progress(c, label);
		}
	}
	if (ret)
		goto out;
	for (i = 0; i < nk; i++) {
		struct profile_kernel *k = &c->kernels[i];
		size_t n = k->vk.nr_measured, best = 0;
		double best_sp = -1, advised_sp = NAN, bt[8], med_base;
		size_t nb = 0;
		json_t *plans = json_array(), *kj;

		if (n > c->opt->oracle_max)
			continue;
		for (r = 0; r < rounds; r++)
			if (!isnan(base[i * rounds + r]))
				bt[nb++] = base[i * rounds + r];
		med_base = median(bt, nb);
		for (p = 0; p < ((size_t)1 << n); p++) {
			double v[8], m;
			size_t nv = 0;
			json_t *cached = json_array();

			for (r = 0; r < rounds; r++)
				if (!isnan(t[(i * nplans + p) * rounds + r]))
					v[nv++] = t[(i * nplans + p) * rounds + r];
			m = median(v, nv);
			for (b = 0; b < n; b++)
				if (p & ((size_t)1 << b))
					json_array_append_new(cached, json_integer(k->vk.measured[b]));
			json_array_append_new(plans, json_pack("{s:o, s:o, s:o}", "cached", cached,
				"median_ns", isnan(m) ? json_null() : json_real(m), "speedup",
				isnan(m) || isnan(med_base) ? json_null() : json_real(med_base / m)));
			if (!isnan(m) && !isnan(med_base) && med_base / m > best_sp) {
				best_sp = med_base / m;
				best = p;
			}
			if (p == k->advised && !isnan(m) && !isnan(med_base))
				advised_sp = med_base / m;
		}
		kj = json_pack("{s:s, s:i, s:i, s:o}", "kernel", k->name, "loads", (int)n,
			       "rounds", rounds, "plans", plans);
		json_object_set_new(kj, "best_plan", json_integer((json_int_t)best));
		json_object_set_new(kj, "best_speedup", best_sp < 0 ? json_null() : json_real(best_sp));
		json_object_set_new(kj, "advised_plan", json_integer((json_int_t)k->advised));
		json_object_set_new(kj, "advised_speedup", isnan(advised_sp) ? json_null() : json_real(advised_sp));
		json_object_set_new(kj, "ratio", isnan(advised_sp) || best_sp <= 0 ? json_null() :
				    json_real(advised_sp / best_sp));
		json_array_append(out, kj);
		json_object_set_new(k->json, "oracle", kj);
	}
	json_object_set_new(c->capture, "oracle", json_pack("{s:s, s:i, s:O}", "status", "measured",
		"rounds", rounds, "kernels", out));
	ret = profile_write_capture(c, "complete");
out:
	json_decref(out);
	free(base_dir);
	free(t);
	free(base);
	return ret;
}
