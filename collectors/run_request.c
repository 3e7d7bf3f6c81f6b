#define _GNU_SOURCE
#include "collectors/run_request.h"

#include "collectors/launcher.h"

#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/xalloc.h"

/* The injection library's settings (docs/injection.md). */
#define ENV_INJECTION "CUDA_INJECTION64_PATH"
#define ENV_OUT "CACHEADVISE_OUT"
#define ENV_SUBST "CACHEADVISE_SUBST"
#define ENV_L2_WINDOWS "CACHEADVISE_L2_WINDOWS"
#define ENV_SAVE_MODULES "CACHEADVISE_SAVE_MODULES"
#define ENV_METRICS "CACHEADVISE_METRICS"
#define ENV_METRIC_LIST "CACHEADVISE_METRIC_LIST"
#define ENV_TIMING "CACHEADVISE_TIMING"
#define ENV_MONITOR "CACHEADVISE_MONITOR"
#define ENV_LAUNCH_PLAN "CACHEADVISE_LAUNCH_PLAN"
#define ENV_RANKS "CACHEADVISE_RANKS"
#define ENV_VISIBLE_DEVICES "CUDA_VISIBLE_DEVICES"

char **run_request_env(const struct run_request *req)
{
	char **env = xcalloc(16, sizeof(*env));
	size_t n = 0;

	if (req->inject_path)
		env[n++] = xasprintf(ENV_INJECTION "=%s", req->inject_path);
	if (req->events_dir)
		env[n++] = xasprintf(ENV_OUT "=%s", req->events_dir);
	if (req->save_modules)
		env[n++] = xstrdup(ENV_SAVE_MODULES "=1");
	if (req->subst_dir)
		env[n++] = xasprintf(ENV_SUBST "=%s", req->subst_dir);
	if (req->metrics)
		env[n++] = xstrdup(ENV_METRICS "=1");
	if (req->metrics && req->metric_list)
		env[n++] = xasprintf(ENV_METRIC_LIST "=%s", req->metric_list);
	if (req->monitor)
		env[n++] = xstrdup(ENV_MONITOR "=1");
	if (req->timing)
		env[n++] = xstrdup(ENV_TIMING "=1");
	if (req->l2_windows)
		env[n++] = xasprintf(ENV_L2_WINDOWS "=%s", req->l2_windows);
	if (req->launch_plan)
		env[n++] = xasprintf(ENV_LAUNCH_PLAN "=%s", req->launch_plan);
	if (req->ranks)
		env[n++] = xasprintf(ENV_RANKS "=%s", req->ranks);
	if (req->visible_devices)
		env[n++] = xasprintf(ENV_VISIBLE_DEVICES "=%s", req->visible_devices);
	if (req->triton_cache_dir)
		env[n++] = xasprintf("TRITON_CACHE_DIR=%s", req->triton_cache_dir);
	env[n] = NULL;
	return env;
}

void run_request_env_free(char **env)
{
	free_string_list(env);
}

int run_request_run(const struct run_request *req, const struct run_spec *spec,
		    struct run_result *res)
{
	struct run_spec s = *spec;
	char **env = run_request_env(req), **argv = NULL;
	enum launcher_kind kind = launcher_of(spec->argv[0]);
	int ret;

	s.env_add = env;
	if (kind == LAUNCHER_OPENMPI) {
		const char *warning;
		size_t n = 0, nr;

		while (spec->argv[n])
			n++;
		argv = launcher_args(kind, spec->argv + 1, n - 1, env, &nr, &warning);
		/* argv[0] first: the launcher itself */
		argv = xrealloc(argv, (nr + 2) * sizeof(*argv));
		memmove(argv + 1, argv, (nr + 1) * sizeof(*argv));
		argv[0] = xstrdup(spec->argv[0]);
		s.argv = argv;
	}
	ret = runner_run(&s, res);
	launcher_args_free(argv);
	run_request_env_free(env);
	return ret;
}

/* One run of run_request_run_many, in its thread. */
struct run_many_slot {
	const struct run_request *req;
	const struct run_spec *spec;
	struct run_result *res;
	int ret;
	char *message;             /* the error's message, NULL none */
	pthread_t thread;
	int started;
};

static void *run_many_thread(void *arg)
{
	struct run_many_slot *s = arg;

	s->ret = run_request_run(s->req, s->spec, s->res);
	if (s->ret)
		s->message = xstrdup(error_message());   /* the message is per thread */
	return NULL;
}

int run_request_run_many(const struct run_request *reqs, const struct run_spec *specs,
			 struct run_result *res, size_t n)
{
	struct run_many_slot *slots = xcalloc(n + 1, sizeof(*slots));
	size_t i;
	int ret = 0;

	for (i = 0; i < n; i++) {
		slots[i] = (struct run_many_slot){ .req = &reqs[i], .spec = &specs[i], .res = &res[i] };
		if (pthread_create(&slots[i].thread, NULL, run_many_thread, &slots[i]) == 0) {
			slots[i].started = 1;
		} else {
			/* no thread: run it here, after the others started */
			run_many_thread(&slots[i]);
		}
	}
	for (i = 0; i < n; i++) {
		if (slots[i].started)
			pthread_join(slots[i].thread, NULL);
		if (slots[i].ret && !ret)
			ret = error_set(slots[i].ret, "%s", slots[i].message ? slots[i].message : "?");
		free(slots[i].message);
	}
	free(slots);
	return ret;
}

char *run_request_events_file(const char *events_dir)
{
	return xasprintf("%s/events.jsonl", events_dir);
}

