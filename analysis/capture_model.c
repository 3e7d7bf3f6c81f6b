/*
 * capture.json's one reader and one writer (analysis/capture_model.h).
 *
 * Reading: every field the model knows is read by a typed getter that
 * names the field's JSON path in its refusal; cross-references are checked
 * once the whole document is read. Writing: each object starts from its
 * source (the object as read) and gets the typed fields written over it.
 * This file holds the document; each section's reader, writer and release
 * are in capture_model_<section>.c (analysis/capture_model_internal.h).
 */
#include "analysis/capture_model.h"
#include "analysis/capture_model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/capture_names.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"

/* ---- reading ---------------------------------------------------------- */

static int check_references(const struct rd *r, struct capture *cap)
{
	char path[200];
	size_t i, a, b;

	for (i = 0; i < cap->nr_kernels; i++) {
		const struct capture_kernel *k = &cap->kernels[i];

		snprintf(path, sizeof(path), "kernels[%zu]", i);
		if (!capture_find_module(cap, k->module))
			return capture_fail(r, path, "module", "\"%s\" is not a module of \"modules\"",
					    k->module);
		for (a = 0; a < i; a++)
			if (!strcmp(cap->kernels[a].module, k->module) &&
			    !strcmp(cap->kernels[a].name, k->name))
				return capture_fail(r, path, "name", "kernel %s of module %s is listed twice "
						    "(also kernels[%zu])", k->name, k->module, a);
		if (!cap->has_runs)
			goto allocs;
		for (a = 0; a < k->nr_loads; a++) {
			int run = k->loads[a].run;

			if (run >= 0 && !capture_find_run(cap, run)) {
				snprintf(path, sizeof(path), "kernels[%zu].loads[%zu]", i, a);
				return capture_fail(r, path, "run", "run %d is not in \"runs\"", run);
			}
		}
		for (a = 0; a < k->nr_pairs; a++) {
			int run = k->pairs[a].run;

			if (run >= 0 && !capture_find_run(cap, run)) {
				snprintf(path, sizeof(path), "kernels[%zu].pairs[%zu]", i, a);
				return capture_fail(r, path, "run", "run %d is not in \"runs\"", run);
			}
		}
allocs:
		if (!cap->has_allocations)
			continue;
		for (a = 0; a < k->nr_allocs_used; a++) {
			long long seq = k->allocs_used[a].alloc;

			for (b = 0; b < cap->nr_allocations; b++)
				if (cap->allocations[b].seq == seq)
					break;
			if (b == cap->nr_allocations) {
				snprintf(path, sizeof(path), "kernels[%zu].allocs_used[%zu]", i, a);
				return capture_fail(r, path, "alloc",
						    "allocation %lld is not in \"allocations\"", seq);
			}
		}
	}
	for (i = 0; i < cap->nr_modules; i++)
		for (a = 0; a < i; a++)
			if (!strcmp(cap->modules[a].id, cap->modules[i].id)) {
				snprintf(path, sizeof(path), "modules[%zu]", i);
				return capture_fail(r, path, "id", "module %s is listed twice",
						    cap->modules[i].id);
			}
	for (i = 0; i < cap->nr_runs; i++)
		for (a = 0; a < i; a++)
			if (cap->runs[a].index == cap->runs[i].index) {
				snprintf(path, sizeof(path), "runs[%zu]", i);
				return capture_fail(r, path, "index", "run %d is listed twice",
						    cap->runs[i].index);
			}
	for (i = 0; i < cap->nr_allocations; i++)
		for (a = 0; a < i; a++)
			if (cap->allocations[a].seq == cap->allocations[i].seq) {
				snprintf(path, sizeof(path), "allocations[%zu]", i);
				return capture_fail(r, path, "seq", "allocation %lld is listed twice",
						    cap->allocations[i].seq);
			}
	if (cap->has_baseline_check && cap->has_runs)
		for (i = 0; i < cap->baseline_check.nr_runs; i++)
			if (!capture_find_run(cap, (int)cap->baseline_check.runs[i]))
				return capture_fail(r, "baseline_check", "runs",
						    "item %zu is not the index of a run in \"runs\"", i);
	return 0;
}

