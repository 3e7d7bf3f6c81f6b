/*
 * The capture model (analysis/capture_model_internal.h): speedups, verdicts,
 * output checks, baseline_check, verification and the oracle.
 */
#include "analysis/capture_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ptx.h"
#include "base/xalloc.h"

int capture_read_speedup(const struct rd *r, json_t *o, const char *path, const char *key,
			 struct capture_speedup *sp)
{
	json_t *v = capture_member(o, key);
	char sub[160];
	int ret;

	sp->min = sp->median = sp->max = NAN;
	sp->plain = 0;
	if (!v)
		return 0;
	if (json_is_number(v)) {
		/* a verdict of older captures: the median alone */
		sp->plain = 1;
		if ((ret = capture_rd_num(r, o, path, key, &sp->median, NUM_COUNT)))
			return ret;
		return 0;
	}
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if ((ret = capture_rd_object(r, v, sub)) ||
	    (ret = capture_rd_num(r, v, sub, "min", &sp->min, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, v, sub, "median", &sp->median, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, v, sub, "max", &sp->max, NUM_COUNT)))
		return ret;
	return 0;
}

json_t *capture_speedup_json(json_t *into, const char *key, const struct capture_speedup *sp)
{
	json_t *o;

	if (isnan(sp->median) && isnan(sp->min) && isnan(sp->max) && !json_object_get(into, key))
		return into;
	if (sp->plain) {
		capture_put_num(into, key, sp->median);
		return into;
	}
	o = capture_start(SEC(json_object_get(into, key)));
	capture_put_num(o, "min", sp->min);
	capture_put_num(o, "median", sp->median);
	capture_put_num(o, "max", sp->max);
	json_object_set_new(into, key, o);
	return into;
}

int capture_speedup_from_json(struct capture_speedup *sp, json_t *o, const char *key,
			      const char *name)
{
	struct rd r = { name };

	return capture_read_speedup(&r, o, "", key, sp);
}

int capture_read_verdict(const struct rd *r, json_t *o, const char *path, struct capture_verdict *v)
{
	json_t *arr, *x, *rv;
	char sub[240], vsub[260];
	size_t i;
	int ret;

	v->source = SEC(o);
	v->noise = v->spread = NAN;
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_str(r, o, path, "name", &v->name, 0)) ||
	    (ret = capture_rd_str(r, o, path, "module", &v->module, 0)) ||
	    (ret = capture_read_speedup(r, o, path, "speedup", &v->speedup)) ||
	    (ret = capture_rd_num(r, o, path, "noise", &v->noise, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, path, "spread", &v->spread, NUM_COUNT)) ||
	    (ret = capture_rd_bool(r, o, path, "kept", &v->kept)) ||
	    (ret = capture_rd_str(r, o, path, "reason", &v->reason, 0)) ||
	    (ret = capture_rd_array(r, o, path, "ranks", &arr)))
		return ret;
	/* a job's ranks apart (issue 29): each rank's own verdict, or why none */
	v->ranks = xcalloc(json_array_size(arr) + 1, sizeof(*v->ranks));
	json_array_foreach(arr, i, x) {
		struct capture_rank_verdict *rk = &v->ranks[v->nr_ranks++];
		struct capture_speedup sp;
		long long rank;

		snprintf(sub, sizeof(sub), "%.200s.ranks[%zu]", path, i);
		rk->median = NAN;
		rk->kept = -1;
		if ((ret = capture_rd_object(r, x, sub)) ||
		    (ret = capture_rd_int(r, x, sub, "rank", &rank, 0, 1 << 30, -1)) ||
		    (ret = capture_rd_str(r, x, sub, "gpu", &rk->gpu, 0)) ||
		    (ret = capture_rd_str(r, x, sub, "not_timed", &rk->not_timed, 0)))
			return ret;
		if (rank < 0)
			return capture_fail(r, sub, "rank", "missing: the rank of the job");
		rk->rank = (int)rank;
		if (!(rv = capture_member(x, "verdict")))
			continue;
		snprintf(vsub, sizeof(vsub), "%s.verdict", sub);
		if ((ret = capture_rd_object(r, rv, vsub)) ||
		    (ret = capture_read_speedup(r, rv, vsub, "speedup", &sp)) ||
		    (ret = capture_rd_bool(r, rv, vsub, "kept", &rk->kept)))
			return ret;
		rk->median = sp.median;
	}
	return 0;
}

