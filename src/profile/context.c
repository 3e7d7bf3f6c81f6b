/*
 * What every step of `profile` uses: notes and progress, one program run
 * recorded in capture.json, A/B pairs, the capture document, and the
 * substituted PTX of a run.
 */
#define _GNU_SOURCE
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "analysis/budget.h"
#include "analysis/capture_cost.h"
#include "analysis/capture_model.h"
#include "analysis/plan.h"
#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/file_snapshot.h"
#include "emitters/capture_layout.h"
#include "emitters/patched_ptx.h"
#include "emitters/report_cost.h"
#include "src/profile/internal.h"

double profile_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(struct profile_ctx *c, enum profile_event_kind kind, const char *label,
		   const char *message)
{
	struct profile_event ev = {
		.kind = kind, .step = c->step, .label = label, .message = message, .dir = c->dir,
		.runs_done = c->runs_done, .runs_planned = c->runs_planned,
		.elapsed = profile_now() - c->started,
	};

	if (c->progress && c->progress->report)
		c->progress->report(c->progress->data, &ev);
}

void profile_progress(struct profile_ctx *c, const char *label)
{
	struct profile_event ev = {
		.kind = PROFILE_EVENT_RUN, .step = c->step, .label = label, .dir = c->dir,
		.runs_done = c->runs_done, .runs_planned = c->runs_planned,
		.elapsed = profile_now() - c->started,
	};

	/* One event as the run starts, one as it ends, with its own label
	 * (issue 14: the start used to read as the previous run's end). */
	ev.run_ended = c->runs_done != c->progress_mark;
	ev.run_number = ev.run_ended ? c->runs_done : c->runs_done + 1;
	c->progress_mark = c->runs_done;
	if (c->progress && c->progress->report)
		c->progress->report(c->progress->data, &ev);
}

void profile_message(struct profile_ctx *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	report(c, PROFILE_EVENT_MESSAGE, NULL, buf);
}

void profile_note(struct profile_ctx *c, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	json_array_append_new(c->notes_json, json_string(sb.buf));
	strbuf_release(&sb);
}

void profile_set_counters(struct profile_ctx *c, struct profile_kernel *k, const char *variant,
			  json_t *metrics)
{
	struct capture_counters *cc = NULL;
	size_t i;

	json_object_set_new(k->counters, variant, metrics);
	for (i = 0; i < k->nr_tcounters && !cc; i++)
		if (!strcmp(k->tcounters[i].variant, variant))
			cc = &k->tcounters[i];
	if (cc) {
		capture_counters_release(cc);   /* its source was the object replaced */
	} else {
		k->tcounters = xrealloc(k->tcounters, (k->nr_tcounters + 1) * sizeof(*k->tcounters));
		cc = &k->tcounters[k->nr_tcounters++];
	}
	memset(cc, 0, sizeof(*cc));
	if (capture_counters_from_json(cc, variant, metrics, CAPTURE_LAYOUT_CAPTURE)) {
		profile_note(c, "kernel %s: its %s counters are not what the capture's reader accepts "
			     "(%s)", k->name, variant, error_message());
		error_clear();
		capture_counters_release(cc);
		*cc = k->tcounters[--k->nr_tcounters];
	}
}

const struct capture_kernel *profile_kernel_read(struct profile_ctx *c, struct profile_kernel *k)
{
	if (k->has_typed)
		capture_kernel_release(&k->typed);
	memset(&k->typed, 0, sizeof(k->typed));
	k->has_typed = 1;
	if (!k->json || capture_kernel_from_json(&k->typed, k->json, CAPTURE_LAYOUT_CAPTURE)) {
		profile_note(c, "kernel %s: its capture entry is not what the capture's reader "
			     "accepts (%s)", k->name, k->json ? error_message() : "not written yet");
		error_clear();
		return NULL;
	}
	return &k->typed;
}

