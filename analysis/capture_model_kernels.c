/*
 * The capture model (analysis/capture_model_internal.h): modules, kernels
 * with their counters, loads and pairs, all_kernels and allocations; lookups.
 */
#include "analysis/capture_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

int capture_read_module(const struct rd *r, json_t *o, const char *path, struct capture_module *m)
{
	int ret, has_ptx;

	m->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_str(r, o, path, "id", &m->id, 1)) ||
	    (ret = capture_rd_str(r, o, path, "origin", &m->origin, 0)) ||
	    (ret = capture_rd_str(r, o, path, "arch", &m->arch, 0)) ||
	    (ret = capture_rd_bool(r, o, path, "has_ptx", &has_ptx)) ||
	    (ret = capture_rd_str(r, o, path, "ptx", &m->ptx, 0)) ||
	    (ret = capture_rd_str(r, o, path, "library", &m->library, 0)) ||
	    (ret = capture_rd_str(r, o, path, "no_ptx_reason", &m->no_ptx_reason, 0)) ||
	    (ret = capture_rd_strings(r, o, path, "kernels", &m->kernels, &m->nr_kernels,
				      &m->has_kernels)) ||
	    (ret = capture_rd_num(r, o, path, "gpu_time_ns", &m->gpu_time_ns, NUM_COUNT)))
		return ret;
	m->has_ptx = has_ptx < 0 ? m->ptx != NULL : has_ptx;
	if (!*m->id)
		return capture_fail(r, path, "id", "empty: a module id is required");
	return 0;
}

json_t *capture_module_json(const struct capture_module *m)
{
	json_t *o = capture_start(m->source);

	json_object_set_new(o, "id", json_string(m->id));
	capture_put_str(o, "origin", m->origin);
	capture_put_str(o, "arch", m->arch);
	/* a null has_ptx (unknown: derived from "ptx" when read) stays null */
	if (!m->source || json_is_boolean(json_object_get(o, "has_ptx")))
		json_object_set_new(o, "has_ptx", json_boolean(m->has_ptx));
	capture_put_str(o, "ptx", m->ptx);
	capture_put_str(o, "library", m->library);
	capture_put_str(o, "no_ptx_reason", m->no_ptx_reason);
	if (m->has_kernels || m->nr_kernels)
		json_object_set_new(o, "kernels", capture_strings_json(m->kernels, m->nr_kernels));
	capture_put_num(o, "gpu_time_ns", m->gpu_time_ns);
	return o;
}

void capture_module_release(struct capture_module *m)
{
	free(m->id);
	free(m->origin);
	free(m->arch);
	free(m->ptx);
	free(m->library);
	free(m->no_ptx_reason);
	capture_free_strings(m->kernels, m->nr_kernels);
}

const char *const capture_counter_keys[CAPTURE_NR_COUNTER_KEYS] = {
	"l1_requests", "l1_sectors", "l1_hits", "l1_misses", "l2_sectors_from_l1",
	"dram_bytes_read", "duration_ns",
};

static double *counter_field(struct capture_counters *c, size_t i)
{
	double *f[] = { &c->l1_requests, &c->l1_sectors, &c->l1_hits, &c->l1_misses,
			&c->l2_sectors_from_l1, &c->dram_bytes_read, &c->duration_ns };
	return f[i];
}

static double counter_value(const struct capture_counters *c, size_t i)
{
	return *counter_field((struct capture_counters *)c, i);
}

static int read_counters(const struct rd *r, json_t *o, const char *path,
			 struct capture_counters *c)
{
	size_t i;
	int ret;

