/*
 * Launch plans: see launch_plan.h and docs/injection.md. The file format
 * ("cacheadvise.launch_plan/1"):
 *
 *   {"replay_max_bytes": 4294967296,
 *    "kernels": [{"name": "_Z6decodePKjPKfPfi",
 *      "mask_symbol": "__cacheadvise_mask__Z6decodePKjPKfPfi",
 *      "default_mask": "ffffffffffffffff",
 *      "variants": [{"label": "none", "mask": "0"}, {"label": "0", "mask": "1"}],
 *      "written_params": [2],
 *      "samples": [{"ordinal": 3, "variants": [0, 1]}],
 *      "versions": [{"label": "base", "ptx": "/dir/base.ptx"},
 *                   {"label": "advice", "ptx": "/dir/advice.ptx"}],
 *      "pattern": "abba",
 *      "replay_rounds": {"ordinals": [0], "rounds": 5},
 *      "carveout": {"values": [100, -1], "labels": ["program", "default"],
 *                   "pattern": "abba",
 *                   "replay_rounds": {"ordinals": [0], "rounds": 5}}}]}
 *
 * Masks are hexadecimal strings (64 bits do not fit JSON numbers). Every
 * field but "name" is optional.
 */
#define _GNU_SOURCE
#include "collectors/inject/launch_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/error.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "analysis/launch_sampling.h"
#include "analysis/ptx_instrument.h"
#include "collectors/inject/cost_clock.h"
#include "collectors/inject/inject.h"
#include "collectors/inject/own_module.h"

struct plan_variant {
	char *label;
	uint64_t mask;
	char *ptx_path;         /* a module of its own (variant_form "modules"), else NULL */
	struct own_module own;
	int hits_only;          /* "counters": "l1_hits" */
	long when_hits[2];      /* replayed only once one of these variants hit; -1: always */
	double hits;            /* L1 hits counted so far, summed over its replays */
	int replayed;           /* a conditional variant is replayed at one sample */
};

struct plan_sample {
	uint64_t ordinal;
	size_t *variants;
	size_t nr_variants;
};

struct plan_version {
	char *label;
	char *ptx_path;
	struct own_module own;
};

/* The carve-out check (issue 18): settings chosen per launch. */
struct plan_carveout {
	int values[2];                  /* 'a', 'b': a carve-out in percent, -1 the default */
	char *labels[2];
	char *pattern;                  /* NULL: no carve-out check */
	uint64_t *replay_ordinals;
	size_t nr_replay_ordinals;
	unsigned rounds;
	int restore;                    /* the program's own launch changed it */
	int saved;                      /* the value to put back after it */
};

struct plan_kernel {
	char *name;
	uint64_t next_ordinal;          /* launches of this kernel so far */
	CUfunction program_fn;          /* the function of the launch being handled */
	const struct own_module *ran_own; /* a module of ours ran the program's launch */
	/* counters */
	char *mask_symbol;
	uint64_t default_mask;
	struct plan_variant *variants;
	size_t nr_variants;
	unsigned *written;
	size_t nr_written;
	struct plan_sample *samples;
	size_t nr_samples;
	void *mask_owner;               /* module handle mask_addr belongs to */
	CUdeviceptr mask_addr;
	int own_profiled;               /* the program's launch is under the profiler */
	int no_replay;                  /* the CLI forbids replays: one variant a launch */
	/* counters on the program's own launches at these ordinals (label "own") */
	uint64_t *profile_ordinals;
	size_t nr_profile_ordinals;
	/* sampled monitor: the instrumented module runs the listed launches */
	char *monitor_ptx;
	uint64_t *monitor_ordinals;
	size_t nr_monitor_ordinals;
	struct own_module monitor;
	uint64_t monitor_seq;           /* the launch whose counters are pending */
	int monitor_pending;
	/* verification */
	struct plan_version *versions;
	size_t nr_versions;
	char *pattern;
	uint64_t *replay_ordinals;
	size_t nr_replay_ordinals;
	unsigned rounds;
	struct plan_carveout carveout;
};

struct launch_plan {
	uint64_t replay_max_bytes;
	struct plan_kernel *kernels;
	size_t nr_kernels;
};

struct saved_alloc {
	CUdeviceptr ptr, backup;
	size_t size;
};

struct saved_memory {
	struct saved_alloc *items;
	size_t nr;
	uint64_t bytes;
	double save_ms;
};

static uint64_t hex_value(json_t *v, uint64_t fallback)
{
	const char *s = json_string_value(v);

	return s ? strtoull(s, NULL, 16) : fallback;
}