struct profile_rank_hits *profile_rank_hits(struct profile_kernel *k, int rank,
					    struct run_events *rev)
{
	struct profile_rank_hits *r = NULL;
	struct event_kernel *rek = run_events_kernel(rev, k->name);
	size_t i;

	for (i = 0; i < k->nr_ranks && !r; i++)
		if (k->ranks[i].rank == rank)
			r = &k->ranks[i];
	if (!r) {
		k->ranks = xrealloc(k->ranks, (k->nr_ranks + 1) * sizeof(*k->ranks));
		r = &k->ranks[k->nr_ranks++];
		memset(r, 0, sizeof(*r));
		r->rank = rank;
		r->hits = xcalloc(k->vk.nr_measured + 1, sizeof(*r->hits));
		r->samples = xcalloc(k->vk.nr_measured + 1, sizeof(*r->samples));
	}
	if (!r->gpu && rev->gpu)
		r->gpu = xstrdup(rev->gpu);
	if (rek->launches > r->launches)
		r->launches = rek->launches;
	return r;
}

int profile_pass_used_modules(const struct profile_ctx *c, unsigned run)
{
	size_t i;

	for (i = 0; i < c->nr_module_passes; i++)
		if (c->module_passes[i] == run)
			return 1;
	return 0;
}

void profile_set_verification(struct profile_ctx *c, json_t *ver)
{
	c->verification = ver;
	json_object_set_new(c->capture, "verification", ver);
}

const struct capture_counters *profile_counters(const struct profile_kernel *k,
						const char *variant)
{
	size_t i;

	for (i = 0; i < k->nr_tcounters; i++)
		if (!strcmp(k->tcounters[i].variant, variant))
			return &k->tcounters[i];
	return NULL;
}

/* The reports' cost line of the capture as last written (NULL none). */
static char *cost_line(struct profile_ctx *c)
{
	struct capture cap;
	char *line = NULL;

	capture_init(&cap);
	if (!capture_from_json(&cap, c->capture, CAPTURE_LAYOUT_CAPTURE))
		line = report_cost_line(&cap);
	error_clear();
	capture_release(&cap);
	return line;
}

void profile_report_event(struct profile_ctx *c, enum profile_event_kind kind)
{
	/* the last line says what the profile cost and where the time went */
	char *line = kind == PROFILE_EVENT_DONE ? cost_line(c) : NULL;

	report(c, kind, NULL, line);
	free(line);
}

/* ---- runs ------------------------------------------------------------- */

/* A JSON string that takes s (freed here). */
static json_t *json_own(char *s)
{
	json_t *j = json_string(s);

	free(s);
	return j;
}

static void tail_of_file(const char *path, struct strbuf *out, size_t max_lines)
{
	struct strbuf sb = STRBUF_INIT;
	size_t lines = 0;
	const char *p;

	if (strbuf_read_file(&sb, path, 0))
		return;
	for (p = sb.buf + sb.len; p > sb.buf; p--)
		if (p[-1] == '\n' && p != sb.buf + sb.len && ++lines > max_lines)
			break;
	strbuf_addstr(out, p);
	strbuf_release(&sb);
}

/* --output-ignore, compiled; NULL without it (cmd_profile.c checked it). */
static regex_t *ignore_regex(struct profile_ctx *c, regex_t *re)
{
	if (!c->opt->output_ignore || regcomp(re, c->opt->output_ignore, REG_EXTENDED | REG_NOSUB))
		return NULL;
	return re;
}

/* A run's captured stream without the lines --output-ignore matches; NULL
 * when it cannot be read. */
static char *compared_text(struct profile_ctx *c, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	regex_t re, *rp;
	char *t;

	if (strbuf_read_file(&sb, path, 0)) {
		strbuf_release(&sb);
		return NULL;
	}
	rp = ignore_regex(c, &re);
	t = output_filter_lines(sb.buf, rp);
	if (rp)
		regfree(rp);
	strbuf_release(&sb);
	return t;
}

/*
 * SHA-256 of the run's standard output, without the lines --output-ignore
 * matches (a program that prints its timings still compares equal).
 */
