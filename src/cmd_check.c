#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "collectors/rebuild_timing.h"
#include "emitters/rewrite/rebuild_check.h"
#include "emitters/rewrite/python_rewrite.h"
#include "emitters/rewrite/rebuild_copy.h"
#include "emitters/report.h"
#include "base/strbuf.h"
#include "src/cli.h"

/*
 * `cacheadvise check DIR -- ./rebuilt-app ARGS`: closes the loop on a
 * program rebuilt from the capture's source.patch, statically
 * (emitters/rewrite/rebuild_check.h), then timed on a GPU (collectors/rebuild_timing.h).
 */

struct check_cmd {
	const char *dir;
	int static_only;
	const char *source_root;
	const char *python;
	const char *baseline;       /* --baseline: the original program, as typed */
	const char *build;          /* --build: rebuild in a private copy with this command */
	int in_copy;                /* --in-copy (or --build): the program patched in a copy */
	struct rebuild_timing_options t; /* --repeat, --timeout, the program and its arguments */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise check DIR [--static] [--source-root PATH] [--python PATH]\n"
		"                         [--baseline ORIGINAL] [--repeat N] [--timeout SEC]\n"
		"                         -- PROGRAM [ARGS...]\n"
		"\n"
		"Checks a program rebuilt after 'cacheadvise apply DIR':\n"
		"  1. statically, that its kernels carry the advised load forms (every advised\n"
		"     load of DIR's plan, found by kernel, source line and order within the\n"
		"     line: found, wrong form or missing); needs no GPU;\n"
		"  2. on a GPU, its kernel time against the original program (--baseline,\n"
		"     with the capture's unpatched PTX through the injection library), in\n"
		"     alternating rounds: the advice is kept or lost.\n"
		"Give the rebuilt program the arguments the capture ran with. The program a\n"
		"capture names is never run (docs/security.md): name the original yourself.\n"
		"A Python program's kernels are read from Triton's cache: the compiles it\n"
		"loads (it is run once to see them, unless --static), else those carrying the\n"
		"advised forms; where that cannot be told, the output says so.\n"
		"\n"
		"      --static      only the static check (no GPU, the program is not run)\n"
		"      --source-root P  where the sources are now, as given to apply (default:\n"
		"                    where the line info says)\n"
		"      --baseline CMD  the original program to time against: a path, run with\n"
		"                    PROGRAM's arguments, or a command split at spaces\n"
		"                    ('python3 orig.py 4096'); needed unless --static\n"
		"      --python PATH the Python that reads Triton sources (default:\n"
		"                    $CACHEADVISE_PYTHON, else python3 from PATH)\n"
		"      --build CMD   check PROGRAM as CMD (sh -c) builds it in a private copy\n"
		"                    of the sources with source.patch applied (the original\n"
		"                    is then the baseline); --in-copy: no build (Triton)\n"
		"      --repeat N    A/B rounds (default 5)\n"
		"      --timeout SEC per run (default 300)\n"
		"  -h, --help        show this help\n"
		"\n"
		"Exit status: 0 the advised forms are there (and the speedup kept); 1 usage\n"
		"error; 2 DIR is not a capture, the program cannot be read, or an advised load\n"
		"is missing or has the wrong form; 3 a run (or the --build) failed; 4 no GPU\n"
		"(after the static check); 5 the rebuilt program lost the speedup.\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise check cacheadvise-out/app-20261122-031000 --static -- ./app\n"
		"  cacheadvise check cacheadvise-out/app-20261122-031000 --baseline ./app.orig \\\n"
		"      -- ./app --n 1000000\n");
}

