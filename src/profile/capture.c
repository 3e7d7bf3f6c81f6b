/*
 * `profile`'s capture step: the variant runs that measure hit_i and
 * hit_{i,j} (analysis/variants.h schedules them), the baseline check, and
 * the kernels' entries of capture.json.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/launch_sampling.h"
#include "analysis/plan.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/inspect_report.h"
#include "src/profile/internal.h"

/* Was the kernel's module really replaced in this run? */
static int substituted(const struct run_events *ev, const char *module_id)
{
	size_t i;

	for (i = 0; i < ev->nr_modules; i++)
		if (!strcmp(ev->modules[i].id, module_id))
			return ev->modules[i].substituted;
	return 0;
}

static void record_variant(struct profile_ctx *c, const struct variant_run *r, unsigned run,
			   struct run_events *ev, const char *label)
{
	size_t i, nodes[2];

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		struct event_kernel *ek = run_events_kernel(ev, k->name);
		int n = variant_nodes(&k->vk, r, nodes);
		double hits;

		if (n < 0)
			continue;
		if (!ek->metrics || !substituted(ev, k->module->id)) {
			profile_note(c, "run %u (%s): no counters for kernel %s%s", run, label, k->name,
			     ek->metrics ? " (its module was not substituted)" : "");
			continue;
		}
		if (r->kind == VARIANT_BASELINE || r->kind == VARIANT_ALL_BYPASSED) {
			json_t *m = json_deep_copy(ek->metrics);
			json_object_set_new(m, "run", json_integer(run));
			json_object_set_new(m, "launches", json_integer(ek->metric_launches));
			profile_set_counters(c, k, label, m);
		}
		hits = event_kernel_metric(ek, "l1_hits");
		if (n == 1) {
			size_t rk;

			k->hit[nodes[0]] = hits;
			k->hit_run[nodes[0]] = (int)run;
			/* a job's ranks apart (issue 29): each rank's own launches */
			for (rk = 0; ev->nr_rank_events >= 2 && rk < ev->nr_rank_events; rk++) {
				struct run_events *rev = ev->rank_events[rk].ev;
				struct event_kernel *rek = run_events_kernel(rev, k->name);
				struct profile_rank_hits *rh = profile_rank_hits(k,
									ev->rank_events[rk].rank, rev);
				double h = event_kernel_metric(rek, "l1_hits");

				if (!isnan(h) && rek->metric_launches) {
					rh->hits[nodes[0]] += h;
					rh->samples[nodes[0]] += rek->metric_launches;
				}
			}
		} else if (n == 2) {
			size_t nn = k->vk.nr_measured;
			k->pair_hit[nodes[0] * nn + nodes[1]] =
				count_resolve_noise(hits, &k->pair_noise[nodes[0] * nn + nodes[1]]);
			k->pair_run[nodes[0] * nn + nodes[1]] = (int)run;
		}
	}
}

/* The output check of the baseline runs among themselves (new object). */
static json_t *baseline_output(struct profile_ctx *c, json_t *baseline_runs)
{
	json_t *x, *o;
	size_t n = json_array_size(baseline_runs), i;
	struct run_output *outs = xcalloc(n + 1, sizeof(*outs));
	const struct run_output **base = xcalloc(n + 1, sizeof(*base));
	int ok;

	json_array_foreach(baseline_runs, i, x) {
		run_output_init(&outs[i]);
		profile_run_output(c, profile_run_record(c, (unsigned)json_integer_value(x)), &outs[i]);
		base[i] = &outs[i];
	}
	o = output_check_judge(base, n, NULL, 0, &c->output_check, &ok);
	for (i = 0; i < n; i++)
		run_output_release(&outs[i]);
	free(outs);
	free(base);
	return o;
}