static void load_carveout(struct plan_carveout *c, json_t *o)
{
	json_t *arr, *e;
	size_t i;

	if (!json_is_object(o) || json_array_size(json_object_get(o, "values")) != 2)
		return;
	for (i = 0; i < 2; i++) {
		const char *label = json_string_value(json_array_get(json_object_get(o, "labels"), i));

		c->values[i] = (int)json_integer_value(json_array_get(json_object_get(o, "values"), i));
		c->labels[i] = xstrdup(label ? label : i ? "b" : "a");
	}
	c->pattern = xstrdup(json_string_value(json_object_get(o, "pattern")) ?
			     json_string_value(json_object_get(o, "pattern")) : "abba");
	arr = json_object_get(json_object_get(o, "replay_rounds"), "ordinals");
	c->replay_ordinals = xcalloc(json_array_size(arr) + 1, sizeof(*c->replay_ordinals));
	json_array_foreach(arr, i, e)
		c->replay_ordinals[c->nr_replay_ordinals++] = (uint64_t)json_integer_value(e);
	c->rounds = (unsigned)json_integer_value(json_object_get(json_object_get(o, "replay_rounds"),
								 "rounds"));
}

static void load_kernel(struct plan_kernel *k, json_t *o)
{
	json_t *arr, *e, *x;
	size_t i, j;

	k->name = xstrdup(json_string_value(json_object_get(o, "name")));
	if (json_string_value(json_object_get(o, "mask_symbol")))
		k->mask_symbol = xstrdup(json_string_value(json_object_get(o, "mask_symbol")));
	k->default_mask = hex_value(json_object_get(o, "default_mask"), ~(uint64_t)0);
	k->no_replay = json_is_true(json_object_get(o, "no_replay"));
	arr = json_object_get(o, "variants");
	k->nr_variants = json_array_size(arr);
	k->variants = xcalloc(k->nr_variants + 1, sizeof(*k->variants));
	json_array_foreach(arr, i, e) {
		const char *label = json_string_value(json_object_get(e, "label"));
		k->variants[i].label = xstrdup(label ? label : "?");
		k->variants[i].mask = hex_value(json_object_get(e, "mask"), k->default_mask);
		if (json_string_value(json_object_get(e, "ptx")))
			k->variants[i].ptx_path = xstrdup(json_string_value(json_object_get(e, "ptx")));
		k->variants[i].hits_only = !strcmp(json_string_value(json_object_get(e, "counters")) ?: "",
						   "l1_hits");
		k->variants[i].when_hits[0] = k->variants[i].when_hits[1] = -1;
		json_array_foreach(json_object_get(e, "when_hits"), j, x) {
			json_int_t w = json_integer_value(x);
			if (j < 2 && w >= 0 && (size_t)w < json_array_size(arr) && (size_t)w != i)
				k->variants[i].when_hits[j] = (long)w;
		}
	}
	arr = json_object_get(o, "written_params");
	k->nr_written = json_array_size(arr);
	k->written = xcalloc(k->nr_written + 1, sizeof(*k->written));
	json_array_foreach(arr, i, e)
		k->written[i] = (unsigned)json_integer_value(e);
	arr = json_object_get(o, "samples");
	k->nr_samples = json_array_size(arr);
	k->samples = xcalloc(k->nr_samples + 1, sizeof(*k->samples));
	json_array_foreach(arr, i, e) {
		json_t *vs = json_object_get(e, "variants");
		struct plan_sample *s = &k->samples[i];

		s->ordinal = (uint64_t)json_integer_value(json_object_get(e, "ordinal"));
		s->variants = xcalloc(json_array_size(vs) + 1, sizeof(*s->variants));
		json_array_foreach(vs, j, x) {
			json_int_t v = json_integer_value(x);
			if (v >= 0 && (size_t)v < k->nr_variants)
				s->variants[s->nr_variants++] = (size_t)v;
		}
	}
	arr = json_object_get(o, "versions");
	k->nr_versions = json_array_size(arr);
	k->versions = xcalloc(k->nr_versions + 1, sizeof(*k->versions));
	json_array_foreach(arr, i, e) {
		const char *label = json_string_value(json_object_get(e, "label"));
		const char *ptx = json_string_value(json_object_get(e, "ptx"));
		k->versions[i].label = xstrdup(label ? label : "?");
		k->versions[i].ptx_path = ptx ? xstrdup(ptx) : NULL;
	}
	if (json_string_value(json_object_get(o, "pattern")))
		k->pattern = xstrdup(json_string_value(json_object_get(o, "pattern")));
	x = json_object_get(o, "replay_rounds");
	arr = json_object_get(x, "ordinals");
	k->nr_replay_ordinals = json_array_size(arr);
	k->replay_ordinals = xcalloc(k->nr_replay_ordinals + 1, sizeof(*k->replay_ordinals));
	json_array_foreach(arr, i, e)
		k->replay_ordinals[i] = (uint64_t)json_integer_value(e);
	k->rounds = (unsigned)json_integer_value(json_object_get(x, "rounds"));
	load_carveout(&k->carveout, json_object_get(o, "carveout"));
	arr = json_object_get(o, "profile_ordinals");
	k->profile_ordinals = xcalloc(json_array_size(arr) + 1, sizeof(*k->profile_ordinals));
	json_array_foreach(arr, i, e)
		k->profile_ordinals[k->nr_profile_ordinals++] = (uint64_t)json_integer_value(e);
	x = json_object_get(o, "monitor");
	if (json_string_value(json_object_get(x, "ptx"))) {
		k->monitor_ptx = xstrdup(json_string_value(json_object_get(x, "ptx")));
		arr = json_object_get(x, "ordinals");
		k->monitor_ordinals = xcalloc(json_array_size(arr) + 1, sizeof(*k->monitor_ordinals));
		json_array_foreach(arr, i, e)
			k->monitor_ordinals[k->nr_monitor_ordinals++] = (uint64_t)json_integer_value(e);
	}
}

