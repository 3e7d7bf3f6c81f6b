#define _GNU_SOURCE
#include "collectors/run_request.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/xalloc.h"

/* The injection library's settings (docs/injection.md). */
#define ENV_INJECTION "CUDA_INJECTION64_PATH"
#define ENV_OUT "CACHEADVISE_OUT"
#define ENV_SUBST "CACHEADVISE_SUBST"
#define ENV_L2_WINDOWS "CACHEADVISE_L2_WINDOWS"
#define ENV_SAVE_MODULES "CACHEADVISE_SAVE_MODULES"
#define ENV_METRICS "CACHEADVISE_METRICS"
#define ENV_TIMING "CACHEADVISE_TIMING"
#define ENV_MONITOR "CACHEADVISE_MONITOR"
#define ENV_LAUNCH_PLAN "CACHEADVISE_LAUNCH_PLAN"

char **run_request_env(const struct run_request *req)
{
	char **env = xcalloc(12, sizeof(*env));
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
	if (req->monitor)
		env[n++] = xstrdup(ENV_MONITOR "=1");
	if (req->timing)
		env[n++] = xstrdup(ENV_TIMING "=1");
	if (req->l2_windows)
		env[n++] = xasprintf(ENV_L2_WINDOWS "=%s", req->l2_windows);
	if (req->launch_plan)
		env[n++] = xasprintf(ENV_LAUNCH_PLAN "=%s", req->launch_plan);
	env[n] = NULL;
	return env;
}

void run_request_env_free(char **env)
{
	size_t i;

	for (i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

int run_request_run(const struct run_request *req, const struct run_spec *spec,
		    struct run_result *res)
{
	struct run_spec s = *spec;
	char **env = run_request_env(req);
	int ret;

	s.env_add = env;
	ret = runner_run(&s, res);
	run_request_env_free(env);
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
	char *path = xasprintf("%s/../lib/libcacheadvise_inject.so", exe_dir);
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

/* The SHA-256 of the compared output file after a run ("" when it cannot be read). */
static void compare_hash(const char *file, char out[65])
{
	out[0] = '\0';
	if (file && digest_file_sha256_hex(file, out))
		out[0] = '\0';
}

int ab_pairs_run(const struct ab_pairs *pp, struct ab_result *ab)
{
	size_t nk = pp->nr_kernels, i;
	char base_out[65] = "", base_cmp[65] = "";
	unsigned rounds = pp->rounds, r;
	int ret = 0;

	ab_result_init(ab, nk, rounds);
	for (r = 0; r < rounds && !ret; r++) {
		int adv;
		for (adv = 0; adv < 2 && !ret; adv++) {
			char hex[65] = "", hex_cmp[65], label[64];
			struct run_events ev;
			struct run_result res;
			double total = 0;

			snprintf(label, sizeof(label), "%s-%s", pp->name, adv ? "advice" : "baseline");
			run_events_init(&ev);
			memset(&res, 0, sizeof(res));
			ret = pp->run(pp->data, label, adv ? pp->advice : pp->baseline, &ev, &res, hex);
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
			compare_hash(pp->compare_file, hex_cmp);
			if (!adv) {
				if (!base_out[0]) {
					snprintf(base_out, sizeof(base_out), "%s", hex);
					snprintf(base_cmp, sizeof(base_cmp), "%s", hex_cmp);
				} else if (strcmp(base_out, hex) || strcmp(base_cmp, hex_cmp)) {
					ab->baseline_stable = 0;
				}
			} else if (res.status == RUN_OK &&
				   (strcmp(base_out, hex) || strcmp(base_cmp, hex_cmp))) {
				ab->outputs_equal = 0;
				if (!ab->reject_reason)
					ab->reject_reason = pp->compare_file && strcmp(base_cmp, hex_cmp) ?
						"the --compare file changed with the advice applied" :
						"the program's output changed with the advice applied";
			}
			(adv ? ab->adv_wall : ab->base_wall)[r] = res.wall_seconds;
			for (i = 0; i < ev.nr_kernels; i++)
				total += (double)ev.kernels[i].gpu_time_ns;
			(adv ? ab->adv_total : ab->base_total)[r] = total;
			for (i = 0; i < nk; i++) {
				struct event_kernel *ek = run_events_kernel(&ev, pp->kernels[i]);
				(adv ? ab->adv_ns : ab->base_ns)[i * rounds + r] =
					ek->timed_launches ? (double)ek->gpu_time_ns : NAN;
			}
			run_events_release(&ev);
		}
	}
	return ret;
}
