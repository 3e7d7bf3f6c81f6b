/*
 * In-run capture (--measure launches, the default; issue 15): the variants
 * of every measured kernel are measured inside one program run, at a few
 * sampled launches, through the switchable module (analysis/ptx_switch.h)
 * and a launch plan (docs/injection.md "Launch plans"). Every other launch
 * runs unprofiled. One pass measures "all", "none", each load alone and,
 * at the same sampled launch, each pair whose loads can interact: the
 * library replays pair (i, j) once the singles of that launch are decoded
 * and load i or load j hits alone (analysis/launch_sampling.h). A kernel
 * whose launches cannot be replayed gets one variant per launch, its pairs
 * in a second pass, and further passes while variants are left; a pass
 * that measures nothing new ends the capture with the rest left unmeasured
 * (noted). Singles and pairs count the L1 hits alone (the lighter counter
 * configuration, collectors/inject/range_metrics.c); "all" and "none" count
 * every default metric.
 *
 * Counters of a variant are summed over the launches it was measured at
 * and scaled to all of the kernel's launches (launches / samples), so that
 * hit_i is on the same scale as with --measure runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/launch_sampling.h"
#include "analysis/load_sites.h"
#include "analysis/plan.h"
#include "analysis/ptx_switch.h"
#include "analysis/rebuild_match.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/variant_sums.h"
#include "emitters/capture_layout.h"
#include "emitters/patched_ptx.h"
#include "src/profile/internal.h"

/* What one kernel still needs, and what it got. */
struct kernel_measure {
	struct measure_variant *pending;
	size_t nr_pending;
	int replay;                 /* its launches may be replayed */
	int replay_needs_modules;   /* only in modules of our own: it writes module variables */
	char *no_replay_reason;
	struct variant_sums sums;   /* what each variant measured, summed over the passes */
	json_t *refusals;           /* reasons the library gave */
	json_t *replays;            /* the replay events (cost) */
	json_t *written;            /* parameters the kernel writes through */
	size_t pairs_skipped;
	json_t *left;               /* labels of the singles' passes never measured */
	char *no_counters;          /* an error of a run that measured none of its variants */
};

/* A form the --l2-priority pass gives a load: an L2 priority, with the L1
 * form as built or (Triton) the one eviction_policy= writes with it. */
struct l2_pass_form {
	enum load_action action;
	enum l2_priority l2;
};
/* The forms measured, in this order (the forms of a kernel's "l2_priority"):
 * the priorities alone for CUDA C++; for a Triton kernel the three forms its
 * tl.load can write (eviction_policy="evict_first" sets L1::evict_first and
 * L2::evict_first at once; without eviction_policy it is a plain load,
 * docs/triton.md), so that what is measured is what the Python patch
 * delivers, and a policy the kernel has already (Inductor's
 * eviction_policy='evict_last') is measured against the other two. A
 * site's form as built is not measured again (its DRAM traffic is the
 * baseline's): "default" costs nothing where a call has no policy. */
static const struct l2_pass_form l2_cuda_forms[] = {
	{ LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_FIRST },
	{ LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST },
};
static const struct l2_pass_form l2_triton_forms[] = {
	{ LOAD_ACTION_EVICT_FIRST, L2_PRIORITY_EVICT_FIRST },
	{ LOAD_ACTION_EVICT_LAST, L2_PRIORITY_EVICT_LAST },
	{ LOAD_ACTION_DEFAULT, L2_PRIORITY_NONE },
};
/* Loads whose best priority gained beyond the noise are paired, at most these many. */
#define MAX_L2_PAIRED_LOADS 8

/* Passes beyond the two planned, for kernels measured one variant a launch. */
#define MAX_EXTRA_PASSES 64
/* Memory a replay may save and restore (docs/cmd-profile.md). */
#define REPLAY_MAX_BYTES (8ull << 30)

/* launch_replay_written() as the launch plan's "written_params". */
int profile_replay_written(const struct ptx_function *fn, int own_modules, json_t *written,
			   char **why)
{
	unsigned *w = xcalloc(fn->nr_params + 1, sizeof(*w));
	size_t n, i;
	int ok = launch_replay_written(fn, own_modules, w, &n, why);

	for (i = 0; i < n; i++)
		json_array_append_new(written, json_integer(w[i]));
	free(w);
	return ok;
}

/* The index in pending[0..n) of the single of load `node`, or -1. */
static long single_index(const struct measure_variant *pending, size_t n, int node)
{
	char label[24];
	size_t i;

	snprintf(label, sizeof(label), "%d", node);
	for (i = 0; i < n; i++)
		if (!strcmp(pending[i].label, label))
			return (long)i;
	return -1;
}

/* A variant of the launch plan: its mask, which counters it needs, and the
 * singles whose hits decide whether it is replayed. */
static json_t *variant_json(const struct measure_variant *pending, size_t n, size_t j)
{
	const struct measure_variant *v = &pending[j];
	char mask[24];
	json_t *o;

	snprintf(mask, sizeof(mask), "%llx", (unsigned long long)v->mask);
	o = json_pack("{s:s, s:s}", "label", v->label, "mask", mask);
	/* hit_i and hit_{i,j} need the hits alone; "all", "none" and the L2
	 * variants every counter (DRAM bytes among them) */
	if (strcmp(v->label, "all") && strcmp(v->label, "none") && !v->nr_l2 &&
	    strncmp(v->label, "l2:", 3))
		json_object_set_new(o, "counters", json_string("l1_hits"));
	if (v->when_hits[0] >= 0)
		json_object_set_new(o, "when_hits", json_pack("[i,i]",
			(int)single_index(pending, n, v->when_hits[0]),
			(int)single_index(pending, n, v->when_hits[1])));
	return o;
}

/*
 * The launch plan for one pass: each kernel with variants pending gets its
 * sampled launches (all pending variants replayed at each), or, without
 * replay, one pending variant at each of its launches.
 */
/*
 * Cuts text (a variant module) down to the one kernel it is loaded for: the
 * other kernels' bodies are left empty, so that JIT-compiling each variant
 * costs one kernel, not the whole module (on a module of four kernels it
 * was most of the capture pass, issue 15).
 */
static int only_kernel(const char *kernel, struct strbuf *text)
{
	struct ptx_module *m = NULL;
	struct strbuf cut = STRBUF_INIT;
	int ret = ptx_parse(kernel, text->buf, text->len, &m);

	if (!ret)
		ret = ptx_keep_one_entry(m, kernel, &cut);
	if (!ret) {
		strbuf_release(text);
		*text = cut;
	} else {
		strbuf_release(&cut);
	}
	ptx_module_free(m);
	return ret;
}

/* The forms the L2 pass measures for k: Triton's where its loads are
 * Python's (their .loc names a .py file), else the priorities alone; and
 * how many (*nr, may be NULL). */
