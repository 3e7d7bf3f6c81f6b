/*
 * The capture model (analysis/capture_model_internal.h): a kernel's
 * software_cache and register_cache, and "carveout".
 */
#include "analysis/capture_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

static int read_softcache_verification(const struct rd *r, json_t *o, const char *path,
				       struct capture_softcache_verification *v)
{
	json_t *rw, *out;
	char sub[256];              /* path (a caller's 240) and ".rewrite" */
	int ret;

	v->noise = NAN;
	v->speedup.min = v->speedup.median = v->speedup.max = NAN;
	v->rewrite_loads = v->rewrite_shared_bytes = -1;
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_str(r, o, path, "status", &v->status, 0)) ||
	    (ret = capture_rd_str(r, o, path, "reason", &v->reason, 0)) ||
	    (ret = capture_rd_bool(r, o, path, "kept", &v->kept)) ||
	    (ret = capture_rd_int(r, o, path, "repeat", &v->repeat, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_num(r, o, path, "noise", &v->noise, NUM_COUNT)) ||
	    (ret = capture_read_speedup(r, o, path, "speedup", &v->speedup)))
		return ret;
	if ((out = capture_member(o, "output"))) {
		snprintf(sub, sizeof(sub), "%s.output", path);
		if ((ret = capture_rd_object(r, out, sub)) ||
		    (ret = capture_rd_str(r, out, sub, "status", &v->output_status, 0)))
			return ret;
	}
	if (!(rw = capture_member(o, "rewrite")))
		return 0;
	v->has_rewrite = 1;
	snprintf(sub, sizeof(sub), "%s.rewrite", path);
	if ((ret = capture_rd_object(r, rw, sub)) ||
	    (ret = capture_rd_ints(r, rw, sub, "params", &v->rewrite_params, &v->nr_rewrite_params, NULL,
				   0, 4096)) ||
	    (ret = capture_rd_int(r, rw, sub, "loads", &v->rewrite_loads, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_int(r, rw, sub, "shared_bytes", &v->rewrite_shared_bytes, 0, 1LL << 32, -1)) ||
	    (ret = capture_rd_str(r, rw, sub, "ptx", &v->rewrite_ptx, 0)) ||
	    (ret = capture_rd_str(r, rw, sub, "note", &v->rewrite_note, 0)))
		return ret;
	return 0;
}

int capture_read_software_cache(const struct rd *r, json_t *o, const char *path,
				struct capture_software_cache *sc)
{
	struct capture_softcache_occupancy *occ = &sc->occupancy;
	json_t *arr, *v;
	char sub[240];
	size_t i;
	int ret;