struct launch_plan *launch_plan_load(const char *path)
{
	json_t *doc = json_file_load(path), *arr, *o;
	struct launch_plan *p;
	size_t i;

	if (!doc) {
		inject_error("launch plan: %s", error_message());
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->replay_max_bytes = (uint64_t)json_integer_value(json_object_get(doc, "replay_max_bytes"));
	arr = json_object_get(doc, "kernels");
	p->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*p->kernels));
	json_array_foreach(arr, i, o) {
		if (!json_string_value(json_object_get(o, "name")))
			continue;
		load_kernel(&p->kernels[p->nr_kernels++], o);
	}
	json_decref(doc);
	return p;
}

void launch_plan_free(struct launch_plan *p)
{
	size_t i, j;

	if (!p)
		return;
	for (i = 0; i < p->nr_kernels; i++) {
		struct plan_kernel *k = &p->kernels[i];

		free(k->name);
		free(k->mask_symbol);
		for (j = 0; j < k->nr_variants; j++) {
			free(k->variants[j].label);
			free(k->variants[j].ptx_path);
			own_module_release(&k->variants[j].own);
		}
		free(k->variants);
		free(k->written);
		for (j = 0; j < k->nr_samples; j++)
			free(k->samples[j].variants);
		free(k->samples);
		for (j = 0; j < k->nr_versions; j++) {
			free(k->versions[j].label);
			free(k->versions[j].ptx_path);
			own_module_release(&k->versions[j].own);
		}
		free(k->versions);
		free(k->pattern);
		free(k->replay_ordinals);
		free(k->monitor_ptx);
		own_module_release(&k->monitor);
		free(k->monitor_ordinals);
		free(k->profile_ordinals);
		free(k->carveout.labels[0]);
		free(k->carveout.labels[1]);
		free(k->carveout.pattern);
		free(k->carveout.replay_ordinals);
	}
	free(p->kernels);
	free(p);
}

static struct plan_kernel *find_kernel(const struct launch_plan *p, const char *name)
{
	size_t i;

	if (!p || !name)
		return NULL;
	for (i = 0; i < p->nr_kernels; i++)
		if (!strcmp(p->kernels[i].name, name))
			return &p->kernels[i];
	return NULL;
}

int launch_plan_wants_counters(const struct launch_plan *p, const char *kernel)
{
	const struct plan_kernel *k = find_kernel(p, kernel);

	return k && ((k->nr_samples && k->nr_variants) || k->nr_profile_ordinals);
}

/* ---- the program's launch, again ------------------------------------- */

static CUresult relaunch(const struct launch_info *li, CUfunction fn)
{
	if (li->config) {
		CUlaunchConfig c = *li->config;
		return cuLaunchKernelEx(&c, fn, li->params, NULL);
	}
	return cuLaunchKernel(fn, li->grid[0], li->grid[1], li->grid[2], li->block[0],
			      li->block[1], li->block[2], li->shared, li->stream, li->params, NULL);
}

/* The kernel's function in a module of ours (loaded once), paired with the
 * program's function of this launch. */