json_t *capture_verdict_json(const struct capture_verdict *v)
{
	json_t *o = capture_start(v->source);

	capture_put_str(o, "name", v->name);
	capture_put_str(o, "module", v->module);
	capture_speedup_json(o, "speedup", &v->speedup);
	capture_put_num(o, "noise", v->noise);
	capture_put_num(o, "spread", v->spread);
	capture_put_bool(o, "kept", v->kept);
	capture_put_str(o, "reason", v->reason);
	return o;
}

static void verdict_release(struct capture_verdict *v)
{
	size_t i;

	if (!v)
		return;
	free(v->name);
	free(v->module);
	free(v->reason);
	for (i = 0; i < v->nr_ranks; i++) {
		free(v->ranks[i].gpu);
		free(v->ranks[i].not_timed);
	}
	free(v->ranks);
}

/* A kernel's own verdict (kernels[].verification). */
void capture_verdict_free(struct capture_verdict *v)
{
	verdict_release(v);
	free(v);
}

int capture_verdict_from_json(struct capture_verdict *v, json_t *o, const char *name)
{
	struct rd r = { name };

	return capture_read_verdict(&r, o, "verdict", v);
}

void capture_verdict_release(struct capture_verdict *v)
{
	verdict_release(v);
	memset(v, 0, sizeof(*v));
}

int capture_read_output_check(const struct rd *r, json_t *o, const char *path,
			      struct capture_output_check *oc)
{
	json_t *arr, *v, *md;
	char sub[160];
	size_t i;
	int ret;

	oc->source = SEC(o);
	oc->max_abs = oc->max_rel = NAN;
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_str(r, o, path, "status", &oc->status, 0)) ||
	    (ret = capture_rd_num(r, o, path, "rtol", &oc->rtol, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, path, "atol", &oc->atol, NUM_COUNT)) ||
	    (ret = capture_rd_int(r, o, path, "volatile_lines", &oc->volatile_lines, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_int(r, o, path, "unstable_lines", &oc->unstable_lines, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_int(r, o, path, "left_out", &oc->left_out, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_strings(r, o, path, "volatile_examples", &oc->volatile_examples,
				      &oc->nr_volatile_examples, NULL)) ||
	    (ret = capture_rd_strings(r, o, path, "unstable_examples", &oc->unstable_examples,
				      &oc->nr_unstable_examples, NULL)) ||
	    (ret = capture_rd_str(r, o, path, "reason", &oc->reason, 0)) ||
	    (ret = capture_rd_array(r, o, path, "files", &arr)))
		return ret;
	if ((md = capture_member(o, "max_difference"))) {
		snprintf(sub, sizeof(sub), "%s.max_difference", path);
		oc->has_max_difference = 1;
		if ((ret = capture_rd_object(r, md, sub)) ||
		    (ret = capture_rd_num(r, md, sub, "abs", &oc->max_abs, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, md, sub, "rel", &oc->max_rel, NUM_COUNT)) ||
		    (ret = capture_rd_str(r, md, sub, "where", &oc->max_where, 0)))
			return ret;
	}
	oc->files = xcalloc(json_array_size(arr) + 1, sizeof(*oc->files));
	json_array_foreach(arr, i, v) {
		struct capture_output_file *f = &oc->files[oc->nr_files++];
		int removed;

		snprintf(sub, sizeof(sub), "%s.files[%zu]", path, i);
		f->source = SEC(v);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_str(r, v, sub, "path", &f->path, 1)) ||
		    (ret = capture_rd_str(r, v, sub, "status", &f->status, 0)) ||
		    (ret = capture_rd_num(r, v, sub, "size", &f->size, NUM_COUNT)) ||
		    (ret = capture_rd_str(r, v, sub, "sha256", &f->sha256, 0)) ||
		    (ret = capture_rd_bool(r, v, sub, "removed", &removed)) ||
		    (ret = capture_rd_str(r, v, sub, "compared_as", &f->compared_as, 0)) ||
		    (ret = capture_rd_num(r, v, sub, "max_abs_difference", &f->max_abs_difference,
					  NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "max_rel_difference", &f->max_rel_difference,
					  NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "advice_size", &f->advice_size, NUM_COUNT)) ||
		    (ret = capture_rd_str(r, v, sub, "advice_sha256", &f->advice_sha256, 0)))
			return ret;
		f->removed = removed > 0;
	}
	return 0;
}

