/*
 * Verification inside one run (--measure launches, the default; issue 15,
 * docs/cmd-profile.md "Verification"). One program run loads the baseline
 * and the advice of every advised kernel from PTX (both JIT-compiled the
 * same way) and a launch plan chooses per launch: A B B A over the run for
 * kernels launched often enough, and for the others, timed replays of one
 * launch (memory restored) in alternating order. The output check is one
 * baseline run and one advice run of the whole program. A kernel whose
 * launches differ too much to be compared in-run (more than MAX_NOISE
 * baseline against baseline), or that could not be timed in-run, is timed
 * in program runs (--repeat rounds), and the capture says so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ab_verdict.h"
#include "analysis/launch_sampling.h"
#include "analysis/plan.h"
#include "analysis/plan_query.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "src/profile/internal.h"

/* Launches below which a kernel is timed by replays of one launch. */
#define MIN_ABBA_LAUNCHES 12
/* Baseline-against-baseline spread over which in-run timing is not trusted. */
#define MAX_NOISE 0.05

static json_t *kernel_plan(struct profile_ctx *c, struct profile_kernel *k, const char *plan_dir)
{
	char *adv = capture_layout_subst_ptx(plan_dir, k->module->id), *why = NULL;
	json_t *kj, *written = json_array();
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 5;

	kj = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:s}", "name", k->name, "versions",
		       "label", "base", "ptx", k->module->path, "label", "advice", "ptx", adv,
		       "pattern", "abba");
	free(adv);
	if (k->disc.launches < MIN_ABBA_LAUNCHES) {
		uint64_t ord = 0;

		launch_sample_ordinals(k->disc.launches, 1, &ord);
		/* the versions are modules of our own */
		if (profile_replay_written(k->fn, 1, written, &why))
			json_object_set_new(kj, "replay_rounds", json_pack("{s:[I], s:i}", "ordinals",
					    (json_int_t)ord, "rounds", (int)rounds));
		free(why);
	}
	json_object_set_new(kj, "written_params", written);
	return kj;
}

/* The times of version label in arr (label -> array of ns), as doubles. */
static double *times(json_t *arr_by_label, const char *label, size_t *n)
{
	json_t *arr = json_object_get(arr_by_label, label), *x;
	double *v = xcalloc(json_array_size(arr) + 1, sizeof(*v));
	size_t i;

	*n = 0;
	json_array_foreach(arr, i, x)
		v[(*n)++] = json_number_value(x);
	return v;
}

/* The in-run verdict of one kernel, or NULL when it must be timed in runs. */
static json_t *in_run_verdict(struct profile_ctx *c, struct event_kernel *ek,
			      const struct ab_result *out, int *kept, const char **why_runs)
{
	size_t nb, na;
	double *b, *a;
	json_t *v = NULL;
	int noisy = 0;

	b = times(ek->replay_ns, "base", &nb);
	a = times(ek->replay_ns, "advice", &na);
	if (nb >= 2 && na >= 2) {
		unsigned rounds = (unsigned)(nb < na ? nb : na);
		v = ab_verdict_judge(b, a, rounds, out->outputs_equal, out->reject_reason, kept);
		json_object_set_new(v, "method", json_string("in-run, replays of one launch"));
	}
	free(b);
	free(a);
	if (v)
		return v;
	b = times(ek->version_ns, "base", &nb);
	a = times(ek->version_ns, "advice", &na);
	if (nb / 2 >= 3 && na / 2 >= 3) {
		v = ab_verdict_abba(b, nb, a, na, out->outputs_equal, out->reject_reason, MAX_NOISE,
				    kept, &noisy);
		if (noisy) {
			json_decref(v);
			v = NULL;
			*why_runs = "its launches differ too much to be compared in-run";
		}
	} else {
		*why_runs = "too few of its launches were timed in-run";
	}
	(void)c;
	free(b);
	free(a);
	return v;
}

/* Whether the in-run timing would keep any advised kernel were the outputs
 * equal, or leaves one to program runs: then the output runs are needed. */
static int any_kept_in_run(struct profile_ctx *c, struct run_events *ev)
{
	struct ab_result equal;
	size_t i;
	int any = 0;

	memset(&equal, 0, sizeof(equal));
	equal.outputs_equal = 1;
	for (i = 0; i < c->nr_kernels && !any; i++) {
		const char *why = NULL;
		int kept = 0;
		json_t *v;

		if (!plan_mentions(c->plan, c->kernels[i].name))
			continue;
		v = in_run_verdict(c, run_events_kernel(ev, c->kernels[i].name), &equal, &kept, &why);
		any = !v || kept;
		json_decref(v);
	}
	return any;
}