	c->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)))
		return ret;
	for (i = 0; i < ARRAY_SIZE(capture_counter_keys); i++)
		if ((ret = capture_rd_num(r, o, path, capture_counter_keys[i], counter_field(c, i),
					  NUM_COUNT)))
			return ret;
	if ((ret = capture_rd_int(r, o, path, "launches", &c->launches, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_int(r, o, path, "run", &c->run, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_int(r, o, path, "sampled_launches", &c->sampled_launches, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_int(r, o, path, "timed_launches", &c->timed_launches, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_str(r, o, path, "measured_as", &c->measured_as, 0)))
		return ret;
	return 0;
}

static json_t *counters_json(const struct capture_counters *c)
{
	json_t *o = capture_start(c->source);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(capture_counter_keys); i++)
		capture_put_num(o, capture_counter_keys[i], counter_value(c, i));
	capture_put_int(o, "launches", c->launches, -1);
	capture_put_int(o, "run", c->run, -1);
	capture_put_int(o, "sampled_launches", c->sampled_launches, -1);
	capture_put_int(o, "timed_launches", c->timed_launches, -1);
	capture_put_str(o, "measured_as", c->measured_as);
	return o;
}

int capture_counters_from_json(struct capture_counters *cc, const char *variant, json_t *o,
				const char *name)
{
	struct rd r = { name };
	int ret;

	cc->variant = xstrdup(variant);
	ret = read_counters(&r, o, variant, cc);
	return ret;
}

void capture_counters_release(struct capture_counters *cc)
{
	free(cc->variant);
	free(cc->measured_as);
	memset(cc, 0, sizeof(*cc));
}

/* A load's "inlined_at": the calls its line was inlined at, innermost first. */
static int read_call_sites(const struct rd *r, json_t *o, const char *path,
			   struct capture_load *l)
{
	json_t *arr, *v;
	char sub[256];
	size_t i;
	int ret;

	if ((ret = capture_rd_array(r, o, path, "inlined_at", &arr)) || !arr)
		return ret;
	l->inlined_at = xcalloc(json_array_size(arr) + 1, sizeof(*l->inlined_at));
	json_array_foreach(arr, i, v) {
		struct capture_call_site *c = &l->inlined_at[l->nr_inlined_at++];
		long long line;

		snprintf(sub, sizeof(sub), "%s.inlined_at[%zu]", path, i);
		c->source = SEC(v);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_str(r, v, sub, "file", &c->file, 0)) ||
		    (ret = capture_rd_int(r, v, sub, "line", &line, 1, 0x7fffffff, 0)) ||
		    (ret = capture_rd_intv(r, v, sub, "column", &c->column, 1, 0x7fffffff, 0)))
			return ret;
		c->line = (long)line;
	}
	return 0;
}

static json_t *call_sites_json(const struct capture_call_site *c, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *o = capture_start(c[i].source);

		capture_put_str(o, "file", c[i].file);
		capture_put_int(o, "line", c[i].line, 0);
		capture_put_int(o, "column", c[i].column, 0);
		json_array_append_new(arr, o);
	}
	return arr;
}

static int read_load(const struct rd *r, json_t *o, const char *path, struct capture_load *l)
{
	long long ord, ptx_line, line;
	int ret;

	l->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_int(r, o, path, "ordinal", &ord, 0, 0x7fffffff, -1)) ||
	    (ret = capture_rd_int(r, o, path, "ptx_line", &ptx_line, 0, 0x7fffffff, -1)) ||
	    (ret = capture_rd_str(r, o, path, "instruction", &l->instruction, 0)) ||
	    (ret = capture_rd_str(r, o, path, "space", &l->space, 0)) ||
	    (ret = capture_rd_str(r, o, path, "cache_op", &l->cache_op, 0)) ||
	    (ret = capture_rd_bool(r, o, path, "nc", &l->nc)) ||
	    (ret = capture_rd_intv(r, o, path, "vector", &l->vector, 0, 64, -1)) ||
	    (ret = capture_rd_intv(r, o, path, "bits", &l->bits, 0, 4096, -1)) ||
	    (ret = capture_rd_str(r, o, path, "file", &l->file, 0)) ||
	    (ret = capture_rd_int(r, o, path, "line", &line, 1, 0x7fffffff, 0)) ||
	    (ret = capture_rd_intv(r, o, path, "column", &l->column, 1, 0x7fffffff, 0)) ||
	    (ret = read_call_sites(r, o, path, l)) ||
	    (ret = capture_rd_intv(r, o, path, "param", &l->param, 0, 0xffff, -1)) ||
	    (ret = capture_rd_bool(r, o, path, "read_only", &l->read_only)) ||
	    (ret = capture_rd_bool(r, o, path, "patchable", &l->patchable)) ||
	    (ret = capture_rd_str(r, o, path, "unpatchable_reason", &l->unpatchable_reason, 0)) ||
	    (ret = capture_rd_str(r, o, path, "l1_eviction", &l->l1_eviction, 0)) ||
	    (ret = capture_rd_bool(r, o, path, "measured", &l->measured)) ||
	    (ret = capture_rd_intv(r, o, path, "node", &l->node, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_num(r, o, path, "hit", &l->hit, NUM_COUNT)) ||
	    (ret = capture_rd_intv(r, o, path, "run", &l->run, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_num(r, o, path, "access", &l->access, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, path, "requests", &l->requests, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, path, "lines", &l->lines, NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, path, "bytes", &l->bytes, NUM_COUNT)))
		return ret;
	if (ord < 0)
		return capture_fail(r, path, "ordinal", "missing: every load has an ordinal");
	l->ordinal = (unsigned)ord;
	l->ptx_line = (long)ptx_line;
	l->line = (long)line;
	return 0;
}

