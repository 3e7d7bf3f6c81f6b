/*
 * `profile`'s automatic software cache (issue 18, docs/cmd-profile.md
 * "Software cache"): for each kernel whose software-cache ranking (the
 * monitor run, analysis/softcache_rank.h) selected read-only structures,
 * the module's PTX is rewritten so that their loads go through
 * thread-private 16-byte lines in shared memory (analysis/ptx_softcache.h),
 * substituted through the injection library, timed against the unpatched
 * module inside one run as verification is (A B B A launches, or replays of
 * one launch; profile_ab_in_run), or in alternating program runs with
 * --measure runs, and kept only when faster beyond the noise with the
 * output unchanged. The
 * kernel's capture.json "software_cache" gets "verification"; a kept
 * rewrite's PTX is in patched/<id>.softcache.ptx.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ptx_softcache.h"
#include "analysis/softcache_rank.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "src/profile/internal.h"

/* A kernel the rewrite was asked for. */
struct sc_kernel {
	size_t index;              /* in c->kernels */
	json_t *sc;                /* its capture.json "software_cache" (borrowed): the verdict goes there */
	int *params;               /* read-only structures the ranking selected */
	size_t nr_params;
	struct ptx_softcache_done done;
	int rewritten;
};

/*
 * The least simulated hit rate of the selected structures for the rewrite to
 * be tried: each access runs the lookup (records' kernel executes 6.5x the
 * instructions with the cache, bench/results/device.md), which its
 * structures' 75-94% simulated hits repay; a hot table that L1 already holds
 * simulates almost none (cfd_iter's limiter table: 0.02%).
 */
#define SOFTCACHE_MIN_HIT_RATE 0.25

/*
 * The read-only structures the ranking selected for k, in its order; 0
 * with *why (static) when there is nothing to rewrite or the simulated
 * hits are too few to pay for the lookups.
 */
static size_t selected_read_only(const struct capture_software_cache *sc, int **out,
				 const char **why)
{
	size_t i, j, n = 0;
	double hits = 0, accesses = 0;

	*out = xcalloc(sc->nr_selected + 1, sizeof(int));
	*why = NULL;
	if (sc->enabled != 1) {
		*why = "the ranking advised no software cache";
		return 0;
	}
	for (i = 0; i < sc->nr_selected; i++)
		for (j = 0; j < sc->nr_candidates; j++) {
			const struct capture_softcache_candidate *cj = &sc->candidates[j];

			if (cj->param == sc->selected[i] && cj->read_only == 1) {
				(*out)[n++] = (int)sc->selected[i];
				hits += isnan(cj->sim_hits) ? 0 : cj->sim_hits;
				accesses += isnan(cj->sim_accesses) ? 0 : cj->sim_accesses;
			}
		}
	if (!n) {
		*why = "the selected structures are read-write: the automatic rewrite caches read-only structures only";
	} else if (hits < SOFTCACHE_MIN_HIT_RATE * accesses) {
		*why = "the selected structures' simulated hit rate is under 25%: every access pays the "
		       "cache's lookup, and too few hits would pay for it (not timed)";
		n = 0;
	}
	return n;
}

/* Threads per block of the kernel's first launch, 0 unknown. */
static unsigned block_threads(const struct profile_kernel *k)
{
	unsigned long long t = 1;
	size_t i;

	for (i = 0; i < 3; i++)
		t *= k->disc.block[i];
	return t > 1024 ? 0 : (unsigned)t;
}

static void set_verification(json_t *sc, json_t *ver)
{
	json_object_set_new(sc, "verification", ver);
}

static json_t *refused(const char *reason)
{
	return json_pack("{s:b, s:s, s:s}", "kept", 0, "status", "not rewritten", "reason", reason);
}

/*
 * Rewrites the module of c->modules[mi] for the kernels ks[] that live in
 * it, writing the result to the substitute directory and to patched/.
 * Returns 1 when rewritten, 0 when not (each kernel's verification says
 * why), or a negative error.
 */