int profile_verify_launches(struct profile_ctx *c)
{
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 1, run;
	char *base_dir = NULL, *plan_dir = NULL, *plan_path = NULL;
	struct run_request base = { .timing = 1 }, adv = { .timing = 1 }, inrun = { .timing = 1 };
	struct run_events ev;
	struct run_result res;
	struct ab_result out, runs_ab;
	json_t *lp, *lpk = json_array(), *ver, *kernels = json_array(), *verdicts;
	int ret, need_runs = 0, checked_output = 0;
	size_t i;

	memset(&out, 0, sizeof(out));
	memset(&runs_ab, 0, sizeof(runs_ab));
	run_events_init(&ev);
	verdicts = json_object();
	base_dir = profile_write_substitutes(c, "verify-baseline", NULL);
	plan_dir = profile_write_substitutes(c, "verify-plan", c->plan);
	if (!base_dir || !plan_dir) {
		ret = CA_E_IO;
		goto out;
	}
	for (i = 0; i < c->nr_kernels; i++)
		if (plan_mentions(c->plan, c->kernels[i].name) && c->kernels[i].module->path)
			json_array_append_new(lpk, kernel_plan(c, &c->kernels[i], plan_dir));
	lp = json_pack("{s:s, s:I, s:o}", "schema", "cacheadvise.launch_plan/1",
		       "replay_max_bytes", (json_int_t)(8ull << 30), "kernels", lpk);
	lpk = NULL;
	run = c->run_index;
	plan_path = capture_layout_run_launch_plan(c->dir, run);
	ret = json_file_write(plan_path, lp);
	json_decref(lp);
	if (ret)
		goto out;
	/* the program's own launches run the baseline unless the plan says otherwise */
	inrun.subst_dir = base_dir;
	inrun.launch_plan = plan_path;
	c->runs_planned = c->runs_done + 3;
	profile_progress(c, "verify (in-run A/B)");
	ret = profile_run_program(c, "verify-in-run", &inrun, &ev, &res, NULL);
	profile_progress(c, "verify (in-run A/B)");
	if (!ret && res.status == RUN_INTERRUPTED)
		ret = error_set(CA_E_INTERRUPTED, "interrupted during run %u (verify in-run)", run);
	if (ret)
		goto out;
	if (res.status != RUN_OK)
		profile_note(c, "the in-run verification run %u failed: its kernels are timed in "
			     "program runs", run);

	/*
	 * The output check, one baseline and one advice run of the whole
	 * program, only where it can matter: when the in-run timing keeps a
	 * kernel (judged as if the outputs were equal) or a kernel must be
	 * timed in program runs. Advice that is slower in-run everywhere is
	 * rejected without them.
	 */
	base.subst_dir = base_dir;
	adv.subst_dir = plan_dir;
	if (res.status != RUN_OK || any_kept_in_run(c, &ev)) {
		ret = profile_ab_runs(c, "verify", &base, &adv, 1, &out);
		if (ret)
			goto out;
		checked_output = 1;
	} else {
		ab_result_init(&out, c->nr_kernels, 0);
	}
	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		const char *why_runs = "the in-run verification run failed";
		int kept = 0;
		json_t *v = NULL;

		if (!plan_mentions(c->plan, k->name))
			continue;
		if (res.status == RUN_OK)
			v = in_run_verdict(c, run_events_kernel(&ev, k->name), &out, &kept, &why_runs);
		if (!v) {
			need_runs = 1;
			profile_note(c, "kernel %s is verified in program runs: %s", k->name, why_runs);
			continue;
		}
		json_object_set_new(verdicts, k->name, v);
	}
	if (need_runs) {
		ret = profile_ab_runs(c, "verify", &base, &adv, rounds, &runs_ab);
		if (ret)
			goto out;
	}
	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		json_t *kj = json_incref(json_object_get(verdicts, k->name));
		int kept;

		if (!plan_mentions(c->plan, k->name))
			continue;
		if (kj) {
			kept = json_is_true(json_object_get(kj, "kept"));
		} else {
			kj = ab_verdict(&runs_ab.base_ns[i * rounds], &runs_ab.adv_ns[i * rounds],
					rounds, &runs_ab, &kept);
			json_object_set_new(kj, "method", json_string("program runs, alternating"));
		}
		json_object_set_new(kj, "name", json_string(k->name));
		json_array_append_new(kernels, json_incref(kj));
		json_object_set(k->json, "verification", kj);
		json_decref(kj);
		if (!kept)
			plan_drop_function(c->plan, k->name);
	}
	ver = json_pack("{s:s, s:i, s:s}", "method", "in-run", "repeat", (int)rounds, "order",
			"A B B A launches in one run; replays of one launch for kernels launched "
			"fewer than 12 times; one baseline and one advice run for the output");
	if (checked_output || need_runs) {
		json_object_set_new(ver, "output_identical", json_boolean(out.outputs_equal));
		json_object_set_new(ver, "baseline_output_stable", json_boolean(out.baseline_stable));
		/* the output check (analysis/output_check.h) */
		json_object_set(ver, "output", need_runs && !checked_output ? runs_ab.output : out.output);
	} else {
		json_object_set_new(ver, "output_check", json_string(
			"not run: every advised kernel was slower in-run, or within its noise"));
	}
	if (c->opt->compare_file)
		json_object_set_new(ver, "compare_file", json_string(c->opt->compare_file));
	json_object_set_new(ver, "kernels", kernels);
	kernels = NULL;
	json_object_set_new(ver, "program", ab_program_json(need_runs ? &runs_ab : &out));
	json_object_set_new(ver, "kept", json_boolean(plan_has_loads(c->plan)));
	json_object_set_new(ver, "status", json_string("verified"));
	json_object_set_new(c->capture, "verification", ver);
	ret = profile_write_capture(c, "complete");
out:
	json_decref(verdicts);
	json_decref(kernels);
	json_decref(lpk);
	run_events_release(&ev);
	ab_result_release(&out);
	ab_result_release(&runs_ab);
	free(base_dir);
	free(plan_dir);
	free(plan_path);
	return ret;
}