static const struct l2_pass_form *l2_forms_of(const struct profile_kernel *k, size_t *nr)
{
	size_t a;

	for (a = 0; a < k->vk.nr_measured; a++) {
		unsigned ord = k->vk.measured[a];

		if (ord < k->fn->nr_loads && load_sites_is_python(k->fn->loads[ord].file)) {
			if (nr)
				*nr = ARRAY_SIZE(l2_triton_forms);
			return l2_triton_forms;
		}
	}
	if (nr)
		*nr = ARRAY_SIZE(l2_cuda_forms);
	return l2_cuda_forms;
}

/*
 * Whether every load of a site (nodes: bits of k's measured loads) is
 * built in form f already: its L2 priority is f's (a cache hint of its own,
 * traced to its createpolicy; none for a plain load) and, where f has an
 * L1 part, so is its L1 qualifier. Such a form is not measured: it is the
 * baseline.
 */
static int site_built_as(const struct profile_kernel *k, uint64_t nodes,
			 const struct l2_pass_form *f)
{
	size_t b;

	for (b = 0; b < k->vk.nr_measured && b < 64; b++) {
		const struct ptx_load *ld;

		if (!(nodes >> b & 1))
			continue;
		if (k->vk.measured[b] >= k->fn->nr_loads)
			return 0;
		ld = &k->fn->loads[k->vk.measured[b]];
		if (ptx_load_l2_priority(k->module->pm, k->fn, ld) != f->l2)
			return 0;
		if (f->action != LOAD_ACTION_AS_BUILT && !rebuild_load_has_form(ld, f->action))
			return 0;
	}
	return 1;
}

/*
 * With --variant-form modules: the module of kernel k patched as variant v
 * (loads outside v's mask L1::no_allocate), written under subst/variants/.
 * Returns its path (caller frees) or NULL with the message set.
 */
static char *write_variant_module(struct profile_ctx *c, size_t ki, const struct measure_variant *v,
				  size_t vi, const char *subst)
{
	struct profile_kernel *k = &c->kernels[ki];
	struct strbuf out = STRBUF_INIT;
	struct plan plan;
	char *dir = xasprintf("%s/variants", subst), *path;
	int ret;

	plan_init(&plan);
	if (v->nr_l2) {
		/* every load as built, the variant's loads with their form */
		const struct l2_pass_form *forms = l2_forms_of(k, NULL);
		size_t x, b;

		for (x = 0; x < v->nr_l2; x++)
			for (b = 0; b < k->vk.nr_measured && b < 64; b++) {
				const struct l2_pass_form *f = &forms[v->l2_form[x]];

				if (!(v->l2_nodes[x] >> b & 1))
					continue;
				if (f->action != LOAD_ACTION_AS_BUILT)
					plan_set(&plan, k->vk.module_id, k->vk.function,
						 k->vk.measured[b], f->action);
				if (f->l2 != L2_PRIORITY_NONE)
					plan_set_l2(&plan, k->vk.module_id, k->vk.function,
						    k->vk.measured[b], f->l2);
			}
	} else {
		variant_add_mask_to_plan(&k->vk, v->mask, LOAD_ACTION_NO_ALLOCATE, &plan);
	}
	ret = patched_ptx_render_module(k->module->pm, k->module->id, &plan, &out);
	plan_release(&plan);
	if (ret == 0)   /* no edit ("all"): the module as it is */
		strbuf_add(&out, k->module->pm->text, k->module->pm->len);
	if (ret >= 0)
		ret = only_kernel(k->name, &out);
	path = xasprintf("%s/k%zu-v%zu.ptx", dir, ki, vi);
	if (ret >= 0)
		ret = mkdir_p(dir);
	if (ret >= 0)
		ret = write_file_atomic(path, out.buf, out.len);
	strbuf_release(&out);
	free(dir);
	if (ret < 0) {
		free(path);
		return NULL;
	}
	return path;
}

/*
 * share/shares: with --gpus, the pass is `shares` runs side by side, and
 * this plan is run `share`'s: the sampled launches s with s % shares ==
 * share of a replayed kernel, the variants j with j % shares == share of
 * one measured a launch. Returns NULL on error; *empty is set when the
 * share holds no launch to measure.
 */
static json_t *pass_plan(struct profile_ctx *c, struct kernel_measure *km, const char *subst,
			 int modules, size_t share, size_t shares, int *empty)
{
	json_t *kernels = json_array();
	size_t i, j, s;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		struct kernel_measure *m = &km[i];
		/* ordinals count one process's launches (a job's rank's) */
		uint64_t launches = k->launches_per_process, *ord;
		size_t nr;
		json_t *kj, *variants = json_array(), *samples = json_array();
		char *sym;

		if (!m->nr_pending || !launches) {
			json_decref(variants);
			json_decref(samples);
			continue;
		}
		for (j = 0; j < m->nr_pending; j++) {
			json_t *vj = variant_json(m->pending, m->nr_pending, j);
			if (modules) {
				char *path = write_variant_module(c, i, &m->pending[j], j, subst);
				if (!path) {
					json_decref(vj);
					json_decref(variants);
					json_decref(samples);
					json_decref(kernels);
					return NULL;
				}
				json_object_set_new(vj, "ptx", json_string(path));
				free(path);
			}
			json_array_append_new(variants, vj);
		}
		if (m->replay) {
			size_t want = c->opt->samples ? c->opt->samples : 3;
			ord = xcalloc(want, sizeof(*ord));
			nr = launch_sample_ordinals(launches, want, ord);
			for (s = 0; s < nr; s++) {
				json_t *vs;

				if (s % shares != share)
					continue;
				vs = json_array();
				for (j = 0; j < m->nr_pending; j++)
					json_array_append_new(vs, json_integer((json_int_t)j));
				json_array_append_new(samples, json_pack("{s:I, s:o}", "ordinal",
					(json_int_t)ord[s], "variants", vs));
			}
			free(ord);
		} else {
			/* one variant a launch, the first launch last */
			uint64_t o = launches > 1 ? 1 : 0;
			int first_used = 0;

			for (j = share; j < m->nr_pending; j += shares) {
				if (o >= launches) {
					if (first_used || launches < 2)
						break;
					o = 0;
					first_used = 1;
				}
				json_array_append_new(samples, json_pack("{s:I, s:[I]}", "ordinal",
					(json_int_t)o, "variants", (json_int_t)j));
				if (o == 0)
					break;
				o++;
			}
		}
		if (!json_array_size(samples)) {
			json_decref(variants);
			json_decref(samples);
			continue;
		}
		sym = ptx_switch_symbol(k->name);
		kj = json_pack("{s:s, s:s, s:s, s:o, s:O, s:o}", "name", k->name, "mask_symbol", sym,
			       "default_mask", "ffffffffffffffff", "variants", variants,
			       "written_params", m->written, "samples", samples);
		if (modules)
			json_object_del(kj, "mask_symbol");
		if (!m->replay)
			json_object_set_new(kj, "no_replay", json_true());
		free(sym);
		json_array_append_new(kernels, kj);
	}
	*empty = !json_array_size(kernels);
	return json_pack("{s:s, s:I, s:o}", "schema", "cacheadvise.launch_plan/1",
			 "replay_max_bytes", (json_int_t)REPLAY_MAX_BYTES, "kernels", kernels);
}