void profile_baseline_check(struct profile_ctx *c, json_t *baseline_runs)
{
	json_t *check, *notes = json_array();
	json_t *output = baseline_output(c, baseline_runs);
	int identical = !strcmp(output_check_status(output), "identical");
	double spread = 0;
	size_t i, j;
	json_t *x;

	/* verification's output check takes these runs as baselines too */
	free(c->reference_runs);
	c->reference_runs = xcalloc(json_array_size(baseline_runs) + 1, sizeof(*c->reference_runs));
	c->nr_reference_runs = 0;
	json_array_foreach(baseline_runs, i, x)
		c->reference_runs[c->nr_reference_runs++] = (unsigned)json_integer_value(x);

	for (i = 0; i < c->nr_kernels; i++) {
		const struct capture_counters *a = profile_counters(&c->kernels[i], "baseline");
		const struct capture_counters *b = profile_counters(&c->kernels[i], "baseline#2");
		static const char *const keys[] = { "l1_hits", "l1_sectors", "l2_sectors_from_l1" };

		if (!a || !b)
			continue;
		for (j = 0; j < ARRAY_SIZE(keys); j++) {
			double x = j == 0 ? a->l1_hits : j == 1 ? a->l1_sectors : a->l2_sectors_from_l1;
			double y = j == 0 ? b->l1_hits : j == 1 ? b->l1_sectors : b->l2_sectors_from_l1;
			double d = (x + y) > 0 ? fabs(x - y) / ((x + y) / 2) : 0;
			if (!isnan(d) && d > spread)
				spread = d;
			if (d > 0.05)
				json_array_append_new(notes, json_sprintf(
					"kernel %s: %s differs by %.1f%% between the two baseline runs: "
					"its hit measurements carry that much noise", c->kernels[i].name,
					keys[j], d * 100));
		}
	}
	if (!identical) {
		char *reason = output_check_reason(output);

		json_array_append_new(notes, json_string(reason));
		free(reason);
	}
	/* the reports show capture.notes: the reader learns of the noise there too */
	{
		json_t *n;
		json_array_foreach(notes, i, n)
			profile_note(c, "%s", json_string_value(n));
	}
	check = json_pack("{s:O, s:b, s:f, s:o}", "runs", baseline_runs, "output_identical", identical,
			  "max_counter_spread", spread, "notes", notes);
	json_object_set_new(check, "output", output);
	json_object_set_new(c->capture, "baseline_check", check);
	/* a monitor run before the reference is judged against it now */
	profile_monitor_output(c);
}

int profile_capture_variants(struct profile_ctx *c)
{
	/* the switchable module bypasses with L1::no_allocate only */
	if (!c->opt->measure_runs && strcmp(c->opt->bypass_form, "cg"))
		return profile_capture_launches(c);
	json_object_set_new(c->capture, "measure", json_pack("{s:s}", "method", "runs"));
	return profile_capture_runs(c);
}

/* A variant run's label ("baseline#2", "all_bypassed", "single 3"). */
static void variant_label(const struct variant_run *v, char *label, size_t len)
{
	if (v->kind == VARIANT_BASELINE)
		snprintf(label, len, v->index ? "baseline#%u" : "baseline", v->index + 1);
	else if (v->kind == VARIANT_ALL_BYPASSED)
		snprintf(label, len, "all_bypassed");
	else
		snprintf(label, len, "%s %u", variant_kind_name(v->kind), v->index);
}

/* runs/NNN.subst/ with the variant's plan applied, for run `run`; NULL on error. */
static char *variant_substitutes(struct profile_ctx *c, const struct variant_run *v, unsigned run)
{
	struct plan plan;
	char dirlabel[16], *subst;
	size_t i;

	plan_init(&plan);
	for (i = 0; i < c->nr_kernels; i++)
		variant_add_to_plan(&c->kernels[i].vk, v, strcmp(c->opt->bypass_form, "cg") ?
				    LOAD_ACTION_NO_ALLOCATE : LOAD_ACTION_BYPASS, &plan);
	snprintf(dirlabel, sizeof(dirlabel), "%03u", run);
	subst = profile_write_substitutes(c, dirlabel, &plan);
	plan_release(&plan);
	return subst;
}

/*
 * --measure runs: one program run per variant. With --gpus, the variants
 * other than the baselines run side by side, one a GPU (their outputs are
 * not compared); the baselines, whose outputs are the reference, run alone
 * on the first GPU.
 */