static json_t *load_json(const struct capture_load *l)
{
	json_t *o = capture_start(l->source);

	json_object_set_new(o, "ordinal", json_integer(l->ordinal));
	capture_put_int(o, "ptx_line", l->ptx_line, -1);
	capture_put_str(o, "instruction", l->instruction);
	capture_put_str(o, "space", l->space);
	capture_put_str(o, "cache_op", l->cache_op);
	capture_put_bool(o, "nc", l->nc);
	capture_put_int(o, "vector", l->vector, -1);
	capture_put_int(o, "bits", l->bits, -1);
	capture_put_str(o, "file", l->file);
	capture_put_int(o, "line", l->line, 0);
	capture_put_int(o, "column", l->column, 0);
	if (l->nr_inlined_at)
		json_object_set_new(o, "inlined_at", call_sites_json(l->inlined_at,
								     l->nr_inlined_at));
	capture_put_int(o, "param", l->param, -1);
	capture_put_bool(o, "read_only", l->read_only);
	capture_put_bool(o, "patchable", l->patchable);
	capture_put_str(o, "unpatchable_reason", l->unpatchable_reason);
	capture_put_str(o, "l1_eviction", l->l1_eviction);
	capture_put_bool(o, "measured", l->measured);
	capture_put_int(o, "node", l->node, -1);
	capture_put_num(o, "hit", l->hit);
	capture_put_int(o, "run", l->run, -1);
	capture_put_num(o, "access", l->access);
	capture_put_num(o, "requests", l->requests);
	capture_put_num(o, "lines", l->lines);
	capture_put_num(o, "bytes", l->bytes);
	return o;
}

static void load_release(struct capture_load *l)
{
	size_t i;

	free(l->instruction);
	free(l->space);
	free(l->cache_op);
	free(l->file);
	for (i = 0; i < l->nr_inlined_at; i++)
		free(l->inlined_at[i].file);
	free(l->inlined_at);
	free(l->unpatchable_reason);
	free(l->l1_eviction);
}

static int read_pair(const struct rd *r, json_t *o, const char *path, struct capture_pair *p)
{
	long long i, j;
	json_t *noise;
	int ret;

	p->source = SEC(o);
	p->noise_measured = NAN;
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_int(r, o, path, "i", &i, 0, 0x7fffffff, -1)) ||
	    (ret = capture_rd_int(r, o, path, "j", &j, 0, 0x7fffffff, -1)) ||
	    (ret = capture_rd_num(r, o, path, "hit", &p->hit, NUM_COUNT)) ||
	    (ret = capture_rd_intv(r, o, path, "run", &p->run, 0, CAPTURE_LIST_MAX, -1)))
		return ret;
	if (i < 0 || j < 0)
		return capture_fail(r, path, i < 0 ? "i" : "j", "missing: a pair names two load ordinals");
	if (i == j)
		return capture_fail(r, path, "j", "the pair names load %lld twice", i);
	p->i = (unsigned)i;
	p->j = (unsigned)j;
	noise = capture_member(o, "noise");
	if (noise) {
		char sub[256];

		snprintf(sub, sizeof(sub), "%s.noise", path);
		if ((ret = capture_rd_object(r, noise, sub)) ||
		    (ret = capture_rd_num(r, noise, sub, "measured", &p->noise_measured, NUM_FINITE)) ||
		    (ret = capture_rd_str(r, noise, sub, "resolution", &p->noise_resolution, 1)))
			return ret;
	}
	return 0;
}