int capture_from_json(struct capture *cap, json_t *doc, const char *name)
{
	struct rd r = { .name = name ? name : CAPTURE_LAYOUT_CAPTURE };
	json_t *o, *arr, *v;
	char path[64];
	size_t i;
	int ret;

	if (!json_is_object(doc))
		return error_set(CA_E_INPUT, "capture '%s': not a JSON object", r.name);
	cap->source = (struct capture_section *)json_deep_copy(doc);
	doc = JS(cap->source);
	if ((ret = capture_rd_str(&r, doc, "", "schema", &cap->schema, 1)) ||
	    (ret = capture_rd_str(&r, doc, "", "status", &cap->status, 0)) ||
	    (ret = capture_rd_str(&r, doc, "", "tool_version", &cap->tool_version, 0)) ||
	    (ret = capture_rd_str(&r, doc, "", "created", &cap->created, 0)))
		return ret;
	if ((o = capture_member(doc, "program"))) {
		cap->has_program = 1;
		if ((ret = capture_read_program(&r, o, &cap->program)))
			return ret;
	}
	if ((o = capture_member(doc, "device")) && (ret = capture_read_device(&r, o, cap)))
		return ret;
	if ((o = capture_member(doc, "options"))) {
		cap->has_options = 1;
		if ((ret = capture_read_options(&r, o, &cap->options)))
			return ret;
	}
	if ((ret = capture_rd_array(&r, doc, "", "modules", &arr)))
		return ret;
	cap->has_modules = arr != NULL;
	cap->modules = xcalloc(json_array_size(arr) + 1, sizeof(*cap->modules));
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "modules[%zu]", i);
		if ((ret = capture_read_module(&r, v, path, &cap->modules[cap->nr_modules++])))
			return ret;
	}
	cap->has_runs = json_object_get(doc, "runs") != NULL;
	if ((ret = capture_rd_array(&r, doc, "", "runs", &arr)))
		return ret;
	cap->runs = xcalloc(json_array_size(arr) + 1, sizeof(*cap->runs));
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "runs[%zu]", i);
		if ((ret = capture_read_run(&r, v, path, &cap->runs[cap->nr_runs++])))
			return ret;
	}
	if ((ret = capture_rd_array(&r, doc, "", "kernels", &arr)))
		return ret;
	if (!arr)
		return capture_fail(&r, "", "kernels", "missing: a capture lists its kernels (an empty list "
				    "when none was measured)");
	cap->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*cap->kernels));
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "kernels[%zu]", i);
		if ((ret = capture_read_kernel(&r, v, path, &cap->kernels[cap->nr_kernels++])))
			return ret;
	}
	if ((ret = capture_rd_strings(&r, doc, "", "notes", &cap->notes, &cap->nr_notes, &cap->has_notes)))
		return ret;
	cap->has_all_kernels = json_object_get(doc, "all_kernels") != NULL;
	if ((ret = capture_rd_array(&r, doc, "", "all_kernels", &arr)))
		return ret;
	cap->all_kernels = xcalloc(json_array_size(arr) + 1, sizeof(*cap->all_kernels));
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "all_kernels[%zu]", i);
		if ((ret = capture_read_kernel_seen(&r, v, path,
						    &cap->all_kernels[cap->nr_all_kernels++])))
			return ret;
	}
	cap->has_allocations = json_object_get(doc, "allocations") != NULL;
	if ((ret = capture_rd_array(&r, doc, "", "allocations", &arr)))
		return ret;
	cap->allocations = xcalloc(json_array_size(arr) + 1, sizeof(*cap->allocations));
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "allocations[%zu]", i);
		if ((ret = capture_read_allocation(&r, v, path,
						   &cap->allocations[cap->nr_allocations++])))
			return ret;
	}
	if ((o = capture_member(doc, "baseline_check"))) {
		cap->has_baseline_check = 1;
		if ((ret = capture_read_baseline_check(&r, o, &cap->baseline_check)))
			return ret;
	}
	if ((ret = capture_read_measure(&r, doc, cap)))
		return ret;
	if ((o = capture_member(doc, "oracle"))) {
		cap->oracle = xcalloc(1, sizeof(*cap->oracle));
		if ((ret = capture_read_oracle(&r, o, cap->oracle)))
			return ret;
	}
	if ((o = capture_member(doc, "cost"))) {
		cap->has_cost = 1;
		if ((ret = capture_read_cost(&r, o, &cap->cost)))
			return ret;
	}
	if (cap->has_baseline_check && (o = capture_member(JS(cap->baseline_check.source), "output"))) {
		cap->has_baseline_output = 1;
		if ((ret = capture_read_output_check(&r, o, "baseline_check.output", &cap->baseline_output)))
			return ret;
	}
	if ((o = capture_member(doc, "verification"))) {
		cap->has_verification = 1;
		if ((ret = capture_read_verification(&r, o, &cap->verification)))
			return ret;
	}
	if (cap->has_verification && (o = capture_member(JS(cap->verification.source), "output"))) {
		cap->has_verification_output = 1;
		if ((ret = capture_read_output_check(&r, o, "verification.output",
						     &cap->verification_output)))
			return ret;
	}
	if ((o = capture_member(doc, "l2"))) {
		cap->has_l2 = 1;
		if ((ret = capture_read_l2(&r, o, &cap->l2)))
			return ret;
	}
	if ((o = capture_member(doc, "carveout"))) {
		cap->has_carveout = 1;
		if ((ret = capture_read_carveout(&r, o, &cap->carveout)))
			return ret;
	}
	if ((o = capture_member(doc, "budget"))) {
		cap->has_budget = 1;
		if ((ret = capture_read_budget(&r, o, &cap->budget)))
			return ret;
	}
	return check_references(&r, cap);
}

