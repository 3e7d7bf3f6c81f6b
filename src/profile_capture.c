/*
 * The capture steps of `profile`: discovery, the variant runs that measure
 * hit_i and hit_{i,j}, and the kernels' entries of capture.json.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_file.h"
#include "analysis/plan.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "analysis/monitor_counts.h"
#include "src/profile_steps.h"

void profile_merge_device(struct device_model *dst, const struct device_model *p)
{
	/* What the probe measured; the driver's numbers stay where it gave them. */
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

void profile_kernel_release(struct profile_kernel *k)
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
	free(k->hit);
	free(k->hit_run);
	free(k->pair_hit);
	free(k->pair_run);
	free(k->mon);
	json_decref(k->layout);
	json_decref(k->allocs_used);
}

static struct profile_module *find_module(struct profile_ctx *c, const char *id)
{
	size_t i;

	for (i = 0; id && i < c->nr_modules; i++)
		if (!strcmp(c->modules[i].id, id))
			return &c->modules[i];
	return NULL;
}

/* Moves runs/000.d/seen/<id>.ptx to modules/<id>.ptx and parses it. */
static int adopt_module(struct profile_ctx *c, const struct event_module *em, const char *seen_dir)
{
	struct profile_module *m;
	char *from, *to;
	struct strbuf sb = STRBUF_INIT;
	int ret = 0;

	if (find_module(c, em->id))
		return 0;
	c->modules = xrealloc(c->modules, (c->nr_modules + 1) * sizeof(*c->modules));
	m = &c->modules[c->nr_modules++];
	memset(m, 0, sizeof(*m));
	m->id = xstrdup(em->id);
	m->origin = em->origin ? xstrdup(em->origin) : NULL;
	json_array_append_new(json_object_get(c->capture, "modules"),
		json_pack("{s:s, s:s?, s:b}", "id", em->id, "origin", em->origin,
			  "has_ptx", em->has_ptx));
	if (!em->has_ptx)
		return 0;
	from = xasprintf("%s/%s.ptx", seen_dir, em->id);
	to = xasprintf("%s/modules/%s.ptx", c->dir, em->id);
	if (rename(from, to) && errno != ENOENT) {
		ret = error_set(CA_E_IO, "cannot move '%s' to '%s': %s", from, to, strerror(errno));
		goto out;
	}
	ret = strbuf_read_file(&sb, to, 0);
	if (ret) {
		error_prefix(ret, "module %s (%s) was seen but its PTX was not saved", em->id,
			     em->origin ? em->origin : "?");
		goto out;
	}
	ret = ptx_parse(to, sb.buf, sb.len, &m->pm);
	if (ret) {
		/* Unusual PTX: keep going without this module's kernels. */
		json_array_append_new(json_object_get(c->capture, "notes"),
			json_sprintf("module %s: its PTX could not be parsed, its kernels are not measured: %s",
				     em->id, error_message()));
		ret = 0;
		goto out;
	}
	m->path = realpath(to, NULL);
	{
		json_t *mj = json_array_get(json_object_get(c->capture, "modules"),
					    json_array_size(json_object_get(c->capture, "modules")) - 1);
		json_object_set_new(mj, "ptx", json_sprintf("modules/%s.ptx", em->id));
		json_object_set_new(mj, "arch", json_string(m->pm->target));
	}
out:
	strbuf_release(&sb);
	free(from);
	free(to);
	return ret;
}

static int by_gpu_time(const void *a, const void *b)
{
	const struct event_kernel *x = *(const struct event_kernel *const *)a;
	const struct event_kernel *y = *(const struct event_kernel *const *)b;

	if (x->gpu_time_ns != y->gpu_time_ns)
		return x->gpu_time_ns < y->gpu_time_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}


/* Which allocations the kernel's pointer arguments pointed into, over all
 * its launches: [{"param", "alloc", "launches"}]. */
static json_t *allocs_used(const struct run_events *ev, const char *kernel)
{
	json_t *out = json_array(), *launch, *arg, *u;
	size_t i, j, k;

	json_array_foreach(ev->launch_sequence, i, launch) {
		if (strcmp(json_string_value(json_object_get(launch, "kernel")), kernel))
			continue;
		json_array_foreach(json_object_get(launch, "args"), j, arg) {
			json_t *p = json_object_get(arg, "param"), *a = json_object_get(arg, "alloc");
			int found = 0;
			json_array_foreach(out, k, u) {
				if (json_equal(json_object_get(u, "param"), p) &&
				    json_equal(json_object_get(u, "alloc"), a)) {
					json_object_set_new(u, "launches", json_integer(
						json_integer_value(json_object_get(u, "launches")) + 1));
					found = 1;
					break;
				}
			}
			if (!found)
				json_array_append_new(out, json_pack("{s:O, s:O, s:i}", "param", p,
								     "alloc", a, "launches", 1));
		}
	}
	return out;
}