static CUfunction our_function(const struct plan_kernel *k, const struct launch_info *li,
			       struct own_module *om, const char *what, const char *ptx_path)
{
	return own_module_function(om, what, ptx_path, li->kernel, k->program_fn, li->shared);
}

/* The program's launch runs om's function fn: the program's variables go in
 * first, ours come back after it (launch_plan_after). */
static void run_own(struct plan_kernel *k, const struct launch_info *li,
		    const struct own_module *om, CUfunction fn)
{
	own_module_sync_in(om, li->stream);
	*li->f = fn;
	k->ran_own = om;
}

/* ---- memory the kernel writes ------------------------------------------ */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void saved_release(struct saved_memory *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (s->items[i].backup)
			cuMemFree(s->items[i].backup);
	free(s->items);
	memset(s, 0, sizeof(*s));
}

/*
 * Saves every allocation a written parameter points into. Returns 0, or -1
 * with *why set (a static or new string in why_buf) when it cannot.
 */
static int save_written(const struct launch_plan *p, const struct plan_kernel *k,
			const struct alloc_table *allocs, const struct launch_info *li,
			struct saved_memory *s, char *why, size_t why_len)
{
	double t0 = now_ms();
	size_t i, j;
	CUresult r;

	memset(s, 0, sizeof(*s));
	if (!li->params) {
		snprintf(why, why_len, "the launch passes its arguments in 'extra': they cannot be read");
		return -1;
	}
	for (i = 0; i < k->nr_written; i++) {
		CUdeviceptr v;
		const struct alloc_entry *a;
		int dup = 0;

		if (!li->params[k->written[i]]) {
			snprintf(why, why_len, "parameter %u is missing", k->written[i]);
			goto fail;
		}
		memcpy(&v, li->params[k->written[i]], sizeof(v));
		a = alloc_table_find(allocs, v);
		if (!a) {
			snprintf(why, why_len, "written parameter %u does not point into an allocation "
				 "the library saw (cuMemAlloc*)", k->written[i]);
			goto fail;
		}
		for (j = 0; j < s->nr; j++)
			dup |= s->items[j].ptr == a->ptr;
		if (dup)
			continue;
		s->items = xrealloc(s->items, (s->nr + 1) * sizeof(*s->items));
		s->items[s->nr++] = (struct saved_alloc){ a->ptr, 0, a->size };
		s->bytes += a->size;
	}
	if (p->replay_max_bytes && s->bytes > p->replay_max_bytes) {
		snprintf(why, why_len, "the kernel writes %llu bytes, over the replay limit of %llu",
			 (unsigned long long)s->bytes, (unsigned long long)p->replay_max_bytes);
		goto fail;
	}
	for (i = 0; i < s->nr; i++) {
		r = cuMemAlloc(&s->items[i].backup, s->items[i].size);
		if (r == CUDA_SUCCESS)
			r = cuMemcpyDtoD(s->items[i].backup, s->items[i].ptr, s->items[i].size);
		if (r != CUDA_SUCCESS) {
			snprintf(why, why_len, "cannot save %zu bytes: %s", s->items[i].size, inject_cu_error(r));
			goto fail;
		}
	}
	cuCtxSynchronize();
	s->save_ms = now_ms() - t0;
	return 0;
fail:
	saved_release(s);
	return -1;
}

static void restore_written(const struct saved_memory *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		cuMemcpyDtoD(s->items[i].ptr, s->items[i].backup, s->items[i].size);
	cuCtxSynchronize();
}

/* ---- counters: variants through the mask or modules of their own -------- */

static int resolve_mask(struct plan_kernel *k, struct module_table *mods)
{
	struct seen_module *m = module_table_find_function(mods, k->name);
	size_t bytes = 0;
	CUresult r;

	if (!m || !m->handle) {
		inject_error("launch plan: kernel %s: its module is not known", k->name);
		return -1;
	}
	if (k->mask_owner == m->handle && k->mask_addr)
		return 0;
	if (m->is_library)
		r = cuLibraryGetGlobal(&k->mask_addr, &bytes, (CUlibrary)m->handle, k->mask_symbol);
	else
		r = cuModuleGetGlobal(&k->mask_addr, &bytes, (CUmodule)m->handle, k->mask_symbol);
	if (r != CUDA_SUCCESS || bytes != sizeof(uint64_t)) {
		inject_error("launch plan: kernel %s: no mask %s in its module (%s)", k->name,
			     k->mask_symbol, r == CUDA_SUCCESS ? "wrong size" : inject_cu_error(r));
		k->mask_addr = 0;
		return -1;
	}
	k->mask_owner = m->handle;
	return 0;
}