static void stdout_digest(struct profile_ctx *c, const char *path, char hex[65])
{
	char *t = compared_text(c, path);

	hex[0] = '\0';
	if (t)
		digest_sha256_hex(t, strlen(t), hex);
	free(t);
}

/*
 * The files of run_output as capture.json records them in a run, each with
 * the copy of its contents kept under runs/files/ by its SHA-256 ("copy"),
 * once per content, so the output check can compare a float or text file
 * within a tolerance where the hashes differ.
 */
static json_t *files_json(struct profile_ctx *c, const struct run_output *o)
{
	json_t *a = json_array();
	char *store = NULL;
	size_t i;

	for (i = 0; i < o->nr_files; i++) {
		const struct output_file *f = &o->files[i];
		json_t *fj;

		if (!f->exists) {
			json_array_append_new(a, json_pack("{s:s, s:b}", "path", f->path, "removed", 1));
			continue;
		}
		fj = json_pack("{s:s, s:I, s:s}", "path", f->path, "size", (json_int_t)f->size,
			       "sha256", f->sha256);
		if (f->sha256[0]) {
			char *keep = capture_layout_kept_file(c->dir, f->sha256);

			if (!store) {
				store = capture_layout_kept_file(c->dir, "");
				mkdir_p(store);
			}
			if (file_snapshot_keep(f, keep, &c->kept_bytes) == 1)
				json_object_set_new(fj, "copy", json_own(
					capture_layout_kept_file(NULL, f->sha256)));
			free(keep);
		}
		json_array_append_new(a, fj);
	}
	free(store);
	error_clear();
	return a;
}

const struct capture_run *profile_run_record(const struct profile_ctx *c, unsigned index)
{
	size_t i;

	for (i = 0; i < c->nr_runs; i++)
		if (c->runs[i].index == (int)index)
			return &c->runs[i];
	return NULL;
}

int profile_run_output(struct profile_ctx *c, const struct capture_run *run, struct run_output *out)
{
	char *path;
	size_t i;

	if (!run)
		return CA_E_INPUT;
	out->ok = run->status && !strcmp(run->status, "ok");
	path = capture_layout_run_stdout(c->dir, (unsigned)run->index);
	out->out = compared_text(c, path);
	free(path);
	/* runs recorded before stderr was kept alone have no "stderr" */
	if (run->stderr_path) {
		path = capture_layout_run_stderr(c->dir, (unsigned)run->index);
		out->err = compared_text(c, path);
		free(path);
	}
	for (i = 0; i < run->nr_files; i++) {
		const struct capture_file *f = &run->files[i];
		struct output_file *of;

		if (!f->path)
			continue;
		of = run_output_add_file(out, f->path, !(f->removed > 0),
					 isnan(f->size) ? 0 : (long long)f->size, f->sha256);
		/* its contents, read by the check only where hashes differ */
		if (f->copy)
			of->data_path = xasprintf("%s/%s", c->dir, f->copy);
	}
	return 0;
}

/*
 * Keeps the record just written (the last of runs_json) typed in c->runs,
 * read by the capture's own reader. A record it refuses is a defect of
 * this file: noted, and kept with its index alone.
 */
static void keep_run(struct profile_ctx *c)
{
	json_t *rj = json_array_get(c->runs_json, json_array_size(c->runs_json) - 1);
	struct capture_run *run;

	ALLOC_GROW(c->runs, c->nr_runs + 1, c->alloc_runs);
	run = &c->runs[c->nr_runs++];
	memset(run, 0, sizeof(*run));
	if (capture_run_from_json(run, rj, CAPTURE_LAYOUT_CAPTURE)) {
		profile_note(c, "internal: the record of run %u is not what the capture's reader "
			     "accepts (%s)", c->run_index, error_message());
		error_clear();
		capture_run_release(run);
		run->index = (int)c->run_index;
	}
}

/* One program run's files under the capture (runs/NNN.*). */
struct run_paths {
	char *log, *out, *err, *evdir, *evfile;
};

