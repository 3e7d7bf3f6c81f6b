/*
 * `profile`'s source-patch verification (DESIGN.md "Keeping advice": the
 * speedup a report puts first is one that the offered way to apply the
 * advice delivers). source.patch writes the source plan (c->source_plan,
 * each load in a form its source can carry, solved as its own problem by
 * the analysis); the loads it rewrites form the patch's plan
 * (analysis/patch_plan.h), which a program rebuilt from the patched
 * sources runs, so it is timed like the advice, through PTX substitution
 * against the same baseline, without a rebuild: in one run by default
 * (profile_ab_in_run), in rounds of program runs with --measure runs. Where the patch's plan is
 * the advice nothing is timed again; where it rewrites nothing, the
 * rebuilt program is the original (1.00x). A kernel of the patch's plan
 * that is not faster leaves the source plan, as the advice's do.
 *
 * The result is capture.json's verification.source_patch:
 *   {"status": "same as the advice" | "verified" | "changes no load" | ...,
 *    "speedup": median program GPU-time speedup (or null),
 *    "rewritten": N, "left_out": [{"function", "ordinal", "action", "reason"}],
 *    "program": {...}, "kernels": [...] and "dropped": [names] when timed}
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ab_verdict.h"
#include "analysis/patch_plan.h"
#include "analysis/plan.h"
#include "analysis/plan_query.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "src/profile/internal.h"

/* The loads whose source-plan entry the patch delivers, and the ones it leaves out. */
static size_t delivered_loads(const struct report_input *in, struct patch_plan_load **out,
			      json_t *left_out)
{
	size_t i, j, n = 0;

	*out = NULL;
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];

		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];

			if (!l->patch_action)
				continue;
			if (!l->patch_changes || l->hint.status == SOURCE_HINT_REWRITTEN) {
				*out = xrealloc(*out, (n + 1) * sizeof(**out));
				(*out)[n++] = (struct patch_plan_load){ k->module, k->name, l->ordinal };
			} else {
				json_array_append_new(left_out, json_pack(
					"{s:s, s:i, s:s, s:s}", "function", k->name,
					"ordinal", (json_int_t)l->ordinal, "action", l->patch_action,
					"reason", l->hint.message ? l->hint.message : "not rewritten"));
			}
		}
	}
	return n;
}

/*
 * The patch's plan into pp: the source plan's entries the patch delivers,
 * and the loads it rewrites along with an advised one of their expression.
 * Returns 1 when it differs from the advice in a load that ran, else 0.
 */
static int patch_plan(const struct profile_ctx *c, const struct report_input *in,
		      struct plan *pp, json_t *left_out)
{
	struct patch_plan_load *delivered = NULL;
	size_t n = delivered_loads(in, &delivered, left_out), i, j;
	int differs;

	patch_plan_from(c->source_plan, delivered, n, pp);
	free(delivered);
	differs = !plan_same_loads(pp, c->plan, NULL);
	for (i = 0; i < in->nr_kernels; i++) {
		for (j = 0; j < in->kernels[i].nr_loads; j++) {
			const struct report_load *l = &in->kernels[i].loads[j];
			enum load_action a;
			enum l2_priority l2;

			if (l->hint.status != SOURCE_HINT_REWRITTEN || !l->hint.follows ||
			    load_form_parse(l->hint.follows, &a, &l2))
				continue;
			plan_set(pp, in->kernels[i].module, in->kernels[i].name, l->ordinal, a);
			plan_set_l2(pp, in->kernels[i].module, in->kernels[i].name, l->ordinal, l2);
			/* a copy that never ran in the monitor run changes nothing to time */
			if (!(l->access == 0))
				differs = 1;
		}
	}
	return differs;
}

/* Kernel k's verdict kj (named) into kernels; one timed and not kept
 * leaves the source plan, named in dropped. */
static void judge_kernel(struct profile_ctx *c, const struct profile_kernel *k, json_t *kj,
			 int kept, json_t *kernels, json_t *dropped)
{
	json_object_set_new(kj, "name", json_string(k->name));
	json_array_append(kernels, kj);
	/* a kernel the runs did not time is not judged: it stays */
	if (!kept && !isnan(ab_verdict_median(kj)) && plan_mentions(c->source_plan, k->name)) {
		plan_drop_function(c->source_plan, k->name);
		json_array_append_new(dropped, json_string(k->name));
	}
}

/* The verdict of each kernel the patch's plan changes (judge_kernel). */
static void judge_kernels(struct profile_ctx *c, const struct plan *pp, const struct ab_result *ab,
			  unsigned rounds, json_t *sp)
{
	json_t *kernels = json_array(), *dropped = json_array();
	size_t i;

	for (i = 0; i < c->nr_kernels; i++) {
		int kept;
		json_t *kj;

		if (!plan_mentions(pp, c->kernels[i].name))
			continue;
		kj = ab_verdict(&ab->base_ns[i * rounds], &ab->adv_ns[i * rounds], rounds, ab, &kept);
		judge_kernel(c, &c->kernels[i], kj, kept, kernels, dropped);
		json_decref(kj);
	}
	json_object_set_new(sp, "kernels", kernels);
	json_object_set_new(sp, "dropped", dropped);
}

/*
 * The patch's plan timed as the advice is by default (--measure launches):
 * in one run, A B B A or replays of one launch (profile_ab_in_run), with
 * the output pair only where a kernel holds in-run. The Triton sample's
 * patch plan took 10 program runs (49 s of a 111 s profile) timed in
 * rounds. Fills sp like the rounds do; 0 or the run's error.
 */
