/*
 * `profile`'s carve-out check (issue 18, docs/cmd-profile.md "Carve-out"):
 * where the program sets a kernel's preferred L1/shared carve-out itself
 * (cudaFuncSetAttribute; the discovery run records it), one more run times
 * that setting against the driver's default launch by launch: A B B A over
 * the run, or for kernels launched fewer than MIN_ABBA_LAUNCHES times,
 * timed replays of one launch with memory restored. The program's own
 * code runs (no substitute), so kernels without PTX are checked too. The
 * default is advised only where it wins beyond the noise
 * (analysis/carveout_verdict.h); capture.json "carveout" holds the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/carveout_verdict.h"
#include "analysis/launch_sampling.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "src/profile/internal.h"

/* Launches (of one process) below which a kernel is timed by replays of one
 * launch: A B B A judges three groups of four launches after the first
 * (ab_verdict_abba). */
#define MIN_ABBA_LAUNCHES 16
/* Baseline-against-baseline spread over which in-run timing is not trusted. */
#define MAX_NOISE 0.05

/* A kernel whose carve-out the program set, as the discovery run saw it. */
struct carve_kernel {
	const char *name;          /* borrowed from the discovery events */
	int value;
	unsigned launches;
	unsigned per_process;      /* its launches in one process (a job's rank) */
	int replays;               /* timed by replays of one launch */
	const char *unmeasured;    /* why it cannot be timed, NULL when it can */
	char *unmeasured_owned;
	const char *library;       /* the library whose module holds it (cuBLAS), NULL: the program's */
};

/* The library (capture.json modules[].library) of the module the discovery
 * run launched kernel ek from, or NULL. */
static const char *library_of(struct profile_ctx *c, const struct event_kernel *ek)
{
	size_t i;

	for (i = 0; ek && ek->module && i < c->nr_modules; i++)
		if (!strcmp(c->modules[i].id, ek->module))
			return c->modules[i].library;
	return NULL;
}

static const struct ptx_function *ptx_of(struct profile_ctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++)
		if (!strcmp(c->kernels[i].name, name))
			return c->kernels[i].fn;
	for (i = 0; i < c->nr_modules; i++)
		if (c->modules[i].pm && ptx_module_find(c->modules[i].pm, name))
			return ptx_module_find(c->modules[i].pm, name);
	return NULL;
}

/* The launch plan entry of k, or NULL when k cannot be timed in-run. */
static json_t *kernel_plan(struct profile_ctx *c, struct carve_kernel *k)
{
	unsigned rounds = c->opt->repeat ? c->opt->repeat : 5;
	json_t *kj, *co, *written = json_array();
	const struct ptx_function *fn;
	uint64_t ord = 0;
	char *why = NULL;

	co = json_pack("{s:[i,i], s:[s,s], s:s}", "values", k->value, CARVEOUT_DEFAULT, "labels",
		       "program", "default", "pattern", "abba");
	kj = json_pack("{s:s, s:o}", "name", k->name, "carveout", co);
	if (!k->launches) {
		k->unmeasured = "the program never launched it";
	} else if (k->per_process < MIN_ABBA_LAUNCHES) {
		/* replays restore what the kernel writes: only its PTX tells what that is */
		k->replays = 1;
		fn = ptx_of(c, k->name);
		if (!fn) {
			k->unmeasured = "launched fewer than 16 times and without PTX, so its launches "
					"cannot be replayed safely";
		} else if (!profile_replay_written(fn, 0, written, &why)) {   /* the program's module */
			k->unmeasured_owned = xasprintf("launched fewer than 16 times and its launches "
							"cannot be replayed: %s", why ? why : "?");
			k->unmeasured = k->unmeasured_owned;
		} else {
			launch_sample_ordinals(k->per_process, 1, &ord);
			json_object_set_new(co, "replay_rounds", json_pack("{s:[I], s:i}", "ordinals",
					    (json_int_t)ord, "rounds", (int)rounds));
		}
		free(why);
	}
	json_object_set_new(kj, "written_params", written);
	if (k->unmeasured) {
		json_decref(kj);
		return NULL;
	}
	return kj;
}