static int write_mask(const struct plan_kernel *k, uint64_t mask)
{
	CUresult r = cuMemcpyHtoD(k->mask_addr, &mask, sizeof(mask));

	if (r != CUDA_SUCCESS)
		inject_error("launch plan: kernel %s: cannot write its mask: %s", k->name, inject_cu_error(r));
	return r == CUDA_SUCCESS ? 0 : -1;
}

static const struct plan_sample *sample_for(const struct plan_kernel *k, uint64_t ordinal)
{
	size_t i;

	for (i = 0; i < k->nr_samples; i++)
		if (k->samples[i].ordinal == ordinal)
			return &k->samples[i];
	return NULL;
}

/* The hits of the kernel's variant labelled "none" (every measured load
 * bypassing) so far, or NAN when it has none. */
static double none_hits(const struct plan_kernel *k)
{
	size_t i;

	for (i = 0; i < k->nr_variants; i++)
		if (!strcmp(k->variants[i].label, "none"))
			return k->variants[i].hits;
	return NAN;
}

/* Whether a variant is replayed here: always, or, when conditional, once, at
 * the first sample where one of its variants moved the hits against "none"
 * (launch_single_moves_hits: hits of its own, or evictions of the loads
 * that allocate in every variant). Both sums cover the same samples: the
 * singles and "none" are replayed at each. */
static int wanted(const struct plan_kernel *k, const struct plan_variant *v)
{
	double none = none_hits(k);
	size_t i;

	if (v->when_hits[0] < 0)
		return 1;
	if (v->replayed)
		return 0;
	for (i = 0; i < 2; i++)
		if (v->when_hits[i] >= 0 &&
		    launch_single_moves_hits(k->variants[v->when_hits[i]].hits, none))
			return 1;
	return 0;
}

/* The range profiler's listener: each variant's hits, as decoded. */
static void count_hits(void *arg, const char *kernel, const char *label, json_t *values)
{
	struct plan_kernel *k = find_kernel(arg, kernel);
	json_t *h = json_object_get(values, "l1_hits");
	size_t i;

	if (!k || !json_is_number(h))
		return;
	for (i = 0; i < k->nr_variants; i++)
		if (!strcmp(k->variants[i].label, label))
			k->variants[i].hits += json_number_value(h);
}

/*
 * Replays the sample's variants of one round (0: those replayed always,
 * 1: those replayed once their partners hit), memory restored after each.
 * Returns how many were replayed, or -1 when a replay failed.
 */
static int replay_round(struct plan_kernel *k, struct range_metrics *rm,
			const struct launch_info *li, const struct plan_sample *s,
			uint64_t ordinal, int conditional, const struct saved_memory *saved,
			double *restore_ms)
{
	size_t i;
	int n = 0;

	for (i = 0; i < s->nr_variants; i++) {
		struct plan_variant *v = &k->variants[s->variants[i]];
		CUfunction fn = *li->f;
		CUresult r;
		double r0;

		if ((v->when_hits[0] >= 0) != conditional || !wanted(k, v))
			continue;
		if (v->ptx_path) {
			/* load (JIT) outside the profiled range */
			fn = our_function(k, li, &v->own, v->label, v->ptx_path);
			if (!fn)
				continue;
			own_module_sync_in(&v->own, li->stream);
		} else if (write_mask(k, v->mask)) {
			return -1;
		}
		range_metrics_begin(rm, li->seq, k->name, v->label, ordinal, v->hits_only);
		r = relaunch(li, fn);
		if (r != CUDA_SUCCESS) {
			range_metrics_end(rm);
			inject_error("launch plan: kernel %s: replaying variant %s failed: %s",
				     k->name, v->label, inject_cu_error(r));
			return -1;
		}
		r0 = now_ms();
		restore_written(saved);
		*restore_ms += now_ms() - r0;
		v->replayed = 1;
		n++;
	}
	/* the replays share profiler sessions: decode them all now (the
	 * listener counts their hits before the conditional round) */
	range_metrics_end(rm);
	return n;
}

