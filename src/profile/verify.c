/*
 * `profile`'s verify step (DESIGN.md "Keeping advice"): the program runs
 * with the plan, alternating with the baseline (collectors/run_request.h
 * ab_pairs_run); each kernel's advice is kept or dropped by ab_verdict
 * (analysis/ab_verdict.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ab_verdict.h"
#include "analysis/plan.h"
#include "analysis/plan_query.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "src/profile/internal.h"

/*
 * The sector model counts traffic, not time: where the capture's
 * all-bypassed run was clearly faster than the verified advice, say so, so
 * the reader can time that plan (the oracle does it for small kernels).
 */
static void note_faster_bypass(struct profile_ctx *c, const struct profile_kernel *k, json_t *verdict)
{
	const struct capture_counters *b = profile_counters(k, "baseline");
	const struct capture_counters *y = profile_counters(k, "all_bypassed");
	double base = b ? b->duration_ns : NAN, byp = y ? y->duration_ns : NAN;
	double adv = ab_verdict_median(verdict), noise = ab_verdict_noise(verdict);
	char *subst;

	/* in-run counters time replays under the profiler: not comparable */
	if (!y || y->sampled_launches >= 0 || y->run < 0)
		return;
	if (isnan(noise))
		noise = 0;
	if (!(base > 0) || !(byp > 0) || !(adv > 0) ||
	    base / byp <= adv * (1.0 + 2.0 * noise + 0.01))
		return;
	subst = capture_layout_run_subst_dir(NULL, (unsigned)y->run);
	profile_note(c, "kernel %s: the capture timed every measured load bypassed at %.3fx the baseline, "
	     "faster than the verified advice (%.3fx): the traffic model saves L2 sectors where the "
	     "clock prefers fewer L1 allocations; its PTX is in %s/ (time it with "
	     "CACHEADVISE_SUBST, see docs/injection.md), or profile with --oracle", k->name,
	     base / byp, adv, subst);
	free(subst);
}

/* Whether any of a rank's rounds timed kernel i. */
static int rank_timed(const struct ab_rank_times *t, size_t i, unsigned rounds)
{
	unsigned r;

	for (r = 0; r < rounds; r++)
		if (!isnan(t->base_ns[i * rounds + r]) || !isnan(t->adv_ns[i * rounds + r]))
			return 1;
	return 0;
}

/* A job's ranks (issue 29): kernel i's verdict on each rank's own runs. */
static void rank_verdicts(const struct ab_result *ab, size_t i, unsigned rounds, json_t *verdict,
			  int *kept)
{
	struct ab_rank_verdicts rv = { NULL, NULL };
	size_t t;

	if (ab->nr_ranks < 2)
		return;
	for (t = 0; t < ab->nr_ranks; t++) {
		const struct ab_rank_times *rt = &ab->ranks[t];
		int rank_kept = 0, timed = rank_timed(rt, i, rounds);
		json_t *v = timed ? ab_verdict(&rt->base_ns[i * rounds], &rt->adv_ns[i * rounds],
					       rounds, ab, &rank_kept) : NULL;

		ab_rank_verdict_add(&rv, rt->rank, rt->gpu, v, rank_kept, NULL, timed);
	}
	ab_rank_verdicts_apply(&rv, verdict, kept);
}

int profile_verify(struct profile_ctx *c)
{
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 1;
	size_t i;
	char *base_dir = NULL, *plan_dir = NULL;
	struct run_request base = { .timing = 1 }, adv = { .timing = 1 };
	struct ab_result ab;
	json_t *ver, *kernels;
	int ret = 0;

	memset(&ab, 0, sizeof(ab));
	if (!plan_has_loads(c->plan)) {
		profile_set_verification(c, json_pack("{s:s, s:b}", "status",
					 "nothing to verify: the plan changes no load", "kept", 0));
		return 0;
	}
	if (!c->opt->measure_runs && strcmp(c->opt->bypass_form, "cg"))
		return profile_verify_launches(c);
	base_dir = profile_write_substitutes(c, "verify-baseline", NULL);
	plan_dir = profile_write_substitutes(c, "verify-plan", c->plan);
	if (!base_dir || !plan_dir) {
		ret = CA_E_IO;
		goto out;
	}
	/* The advice runs are the baseline runs with the plan's PTX instead. */
	base.subst_dir = base_dir;
	adv.subst_dir = plan_dir;
	ret = profile_ab_runs(c, "verify", &base, &adv, rounds, &ab);
	if (ret)
		goto out;
	ver = json_object();
	kernels = json_array();
	json_object_set_new(ver, "repeat", json_integer(rounds));
	json_object_set_new(ver, "order", json_string("baseline, advice, alternating"));
	/* output_identical and baseline_output_stable: before "output" was */
	json_object_set_new(ver, "output_identical", json_boolean(
		output_check_status(ab.output) && !strcmp(output_check_status(ab.output), "identical")));
	json_object_set_new(ver, "baseline_output_stable", json_boolean(ab.baseline_stable));
	json_object_set(ver, "output", ab.output);
	if (c->opt->compare_file)
		json_object_set_new(ver, "compare_file", json_string(c->opt->compare_file));
	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		int kept;
		json_t *kj;

		if (!plan_mentions(c->plan, k->name))
			continue;
		kj = ab_verdict(&ab.base_ns[i * rounds], &ab.adv_ns[i * rounds], rounds, &ab, &kept);
		rank_verdicts(&ab, i, rounds, kj, &kept);
		json_object_set_new(kj, "name", json_string(k->name));
		json_array_append_new(kernels, kj);
		json_object_set(k->json, "verification", kj);
		note_faster_bypass(c, k, kj);
		if (!kept)
			profile_drop_advice(c, k->name);
	}
	json_object_set_new(ver, "kernels", kernels);
	json_object_set_new(ver, "program", ab_program_json(&ab));
	json_object_set_new(ver, "kept", json_boolean(plan_has_loads(c->plan)));
	json_object_set_new(ver, "status", json_string("verified"));
	profile_set_verification(c, ver);
	ret = profile_write_capture(c, "complete");
out:
	ab_result_release(&ab);
	free(base_dir);
	free(plan_dir);
	return ret;
}

void profile_drop_advice(struct profile_ctx *c, const char *kernel)
{
	if (c->source_plan && plan_same_loads(c->plan, c->source_plan, kernel))
		plan_drop_function(c->source_plan, kernel);
	plan_drop_function(c->plan, kernel);
}

void profile_note_advised(struct profile_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		k->advised = plan_cached_mask(c->plan, k->module->id, k->name, k->vk.measured,
					      k->vk.nr_measured);
	}
}