static void take_kernel(struct profile_ctx *c, struct event_kernel *ek, const struct run_events *ev)
{
	struct profile_module *m = find_module(c, ek->module);
	const struct ptx_function *fn = m && m->pm ? ptx_module_find(m->pm, ek->name) : NULL;
	struct profile_kernel *k;
	size_t i, n;

	if (!fn) {
		profile_note(c, "kernel %s: %s, so its loads cannot be measured", ek->name,
		     !m ? "its module is unknown" : !m->pm ? "its module has no PTX (built without it: "
		     "add -gencode arch=compute_90,code=compute_90)" : "not found in its module's PTX");
		return;
	}
	c->kernels = xrealloc(c->kernels, (c->nr_kernels + 1) * sizeof(*c->kernels));
	k = &c->kernels[c->nr_kernels++];
	memset(k, 0, sizeof(*k));
	k->name = xstrdup(ek->name);
	k->module = m;
	k->fn = fn;
	k->allocs_used = allocs_used(ev, ek->name);
	k->disc = *ek;
	memset(ek, 0, sizeof(*ek)); /* ownership moves to k->disc */
	k->vk.module_id = xstrdup(m->id);
	k->vk.function = xstrdup(fn->name);
	k->vk.patchable = xcalloc(fn->nr_loads + 1, sizeof(unsigned));
	k->vk.measured = xcalloc(fn->nr_loads + 1, sizeof(unsigned));
	for (i = 0; i < fn->nr_loads; i++) {
		if (!fn->loads[i].patchable)
			continue;
		k->vk.patchable[k->vk.nr_patchable++] = fn->loads[i].ordinal;
		if (k->vk.nr_measured < c->opt->max_loads)
			k->vk.measured[k->vk.nr_measured++] = fn->loads[i].ordinal;
		else
			k->left_out++;
	}
	n = k->vk.nr_measured;
	k->counters = json_object();
	k->hit = xcalloc(n + 1, sizeof(double));
	k->hit_run = xcalloc(n + 1, sizeof(int));
	k->pair_hit = xcalloc(n * n + 1, sizeof(double));
	k->pair_run = xcalloc(n * n + 1, sizeof(int));
	for (i = 0; i < n; i++) {
		k->hit[i] = NAN;
		k->hit_run[i] = -1;
	}
	for (i = 0; i < n * n; i++) {
		k->pair_hit[i] = NAN;
		k->pair_run[i] = -1;
	}
}

struct load_traffic {
	unsigned ordinal;
	uint64_t sectors;       /* in the monitor run, 0 when not counted */
};

/* Most sectors first; the text order breaks ties. */
static int cmp_traffic(const void *a, const void *b)
{
	const struct load_traffic *x = a, *y = b;

	if (x->sectors != y->sectors)
		return x->sectors > y->sectors ? -1 : 1;
	return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/*
 * For kernels with more patchable loads than --max-loads: the loads to
 * measure are the ones with the most sector traffic in the monitor run
 * (profile_monitor() before the variant runs), not the first ones in the
 * text. Without monitor counts the text order stays. Notes what was left
 * out and how much of the kernel's traffic that is.
 */
void profile_choose_measured_loads(struct profile_ctx *c)
{
	size_t i, j, l;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		struct monitor_counts mc;
		const struct monitor_function *mf = NULL;
		struct load_traffic *order;
		uint64_t total = 0, kept = 0;

		if (!k->left_out)
			continue;
		monitor_counts_init(&mc);
		if (k->layout && !monitor_counts_read(&mc, k->layout, k->mon, k->nr_mon))
			mf = monitor_counts_find(&mc, k->vk.function);
		if (!mf) {
			profile_note(c, "kernel %s: %zu patchable loads beyond --max-loads %u are not measured; "
			     "without monitor counts (--no-monitor, or the monitor run failed) the first %zu "
			     "in the PTX were chosen; the others stay L1::no_allocate in the variants and "
			     "keep their form in the advice", k->name, k->left_out, c->opt->max_loads,
			     k->vk.nr_measured);
			monitor_counts_release(&mc);
			continue;
		}
		order = xcalloc(k->vk.nr_patchable + 1, sizeof(*order));
		for (j = 0; j < k->vk.nr_patchable; j++) {
			order[j].ordinal = k->vk.patchable[j];
			for (l = 0; l < mf->nr_loads; l++)
				if (mf->loads[l].ordinal == order[j].ordinal)
					order[j].sectors = mf->loads[l].sectors;
			total += order[j].sectors;
		}
		qsort(order, k->vk.nr_patchable, sizeof(*order), cmp_traffic);
		for (j = 0; j < k->vk.nr_measured; j++) {
			k->vk.measured[j] = order[j].ordinal;
			kept += order[j].sectors;
		}
		qsort(k->vk.measured, k->vk.nr_measured, sizeof(*k->vk.measured), cmp_unsigned);
		profile_note(c, "kernel %s: %zu patchable loads beyond --max-loads %u are not measured; the %zu "
		     "measured are those with the most sector traffic in the monitor run (%.1f%% of the "
		     "kernel's load sectors); the others stay L1::no_allocate in the variants and keep "
		     "their form in the advice", k->name, k->left_out, c->opt->max_loads,
		     k->vk.nr_measured, total ? 100.0 * (double)kept / (double)total : 0.0);
		free(order);
		monitor_counts_release(&mc);
	}
}