static void replay_variants(struct launch_plan *p, struct plan_kernel *k,
			    struct module_table *mods, const struct alloc_table *allocs,
			    struct range_metrics *rm, const struct launch_info *li,
			    const struct plan_sample *s, uint64_t ordinal)
{
	struct saved_memory saved;
	char why[256];
	double t0, restore_ms = 0;
	int n, m = 0;

	if (!rm || !s->nr_variants)
		return;
	if (k->mask_symbol && !k->variants[0].ptx_path && resolve_mask(k, mods))
		return;
	range_metrics_set_listener(rm, count_hits, p);
	cuCtxSynchronize();
	if (k->no_replay || save_written(p, k, allocs, li, &saved, why, sizeof(why))) {
		/* Measure one variant on the program's own launch instead. */
		struct plan_variant *v = &k->variants[s->variants[0]];

		if (!k->no_replay)
			inject_event(json_pack("{s:s, s:s, s:I, s:I, s:s}", "ev", "replay_refused",
					       "kernel", k->name, "seq", (json_int_t)li->seq,
					       "ordinal", (json_int_t)ordinal, "reason", why));
		if (v->ptx_path) {
			CUfunction fn = our_function(k, li, &v->own, v->label, v->ptx_path);
			if (!fn)
				return;
			run_own(k, li, &v->own, fn);
		} else if (write_mask(k, v->mask)) {
			return;
		}
		range_metrics_begin(rm, li->seq, k->name, v->label, ordinal, v->hits_only);
		k->own_profiled = 1;
		return;
	}
	t0 = now_ms();
	n = replay_round(k, rm, li, s, ordinal, 0, &saved, &restore_ms);
	if (n >= 0)
		m = replay_round(k, rm, li, s, ordinal, 1, &saved, &restore_ms);
	if (!k->variants[0].ptx_path)
		write_mask(k, k->default_mask);
	inject_event(json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "ev", "replay",
			       "kernel", k->name, "seq", (json_int_t)li->seq,
			       "ordinal", (json_int_t)ordinal,
			       "variants", (json_int_t)((n > 0 ? n : 0) + (m > 0 ? m : 0)),
			       "conditional", (json_int_t)(m > 0 ? m : 0),
			       "saved_bytes", (json_int_t)saved.bytes, "save_ms", saved.save_ms,
			       "restore_ms", restore_ms, "total_ms", now_ms() - t0 + saved.save_ms));
	saved_release(&saved);
}

/* ---- verification: versions --------------------------------------------- */

static CUfunction version_function(const struct plan_kernel *k, const struct launch_info *li,
				   struct plan_version *v)
{
	return our_function(k, li, &v->own, v->label, v->ptx_path);
}

static int listed(const uint64_t *v, size_t n, uint64_t ordinal)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == ordinal)
			return 1;
	return 0;
}

static int is_replay_ordinal(const struct plan_kernel *k, uint64_t ordinal)
{
	return listed(k->replay_ordinals, k->nr_replay_ordinals, ordinal);
}

/* ---- sampled monitor ----------------------------------------------------- */

/* The program's launch runs the instrumented kernel (same results, counted). */
static void monitor_before(struct plan_kernel *k, const struct launch_info *li, uint64_t ordinal)
{
	CUfunction fn;

	if (!k->monitor_ptx || !listed(k->monitor_ordinals, k->nr_monitor_ordinals, ordinal))
		return;
	fn = our_function(k, li, &k->monitor, "the instrumented module", k->monitor_ptx);
	if (!fn)
		return;
	run_own(k, li, &k->monitor, fn);
	k->monitor_pending = 1;
	k->monitor_seq = li->seq;
}

/* After it: its counter array, read as for a substituted instrumented module. */
static void monitor_after(struct plan_kernel *k)
{
	CUdeviceptr dptr = 0;
	size_t bytes = 0;
	CUresult r;

	if (!k->monitor_pending)
		return;
	k->monitor_pending = 0;
	r = cuModuleGetGlobal(&dptr, &bytes, k->monitor.module, PTX_INSTRUMENT_SYMBOL);
	if (r != CUDA_SUCCESS) {
		inject_error("launch plan: kernel %s: no %s in the instrumented module: %s", k->name,
			     PTX_INSTRUMENT_SYMBOL, inject_cu_error(r));
		return;
	}
	counters_emit(dptr, bytes, k->name, NULL, k->monitor_seq);
}

