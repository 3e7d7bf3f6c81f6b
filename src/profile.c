/*
 * `cacheadvise profile`: runs the program again and again under the
 * injection library and writes the capture directory (DESIGN.md "Files").
 *
 *   000 discovery   modules and kernels, GPU time of the program's own cubins
 *   baselines       unpatched PTX through the same JIT path, counters
 *   all_bypassed    every patchable load of the measured kernels no_allocate
 *   single i        only load i allocates: hit_i
 *   pair i,j        only i and j allocate: hit_{i,j}
 *   monitor         instrumented PTX: exact per-load requests/sectors/bytes
 * then analysis (analysis/advise.h), the files (emitters/), verification.
 */
#define _GNU_SOURCE
#include "src/profile.h"

#include <errno.h>
#include <libgen.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/advise.h"
#include "base/atomic_file.h"
#include "analysis/device_model.h"
#include "base/digest.h"
#include "base/error.h"
#include "base/json_file.h"
#include "analysis/plan.h"
#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "analysis/variants.h"
#include "base/xalloc.h"
#include "collectors/events.h"
#include "collectors/gpu.h"
#include "collectors/runner.h"
#include "src/cli.h"
#include "src/profile_steps.h"

char *profile_injection_library(void)
{
	char *path = xasprintf("%s/../lib/libcacheadvise_inject.so", cli_exe_dir());
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

void profile_note(struct profile_ctx *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(json_object_get(c->capture, "notes"), json_string(buf));
}

/* ---- progress --------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void profile_progress(struct profile_ctx *c, const char *label)
{
	double elapsed = now() - c->started;
	unsigned done = c->runs_done, total = c->runs_planned;
	int tty = isatty(2);

	if (total && done) {
		double eta = elapsed / done * (total > done ? total - done : 0);
		if (tty) {
			int width = 30, filled = (int)(width * done / (total ? total : 1));
			fprintf(stderr, "\r[%.*s%*s] %u/%u runs, %s, ETA %.0f s   ",
				filled, "##############################", width - filled, "",
				done, total, label, eta);
		} else {
			fprintf(stderr, "cacheadvise profile: run %u/%u done (%s), %.0f s elapsed, ETA %.0f s\n",
				done, total, label, elapsed, eta);
		}
	} else {
		fprintf(stderr, tty ? "\r%s   " : "cacheadvise profile: %s\n", label);
	}
	if (tty && total && done == total)
		fputc('\n', stderr);
}

/* ---- runs ------------------------------------------------------------- */

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

/*
 * SHA-256 of the run's standard output, without the lines --output-ignore
 * matches (a program that prints its timings still compares equal).
 */
static void stdout_digest(struct profile_ctx *c, const char *path, char hex[65])
{
	struct strbuf sb = STRBUF_INIT, kept = STRBUF_INIT;
	regex_t re;
	char *line, *next;

	hex[0] = '\0';
	if (strbuf_read_file(&sb, path, 0))
		return;
	if (!c->opt->output_ignore ||
	    regcomp(&re, c->opt->output_ignore, REG_EXTENDED | REG_NOSUB)) {
		digest_sha256_hex(sb.buf, sb.len, hex);
		strbuf_release(&sb);
		return;
	}
	for (line = sb.buf; *line; line = next) {
		char saved;
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		saved = *next;
		*next = '\0';
		if (regexec(&re, line, 0, NULL, 0))
			strbuf_addstr(&kept, line);
		*next = saved;
	}
	regfree(&re);
	digest_sha256_hex(kept.buf, kept.len, hex);
	strbuf_release(&kept);
	strbuf_release(&sb);
}

int profile_run_program(struct profile_ctx *c, const char *variant, char *const *env_extra,
			struct run_events *ev, struct run_result *res, json_t **run_json)
{
	char *log = xasprintf("%s/runs/%03u.log", c->dir, c->run_index);
	char *out = xasprintf("%s/runs/%03u.out", c->dir, c->run_index);
	char *evdir = xasprintf("%s/runs/%03u.d", c->dir, c->run_index);
	char *evfile = xasprintf("%s/events.jsonl", evdir);
	char *env[24];
	size_t n = 0, i;
	struct run_spec spec;
	char desc[300], hex[65] = "";
	int ret;
	json_t *rj;

	mkdir(evdir, 0777);
	env[n++] = xasprintf("CUDA_INJECTION64_PATH=%s", c->inject_path);
	env[n++] = xasprintf("CACHEADVISE_OUT=%s", evdir);
	for (i = 0; env_extra && env_extra[i] && n < 22; i++)
		env[n++] = xstrdup(env_extra[i]);
	env[n] = NULL;
	memset(&spec, 0, sizeof(spec));
	spec.argv = c->opt->argv;
	spec.env_add = env;
	spec.log_path = log;
	spec.stdout_path = out;
	spec.timeout_seconds = c->opt->timeout;
	ret = runner_run(&spec, res);
	for (i = 0; i < n; i++)
		free(env[i]);
	if (!ret && ev)
		ret = run_events_load(ev, evfile);
	if (!ret)
		stdout_digest(c, out, hex);
	rj = json_pack("{s:i, s:s, s:s, s:i, s:f, s:s, s:s}",
		       "index", c->run_index, "variant", variant,
		       "status", res->status == RUN_OK ? "ok" :
				 res->status == RUN_TIMEOUT ? "timeout" :
				 res->status == RUN_INTERRUPTED ? "interrupted" :
				 res->status == RUN_SIGNALED ? "killed" : "failed",
		       "exit_status", res->exit_code, "wall_seconds", res->wall_seconds,
		       "stdout_sha256", hex, "description", run_result_describe(res, desc, sizeof(desc)));
	json_object_set_new(rj, "log", json_sprintf("runs/%03u.log", c->run_index));
	json_object_set_new(rj, "events", json_sprintf("runs/%03u.d/events.jsonl", c->run_index));
	json_object_set_new(rj, "stdout", json_sprintf("runs/%03u.out", c->run_index));
	if (ev && json_array_size(ev->errors))
		json_object_set(rj, "errors", ev->errors);
	json_array_append_new(json_object_get(c->capture, "runs"), rj);
	if (run_json)
		*run_json = rj;
	c->run_index++;
	c->runs_done++;
	free(log);
	free(out);
	free(evdir);
	free(evfile);
	return ret;
}

/* Message for a run that failed: its status, its last lines, its log. */
int profile_run_failed(struct profile_ctx *c, const char *what, const struct run_result *res)
{
	struct strbuf tail = STRBUF_INIT;
	char desc[300];
	char *log = xasprintf("%s/runs/%03u.log", c->dir, c->run_index - 1);
	int ret;

	tail_of_file(log, &tail, 12);
	ret = error_set(CA_E_PROGRAM, "the %s run of '%s' %s; its last output:\n%s\n(full log: %s)",
			what, c->opt->argv[0], run_result_describe(res, desc, sizeof(desc)),
			tail.len ? tail.buf : "(none)", log);
	strbuf_release(&tail);
	free(log);
	return ret;
}

/* ---- the capture document -------------------------------------------- */

int profile_write_capture(struct profile_ctx *c, const char *status)
{
	char *path = xasprintf("%s/capture.json", c->dir);
	int ret;

	json_object_set_new(c->capture, "status", json_string(status));
	ret = json_file_write(path, c->capture);
	free(path);
	return ret;
}

static char *default_out_dir(const char *program)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	char *copy = xstrdup(program), *dir;

	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	dir = xasprintf("cacheadvise-out/%s-%s", basename(copy), stamp);
	free(copy);
	return dir;
}