static void run_paths_init(struct profile_ctx *c, unsigned index, struct run_paths *p)
{
	p->log = capture_layout_run_log(c->dir, index);
	p->out = capture_layout_run_stdout(c->dir, index);
	p->err = capture_layout_run_stderr(c->dir, index);
	p->evdir = capture_layout_run_events_dir(c->dir, index);
	p->evfile = run_request_events_file(p->evdir);
	mkdir(p->evdir, 0777);
}

static void run_paths_release(struct run_paths *p)
{
	free(p->log);
	free(p->out);
	free(p->err);
	free(p->evdir);
	free(p->evfile);
}

/* The request and spec of run `index` on GPU slot `gpu` (-1: no --gpus). */
static void run_setup(struct profile_ctx *c, const struct run_request *req, const struct run_paths *p,
		      int gpu, struct run_request *r, struct run_spec *spec)
{
	*r = *req;
	r->inject_path = c->inject_path;
	r->events_dir = p->evdir;
	r->ranks = req->ranks ? req->ranks : c->ranks;   /* a turn's (capture_launches.c) */
	r->visible_devices = gpu >= 0 ? c->gpu_names[gpu] : NULL;
	memset(spec, 0, sizeof(*spec));
	spec->argv = c->opt->argv;
	spec->log_path = p->log;
	spec->stdout_path = p->out;
	spec->stderr_path = p->err;
	spec->timeout_seconds = c->opt->timeout;
}

/* A run's "cost": where its processes' time went (issue 39). */
static json_t *run_cost_json(const struct run_events *ev)
{
	struct capture_run r = { .has_cost = 1, .injected_seconds = ev->injected_seconds };

	memcpy(r.cost_seconds, ev->cost_seconds, sizeof(r.cost_seconds));
	return capture_run_cost_json(&r);
}

/* The run's record, appended to capture.runs (and returned, borrowed). */
static json_t *run_record(struct profile_ctx *c, unsigned index, const char *variant,
			  const struct run_result *res, const char *hex, struct run_events *ev,
			  int gpu)
{
	char desc[300];
	json_t *rj = json_pack("{s:i, s:s, s:s, s:i, s:f, s:s, s:s}",
		       "index", index, "variant", variant,
		       "status", res->status == RUN_OK ? "ok" :
				 res->status == RUN_TIMEOUT ? "timeout" :
				 res->status == RUN_INTERRUPTED ? "interrupted" :
				 res->status == RUN_SIGNALED ? "killed" : "failed",
		       "exit_status", res->exit_code, "wall_seconds", res->wall_seconds,
		       "stdout_sha256", hex, "description", run_result_describe(res, desc, sizeof(desc)));

	json_object_set_new(rj, "log", json_own(capture_layout_run_log(NULL, index)));
	json_object_set_new(rj, "events", json_own(capture_layout_run_events(NULL, index)));
	json_object_set_new(rj, "stdout", json_own(capture_layout_run_stdout(NULL, index)));
	json_object_set_new(rj, "stderr", json_own(capture_layout_run_stderr(NULL, index)));
	if (gpu >= 0)
		json_object_set_new(rj, "gpu", json_integer(c->opt->gpus[gpu]));
	if (ev && json_array_size(ev->errors))
		json_object_set(rj, "errors", ev->errors);
	if (ev && ev->has_cost)
		json_object_set_new(rj, "cost", run_cost_json(ev));
	json_array_append_new(c->runs_json, rj);
	return rj;
}

int profile_run_program(struct profile_ctx *c, const char *variant, const struct run_request *req,
			struct run_events *ev, struct run_result *res, unsigned *run_index)
{
	struct run_paths p;
	struct run_request r;
	struct run_spec spec;
	char hex[65] = "";
	struct file_snapshot_spec snap = {
		.exclude = c->dir, .argv = c->opt->argv, .always = c->opt->compare_file,
	};
	struct file_snapshot before, after;
	struct run_output files;
	int ret, gpu = c->opt->nr_gpus ? 0 : -1;   /* one run at a time: the first GPU */
	json_t *rj;

