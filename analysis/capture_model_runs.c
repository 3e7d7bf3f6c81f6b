/* The capture model (analysis/capture_model_internal.h): runs, measure, cost, budget. */
#include "analysis/capture_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

static int read_file(const struct rd *r, json_t *o, const char *path, struct capture_file *f)
{
	int ret, removed;

	f->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_str(r, o, path, "path", &f->path, 1)) ||
	    (ret = capture_rd_bool(r, o, path, "removed", &removed)) ||
	    (ret = capture_rd_num(r, o, path, "size", &f->size, NUM_COUNT)) ||
	    (ret = capture_rd_str(r, o, path, "sha256", &f->sha256, 0)) ||
	    (ret = capture_rd_str(r, o, path, "copy", &f->copy, 0)))
		return ret;
	f->removed = removed > 0;
	if (f->copy && (f->copy[0] == '/' || strstr(f->copy, "..")))
		return capture_fail(r, path, "copy", "'%s' is not a path inside the capture directory",
				    f->copy);
	return 0;
}

/* Mechanism -> seconds (a run's cost.seconds, cost.seconds_by_mechanism):
 * known names into secs[], "program" and "tool" into *program and *tool
 * when given; names of a newer version are kept as written. */
static int read_mechanisms(const struct rd *r, json_t *by, const char *path, double *secs,
			   double *program, double *tool)
{
	const char *name;
	json_t *v;
	int m, ret;

	if ((ret = capture_rd_object(r, by, path)))
		return ret;
	json_object_foreach(by, name, v) {
		double *into = (m = run_cost_mechanism_of(name)) >= 0 ? &secs[m] :
			       program && !strcmp(name, "program") ? program :
			       tool && !strcmp(name, "tool") ? tool : NULL;

		if (into && (ret = capture_rd_num(r, by, path, name, into, NUM_COUNT)))
			return ret;
	}
	return 0;
}

static json_t *mechanisms_json(const struct capture_section *source, const double *secs)
{
	json_t *o = capture_start(source);
	int m;

	for (m = 0; m < RUN_COST_NR_MECHANISMS; m++)
		capture_put_num(o, run_cost_mechanisms[m], secs[m]);
	return o;
}

/* A run's "cost" (collectors/events.h: the processes' `cost` events). */
static int read_run_cost(const struct rd *r, json_t *o, const char *path, struct capture_run *run)
{
	json_t *cost = capture_member(o, "cost"), *secs;
	char sub[200];
	int m, ret;

	for (m = 0; m < RUN_COST_NR_MECHANISMS; m++)
		run->cost_seconds[m] = NAN;
	run->injected_seconds = NAN;
	if (!cost)
		return 0;
	snprintf(sub, sizeof(sub), "%s.cost", path);
	if ((ret = capture_rd_object(r, cost, sub)) ||
	    (ret = capture_rd_num(r, cost, sub, "injected_seconds", &run->injected_seconds,
				  NUM_COUNT)))
		return ret;
	run->has_cost = 1;
	if (!(secs = capture_member(cost, "seconds")))
		return 0;
	snprintf(sub, sizeof(sub), "%s.cost.seconds", path);
	return read_mechanisms(r, secs, sub, run->cost_seconds, NULL, NULL);
}

/* A run's "cost", over what was read (source, NULL when built). */
static json_t *run_cost_json(const struct capture_run *run, const struct capture_section *source)
{
	json_t *cost = capture_start(source);

	capture_put_num(cost, "injected_seconds", run->injected_seconds);
	json_object_set_new(cost, "seconds", mechanisms_json(SEC(json_object_get(cost, "seconds")),
							    run->cost_seconds));
	return cost;
}

json_t *capture_run_cost_json(const struct capture_run *run)
{
	return run_cost_json(run, NULL);
}

