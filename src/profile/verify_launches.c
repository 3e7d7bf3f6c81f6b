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

/*
 * Launches (of one process) below which a kernel is timed by replays of one
 * launch: A B B A needs four groups of four launches, the first of which
 * ab_verdict_abba() leaves out (warm-up), for the three it judges.
 */
#define MIN_ABBA_LAUNCHES 16
/* Baseline-against-baseline spread over which in-run timing is not trusted. */
#define MAX_NOISE 0.05

static json_t *kernel_plan(struct profile_ctx *c, struct profile_kernel *k, const char *adv_dir)
{
	char *adv = capture_layout_subst_ptx(adv_dir, k->module->id), *why = NULL;
	json_t *kj, *written = json_array();
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 5;

	kj = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:s}", "name", k->name, "versions",
		       "label", "base", "ptx", k->module->path, "label", "advice", "ptx", adv,
		       "pattern", "abba");
	free(adv);
	/* a launch plan counts one process's launches (each rank of a job times its own) */
	if (k->launches_per_process < MIN_ABBA_LAUNCHES) {
		uint64_t ord = 0;

		launch_sample_ordinals(k->launches_per_process, 1, &ord);
		/* the versions are modules of our own */
		if (profile_replay_written(k->fn, 1, written, &why))
			json_object_set_new(kj, "replay_rounds", json_pack("{s:[I], s:i}", "ordinals",
					    (json_int_t)ord, "rounds", (int)rounds));
		free(why);
	}
	json_object_set_new(kj, "written_params", written);
	return kj;
}

/* The in-run verdict of one kernel, or NULL when it must be timed in runs. */
static json_t *in_run_verdict(struct event_kernel *ek, const struct ab_result *out, int *kept,
			      const char **why_runs)
{
	size_t nb, na;
	double *b, *a;
	json_t *v = NULL;
	int noisy = 0;

	b = event_kernel_times(ek, EVENT_REPLAY_NS, "base", &nb);
	a = event_kernel_times(ek, EVENT_REPLAY_NS, "advice", &na);
	if (nb >= 2 && na >= 2) {
		unsigned rounds = (unsigned)(nb < na ? nb : na);
		v = ab_verdict_judge(b, a, rounds, out->outputs_equal, out->reject_reason, kept);
		json_object_set_new(v, "method", json_string("in-run, replays of one launch"));
	}
	free(b);
	free(a);
	if (v)
		return v;
	b = event_kernel_times(ek, EVENT_VERSION_NS, "base", &nb);
	a = event_kernel_times(ek, EVENT_VERSION_NS, "advice", &na);
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
	free(b);
	free(a);
	return v;
}

/*
 * A job's ranks (issue 29): the kernel's in-run verdict on each measured
 * rank's own launches, on its own GPU. The advice holds only where it holds
 * on each: a rank where it is slower, or where it could not be timed,
 * rejects it (*kept becomes 0 and the verdict's reason names the rank).
 * Adds "ranks" to verdict; nothing outside a job.
 */
static void rank_verdicts(json_t *verdict, const char *kernel, struct run_events *ev,
			  const struct ab_result *out, int *kept)
{
	struct ab_rank_verdicts rv = { NULL, NULL };
	size_t r;

	if (ev->nr_rank_events < 2 || !verdict)
		return;
	for (r = 0; r < ev->nr_rank_events; r++) {
		struct run_events *rev = ev->rank_events[r].ev;
		struct event_kernel *rek = run_events_kernel(rev, kernel);
		const char *why_runs = NULL;
		int rank_kept = 0;
		json_t *v = rek->launches ? in_run_verdict(rek, out, &rank_kept, &why_runs) : NULL;

		ab_rank_verdict_add(&rv, ev->rank_events[r].rank, rev->gpu, v, rank_kept, why_runs,
				     rek->launches > 0);
	}
	ab_rank_verdicts_apply(&rv, verdict, kept);
}

/* Whether the in-run timing would keep any compared kernel were the outputs
 * equal, or leaves one to program runs: then the output runs are needed. */