	run_paths_init(c, c->run_index, &p);
	run_setup(c, req, &p, gpu, &r, &spec);
	/* the files the run creates or changes, for the output check */
	run_output_init(&files);
	file_snapshot_take(&before, &snap);
	ret = run_request_run(&r, &spec, res);
	file_snapshot_take(&after, &snap);
	if (!ret)
		file_snapshot_changes(&before, &after, snap.always, &files);
	if (!ret && ev)
		ret = run_events_load(ev, p.evfile);
	if (!ret)
		stdout_digest(c, p.out, hex);
	rj = run_record(c, c->run_index, variant, res, hex, ev, gpu);
	json_object_set_new(rj, "files", files_json(c, &files));
	if (after.truncated)
		json_object_set_new(rj, "files_walk_truncated", json_true());
	file_snapshot_release(&before);
	file_snapshot_release(&after);
	run_output_release(&files);
	keep_run(c);
	if (run_index)
		*run_index = c->run_index;
	c->run_index++;
	c->runs_done++;
	run_paths_release(&p);
	return ret;
}

int profile_run_programs(struct profile_ctx *c, size_t n, const char *const *variants,
			 const struct run_request *reqs, struct run_events *evs,
			 struct run_result *res)
{
	struct run_paths *p = xcalloc(n + 1, sizeof(*p));
	struct run_request *r = xcalloc(n + 1, sizeof(*r));
	struct run_spec *spec = xcalloc(n + 1, sizeof(*spec));
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		run_paths_init(c, c->run_index + (unsigned)i, &p[i]);
		run_setup(c, &reqs[i], &p[i], c->opt->nr_gpus ? (int)(i % c->opt->nr_gpus) : -1,
			  &r[i], &spec[i]);
	}
	ret = run_request_run_many(r, spec, res, n);
	for (i = 0; i < n; i++) {
		char hex[65] = "";
		json_t *rj;

		if (!ret && evs)
			ret = run_events_load(&evs[i], p[i].evfile);
		if (!ret)
			stdout_digest(c, p[i].out, hex);
		rj = run_record(c, c->run_index, variants[i], &res[i], hex, evs ? &evs[i] : NULL,
				c->opt->nr_gpus ? (int)(i % c->opt->nr_gpus) : -1);
		/* runs side by side may write the same files: theirs are not compared */
		json_object_set_new(rj, "files", json_array());
		json_object_set_new(rj, "files_compared", json_false());
		keep_run(c);
		c->run_index++;
		c->runs_done++;
		run_paths_release(&p[i]);
	}
	free(p);
	free(r);
	free(spec);
	return ret;
}

int profile_run_failed(struct profile_ctx *c, const char *what, const struct run_result *res)
{
	struct strbuf tail = STRBUF_INIT;
	char desc[300];
	char *log = capture_layout_run_log(c->dir, c->run_index - 1);
	int ret;

	tail_of_file(log, &tail, 12);
	ret = error_set(CA_E_PROGRAM, "the %s run of '%s' %s; its last output:\n%s\n(full log: %s)",
			what, c->opt->argv[0], run_result_describe(res, desc, sizeof(desc)),
			tail.len ? tail.buf : "(none)", log);
	strbuf_release(&tail);
	free(log);
	return ret;
}

/* ---- A/B pairs ---------------------------------------------------------- */

static int ab_run(void *data, const char *label, const struct run_request *req,
		  struct run_events *ev, struct run_result *res, struct run_output *out)
{
	struct profile_ctx *c = data;
	unsigned run;
	int ret;

	profile_progress(c, label);
	ret = profile_run_program(c, label, req, ev, res, &run);
	if (!ret)
		ret = profile_run_output(c, profile_run_record(c, run), out);
	if (!ret)
		profile_progress(c, label);
	return ret;
}

static int ab_failed(void *data, const char *label, const struct run_result *res)
{
	return profile_run_failed(data, label, res);
}