	sc->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_bool(r, o, path, "enabled", &sc->enabled)) ||
	    (ret = capture_rd_int(r, o, path, "cln", &sc->cln, 0, 1LL << 32, -1)) ||
	    (ret = capture_rd_int(r, o, path, "line_bytes", &sc->line_bytes, 1, 1LL << 32, -1)) ||
	    (ret = capture_rd_str(r, o, path, "reason", &sc->reason, 0)) ||
	    (ret = capture_rd_ints(r, o, path, "selected", &sc->selected, &sc->nr_selected,
				   &sc->has_selected, 0, 4096)) ||
	    (ret = capture_rd_array(r, o, path, "candidates", &arr)))
		return ret;
	sc->candidates = xcalloc(json_array_size(arr) + 1, sizeof(*sc->candidates));
	json_array_foreach(arr, i, v) {
		struct capture_softcache_candidate *c = &sc->candidates[sc->nr_candidates++];

		snprintf(sub, sizeof(sub), "%s.candidates[%zu]", path, i);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_int(r, v, sub, "param", &c->param, 0, 4096, -1)) ||
		    (ret = capture_rd_bool(r, v, sub, "read_only", &c->read_only)) ||
		    (ret = capture_rd_num(r, v, sub, "sim_hits", &c->sim_hits, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "sim_accesses", &c->sim_accesses, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "hit_rate", &c->hit_rate, NUM_COUNT)) ||
		    (ret = capture_rd_bool(r, v, sub, "selected", &c->selected)) ||
		    (ret = capture_rd_str(r, v, sub, "why", &c->why, 0)))
			return ret;
	}
	occ->threads_per_block = occ->blocks_per_sm = occ->threads_per_sm = -1;
	occ->cln_per_sm = occ->cln_per_block = -1;
	occ->shared_per_block = occ->shared_used_per_sm = occ->shared_free_per_sm = NAN;
	if ((v = capture_member(o, "occupancy"))) {
		snprintf(sub, sizeof(sub), "%s.occupancy", path);
		sc->has_occupancy = 1;
		occ->source = SEC(v);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_int(r, v, sub, "threads_per_block", &occ->threads_per_block, 0,
					  1 << 20, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "blocks_per_sm", &occ->blocks_per_sm, 0, 1 << 20, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "threads_per_sm", &occ->threads_per_sm, 0, 1 << 20,
					  -1)) ||
		    (ret = capture_rd_int(r, v, sub, "cln_per_sm", &occ->cln_per_sm, 0, 1LL << 32, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "cln_per_block", &occ->cln_per_block, 0, 1LL << 32,
					  -1)) ||
		    (ret = capture_rd_num(r, v, sub, "shared_per_block", &occ->shared_per_block,
					  NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "shared_used_per_sm", &occ->shared_used_per_sm,
					  NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "shared_free_per_sm", &occ->shared_free_per_sm,
					  NUM_COUNT)) ||
		    (ret = capture_rd_str(r, v, sub, "limited_by", &occ->limited_by, 0)) ||
		    (ret = capture_rd_str(r, v, sub, "registers", &occ->registers, 0)))
			return ret;
	}
	if ((v = capture_member(o, "verification"))) {
		snprintf(sub, sizeof(sub), "%s.verification", path);
		sc->has_verification = 1;
		if ((ret = read_softcache_verification(r, v, sub, &sc->verification)))
			return ret;
	}
	return 0;
}

void capture_software_cache_free(struct capture_software_cache *sc)
{
	size_t i;

	if (!sc)
		return;
	free(sc->reason);
	free(sc->occupancy.limited_by);
	free(sc->occupancy.registers);
	for (i = 0; i < sc->nr_candidates; i++)
		free(sc->candidates[i].why);
	free(sc->candidates);
	free(sc->selected);
	free(sc->verification.status);
	free(sc->verification.reason);
	free(sc->verification.output_status);
	free(sc->verification.rewrite_params);
	free(sc->verification.rewrite_ptx);
	free(sc->verification.rewrite_note);
	free(sc);
}

int capture_read_register_cache(const struct rd *r, json_t *o, const char *path,
				struct capture_register_cache *rc)
{
	json_t *arr, *v;
	char sub[240];
	size_t i;
	int ret;

	rc->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_str(r, o, path, "status", &rc->status, 0)) ||
	    (ret = capture_rd_array(r, o, path, "hints", &arr)))
		return ret;
	rc->hints = xcalloc(json_array_size(arr) + 1, sizeof(*rc->hints));
	json_array_foreach(arr, i, v) {
		struct capture_regcache_hint *h = &rc->hints[rc->nr_hints++];

		snprintf(sub, sizeof(sub), "%s.hints[%zu]", path, i);
		h->source = SEC(v);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_int(r, v, sub, "param", &h->param, 0, 4096, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "k", &h->k, 0, 1 << 20, 0)) ||
		    (ret = capture_rd_bool(r, v, sub, "k_exact", &h->k_exact)) ||
		    (ret = capture_rd_ints(r, v, sub, "loads", &h->loads, &h->nr_loads, NULL, 0,
					   (long long)CAPTURE_COUNT_MAX)))
			return ret;
	}
	return 0;
}

void capture_register_cache_free(struct capture_register_cache *rc)
{
	size_t i;

	if (!rc)
		return;
	free(rc->status);
	for (i = 0; i < rc->nr_hints; i++)
		free(rc->hints[i].loads);
	free(rc->hints);
	free(rc);
}