static int any_kept_in_run(struct profile_ctx *c, const struct in_run_ab *ab, struct run_events *ev)
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

		if (!ab->want[i])
			continue;
		v = in_run_verdict(run_events_kernel(ev, c->kernels[i].name), &equal, &kept, &why);
		any = !v || kept;
		json_decref(v);
	}
	return any;
}

int profile_ab_in_run(struct profile_ctx *c, struct in_run_ab *ab)
{
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 1, run;
	char *plan_path = NULL, label[48];
	struct run_request base = { .timing = 1 }, adv = { .timing = 1 }, inrun = { .timing = 1 };
	struct run_events ev;
	struct run_result res;
	struct ab_result runs_ab;
	json_t *lp, *lpk = json_array();
	int ret, need_runs = 0;
	size_t i;

	memset(&runs_ab, 0, sizeof(runs_ab));
	memset(&ab->out, 0, sizeof(ab->out));
	ab->verdicts = xcalloc(c->nr_kernels + 1, sizeof(*ab->verdicts));
	ab->kept = xcalloc(c->nr_kernels + 1, sizeof(*ab->kept));
	ab->checked_output = 0;
	run_events_init(&ev);
	for (i = 0; i < c->nr_kernels; i++)
		if (ab->want[i] && c->kernels[i].module->path)
			json_array_append_new(lpk, kernel_plan(c, &c->kernels[i], ab->adv_dir));
	lp = json_pack("{s:s, s:I, s:o}", "schema", "cacheadvise.launch_plan/1",
		       "replay_max_bytes", (json_int_t)(8ull << 30), "kernels", lpk);
	run = c->run_index;
	plan_path = capture_layout_run_launch_plan(c->dir, run);
	ret = json_file_write(plan_path, lp);
	json_decref(lp);
	if (ret)
		goto out;
	/* the program's own launches run the baseline unless the plan says otherwise */
	inrun.subst_dir = ab->base_dir;
	inrun.launch_plan = plan_path;
	c->runs_planned = c->runs_done + 3;
	snprintf(label, sizeof(label), "%s-in-run", ab->step);
	profile_progress(c, ab->progress);
	ret = profile_run_program(c, label, &inrun, &ev, &res, NULL);
	profile_progress(c, ab->progress);
	if (!ret && res.status == RUN_INTERRUPTED)
		ret = error_set(CA_E_INTERRUPTED, "interrupted during run %u (%s)", run, label);
	if (ret)
		goto out;
	if (res.status != RUN_OK)
		profile_note(c, "the in-run run %u (%s) failed: its kernels are timed in program runs",
			     run, ab->step);

	/*
	 * The output check, one baseline and one advice run of the whole
	 * program, only where it can matter: when the in-run timing keeps a
	 * kernel (judged as if the outputs were equal) or a kernel must be
	 * timed in program runs. Advice that is slower in-run everywhere is
	 * rejected without them.
	 */
	base.subst_dir = ab->base_dir;
	adv.subst_dir = ab->adv_dir;
	if (res.status != RUN_OK || any_kept_in_run(c, ab, &ev)) {
		ret = profile_ab_runs(c, ab->step, &base, &adv, 1, &ab->out);
		if (ret)
			goto out;
		ab->checked_output = 1;
	} else {
		ab_result_init(&ab->out, c->nr_kernels, 0);
	}
	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		const char *why_runs = "the in-run run failed";

		if (!ab->want[i])
			continue;
		if (res.status == RUN_OK) {
			ab->verdicts[i] = in_run_verdict(run_events_kernel(&ev, k->name), &ab->out,
							 &ab->kept[i], &why_runs);
			rank_verdicts(ab->verdicts[i], k->name, &ev, &ab->out, &ab->kept[i]);
		}
		if (!ab->verdicts[i]) {
			need_runs = 1;
			profile_note(c, "kernel %s is timed in program runs (%s): %s", k->name, ab->step,
				     why_runs);
		}
	}
	if (need_runs) {
		ret = ab->screened ? profile_ab_runs_screened(c, ab->step, &base, &adv, rounds, &runs_ab) :
			profile_ab_runs(c, ab->step, &base, &adv, rounds, &runs_ab);
		if (ret)
			goto out;
		for (i = 0; i < c->nr_kernels; i++) {
			if (!ab->want[i] || ab->verdicts[i])
				continue;
			ab->verdicts[i] = ab_verdict(&runs_ab.base_ns[i * runs_ab.rounds],
						     &runs_ab.adv_ns[i * runs_ab.rounds], runs_ab.rounds,
						     &runs_ab, &ab->kept[i]);
			json_object_set_new(ab->verdicts[i], "method",
					    json_string("program runs, alternating"));
		}
		if (!ab->checked_output) {
			/* the rounds' output check stands for the output runs */
			ab_result_release(&ab->out);
			ab->out = runs_ab;
			memset(&runs_ab, 0, sizeof(runs_ab));
			ab->checked_output = 1;
		}
	}
	/* the timing runs, when there were any beside the output pair */
	ab->program = ab_program_json(runs_ab.rounds ? &runs_ab : &ab->out);
