/*
 * cacheadvise inspect [--json] [--arch ARCH] [-o FILE] FILE
 *
 * Lists the CUDA modules of a program (or a .ptx/.cubin/.fatbin), their
 * kernels and every global load, as a table or as the inspect JSON of
 * DESIGN.md (docs/inspect-json.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/atomic_file.h"
#include "base/input_file.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/output_guard.h"
#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/intake.h"
#include "emitters/inspect_report.h"
#include "src/cli.h"

struct inspect_options {
	int json;
	unsigned arch;          /* device arch choosing among PTX; 0: highest */
	const char *output;     /* NULL: standard output */
	const char *file;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise inspect [--json] [--arch ARCH] [-o FILE] FILE\n"
		"\n"
		"Lists the CUDA modules of FILE, their kernels and every global load:\n"
		"ordinal, PTX line, instruction, state space, cache operator, .nc, vector\n"
		"width and bits, the kernel parameter it reads through, whether that\n"
		"parameter is read-only, the source line (with -lineinfo) and whether\n"
		"cacheadvise may rewrite it. Needs no GPU.\n"
		"\n"
		"FILE is an executable or shared library with CUDA code, a relocatable\n"
		"object, a .fatbin, a .cubin or a .ptx file.\n"
		"\n"
		"options:\n"
		"  --json          print the inspect JSON (schema cacheadvise.inspect/1)\n"
		"  --arch ARCH     choose the PTX a GPU of this arch would use (90, sm_90);\n"
		"                  default: the highest arch in each fatbin\n"
		"  -o, --output FILE\n"
		"                  write to FILE (atomically) instead of standard output;\n"
		"                  '-' for standard output\n"
		"  -h, --help      show this help\n"
		"\n"
		"Exit status: 0 success, 1 usage error, 2 unreadable or invalid FILE.\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise inspect ./app\n"
		"  cacheadvise inspect --json ./app | jq '.modules[].functions[].name'\n"
		"  cacheadvise inspect --arch sm_80 libkernels.so\n"
		"  nvcc -arch=sm_90 -lineinfo -ptx mix.cu && cacheadvise inspect mix.ptx\n");
}

/* "90", "sm_90", "sm_90a", "compute_90" -> 90. Returns 0 or -1. */
static int parse_arch(const char *s, unsigned *arch)
{
	char *end;
	unsigned long v;

	if (!strncmp(s, "sm_", 3))
		s += 3;
	else if (!strncmp(s, "compute_", 8))
		s += 8;
	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if ((*end && strcmp(end, "a") && strcmp(end, "f")) || v < 10 || v > 1000)
		return -1;
	*arch = (unsigned)v;
	return 0;
}

static int parse_options(int argc, char **argv, struct inspect_options *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "arch", required_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = 1;
			break;
		case 'a':
			if (parse_arch(optarg, &o->arch))
				return cli_usage_error("--arch '%s' is not an arch such as 90 or sm_90",
						       optarg);
			break;
		case 'o':
			if (cli_parse_output(optarg, &o->output))
				return 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("option '%s' is unknown", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("no FILE given: name an executable, a shared library, "
				       "a .fatbin, a .cubin or a .ptx file");
	if (optind + 1 < argc)
		return cli_usage_error("one FILE only (got '%s' and '%s')", argv[optind],
				       argv[optind + 1]);
	o->file = argv[optind];
	if (!strcmp(o->file, "-"))
		return cli_usage_error("inspect reads a file, not standard input: save it first "
				       "(e.g. kernels.ptx) and name it");
	if (o->output) {
		struct output_guard g = OUTPUT_GUARD_INIT;
		const char *what;

		output_guard_add_file(&g, o->file, "the file to inspect");
		what = output_guard_check(&g, o->output);
		output_guard_release(&g);
		if (what)
			return cli_usage_error("-o '%s' is %s: the report would replace it; name "
					       "another file", o->output, what);
	}
	return 0;
}

static int write_output(const struct inspect_options *o, const struct strbuf *out)
{
	if (!o->output) {
		fwrite(out->buf, 1, out->len, stdout);
		return 0;
	}
	return write_file_atomic(o->output, out->buf, out->len);
}

/* The JSON, written as it is made (to -o through a temporary file). */
static int write_json(const struct inspect_options *o, const struct intake *in)
{
	struct atomic_file af;
	int ret;

	if (!o->output) {
		inspect_report_json(stdout, in, o->file);
		return 0;   /* main checks that stdout was written */
	}
	ret = atomic_file_open(&af, o->output);
	if (ret)
		return ret;
	inspect_report_json(af.fp, in, o->file);
	return atomic_file_commit(&af);
}

static int inspect(const struct inspect_options *o)
{
	struct intake in;
	struct strbuf out = STRBUF_INIT;
	int ret;

	intake_init(&in);
	ret = intake_read_file(&in, o->file, o->arch);
	if (!ret && o->json) {
		ret = write_json(o, &in);
	} else if (!ret) {
		inspect_report_text(&out, &in, o->file);
		ret = write_output(o, &out);
	}
	strbuf_release(&out);
	intake_release(&in);
	return ret;
}

int cmd_inspect(int argc, char **argv)
{
	struct inspect_options o;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = inspect(&o);
	if (ret)
		return cli_fail(ret, NULL);
	return 0;
}