/*
 * runs/NNN.subst/ with the switchable module of every module that has a
 * measured kernel and the unpatched copy of the others.
 */
static char *write_switchable(struct profile_ctx *c, unsigned run)
{
	char label[16];
	size_t i, j, l;
	char *subst;

	snprintf(label, sizeof(label), "%03u", run);
	subst = profile_write_substitutes(c, label, NULL);
	if (!subst)
		return NULL;
	for (i = 0; i < c->nr_modules; i++) {
		struct profile_module *pm = &c->modules[i];
		struct ptx_switch_kernel *ks;
		unsigned **ords;
		unsigned char **bits;
		struct strbuf out = STRBUF_INIT;
		size_t nk = 0;
		int ret = 0;
		char *path;

		if (!pm->pm)
			continue;
		ks = xcalloc(c->nr_kernels + 1, sizeof(*ks));
		ords = xcalloc(c->nr_kernels + 1, sizeof(*ords));
		bits = xcalloc(c->nr_kernels + 1, sizeof(*bits));
		for (j = 0; j < c->nr_kernels; j++) {
			struct profile_kernel *k = &c->kernels[j];
			size_t n = 0;

			if (k->module != pm || !k->vk.nr_patchable)
				continue;
			ords[nk] = xcalloc(k->vk.nr_patchable, sizeof(**ords));
			bits[nk] = xcalloc(k->vk.nr_patchable, 1);
			for (l = 0; l < k->vk.nr_patchable; l++) {
				size_t b;
				unsigned char bit = PTX_SWITCH_REST_BIT;
				for (b = 0; b < k->vk.nr_measured; b++)
					if (k->vk.measured[b] == k->vk.patchable[l])
						bit = (unsigned char)b;
				ords[nk][n] = k->vk.patchable[l];
				bits[nk][n++] = bit;
			}
			ks[nk] = (struct ptx_switch_kernel){ k->name, ords[nk], bits[nk], n };
			nk++;
		}
		if (nk) {
			ret = ptx_write_switchable(pm->pm, ks, nk, &out);
			if (!ret) {
				path = capture_layout_subst_ptx(subst, pm->id);
				/* the unpatched copy may be a link: replaced, not
				 * written through */
				ret = write_file_atomic(path, out.buf, out.len);
				free(path);
			}
		}
		for (j = 0; j < nk; j++) {
			free(ords[j]);
			free(bits[j]);
		}
		free(ords);
		free(bits);
		free(ks);
		strbuf_release(&out);
		if (ret) {
			error_prefix(ret, "cannot write the switchable module %s", pm->id);
			free(subst);
			return NULL;
		}
	}
	return subst;
}

/*
 * A job's ranks apart (issue 29): the singles each rank measured in this
 * pass, added to k->ranks. Only the singles: per-rank hit_i is compared
 * across ranks, the pairs and the plan come from the merged counters.
 */
static void collect_ranks(struct profile_kernel *k, const struct kernel_measure *m,
			  const struct run_events *ev)
{
	size_t r, a;
	char label[24];

	if (ev->nr_rank_events < 2)
		return;
	for (r = 0; r < ev->nr_rank_events; r++) {
		struct run_events *rev = ev->rank_events[r].ev;
		struct event_kernel *rek = run_events_kernel(rev, k->name);
		struct profile_rank_hits *rh = profile_rank_hits(k, ev->rank_events[r].rank, rev);

		for (a = 0; a < k->vk.nr_measured; a++) {
			double sum, samples;

			snprintf(label, sizeof(label), "%zu", a);
			/* a single this pass was to measure (as the merged counters take it) */
			if (single_index(m->pending, m->nr_pending, (int)a) >= 0 &&
			    event_kernel_variant(rek, label, "l1_hits", &sum, &samples)) {
				rh->hits[a] += sum;
				rh->samples[a] += samples;
			}
		}
	}
}

/*
 * Folds what run `run` measured into km; drops the variants measured, and
 * the conditional pairs (the library measured those that can interact).
 */
static size_t collect_pass(struct profile_ctx *c, struct kernel_measure *km, struct run_events *ev,
			   unsigned run)
{
	size_t i, j, got = 0;

	for (i = 0; i < c->nr_kernels; i++) {
		struct event_kernel *ek = run_events_kernel(ev, c->kernels[i].name);
		struct kernel_measure *m = &km[i];
		size_t keep = 0, got_before = got;
		json_t *x;

		collect_ranks(&c->kernels[i], m, ev);
		json_array_foreach(ek->replay_refused, j, x) {
			json_array_append(m->refusals, x);
			if (m->replay) {
				m->replay = 0;
				free(m->no_replay_reason);
				m->no_replay_reason = xstrdup(json_string_value(x));
			}
		}
		json_array_foreach(ek->replays, j, x)
			json_array_append(m->replays, x);
		for (j = 0; j < m->nr_pending; j++) {
			if (!variant_sums_add(&m->sums, ek, m->pending[j].label, (int)run)) {
				if (m->pending[j].when_hits[0] < 0)
					m->pending[keep++] = m->pending[j];
				continue;
			}
			got++;
		}
		/* nothing came back: the run's first error says why (a busy profiler) */
		if (m->nr_pending && got == got_before && !m->no_counters &&
		    json_array_size(ev->errors))
			m->no_counters = xstrdup(json_string_value(json_array_get(ev->errors, 0)));
		m->nr_pending = keep;
	}
	return got;
}

/* The variant's counters scaled to all launches of the kernel (capture.json
 * counters), or NULL when it was not measured. */
static json_t *scaled(const struct profile_kernel *k, const struct kernel_measure *m,
		      const char *label)
{
	const struct variant_sum *v = variant_sums_get(&m->sums, label);

	return v ? variant_sum_scaled_json(v, k->disc.launches) : NULL;
}

/* One metric of a variant scaled to all launches of the kernel; NAN when
 * not measured. *run (may be NULL) gets the run that measured it, or -1. */
static double scaled_metric(const struct profile_kernel *k, const struct kernel_measure *m,
			    const char *label, const char *key, int *run)
{
	const struct variant_sum *v = variant_sums_get(&m->sums, label);

	if (run)
		*run = v ? v->run : -1;
	if (!v)
		return NAN;
	return variant_sum_metric(v, key) *
	       (v->samples > 0 ? (double)k->disc.launches / v->samples : 1);
}

/* k->hit and k->hit_run from the singles measured so far (NAN: not measured). */
static void single_hits(struct profile_kernel *k, const struct kernel_measure *m)
{
	size_t a;
	char label[24];

	for (a = 0; a < k->vk.nr_measured; a++) {
		snprintf(label, sizeof(label), "%zu", a);
		k->hit[a] = scaled_metric(k, m, label, "l1_hits", &k->hit_run[a]);
	}
}

