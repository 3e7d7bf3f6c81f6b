#ifndef CACHEADVISE_RUNNER_H
#define CACHEADVISE_RUNNER_H

#include <stddef.h>

/*
 * Running the target program once: its own process group, extra
 * environment variables, a wall-clock timeout, its standard output copied
 * to a log and (separately) to an output file for comparison, its standard
 * error to the log (and, when asked, to a file of its own). Ctrl-C (SIGINT/SIGTERM to cacheadvise) stops the
 * program and the run reports RUN_INTERRUPTED.
 */

enum run_status {
	RUN_OK,           /* exited with status 0 */
	RUN_FAILED,       /* exited with a non-zero status */
	RUN_SIGNALED,     /* killed by a signal it did not ask for */
	RUN_TIMEOUT,      /* ran past the timeout and was killed */
	RUN_INTERRUPTED,  /* the user pressed Ctrl-C */
	RUN_NOT_STARTED,  /* exec failed (not found, not executable) */
};

struct run_spec {
	char *const *argv;        /* program and arguments, NULL-terminated; argv[0] is passed as given */
	const char *path;         /* the file to execute; NULL: argv[0], searched in PATH when it has no slash */
	char *const *env_add;     /* "NAME=value" entries added to the environment, NULL-terminated or NULL */
	const char *log_path;     /* standard output and error of the run; NULL: discard */
	const char *stdout_path;  /* standard output alone; NULL: not kept */
	const char *stderr_path;  /* standard error alone; NULL: not kept */
	double timeout_seconds;   /* 0: none */
	int inherit_stdio;        /* the program writes to our stdout/stderr; paths ignored */
	const char *cwd;          /* the folder it starts in; NULL: ours */
};

struct run_result {
	enum run_status status;
	int exit_code;            /* RUN_OK / RUN_FAILED */
	int signal;               /* RUN_SIGNALED */
	double wall_seconds;
	char start_error[256];    /* RUN_NOT_STARTED: why */
};

/* Installs SIGINT/SIGTERM handlers that make running programs stop; call
 * once from the CLI before runner_run. */
void runner_install_interrupt_handler(void);
/* Non-zero once the user asked to stop. */
int runner_interrupted(void);

/*
 * Runs the program and waits for it. Returns 0 when the run happened
 * (whatever its status: see res), or CA_E_IO when the log files cannot be
 * written. RUN_NOT_STARTED is reported in res, not as an error.
 *
 * The program is found as execvp(3) finds it: a name without a slash is
 * searched in PATH; a file with a "#!" line runs through its interpreter,
 * and an executable file the kernel cannot run (ENOEXEC: a script without
 * "#!") runs through /bin/sh. The environment (with env_add) is the
 * program's and, unless it changes it, its children's: a wrapper script
 * that starts the CUDA program passes the injection variables on.
 */
int runner_run(const struct run_spec *spec, struct run_result *res);

/* A static description: "exited with status 3", "killed by signal 11 (Segmentation fault)", ... */
const char *run_result_describe(const struct run_result *res, char *buf, size_t len);

/*
 * Checks that path names an executable file, searching PATH when it has no
 * slash (as runner_run does); on success stores the resolved path (caller
 * frees) in *resolved: give it to runner_run as run_spec.path, and keep
 * argv[0] as the user typed it.
 * Returns 0 or CA_E_INPUT (exit 2: the command line names no program)
 * with a message ("program './app' not found", "'./app' is a directory,
 * not a program", "'./app' is not executable: chmod +x it").
 */
int runner_resolve_program(const char *path, char **resolved);

#endif