int capture_load_file(struct capture *cap, const char *path)
{
	json_t *doc = json_file_load(path);
	int ret;

	if (!doc)
		return CA_E_INPUT;
	ret = json_check_schema(doc, path, CAPTURE_SCHEMA);
	if (!ret)
		ret = capture_from_json(cap, doc, path);
	json_decref(doc);
	return ret;
}

int capture_validate_json(json_t *doc, const char *name)
{
	struct capture cap;
	int ret;

	capture_init(&cap);
	ret = capture_from_json(&cap, doc, name);
	capture_release(&cap);
	return ret;
}

/* A kernel's measured numbers, dropped: its loads are then "not measured". */
static void drop_measurements(json_t *kernel)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(kernel, "loads"), i, v)
		if (json_object_get(v, "hit"))
			json_object_set_new(v, "hit", json_null());
	json_array_foreach(json_object_get(kernel, "pairs"), i, v) {
		json_object_set_new(v, "hit", json_null());
		json_object_del(v, "noise");
	}
}

int capture_settle_json(json_t *doc, const char *name, struct capture_dropped **dropped,
			size_t *nr)
{
	json_t *kernels = json_object_get(doc, "kernels"), *k;
	size_t i;

	*dropped = NULL;
	*nr = 0;
	if (!capture_validate_json(doc, name))
		return 0;
	json_array_foreach(kernels, i, k) {
		/* the kernel alone, with what its references need */
		json_t *one = json_copy(doc);

		json_object_set_new(one, "kernels", json_pack("[O]", k));
		if (capture_validate_json(one, name)) {
			*dropped = xrealloc(*dropped, (*nr + 1) * sizeof(**dropped));
			(*dropped)[*nr].kernel = xstrdup(json_string_value(json_object_get(k, "name")) ?:
							 "?");
			(*dropped)[*nr].why = xstrdup(error_message());
			(*nr)++;
			drop_measurements(k);
		}
		json_decref(one);
	}
	return capture_validate_json(doc, name);
}

void capture_dropped_free(struct capture_dropped *dropped, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(dropped[i].kernel);
		free(dropped[i].why);
	}
	free(dropped);
}

/* ---- writing ---------------------------------------------------------- */