static json_t *pair_json(const struct capture_pair *p)
{
	json_t *o = capture_start(p->source);

	json_object_set_new(o, "i", json_integer(p->i));
	json_object_set_new(o, "j", json_integer(p->j));
	capture_put_num(o, "hit", p->hit);
	capture_put_int(o, "run", p->run, -1);
	if (p->noise_resolution) {
		json_t *n = capture_start(SEC(json_object_get(JS(p->source), "noise")));

		json_object_set_new(n, "measured", json_real(p->noise_measured));
		json_object_set_new(n, "resolution", json_string(p->noise_resolution));
		json_object_set_new(o, "noise", n);
	} else {
		json_object_del(o, "noise");
	}
	return o;
}

static int read_alloc_uses(const struct rd *r, json_t *o, const char *path,
			   struct capture_alloc_use **out, size_t *nr, int *has)
{
	json_t *arr, *v;
	char sub[200];
	size_t i;
	int ret;

	*has = json_object_get(o, "allocs_used") != NULL;
	if ((ret = capture_rd_array(r, o, path, "allocs_used", &arr)) || !arr)
		return ret;
	*out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
	json_array_foreach(arr, i, v) {
		struct capture_alloc_use *u = &(*out)[(*nr)++];

		snprintf(sub, sizeof(sub), "%s.allocs_used[%zu]", path, i);
		u->source = SEC(v);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_intv(r, v, sub, "param", &u->param, 0, 0xffff, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "alloc", &u->alloc, 0,
					  (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "launches", &u->launches, 0,
					  (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "offset", &u->offset, 0,
					  (long long)CAPTURE_COUNT_MAX, -1)))
			return ret;
		if (u->alloc < 0)
			return capture_fail(r, sub, "alloc", "missing: an allocation seq is required");
	}
	return 0;
}

static json_t *alloc_uses_json(const struct capture_alloc_use *u, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *o = capture_start(u[i].source);

		capture_put_int(o, "param", u[i].param, -1);
		capture_put_int(o, "alloc", u[i].alloc, -1);
		capture_put_int(o, "launches", u[i].launches, -1);
		capture_put_int(o, "offset", u[i].offset, -1);
		json_array_append_new(arr, o);
	}
	return arr;
}

/* all_kernels[] */
int capture_read_kernel_seen(const struct rd *r, json_t *v, const char *path,
			     struct capture_kernel_seen *s)
{
	int ret;

	s->source = SEC(v);
	if ((ret = capture_rd_object(r, v, path)) ||
	    (ret = capture_rd_str(r, v, path, "name", &s->name, 1)) ||
	    (ret = capture_rd_int(r, v, path, "launches", &s->launches, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_num(r, v, path, "gpu_time_ns", &s->gpu_time_ns, NUM_COUNT)) ||
	    (ret = read_alloc_uses(r, v, path, &s->allocs_used, &s->nr_allocs_used,
				   &s->has_allocs_used)))
		return ret;
	return 0;
}

json_t *capture_kernel_seen_json(const struct capture_kernel_seen *s)
{
	json_t *o = capture_start(s->source);

	json_object_set_new(o, "name", json_string(s->name));
	capture_put_int(o, "launches", s->launches, -1);
	capture_put_num(o, "gpu_time_ns", s->gpu_time_ns);
	if (s->has_allocs_used)
		json_object_set_new(o, "allocs_used",
				    alloc_uses_json(s->allocs_used, s->nr_allocs_used));
	return o;
}

void capture_kernel_seen_release(struct capture_kernel_seen *s)
{
	free(s->name);
	free(s->allocs_used);
}

/* allocations[] */
int capture_read_allocation(const struct rd *r, json_t *v, const char *path,
			    struct capture_allocation *a)
{
	long long seq;
	int ret;