static int rewrite_module(struct profile_ctx *c, size_t mi, struct sc_kernel *ks, size_t nk,
			  const char *sc_dir, const struct softcache_device *dev)
{
	struct profile_module *m = &c->modules[mi];
	struct ptx_softcache_kernel *req = xcalloc(nk + 1, sizeof(*req));
	struct ptx_softcache_done *done = xcalloc(nk + 1, sizeof(*done));
	size_t *which = xcalloc(nk + 1, sizeof(*which)), nr = 0, i;
	struct strbuf out = STRBUF_INIT;
	char *reason = NULL, *path;
	int ret = 0;

	for (i = 0; i < nk; i++) {
		struct profile_kernel *k = &c->kernels[ks[i].index];

		if (k->module != m)
			continue;
		req[nr].function = k->name;
		req[nr].params = ks[i].params;
		req[nr].nr_params = ks[i].nr_params;
		req[nr].threads_per_block = block_threads(k);
		req[nr].dynamic_shared_bytes = k->disc.dynamic_shared;
		req[nr].shared_per_block_optin = dev->shared_per_block_optin;
		which[nr++] = i;
	}
	if (!nr)
		goto out;
	if (ptx_softcache_rewrite(m->pm, req, nr, &out, done, &reason)) {
		for (i = 0; i < nr; i++)
			set_verification(ks[which[i]].sc, refused(done[i].note ? done[i].note : reason));
		goto out;
	}
	path = capture_layout_subst_ptx(sc_dir, m->id);
	/* the substitute directory links the unpatched module: replace the
	 * link, or the capture's modules/<id>.ptx would become the rewrite */
	ret = write_file_atomic(path, out.buf, out.len);
	free(path);
	if (!ret) {
		path = capture_layout_softcache_ptx(c->dir, m->id);
		ret = write_file_atomic(path, out.buf, out.len);
		free(path);
	}
	if (ret)
		goto out;
	ret = 1;
	for (i = 0; i < nr; i++) {
		struct sc_kernel *s = &ks[which[i]];

		s->done = done[i];
		memset(&done[i], 0, sizeof(done[i]));
		s->rewritten = s->done.nr_loads > 0;
		if (!s->rewritten)
			set_verification(s->sc, refused(s->done.note ? s->done.note : "not rewritten"));
	}
out:
	for (i = 0; i < nr; i++)
		ptx_softcache_done_release(&done[i]);
	free(done);
	free(req);
	free(which);
	free(reason);
	strbuf_release(&out);
	return ret;
}

/* What the rewrite did, for capture.json (a new object). */
static json_t *rewrite_json(struct profile_ctx *c, const struct sc_kernel *s)
{
	json_t *params = json_array(), *v;
	char *ptx = capture_layout_softcache_ptx(NULL, c->kernels[s->index].module->id);
	size_t i;

	for (i = 0; i < s->done.nr_params; i++)
		json_array_append_new(params, json_integer(s->done.params[i]));
	v = json_pack("{s:o, s:I, s:I, s:I, s:s?, s:s}", "params", params,
		      "loads", (json_int_t)s->done.nr_loads, "loads_left", (json_int_t)s->done.nr_left,
		      "shared_bytes", (json_int_t)s->done.shared_bytes, "note", s->done.note,
		      "ptx", ptx);
	free(ptx);
	return v;
}

/* The verdict on a rewritten kernel, with what the rewrite did; notes a kept one. */
static void record_verdict(struct profile_ctx *c, const struct sc_kernel *s, json_t *ver, int kept,
			   unsigned rounds, json_t *program, json_t *output)
{
	struct profile_kernel *k = &c->kernels[s->index];

	json_object_set_new(ver, "status", json_string("verified"));
	json_object_set_new(ver, "repeat", json_integer(rounds));
	json_object_set_new(ver, "rewrite", rewrite_json(c, s));
	json_object_set(ver, "program", program);
	if (output)
		json_object_set(ver, "output", output);
	else
		json_object_set_new(ver, "output", json_pack("{s:s, s:s}", "status", "not run",
			"reason", "the rewrite was slower in-run, or within its noise: no output runs"));
	set_verification(s->sc, ver);
	if (kept) {
		char *ptx = capture_layout_softcache_ptx(NULL, k->module->id);

		profile_note(c, "kernel %s: the automatic software cache is kept: %.2fx faster (%s)",
			     k->name, ab_verdict_median(ver), ptx);
		free(ptx);
	}
}

/* --measure runs: alternating program runs; a rewrite slower in both of the
 * first two rounds is not timed further. */
static int time_in_runs(struct profile_ctx *c, struct sc_kernel *ks, size_t nk,
			const char *base_dir, const char *sc_dir, unsigned rounds)
{
	struct run_request base = { .subst_dir = base_dir, .timing = 1 };
	struct run_request adv = { .subst_dir = sc_dir, .timing = 1 };
	struct ab_result ab;
	json_t *program;
	size_t i;
	int ret;

	memset(&ab, 0, sizeof(ab));
	ret = profile_ab_runs_screened(c, "softcache", &base, &adv, rounds, &ab);
	if (ret) {
		ab_result_release(&ab);
		return ret;
	}
	program = ab_program_json(&ab);
	for (i = 0; i < nk; i++) {
		const struct sc_kernel *s = &ks[i];
		int kept = 0;
		json_t *ver;

		if (!s->rewritten)
			continue;
		ver = ab_verdict(&ab.base_ns[s->index * ab.rounds], &ab.adv_ns[s->index * ab.rounds],
				 ab.rounds, &ab, &kept);
		json_object_set_new(ver, "method", json_string("program runs, alternating"));
		record_verdict(c, s, ver, kept, ab.rounds, program, ab.output);
	}
	json_decref(program);
	ab_result_release(&ab);
	return 0;
}

