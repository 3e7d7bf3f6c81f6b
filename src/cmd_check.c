#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/ab_verdict.h"
#include "analysis/device_model.h"
#include "analysis/ptx.h"
#include "analysis/rebuild_match.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/events.h"
#include "collectors/gpu.h"
#include "collectors/intake.h"
#include "collectors/run_request.h"
#include "collectors/runner.h"
#include "emitters/capture_layout.h"
#include "emitters/report.h"
#include "emitters/report_input.h"
#include "src/cli.h"

/*
 * `cacheadvise check DIR -- ./rebuilt-app ARGS`: closes the loop on a
 * program rebuilt from the capture's source.patch. First, statically, the
 * rebuilt binary's PTX must carry every advised load's form (each load
 * matched by kernel, source line and order: analysis/rebuild_match.h).
 * Then, on a GPU, the rebuilt program is timed against the capture's
 * baseline (the original program, its unpatched PTX substituted, as
 * verification does), alternating, and the advice is kept or lost.
 */

struct check_cmd {
	const char *dir;
	int static_only;
	unsigned repeat;
	double timeout;
	char **argv;                /* the rebuilt program and its arguments */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise check DIR [--static] [--repeat N] [--timeout SEC] -- PROGRAM [ARGS...]\n"
		"\n"
		"Checks a program rebuilt after 'cacheadvise apply DIR':\n"
		"  1. statically, that its kernels carry the advised load forms (every advised\n"
		"     load of DIR's plan, found by kernel, source line and order within the\n"
		"     line: found, wrong form or missing); needs no GPU;\n"
		"  2. on a GPU, its kernel time against the capture's baseline (the original\n"
		"     program, unpatched PTX through the injection library, with the capture's\n"
		"     arguments), in alternating rounds: the advice is kept or lost.\n"
		"Give the rebuilt program the arguments the capture ran with.\n"
		"\n"
		"      --static      only the static check (no GPU, the program is not run)\n"
		"      --repeat N    A/B rounds (default 5)\n"
		"      --timeout SEC per run (default 300)\n"
		"  -h, --help        show this help\n"
		"\n"
		"Exit status: 0 the advised forms are there (and the speedup kept); 1 usage\n"
		"error; 2 DIR is not a capture, the program cannot be read, or an advised load\n"
		"is missing or has the wrong form; 3 a program run failed; 4 no usable GPU\n"
		"(after the static check); 5 the rebuilt program lost the speedup.\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise check cacheadvise-out/app-20261122-031000 --static -- ./app\n"
		"  cacheadvise check cacheadvise-out/app-20261122-031000 -- ./app --n 1000000\n");
}

static int parse(struct check_cmd *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "static", no_argument, NULL, 's' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end;

	memset(o, 0, sizeof(*o));
	o->repeat = 5;
	o->timeout = 300;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->static_only = 1;
			break;
		case 'r': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || !v || v > 1000)
				return cli_usage_error("--repeat needs a number from 1 to 1000, not '%s'",
						       optarg);
			o->repeat = (unsigned)v;
			break;
		}
		case 't':
			o->timeout = strtod(optarg, &end);
			if (*end || !*optarg || !(o->timeout > 0))
				return cli_usage_error("--timeout needs a number of seconds, not '%s'",
						       optarg);
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("no capture directory: cacheadvise check DIR -- PROGRAM");
	o->dir = argv[optind++];
	/* getopt moved the options before "--" ahead of DIR and PROGRAM. */
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc)
		return cli_usage_error("no program given: cacheadvise check %s -- ./rebuilt-app",
				       o->dir);
	o->argv = argv + optind;
	return 0;
}

/* The capture's PTX of module id, parsed (caller frees), or NULL. */
static struct ptx_module *capture_module(const struct report_input *in, const char *id)
{
	json_t *mods = json_object_get(in->capture, "modules"), *m;
	struct ptx_module *pm = NULL;
	size_t i;