int capture_read_run(const struct rd *r, json_t *o, const char *path, struct capture_run *run)
{
	json_t *files, *v;
	char sub[160];
	long long exit_status;
	size_t i;
	int ret;

	run->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_intv(r, o, path, "index", &run->index, 0, CAPTURE_LIST_MAX, -2)) ||
	    (ret = capture_rd_str(r, o, path, "variant", &run->variant, 0)) ||
	    (ret = capture_rd_str(r, o, path, "description", &run->description, 0)) ||
	    (ret = capture_rd_str(r, o, path, "log", &run->log, 0)) ||
	    (ret = capture_rd_str(r, o, path, "stdout", &run->stdout_path, 0)) ||
	    (ret = capture_rd_str(r, o, path, "stderr", &run->stderr_path, 0)) ||
	    (ret = capture_rd_str(r, o, path, "events", &run->events, 0)) ||
	    (ret = capture_rd_str(r, o, path, "status", &run->status, 0)) ||
	    (ret = capture_rd_int(r, o, path, "exit_status", &exit_status, -2147483648LL,
				  2147483647LL, 1LL << 40)) ||
	    (ret = capture_rd_num(r, o, path, "wall_seconds", &run->wall_seconds, NUM_COUNT)) ||
	    (ret = capture_rd_intv(r, o, path, "gpu", &run->gpu, 0, 1023, -1)) ||
	    (ret = capture_rd_str(r, o, path, "stdout_sha256", &run->stdout_sha256, 0)) ||
	    (ret = capture_rd_bool(r, o, path, "files_walk_truncated", &run->files_walk_truncated)) ||
	    (ret = capture_rd_bool(r, o, path, "files_compared", &run->files_compared)) ||
	    (ret = read_run_cost(r, o, path, run)) ||
	    (ret = capture_rd_array(r, o, path, "files", &files)))
		return ret;
	if (run->index == -2)
		return capture_fail(r, path, "index", "missing: every run has an index");
	run->has_gpu = run->gpu >= 0;
	run->has_exit_status = exit_status != 1LL << 40;
	run->exit_status = run->has_exit_status ? (int)exit_status : 0;
	run->has_files = files != NULL;
	if (!files)
		return 0;
	run->files = xcalloc(json_array_size(files) + 1, sizeof(*run->files));
	json_array_foreach(files, i, v) {
		snprintf(sub, sizeof(sub), "%s.files[%zu]", path, i);
		if ((ret = read_file(r, v, sub, &run->files[run->nr_files++])))
			return ret;
	}
	return 0;
}

json_t *capture_run_json(const struct capture_run *run)
{
	json_t *o = capture_start(run->source);
	size_t i;

	json_object_set_new(o, "index", json_integer(run->index));
	capture_put_str(o, "variant", run->variant);
	capture_put_str(o, "description", run->description);
	capture_put_str(o, "log", run->log);
	capture_put_str(o, "stdout", run->stdout_path);
	capture_put_str(o, "stderr", run->stderr_path);
	capture_put_str(o, "events", run->events);
	capture_put_str(o, "status", run->status);
	if (run->has_exit_status)
		json_object_set_new(o, "exit_status", json_integer(run->exit_status));
	capture_put_num(o, "wall_seconds", run->wall_seconds);
	if (run->has_gpu)
		json_object_set_new(o, "gpu", json_integer(run->gpu));
	capture_put_str(o, "stdout_sha256", run->stdout_sha256);
	capture_put_bool(o, "files_walk_truncated", run->files_walk_truncated);
	capture_put_bool(o, "files_compared", run->files_compared);
	if (run->has_cost)
		json_object_set_new(o, "cost", run_cost_json(run, SEC(json_object_get(o, "cost"))));
	if (run->has_files) {
		json_t *arr = json_array();

		for (i = 0; i < run->nr_files; i++) {
			const struct capture_file *f = &run->files[i];
			json_t *fj = capture_start(f->source);

			json_object_set_new(fj, "path", json_string(f->path));
			if (f->removed)
				json_object_set_new(fj, "removed", json_true());
			capture_put_num(fj, "size", f->size);
			capture_put_str(fj, "sha256", f->sha256);
			capture_put_str(fj, "copy", f->copy);
			json_array_append_new(arr, fj);
		}
		json_object_set_new(o, "files", arr);
	}
	return o;
}

int capture_run_from_json(struct capture_run *run, json_t *o, const char *name)
{
	struct rd r = { name };

	return capture_read_run(&r, o, "run", run);
}

void capture_run_release(struct capture_run *run)
{
	size_t f;

	free(run->variant);
	free(run->description);
	free(run->log);
	free(run->stdout_path);
	free(run->stderr_path);
	free(run->events);
	free(run->status);
	free(run->stdout_sha256);
	for (f = 0; f < run->nr_files; f++) {
		free(run->files[f].path);
		free(run->files[f].sha256);
		free(run->files[f].copy);
	}
	free(run->files);
	memset(run, 0, sizeof(*run));
}

