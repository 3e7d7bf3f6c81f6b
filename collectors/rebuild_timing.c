#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ab_verdict.h"
#include "analysis/device_model.h"
#include "base/atomic_file.h"
#include "base/capture_names.h"
#include "base/error.h"
#include "base/path.h"
#include "base/xalloc.h"
#include "collectors/events.h"
#include "collectors/gpu.h"
#include "collectors/rebuild_timing.h"
#include "collectors/run_request.h"
#include "collectors/runner.h"

struct timed {
	const char *tmp;
	const char *inject;
	char *original;             /* the capture's program (resolved) */
	char *const *orig_argv;
	char *rebuilt;
	char *const *rebuilt_argv;
	const char *rebuilt_cwd, *rebuilt_triton_cache;
	double timeout;
	unsigned nr;
};

static int timed_run(void *data, const char *label, const struct run_request *req,
		     struct run_events *ev, struct run_result *res, struct run_output *out)
{
	struct timed *t = data;
	int adv = strstr(label, "-advice") != NULL;
	struct run_request r = *req;
	struct run_spec spec;
	char *evdir = xasprintf("%s/%s-%u", t->tmp, label, t->nr++), *evfile;
	int ret;

	(void)out;
	ret = mkdir_p(evdir);
	if (ret)
		goto out;
	r.inject_path = t->inject;
	r.events_dir = evdir;
	if (adv)
		r.triton_cache_dir = t->rebuilt_triton_cache;
	memset(&spec, 0, sizeof(spec));
	spec.path = adv ? t->rebuilt : t->original;
	spec.argv = adv ? t->rebuilt_argv : t->orig_argv;
	spec.cwd = adv ? t->rebuilt_cwd : NULL;
	spec.timeout_seconds = t->timeout;
	ret = run_request_run(&r, &spec, res);
	if (ret)
		goto out;
	evfile = run_request_events_file(evdir);
	if (run_events_load(ev, evfile))
		error_clear();
	free(evfile);
out:
	free(evdir);
	return ret;
}

static int timed_failed(void *data, const char *label, const struct run_result *res)
{
	(void)data;
	if (res->status == RUN_NOT_STARTED)
		return error_set(CA_E_PROGRAM, "%s: %s", label, res->start_error);
	return error_set(CA_E_PROGRAM, "%s: the program %s", label,
			 res->status == RUN_TIMEOUT ? "timed out (see --timeout)" :
			 res->status == RUN_SIGNALED ? "was killed by a signal" : "failed");
}

int rebuild_timing_run(const struct rebuild_timing_options *o, struct rebuild_timing *r)
{
	const char *const *kernels = o->kernels;
	struct device_model dm;
	struct run_request base = { .timing = 1 }, adv = { .timing = 1 };
	struct ab_pairs pairs;
	struct ab_result ab;
	struct timed t;
	char tmpl[] = "/tmp/cacheadvise-check-XXXXXX", *modules = NULL;
	size_t i, n = o->nr_kernels;
	int ret;

	memset(r, 0, sizeof(*r));
	memset(&t, 0, sizeof(t));
	memset(&ab, 0, sizeof(ab));
	device_model_init(&dm);
	ret = gpu_query(&dm);
	device_model_release(&dm);
	if (ret)
		return ret;
	if (!o->baseline_argv || !o->baseline_argv[0])
		return error_set(CA_E_USAGE, "no baseline to time the rebuilt program against: "
				 "name the original program with --baseline");
	ret = runner_resolve_program(o->baseline_argv[0], &t.original);
	if (ret)
		return error_prefix(ret, "the original program (--baseline)");
	if (o->rebuilt_path)
		t.rebuilt = xstrdup(o->rebuilt_path);
	else if ((ret = runner_resolve_program(o->argv[0], &t.rebuilt)))
		goto out;
	t.orig_argv = o->baseline_argv;
	t.rebuilt_argv = o->argv;
	t.rebuilt_cwd = o->rebuilt_cwd;
	t.rebuilt_triton_cache = o->rebuilt_triton_cache;
	t.timeout = o->timeout;
	t.inject = run_request_injection_library(o->exe_dir);
	if (!t.inject) {
		ret = CA_E_INPUT;
		goto out;
	}
	if (!mkdtemp(tmpl)) {
		ret = error_set(CA_E_IO, "cannot create a temporary directory: %s", strerror(errno));
		goto out;
	}
	t.tmp = tmpl;
	/* The baseline runs the capture's unpatched PTX, as verification did,
	 * unless it is to run as built (a rebuild in a copy). */
	modules = xasprintf("%s/" CAPTURE_LAYOUT_MODULES_DIR, o->dir);
	base.subst_dir = o->baseline_as_built ? NULL : modules;
	memset(&pairs, 0, sizeof(pairs));
	pairs.baseline = &base;
	pairs.advice = &adv;
	pairs.rounds = o->repeat;
	pairs.name = "check";
	pairs.kernels = (const char **)kernels;
	pairs.nr_kernels = n;
	pairs.run = timed_run;
	pairs.failed = timed_failed;
	pairs.data = &t;
	runner_install_interrupt_handler();
	ret = ab_pairs_run(&pairs, &ab);
	if (ret)
		goto out;
	r->kernels = xcalloc(n ? n : 1, sizeof(*r->kernels));
	r->nr_kernels = n;
	r->kept = 1;
	{
		/* other arguments, another iteration count: different work (t_triton's
		 * check gave "1.56x" to a program run with fewer iterations than its
		 * baseline); a kernel's mean launch still compares */
		long k = ab_launches_differ(&ab, n, &r->base_launches, &r->rebuilt_launches);

		if (k >= 0) {
			r->launches_differ = kernels[k];
			ab_per_launch(&ab, n);
		}
	}
	for (i = 0; i < n; i++) {
		struct rebuild_timing_kernel *k = &r->kernels[i];
		json_t *v = ab_verdict(&ab.base_ns[i * o->repeat], &ab.adv_ns[i * o->repeat],
				       o->repeat, &ab, &k->kept);

		k->name = kernels[i];
		k->median = ab_verdict_median(v);
		k->noise = ab_verdict_noise(v);
		r->kept &= k->kept;
		json_decref(v);
	}
	r->program_speedup = NAN;
	if (!r->launches_differ) {
		json_t *pj = ab_program_json(&ab);

		r->program_speedup = ab_program_gpu_speedup(pj);
		json_decref(pj);
	}
out:
	if (t.tmp && path_remove_tree(t.tmp))
		r->tmp_left = xstrdup(t.tmp);
	ab_result_release(&ab);
	free(t.original);
	free(t.rebuilt);
	free((char *)t.inject);
	free(modules);
	return ret;
}