static json_t *judge(struct run_events *ev, const struct carve_kernel *k, int ran)
{
	struct event_kernel *ek;
	struct carveout_times t;
	double *prog, *def;
	json_t *e;

	if (k->unmeasured || !ran)
		return carveout_verdict(k->name, k->value, k->library, NULL, MAX_NOISE,
					k->unmeasured ? k->unmeasured : "the timing run failed");
	ek = run_events_kernel(ev, k->name);
	prog = event_kernel_times(ek, k->replays ? EVENT_CARVEOUT_REPLAY_NS : EVENT_CARVEOUT_NS, "program",
				  &t.nr_program);
	def = event_kernel_times(ek, k->replays ? EVENT_CARVEOUT_REPLAY_NS : EVENT_CARVEOUT_NS, "default",
				 &t.nr_default);
	t.program = prog;
	t.deflt = def;
	t.replays = k->replays;
	/* a library's call is phrased as the library's, not the program's (issue 25) */
	e = carveout_verdict(k->name, k->value, k->library, &t, MAX_NOISE, NULL);
	json_object_set_new(e, "launches", json_integer(k->launches));
	free(prog);
	free(def);
	return e;
}

int profile_carveout(struct profile_ctx *c)
{
	struct run_request req = { .timing = 1 };
	struct run_events disc, ev;
	struct run_result res;
	struct carve_kernel *ks = NULL;
	json_t *lpk = json_array(), *attrs, *lp, *out = json_array(), *kj;
	char *path = capture_layout_run_events(c->dir, 0), *plan_path = NULL;
	const char *name;
	size_t nk = 0, i;
	int ret = 0, ran = 0;

	run_events_init(&disc);
	run_events_init(&ev);
	ret = run_events_load(&disc, path);
	if (ret)
		goto out;
	ks = xcalloc(json_object_size(disc.attributes) + 1, sizeof(*ks));
	json_object_foreach(disc.attributes, name, attrs) {
		struct event_kernel *ek;
		long long v;

		if (!*name || !run_events_attribute_int(&disc, name, "preferred_shared_memory_carveout",
							&v))
			continue;
		ks[nk].name = name;
		ks[nk].value = (int)v;
		for (i = 0; i < disc.nr_kernels; i++)
			if (!strcmp(disc.kernels[i].name, name))
				break;
		ek = i < disc.nr_kernels ? &disc.kernels[i] : NULL;
		ks[nk].launches = ek ? ek->launches : 0;
		ks[nk].per_process = run_events_launches_per_process(&disc, name);
		ks[nk].library = library_of(c, ek);
		if (ks[nk].value != CARVEOUT_DEFAULT && (kj = kernel_plan(c, &ks[nk])))
			json_array_append_new(lpk, kj);
		nk++;
	}
	if (!nk)
		goto out;       /* the program set no carve-out: nothing to check */
	/* the one run it needs, where the budget leaves time for it */
	if (json_array_size(lpk) && profile_budget_allows(c, "the carve-out check", 1)) {
		lp = json_pack("{s:s, s:I, s:O}", "schema", "cacheadvise.launch_plan/1",
			       "replay_max_bytes", (json_int_t)(8ull << 30), "kernels", lpk);
		plan_path = capture_layout_run_launch_plan(c->dir, c->run_index);
		ret = json_file_write(plan_path, lp);
		json_decref(lp);
		if (ret)
			goto out;
		req.launch_plan = plan_path;
		c->runs_planned = c->runs_done + 1;
		profile_progress(c, "carve-out check");
		ret = profile_run_program(c, "carveout", &req, &ev, &res, NULL);
		profile_progress(c, "carve-out check");
		if (!ret && res.status == RUN_INTERRUPTED)
			ret = error_set(CA_E_INTERRUPTED, "interrupted during the carve-out check");
		if (ret)
			goto out;
		ran = res.status == RUN_OK;
		if (!ran)
			profile_note(c, "the carve-out check's run failed: the program's carve-outs are "
				     "kept, not measured");
	}
	for (i = 0; i < nk; i++)
		json_array_append_new(out, judge(&ev, &ks[i], ran));
	json_object_set_new(c->capture, "carveout", json_pack("{s:O}", "kernels", out));
	ret = profile_write_capture(c, "complete");
out:
	for (i = 0; i < nk; i++)
		free(ks[i].unmeasured_owned);
	free(ks);
	json_decref(lpk);
	json_decref(out);
	run_events_release(&disc);
	run_events_release(&ev);
	free(path);
	free(plan_path);
	return ret;
}