	a->source = SEC(v);
	if ((ret = capture_rd_object(r, v, path)) ||
	    (ret = capture_rd_int(r, v, path, "seq", &seq, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_num(r, v, path, "bytes", &a->bytes, NUM_COUNT)))
		return ret;
	if (seq < 0)
		return capture_fail(r, path, "seq", "missing: every allocation has a seq");
	if (isnan(a->bytes))
		return capture_fail(r, path, "bytes", "missing: every allocation has a size");
	a->seq = seq;
	return 0;
}

json_t *capture_allocation_json(const struct capture_allocation *a)
{
	json_t *o = capture_start(a->source);

	json_object_set_new(o, "seq", json_integer(a->seq));
	capture_put_num(o, "bytes", a->bytes);
	return o;
}

int capture_read_kernel(const struct rd *r, json_t *o, const char *path, struct capture_kernel *k)
{
	json_t *arr, *v, *gt, *eff;
	char sub[200];
	const char *key;
	size_t i, a;
	int ret;

	k->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_str(r, o, path, "module", &k->module, 1)) ||
	    (ret = capture_rd_str(r, o, path, "name", &k->name, 1)) ||
	    (ret = capture_rd_str(r, o, path, "demangled", &k->demangled, 0)) ||
	    (ret = capture_rd_int(r, o, path, "launches", &k->launches, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = capture_rd_int(r, o, path, "dynamic_shared_bytes", &k->dynamic_shared_bytes, 0,
				  1LL << 32, -1)) ||
	    (ret = capture_rd_int(r, o, path, "static_shared_bytes", &k->static_shared_bytes, 0,
				  1LL << 32, -1)) ||
	    (ret = capture_rd_intv(r, o, path, "registers", &k->registers, 0, 65536, -1)) ||
	    (ret = capture_rd_int(r, o, path, "left_out_loads", &k->left_out_loads, 0,
				  CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_num(r, o, path, "monitor_gpu_time_ns", &k->monitor_gpu_time_ns, NUM_COUNT)))
		return ret;
	if ((v = capture_member(o, "oracle"))) {
		snprintf(sub, sizeof(sub), "%s.oracle", path);
		k->oracle = xcalloc(1, sizeof(*k->oracle));
		if ((ret = capture_read_oracle_kernel(r, v, sub, k->oracle)))
			return ret;
	}
	if ((v = capture_member(o, "software_cache"))) {
		snprintf(sub, sizeof(sub), "%s.software_cache", path);
		k->software_cache = xcalloc(1, sizeof(*k->software_cache));
		if ((ret = capture_read_software_cache(r, v, sub, k->software_cache)))
			return ret;
	}
	if ((v = capture_member(o, "register_cache"))) {
		snprintf(sub, sizeof(sub), "%s.register_cache", path);
		k->register_cache = xcalloc(1, sizeof(*k->register_cache));
		if ((ret = capture_read_register_cache(r, v, sub, k->register_cache)))
			return ret;
	}
	if (!*k->name)
		return capture_fail(r, path, "name", "empty: a kernel name is required");
	if ((v = capture_member(o, "verification"))) {
		snprintf(sub, sizeof(sub), "%s.verification", path);
		k->verification = xcalloc(1, sizeof(*k->verification));
		if ((ret = capture_read_verdict(r, v, sub, k->verification)))
			return ret;
	}
	for (a = 0; a < 2; a++) {
		const char *dim = a ? "block" : "grid";
		long long *out = a ? k->block : k->grid;

		if ((ret = capture_rd_array(r, o, path, dim, &arr)))
			return ret;
		if (!arr)
			continue;
		k->has_extents |= 1 << a;
		if (json_array_size(arr) != 3)
			return capture_fail(r, path, dim, "not three extents");
		json_array_foreach(arr, i, v) {
			/* 0: the launch did not say (never a launched extent) */
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > 0x7fffffff)
				return capture_fail(r, path, dim,
						    "extent %zu is not a non-negative integer", i);
			out[i] = json_integer_value(v);
		}
	}
	k->gpu_time_baseline_ns = k->gpu_time_cubin_ns = NAN;
	gt = capture_member(o, "gpu_time_ns");
	k->has_gpu_time = gt != NULL;
	if (gt) {
		snprintf(sub, sizeof(sub), "%s.gpu_time_ns", path);
		if ((ret = capture_rd_object(r, gt, sub)) ||
		    (ret = capture_rd_num(r, gt, sub, "baseline", &k->gpu_time_baseline_ns, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, gt, sub, "cubin", &k->gpu_time_cubin_ns, NUM_COUNT)))
			return ret;
	}
	k->efficiency_on = k->efficiency_off = NAN;
	eff = capture_member(o, "efficiency");
	k->has_efficiency = eff != NULL;
	if (eff) {
		snprintf(sub, sizeof(sub), "%s.efficiency", path);
		if ((ret = capture_rd_object(r, eff, sub)) ||
		    (ret = capture_rd_num(r, eff, sub, "on", &k->efficiency_on, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, eff, sub, "off", &k->efficiency_off, NUM_COUNT)))
			return ret;
	}