int rebuild_timing_loaded(const struct rebuild_timing_options *o, struct run_events *ev,
			  char **tmp_left)
{
	struct device_model dm;
	struct run_request req = { 0 };
	struct run_spec spec;
	struct run_result res;
	char tmpl[] = "/tmp/cacheadvise-check-XXXXXX", *rebuilt = NULL, *inject = NULL;
	int ret;

	*tmp_left = NULL;
	device_model_init(&dm);
	ret = gpu_query(&dm);
	device_model_release(&dm);
	if (ret)
		return ret;
	if (o->rebuilt_path)
		rebuilt = xstrdup(o->rebuilt_path);
	else if ((ret = runner_resolve_program(o->argv[0], &rebuilt)))
		return ret;
	inject = run_request_injection_library(o->exe_dir);
	if (!inject) {
		ret = CA_E_INPUT;
		goto out;
	}
	if (!mkdtemp(tmpl)) {
		ret = error_set(CA_E_IO, "cannot create a temporary directory: %s", strerror(errno));
		goto out;
	}
	req.inject_path = inject;
	req.events_dir = tmpl;
	req.triton_cache_dir = o->rebuilt_triton_cache;
	memset(&spec, 0, sizeof(spec));
	spec.path = rebuilt;
	spec.argv = o->argv;
	spec.cwd = o->rebuilt_cwd;
	spec.timeout_seconds = o->timeout;
	runner_install_interrupt_handler();
	ret = run_request_run(&req, &spec, &res);
	if (!ret && res.status == RUN_INTERRUPTED)
		ret = error_set(CA_E_INTERRUPTED, "interrupted");
	else if (!ret && res.status != RUN_OK)
		ret = timed_failed(NULL, "the rebuilt program, run once to see which kernels it "
				   "loads", &res);
	if (!ret) {
		char *evfile = run_request_events_file(tmpl);

		ret = run_events_load(ev, evfile);
		free(evfile);
	}
	if (path_remove_tree(tmpl))
		*tmp_left = xstrdup(tmpl);
out:
	free(rebuilt);
	free(inject);
	return ret;
}

void rebuild_timing_release(struct rebuild_timing *r)
{
	free(r->kernels);
	free(r->tmp_left);
	memset(r, 0, sizeof(*r));
}

char **rebuild_timing_baseline_argv(const char *cmd, char *const *rebuilt)
{
	char *buf, *tok, *save = NULL;
	char **argv = NULL;
	size_t n = 0, i;

	while (*cmd == ' ')   /* the first word starts buf: freed through argv[0] */
		cmd++;
	buf = xstrdup(cmd);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		argv = xrealloc(argv, (n + 2) * sizeof(*argv));
		argv[n++] = tok;
	}
	if (n == 1)
		for (i = 1; rebuilt[i]; i++) {
			argv = xrealloc(argv, (n + 2) * sizeof(*argv));
			argv[n++] = rebuilt[i];
		}
	if (!n) {
		free(buf);
		return NULL;
	}
	argv[n] = NULL;
	return argv;
}

char **rebuild_timing_same_argv(char *const *argv)
{
	size_t n = 0, i;
	char **out;

	while (argv[n])
		n++;
	out = xcalloc(n + 1, sizeof(*out));
	out[0] = xstrdup(argv[0]);
	for (i = 1; i < n; i++)
		out[i] = argv[i];
	return out;
}