static int clearly_slower(const struct ab_result *ab, unsigned done, void *data)
{
	(void)data;
	return ab_clearly_slower(ab, done);
}

static int ab_runs(struct profile_ctx *c, const char *name, const struct run_request *base,
		   const struct run_request *adv, unsigned rounds, int screened, struct ab_result *ab)
{
	const char **kernels = xcalloc(c->nr_kernels + 1, sizeof(*kernels));
	struct ab_pairs pairs = {
		.baseline = base, .advice = adv, .rounds = rounds, .name = name,
		.kernels = kernels, .nr_kernels = c->nr_kernels,
		.output_check = &c->output_check,
		.run = ab_run, .failed = ab_failed, .data = c,
		.enough = screened ? clearly_slower : NULL,
	};
	size_t i;
	int ret;

	size_t np = c->nr_reference_runs;
	struct run_output *more = xcalloc(np + 1, sizeof(*more));
	const struct run_output **morep = xcalloc(np + 1, sizeof(*morep));

	for (i = 0; i < c->nr_kernels; i++)
		kernels[i] = c->kernels[i].name;
	/* the capture's baseline runs join the output check's baselines */
	for (i = 0; i < np; i++) {
		run_output_init(&more[i]);
		profile_run_output(c, profile_run_record(c, c->reference_runs[i]), &more[i]);
		morep[i] = &more[i];
	}
	pairs.more_baselines = morep;
	pairs.nr_more_baselines = np;
	if (!c->runs_planned_fixed)
		c->runs_planned = c->runs_done + 2 * rounds;
	ret = ab_pairs_run(&pairs, ab);
	for (i = 0; i < np; i++)
		run_output_release(&more[i]);
	free(more);
	free(morep);
	free(kernels);
	return ret;
}

int profile_ab_runs(struct profile_ctx *c, const char *name, const struct run_request *base,
		    const struct run_request *adv, unsigned rounds, struct ab_result *ab)
{
	return ab_runs(c, name, base, adv, rounds, 0, ab);
}

int profile_ab_runs_screened(struct profile_ctx *c, const char *name,
			     const struct run_request *base, const struct run_request *adv,
			     unsigned rounds, struct ab_result *ab)
{
	return ab_runs(c, name, base, adv, rounds, 1, ab);
}

/* ---- files -------------------------------------------------------------- */

/* The wall time of the profile's runs: the discovery run's (native), and
 * the mean of every run so far (a run under the injection library). */
static void run_times(struct profile_ctx *c, double *native, double *mean)
{
	size_t i, n = 0;
	double sum = 0;

	*native = NAN;
	for (i = 0; i < c->nr_runs; i++) {
		const struct capture_run *r = &c->runs[i];

		if (isnan(r->wall_seconds))
			continue;
		if (r->variant && !strcmp(r->variant, "discovery") && isnan(*native))
			*native = r->wall_seconds;
		sum += r->wall_seconds;
		n++;
	}
	*mean = n ? sum / (double)n : NAN;
}

size_t profile_budget_units(struct profile_ctx *c, unsigned first_runs, unsigned runs_each,
			    size_t units)
{
	double native, mean, limit, spent = profile_now() - c->started;

	run_times(c, &native, &mean);
	limit = budget_limit_seconds(c->opt->budget, native);
	while (units && !budget_allows(limit, spent, budget_estimate_seconds(
		first_runs + (unsigned)units * runs_each, mean)))
		units--;
	return units;
}