json_t *capture_output_check_json(const struct capture_output_check *oc)
{
	json_t *o = capture_start(oc->source), *arr = json_array();
	size_t i;

	capture_put_str(o, "status", oc->status);
	capture_put_num(o, "rtol", oc->rtol);
	capture_put_num(o, "atol", oc->atol);
	if (oc->has_max_difference) {
		json_t *md = capture_start(SEC(json_object_get(o, "max_difference")));

		capture_put_num(md, "abs", oc->max_abs);
		capture_put_num(md, "rel", oc->max_rel);
		capture_put_str(md, "where", oc->max_where);
		json_object_set_new(o, "max_difference", md);
	}
	capture_put_int(o, "volatile_lines", oc->volatile_lines, -1);
	if (oc->nr_volatile_examples || json_object_get(o, "volatile_examples"))
		json_object_set_new(o, "volatile_examples",
				    capture_strings_json(oc->volatile_examples, oc->nr_volatile_examples));
	capture_put_int(o, "unstable_lines", oc->unstable_lines, -1);
	if (oc->nr_unstable_examples || json_object_get(o, "unstable_examples"))
		json_object_set_new(o, "unstable_examples",
				    capture_strings_json(oc->unstable_examples, oc->nr_unstable_examples));
	capture_put_int(o, "left_out", oc->left_out, -1);
	for (i = 0; i < oc->nr_files; i++) {
		const struct capture_output_file *f = &oc->files[i];
		json_t *fj = capture_start(f->source);

		json_object_set_new(fj, "path", json_string(f->path));
		capture_put_str(fj, "status", f->status);
		capture_put_num(fj, "size", f->size);
		capture_put_str(fj, "sha256", f->sha256);
		if (f->removed)
			json_object_set_new(fj, "removed", json_true());
		capture_put_str(fj, "compared_as", f->compared_as);
		capture_put_num(fj, "max_abs_difference", f->max_abs_difference);
		capture_put_num(fj, "max_rel_difference", f->max_rel_difference);
		capture_put_num(fj, "advice_size", f->advice_size);
		capture_put_str(fj, "advice_sha256", f->advice_sha256);
		json_array_append_new(arr, fj);
	}
	if (oc->nr_files || json_object_get(o, "files"))
		json_object_set_new(o, "files", arr);
	else
		json_decref(arr);
	capture_put_str(o, "reason", oc->reason);
	return o;
}

static void output_check_release(struct capture_output_check *oc)
{
	size_t i;

	free(oc->status);
	free(oc->max_where);
	for (i = 0; i < oc->nr_volatile_examples; i++)
		free(oc->volatile_examples[i]);
	free(oc->volatile_examples);
	for (i = 0; i < oc->nr_unstable_examples; i++)
		free(oc->unstable_examples[i]);
	free(oc->unstable_examples);
	for (i = 0; i < oc->nr_files; i++) {
		free(oc->files[i].path);
		free(oc->files[i].status);
		free(oc->files[i].sha256);
		free(oc->files[i].compared_as);
		free(oc->files[i].advice_sha256);
	}
	free(oc->files);
	free(oc->reason);
}

int capture_output_check_from_json(struct capture_output_check *oc, json_t *o, const char *name)
{
	struct rd r = { name };

	return capture_read_output_check(&r, o, "output", oc);
}