int profile_discover(struct profile_ctx *c)
{
	char *const env[] = { "CACHEADVISE_SAVE_MODULES=1", "CACHEADVISE_TIMING=1", NULL };
	struct run_events ev;
	struct run_result res;
	struct event_kernel **order = NULL;
	regex_t re;
	int ret, have_re = 0;
	size_t i, taken = 0;
	char *seen;

	run_events_init(&ev);
	profile_progress(c, "discovery run");
	ret = profile_run_program(c, "discovery", env, &ev, &res, NULL);
	if (ret)
		goto out;
	if (res.status == RUN_INTERRUPTED) {
		ret = error_set(CA_E_INTERRUPTED, "interrupted during the discovery run");
		goto out;
	}
	if (res.status != RUN_OK) {
		ret = profile_run_failed(c, "discovery", &res);
		goto out;
	}
	if (!ev.saw_start) {
		profile_note(c, "the program never initialised CUDA: no kernel to measure");
		fprintf(stderr, "cacheadvise profile: '%s' never initialised CUDA, so there is nothing "
			"to measure (is it a CUDA program? is it statically linked against an old "
			"cudart?)\n", c->opt->argv[0]);
		goto out;
	}
	seen = xasprintf("%s/runs/000.d/seen", c->dir);
	for (i = 0; i < ev.nr_modules && !ret; i++)
		ret = adopt_module(c, &ev.modules[i], seen);
	free(seen);
	if (ret)
		goto out;
	json_object_set(c->capture, "allocations", ev.allocations);
	if (!ev.launches) {
		profile_note(c, "the program launched no kernel");
		fprintf(stderr, "cacheadvise profile: '%s' launched no CUDA kernel: nothing to measure\n",
			c->opt->argv[0]);
		goto out;
	}
	if (c->opt->kernels_regex) {
		if (regcomp(&re, c->opt->kernels_regex, REG_EXTENDED | REG_NOSUB)) {
			ret = error_set(CA_E_USAGE, "--kernels '%s' is not a valid regular expression",
					c->opt->kernels_regex);
			goto out;
		}
		have_re = 1;
	}
	order = xcalloc(ev.nr_kernels + 1, sizeof(*order));
	for (i = 0; i < ev.nr_kernels; i++)
		order[i] = &ev.kernels[i];
	qsort(order, ev.nr_kernels, sizeof(*order), by_gpu_time);
	{
		json_t *all = json_array();
		for (i = 0; i < ev.nr_kernels; i++)
			json_array_append_new(all, json_pack("{s:s, s:i, s:I}", "name", order[i]->name,
				"launches", order[i]->launches, "gpu_time_ns",
				(json_int_t)order[i]->gpu_time_ns));
		json_object_set_new(c->capture, "all_kernels", all);
	}
	for (i = 0; i < ev.nr_kernels; i++) {
		if (have_re && regexec(&re, order[i]->name, 0, NULL, 0))
			continue;
		if (taken >= c->opt->top) {
			profile_note(c, "kernel %s (%.3f ms) is not measured: beyond --top %u", order[i]->name,
			     order[i]->gpu_time_ns / 1e6, c->opt->top);
			continue;
		}
		take_kernel(c, order[i], &ev);
		taken++;
	}
	if (have_re && !taken)
		profile_note(c, "no kernel matches --kernels '%s'", c->opt->kernels_regex);
	if (!c->nr_kernels)
		fprintf(stderr, "cacheadvise profile: no kernel of '%s' can be measured (see the "
			"notes in capture.json)\n", c->opt->argv[0]);
out:
	if (have_re)
		regfree(&re);
	free(order);
	run_events_release(&ev);
	return ret;
}