static int parse(struct check_cmd *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "static", no_argument, NULL, 's' },
		{ "source-root", required_argument, NULL, 'S' },
		{ "python", required_argument, NULL, 'P' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "build", required_argument, NULL, 'B' },
		{ "in-copy", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->t.repeat = 5;
	o->t.timeout = 300;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->static_only = 1;
			break;
		case 'S':
			o->source_root = optarg;
			break;
		case 'P':
			o->python = optarg;
			break;
		case 'b':
			if (!*optarg)
				return cli_usage_error("--baseline needs the original program");
			o->baseline = optarg;
			break;
		case 'B':
			if (!*optarg)
				return cli_usage_error("--build needs the command that builds the "
						       "program");
			o->build = optarg;
			o->in_copy = 1;
			break;
		case 'c':
			o->in_copy = 1;
			break;
		case 'r': {
			unsigned long v;

			if (cli_parse_uint(optarg, "--repeat", 1, 1000, "a number from 1 to 1000", &v))
				return 1;
			o->t.repeat = (unsigned)v;
			break;
		}
		case 't':
			if (cli_parse_timeout(optarg, "--timeout", &o->t.timeout))
				return 1;
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
	o->t.argv = argv + optind;
	if (o->in_copy && o->static_only && python_program(o->t.argv[0]))
		return cli_usage_error("a Triton program compiles its patched .py when it runs: "
				       "--in-copy or --build needs the timed check (leave --static out)");
	if (!o->static_only && !o->baseline && !o->in_copy)
		return cli_usage_error("the timed check needs the original program to time against: "
				       "--baseline ORIGINAL (or --static for the static check alone)");
	return 0;
}

static int check(struct check_cmd *o)
{
	struct rebuild_input ri;
	struct rebuild_check_counts sr;
	struct rebuild_copy rc;
	struct strbuf text = STRBUF_INIT;
	char *const *original = o->t.argv, *tmp_left = NULL;
	int ret = 0;

	memset(&rc, 0, sizeof(rc));
	memset(&ri, 0, sizeof(ri));
	/* --build / --in-copy: the checks look at the program in the copy */
	if (o->in_copy && !(ret = rebuild_copy_make_built(o->dir, o->t.argv, o->python, o->build,
							     o->t.timeout, &rc, &text))) {
		fputs(text.buf, stdout);
		strbuf_setlen(&text, 0);
		rebuild_copy_timing(&rc, &o->t);
		o->source_root = rc.sources;   /* the sources the patch applies to */
	}
	if (ret)
		goto out;
	ret = rebuild_input_load(&ri, o->dir, o->t.rebuilt_path ? o->t.rebuilt_path :
				 o->t.argv[0], o->source_root, o->python);

	if (ri.no_patch)
		cli_warn("'%s' has no source.patch: loads are looked for at their captured lines",
			 o->dir);
	o->t.dir = o->dir;
	o->t.exe_dir = cli_exe_dir();
	if (!ret && ri.python)   /* its Triton compiles, as the rebuilt program loads them */
		ret = rebuild_input_run_triton(&ri, o->static_only ? NULL : &o->t, &tmp_left);
	if (ret)
		goto out;
	if (tmp_left)
		cli_warn("cannot remove the temporary directory '%s'", tmp_left);
	free(tmp_left);
	tmp_left = NULL;
	rebuild_check_static_printable(&ri, &sr, &text);
	fputs(text.buf, stdout);
	if (!sr.checked)
		goto out;
	if ((ret = rebuild_check_verdict(&sr, o->t.argv[0])) || o->static_only)
		goto out;
	strbuf_setlen(&text, 0);
	ret = rebuild_check_timed(&ri, &o->t, o->baseline, original, &text, &tmp_left);
	fputs(text.buf, stdout);
out:
	if (cli_finish_stdout(0) && !ret)
		ret = CA_E_IO;
	rebuild_input_release(&ri);
	strbuf_release(&text);
	rebuild_copy_release(&rc);
	if (tmp_left || rc.tmp_left)
		cli_warn("cannot remove the temporary directory '%s'", tmp_left ? tmp_left :
			 rc.tmp_left);
	free(tmp_left);
	free(rc.tmp_left);
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
