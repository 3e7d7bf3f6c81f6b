#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_file.h"
#include "base/module_id.h"
#include "base/output_guard.h"
#include "base/xalloc.h"
#include "analysis/plan.h"
#include "analysis/ptx_instrument.h"
#include "base/strbuf.h"
#include "emitters/ptx_patch.h"
#include "src/cli.h"

/*
 * `cacheadvise patch --plan PLAN.json [-o OUT] FILE.ptx`: the plan's load
 * actions applied to one PTX module (docs/cmd-patch.md).
 * `cacheadvise patch --instrument [--threshold N] [--layout L.json] [-o OUT]
 * FILE.ptx`: the monitor-instrumented module (docs/monitor.md).
 * Output goes to stdout, or atomically to OUT; on any error nothing is
 * written.
 */

struct patch_options {
	const char *plan_path;
	int instrument;
	unsigned threshold;
	const char *layout_path;
	const char *out_path;
	const char *ptx_path;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise patch --plan PLAN.json [-o OUT] FILE.ptx\n"
		"   or: cacheadvise patch --instrument [--threshold N] [--layout LAYOUT.json]\n"
		"                         [-o OUT] FILE.ptx\n"
		"\n"
		"With --plan, rewrites the cache operators of the loads the plan lists for\n"
		"this module (entries whose \"id\" is the module's id, and entries without\n"
		"an id, for the functions the module has). Only the opcodes of those loads\n"
		"change. Actions: default, cache (.ca), bypass (.cg), stream (.cs),\n"
		"last_use (.lu), L1::no_allocate, L1::evict_first, L1::evict_last; an L2\n"
		"priority L2::evict_first, L2::evict_last, L2::evict_normal or\n"
		"L2::evict_unchanged, alone or after an L1 action and '+'\n"
		"(L1::no_allocate+L2::evict_first), adds .L2::cache_hint and a policy made\n"
		"once per function with createpolicy (sm_80, PTX ISA 7.4 or later)\n"
		"(docs/plan-json.md).\n"
		"With --instrument, writes the monitor run's instrumented PTX, which counts\n"
		"per-load requests, sectors, lines and bytes (docs/monitor.md).\n"
		"FILE.ptx may be '-' for standard input. The result goes to standard\n"
		"output, or to OUT (written to a temporary file, then renamed).\n"
		"\n"
		"  -p, --plan FILE       the plan to apply (\"cacheadvise.plan/1\")\n"
		"  -i, --instrument      instrument instead of applying a plan\n"
		"  -t, --threshold N     simulateCache accesses per thread (default %d)\n"
		"  -l, --layout FILE     write the counter layout (JSON) to FILE\n"
		"  -o, --output OUT      write the PTX to OUT instead of standard output;\n"
		"                        '-' for standard output\n"
		"  -h, --help            this text\n"
		"\n"
		"Exit status: 0 success, 1 usage error, 2 invalid plan or PTX, or a load the\n"
		"plan cannot rewrite (the message names it; no output is written).\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise inspect --json kernels.ptx            # load ordinals and ids\n"
		"  cacheadvise patch --plan plan.json kernels.ptx > patched.ptx\n"
		"  cacheadvise patch --plan plan.json -o patched.ptx kernels.ptx\n"
		"  ptxas -arch=sm_90 patched.ptx -o /dev/null         # check the result\n"
		"  cacheadvise patch --instrument --layout layout.json -o mon.ptx kernels.ptx\n",
		PTX_INSTRUMENT_DEFAULT_THRESHOLD);
}