char *profile_write_substitutes(struct profile_ctx *c, const char *label, const struct plan *plan)
{
	char *dir = xasprintf("%s/runs/%s.subst", c->dir, label);
	size_t i;

	if (mkdir_p(dir)) {
		free(dir);
		return NULL;
	}
	for (i = 0; i < c->nr_modules; i++) {
		struct profile_module *m = &c->modules[i];
		struct ptx_load_edit *edits = NULL;
		size_t n = 0;
		char *path;
		int ret = 0;

		if (!m->pm)
			continue;
		path = xasprintf("%s/%s.ptx", dir, m->id);
		if (plan)
			n = plan_edits_for_module(plan, m->id, m->pm, &edits);
		if (n) {
			struct strbuf sb = STRBUF_INIT;
			ret = ptx_rewrite_loads(m->pm, edits, n, &sb);
			if (!ret)
				ret = write_file_atomic(path, sb.buf, sb.len);
			strbuf_release(&sb);
		} else {
			unlink(path);
			if (symlink(m->path, path))
				ret = error_set(CA_E_IO, "cannot link '%s': %s", path, strerror(errno));
		}
		free(edits);
		free(path);
		if (ret) {
			free(dir);
			return NULL;
		}
	}
	return dir;
}

/* Was the kernel's module really replaced in this run? */
static int substituted(const struct run_events *ev, const char *module_id)
{
	size_t i;

	for (i = 0; i < ev->nr_modules; i++)
		if (!strcmp(ev->modules[i].id, module_id))
			return ev->modules[i].substituted;
	return 0;
}

static double metric(json_t *metrics, const char *key)
{
	json_t *v = json_object_get(metrics, key);
	return v ? json_number_value(v) : NAN;
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
			json_object_set_new(k->counters, label, m);
		}
		hits = metric(ek->metrics, "l1_hits");
		if (n == 1) {
			k->hit[nodes[0]] = hits;
			k->hit_run[nodes[0]] = (int)run;
		} else if (n == 2) {
			size_t nn = k->vk.nr_measured;
			k->pair_hit[nodes[0] * nn + nodes[1]] = hits;
			k->pair_run[nodes[0] * nn + nodes[1]] = (int)run;
		}
	}
}