static int time_in_run(struct profile_ctx *c, const struct plan *pp, const char *base_dir,
		       const char *plan_dir, json_t *sp)
{
	struct in_run_ab ab;
	int *want = xcalloc(c->nr_kernels + 1, sizeof(*want));
	json_t *kernels = json_array(), *dropped = json_array();
	size_t i;
	int ret;

	memset(&ab, 0, sizeof(ab));
	for (i = 0; i < c->nr_kernels; i++)
		want[i] = plan_mentions(pp, c->kernels[i].name);
	ab.step = "verify-patch";
	ab.progress = "verify the source patch's plan (in-run A/B)";
	ab.want = want;
	ab.base_dir = base_dir;
	ab.adv_dir = plan_dir;
	ret = profile_ab_in_run(c, &ab);
	if (!ret) {
		double s = ab_program_gpu_speedup(ab.program);

		for (i = 0; i < c->nr_kernels; i++)
			if (ab.verdicts[i])
				judge_kernel(c, &c->kernels[i], ab.verdicts[i], ab.kept[i], kernels,
					     dropped);
		json_object_set_new(sp, "status", json_string("verified"));
		json_object_set_new(sp, "speedup", isnan(s) ? json_null() : json_real(s));
		json_object_set(sp, "program", ab.program);
		json_object_set_new(sp, "method", json_string("in-run"));
		json_object_set_new(sp, "repeat", json_integer(c->opt->repeat ? c->opt->repeat : 1));
	}
	json_object_set_new(sp, "kernels", kernels);
	json_object_set_new(sp, "dropped", dropped);
	in_run_ab_release(&ab, c->nr_kernels);
	free(want);
	return ret;
}

int profile_verify_patch(struct profile_ctx *c)
{
	struct report_input_options iopt = { NULL, NULL };
	struct report_input in;
	struct plan pp;
	struct ab_result ab;
	struct run_request base = { .timing = 1 }, adv = { .timing = 1 };
	json_t *ver = c->verification, *sp, *left_out;
	char *base_dir = NULL, *plan_dir = NULL;
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 1;
	size_t i, j, rewritten = 0;
	int differs, in_run, ret = 0;

	if (!json_is_object(ver) || !plan_has_loads(c->source_plan))
		return 0;   /* nothing verified, or nothing to deliver */
	memset(&ab, 0, sizeof(ab));
	plan_init(&pp);
	ret = report_input_init_from(&in, c->dir, c->capture, &c->analysis, c->plan,
				     c->source_plan, &iopt);
	if (ret)
		return ret;
	left_out = json_array();
	differs = patch_plan(c, &in, &pp, left_out);
	for (i = 0; i < in.nr_kernels; i++)
		for (j = 0; j < in.kernels[i].nr_loads; j++)
			rewritten += in.kernels[i].loads[j].hint.status == SOURCE_HINT_REWRITTEN;
	sp = json_pack("{s:i, s:o}", "rewritten", (json_int_t)rewritten, "left_out", left_out);
	if (!differs) {
		/* the advice's program speedup as verification recorded it */
		double s = in.model.has_verification ? in.model.verification.gpu_speedup.median : NAN;

		json_object_set_new(sp, "status", json_string("same as the advice"));
		json_object_set_new(sp, "speedup", isnan(s) ? json_null() : json_real(s));
		goto done;
	}
	if (!rewritten) {
		/* The rebuilt program is the program: nothing to time. */
		json_object_set_new(sp, "status", json_string("changes no load"));
		json_object_set_new(sp, "speedup", json_real(1.0));
		goto done;
	}
	in_run = !c->opt->measure_runs && strcmp(c->opt->bypass_form, "cg");
	/* in-run: the timing run and at most the output pair */
	if (!profile_budget_allows(c, "the source patch's own timing", in_run ? 3 : 2 * rounds)) {
		json_object_set_new(sp, "status", json_string("not timed: beyond the budget"));
		json_object_set_new(sp, "speedup", json_null());
		goto done;
	}
	base_dir = profile_write_substitutes(c, "verify-patch-baseline", NULL);
	plan_dir = profile_write_substitutes(c, "verify-patch", &pp);
	if (!base_dir || !plan_dir) {
		ret = CA_E_IO;
		json_decref(sp);
		goto out;
	}
	base.subst_dir = base_dir;
	adv.subst_dir = plan_dir;
	if (in_run)
		ret = time_in_run(c, &pp, base_dir, plan_dir, sp);
	else
		ret = profile_ab_runs(c, "verify-patch", &base, &adv, rounds, &ab);
	if (ret) {
		/* The advice stands verified; say the patch could not be timed. */
		json_object_set_new(sp, "status", json_string("not timed: a run failed"));
		json_object_set_new(sp, "speedup", json_null());
		profile_note(c, "the source patch's plan could not be timed: %s", error_message());
		error_clear();
		ret = 0;
		goto done;
	}
	if (!in_run) {   /* time_in_run filled sp */
		json_t *prog = ab_program_json(&ab);
		double s = ab_program_gpu_speedup(prog);

		json_object_set_new(sp, "status", json_string("verified"));
		json_object_set_new(sp, "speedup", isnan(s) ? json_null() : json_real(s));
		json_object_set_new(sp, "program", prog);
		judge_kernels(c, &pp, &ab, rounds, sp);
		json_object_set_new(sp, "repeat", json_integer(rounds));
	}
done:
	json_object_set_new(ver, "source_patch", sp);
	ret = profile_write_capture(c, "complete");
out:
	ab_result_release(&ab);
	free(base_dir);
	free(plan_dir);
	plan_release(&pp);
	report_input_release(&in);
	return ret;
}