/* Neither output may be an input (the PTX, the plan), nor both one file. */
static int check_outputs(const struct patch_options *o)
{
	struct output_guard in = OUTPUT_GUARD_INIT, out = OUTPUT_GUARD_INIT;
	const char *outputs[] = { o->out_path, o->layout_path }, *what = NULL;
	size_t i;
	int ret = 0;

	output_guard_add_file(&in, o->ptx_path, "the PTX to patch");
	output_guard_add_file(&in, o->plan_path, "the plan to apply");
	for (i = 0; i < ARRAY_SIZE(outputs) && !what; i++)
		if (outputs[i] && (what = output_guard_check(&in, outputs[i])))
			ret = cli_usage_error("'%s' is %s: writing it would destroy the input; "
					      "name another output file", outputs[i], what);
	if (!ret && o->out_path && o->layout_path) {
		output_guard_add_file(&out, o->out_path, "-o");
		if (output_guard_check(&out, o->layout_path))
			ret = cli_usage_error("-o and --layout name the same file");
	}
	output_guard_release(&in);
	output_guard_release(&out);
	return ret;
}

static int parse_options(int argc, char **argv, struct patch_options *o)
{
	static const struct option longopts[] = {
		{ "plan", required_argument, NULL, 'p' },
		{ "instrument", no_argument, NULL, 'i' },
		{ "threshold", required_argument, NULL, 't' },
		{ "layout", required_argument, NULL, 'l' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, threshold_given = 0;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:it:l:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->plan_path = optarg;
			break;
		case 'i':
			o->instrument = 1;
			break;
		case 't': {
			unsigned long v;

			if (cli_parse_uint(optarg, "--threshold", 1, 1ul << 24,
					   "a number from 1 to 16777216", &v))
				return 1;
			o->threshold = (unsigned)v;
			threshold_given = 1;
			break;
		}
		case 'l':
			if (!*optarg)
				return cli_usage_error("--layout wants a file name, not an empty one");
			o->layout_path = optarg;
			break;
		case 'o':
			if (cli_parse_output(optarg, &o->out_path))
				return 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!o->plan_path == !o->instrument)
		return cli_usage_error(o->instrument ? "--plan and --instrument do not go together"
						     : "say what to do: --plan PLAN.json or --instrument");
	if (!o->instrument && (threshold_given || o->layout_path))
		return cli_usage_error("--threshold and --layout go with --instrument");
	if (optind >= argc)
		return cli_usage_error("no PTX file given");
	if (optind + 1 < argc)
		return cli_usage_error("one PTX file at a time ('%s' is extra)", argv[optind + 1]);
	o->ptx_path = argv[optind];
	return check_outputs(o);
}

/*
 * The PTX (to OUT or standard output) and the layout (when asked for) are
 * both written to temporary files and renamed only when both are complete,
 * so that an error in either leaves neither behind.
 */
/* The plan's loads patched in; a plan with none for the module is worth a warning. */
static int do_plan(const struct patch_options *o, const char *ptx_name, const struct strbuf *text,
		   struct strbuf *out)
{
	char id[MODULE_ID_LEN + 1];
	size_t n = 0;
	int ret = ptx_patch_plan(o->plan_path, ptx_name, text, out, id, &n);

	if (!ret && !n)
		cli_warn("plan '%s' has no loads for module %s ('%s'): output is unchanged",
			 o->plan_path, id, ptx_name);
	return ret;
}

int cmd_patch(int argc, char **argv)
{
	struct patch_options o;
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
	json_t *layout = NULL;
	const char *ptx_name;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	ptx_name = strcmp(o.ptx_path, "-") ? o.ptx_path : "<stdin>";
	/* The reading `inspect` shares: NUL refused, a byte order mark dropped. */
	ret = input_file_read_text(&text, o.ptx_path, INPUT_MAX_TEXT);
	if (!ret)
		ret = o.instrument ? ptx_patch_instrument(o.threshold, ptx_name, &text, &out, &layout)
				   : do_plan(&o, ptx_name, &text, &out);
	if (!ret)
		ret = ptx_patch_write(o.out_path, &out, stdout, o.layout_path, layout);
	json_decref(layout);
	strbuf_release(&text);
	strbuf_release(&out);
	return ret ? cli_fail(ret, NULL) : 0;
}