/*
 * hit_{a,b} measured at fewer launches than its singles (a pair is replayed
 * once): compared with the singles at the same launches, on their scale
 * (pair_hits_at_one_launch). `hits` is the pair's own scaled value, kept
 * where a single was not measured at one of those launches.
 */
static double same_launches(const struct profile_kernel *k, const struct kernel_measure *m,
			    size_t a, size_t b, double hits)
{
	char la[24], lb[24], lp[48];
	const struct variant_sum *pv, *av, *bv;
	double p = 0, i = 0, j = 0, xa, xb;
	size_t n = 0, o;

	snprintf(la, sizeof(la), "%zu", a);
	snprintf(lb, sizeof(lb), "%zu", b);
	snprintf(lp, sizeof(lp), "%zu,%zu", a, b);
	pv = variant_sums_get(&m->sums, lp);
	av = variant_sums_get(&m->sums, la);
	bv = variant_sums_get(&m->sums, lb);
	if (!pv || !av || !bv || !pv->nr_at || !av->nr_at || !bv->nr_at ||
	    pv->nr_at >= av->nr_at || isnan(k->hit[a]) || isnan(k->hit[b]))
		return hits;
	for (o = 0; o < pv->nr_at; o++) {
		if (!variant_sum_hits_at(av, pv->at[o].process, pv->at[o].ordinal, &xa) ||
		    !variant_sum_hits_at(bv, pv->at[o].process, pv->at[o].ordinal, &xb))
			return hits;
		p += pv->at[o].l1_hits;
		i += xa;
		j += xb;
		n++;
	}
	return n ? pair_hits_at_one_launch(p / n, i / n, j / n, k->hit[a], k->hit[b],
					   (double)k->disc.launches) : hits;
}

static void record(struct profile_ctx *c, struct kernel_measure *km, json_t *kernels_json)
{
	size_t i, a, b;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		struct kernel_measure *m = &km[i];
		size_t n = k->vk.nr_measured;
		json_t *all = scaled(k, m, "all"), *none = scaled(k, m, "none");
		double none_hits = scaled_metric(k, m, "none", "l1_hits", NULL);
		json_t *additive = json_array(), *kj;
		char label[48];

		if (all) {
			json_object_set_new(all, "measured_as", json_string("all loads allocating, in-run"));
			profile_set_counters(c, k, "in_run_all", all);
		}
		if (none)
			profile_set_counters(c, k, "all_bypassed", none);
		single_hits(k, m);
		for (a = 0; a < n; a++)
			for (b = a + 1; b < n; b++) {
				double hits;
				int run;

				snprintf(label, sizeof(label), "%zu,%zu", a, b);
				hits = scaled_metric(k, m, label, "l1_hits", &run);
				if (run >= 0) {
					k->pair_hit[a * n + b] = count_resolve_noise(
						same_launches(k, m, a, b, hits), &k->pair_noise[a * n + b]);
					k->pair_run[a * n + b] = run;
				} else if (!isnan(k->hit[a]) && !isnan(k->hit[b]) &&
					   !launch_single_moves_hits(k->hit[a], none_hits) &&
					   !launch_single_moves_hits(k->hit[b], none_hits)) {
					/* additive: two loads that alone move nobody's hits
					 * cannot gain together (measure_pairs) */
					k->pair_hit[a * n + b] = k->hit[a] + k->hit[b];
					json_array_append_new(additive, json_pack("[i,i]",
						k->vk.measured[a], k->vk.measured[b]));
				}
			}
		kj = json_pack("{s:b, s:o, s:o, s:O, s:O}", "replay", m->replay,
			       "pairs_additive", additive, "variants", variant_sums_to_json(&m->sums),
			       "replay_refused", m->refusals, "replays", m->replays);
		if (m->no_replay_reason)
			json_object_set_new(kj, "no_replay_reason", json_string(m->no_replay_reason));
		if (m->nr_pending || json_array_size(m->left)) {
			json_t *left = json_deep_copy(m->left);
			char *why = m->no_replay_reason ? xstrdup(m->no_replay_reason) :
				    m->no_counters ? xasprintf("no counters came back: %s", m->no_counters) :
				    xstrdup("too few launches");

			for (a = 0; a < m->nr_pending; a++)
				json_array_append_new(left, json_string(m->pending[a].label));
			json_object_set_new(kj, "unmeasured", left);
			profile_note(c, "kernel %s: %zu variants could not be measured in-run (%s); "
				     "--measure runs measures them in program runs of their own",
				     k->name, json_array_size(left), why);
			free(why);
		}
		json_object_set_new(kernels_json, k->name, kj);
	}
}

/* One program run with the launch plan; returns 0 or an error. */
/*
 * Which form a pass uses (docs/cmd-profile.md "How variants are measured"):
 * a module per variant is exactly the code a plan deploys, but each is
 * JIT-compiled; the mask needs one module but doubles every switched load
 * under predicates, which moved hit_i by up to 14% on the records sample
 * (H100, against one program run per variant; 7% with modules).
 */
static int pass_uses_modules(const struct profile_ctx *c, const struct kernel_measure *km)
{
	size_t i, n = 0;

	/* an L2 variant is its own module: the mask switches L1 forms only */
	for (i = 0; i < c->nr_kernels; i++) {
		size_t j;

		for (j = 0; j < km[i].nr_pending; j++)
			if (!strncmp(km[i].pending[j].label, "l2:", 3))
				return 1;
	}
	if (c->opt->variant_form)
		return c->opt->variant_form == 2;
	for (i = 0; i < c->nr_kernels; i++) {
		/* the mask would replay the program's own module, variables and all */
		if (km[i].replay_needs_modules && km[i].nr_pending)
			return 1;
		n += km[i].nr_pending;
	}
	return n <= PROFILE_MAX_VARIANT_MODULES;
}

/*
 * The PTX and launch plan of run `run`, share `share` of `shares`: *subst and
 * *plan_path (caller frees). Returns 0, or an error; *empty when the share
 * has nothing to measure (nothing is then written for it).
 */
static int prepare_pass_run(struct profile_ctx *c, struct kernel_measure *km, const char *label,
			    unsigned run, int modules, size_t share, size_t shares, char **subst,
			    char **plan_path, int *empty)
{
	json_t *plan;
	int ret;

	*plan_path = NULL;
	*empty = 0;
	if (modules) {
		char dirlabel[16];
		snprintf(dirlabel, sizeof(dirlabel), "%03u", run);
		*subst = profile_write_substitutes(c, dirlabel, NULL);
	} else {
		*subst = write_switchable(c, run);
	}
	if (!*subst)
		return error_prefix(CA_E_IO, "cannot prepare the PTX of run %u (%s)", run, label);
	plan = pass_plan(c, km, *subst, modules, share, shares, empty);
	if (!plan)
		return error_prefix(CA_E_IO, "cannot write the variant modules of run %u (%s)", run, label);
	if (*empty && shares > 1) {
		json_decref(plan);
		return 0;
	}
	*empty = 0;
	*plan_path = capture_layout_run_launch_plan(c->dir, run);
	ret = json_file_write(*plan_path, plan);
	json_decref(plan);
	return ret;
}