const struct capture_run *capture_find_run(const struct capture *cap, int index)
{
	size_t i;

	for (i = 0; i < cap->nr_runs; i++)
		if (cap->runs[i].index == index)
			return &cap->runs[i];
	return NULL;
}

int capture_read_measure(const struct rd *r, json_t *doc, struct capture *cap)
{
	struct capture_measure *m = &cap->measure;
	json_t *o = capture_member(doc, "measure"), *kernels, *k, *variants, *v;
	const char *kname, *vname;
	char sub[400];
	double s;
	int ret;

	if (!o)
		return 0;
	cap->has_measure = 1;
	m->source = SEC(o);
	if ((ret = capture_rd_object(r, o, "measure")) ||
	    (ret = capture_rd_str(r, o, "measure", "method", &m->method, 0)))
		return ret;
	if (!(kernels = capture_member(o, "kernels")))
		return 0;
	if ((ret = capture_rd_object(r, kernels, "measure.kernels")))
		return ret;
	json_object_foreach(kernels, kname, k) {
		snprintf(sub, sizeof(sub), "measure.kernels.%.300s", kname);
		if ((ret = capture_rd_object(r, k, sub)))
			return ret;
		if (!(variants = capture_member(k, "variants")))
			continue;
		snprintf(sub, sizeof(sub), "measure.kernels.%.300s.variants", kname);
		if ((ret = capture_rd_object(r, variants, sub)))
			return ret;
		json_object_foreach(variants, vname, v) {
			snprintf(sub, sizeof(sub), "measure.kernels.%.200s.variants.%.150s", kname,
				 vname);
			if ((ret = capture_rd_object(r, v, sub)) ||
			    (ret = capture_rd_num(r, v, sub, "samples", &s, NUM_COUNT)))
				return ret;
			if (!isnan(s))
				m->samples += floor(s);
		}
	}
	return 0;
}

/* In this order: analysis/capture_cost.c names the steps by index. */
const char *const capture_steps[CAPTURE_NR_STEPS] = {
	"discover", "monitor", "capture", "baseline", "verify", "l2", "oracle", "rebuild", "other",
};

/* A step -> number object (runs_by_step, seconds_by_step): known steps only. */
static int read_by_step(const struct rd *r, json_t *o, const char *path, const char *key,
			long long *ints, double *reals)
{
	json_t *by = capture_member(o, key), *v;
	const char *step;
	char sub[96];
	size_t i;
	int ret;

	for (i = 0; i < CAPTURE_NR_STEPS; i++) {
		if (ints)
			ints[i] = 0;
		if (reals)
			reals[i] = NAN;
	}
	if (!by)
		return 0;
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if ((ret = capture_rd_object(r, by, sub)))
		return ret;
	json_object_foreach(by, step, v) {
		for (i = 0; i < CAPTURE_NR_STEPS; i++)
			if (!strcmp(step, capture_steps[i]))
				break;
		if (i == CAPTURE_NR_STEPS)
			continue;   /* a step of a newer version: kept as written */
		if (ints && (ret = capture_rd_int(r, by, sub, step, &ints[i], 0, CAPTURE_LIST_MAX, 0)))
			return ret;
		if (reals && (ret = capture_rd_num(r, by, sub, step, &reals[i], NUM_COUNT)))
			return ret;
	}
	return 0;
}