	json_array_foreach(mods, i, m) {
		const char *mid = json_string_value(json_object_get(m, "id"));
		const char *ptx = json_string_value(json_object_get(m, "ptx"));
		struct strbuf sb = STRBUF_INIT;
		char *path;

		if (!mid || !ptx || strcmp(mid, id))
			continue;
		path = xasprintf("%s/%s", in->dir, ptx);
		if (!strbuf_read_file(&sb, path, 0) && ptx_parse(path, sb.buf, sb.len, &pm))
			pm = NULL;
		error_clear();
		strbuf_release(&sb);
		free(path);
		break;
	}
	return pm;
}

static const struct ptx_function *rebuilt_function(const struct intake *rb, const char *name)
{
	size_t i;

	for (i = 0; i < rb->nr_modules; i++) {
		const struct ptx_function *f = rb->modules[i].ptx ?
			ptx_module_find(rb->modules[i].ptx, name) : NULL;
		if (f)
			return f;
	}
	return NULL;
}

struct static_result {
	size_t checked, carried, lost, left_out;
};

/*
 * Prints one line per advised load of the plan: found / wrong form /
 * missing, with where it was looked for. Loads the patch does not rewrite
 * (their hint says why) are expected to be left as they were.
 */
static int static_check(const struct report_input *in, const struct intake *rb,
			const char *diff, struct static_result *sr)
{
	size_t i, j;

	memset(sr, 0, sizeof(*sr));
	printf("STATIC CHECK (the rebuilt binary's PTX)\n");
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		const struct ptx_function *fr = rebuilt_function(rb, k->name), *fo;
		struct ptx_module *om = NULL;
		char *label = report_kernel_label(k);

		if (!k->nr_changes) {
			free(label);
			continue;
		}
		om = capture_module(in, k->module);
		fo = om ? ptx_module_find(om, k->name) : NULL;
		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			struct rebuild_check c;
			enum load_action action;
			int in_patch = l->hint.status == SOURCE_HINT_REWRITTEN;

			if (!l->changes || !l->action || load_action_parse(l->action, &action))
				continue;
			sr->checked++;
			if (!in_patch) {
				sr->left_out++;
				printf("  %-16s load %-3u %-24s not in source.patch: %s\n", label,
				       l->ordinal, l->action, l->hint.message ? l->hint.message : "?");
				continue;
			}
			if (!fr) {
				sr->lost++;
				printf("  %-16s load %-3u %-24s missing: the rebuilt binary has no kernel "
				       "%s with PTX\n", label, l->ordinal, l->action, k->name);
				continue;
			}
			if (!fo) {
				sr->lost++;
				printf("  %-16s load %-3u %-24s cannot tell: the capture's PTX of module %s "
				       "is not readable\n", label, l->ordinal, l->action, k->module);
				continue;
			}
			rebuild_match_load(fo, l->ordinal, fr, diff, action, &c);
			if (c.status == REBUILD_FOUND)
				sr->carried++;
			else
				sr->lost++;
			printf("  %-16s load %-3u %-24s %s", label, l->ordinal, l->action,
			       rebuild_status_name(c.status));
			if (c.found)
				printf(" (%s, PTX line %u", c.found->opcode, c.found->ptx_line);
			else
				printf(" (");
			printf("%sline %d of the patched source, load %zu of that line)\n",
			       c.found ? "; " : "", c.line, c.order);
		}
		ptx_module_free(om);
		free(label);
	}
	printf("  %zu advised load%s: %zu carry the advised form, %zu do not, %zu not in "
	       "source.patch\n", sr->checked, sr->checked == 1 ? "" : "s", sr->carried, sr->lost,
	       sr->left_out);
	return 0;
}

/* ---- the timed check ------------------------------------------------------ */