static int make_dirs(struct profile_ctx *c)
{
	static const char *const subdirs[] = { "runs", "modules", "patched", "graphs" };
	size_t i;
	struct stat st;
	char *capture = xasprintf("%s/capture.json", c->dir);
	int exists = !stat(capture, &st);

	free(capture);
	if (exists)
		return error_set(CA_E_USAGE, "'%s' already holds a capture: choose another --out "
				 "directory or remove it", c->dir);
	if (mkdir_p(c->dir))
		return CA_E_IO;
	for (i = 0; i < ARRAY_SIZE(subdirs); i++) {
		char *p = xasprintf("%s/%s", c->dir, subdirs[i]);
		int ret = mkdir_p(p);
		free(p);
		if (ret)
			return ret;
	}
	return 0;
}

static json_t *device_json(const struct device_model *dm)
{
	json_t *d = device_model_to_json(dm);

	json_object_set_new(d, "source", json_string(device_model_source_name(dm->source)));
	return d;
}

static void free_ctx(struct profile_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nr_modules; i++) {
		free(c->modules[i].id);
		free(c->modules[i].path);
		free(c->modules[i].origin);
		ptx_module_free(c->modules[i].pm);
	}
	free(c->modules);
	for (i = 0; i < c->nr_kernels; i++)
		profile_kernel_release(&c->kernels[i]);
	free(c->kernels);
	json_decref(c->capture);
	device_model_release(&c->dm);
	free(c->dir);
	free(c->inject_path);
	free(c->program);
}

static void print_summary(struct profile_ctx *c)
{
	fprintf(stderr, "cacheadvise profile: capture written to %s (%u runs)\n", c->dir, c->run_index);
	fprintf(stderr, "  read it:    cacheadvise report %s   (or open %s/report.html)\n",
		c->dir, c->dir);
}