void capture_output_check_release(struct capture_output_check *oc)
{
	output_check_release(oc);
	memset(oc, 0, sizeof(*oc));
}

/* "baseline_check" (its "output" is read with the other output checks). */
int capture_read_baseline_check(const struct rd *r, json_t *o, struct capture_baseline_check *bc)
{
	int ret;

	bc->source = SEC(o);
	if ((ret = capture_rd_object(r, o, "baseline_check")) ||
	    (ret = capture_rd_ints(r, o, "baseline_check", "runs", &bc->runs, &bc->nr_runs, NULL, 0,
				   0x7fffffff)) ||
	    (ret = capture_rd_bool(r, o, "baseline_check", "output_identical", &bc->output_identical)) ||
	    (ret = capture_rd_num(r, o, "baseline_check", "max_counter_spread", &bc->max_counter_spread,
				  NUM_COUNT)))
		return ret;
	return capture_rd_strings(r, o, "baseline_check", "notes", &bc->notes, &bc->nr_notes,
				  &bc->has_notes);
}

/* "baseline_check", with its "output" when output is not NULL. */
json_t *capture_baseline_check_json(const struct capture_baseline_check *b,
				    const struct capture_output_check *output)
{
	json_t *bc = capture_start(b->source), *runs = json_array();
	size_t i;

	for (i = 0; i < b->nr_runs; i++)
		json_array_append_new(runs, json_integer(b->runs[i]));
	if (b->nr_runs || json_object_get(bc, "runs"))
		json_object_set_new(bc, "runs", runs);
	else
		json_decref(runs);
	capture_put_bool(bc, "output_identical", b->output_identical);
	capture_put_num(bc, "max_counter_spread", b->max_counter_spread);
	if (b->has_notes)
		json_object_set_new(bc, "notes", capture_strings_json(b->notes, b->nr_notes));
	if (output)
		json_object_set_new(bc, "output", capture_output_check_json(output));
	return bc;
}

void capture_baseline_check_release(struct capture_baseline_check *bc)
{
	free(bc->runs);
	capture_free_strings(bc->notes, bc->nr_notes);
}

/* "verification.rebuilt" (struct capture_rebuilt), where present. */
static int read_rebuilt(const struct rd *r, json_t *o, struct capture_verification *ver)
{
	static const char *const path = "verification.rebuilt";
	struct capture_rebuilt *rb = &ver->rebuilt;
	json_t *rj = capture_member(o, "rebuilt"), *arr, *v;
	char sub[96];
	size_t i;
	int ret;

	if (!rj)
		return 0;
	ver->has_rebuilt = 1;
	rb->source = SEC(rj);
	if ((ret = capture_rd_object(r, rj, path)) ||
	    (ret = capture_rd_str(r, rj, path, "status", &rb->status, 1)) ||
	    (ret = capture_rd_str(r, rj, path, "reason", &rb->reason, 0)) ||
	    (ret = capture_rd_str(r, rj, path, "how", &rb->how, 0)) ||
	    (ret = capture_rd_num(r, rj, path, "speedup", &rb->speedup, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, rj, path, "seconds", &rb->seconds, NUM_COUNT)) ||
	    (ret = capture_rd_int(r, rj, path, "runs", &rb->runs, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_array(r, rj, path, "kernels", &arr)))
		return ret;
	rb->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*rb->kernels));
	json_array_foreach(arr, i, v) {
		struct capture_rebuilt_kernel *k = &rb->kernels[rb->nr_kernels++];

		k->kept = -1;
		snprintf(sub, sizeof(sub), "%s.kernels[%zu]", path, i);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_str(r, v, sub, "name", &k->name, 1)) ||
		    (ret = capture_rd_num(r, v, sub, "speedup", &k->speedup, NUM_COUNT)) ||
		    (ret = capture_rd_bool(r, v, sub, "kept", &k->kept)))
			return ret;
	}
	return 0;
}