static void baseline_check(struct profile_ctx *c, json_t *baseline_runs)
{
	json_t *runs = json_object_get(c->capture, "runs"), *check, *notes = json_array();
	const char *first_hash = NULL;
	int identical = 1;
	double spread = 0;
	size_t i, j;

	json_array_foreach(baseline_runs, i, check) {
		json_t *r = json_array_get(runs, (size_t)json_integer_value(check));
		const char *h = json_string_value(json_object_get(r, "stdout_sha256"));
		if (!first_hash)
			first_hash = h;
		else if (h && strcmp(h, first_hash))
			identical = 0;
	}
	for (i = 0; i < c->nr_kernels; i++) {
		json_t *a = json_object_get(c->kernels[i].counters, "baseline");
		json_t *b = json_object_get(c->kernels[i].counters, "baseline#2");
		static const char *const keys[] = { "l1_hits", "l1_sectors", "l2_sectors_from_l1" };

		if (!a || !b)
			continue;
		for (j = 0; j < ARRAY_SIZE(keys); j++) {
			double x = metric(a, keys[j]), y = metric(b, keys[j]);
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
	if (!identical)
		json_array_append_new(notes, json_string(
			"the program's output differs between baseline runs: it is not deterministic, "
			"so output checks of the advice cannot be trusted"));
	/* the reports show capture.notes: the reader learns of the noise there too */
	{
		json_t *n;
		json_array_foreach(notes, i, n)
			json_array_append(json_object_get(c->capture, "notes"), n);
	}
	json_object_set_new(c->capture, "baseline_check",
		json_pack("{s:O, s:b, s:f, s:o}", "runs", baseline_runs, "output_identical", identical,
			  "max_counter_spread", spread, "notes", notes));
}

int profile_capture_variants(struct profile_ctx *c)
{
	struct variant_kernel *vks = xcalloc(c->nr_kernels, sizeof(*vks));
	struct variant_run *runs = NULL;
	json_t *baseline_runs = json_array();
	size_t nr_runs, r, i;
	int ret = 0;

	for (i = 0; i < c->nr_kernels; i++)
		vks[i] = c->kernels[i].vk;
	nr_runs = variants_schedule(vks, c->nr_kernels, 2, &runs);
	c->runs_planned = c->runs_done + (unsigned)nr_runs + (c->opt->no_monitor || c->monitored ? 0 : 1);
	for (r = 0; r < nr_runs; r++) {
		struct plan plan;
		char label[64], *subst, *env[4];
		struct run_events ev;
		struct run_result res;
		unsigned run = c->run_index;

		if (runs[r].kind == VARIANT_BASELINE)
			snprintf(label, sizeof(label), runs[r].index ? "baseline#%u" : "baseline",
				 runs[r].index + 1);
		else if (runs[r].kind == VARIANT_ALL_BYPASSED)
			snprintf(label, sizeof(label), "all_bypassed");
		else
			snprintf(label, sizeof(label), "%s %u", variant_kind_name(runs[r].kind),
				 runs[r].index);
		plan_init(&plan);
		for (i = 0; i < c->nr_kernels; i++)
			variant_add_to_plan(&c->kernels[i].vk, &runs[r],
					    strcmp(c->opt->bypass_form, "cg") ? LOAD_ACTION_NO_ALLOCATE :
					    LOAD_ACTION_BYPASS, &plan);
		{
			char dirlabel[16];
			snprintf(dirlabel, sizeof(dirlabel), "%03u", run);
			subst = profile_write_substitutes(c, dirlabel, &plan);
		}
		plan_release(&plan);
		if (!subst) {
			ret = error_prefix(CA_E_IO, "cannot prepare the PTX of run %u (%s)", run, label);
			break;
		}
		env[0] = xasprintf("CACHEADVISE_SUBST=%s", subst);
		env[1] = "CACHEADVISE_METRICS=1";
		env[2] = NULL;
		run_events_init(&ev);
		profile_progress(c, label);
		ret = profile_run_program(c, runs[r].kind == VARIANT_BASELINE ? "baseline" :
					  variant_kind_name(runs[r].kind), env, &ev, &res, NULL);
		free(env[0]);
		free(subst);
		if (!ret && res.status == RUN_INTERRUPTED)
			ret = error_set(CA_E_INTERRUPTED, "interrupted during run %u (%s)", run, label);
		if (!ret && res.status != RUN_OK) {
			if (runs[r].kind == VARIANT_BASELINE)
				ret = profile_run_failed(c, "baseline", &res);
			else
				profile_note(c, "run %u (%s) failed and is skipped: see runs/%03u.log", run,
				     label, run);
		}
		if (!ret && res.status == RUN_OK) {
			if (runs[r].kind == VARIANT_BASELINE)
				json_array_append_new(baseline_runs, json_integer(run));
			record_variant(c, &runs[r], run, &ev, label);
		}
		run_events_release(&ev);
		profile_progress(c, label);
		if (ret)
			break;
		profile_write_capture(c, "incomplete");
	}
	if (!ret)
		baseline_check(c, baseline_runs);
	json_decref(baseline_runs);
	free(runs);
	free(vks);
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

void profile_fill_kernels(struct profile_ctx *c)
{
	json_t *kernels = json_object_get(c->capture, "kernels");
	size_t i, a, b;

	json_array_clear(kernels);
	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		const struct ptx_function *fn = k->fn;
		size_t n = k->vk.nr_measured;
		json_t *kj, *loads = json_array(), *pairs = json_array();
		json_t *base = json_object_get(k->counters, "baseline");

		for (a = 0; a < fn->nr_loads; a++) {
			const struct ptx_load *l = &fn->loads[a];
			json_t *lj = json_pack("{s:i, s:i, s:s, s:s, s:s, s:b, s:i, s:i}",
				"ordinal", l->ordinal, "ptx_line", l->ptx_line, "instruction", l->opcode,
				"space", l->space == PTX_SPACE_GLOBAL ? "global" : "generic",
				"cache_op", ptx_cache_op_name(l->cache_op), "nc", l->nc,
				"vector", l->vector, "bits", l->bits);
			json_object_set_new(lj, "file", l->file ? json_string(l->file) : json_null());
			json_object_set_new(lj, "line", l->line ? json_integer(l->line) : json_null());
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
			num_or_null(metric(base, "duration_ns"))));
		json_object_set(kj, "counters", k->counters);
		json_object_set_new(kj, "loads", loads);
		json_object_set_new(kj, "pairs", pairs);
		json_object_set_new(kj, "left_out_loads", json_integer((json_int_t)k->left_out));
		if (k->allocs_used)
			json_object_set(kj, "allocs_used", k->allocs_used);
		json_array_append_new(kernels, kj);
		k->json = kj;
		profile_apply_monitor(c, k);
	}
}