out:
	run_events_release(&ev);
	ab_result_release(&runs_ab);
	free(plan_path);
	return ret;
}

void in_run_ab_release(struct in_run_ab *ab, size_t nr_kernels)
{
	size_t i;

	for (i = 0; ab->verdicts && i < nr_kernels; i++)
		json_decref(ab->verdicts[i]);
	free(ab->verdicts);
	free(ab->kept);
	json_decref(ab->program);
	ab_result_release(&ab->out);
	memset(ab, 0, sizeof(*ab));
}

int profile_verify_launches(struct profile_ctx *c)
{
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 1;
	struct in_run_ab ab;
	int *want = xcalloc(c->nr_kernels + 1, sizeof(*want));
	char *base_dir, *adv_dir;
	json_t *ver, *kernels = json_array();
	int ret;
	size_t i;

	memset(&ab, 0, sizeof(ab));
	for (i = 0; i < c->nr_kernels; i++)
		want[i] = plan_mentions(c->plan, c->kernels[i].name);
	ab.step = "verify";
	ab.progress = "verify (in-run A/B)";
	ab.want = want;
	ab.base_dir = base_dir = profile_write_substitutes(c, "verify-baseline", NULL);
	ab.adv_dir = adv_dir = profile_write_substitutes(c, "verify-plan", c->plan);
	if (!base_dir || !adv_dir) {
		ret = CA_E_IO;
		goto out;
	}
	ret = profile_ab_in_run(c, &ab);
	if (ret)
		goto out;
	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		json_t *kj = ab.verdicts[i];

		if (!kj)
			continue;   /* not in the plan */
		json_object_set_new(kj, "name", json_string(k->name));
		json_array_append(kernels, kj);
		json_object_set(k->json, "verification", kj);
		if (!ab.kept[i])
			profile_drop_advice(c, k->name);
	}
	ver = json_pack("{s:s, s:i, s:s}", "method", "in-run", "repeat", (int)rounds, "order",
			"A B B A launches in one run; replays of one launch for kernels launched "
			"fewer than 16 times; one baseline and one advice run for the output");
	if (ab.checked_output) {
		json_object_set_new(ver, "output_identical", json_boolean(ab.out.outputs_equal));
		json_object_set_new(ver, "baseline_output_stable", json_boolean(ab.out.baseline_stable));
		/* the output check (analysis/output_check.h) */
		json_object_set(ver, "output", ab.out.output);
	} else {
		json_object_set_new(ver, "output_check", json_string(
			"not run: every advised kernel was slower in-run, or within its noise"));
	}
	if (c->opt->compare_file)
		json_object_set_new(ver, "compare_file", json_string(c->opt->compare_file));
	json_object_set_new(ver, "kernels", kernels);
	kernels = NULL;
	json_object_set(ver, "program", ab.program);
	json_object_set_new(ver, "kept", json_boolean(plan_has_loads(c->plan)));
	json_object_set_new(ver, "status", json_string("verified"));
	profile_set_verification(c, ver);
	ret = profile_write_capture(c, "complete");
out:
	json_decref(kernels);
	free(base_dir);
	free(adv_dir);
	in_run_ab_release(&ab, c->nr_kernels);
	free(want);
	return ret;
}