int capture_read_verification(const struct rd *r, json_t *o, struct capture_verification *ver)
{
	json_t *arr, *v, *prog, *sp;
	char sub[96];
	size_t i;
	int ret;

	ver->source = SEC(o);
	ver->gpu_speedup.min = ver->gpu_speedup.median = ver->gpu_speedup.max = NAN;
	if ((ret = capture_rd_object(r, o, "verification")) ||
	    (ret = capture_rd_str(r, o, "verification", "status", &ver->status, 0)) ||
	    (ret = capture_rd_bool(r, o, "verification", "kept", &ver->kept)) ||
	    (ret = capture_read_speedup(r, o, "verification", "speedup", &ver->speedup)) ||
	    (ret = capture_rd_array(r, o, "verification", "kernels", &arr)))
		return ret;
	ver->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*ver->kernels));
	json_array_foreach(arr, i, v) {
		snprintf(sub, sizeof(sub), "verification.kernels[%zu]", i);
		if ((ret = capture_read_verdict(r, v, sub, &ver->kernels[ver->nr_kernels++])))
			return ret;
	}
	if ((prog = capture_member(o, "program"))) {
		if ((ret = capture_rd_object(r, prog, "verification.program")) ||
		    (ret = capture_read_speedup(r, prog, "verification.program", "gpu_speedup",
						&ver->gpu_speedup)))
			return ret;
	}
	if ((ret = read_rebuilt(r, o, ver)))
		return ret;
	if (!(sp = capture_member(o, "source_patch")))
		return 0;
	ver->has_source_patch = 1;
	ver->source_patch.source = SEC(sp);
	if ((ret = capture_rd_object(r, sp, "verification.source_patch")) ||
	    (ret = capture_rd_int(r, sp, "verification.source_patch", "rewritten",
				  &ver->source_patch.rewritten, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_str(r, sp, "verification.source_patch", "status",
				  &ver->source_patch.status, 0)) ||
	    (ret = capture_rd_num(r, sp, "verification.source_patch", "speedup", &ver->source_patch.speedup,
				  NUM_COUNT)) ||
	    (ret = capture_rd_strings(r, sp, "verification.source_patch", "dropped",
				      &ver->source_patch.dropped, &ver->source_patch.nr_dropped,
				      NULL)) ||
	    (ret = capture_rd_array(r, sp, "verification.source_patch", "left_out", &arr)))
		return ret;
	ver->source_patch.left_out = xcalloc(json_array_size(arr) + 1,
					     sizeof(*ver->source_patch.left_out));
	json_array_foreach(arr, i, v) {
		struct capture_left_out *l = &ver->source_patch.left_out[ver->source_patch.nr_left_out++];

		snprintf(sub, sizeof(sub), "verification.source_patch.left_out[%zu]", i);
		l->source = SEC(v);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_str(r, v, sub, "function", &l->function, 0)) ||
		    (ret = capture_rd_int(r, v, sub, "ordinal", &l->ordinal, 0, 0x7fffffff, -1)) ||
		    (ret = capture_rd_str(r, v, sub, "action", &l->action, 0)) ||
		    (ret = capture_rd_str(r, v, sub, "reason", &l->reason, 0)))
			return ret;
	}
	return 0;
}