int capture_read_carveout(const struct rd *r, json_t *o, struct capture_carveout *co)
{
	json_t *arr, *v, *sp;
	char sub[64], spath[96];
	size_t i;
	int ret;

	co->source = SEC(o);
	if ((ret = capture_rd_object(r, o, "carveout")) ||
	    (ret = capture_rd_array(r, o, "carveout", "kernels", &arr)))
		return ret;
	co->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*co->kernels));
	json_array_foreach(arr, i, v) {
		struct capture_carveout_kernel *k = &co->kernels[co->nr_kernels++];

		snprintf(sub, sizeof(sub), "carveout.kernels[%zu]", i);
		k->source = SEC(v);
		k->noise = NAN;
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_str(r, v, sub, "name", &k->name, 1)) ||
		    /* what the program passed, even a value the driver refused */
		    (ret = capture_rd_intv(r, v, sub, "program_value", &k->program_value, -2147483647LL - 1,
					   2147483647LL, -1)) ||
		    (ret = capture_rd_intv(r, v, sub, "default_value", &k->default_value, -2147483647LL - 1,
					   2147483647LL, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "launches", &k->launches, 0,
					  (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = capture_rd_str(r, v, sub, "kept", &k->kept, 0)) ||
		    (ret = capture_rd_str(r, v, sub, "reason", &k->reason, 0)) ||
		    (ret = capture_rd_str(r, v, sub, "advice", &k->advice, 0)))
			return ret;
		if (k->kept && strcmp(k->kept, "default") && strcmp(k->kept, "program"))
			return capture_fail(r, sub, "kept", "\"%s\" is neither \"default\" nor \"program\"",
					    k->kept);
		sp = capture_member(v, "speedup_of_default");
		k->speedup.min = k->speedup.median = k->speedup.max = NAN;
		if (!sp)
			continue;
		k->measured = 1;
		snprintf(spath, sizeof(spath), "%s.speedup_of_default", sub);
		if ((ret = capture_rd_object(r, sp, spath)) ||
		    (ret = capture_rd_str(r, sp, spath, "method", &k->method, 0)) ||
		    (ret = capture_read_speedup(r, sp, spath, "speedup", &k->speedup)) ||
		    (ret = capture_rd_num(r, sp, spath, "noise", &k->noise, NUM_COUNT)))
			return ret;
	}
	return 0;
}

json_t *capture_carveout_json(const struct capture_carveout *co)
{
	json_t *o = capture_start(co->source), *arr = json_array();
	size_t i;

	for (i = 0; i < co->nr_kernels; i++) {
		const struct capture_carveout_kernel *k = &co->kernels[i];
		json_t *kj = capture_start(k->source);

		json_object_set_new(kj, "name", json_string(k->name));
		/* -1 (the driver's default) is also what an absent value reads as */
		if (json_object_get(kj, "program_value") || k->program_value != -1)
			json_object_set_new(kj, "program_value", json_integer(k->program_value));
		if (json_object_get(kj, "default_value") || k->default_value != -1)
			json_object_set_new(kj, "default_value", json_integer(k->default_value));
		capture_put_int(kj, "launches", k->launches, -1);
		if (k->measured) {
			json_t *sp = capture_start(SEC(json_object_get(kj, "speedup_of_default")));

			capture_put_str(sp, "method", k->method);
			capture_speedup_json(sp, "speedup", &k->speedup);
			capture_put_num(sp, "noise", k->noise);
			json_object_set_new(kj, "speedup_of_default", sp);
		} else if (json_object_get(kj, "speedup_of_default")) {
			json_object_set_new(kj, "speedup_of_default", json_null());
		}
		capture_put_str(kj, "kept", k->kept);
		capture_put_str(kj, "reason", k->reason);
		capture_put_str(kj, "advice", k->advice);
		json_array_append_new(arr, kj);
	}
	if (co->nr_kernels || json_object_get(o, "kernels"))
		json_object_set_new(o, "kernels", arr);
	else
		json_decref(arr);
	return o;
}

void capture_carveout_release(struct capture_carveout *co)
{
	size_t i;

	for (i = 0; i < co->nr_kernels; i++) {
		struct capture_carveout_kernel *k = &co->kernels[i];

		free(k->name);
		free(k->method);
		free(k->kept);
		free(k->reason);
		free(k->advice);
	}
	free(co->kernels);
}