int capture_read_cost(const struct rd *r, json_t *o, struct capture_cost *c)
{
	json_t *by;
	int ret, m;

	c->source = SEC(o);
	if ((ret = capture_rd_object(r, o, "cost")) ||
	    (ret = capture_rd_int(r, o, "cost", "program_runs", &c->program_runs, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = read_by_step(r, o, "cost", "runs_by_step", c->runs_by_step, NULL)) ||
	    (ret = read_by_step(r, o, "cost", "seconds_by_step", NULL, c->seconds_by_step)) ||
	    (ret = capture_rd_int(r, o, "cost", "launches_counted", &c->launches_counted, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_num(r, o, "cost", "wall_seconds", &c->wall_seconds, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, "cost", "native_seconds", &c->native_seconds, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, "cost", "ratio", &c->ratio, NUM_COUNT)))
		return ret;
	for (m = 0; m < RUN_COST_NR_MECHANISMS; m++)
		c->mechanism_seconds[m] = NAN;
	c->program_seconds = c->tool_seconds = NAN;
	if (!(by = capture_member(o, "seconds_by_mechanism")))
		return 0;
	c->has_mechanisms = 1;
	return read_mechanisms(r, by, "cost.seconds_by_mechanism", c->mechanism_seconds,
			       &c->program_seconds, &c->tool_seconds);
}

json_t *capture_cost_to_json(const struct capture_cost *c)
{
	json_t *o = capture_start(c->source), *by, *secs;
	size_t i;

	capture_put_int(o, "program_runs", c->program_runs, -1);
	by = capture_start(SEC(json_object_get(o, "runs_by_step")));
	secs = capture_start(SEC(json_object_get(o, "seconds_by_step")));
	for (i = 0; i < CAPTURE_NR_STEPS; i++) {
		if (c->runs_by_step[i] || json_object_get(by, capture_steps[i]))
			json_object_set_new(by, capture_steps[i],
					    json_integer(c->runs_by_step[i]));
		capture_put_num(secs, capture_steps[i], c->seconds_by_step[i]);
	}
	if (json_object_get(o, "runs_by_step") || json_object_size(by))
		json_object_set_new(o, "runs_by_step", by);
	else
		json_decref(by);
	if (json_object_get(o, "seconds_by_step") || json_object_size(secs))
		json_object_set_new(o, "seconds_by_step", secs);
	else
		json_decref(secs);
	capture_put_int(o, "launches_counted", c->launches_counted, -1);
	capture_put_num(o, "wall_seconds", c->wall_seconds);
	capture_put_num(o, "native_seconds", c->native_seconds);
	capture_put_num(o, "ratio", c->ratio);
	if (c->has_mechanisms) {
		json_t *mj = mechanisms_json(SEC(json_object_get(o, "seconds_by_mechanism")),
					     c->mechanism_seconds);

		capture_put_num(mj, "program", c->program_seconds);
		capture_put_num(mj, "tool", c->tool_seconds);
		json_object_set_new(o, "seconds_by_mechanism", mj);
	}
	return o;
}

int capture_read_budget(const struct rd *r, json_t *o, struct capture_budget *b)
{
	json_t *arr, *v;
	char sub[64];
	size_t i;
	int ret;

	b->source = SEC(o);
	if ((ret = capture_rd_object(r, o, "budget")) ||
	    (ret = capture_rd_num(r, o, "budget", "factor", &b->factor, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, "budget", "seconds", &b->seconds, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, "budget", "native_seconds", &b->native_seconds, NUM_COUNT)) ||
	    (ret = capture_rd_array(r, o, "budget", "skipped", &arr)))
		return ret;
	b->skipped = xcalloc(json_array_size(arr) + 1, sizeof(*b->skipped));
	json_array_foreach(arr, i, v) {
		struct capture_budget_skip *s = &b->skipped[b->nr_skipped++];

		snprintf(sub, sizeof(sub), "budget.skipped[%zu]", i);
		s->source = SEC(v);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_str(r, v, sub, "step", &s->step, 1)) ||
		    (ret = capture_rd_intv(r, v, sub, "runs", &s->runs, 0, CAPTURE_LIST_MAX, -1)) ||
		    (ret = capture_rd_num(r, v, sub, "estimate_seconds", &s->estimate_seconds, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "spent_seconds", &s->spent_seconds, NUM_COUNT)))
			return ret;
	}
	return 0;
}

json_t *capture_budget_json(const struct capture_budget *b)
{
	json_t *o = capture_start(b->source), *arr = json_array();
	size_t i;

	capture_put_num(o, "factor", b->factor);
	capture_put_num(o, "seconds", b->seconds);
	capture_put_num(o, "native_seconds", b->native_seconds);
	for (i = 0; i < b->nr_skipped; i++) {
		json_t *sj = capture_start(b->skipped[i].source);

		json_object_set_new(sj, "step", json_string(b->skipped[i].step));
		capture_put_int(sj, "runs", b->skipped[i].runs, -1);
		capture_put_num(sj, "estimate_seconds", b->skipped[i].estimate_seconds);
		capture_put_num(sj, "spent_seconds", b->skipped[i].spent_seconds);
		json_array_append_new(arr, sj);
	}
	if (b->nr_skipped || json_object_get(o, "skipped"))
		json_object_set_new(o, "skipped", arr);
	else
		json_decref(arr);
	return o;
}

void capture_budget_release(struct capture_budget *b)
{
	size_t i;

	for (i = 0; i < b->nr_skipped; i++)
		free(b->skipped[i].step);
	free(b->skipped);
}