json_t *capture_to_json(const struct capture *cap)
{
	json_t *doc = capture_start(cap->source), *arr;
	size_t i;

	json_object_set_new(doc, "schema", json_string(cap->schema ? cap->schema : CAPTURE_SCHEMA));
	capture_put_str(doc, "status", cap->status);
	capture_put_str(doc, "tool_version", cap->tool_version);
	capture_put_str(doc, "created", cap->created);
	if (cap->has_program)
		json_object_set_new(doc, "program", capture_program_json(&cap->program));
	if (cap->has_device && !cap->device_json)
		json_object_set_new(doc, "device", device_model_to_json(&cap->device));
	if (cap->has_options)
		json_object_set_new(doc, "options", capture_options_json(&cap->options));
	if (cap->has_modules || cap->nr_modules) {
		arr = json_array();
		for (i = 0; i < cap->nr_modules; i++)
			json_array_append_new(arr, capture_module_json(&cap->modules[i]));
		json_object_set_new(doc, "modules", arr);
	}
	if (cap->has_runs || cap->nr_runs) {
		arr = json_array();
		for (i = 0; i < cap->nr_runs; i++)
			json_array_append_new(arr, capture_run_json(&cap->runs[i]));
		json_object_set_new(doc, "runs", arr);
	}
	arr = json_array();
	for (i = 0; i < cap->nr_kernels; i++)
		json_array_append_new(arr, capture_kernel_json(&cap->kernels[i]));
	json_object_set_new(doc, "kernels", arr);
	if (cap->has_notes || cap->nr_notes)
		json_object_set_new(doc, "notes", capture_strings_json(cap->notes, cap->nr_notes));
	if (cap->has_all_kernels || cap->nr_all_kernels) {
		arr = json_array();
		for (i = 0; i < cap->nr_all_kernels; i++)
			json_array_append_new(arr, capture_kernel_seen_json(&cap->all_kernels[i]));
		json_object_set_new(doc, "all_kernels", arr);
	}
	if (cap->has_allocations || cap->nr_allocations) {
		arr = json_array();
		for (i = 0; i < cap->nr_allocations; i++)
			json_array_append_new(arr, capture_allocation_json(&cap->allocations[i]));
		json_object_set_new(doc, "allocations", arr);
	}
	if (cap->has_cost)
		json_object_set_new(doc, "cost", capture_cost_to_json(&cap->cost));

	if (cap->has_baseline_check)
		json_object_set_new(doc, "baseline_check", capture_baseline_check_json(
			&cap->baseline_check, cap->has_baseline_output ? &cap->baseline_output : NULL));
	if (cap->oracle)
		json_object_set_new(doc, "oracle", capture_oracle_json(cap->oracle));
	if (cap->has_verification)
		json_object_set_new(doc, "verification", capture_verification_json(&cap->verification));
	if (cap->has_verification_output && json_is_object(json_object_get(doc, "verification"))) {
		json_t *ver = json_copy(json_object_get(doc, "verification"));

		json_object_set_new(ver, "output", capture_output_check_json(&cap->verification_output));
		json_object_set_new(doc, "verification", ver);
	}
	if (cap->has_l2)
		json_object_set_new(doc, "l2", capture_l2_json(&cap->l2));
	if (cap->has_carveout)
		json_object_set_new(doc, "carveout", capture_carveout_json(&cap->carveout));
	if (cap->has_budget)
		json_object_set_new(doc, "budget", capture_budget_json(&cap->budget));
	/* the copy shares untouched members with cap's source: give the
	 * caller a document of its own */
	arr = json_deep_copy(doc);
	json_decref(doc);
	return arr;
}

int capture_write_file(const struct capture *cap, const char *path)
{
	json_t *doc = capture_to_json(cap);
	int ret = capture_validate_json(doc, path);

	if (!ret)
		ret = json_file_write(path, doc);
	json_decref(doc);
	return ret;
}

/* ---- lifecycle -------------------------------------------------------- */

void capture_init(struct capture *cap)
{
	memset(cap, 0, sizeof(*cap));
	device_model_init(&cap->device);
}

void capture_release(struct capture *cap)
{
	size_t i;

	if (!cap)
		return;
	free(cap->schema);
	free(cap->status);
	free(cap->tool_version);
	free(cap->created);
	capture_program_release(&cap->program);
	device_model_release(&cap->device);
	free(cap->device_partitioned);
	capture_oracle_free(cap->oracle);
	capture_baseline_check_release(&cap->baseline_check);
	free(cap->measure.method);
	capture_options_release(&cap->options);
	for (i = 0; i < cap->nr_modules; i++)
		capture_module_release(&cap->modules[i]);
	free(cap->modules);
	for (i = 0; i < cap->nr_runs; i++)
		capture_run_release(&cap->runs[i]);
	free(cap->runs);
	for (i = 0; i < cap->nr_kernels; i++)
		capture_kernel_release(&cap->kernels[i]);
	free(cap->kernels);
	capture_free_strings(cap->notes, cap->nr_notes);
	for (i = 0; i < cap->nr_all_kernels; i++)
		capture_kernel_seen_release(&cap->all_kernels[i]);
	free(cap->all_kernels);
	free(cap->allocations);
	capture_l2_release(&cap->l2);
	capture_verification_release(&cap->verification);
	capture_output_check_release(&cap->baseline_output);
	capture_output_check_release(&cap->verification_output);
	capture_carveout_release(&cap->carveout);
	capture_budget_release(&cap->budget);
	json_decref(JS(cap->source));
	memset(cap, 0, sizeof(*cap));
}