/*
 * The turns of a job's capture pass (issue 35): the range profiler is one
 * process's at a time on a GPU (another gets CUPTI_ERROR_HARDWARE_BUSY and
 * measures nothing, and two that start together may both: seen on an H200
 * with two ranks on one GPU, where a pass lost every single), so where
 * ranks share a GPU, turn t measures the t-th rank of each GPU
 * (CACHEADVISE_RANKS). Returns the number of turns, with (*specs)[t] the
 * ranks of turn t (caller frees each and the array); 1 with *specs NULL
 * where each rank has a GPU of its own, or outside a job. A rank whose GPU
 * is unknown counts as one alone.
 * NEEDSWORK: --measure runs and the L2 step's counting runs do not take turns.
 */
static size_t rank_turns(const struct profile_ctx *c, char ***specs)
{
	size_t *turn = xcalloc(c->nr_job_ranks + 1, sizeof(*turn)), n = 1, i, j, t;
	struct strbuf sb = STRBUF_INIT;

	*specs = NULL;
	for (i = 0; i < c->nr_job_ranks; i++) {
		const char *gpu = c->job_ranks[i].gpu;

		for (j = 0; j < i; j++)
			turn[i] += gpu && c->job_ranks[j].gpu && !strcmp(gpu, c->job_ranks[j].gpu);
		if (turn[i] + 1 > n)
			n = turn[i] + 1;
	}
	if (n > 1) {
		*specs = xcalloc(n, sizeof(**specs));
		for (t = 0; t < n; t++) {
			for (i = 0; i < c->nr_job_ranks; i++)
				if (turn[i] == t)
					strbuf_addf(&sb, "%s%d", sb.len ? "," : "", c->job_ranks[i].rank);
			(*specs)[t] = strbuf_detach(&sb, NULL);
		}
	}
	free(turn);
	return n;
}

/*
 * One capture pass: one program run with the launch plan; or, with --gpus
 * and `side_by_side` (a pass that is no output reference), one run a GPU
 * at once, each measuring its share of the sampled launches (of the
 * variants, for kernels measured one variant a launch); or, in a job whose
 * ranks share a GPU, one run a turn (rank_turns), one after the other,
 * each measuring every variant in its ranks. The runs' events are read
 * into ev together. *run_out: the (first) run.
 */
static int run_pass(struct profile_ctx *c, struct kernel_measure *km, const char *label,
		    unsigned *run_out, struct run_events *ev, json_t *forms, int side_by_side)
{
	char **turn_ranks;
	size_t turns = rank_turns(c, &turn_ranks);
	/* --gpus is refused for a job: turns and shares never meet */
	size_t shares = turns == 1 && side_by_side && c->opt->nr_gpus > 1 ? c->opt->nr_gpus : 1;
	size_t runs = turns > 1 ? turns : shares, n = 0, g;
	int modules = pass_uses_modules(c, km), ret = 0, empty;
	struct run_request *reqs = xcalloc(runs, sizeof(*reqs));
	struct run_result *res = xcalloc(runs, sizeof(*res));
	char **subst = xcalloc(runs, sizeof(*subst)), **plans = xcalloc(runs, sizeof(*plans));
	const char **variants = xcalloc(runs, sizeof(*variants));
	unsigned first = c->run_index;

	*run_out = first;
	for (g = 0; g < runs && !ret; g++) {
		json_t *form;

		ret = prepare_pass_run(c, km, label, first + (unsigned)n, modules,
				       turns > 1 ? 0 : g, shares, &subst[n], &plans[n], &empty);
		if (ret || empty) {
			free(subst[n]);
			free(plans[n]);
			subst[n] = plans[n] = NULL;
			continue;
		}
		form = json_pack("{s:i, s:s}", "run", (int)(first + n), "variant_form",
				 modules ? "modules" : "mask");
		if (turns > 1)
			json_object_set_new(form, "ranks", json_string(turn_ranks[g]));
		json_array_append_new(forms, form);
		if (modules) {
			c->module_passes = xrealloc(c->module_passes, (c->nr_module_passes + 1) *
						    sizeof(*c->module_passes));
			c->module_passes[c->nr_module_passes++] = first + (unsigned)n;
		}
		reqs[n] = (struct run_request){ .timing = 1, .subst_dir = subst[n],
						.launch_plan = plans[n],
						.ranks = turns > 1 ? turn_ranks[g] : NULL };
		variants[n] = "capture";
		n++;
	}
	if (!ret && n) {
		if (n == 1 || turns > 1) {
			/* one run, or the turns one after the other (each is the whole job) */
			for (g = 0; g < n && !ret; g++) {
				struct run_events one;

				run_events_init(&one);
				profile_progress(c, label);
				ret = profile_run_program(c, "capture", &reqs[g], n == 1 ? ev : &one,
							  &res[g], NULL);
				profile_progress(c, label);
				if (!ret && n > 1) {
					char *dir = capture_layout_run_events_dir(c->dir, first + (unsigned)g);
					char *file = run_request_events_file(dir);

					ret = run_events_load(ev, file);   /* the turns add up */
					free(file);
					free(dir);
				}
				run_events_release(&one);
				if (res[g].status == RUN_INTERRUPTED)
					break;
			}
		} else {
			profile_progress(c, label);
			ret = profile_run_programs(c, n, variants, reqs, NULL, res);
			for (g = 0; g < n && !ret; g++) {
				char *dir = capture_layout_run_events_dir(c->dir, first + (unsigned)g);
				char *file = run_request_events_file(dir);

				ret = run_events_load(ev, file);   /* the shares add up */
				free(file);
				free(dir);
			}
			profile_progress(c, label);
		}
		for (g = 0; g < n; g++) {
			unsigned run = first + (unsigned)g;

			if (!ret && res[g].status == RUN_INTERRUPTED)
				ret = error_set(CA_E_INTERRUPTED, "interrupted during run %u (%s)", run,
						label);
			if (!ret && res[g].status != RUN_OK) {
				char *log = capture_layout_run_log(NULL, run);
				profile_note(c, "run %u (%s) failed: see %s", run, label, log);
				free(log);
			}
		}
	}
	for (g = 0; g < runs; g++) {
		free(subst[g]);
		free(plans[g]);
	}
	for (g = 0; turn_ranks && g < turns; g++)
		free(turn_ranks[g]);
	free(turn_ranks);
	free(subst);
	free(plans);
	free(reqs);
	free(res);
	free(variants);
	return ret;
}

/*
 * The kernels' unprofiled time as JIT-compiled from PTX, from the first
 * capture pass with a module per variant: the program's own launches there
 * run the unpatched module, so their activity records (the library's
 * replays left out) time the baseline without a run of its own. With the
 * mask form they run the switchable module, which is not the baseline.
 */
