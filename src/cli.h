#ifndef CACHEADVISE_CLI_H
#define CACHEADVISE_CLI_H

#include <stdio.h>

/*
 * Shared by the commands in src/: one command table (main.c), one way to
 * report errors. Each command lives in src/cmd_<name>.c as
 * int cmd_<name>(int argc, char **argv), parses its options into a struct,
 * calls the worker that does the job and returns the exit status
 * (DESIGN.md: 0 ok, 1 usage, 2 input, 3 program, 4 no GPU).
 */

enum cmd_flags {
	CMD_NEEDS_GPU = 1 << 0,  /* fails with exit 4 without a usable GPU */
};

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const char *summary;
};

int cmd_inspect(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_solve(int argc, char **argv);
int cmd_patch(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

/* Name of the running command ("inspect"), for messages. */
extern const char *cli_command_name;

/* Prints "cacheadvise <cmd>: <message>" with error_message() when fmt is
 * NULL, and returns error_exit_status(code). The message's control
 * characters (but newline and tab) are written as \xHH
 * (strbuf_add_printable_lines), here and in the two below. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "cacheadvise <cmd>: <message>" and a hint to run --help; returns 1. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The one capture-directory operand after the options (argv[optind]):
 * sets *dir and returns 0, or prints the usage error and returns 1.
 * usage_line is shown when it is missing ("cacheadvise report DIR").
 */
int cli_capture_dir_operand(int argc, char **argv, int optind, const char *usage_line,
			    const char **dir);
/*
 * A number option: a finite value from min to max; else prints the usage
 * error "<option> needs <what>, not '<arg>'" and returns 1.
 */
int cli_parse_number(const char *arg, const char *option, double min, double max,
		     const char *what, double *out);
/*
 * A whole-number option: decimal digits only (no sign, no blanks, no
 * "0x"), from min to max; a value too large for unsigned long is out of
 * range, never wrapped or saturated. Else prints the usage error
 * "<option> needs <what>, not '<arg>'" and returns 1. Every integer option
 * goes through here (issue 36: `probe --device 4294967296` was GPU 0).
 */
int cli_parse_uint(const char *arg, const char *option, unsigned long min, unsigned long max,
		   const char *what, unsigned long *out);
/*
 * A --timeout value: a finite number of seconds above 0 and at most 1e7
 * (nan, inf, 1e999 and 0 are refused). Returns 0 and sets *seconds, or
 * prints the usage error naming `option` and returns 1.
 */
int cli_parse_timeout(const char *arg, const char *option, double *seconds);
/*
 * An -o FILE value of a command that writes standard output without one:
 * "-" is standard output (*out = NULL), "" a usage error ("-o wants a file
 * name, not an empty one"). Returns 0, or prints the usage error and
 * returns 1.
 */
int cli_parse_output(const char *arg, const char **out);
/* Prints a warning line to stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Checks that stdout was flushed and written; returns status, or 2 when
 * writing failed (a truncated report must not exit 0). */
int cli_finish_stdout(int status);

/* Directory holding the running binary (for the injection library and
 * helpers built beside it). Caller must not free. */
const char *cli_exe_dir(void);

#endif