/* The default: baseline and rewrite chosen launch by launch in one run
 * (A B B A, or replays of one launch), as verification (profile_ab_in_run). */
static int time_in_run(struct profile_ctx *c, struct sc_kernel *ks, size_t nk,
		       const char *base_dir, const char *sc_dir, unsigned rounds)
{
	struct in_run_ab ab;
	int *want = xcalloc(c->nr_kernels + 1, sizeof(*want));
	size_t i;
	int ret;

	memset(&ab, 0, sizeof(ab));
	for (i = 0; i < nk; i++)
		want[ks[i].index] = ks[i].rewritten;
	ab.step = "softcache";
	ab.progress = "software cache (in-run A/B)";
	ab.base_dir = base_dir;
	ab.adv_dir = sc_dir;
	ab.want = want;
	ab.screened = 1;
	ret = profile_ab_in_run(c, &ab);
	for (i = 0; !ret && i < nk; i++) {
		const struct sc_kernel *s = &ks[i];

		if (!s->rewritten)
			continue;
		record_verdict(c, s, json_incref(ab.verdicts[s->index]), ab.kept[s->index], rounds,
			       ab.program, ab.checked_output ? ab.out.output : NULL);
	}
	in_run_ab_release(&ab, c->nr_kernels);
	free(want);
	return ret;
}

int profile_softcache(struct profile_ctx *c)
{
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 5;
	struct sc_kernel *ks = xcalloc(c->nr_kernels + 1, sizeof(*ks));
	struct softcache_device dev;
	char *base_dir = NULL, *sc_dir = NULL;
	size_t nk = 0, i, rewritten = 0;
	int ret = 0;

	softcache_device_from_model(&dev, &c->dm);
	for (i = 0; i < c->nr_kernels; i++) {
		/* the kernel as `report` reads it: its ranking typed, through the capture's reader */
		const struct capture_kernel *ck = profile_kernel_read(c, &c->kernels[i]);
		const struct capture_software_cache *tsc = ck ? ck->software_cache : NULL;
		json_t *sc = tsc ? capture_section_json(tsc->source) : NULL;
		const char *why;
		int *params;
		size_t n;

		if (!sc)
			continue;
		n = selected_read_only(tsc, &params, &why);
		if (!n) {
			free(params);
			if (tsc->enabled == 1)
				set_verification(sc, refused(why));
			continue;
		}
		if (!c->kernels[i].module->pm) {
			free(params);
			set_verification(sc, refused("the kernel's module has no PTX"));
			continue;
		}
		ks[nk].index = i;
		ks[nk].sc = sc;
		ks[nk].params = params;
		ks[nk].nr_params = n;
		nk++;
	}
	if (!nk)
		goto out;
	if (!ptx_softcache_available()) {
		for (i = 0; i < nk; i++)
			set_verification(ks[i].sc, refused("not built with nvcc: cacheadvise has no "
							   "software-cache functions to add"));
		ret = profile_write_capture(c, "complete");
		goto out;
	}
	if (!profile_budget_allows(c, "the software-cache step", 2)) {
		for (i = 0; i < nk; i++)
			set_verification(ks[i].sc, refused("not timed: beyond the profile's budget "
							   "(--budget)"));
		ret = profile_write_capture(c, "complete");
		goto out;
	}
	base_dir = profile_write_substitutes(c, "softcache-baseline", NULL);
	sc_dir = profile_write_substitutes(c, "softcache", NULL);
	if (!base_dir || !sc_dir) {
		ret = CA_E_IO;
		goto out;
	}
	for (i = 0; i < c->nr_modules; i++) {
		if (!c->modules[i].pm)
			continue;
		ret = rewrite_module(c, i, ks, nk, sc_dir, &dev);
		if (ret < 0)
			goto out;
		rewritten += (size_t)ret;
		ret = 0;
	}
	if (!rewritten) {
		ret = profile_write_capture(c, "complete");
		goto out;
	}
	profile_message(c, "software cache: timing the rewritten kernels against the baseline");
	if (c->opt->measure_runs)
		ret = time_in_runs(c, ks, nk, base_dir, sc_dir, rounds);
	else
		ret = time_in_run(c, ks, nk, base_dir, sc_dir, rounds);
	if (ret)
		goto out;
	ret = profile_write_capture(c, "complete");
out:
	for (i = 0; i < nk; i++) {
		free(ks[i].params);
		ptx_softcache_done_release(&ks[i].done);
	}
	free(ks);
	free(base_dir);
	free(sc_dir);
	return ret;
}
