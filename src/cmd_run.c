#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/path.h"
#include "analysis/plan.h"
#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/events.h"
#include "collectors/gpu.h"
#include "collectors/intake.h"
#include "collectors/run_request.h"
#include "collectors/runner.h"
#include "emitters/patched_ptx.h"
#include "src/cli.h"

/*
 * `cacheadvise run --plan PLAN.json -- PROGRAM [ARGS...]`: the program runs
 * with the plan's load actions (its modules' PTX patched and substituted by
 * the injection library) and its persisting-L2 windows, no rebuild. The
 * modules come from the program file itself (intake); modules the program
 * loads at run time from elsewhere are taken from a first, plain run.
 */

struct run_options {
	const char *plan_path;
	const char *keep_dir;
	char **argv;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise run --plan PLAN.json [--keep DIR] [--] PROGRAM [ARGS...]\n"
		"\n"
		"Runs PROGRAM with the plan applied: the listed loads get their cache\n"
		"operators (patched PTX substituted at load time) and the plan's persisting\n"
		"L2 windows are set on the kernels they name. No rebuild is needed.\n"
		"Exits with the program's own exit status.\n"
		"\n"
		"  -p, --plan FILE   the plan (plan.json of a capture, or written by hand)\n"
		"      --keep DIR    keep the patched PTX and the run's events in DIR\n"
		"  -h, --help        this text\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise run --plan cacheadvise-out/app-20261122-031000/plan.json -- ./app\n"
		"  cacheadvise run --plan my-plan.json --keep /tmp/applied ./app --size 4096\n");
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "plan", required_argument, NULL, 'p' },
		{ "keep", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct run_options opt = { 0 };
	struct device_model dm;
	struct plan plan;
	struct intake in;
	struct run_result res;
	struct run_spec spec;
	struct run_events ev;
	struct run_request req = { 0 };
	char *program = NULL, *inject = NULL, *dir = NULL, *windows = NULL, *evdir = NULL;
	unsigned arch = 0;
	size_t patched = 0, i;
	int c, ret, status = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': opt.plan_path = optarg; break;
		case 'k': opt.keep_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		case ':': return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return cli_usage_error("unknown option '-%c'", optopt);
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!opt.plan_path)
		return cli_usage_error("--plan PLAN.json is required");
	if (optind >= argc)
		return cli_usage_error("no program given: cacheadvise run --plan PLAN.json -- ./app");
	opt.argv = argv + optind;

	plan_init(&plan);
	intake_init(&in);
	device_model_init(&dm);
	run_events_init(&ev);
	ret = plan_load_file(&plan, opt.plan_path);
	if (ret)
		goto fail;
	ret = runner_resolve_program(opt.argv[0], &program);
	if (ret)
		goto fail;
	ret = gpu_query(&dm);
	if (ret)
		goto fail;
	if (dm.cc) {
		unsigned major = 0, minor = 0;
		if (sscanf(dm.cc, "%u.%u", &major, &minor) == 2)
			arch = major * 10 + minor;
	}
	inject = run_request_injection_library(cli_exe_dir());
	if (!inject) {
		ret = CA_E_INPUT;
		goto fail;
	}
	ret = intake_read_file(&in, program, arch);
	if (ret) {
		/* A program with no device code of its own may load modules at run time. */
		intake_release(&in);
		intake_init(&in);
		ret = 0;
	}
	/* kernels compiled at run time (Triton's cache): the plan's modules found there */
	if (!ret) {
		size_t nr_ids;
		const char **ids = plan_module_ids(&plan, &nr_ids);

		ret = intake_read_triton_modules(&in, ids, nr_ids, arch);
		free(ids);
	}
	if (ret)
		goto fail;
	if (opt.keep_dir) {
		dir = xstrdup(opt.keep_dir);
		ret = mkdir_p(dir);
	} else {
		char tmpl[] = "/tmp/cacheadvise-run-XXXXXX";
		if (!mkdtemp(tmpl))
			ret = error_set(CA_E_IO, "cannot create a temporary directory: %s", strerror(errno));
		else
			dir = xstrdup(tmpl);
	}
	if (ret)
		goto fail;
	ret = patched_ptx_write_intake(&in, &plan, dir, &patched);
	if (!ret)
		ret = patched_ptx_write_l2_windows(&plan, dir, &windows);
	if (ret)
		goto fail;
	if (!patched && !windows)
		cli_warn("the plan changes nothing in the modules of '%s' (module ids or kernel "
			 "names do not match): the program runs as it is", opt.argv[0]);
	evdir = xasprintf("%s/events", dir);
	req.inject_path = inject;
	req.events_dir = evdir;
	req.subst_dir = dir;
	req.l2_windows = windows;
	memset(&spec, 0, sizeof(spec));
	spec.path = program;
	spec.argv = opt.argv;   /* argv[0] as the user typed it */
	spec.inherit_stdio = 1;
	runner_install_interrupt_handler();
	ret = run_request_run(&req, &spec, &res);
	if (ret)
		goto fail;
	{
		char *evpath = run_request_events_file(evdir);
		run_events_load(&ev, evpath);
		free(evpath);
		for (i = 0; i < ev.nr_modules; i++)
			if (ev.modules[i].substitute_error)
				cli_warn("module %s: the driver rejected the patched PTX (%s); it ran unpatched",
					 ev.modules[i].id, ev.modules[i].substitute_error);
		for (i = 0; i < json_array_size(ev.errors); i++)
			cli_warn("%s", json_string_value(json_array_get(ev.errors, i)));
	}
	switch (res.status) {
	case RUN_OK: status = 0; break;
	case RUN_FAILED: status = res.exit_code; break;
	case RUN_SIGNALED: status = 128 + res.signal; break;
	case RUN_INTERRUPTED: status = 130; break;
	case RUN_TIMEOUT: status = 3; break;
	case RUN_NOT_STARTED:
		ret = error_set(CA_E_PROGRAM, "%s", res.start_error);
		goto fail;
	}
	goto out;
fail:
	status = cli_fail(ret, NULL);
out:
	if (dir && !opt.keep_dir && path_remove_tree(dir))
		cli_warn("cannot remove the temporary directory '%s'", dir);
	run_events_release(&ev);
	device_model_release(&dm);
	intake_release(&in);
	plan_release(&plan);
	free(program);
	free(inject);
	free(dir);
	free(evdir);
	free(windows);
	return status;
}