	v = capture_member(o, "counters");
	k->has_counters = v != NULL;
	if (v) {
		json_t *c;

		if (!json_is_object(v))
			return capture_fail(r, path, "counters", "not an object");
		k->counters = xcalloc(json_object_size(v) + 1, sizeof(*k->counters));
		json_object_foreach(v, key, c) {
			struct capture_counters *cc = &k->counters[k->nr_counters++];

			cc->variant = xstrdup(key);
			snprintf(sub, sizeof(sub), "%s.counters.%s", path, key);
			if ((ret = read_counters(r, c, sub, cc)))
				return ret;
		}
	}

	if ((ret = capture_rd_array(r, o, path, "loads", &arr)))
		return ret;
	k->has_loads = arr != NULL;
	if (arr) {
		k->loads = xcalloc(json_array_size(arr) + 1, sizeof(*k->loads));
		json_array_foreach(arr, i, v) {
			struct capture_load *l = &k->loads[k->nr_loads];

			snprintf(sub, sizeof(sub), "%s.loads[%zu]", path, i);
			k->nr_loads++;
			if ((ret = read_load(r, v, sub, l)))
				return ret;
			for (a = 0; a + 1 < k->nr_loads; a++)
				if (k->loads[a].ordinal == l->ordinal)
					return capture_fail(r, sub, "ordinal", "load %u is listed twice",
							    l->ordinal);
		}
	}

	k->has_pairs = json_object_get(o, "pairs") != NULL;
	if ((ret = capture_rd_array(r, o, path, "pairs", &arr)))
		return ret;
	if (arr) {
		k->pairs = xcalloc(json_array_size(arr) + 1, sizeof(*k->pairs));
		json_array_foreach(arr, i, v) {
			struct capture_pair *p = &k->pairs[k->nr_pairs];

			snprintf(sub, sizeof(sub), "%s.pairs[%zu]", path, i);
			k->nr_pairs++;
			if ((ret = read_pair(r, v, sub, p)))
				return ret;
			if (!capture_kernel_find_load(k, p->i) || !capture_kernel_find_load(k, p->j))
				return capture_fail(r, sub, NULL,
						    "names load %u, which the kernel does not have",
						    capture_kernel_find_load(k, p->i) ? p->j : p->i);
			for (a = 0; a + 1 < k->nr_pairs; a++) {
				const struct capture_pair *q = &k->pairs[a];

				if ((q->i == p->i && q->j == p->j) || (q->i == p->j && q->j == p->i))
					return capture_fail(r, sub, NULL, "the pair {%u, %u} is listed twice",
							    p->i, p->j);
			}
		}
	}