json_t *capture_verification_json(const struct capture_verification *ver)
{
	json_t *o = capture_start(ver->source), *arr = json_array();
	size_t i;

	capture_put_str(o, "status", ver->status);
	capture_put_bool(o, "kept", ver->kept);
	capture_speedup_json(o, "speedup", &ver->speedup);
	for (i = 0; i < ver->nr_kernels; i++)
		json_array_append_new(arr, capture_verdict_json(&ver->kernels[i]));
	if (ver->nr_kernels || json_object_get(o, "kernels"))
		json_object_set_new(o, "kernels", arr);
	else
		json_decref(arr);
	if (!isnan(ver->gpu_speedup.median) || json_is_object(json_object_get(o, "program"))) {
		json_t *prog = capture_start(SEC(json_object_get(o, "program")));

		json_object_set_new(o, "program",
				    capture_speedup_json(prog, "gpu_speedup", &ver->gpu_speedup));
	}
	if (ver->has_source_patch) {
		const struct capture_source_patch *sp = &ver->source_patch;
		json_t *spj = capture_start(sp->source), *left = json_array();

		capture_put_int(spj, "rewritten", sp->rewritten, -1);
		for (i = 0; i < sp->nr_left_out; i++) {
			const struct capture_left_out *l = &sp->left_out[i];
			json_t *lj = capture_start(l->source);

			capture_put_str(lj, "function", l->function);
			capture_put_int(lj, "ordinal", l->ordinal, -1);
			capture_put_str(lj, "action", l->action);
			capture_put_str(lj, "reason", l->reason);
			json_array_append_new(left, lj);
		}
		if (sp->nr_left_out || json_object_get(spj, "left_out"))
			json_object_set_new(spj, "left_out", left);
		else
			json_decref(left);
		capture_put_str(spj, "status", sp->status);
		capture_put_num(spj, "speedup", sp->speedup);
		if (sp->nr_dropped || json_object_get(spj, "dropped"))
			json_object_set_new(spj, "dropped", capture_strings_json(sp->dropped,
										 sp->nr_dropped));
		json_object_set_new(o, "source_patch", spj);
	}
	if (ver->has_rebuilt)
		json_object_set_new(o, "rebuilt", capture_rebuilt_json(&ver->rebuilt));
	return o;
}

void capture_rebuilt_release(struct capture_rebuilt *rb)
{
	size_t i;

	free(rb->status);
	free(rb->reason);
	free(rb->how);
	for (i = 0; i < rb->nr_kernels; i++)
		free(rb->kernels[i].name);
	free(rb->kernels);
}

json_t *capture_rebuilt_json(const struct capture_rebuilt *rb)
{
	json_t *rj = capture_start(rb->source), *ks = json_array();
	size_t i;

	capture_put_str(rj, "status", rb->status);
	capture_put_str(rj, "reason", rb->reason);
	capture_put_str(rj, "how", rb->how);
	/* null, not absent, when not timed: the speedup is the section's point */
	json_object_set_new(rj, "speedup", isnan(rb->speedup) ? json_null() :
			    json_real(rb->speedup));
	capture_put_num(rj, "seconds", rb->seconds);
	capture_put_int(rj, "runs", rb->runs, -1);
	for (i = 0; i < rb->nr_kernels; i++) {
		json_t *kj = json_object();

		capture_put_str(kj, "name", rb->kernels[i].name);
		capture_put_num(kj, "speedup", rb->kernels[i].speedup);
		capture_put_bool(kj, "kept", rb->kernels[i].kept);
		json_array_append_new(ks, kj);
	}
	json_object_set_new(rj, "kernels", ks);
	return rj;
}

void capture_verification_release(struct capture_verification *ver)
{
	size_t i;

	free(ver->status);
	for (i = 0; i < ver->nr_kernels; i++)
		verdict_release(&ver->kernels[i]);
	free(ver->kernels);
	for (i = 0; i < ver->source_patch.nr_left_out; i++) {
		struct capture_left_out *l = &ver->source_patch.left_out[i];

		free(l->function);
		free(l->action);
		free(l->reason);
	}
	free(ver->source_patch.left_out);
	free(ver->source_patch.status);
	capture_rebuilt_release(&ver->rebuilt);
	capture_free_strings(ver->source_patch.dropped, ver->source_patch.nr_dropped);
}

/* An L2 oracle plan's "l2": [{"ordinal", "form"}], each form an L2
 * priority (with or without an L1 part), each load once. */
static int read_oracle_l2(const struct rd *r, json_t *p, const char *psub,
			  struct capture_oracle_plan *pl)
{
	json_t *arr, *v;
	char sub[340];
	size_t i, a;
	int ret;