int profile_budget_allows(struct profile_ctx *c, const char *what, unsigned runs)
{
	double native, mean, limit, estimate;
	double spent = profile_now() - c->started - c->unbudgeted;

	run_times(c, &native, &mean);
	limit = budget_limit_seconds(c->opt->budget, native);
	estimate = budget_estimate_seconds(runs, mean);
	if (budget_allows(limit, spent, estimate))
		return 1;
	if (!c->budget_skipped) {
		c->budget_skipped = json_array();
		json_object_set_new(c->capture, "budget", json_pack("{s:f, s:f, s:f, s:o}", "factor",
				    c->opt->budget, "seconds", limit, "native_seconds", native,
				    "skipped", c->budget_skipped));
	}
	json_array_append_new(c->budget_skipped, json_pack("{s:s, s:i, s:f, s:f}", "step", what, "runs",
						 (int)runs, "estimate_seconds", estimate,
						 "spent_seconds", spent));
	profile_note(c, "%s was skipped: its %u program run%s would take about %.0f s, and "
		     "the profile has spent %.0f s of its budget of %.0f s (%gx the program's "
		     "native %.2g s); 'cacheadvise profile --budget 0 ...' measures it", what,
		     runs, runs == 1 ? "" : "s", estimate, spent, limit, c->opt->budget, native);
	return 0;
}

/*
 * The one writer's rule: capture.json holds only what its reader
 * (analysis/capture_model.h) accepts, so `report` never refuses what
 * `profile` wrote. A kernel whose measured numbers the reader refuses loses
 * them, with a note, never the whole profile (capture_settle_json); what is
 * still refused after that is a bug of the profile (CA_E_INTERNAL).
 */
static int capture_acceptable(struct profile_ctx *c, const char *path)
{
	struct capture_dropped *dropped = NULL;
	size_t nr = 0, i;
	int ret = capture_settle_json(c->capture, path, &dropped, &nr);

	for (i = 0; i < nr; i++)
		profile_note(c, "kernel %s is not analysed: a number measured for it is not one a "
			     "capture can hold (%s)", dropped[i].kernel, dropped[i].why);
	capture_dropped_free(dropped, nr);
	if (ret)
		return error_prefix(CA_E_INTERNAL, "the profile would write a capture it cannot "
				    "read back");
	return 0;
}

/*
 * Writes capture.json through the capture's one writer: the document as
 * the reader takes it (typed, validated), with what the profile cost so
 * far (the reports state it, issue 15), written by capture_to_json().
 * c->capture gets the same cost, so it stays what was written.
 */
static int write_through_model(struct profile_ctx *c, const char *path)
{
	struct capture cap;
	struct capture_cost cost;
	json_t *doc = NULL;
	int ret;

	capture_init(&cap);
	ret = capture_from_json(&cap, c->capture, CAPTURE_LAYOUT_CAPTURE);
	if (!ret) {
		capture_cost_compute(&cap, profile_now() - c->started, &cost);
		cap.cost = cost;
		cap.has_cost = 1;
		doc = capture_to_json(&cap);
		json_object_set_new(c->capture, "cost", capture_cost_to_json(&cap.cost));
	}
	capture_release(&cap);
	if (ret || !doc)
		return error_prefix(CA_E_INTERNAL, "the capture being written");
	ret = json_file_write(path, doc);
	json_decref(doc);
	return ret;
}

int profile_write_capture(struct profile_ctx *c, const char *status)
{
	char *path = capture_layout_file(c->dir, CAPTURE_LAYOUT_CAPTURE);
	int ret;

	json_object_set_new(c->capture, "status", json_string(status));
	ret = capture_acceptable(c, path);
	if (!ret)
		ret = write_through_model(c, path);
	free(path);
	return ret;
}

char *profile_write_substitutes(struct profile_ctx *c, const char *label, const struct plan *plan)
{
	char *dir = capture_layout_subst_dir(c->dir, label);
	size_t i;

	if (mkdir_p(dir)) {
		free(dir);
		return NULL;
	}
	for (i = 0; i < c->nr_modules; i++) {
		struct profile_module *m = &c->modules[i];
		char *path;
		int ret;

		if (!m->pm)
			continue;
		path = capture_layout_subst_ptx(dir, m->id);
		ret = patched_ptx_write_module(m->pm, m->id, plan, path, m->path);
		free(path);
		if (ret < 0) {
			free(dir);
			return NULL;
		}
	}
	return dir;
}