static void baseline_times(struct profile_ctx *c, struct run_events *ev, unsigned run)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++) {
		struct event_kernel *ek = run_events_kernel(ev, c->kernels[i].name);

		if (!ek->program_timed_launches)
			continue;
		profile_set_counters(c, &c->kernels[i], "baseline", json_pack(
			"{s:f, s:I, s:i, s:i, s:s}", "duration_ns", (double)ek->program_gpu_time_ns,
			"timed_launches", (json_int_t)ek->program_timed_launches, "run", (int)run,
			"launches", (int)ek->launches, "measured_as",
			"kernel time from activity records, no counters (the program's own launches "
			"in the capture run)"));
	}
}

/*
 * The output check of in-run capture's reference runs among themselves:
 * the discovery run (the program's own code, unchanged: the reference) and
 * the first capture pass (whose program launches run the unpatched PTX)
 * ran the program's computation, so what differs between them (timings, a
 * time-seeded value) is what verification may not count; they stand in for
 * baseline runs of their own (issue 15: at most three program runs before
 * verification). Never the monitor run: its instrumented code is changed
 * code, and a computation that rounds otherwise there made a deterministic
 * program's result files look unstable (issue 25, item 2). A JIT that
 * rounds the last bits otherwise is absorbed by the tolerance.
 *
 * NEEDSWORK: the first pass's program launches run the unpatched PTX only
 * in the modules form: in the mask form they run the switchable module
 * (which baseline_times() refuses as the baseline), and a kernel not
 * replayed runs variants on its own launches, so what that code changes in
 * a result file is left out here as differing between baseline runs (issue
 * 35 item 8, cfd's 'momentum'); which of these changes it is to be
 * measured on a GPU before this pass stops being a file reference, since
 * the discovery run alone cannot tell a timing line or a time-seeded file
 * from a change (issue 35 item 4).
 */
void profile_reference_check(struct profile_ctx *c)
{
	json_t *ref = json_array();
	const char *want[] = { "discovery", "capture" };
	size_t w, i;

	for (w = 0; w < ARRAY_SIZE(want) && json_array_size(ref) < 2; w++)
		for (i = 0; i < c->nr_runs; i++) {
			const struct capture_run *r = &c->runs[i];

			/* a run beside others (--gpus) wrote files it may not own */
			if (r->variant && r->status && !strcmp(r->variant, want[w]) &&
			    !strcmp(r->status, "ok") && r->files_compared != 0) {
				json_array_append_new(ref, json_integer((json_int_t)r->index));
				break;
			}
		}
	profile_baseline_check(c, ref);
	json_decref(ref);
}

/*
 * The pairs of kernel k still to measure after the singles' passes: those
 * that can interact by the singles' hits (all with --all-pairs), less the
 * ones measured, and never one of a load whose single was not measured (a
 * pair is resolved against its singles). The singles' variants still
 * pending go to m->left: the capture notes them. Sets k->hit from the
 * singles (single_hits).
 */
static void pairs_left(struct profile_ctx *c, struct profile_kernel *k, struct kernel_measure *m)
{
	size_t n = k->vk.nr_measured, a, np, keep = 0;
	struct measure_variant *pairs;

	single_hits(k, m);
	for (a = 0; a < m->nr_pending; a++)
		json_array_append_new(m->left, json_string(m->pending[a].label));
	pairs = measure_pairs(n, k->hit, scaled_metric(k, m, "none", "l1_hits", NULL),
			      c->opt->all_pairs, &np, &m->pairs_skipped);
	for (a = 0; a < np; a++) {
		int i = -1, j = -1, b;

		for (b = 0; b < 64 && b < (int)n; b++)
			if (pairs[a].mask >> b & 1)
				*(i < 0 ? &i : &j) = b;
		if (i < 0 || j < 0 || isnan(k->hit[i]) || isnan(k->hit[j]) ||
		    variant_sums_get(&m->sums, pairs[a].label))
			continue;
		pairs[keep++] = pairs[a];
	}
	free(m->pending);
	m->pending = pairs;
	m->nr_pending = keep;
}

/* ---- --l2-priority: each load's L2 eviction priority (issue 26) --------- */

/* Whether load node a of k can take a priority of the plan's. */
static int l2_candidate(const struct profile_kernel *k, size_t a)
{
	unsigned ord = k->vk.measured[a];

	return ord < k->fn->nr_loads && !ptx_load_l2_refused(&k->fn->loads[ord]);
}

static void add_l2_variant(struct kernel_measure *m, uint64_t all, const char *label,
			   unsigned char n, const uint64_t *nodes, const unsigned char *form)
{
	struct measure_variant *v;

	m->pending = xrealloc(m->pending, (m->nr_pending + 1) * sizeof(*m->pending));
	v = &m->pending[m->nr_pending++];
	memset(v, 0, sizeof(*v));
	v->mask = all;
	snprintf(v->label, sizeof(v->label), "%s", label);
	v->when_hits[0] = v->when_hits[1] = -1;
	v->nr_l2 = n;
	if (n) {   /* the base replays have no parts (and NULL arrays) */
		memcpy(v->l2_nodes, nodes, n * sizeof(*nodes));
		memcpy(v->l2_form, form, n);
	}
}

/*
 * The sites of k's measured loads that can take a priority (the first 64
 * nodes): nodes[s] the measured loads of site s (bit b = node b), first[s]
 * its lowest node, which names it in the variants' labels. The PTX loads of
 * one source site (a Triton tl.load, the copies of a CUDA expression a loop
 * was unrolled into) are measured as one (analysis/load_sites.h: the
 * source can set one form for them, and one chunk of a block or one copy
 * alone moves too little to measure); every other load is a site alone.
 */
static size_t l2_sites(const struct profile_kernel *k, uint64_t nodes[64], size_t first[64])
{
	size_t nm = k->vk.nr_measured < 64 ? k->vk.nr_measured : 64, n = 0, a, nr;
	unsigned ords[64] = { 0 };
	size_t node[64], group[64];

	for (a = 0; a < nm; a++)
		if (l2_candidate(k, a)) {
			node[n] = a;
			ords[n++] = k->vk.measured[a];
		}
	nr = load_sites_group_ptx(k->fn, ords, n, group);
	for (a = 0; a < nr; a++) {
		nodes[a] = 0;
		first[a] = 64;
	}
	for (a = 0; a < n; a++) {
		nodes[group[a]] |= (uint64_t)1 << node[a];
		if (first[group[a]] == 64)
			first[group[a]] = node[a];
	}
	return nr;
}

/*
 * The singles: two more replays of the kernel as built ("l2:base1",
 * "l2:base2", with "all" they give the baseline's spread) and each site in
 * each form ("l2:<first node>:<form>"). Only kernels that can be replayed,
 * in a module that takes L2 hints.
 */