struct timed {
	const char *tmp;
	const char *inject;
	char *original;             /* the capture's program (resolved) */
	char **orig_argv;
	char *rebuilt;
	char *const *rebuilt_argv;
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
	memset(&spec, 0, sizeof(spec));
	spec.path = adv ? t->rebuilt : t->original;
	spec.argv = adv ? t->rebuilt_argv : t->orig_argv;
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

static int remove_entry(const char *p, const struct stat *s, int flag, struct FTW *f)
{
	(void)s; (void)flag; (void)f;
	return remove(p);
}

/*
 * Times the rebuilt program against the capture's baseline. Returns 0
 * with *kept set, or CA_E_* (CA_E_NOGPU without a GPU).
 */
static int timed_check(const struct check_cmd *o, const struct report_input *in, int *kept)
{
	json_t *prog = json_object_get(in->capture, "program"), *args, *a;
	const char *path = json_string_value(json_object_get(prog, "path"));
	const char **kernels = NULL;
	struct device_model dm;
	struct run_request base = { .timing = 1 }, adv = { .timing = 1 };
	struct ab_pairs pairs;
	struct ab_result ab;
	struct timed t;
	char tmpl[] = "/tmp/cacheadvise-check-XXXXXX", *modules = NULL;
	size_t i, n = 0, argc = 0;
	int ret;

	memset(&t, 0, sizeof(t));
	memset(&ab, 0, sizeof(ab));
	device_model_init(&dm);
	ret = gpu_query(&dm);
	device_model_release(&dm);
	if (ret)
		return ret;
	if (!path)
		return error_set(CA_E_INPUT, "'%s/capture.json' records no program: cannot time the "
				 "baseline", o->dir);
	ret = runner_resolve_program(path, &t.original);
	if (ret)
		return error_prefix(ret, "the capture's program (the baseline)");
	ret = runner_resolve_program(o->argv[0], &t.rebuilt);
	if (ret)
		goto out;
	args = json_object_get(prog, "args");
	t.orig_argv = xcalloc(json_array_size(args) + 2, sizeof(*t.orig_argv));
	t.orig_argv[argc++] = xstrdup(path);
	json_array_foreach(args, i, a)
		if (json_is_string(a))
			t.orig_argv[argc++] = xstrdup(json_string_value(a));
	t.rebuilt_argv = o->argv;
	t.timeout = o->timeout;
	t.inject = run_request_injection_library(cli_exe_dir());
	if (!t.inject) {
		ret = CA_E_INPUT;
		goto out;
	}
	if (!mkdtemp(tmpl)) {
		ret = error_set(CA_E_IO, "cannot create a temporary directory: %s", strerror(errno));
		goto out;
	}
	t.tmp = tmpl;
	/* The baseline runs the capture's unpatched PTX, as verification did. */
	modules = xasprintf("%s/modules", o->dir);
	base.subst_dir = modules;
	for (i = 0; i < in->nr_kernels; i++) {
		if (!in->kernels[i].nr_changes)
			continue;
		kernels = xrealloc(kernels, (n + 1) * sizeof(*kernels));
		kernels[n++] = in->kernels[i].name;
	}
	memset(&pairs, 0, sizeof(pairs));
	pairs.baseline = &base;
	pairs.advice = &adv;
	pairs.rounds = o->repeat;
	pairs.name = "check";
	pairs.kernels = kernels;
	pairs.nr_kernels = n;
	pairs.run = timed_run;
	pairs.failed = timed_failed;
	pairs.data = &t;
	runner_install_interrupt_handler();
	ret = ab_pairs_run(&pairs, &ab);
	if (ret)
		goto out;
	printf("\nTIMED CHECK (%u alternating rounds: the capture's program with its unpatched "
	       "PTX, then the rebuilt program as built)\n", o->repeat);
	*kept = 1;
	for (i = 0; i < n; i++) {
		int k_kept;
		json_t *v = ab_verdict(&ab.base_ns[i * o->repeat], &ab.adv_ns[i * o->repeat],
				       o->repeat, &ab, &k_kept);
		double med = json_number_value(json_object_get(json_object_get(v, "speedup"),
							       "median"));
		double noise = json_number_value(json_object_get(v, "noise"));

		printf("  %-40s %.3fx median kernel speedup, baseline spread %.1f%%: %s\n",
		       kernels[i], med, 100.0 * noise, k_kept ? "kept" : "lost");
		printf("RESULT kernel=%s rebuilt_speedup=%.4f kept=%d\n", kernels[i], med, k_kept);
		*kept &= k_kept;
		json_decref(v);
	}
	{
		json_t *pj = ab_program_json(&ab);
		double ps = json_number_value(json_object_get(json_object_get(pj, "gpu_speedup"),
							      "median"));
		double want = report_program_speedup(in);

		printf("  program GPU time: %.3fx (advice via run --plan, verified: %.3fx)%s\n", ps,
		       want, isnan(want) || isnan(ps) ? "" :
		       ps >= 0.95 * want ? ": the rebuilt program delivers it" :
		       ": the rebuilt program falls short of it");
		printf("RESULT program rebuilt_speedup=%.4f plan_speedup=%.4f kept=%d\n", ps, want,
		       *kept);
		json_decref(pj);
	}
out:
	if (t.tmp && nftw(t.tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS))
		cli_warn("cannot remove the temporary directory '%s'", t.tmp);
	ab_result_release(&ab);
	for (i = 0; i < argc; i++)
		free(t.orig_argv[i]);
	free(t.orig_argv);
	free(t.original);
	free(t.rebuilt);
	free((char *)t.inject);
	free(modules);
	free(kernels);
	return ret;
}

static int check(const struct check_cmd *o)
{
	struct report_input_options iopt = { NULL };
	struct report_input in;
	struct intake rb;
	struct strbuf diff = STRBUF_INIT;
	struct static_result sr;
	char *patch_path = capture_layout_file(o->dir, CAPTURE_LAYOUT_SOURCE_PATCH);
	int ret, kept = 0;

	intake_init(&rb);
	ret = report_input_load(&in, o->dir, &iopt);
	if (!ret)
		ret = report_check_input(&in);
	if (ret)
		goto out;
	if (access(patch_path, R_OK) || strbuf_read_file(&diff, patch_path, 0)) {
		error_clear();
		cli_warn("'%s' has no source.patch: loads are looked for at their captured lines",
			 o->dir);
	}
	ret = intake_read_file(&rb, o->argv[0], 0);
	if (ret)
		goto out;
	static_check(&in, &rb, diff.len ? diff.buf : NULL, &sr);
	if (!sr.checked) {
		printf("  the plan changes no load: nothing to check\n");
		goto out;
	}
	if (sr.lost) {
		ret = error_set(CA_E_INPUT, "%zu advised load%s of source.patch %s not in the rebuilt "
				"'%s' in the advised form: was it rebuilt from the patched sources, with "
				"-lineinfo?", sr.lost, sr.lost == 1 ? "" : "s",
				sr.lost == 1 ? "is" : "are", o->argv[0]);
		goto out;
	}
	if (o->static_only)
		goto out;
	ret = timed_check(o, &in, &kept);
	if (ret == CA_E_NOGPU) {
		ret = error_prefix(ret, "the static check above passed; timing the rebuilt program "
				   "needs a GPU");
		goto out;
	}
	if (!ret && !kept) {
		printf("  the rebuilt program lost the advice's speedup\n");
		ret = 5;
	}
out:
	if (cli_finish_stdout(0) && !ret)
		ret = CA_E_IO;
	intake_release(&rb);
	report_input_release(&in);
	strbuf_release(&diff);
	free(patch_path);
	return ret;
}

int cmd_check(int argc, char **argv)
{
	struct check_cmd o;
	int ret = parse(&o, argc, argv);

	if (ret < 0)
		return 0;   /* --help */
	if (ret)
		return ret;
	ret = check(&o);
	if (ret == 5)
		return 5;
	return ret ? cli_fail(ret, NULL) : 0;
}