int profile_capture_runs(struct profile_ctx *c)
{
	struct variant_kernel *vks = xcalloc(c->nr_kernels, sizeof(*vks));
	struct variant_run *runs = NULL;
	json_t *baseline_runs = json_array();
	size_t nr_runs, r, i, batch = c->opt->nr_gpus > 1 ? c->opt->nr_gpus : 1;
	struct run_request *reqs = xcalloc(batch, sizeof(*reqs));
	struct run_events *evs = xcalloc(batch, sizeof(*evs));
	struct run_result *res = xcalloc(batch, sizeof(*res));
	char **subst = xcalloc(batch, sizeof(*subst));
	const char **variant = xcalloc(batch, sizeof(*variant));
	char (*labels)[64] = xcalloc(batch, sizeof(*labels));
	int ret = 0;

	for (i = 0; i < c->nr_kernels; i++)
		vks[i] = c->kernels[i].vk;
	nr_runs = variants_schedule(vks, c->nr_kernels, 2, &runs);
	c->runs_planned = c->runs_done + (unsigned)nr_runs + (c->opt->no_monitor || c->monitored ? 0 : 1);
	for (r = 0; r < nr_runs && !ret; ) {
		unsigned first = c->run_index;
		size_t n = 0, b;

		/* a baseline alone; else up to one variant a GPU */
		do {
			struct variant_run *v = &runs[r + n];

			variant_label(v, labels[n], sizeof(labels[n]));
			subst[n] = variant_substitutes(c, v, first + (unsigned)n);
			if (!subst[n]) {
				ret = error_prefix(CA_E_IO, "cannot prepare the PTX of run %u (%s)",
						   first + (unsigned)n, labels[n]);
				break;
			}
			memset(&reqs[n], 0, sizeof(reqs[n]));
			reqs[n].metrics = 1;
			reqs[n].subst_dir = subst[n];
			variant[n] = v->kind == VARIANT_BASELINE ? "baseline" : variant_kind_name(v->kind);
			run_events_init(&evs[n]);
			n++;
		} while (!ret && runs[r + n - 1].kind != VARIANT_BASELINE && n < batch &&
			 r + n < nr_runs && runs[r + n].kind != VARIANT_BASELINE);
		if (!ret) {
			profile_progress(c, labels[0]);
			if (n == 1)
				ret = profile_run_program(c, variant[0], &reqs[0], &evs[0], &res[0], NULL);
			else
				ret = profile_run_programs(c, n, variant, reqs, evs, res);
		}
		for (b = 0; b < n; b++) {
			unsigned run = first + (unsigned)b;
			struct variant_run *v = &runs[r + b];

			if (!ret && res[b].status == RUN_INTERRUPTED)
				ret = error_set(CA_E_INTERRUPTED, "interrupted during run %u (%s)", run,
						labels[b]);
			if (!ret && res[b].status != RUN_OK) {
				if (v->kind == VARIANT_BASELINE)
					ret = profile_run_failed(c, "baseline", &res[b]);
				else {
					char *log = capture_layout_run_log(NULL, run);
					profile_note(c, "run %u (%s) failed and is skipped: see %s", run,
						     labels[b], log);
					free(log);
				}
			}
			if (!ret && res[b].status == RUN_OK) {
				if (v->kind == VARIANT_BASELINE)
					json_array_append_new(baseline_runs, json_integer(run));
				record_variant(c, v, run, &evs[b], labels[b]);
			}
			run_events_release(&evs[b]);
			free(subst[b]);
			subst[b] = NULL;
		}
		if (n)
			profile_progress(c, labels[0]);
		r += n;
		if (!ret)
			profile_write_capture(c, "incomplete");
	}
	if (!ret)
		profile_baseline_check(c, baseline_runs);
	json_decref(baseline_runs);
	free(runs);
	free(vks);
	free(reqs);
	free(evs);
	free(res);
	free(subst);
	free(variant);
	free(labels);
	return ret;
}