static size_t l2_singles(struct profile_ctx *c, struct kernel_measure *km)
{
	size_t i, s, f, n = 0, nf;
	const struct l2_pass_form *forms;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		struct kernel_measure *m = &km[i];
		size_t nm = k->vk.nr_measured, nr, first[64];
		uint64_t all = nm >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nm) - 1), nodes[64];
		char label[48];

		free(m->pending);
		m->pending = NULL;
		m->nr_pending = 0;
		if (!nm)
			continue;
		if (!m->replay || ptx_l2_unsupported(k->module->pm)) {
			/* said, so a kernel without the line is never a mystery */
			profile_note(c, "kernel %s: its L2 priorities are not measured: %s", k->name,
				     !m->replay ? (m->no_replay_reason ? m->no_replay_reason :
						   "its launches cannot be replayed") :
				     ptx_l2_unsupported(k->module->pm));
			continue;
		}
		add_l2_variant(m, all, "l2:base1", 0, NULL, NULL);
		add_l2_variant(m, all, "l2:base2", 0, NULL, NULL);
		forms = l2_forms_of(k, &nf);
		nr = l2_sites(k, nodes, first);
		for (s = 0; s < nr; s++)
			for (f = 0; f < nf; f++) {
				unsigned char form = (unsigned char)f;

				if (site_built_as(k, nodes[s], &forms[f]))
					continue;   /* as built: the baseline */
				snprintf(label, sizeof(label), "l2:%zu:%zu", first[s], f);
				add_l2_variant(m, all, label, 1, &nodes[s], &form);
			}
		n += m->nr_pending;
	}
	return n;
}

/* DRAM bytes of a variant scaled to all launches, NAN when not measured. */
static double l2_dram(const struct profile_kernel *k, const struct kernel_measure *m,
		      const char *label)
{
	return scaled_metric(k, m, label, "dram_bytes_read", NULL);
}

/* The baseline (the mean of "all" and the two base replays) and its spread. */
static void l2_baseline(const struct profile_kernel *k, const struct kernel_measure *m,
			double *base, double *noise)
{
	static const char *const labels[] = { "all", "l2:base1", "l2:base2" };
	double lo = NAN, hi = NAN, sum = 0;
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(labels); i++) {
		double d = l2_dram(k, m, labels[i]);

		if (isnan(d))
			continue;
		sum += d;
		n++;
		lo = isnan(lo) || d < lo ? d : lo;
		hi = isnan(hi) || d > hi ? d : hi;
	}
	*base = n ? sum / (double)n : NAN;
	*noise = n > 1 ? hi - lo : NAN;
}

/* The pairs: the sites whose best form gained beyond the noise, each in
 * that form, two by two ("l2:<a>:<s>,<b>:<t>", a and b their first nodes). */
static size_t l2_pairs(struct profile_ctx *c, struct kernel_measure *km)
{
	size_t i, a, b, f, n = 0, nf;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		struct kernel_measure *m = &km[i];
		size_t nm = k->vk.nr_measured, nb = 0, nr, first[64];
		uint64_t all = nm >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << nm) - 1), nodes[64];
		size_t best_site[MAX_L2_PAIRED_LOADS];
		unsigned char best_form[MAX_L2_PAIRED_LOADS];
		double base, noise;
		char label[48];

		free(m->pending);
		m->pending = NULL;
		m->nr_pending = 0;
		l2_baseline(k, m, &base, &noise);
		if (isnan(base))
			continue;
		l2_forms_of(k, &nf);
		nr = l2_sites(k, nodes, first);
		for (a = 0; a < nr && nb < MAX_L2_PAIRED_LOADS; a++) {
			double best = isnan(noise) ? 0 : noise;
			int bf = -1;

			for (f = 0; f < nf; f++) {
				double d;

				snprintf(label, sizeof(label), "l2:%zu:%zu", first[a], f);
				d = l2_dram(k, m, label);
				if (!isnan(d) && base - d > best) {
					best = base - d;
					bf = (int)f;
				}
			}
			if (bf >= 0) {
				best_site[nb] = a;
				best_form[nb++] = (unsigned char)bf;
			}
		}
		for (a = 0; a < nb; a++)
			for (b = a + 1; b < nb; b++) {
				uint64_t part[2] = { nodes[best_site[a]], nodes[best_site[b]] };
				unsigned char form[2] = { best_form[a], best_form[b] };

				snprintf(label, sizeof(label), "l2:%zu:%u,%zu:%u", first[best_site[a]],
					 form[0], first[best_site[b]], form[1]);
				add_l2_variant(m, all, label, 2, part, form);
			}
		n += m->nr_pending;
	}
	return n;
}

/* Each kernel's "l2_priority" (docs/capture-json.md) from what was measured:
 * an entry per site ("ordinals" where a site is several loads). */
static void l2_record(struct profile_ctx *c, struct kernel_measure *km)
{
	size_t i, a, b, f, g;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		struct kernel_measure *m = &km[i];
		size_t nf, nr, first[64];
		const struct l2_pass_form *pf = l2_forms_of(k, &nf);
		uint64_t nodes[64];
		json_t *forms = json_array(), *loads = json_array(), *pairs = json_array(), *lp;
		double base, noise;
		char label[96];

		l2_baseline(k, m, &base, &noise);
		if (isnan(base)) {
			json_decref(forms);
			json_decref(loads);
			json_decref(pairs);
			continue;
		}
		for (f = 0; f < nf; f++)
			json_array_append_new(forms, json_string(load_form_name(pf[f].action,
										pf[f].l2)));
		nr = l2_sites(k, nodes, first);
		for (a = 0; a < nr; a++) {
			json_t *d = json_array(), *entry;
			int any = 0;

			for (f = 0; f < nf; f++) {
				double v;

				snprintf(label, sizeof(label), "l2:%zu:%zu", first[a], f);
				v = l2_dram(k, m, label);
				json_array_append_new(d, isnan(v) ? json_null() : json_real(v));
				any |= !isnan(v);
			}
			if (!any) {
				json_decref(d);
				continue;
			}
			entry = json_pack("{s:i, s:o}", "ordinal", (int)k->vk.measured[first[a]],
					  "dram_bytes", d);
			if (nodes[a] & (nodes[a] - 1)) {   /* more than one load */
				json_t *ords = json_array();

				for (b = 0; b < 64; b++)
					if (nodes[a] >> b & 1)
						json_array_append_new(ords,
							json_integer(k->vk.measured[b]));
				json_object_set_new(entry, "ordinals", ords);
			}
			json_array_append_new(loads, entry);
		}
		for (a = 0; a < nr; a++)
			for (b = a + 1; b < nr; b++)
				for (f = 0; f < nf; f++)
					for (g = 0; g < nf; g++) {
						double v;

						snprintf(label, sizeof(label), "l2:%zu:%zu,%zu:%zu",
							 first[a], f, first[b], g);
						v = l2_dram(k, m, label);
						if (!isnan(v))
							json_array_append_new(pairs, json_pack(
								"{s:i, s:i, s:[i,i], s:f}", "i",
								(int)k->vk.measured[first[a]], "j",
								(int)k->vk.measured[first[b]], "forms",
								(int)f, (int)g, "dram_bytes", v));
					}
		lp = json_pack("{s:o, s:f, s:o, s:o}", "forms", forms, "baseline_dram_bytes", base,
			       "loads", loads, "pairs", pairs);
		if (!isnan(noise))
			json_object_set_new(lp, "noise_dram_bytes", json_real(noise));
		json_decref(k->l2_priority);
		k->l2_priority = lp;
	}
}