/* Times each version `rounds` times, alternating (ABBA), memory restored. */
static void replay_versions(struct launch_plan *p, struct plan_kernel *k,
			    const struct alloc_table *allocs, const struct launch_info *li,
			    uint64_t ordinal)
{
	struct saved_memory saved;
	CUevent start = NULL, stop = NULL;
	char why[256];
	unsigned r;
	size_t i;

	for (i = 0; i < k->nr_versions; i++)
		if (!version_function(k, li, &k->versions[i]))
			return;
	cuCtxSynchronize();
	if (save_written(p, k, allocs, li, &saved, why, sizeof(why))) {
		inject_event(json_pack("{s:s, s:s, s:I, s:I, s:s}", "ev", "replay_refused",
				       "kernel", k->name, "seq", (json_int_t)li->seq,
				       "ordinal", (json_int_t)ordinal, "reason", why));
		return;
	}
	if (cuEventCreate(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
	    cuEventCreate(&stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
		goto out;
	for (r = 0; r < k->rounds; r++) {
		for (i = 0; i < k->nr_versions; i++) {
			/* ABBA: every other round runs the versions in reverse */
			size_t vi = (r & 1) ? k->nr_versions - 1 - i : i;
			struct plan_version *v = &k->versions[vi];
			float ms = 0;

			own_module_sync_in(&v->own, li->stream);
			cuEventRecord(start, li->stream);
			if (relaunch(li, v->own.fn) != CUDA_SUCCESS)
				goto out;
			cuEventRecord(stop, li->stream);
			cuEventSynchronize(stop);
			cuEventElapsedTime(&ms, start, stop);
			inject_event(json_pack("{s:s, s:s, s:I, s:I, s:i, s:s, s:f}", "ev",
					       "replay_time", "kernel", k->name, "seq",
					       (json_int_t)li->seq, "ordinal", (json_int_t)ordinal,
					       "round", (int)r, "version", v->label, "ns", ms * 1e6));
			restore_written(&saved);
		}
	}
out:
	if (start)
		cuEventDestroy(start);
	if (stop)
		cuEventDestroy(stop);
	saved_release(&saved);
}

/* Which version the program's launch runs: the pattern's letter for the
 * ordinal ('a' the first version, 'b' the second, ...). */
static void choose_version(struct plan_kernel *k, const struct launch_info *li, uint64_t ordinal)
{
	size_t n, vi;
	CUfunction fn;

	if (!k->pattern || !*k->pattern || !k->nr_versions)
		return;
	n = strlen(k->pattern);
	vi = (size_t)(k->pattern[ordinal % n] - 'a');
	if (vi >= k->nr_versions)
		return;
	fn = version_function(k, li, &k->versions[vi]);
	if (!fn)
		return;
	run_own(k, li, &k->versions[vi].own, fn);
	inject_event(json_pack("{s:s, s:I, s:s, s:I, s:s}", "ev", "version", "seq",
			       (json_int_t)li->seq, "kernel", k->name, "ordinal",
			       (json_int_t)ordinal, "version", k->versions[vi].label));
}

/* ---- the carve-out check (issue 18) ------------------------------------ */

/*
 * The preferred carve-out of f, a CUfunction or a CUkernel cast to one
 * (FACTS.md "Choosing the function per launch"): reads it into *old when
 * old is not NULL, then sets value. Returns the driver's result.
 */
static CUresult carveout_swap(CUfunction f, int value, int *old)
{
	const CUfunction_attribute a = CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
	CUdevice dev;
	CUresult r;

	if (cuFuncGetName(&(const char *){ NULL }, f) == CUDA_SUCCESS) {
		r = old ? cuFuncGetAttribute(old, a, f) : CUDA_SUCCESS;
		return r == CUDA_SUCCESS ? cuFuncSetAttribute(f, a, value) : r;
	}
	r = cuCtxGetDevice(&dev);
	if (r == CUDA_SUCCESS && old)
		r = cuKernelGetAttribute(old, a, (CUkernel)f, dev);
	return r == CUDA_SUCCESS ? cuKernelSetAttribute(a, value, (CUkernel)f, dev) : r;
}

/* Replays the launch with each setting `rounds` times, alternating (ABBA),
 * timed with CUDA events, memory restored after each; the setting is put
 * back as it was. */
static void carveout_replays(struct launch_plan *p, struct plan_kernel *k,
			     const struct alloc_table *allocs, const struct launch_info *li,
			     uint64_t ordinal)
{
	struct plan_carveout *c = &k->carveout;
	struct saved_memory saved;
	CUevent start = NULL, stop = NULL;
	char why[256];
	int was = -1;
	unsigned r;
	size_t i;

	cuCtxSynchronize();
	if (save_written(p, k, allocs, li, &saved, why, sizeof(why))) {
		inject_event(json_pack("{s:s, s:s, s:I, s:I, s:s}", "ev", "replay_refused",
				       "kernel", k->name, "seq", (json_int_t)li->seq,
				       "ordinal", (json_int_t)ordinal, "reason", why));
		return;
	}
	if (carveout_swap(*li->f, c->values[0], &was) != CUDA_SUCCESS) {
		inject_error("launch plan: kernel %s: cannot set its carve-out", k->name);
		goto out;
	}
	if (cuEventCreate(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
	    cuEventCreate(&stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
		goto put_back;
	for (r = 0; r < c->rounds; r++) {
		for (i = 0; i < 2; i++) {
			size_t si = (r & 1) ? 1 - i : i;
			float ms = 0;

			carveout_swap(*li->f, c->values[si], NULL);
			cuEventRecord(start, li->stream);
			if (relaunch(li, *li->f) != CUDA_SUCCESS)
				goto put_back;
			cuEventRecord(stop, li->stream);
			cuEventSynchronize(stop);
			cuEventElapsedTime(&ms, start, stop);
			inject_event(json_pack("{s:s, s:s, s:I, s:I, s:i, s:s, s:i, s:f}", "ev",
					       "carveout_replay_time", "kernel", k->name, "seq",
					       (json_int_t)li->seq, "ordinal",
					       (json_int_t)ordinal, "round", (int)r, "setting",
					       c->labels[si], "value", c->values[si], "ns", ms * 1e6));
			restore_written(&saved);
		}
	}
put_back:
	carveout_swap(*li->f, was, NULL);
out:
	if (start)
		cuEventDestroy(start);
	if (stop)
		cuEventDestroy(stop);
	saved_release(&saved);
}

/* The program's launch runs with the setting the pattern names for its
 * ordinal; carveout_after() puts the program's own back. */
static void carveout_before(struct launch_plan *p, struct plan_kernel *k,
			    const struct alloc_table *allocs, const struct launch_info *li,
			    uint64_t ordinal)
{
	struct plan_carveout *c = &k->carveout;
	size_t si;

	if (!c->pattern || !*c->pattern)
		return;
	if (c->rounds && listed(c->replay_ordinals, c->nr_replay_ordinals, ordinal))
		carveout_replays(p, k, allocs, li, ordinal);
	si = c->pattern[ordinal % strlen(c->pattern)] == 'b';
	if (carveout_swap(*li->f, c->values[si], &c->saved) != CUDA_SUCCESS) {
		inject_error("launch plan: kernel %s: cannot set its carve-out to %d", k->name,
			     c->values[si]);
		return;
	}
	c->restore = 1;
	inject_event(json_pack("{s:s, s:I, s:s, s:I, s:s, s:i}", "ev", "carveout", "seq",
			       (json_int_t)li->seq, "kernel", k->name, "ordinal", (json_int_t)ordinal,
			       "setting", c->labels[si], "value", c->values[si]));
}

static void carveout_after(struct plan_kernel *k, const struct launch_info *li)
{
	if (!k->carveout.restore)
		return;
	k->carveout.restore = 0;
	carveout_swap(*li->f, k->carveout.saved, NULL);
}

void launch_plan_before(struct launch_plan *p, struct module_table *mods,
			const struct alloc_table *allocs, struct range_metrics *rm,
			const struct launch_info *li)
{
	struct plan_kernel *k = find_kernel(p, li->kernel);
	const struct plan_sample *s;
	struct cost_clock_token t;
	uint64_t ordinal;

	if (!k)
		return;
	ordinal = k->next_ordinal++;
	k->program_fn = *li->f;
	k->ran_own = NULL;
	t = cost_clock_enter(RUN_COST_REPLAYS);
	if (k->nr_variants && (s = sample_for(k, ordinal)))
		replay_variants(p, k, mods, allocs, rm, li, s, ordinal);
	if (k->nr_versions && k->rounds && is_replay_ordinal(k, ordinal))
		replay_versions(p, k, allocs, li, ordinal);
	choose_version(k, li, ordinal);
	monitor_before(k, li, ordinal);
	carveout_before(p, k, allocs, li, ordinal);
	cost_clock_leave(t);
	/* counters on the program's own launch (label "own"), e.g. the L2 step's DRAM runs */
	if (rm && !k->own_profiled && listed(k->profile_ordinals, k->nr_profile_ordinals, ordinal)) {
		range_metrics_begin(rm, li->seq, k->name, "own", ordinal, 0);
		k->own_profiled = 1;
	}
}

void launch_plan_after(struct launch_plan *p, struct range_metrics *rm,
		       const struct launch_info *li)
{
	struct plan_kernel *k = find_kernel(p, li->kernel);

	if (!k)
		return;
	if (k->ran_own)
		own_module_sync_out(k->ran_own, li->stream);
	k->ran_own = NULL;
	monitor_after(k);
	carveout_after(k, li);
	if (!k->own_profiled)
		return;
	k->own_profiled = 0;
	range_metrics_end(rm);
	cuCtxSynchronize();
	if (k->mask_addr)
		write_mask(k, k->default_mask);
}