char *run_request_seen_dir(const char *events_dir)
{
	return xasprintf("%s/seen", events_dir);
}

char *run_request_injection_library(const char *exe_dir)
{
	char *path = xasprintf("%s/../lib/cacheadvise/libcacheadvise_inject.so", exe_dir);
	char *real;

	if (access(path, R_OK)) {
		error_set(CA_E_INPUT, "the injection library '%s' is missing: rebuild cacheadvise "
			  "(cmake --build) or reinstall it", path);
		free(path);
		return NULL;
	}
	real = realpath(path, NULL);
	free(path);
	return real;
}

/* The output check of every advice run against every baseline run. */
static void judge_outputs(const struct ab_pairs *pp, struct run_output *outs, unsigned n,
			  struct ab_result *ab)
{
	const struct run_output **base = xcalloc(n + pp->nr_more_baselines + 1, sizeof(*base));
	const struct run_output **adv = xcalloc(n + 1, sizeof(*adv));
	size_t nb = 0, na = 0, i;
	int ok;

	/* the earlier baselines first: the first is the output's reference,
	 * and the profile's first is the discovery run, the program's own
	 * code unchanged (analysis/output_check.h) */
	for (i = 0; i < pp->nr_more_baselines; i++)
		base[nb++] = pp->more_baselines[i];
	/* outs alternates: baseline, advice, baseline, advice, ... */
	for (i = 0; i < n; i++) {
		if (i % 2)
			adv[na++] = &outs[i];
		else
			base[nb++] = &outs[i];
	}
	ab->output = output_check_judge(base, nb, adv, na, pp->output_check, &ok);
	/* stable: the baselines agree on everything (nothing left out) */
	ab->baseline_stable = output_check_baselines_agree(ab->output);
	if (!ok && ab->outputs_equal) {
		ab->outputs_equal = 0;
		ab->output_reason = output_check_reason(ab->output);
		ab->reject_reason = ab->output_reason;
	}
	free(base);
	free(adv);
}

/* Round r of a series laid out [k * rounds + r]: each kernel's GPU time in
 * ev, NAN where ev timed none of its launches, and (launches not NULL) how
 * many launches were timed. */
static void put_kernel_times(struct run_events *ev, const char *const *kernels, size_t nk,
			     double *ns, unsigned *launches, unsigned rounds, unsigned r)
{
	size_t i;

	for (i = 0; i < nk; i++) {
		struct event_kernel *ek = run_events_kernel(ev, kernels[i]);

		ns[i * rounds + r] = ek->timed_launches ? (double)ek->gpu_time_ns : NAN;
		if (launches)
			launches[i * rounds + r] = ek->timed_launches;
	}
}

int ab_pairs_run(const struct ab_pairs *pp, struct ab_result *ab)
{
	size_t nk = pp->nr_kernels, i, j;
	unsigned rounds = pp->rounds, r, nr_outs = 0;
	struct run_output *outs = xcalloc(2 * (size_t)rounds + 1, sizeof(*outs));
	int ret = 0;

	ab_result_init(ab, nk, rounds);
	for (r = 0; r < rounds && !ret; r++) {
		int adv;
		for (adv = 0; adv < 2 && !ret; adv++) {
			char label[64];
			struct run_events ev;
			struct run_result res;
			struct run_output *out = &outs[nr_outs++];
			double total = 0;

			snprintf(label, sizeof(label), "%s-%s", pp->name, adv ? "advice" : "baseline");
			run_events_init(&ev);
			run_output_init(out);
			memset(&res, 0, sizeof(res));
			ret = pp->run(pp->data, label, adv ? pp->advice : pp->baseline, &ev, &res, out);
			if (!ret && res.status == RUN_INTERRUPTED)
				ret = error_set(CA_E_INTERRUPTED, "interrupted during %s", label);
			if (!ret && res.status != RUN_OK) {
				if (!adv) {
					ret = pp->failed(pp->data, label, &res);
				} else {
					ab->outputs_equal = 0;
					ab->reject_reason = "the program failed with the advice applied";
				}
			}
			if (ret) {
				run_events_release(&ev);
				break;
			}
			out->ok = res.status == RUN_OK;
			(adv ? ab->adv_wall : ab->base_wall)[r] = res.wall_seconds;
			for (i = 0; i < ev.nr_kernels; i++)
				total += (double)ev.kernels[i].gpu_time_ns;
			(adv ? ab->adv_total : ab->base_total)[r] = total;
			put_kernel_times(&ev, pp->kernels, nk, adv ? ab->adv_ns : ab->base_ns,
					 adv ? ab->adv_launches : ab->base_launches, rounds, r);
			/* a job's ranks apart: each rank's own kernel times (issue 29) */
			for (j = 0; ev.nr_rank_events >= 2 && j < ev.nr_rank_events; j++) {
				struct run_events *rev = ev.rank_events[j].ev;
				struct ab_rank_times *t = ab_result_rank(ab, ev.rank_events[j].rank, nk);

				if (!t->gpu && rev->gpu)
					t->gpu = xstrdup(rev->gpu);
				put_kernel_times(rev, pp->kernels, nk, adv ? t->adv_ns : t->base_ns, NULL,
						 rounds, r);
			}
			run_events_release(&ev);
		}
		if (!ret && r + 1 < rounds && pp->enough && pp->enough(ab, r + 1, pp->data)) {
			ab_result_truncate(ab, nk, r + 1);
			break;
		}
	}
	if (!ret)
		judge_outputs(pp, outs, nr_outs, ab);
	for (i = 0; i < nr_outs; i++)
		run_output_release(&outs[i]);
	free(outs);
	return ret;
}
