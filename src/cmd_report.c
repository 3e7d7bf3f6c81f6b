#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/file_lock.h"
#include "base/output_guard.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/capture_write.h"
#include "emitters/report.h"
#include "emitters/report_input.h"
#include "src/cli.h"

/* `cacheadvise report DIR`: re-renders a finished capture; needs no GPU. */

enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

struct report_cmd {
	const char *dir;
	const char *format;
	const char *output;
	const char *source_root;
	const char *python;
	enum color_mode color;
	int all;
	int output_given;       /* -o, even -o - (output NULL: standard output) */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise report DIR [--format text|html|json|sarif] [-o FILE]\n"
		"                              [--source-root PATH] [--python PATH]\n"
		"                              [--color auto|always|never]\n"
		"       cacheadvise report DIR --all [--source-root PATH] [--python PATH]\n"
		"\n"
		"Re-renders the capture directory DIR (written by 'cacheadvise profile') from its\n"
		"capture.json and plan.json. Needs no GPU.\n"
		"\n"
		"  -f, --format FMT     text (default), html (one self-contained page), json\n"
		"                       (cacheadvise.report/1) or sarif (SARIF 2.1.0)\n"
		"  -o, --output FILE    write FILE (atomically) instead of standard output;\n"
		"                       '-' for standard output\n"
		"      --source-root P  where the program's sources are now, for source lines and\n"
		"                       hints (default: where they were when it was profiled)\n"
		"      --python PATH    the Python that rewrites Triton tl.load calls (default:\n"
		"                       $CACHEADVISE_PYTHON, else python3 from PATH; never a\n"
		"                       program the capture names)\n"
		"      --color WHEN     text colours: auto (a terminal, unless NO_COLOR is set),\n"
		"                       always or never\n"
		"      --all            re-write every file of DIR: plan.json, patched/*.ptx,\n"
		"                       report.txt, report.html, report.json, hints.sarif,\n"
		"                       source.patch, sources.json\n"
		"  -h, --help           show this help\n"
		"\n"
		"A capture whose status is \"incomplete\" (interrupted) renders under a banner.\n"
		"Exit status: 0 success, 1 usage error, 2 DIR is not a readable capture or the\n"
		"output cannot be written.\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise report cacheadvise-out/app-20261122-031000\n"
		"  cacheadvise report cacheadvise-out/app-20261122-031000 --format html -o report.html\n"
		"  cacheadvise report cacheadvise-out/app-20261122-031000 --format sarif -o app.sarif\n"
		"  cacheadvise report cacheadvise-out/app-20261122-031000 --all --source-root ~/src/app\n");
}

static int parse(struct report_cmd *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "source-root", required_argument, NULL, 'S' },
		{ "python", required_argument, NULL, 'P' },
		{ "color", required_argument, NULL, 'C' },
		{ "all", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->format = "text";
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->format = optarg;
			break;
		case 'o':
			if (cli_parse_output(optarg, &o->output))
				return 1;
			o->output_given = 1;
			break;
		case 'S':
			o->source_root = optarg;
			break;
		case 'P':
			o->python = optarg;
			break;
		case 'C':
			if (!strcmp(optarg, "auto"))
				o->color = COLOR_AUTO;
			else if (!strcmp(optarg, "always"))
				o->color = COLOR_ALWAYS;
			else if (!strcmp(optarg, "never"))
				o->color = COLOR_NEVER;
			else
				return cli_usage_error("--color takes auto, always or never, not '%s'",
						       optarg);
			break;
		case 'A':
			o->all = 1;
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
	if (cli_capture_dir_operand(argc, argv, optind, "cacheadvise report DIR", &o->dir))
		return 1;
	if (!report_format_find(o->format))
		return cli_usage_error("unknown format '%s' (text, html, json or sarif)", o->format);
	if (o->all && (o->output_given || strcmp(o->format, "text")))
		return cli_usage_error("--all writes every format into DIR: it takes no --format "
				       "or -o");
	return 0;
}

static int want_color(const struct report_cmd *o)
{
	const char *no_color = getenv("NO_COLOR");

	if (o->color == COLOR_ALWAYS)
		return 1;
	if (o->color == COLOR_NEVER || o->output)
		return 0;
	return isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

static const char source_input[] = "a source file";

static int report(const struct report_cmd *o)
{
	struct report_input_options iopt = { o->source_root, o->python };
	const struct report_format *fmt = report_format_find(o->format);
	struct report_options ropt = { want_color(o) };
	struct report_input in;
	struct strbuf sb = STRBUF_INIT;
	struct output_guard guard = OUTPUT_GUARD_INIT;
	struct file_lock lock = { -1 };
	size_t i;
	int ret;

	/* -o is checked against the capture before anything is read, and
	 * against the sources once they are known */
	if (o->output) {
		capture_write_guard(&guard, o->dir, fmt->file_name);
		ret = capture_write_check_output(&guard, o->output, o->dir);
		if (ret) {
			output_guard_release(&guard);
			return ret;
		}
	}
	/* --all: nothing read or written through a link planted in the
	 * capture, and one --all at a time, so that the files it writes
	 * (source.patch and sources.json) come from one run */
	if (o->all && (ret = capture_write_lock(&lock, o->dir)))
		return ret;
	ret = report_input_load(&in, o->dir, &iopt);
	if (!ret && o->output) {
		for (i = 0; i < in.nr_sources; i++)
			if (in.sources[i].file)
				output_guard_add_file(&guard, in.sources[i].read_path, source_input);
		ret = capture_write_check_output(&guard, o->output, o->dir);
	}
	output_guard_release(&guard);
	if (ret)
		goto out;
	/* The same checks for one format as for --all (issue 16). */
	ret = report_check_input(&in);
	if (ret)
		goto out;
	if (in.incomplete)
		cli_warn("the capture in '%s' is %s: rendering what it holds", o->dir, in.status);
	if (o->all) {
		/* Every file or none: all are written before any is renamed. */
		atomic_batch_begin();
		ret = capture_write_input(&in);
		if (ret)
			atomic_batch_abort();
		else
			ret = atomic_batch_commit();
		if (!ret)
			fprintf(stderr, "cacheadvise report: re-wrote the reports, plan, patched PTX "
				"and source patch in '%s'\n", o->dir);
		goto out;
	}
	ret = fmt->render(&in, &ropt, &sb);
	if (ret)
		goto out;
	if (o->output)
		ret = write_file_atomic(o->output, sb.buf, sb.len);
	else if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len)
		ret = error_set(CA_E_IO, "cannot write the report to standard output");
out:
	strbuf_release(&sb);
	report_input_release(&in);
	file_lock_release(&lock);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_cmd o;
	int ret = parse(&o, argc, argv);

	if (ret < 0)
		return 0;   /* --help */
	if (ret)
		return ret;
	ret = report(&o);
	return ret ? cli_fail(ret, NULL) : 0;
}