	if ((ret = capture_rd_array(r, p, psub, "l2", &arr)) || !arr)
		return ret;
	pl->l2 = xcalloc(json_array_size(arr) + 1, sizeof(*pl->l2));
	json_array_foreach(arr, i, v) {
		struct capture_oracle_l2 *e = &pl->l2[pl->nr_l2++];
		enum load_action act;
		enum l2_priority pr;
		long long ord;

		snprintf(sub, sizeof(sub), "%s.l2[%zu]", psub, i);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_int(r, v, sub, "ordinal", &ord, 0, 0x7fffffff, -1)) ||
		    (ret = capture_rd_str(r, v, sub, "form", &e->form, 1)))
			return ret;
		if (ord < 0)
			return capture_fail(r, sub, "ordinal", "missing");
		if (load_form_parse(e->form, &act, &pr) || !load_form_is_l2_choice(act, pr))
			return capture_fail(r, sub, "form", "'%s' is not an L2 priority (or default)",
					    e->form);
		e->ordinal = (unsigned)ord;
		for (a = 0; a + 1 < pl->nr_l2; a++)
			if (pl->l2[a].ordinal == e->ordinal)
				return capture_fail(r, sub, "ordinal", "load %u is listed twice", e->ordinal);
	}
	return 0;
}

/* An oracle's kernel: oracle.kernels[] and a kernel's own "oracle". */
int capture_read_oracle_kernel(const struct rd *r, json_t *v, const char *sub,
			       struct capture_oracle_kernel *k)
{
	json_t *plans, *p;
	char psub[300];
	size_t j;
	int ret;

