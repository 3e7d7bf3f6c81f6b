#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "src/cli.h"

const char *cli_command_name = "";

static const struct cmd commands[] = {
	{ "inspect", cmd_inspect, 0, "list modules, kernels and global loads of a binary or PTX" },
	{ "profile", cmd_profile, CMD_NEEDS_GPU, "measure, advise and verify: the main job" },
	{ "report", cmd_report, 0, "re-render a finished capture (text, html, json, sarif)" },
	{ "solve", cmd_solve, 0, "solve a traffic reduction graph (ILP, branch and bound, heuristic, exhaustive)" },
	{ "patch", cmd_patch, 0, "apply a plan's cache operators to PTX, or instrument it" },
	{ "run", cmd_run, CMD_NEEDS_GPU, "run a program with a plan applied, no rebuild" },
	{ "apply", cmd_apply, 0, "write or apply the source patch of a capture" },
	{ "check", cmd_check, 0, "confirm a rebuilt program carries the advice, and time it" },
	{ "probe", cmd_probe, CMD_NEEDS_GPU, "measure the GPU's cache geometry with P-chase" },
	{ "doctor", cmd_doctor, 0, "say whether profile can run on this machine, and what to do" },
};

static void print_main_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: cacheadvise <command> [options]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'cacheadvise <command> --help' for a command's options.\n"
		   "Exit status: 0 success, 1 usage error, 2 invalid input, 3 the program\n"
		   "failed, 4 no usable GPU.\n\nEXAMPLES\n"
		   "  cacheadvise inspect ./app\n"
		   "  cacheadvise profile ./app --size 4096\n"
		   "  cacheadvise report cacheadvise-out/app-20261122-031000 --format html -o r.html\n");
}

/*
 * Prints "cacheadvise <cmd>: <prefix><message>" and a newline on stderr. A
 * message names what came from input (a function of a plan, a token of a
 * PTX file, a capture's status): its control characters go through the
 * one escaper, so that a hostile name cannot drive the terminal (issue 36).
 */
static void print_message(const char *prefix, const char *message)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "cacheadvise %s: %s", cli_command_name, prefix);
	strbuf_add_printable_lines(&sb, message);
	strbuf_addch(&sb, '\n');
	fputs(sb.buf, stderr);
	strbuf_release(&sb);
}

static void vprint_message(const char *prefix, const char *fmt, va_list ap)
{
	struct strbuf msg = STRBUF_INIT;

	strbuf_vaddf(&msg, fmt, ap);
	print_message(prefix, msg.buf);
	strbuf_release(&msg);
}

int cli_fail(int code, const char *fmt, ...)
{
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vprint_message("", fmt, ap);
		va_end(ap);
	} else {
		print_message("", error_message());
	}
	return error_exit_status(code);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_message("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Run 'cacheadvise %s --help' for usage.\n", cli_command_name);
	return 1;
}

int cli_parse_number(const char *arg, const char *option, double min, double max,
		     const char *what, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !isfinite(v) || v < min || v > max)
		return cli_usage_error("%s needs %s, not '%s'", option, what, arg);
	*out = v;
	return 0;
}

int cli_parse_uint(const char *arg, const char *option, unsigned long min, unsigned long max,
		   const char *what, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!*arg || strspn(arg, "0123456789") != strlen(arg))
		return cli_usage_error("%s needs %s, not '%s'", option, what, arg);
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		return cli_usage_error("%s needs %s, not '%s'", option, what, arg);
	*out = v;
	return 0;
}

int cli_parse_timeout(const char *arg, const char *option, double *seconds)
{
	static const char what[] = "a number of seconds above 0 and at most 1e7";
	double v = 0;

	if (cli_parse_number(arg, option, 0, 1e7, what, &v))
		return 1;
	if (!(v > 0))
		return cli_usage_error("%s needs %s, not '%s'", option, what, arg);
	*seconds = v;
	return 0;
}

int cli_parse_output(const char *arg, const char **out)
{
	if (!*arg)
		return cli_usage_error("-o wants a file name, not an empty one ('-' for standard "
				       "output)");
	*out = strcmp(arg, "-") ? arg : NULL;
	return 0;
}

int cli_capture_dir_operand(int argc, char **argv, int optind, const char *usage_line,
			    const char **dir)
{
	if (optind >= argc)
		return cli_usage_error("which capture directory? (%s)", usage_line);
	if (optind + 1 < argc)
		return cli_usage_error("one capture directory at a time ('%s' is extra)",
				       argv[optind + 1]);
	*dir = argv[optind];
	return 0;
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_message("warning: ", fmt, ap);
	va_end(ap);
}

int cli_finish_stdout(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "cacheadvise %s: cannot write to standard output: %s\n",
			cli_command_name, strerror(errno));
		return status ? status : 2;
	}
	return status;
}

const char *cli_exe_dir(void)
{
	static char dir[4096];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		strcpy(dir, ".");
		return dir;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	return dir;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		print_main_usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		print_main_usage(stdout);
		return cli_finish_stdout(0);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("cacheadvise %s\n", CACHEADVISE_VERSION);
		return cli_finish_stdout(0);
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			cli_command_name = commands[i].name;
			return cli_finish_stdout(commands[i].fn(argc - 1, argv + 1));
		}
	}
	fprintf(stderr, "cacheadvise: '%s' is not a command\n\n", argv[1]);
	print_main_usage(stderr);
	return 1;
}