int profile_main(const struct profile_options *opt)
{
	struct profile_ctx c;
	int ret;
	char *resolved = NULL;
	size_t i;

	memset(&c, 0, sizeof(c));
	c.opt = opt;
	c.started = now();
	device_model_init(&c.dm);

	ret = runner_resolve_program(opt->argv[0], &resolved);
	if (ret)
		goto fail;
	c.program = resolved;
	ret = gpu_query(&c.dm);
	if (ret)
		goto fail;
	{
		/* gpu_query filled the driver's view; the model adds what was probed */
		struct device_model probed;
		device_model_init(&probed);
		ret = device_model_resolve(&probed, opt->device_file, c.dm.uuid);
		if (ret) {
			device_model_release(&probed);
			goto fail;
		}
		if (probed.source != DEVICE_MODEL_DEFAULTS)
			profile_merge_device(&c.dm, &probed);
		c.dm.source = probed.source;
		device_model_release(&probed);
	}
	c.inject_path = profile_injection_library();
	if (!c.inject_path) {
		ret = CA_E_INPUT;
		goto fail;
	}
	c.dir = opt->out_dir ? xstrdup(opt->out_dir) : default_out_dir(opt->argv[0]);
	ret = make_dirs(&c);
	if (ret)
		goto fail;

	c.capture = json_object();
	json_object_set_new(c.capture, "schema", json_string("cacheadvise.capture/1"));
	json_object_set_new(c.capture, "status", json_string("incomplete"));
	json_object_set_new(c.capture, "tool_version", json_string(CACHEADVISE_VERSION));
	{
		char stamp[32];
		time_t t = time(NULL);
		struct tm tm;
		json_t *args = json_array();
		char cwd[4096];
		size_t i;

		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_object_set_new(c.capture, "created", json_string(stamp));
		for (i = 1; opt->argv[i]; i++)
			json_array_append_new(args, json_string(opt->argv[i]));
		json_object_set_new(c.capture, "program",
			json_pack("{s:s, s:o, s:s}", "path", c.program, "args", args, "cwd",
				  getcwd(cwd, sizeof(cwd)) ? cwd : "."));
	}
	json_object_set_new(c.capture, "device", device_json(&c.dm));
	json_object_set_new(c.capture, "options",
		json_pack("{s:i, s:i, s:s, s:s, s:s?, s:f, s:i}", "top", opt->top, "max_loads",
			  opt->max_loads, "model", opt->model, "bypass_form", opt->bypass_form,
			  "kernels_regex", opt->kernels_regex, "timeout", opt->timeout,
			  "repeat", opt->repeat));
	json_object_set_new(c.capture, "modules", json_array());
	json_object_set_new(c.capture, "runs", json_array());
	json_object_set_new(c.capture, "kernels", json_array());
	json_object_set_new(c.capture, "notes", json_array());
	json_object_set_new(c.capture, "verification", json_null());
	ret = profile_write_capture(&c, "incomplete");
	if (ret)
		goto fail;

	ret = profile_discover(&c);
	if (ret)
		goto stop;
	if (!c.nr_kernels) {
		ret = profile_write_capture(&c, "complete");
		goto done;
	}
	/*
	 * A kernel with more loads than --max-loads: the monitor run goes
	 * first, so the loads measured are the ones with the most traffic.
	 */
	for (i = 0; i < c.nr_kernels && !c.kernels[i].left_out; i++)
		;
	if (i < c.nr_kernels) {
		if (!opt->no_monitor) {
			ret = profile_monitor(&c);
			if (ret)
				goto stop;
		}
		profile_choose_measured_loads(&c);
	}
	ret = profile_capture_variants(&c);
	if (ret)
		goto stop;
	if (!opt->no_monitor && !c.monitored) {
		ret = profile_monitor(&c);
		if (ret)
			goto stop;
	}
	profile_fill_kernels(&c);
	ret = profile_write_capture(&c, "complete");
	if (ret)
		goto stop;
	ret = profile_analyse_and_emit(&c);
	if (ret)
		goto stop;
	profile_note_advised(&c);
	if (!opt->no_verify) {
		ret = profile_verify(&c);
		if (ret)
			goto stop;
		ret = profile_analyse_and_emit(&c);
		if (ret)
			goto stop;
	}
	if (!opt->no_verify && !opt->no_l2) {
		ret = profile_l2(&c);
		if (!ret)
			ret = profile_analyse_and_emit(&c);
		if (ret)
			goto stop;
	}
	if (opt->oracle_max) {
		ret = profile_oracle(&c);
		if (!ret)
			ret = profile_analyse_and_emit(&c);
		if (ret)
			goto stop;
	}
done:
	print_summary(&c);
	free_ctx(&c);
	return ret ? cli_fail(ret, NULL) : 0;
stop:
	/* Keep what was measured: the capture says it is incomplete. */
	if (c.capture) {
		json_array_append_new(json_object_get(c.capture, "notes"),
				      json_sprintf("stopped: %s", error_message()));
		profile_write_capture(&c, "incomplete");
		fprintf(stderr, "cacheadvise profile: the capture in %s is incomplete\n", c.dir);
	}
	if (runner_interrupted()) {
		free_ctx(&c);
		return 130;
	}
fail:
	ret = cli_fail(ret, NULL);
	free_ctx(&c);
	return ret;
}