/* The C++ name of a kernel (c++filt from binutils), or NULL when unavailable. */
static json_t *demangle(const char *name)
{
	char *cmd, buf[4096];
	FILE *f;
	json_t *out = NULL;
	size_t n;

	if (strncmp(name, "_Z", 2) || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.") != strlen(name))
		return NULL;
	cmd = xasprintf("c++filt '%s' 2>/dev/null", name);
	f = popen(cmd, "r");
	free(cmd);
	if (!f)
		return NULL;
	if (fgets(buf, sizeof(buf), f)) {
		n = strlen(buf);
		while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = '\0';
		if (n && strcmp(buf, name))
			out = json_string(buf);
	}
	pclose(f);
	return out;
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* A job's measured ranks apart (capture.json kernels[].ranks, issue 29). */
static json_t *ranks_json(const struct profile_kernel *k)
{
	json_t *arr = json_array();
	size_t r, a;

	for (r = 0; r < k->nr_ranks; r++) {
		const struct profile_rank_hits *rh = &k->ranks[r];
		json_t *loads = json_array();

		for (a = 0; a < k->vk.nr_measured; a++)
			if (rh->samples[a] > 0)
				json_array_append_new(loads, json_pack("{s:i, s:f, s:I}", "ordinal",
					k->vk.measured[a], "hit_per_launch", rh->hits[a] / rh->samples[a],
					"samples", (json_int_t)rh->samples[a]));
		json_array_append_new(arr, json_pack("{s:i, s:s?, s:i, s:o}", "rank", rh->rank, "gpu",
						     rh->gpu, "launches", (int)rh->launches, "loads", loads));
	}
	return arr;
}

void profile_fill_kernels(struct profile_ctx *c)
{
	json_t *kernels = c->kernels_json;
	size_t i, a, b;

	json_array_clear(kernels);
	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		const struct ptx_function *fn = k->fn;
		size_t n = k->vk.nr_measured;
		json_t *kj, *loads = json_array(), *pairs = json_array();
		const struct capture_counters *base = profile_counters(k, "baseline");

		for (a = 0; a < fn->nr_loads; a++) {
			const struct ptx_load *l = &fn->loads[a];
			json_t *lj = json_pack("{s:i, s:i, s:s, s:s, s:s, s:b, s:i, s:i}",
				"ordinal", l->ordinal, "ptx_line", l->ptx_line, "instruction", l->opcode,
				"space", l->space == PTX_SPACE_GLOBAL ? "global" : "generic",
				"cache_op", ptx_cache_op_name(l->cache_op), "nc", l->nc,
				"vector", l->vector, "bits", l->bits);
			json_object_set_new(lj, "file", l->file ? json_string(l->file) : json_null());
			json_object_set_new(lj, "line", l->line ? json_integer(l->line) : json_null());
			if (l->line && l->column > 0)
				json_object_set_new(lj, "column", json_integer(l->column));
			if (l->line && l->inline_depth)
				json_object_set_new(lj, "inlined_at", inspect_inlined_at_json(l));
			json_object_set_new(lj, "param", l->param >= 0 ? json_integer(l->param) : json_null());
			json_object_set_new(lj, "read_only", l->read_only < 0 ? json_null() :
					    json_boolean(l->read_only));
			json_object_set_new(lj, "patchable", json_boolean(l->patchable));
			if (!l->patchable)
				json_object_set_new(lj, "unpatchable_reason",
						    json_string(l->unpatchable_reason ? l->unpatchable_reason : "?"));
			json_object_set_new(lj, "l1_eviction", json_string(ptx_l1_eviction_name(l->l1_eviction)));
			json_object_set_new(lj, "measured", json_false());
			for (b = 0; b < n; b++) {
				if (k->vk.measured[b] != l->ordinal)
					continue;
				json_object_set_new(lj, "measured", json_true());
				json_object_set_new(lj, "node", json_integer((json_int_t)b));
				json_object_set_new(lj, "hit", num_or_null(k->hit[b]));
				json_object_set_new(lj, "run", k->hit_run[b] >= 0 ?
						    json_integer(k->hit_run[b]) : json_null());
			}
			json_object_set_new(lj, "access", json_null());
			json_array_append_new(loads, lj);
		}
		for (a = 0; a < n; a++)
			for (b = a + 1; b < n; b++) {
				double h = k->pair_hit[a * n + b];
				json_t *pj = json_pack("{s:i, s:i, s:o}", "i", k->vk.measured[a], "j",
						       k->vk.measured[b], "hit", num_or_null(h));
				json_object_set_new(pj, "run", k->pair_run[a * n + b] >= 0 ?
						    json_integer(k->pair_run[a * n + b]) : json_null());
				if (!isnan(k->pair_noise[a * n + b]))
					json_object_set_new(pj, "noise", json_pack("{s:f, s:s}",
						"measured", k->pair_noise[a * n + b], "resolution",
						"clamped to 0: a count below 0 is counter noise"));
				json_array_append_new(pairs, pj);
			}
		kj = json_pack("{s:s, s:s, s:i, s:[i,i,i], s:[i,i,i], s:i}",
			"module", k->module->id, "name", k->name, "launches", k->disc.launches,
			"grid", k->disc.grid[0], k->disc.grid[1], k->disc.grid[2],
			"block", k->disc.block[0], k->disc.block[1], k->disc.block[2],
			"dynamic_shared_bytes", k->disc.dynamic_shared);
		{
			json_t *d = demangle(k->name);
			if (d)
				json_object_set_new(kj, "demangled", d);
		}
		json_object_set_new(kj, "static_shared_bytes", k->disc.static_shared >= 0 ?
				    json_integer(k->disc.static_shared) : json_integer((json_int_t)fn->static_shared_bytes));
		json_object_set_new(kj, "registers", k->disc.registers >= 0 ?
				    json_integer(k->disc.registers) : json_null());
		json_object_set_new(kj, "gpu_time_ns", json_pack("{s:I, s:o}", "cubin",
			(json_int_t)k->disc.gpu_time_ns, "baseline",
			num_or_null(base ? base->duration_ns : NAN)));
		json_object_set(kj, "counters", k->counters);
		json_object_set_new(kj, "loads", loads);
		json_object_set_new(kj, "pairs", pairs);
		json_object_set_new(kj, "left_out_loads", json_integer((json_int_t)k->left_out));
		if (k->allocs_used)
			json_object_set(kj, "allocs_used", k->allocs_used);
		if (k->l2_priority)
			json_object_set(kj, "l2_priority", k->l2_priority);
		if (k->nr_ranks)
			json_object_set_new(kj, "ranks", ranks_json(k));
		json_array_append_new(kernels, kj);
		k->json = kj;
	}
}