	if ((v = capture_member(o, "l2_priority"))) {
		snprintf(sub, sizeof(sub), "%s.l2_priority", path);
		k->l2_priority = xcalloc(1, sizeof(*k->l2_priority));
		k->l2_priority->noise_dram_bytes = NAN;
		if ((ret = capture_read_l2_priority(r, v, sub, k, k->l2_priority)))
			return ret;
	}
	if ((v = capture_member(o, "ranks"))) {
		snprintf(sub, sizeof(sub), "%s.ranks", path);
		if ((ret = capture_read_ranks(r, v, sub, k)))
			return ret;
	}
	if ((ret = read_alloc_uses(r, o, path, &k->allocs_used, &k->nr_allocs_used,
				   &k->has_allocs_used)))
		return ret;

	k->has_data_structures = json_object_get(o, "data_structures") != NULL;
	if ((ret = capture_rd_array(r, o, path, "data_structures", &arr)))
		return ret;
	if (arr) {
		k->data_structures = xcalloc(json_array_size(arr) + 1, sizeof(*k->data_structures));
		json_array_foreach(arr, i, v) {
			struct capture_data_structure *d = &k->data_structures[k->nr_data_structures++];

			snprintf(sub, sizeof(sub), "%s.data_structures[%zu]", path, i);
			d->source = SEC(v);
			if ((ret = capture_rd_object(r, v, sub)) ||
			    (ret = capture_rd_intv(r, v, sub, "param", &d->param, 0, 0xffff, -1)) ||
			    (ret = capture_rd_bool(r, v, sub, "read_only", &d->read_only)) ||
			    (ret = capture_rd_num(r, v, sub, "sim_hits", &d->sim_hits, NUM_COUNT)) ||
			    (ret = capture_rd_num(r, v, sub, "sim_accesses", &d->sim_accesses, NUM_COUNT)))
				return ret;
		}
	}
	return 0;
}

static json_t *extents_json(const long long e[3])
{
	return json_pack("[I,I,I]", (json_int_t)e[0], (json_int_t)e[1], (json_int_t)e[2]);
}

json_t *capture_kernel_json(const struct capture_kernel *k)
{
	json_t *o = capture_start(k->source), *arr;
	size_t i;

	json_object_set_new(o, "module", json_string(k->module));
	json_object_set_new(o, "name", json_string(k->name));
	capture_put_str(o, "demangled", k->demangled);
	capture_put_int(o, "launches", k->launches, -1);
	if (k->has_extents & 1)
		json_object_set_new(o, "grid", extents_json(k->grid));
	if (k->has_extents & 2)
		json_object_set_new(o, "block", extents_json(k->block));
	capture_put_int(o, "dynamic_shared_bytes", k->dynamic_shared_bytes, -1);
	capture_put_int(o, "static_shared_bytes", k->static_shared_bytes, -1);
	capture_put_int(o, "registers", k->registers, -1);
	if (k->has_gpu_time) {
		json_t *gt = capture_start(SEC(json_object_get(JS(k->source), "gpu_time_ns")));

		capture_put_num(gt, "baseline", k->gpu_time_baseline_ns);
		capture_put_num(gt, "cubin", k->gpu_time_cubin_ns);
		json_object_set_new(o, "gpu_time_ns", gt);
	}
	if (k->has_counters) {
		arr = json_object();
		for (i = 0; i < k->nr_counters; i++)
			json_object_set_new(arr, k->counters[i].variant, counters_json(&k->counters[i]));
		json_object_set_new(o, "counters", arr);
	}
	if (k->has_loads || k->nr_loads) {
		arr = json_array();
		for (i = 0; i < k->nr_loads; i++)
			json_array_append_new(arr, load_json(&k->loads[i]));
		json_object_set_new(o, "loads", arr);
	}
	if (k->has_pairs || k->nr_pairs) {
		arr = json_array();
		for (i = 0; i < k->nr_pairs; i++)
			json_array_append_new(arr, pair_json(&k->pairs[i]));
		json_object_set_new(o, "pairs", arr);
	}
	capture_put_int(o, "left_out_loads", k->left_out_loads, -1);
	if (k->has_allocs_used)
		json_object_set_new(o, "allocs_used", alloc_uses_json(k->allocs_used,
								      k->nr_allocs_used));
	capture_put_num(o, "monitor_gpu_time_ns", k->monitor_gpu_time_ns);
	if (k->has_efficiency) {
		json_t *e = capture_start(SEC(json_object_get(JS(k->source), "efficiency")));

		capture_put_num(e, "on", k->efficiency_on);
		capture_put_num(e, "off", k->efficiency_off);
		json_object_set_new(o, "efficiency", e);
	}
	if (k->verification)
		json_object_set_new(o, "verification", capture_verdict_json(k->verification));
	if (k->oracle)
		json_object_set_new(o, "oracle", capture_oracle_kernel_json(k->oracle));
	if (k->nr_ranks)
		json_object_set_new(o, "ranks", capture_ranks_json(k));
	if (k->has_data_structures) {
		arr = json_array();
		for (i = 0; i < k->nr_data_structures; i++) {
			const struct capture_data_structure *d = &k->data_structures[i];
			json_t *dj = capture_start(d->source);

			capture_put_int(dj, "param", d->param, -1);
			capture_put_bool(dj, "read_only", d->read_only);
			capture_put_num(dj, "sim_hits", d->sim_hits);
			capture_put_num(dj, "sim_accesses", d->sim_accesses);
			json_array_append_new(arr, dj);
		}
		json_object_set_new(o, "data_structures", arr);
	}
	return o;
}

int capture_kernel_from_json(struct capture_kernel *k, json_t *o, const char *name)
{
	struct rd r = { name };

	return capture_read_kernel(&r, o, "kernel", k);
}

void capture_kernel_release(struct capture_kernel *k)
{
	size_t i;

	free(k->module);
	free(k->name);
	free(k->demangled);
	for (i = 0; i < k->nr_counters; i++) {
		capture_counters_release(&k->counters[i]);
	}
	free(k->counters);
	for (i = 0; i < k->nr_loads; i++)
		load_release(&k->loads[i]);
	free(k->loads);
	for (i = 0; i < k->nr_pairs; i++)
		free(k->pairs[i].noise_resolution);
	free(k->pairs);
	free(k->allocs_used);
	free(k->data_structures);
	capture_verdict_free(k->verification);
	capture_software_cache_free(k->software_cache);
	capture_oracle_kernel_free(k->oracle);
	capture_register_cache_free(k->register_cache);
	capture_ranks_release(k);
	capture_l2_priority_free(k->l2_priority);
}

const struct capture_module *capture_find_module(const struct capture *cap, const char *id)
{
	size_t i;

	for (i = 0; id && i < cap->nr_modules; i++)
		if (!strcmp(cap->modules[i].id, id))
			return &cap->modules[i];
	return NULL;
}

const struct capture_kernel *capture_find_kernel(const struct capture *cap, const char *module,
						 const char *name)
{
	size_t i;

	for (i = 0; i < cap->nr_kernels; i++)
		if ((!module || !strcmp(cap->kernels[i].module, module)) &&
		    !strcmp(cap->kernels[i].name, name))
			return &cap->kernels[i];
	return NULL;
}

const struct capture_load *capture_kernel_find_load(const struct capture_kernel *k,
						    unsigned ordinal)
{
	size_t i;

	for (i = 0; i < k->nr_loads; i++)
		if (k->loads[i].ordinal == ordinal)
			return &k->loads[i];
	return NULL;
}

const struct capture_counters *capture_kernel_counters(const struct capture_kernel *k,
						       const char *variant)
{
	size_t i;

	for (i = 0; i < k->nr_counters; i++)
		if (!strcmp(k->counters[i].variant, variant))
			return &k->counters[i];
	return NULL;
}

const char *capture_kernel_library(const struct capture *cap, const char *kernel)
{
	size_t i, j;

	for (i = 0; i < cap->nr_modules; i++) {
		const struct capture_module *m = &cap->modules[i];

		for (j = 0; m->library && j < m->nr_kernels; j++)
			if (!strcmp(m->kernels[j], kernel))
				return m->library;
	}
	return NULL;
}