	k->source = SEC(v);
	k->best_speedup = k->advised_speedup = k->ratio = NAN;
	if ((ret = capture_rd_object(r, v, sub)) ||
	    (ret = capture_rd_str(r, v, sub, "kernel", &k->kernel, 1)) ||
	    (ret = capture_rd_str(r, v, sub, "dimension", &k->dimension, 0)) ||
	    (ret = capture_rd_int(r, v, sub, "loads", &k->loads, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_int(r, v, sub, "rounds", &k->rounds, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_num(r, v, sub, "best_speedup", &k->best_speedup, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, v, sub, "advised_speedup", &k->advised_speedup, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, v, sub, "ratio", &k->ratio, NUM_COUNT)) ||
	    (ret = capture_rd_array(r, v, sub, "plans", &plans)))
		return ret;
	k->plans = xcalloc(json_array_size(plans) + 1, sizeof(*k->plans));
	json_array_foreach(plans, j, p) {
		struct capture_oracle_plan *pl = &k->plans[k->nr_plans++];

		snprintf(psub, sizeof(psub), "%s.plans[%zu]", sub, j);
		if ((ret = capture_rd_object(r, p, psub)) ||
		    (ret = capture_rd_ints(r, p, psub, "cached", &pl->cached, &pl->nr_cached, NULL, 0,
					   CAPTURE_LIST_MAX)) ||
		    (ret = capture_rd_num(r, p, psub, "median_ns", &pl->median_ns, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, p, psub, "speedup", &pl->speedup, NUM_COUNT)) ||
		    (ret = capture_rd_str(r, p, psub, "output", &pl->output, 0)) ||
		    (ret = read_oracle_l2(r, p, psub, pl)))
			return ret;
	}
	if ((ret = capture_rd_int(r, v, sub, "best_plan", &k->best_plan, 0, (long long)k->nr_plans - 1, -1)))
		return ret;
	return capture_rd_int(r, v, sub, "advised_plan", &k->advised_plan, 0, (long long)k->nr_plans - 1,
			      -1);
}

json_t *capture_oracle_kernel_json(const struct capture_oracle_kernel *k)
{
	json_t *o = capture_start(k->source), *plans = json_array();
	size_t i, j;

	json_object_set_new(o, "kernel", json_string(k->kernel));
	capture_put_str(o, "dimension", k->dimension);
	capture_put_int(o, "loads", k->loads, -1);
	capture_put_int(o, "rounds", k->rounds, -1);
	capture_put_num(o, "best_speedup", k->best_speedup);
	capture_put_num(o, "advised_speedup", k->advised_speedup);
	capture_put_num(o, "ratio", k->ratio);
	for (i = 0; i < k->nr_plans; i++) {
		const struct capture_oracle_plan *pl = &k->plans[i];
		json_t *old = json_array_get(json_object_get(o, "plans"), i);
		json_t *p = json_is_object(old) ? json_copy(old) : json_object();
		json_t *cached = json_array();

		for (j = 0; j < pl->nr_cached; j++)
			json_array_append_new(cached, json_integer(pl->cached[j]));
		if (pl->nr_cached || json_object_get(p, "cached"))
			json_object_set_new(p, "cached", cached);
		else
			json_decref(cached);
		capture_put_num(p, "median_ns", pl->median_ns);
		capture_put_num(p, "speedup", pl->speedup);
		capture_put_str(p, "output", pl->output);
		if (pl->nr_l2 || json_object_get(p, "l2")) {
			json_t *l2 = json_array();

			for (j = 0; j < pl->nr_l2; j++)
				json_array_append_new(l2, json_pack("{s:i, s:s}", "ordinal",
					(int)pl->l2[j].ordinal, "form", pl->l2[j].form));
			json_object_set_new(p, "l2", l2);
		}
		json_array_append_new(plans, p);
	}
	if (k->nr_plans || json_object_get(o, "plans"))
		json_object_set_new(o, "plans", plans);
	else
		json_decref(plans);
	capture_put_int(o, "best_plan", k->best_plan, -1);
	capture_put_int(o, "advised_plan", k->advised_plan, -1);
	return o;
}

static void oracle_kernel_release(struct capture_oracle_kernel *k)
{
	size_t j, e;

	for (j = 0; j < k->nr_plans; j++) {
		free(k->plans[j].cached);
		free(k->plans[j].output);
		for (e = 0; e < k->plans[j].nr_l2; e++)
			free(k->plans[j].l2[e].form);
		free(k->plans[j].l2);
	}
	free(k->plans);
	free(k->kernel);
	free(k->dimension);
}

void capture_oracle_kernel_free(struct capture_oracle_kernel *k)
{
	if (!k)
		return;
	oracle_kernel_release(k);
	free(k);
}

int capture_read_oracle(const struct rd *r, json_t *o, struct capture_oracle *orc)
{
	json_t *arr, *v;
	char sub[64];
	size_t i;
	int ret;

	orc->source = SEC(o);
	orc->has_kernels = capture_member(o, "kernels") != NULL;
	if ((ret = capture_rd_object(r, o, "oracle")) ||
	    (ret = capture_rd_str(r, o, "oracle", "status", &orc->status, 0)) ||
	    (ret = capture_rd_int(r, o, "oracle", "rounds", &orc->rounds, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_int(r, o, "oracle", "plans_output_rejected", &orc->plans_output_rejected, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_array(r, o, "oracle", "kernels", &arr)))
		return ret;
	orc->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*orc->kernels));
	json_array_foreach(arr, i, v) {
		snprintf(sub, sizeof(sub), "oracle.kernels[%zu]", i);
		if ((ret = capture_read_oracle_kernel(r, v, sub, &orc->kernels[orc->nr_kernels++])))
			return ret;
	}
	return 0;
}

json_t *capture_oracle_json(const struct capture_oracle *orc)
{
	json_t *o = capture_start(orc->source), *arr = json_array();
	size_t i;

	capture_put_str(o, "status", orc->status);
	capture_put_int(o, "rounds", orc->rounds, -1);
	capture_put_int(o, "plans_output_rejected", orc->plans_output_rejected, -1);
	for (i = 0; i < orc->nr_kernels; i++)
		json_array_append_new(arr, capture_oracle_kernel_json(&orc->kernels[i]));
	if (orc->has_kernels || orc->nr_kernels)
		json_object_set_new(o, "kernels", arr);
	else
		json_decref(arr);
	return o;
}

void capture_oracle_free(struct capture_oracle *orc)
{
	size_t i;

	if (!orc)
		return;
	free(orc->status);
	for (i = 0; i < orc->nr_kernels; i++)
		oracle_kernel_release(&orc->kernels[i]);
	free(orc->kernels);
	free(orc);
}