/* --l2-priority: one pass of singles, one of pairs (issue 26). */
static int l2_passes(struct profile_ctx *c, struct kernel_measure *km, json_t *forms,
		     size_t *counted)
{
	struct run_events ev;
	unsigned run;
	int ret = 0, pass, skipped = 0;
	/* the L1 variants still pending stay so (record() notes them) */
	struct { struct measure_variant *v; size_t n; } *l1 = xcalloc(c->nr_kernels + 1, sizeof(*l1));
	size_t i;

	for (i = 0; i < c->nr_kernels; i++) {
		l1[i].v = km[i].pending;
		l1[i].n = km[i].nr_pending;
		km[i].pending = NULL;
		km[i].nr_pending = 0;
	}
	for (pass = 0; pass < 2; pass++) {
		size_t n = pass ? l2_pairs(c, km) : l2_singles(c, km);

		if (!n)
			break;
		/* asked for (--l2-priority): never skipped for the budget (issue 35);
		 * on by default: as the budget allows, with a note when it does not */
		if (!pass && !c->opt->l2_priority_asked &&
		    !profile_budget_allows(c, "the L2 priority pass", 2)) {
			skipped = 1;
			break;
		}
		run_events_init(&ev);
		ret = run_pass(c, km, pass ? "capture (L2 priority pairs)" : "capture (L2 priority)",
			       &run, &ev, forms, 1);
		if (!ret)
			*counted += collect_pass(c, km, &ev, run);
		run_events_release(&ev);
		if (ret)
			break;
	}
	if (!ret && !skipped)
		l2_record(c, km);
	for (i = 0; i < c->nr_kernels; i++) {
		free(km[i].pending);
		km[i].pending = l1[i].v;
		km[i].nr_pending = l1[i].n;
	}
	free(l1);
	return ret;
}

int profile_capture_launches(struct profile_ctx *c)
{
	struct kernel_measure *km = xcalloc(c->nr_kernels + 1, sizeof(*km));
	json_t *kernels_json = json_object(), *forms = json_array();
	unsigned run, extra = 0;
	double t0 = profile_now();
	size_t i, got, counted = 0;
	int ret;

	{
		char **turn_ranks;
		size_t turns = rank_turns(c, &turn_ranks);

		/* a pass is a run a turn in a job whose ranks share a GPU; the L2
		 * priority pass (on by default) is counted from the start, so the
		 * ETA does not grow when it comes (issue 39 item 5) */
		c->runs_planned = c->runs_done + (unsigned)turns * (c->opt->l2_priority ? 2 : 1) +
				  (c->opt->no_monitor || c->monitored ? 0 : 1);
		for (i = 0; turn_ranks && i < turns; i++)
			free(turn_ranks[i]);
		free(turn_ranks);
	}
	for (i = 0; i < c->nr_kernels; i++) {
		size_t n = c->kernels[i].vk.nr_measured, np;
		struct measure_variant *pairs;

		variant_sums_init(&km[i].sums);
		km[i].refusals = json_array();
		km[i].replays = json_array();
		km[i].written = json_array();
		km[i].left = json_array();
		km[i].pending = measure_singles(n, &km[i].nr_pending);
		/* writes to module variables replay in modules of our own (not --variant-form mask) */
		km[i].replay = profile_replay_written(c->kernels[i].fn, c->opt->variant_form != 1,
						      km[i].written, &km[i].no_replay_reason);
		if (!km[i].replay)
			continue;
		km[i].replay_needs_modules = launch_writes_module_var(c->kernels[i].fn);   /* one variant a launch: its pairs wait for the singles */
		/* the pairs at the same launches, after the singles (all with --all-pairs) */
		pairs = c->opt->all_pairs ? measure_pairs(n, NULL, NAN, 1, &np, &(size_t){ 0 }) :
			measure_pairs_when_hits(n, &np);
		km[i].pending = xrealloc(km[i].pending, (km[i].nr_pending + np + 1) *
					 sizeof(*km[i].pending));
		memcpy(km[i].pending + km[i].nr_pending, pairs, np * sizeof(*pairs));
		km[i].nr_pending += np;
		free(pairs);
	}
	/* pass 1: all, none, singles and pairs; further passes while singles are left */
	do {
		struct run_events ev;

		run_events_init(&ev);
		/* the first pass is an output reference (profile_reference_check): alone */
		ret = run_pass(c, km, extra ? "capture (singles, more)" : "capture", &run, &ev, forms,
			       extra > 0);
		got = ret ? 0 : collect_pass(c, km, &ev, run);
		counted += got;
		if (!ret && !extra && profile_pass_used_modules(c, run))
			baseline_times(c, &ev, run);
		run_events_release(&ev);
		if (ret)
			goto out;
		for (i = 0; i < c->nr_kernels && !km[i].nr_pending; i++)
			;
	} while (i < c->nr_kernels && got && ++extra < MAX_EXTRA_PASSES);
	/* pass 2: pairs that can interact and were not measured at the singles' launches */
	for (i = 0; i < c->nr_kernels; i++)
		pairs_left(c, &c->kernels[i], &km[i]);
	for (i = 0; i < c->nr_kernels && !km[i].nr_pending; i++)
		;
	extra = 0;
	while (i < c->nr_kernels) {
		struct run_events ev;

		run_events_init(&ev);
		ret = run_pass(c, km, extra ? "capture (pairs, more)" : "capture (pairs)", &run, &ev,
			       forms, 1);
		got = ret ? 0 : collect_pass(c, km, &ev, run);
		counted += got;
		run_events_release(&ev);
		if (ret)
			goto out;
		for (i = 0; i < c->nr_kernels && !km[i].nr_pending; i++)
			;
		if (!got || ++extra >= MAX_EXTRA_PASSES)
			break;
	}
	if (c->opt->l2_priority && (ret = l2_passes(c, km, forms, &counted)))
		goto out;
	record(c, km, kernels_json);
	json_object_set_new(c->capture, "measure", json_pack("{s:s, s:s, s:O, s:i, s:I, s:f, s:o}",
		"method", "launches", "pairs", c->opt->all_pairs ? "all, at the singles' launches" :
		"those that can interact (one load hits alone), at the singles' launches",
		"passes", forms,
		"samples", (int)(c->opt->samples ? c->opt->samples : 3),
		"variants_measured", (json_int_t)counted, "seconds", profile_now() - t0,
		"kernels", kernels_json));
	kernels_json = NULL;
out:
	for (i = 0; i < c->nr_kernels; i++) {
		free(km[i].pending);
		free(km[i].no_replay_reason);
		variant_sums_release(&km[i].sums);
		json_decref(km[i].refusals);
		json_decref(km[i].replays);
		json_decref(km[i].written);
		json_decref(km[i].left);
		free(km[i].no_counters);
	}
	free(km);
	json_decref(kernels_json);
	json_decref(forms);
	return ret;
}
