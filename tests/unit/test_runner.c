#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "collectors/runner.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/ca-test-runner-XXXXXX";

static int run_sh(const char *script, double timeout, struct run_result *res, char *const *env)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	char log[256], out[256];
	struct run_spec spec;

	snprintf(log, sizeof(log), "%s/run.log", dir);
	snprintf(out, sizeof(out), "%s/run.out", dir);
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv;
	spec.env_add = env;
	spec.log_path = log;
	spec.stdout_path = out;
	spec.timeout_seconds = timeout;
	return runner_run(&spec, res);
}

static char *slurp(const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	strbuf_read_file(&sb, path, 0);
	return strbuf_detach(&sb, NULL);
}

static void test_ok_and_output(void)
{
	struct run_result res;
	char *env[] = { "CA_TEST_VALUE=42", NULL };
	char *out, *log;

	CHECK_INT(run_sh("echo out $CA_TEST_VALUE; echo err >&2", 10, &res, env), 0);
	CHECK_INT(res.status, RUN_OK);
	CHECK_INT(res.exit_code, 0);
	out = slurp("run.out");
	log = slurp("run.log");
	/* stdout alone in .out, both streams in the log; the added variable reached it */
	CHECK_STR(out, "out 42\n");
	CHECK(strstr(log, "out 42") != NULL);
	CHECK(strstr(log, "err") != NULL);
	free(out);
	free(log);
}

/* stderr_path: standard error alone in a file of its own, both in the log */
static void test_stderr_alone(void)
{
	char *argv[] = { "/bin/sh", "-c", "echo out1; echo err1 >&2; echo out2; echo err2 >&2", NULL };
	char log[256], out[256], err[256], *t;
	struct run_spec spec;
	struct run_result res;

	snprintf(log, sizeof(log), "%s/run2.log", dir);
	snprintf(out, sizeof(out), "%s/run2.out", dir);
	snprintf(err, sizeof(err), "%s/run2.err", dir);
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv;
	spec.log_path = log;
	spec.stdout_path = out;
	spec.stderr_path = err;
	spec.timeout_seconds = 10;
	CHECK_INT(runner_run(&spec, &res), 0);
	CHECK_INT(res.status, RUN_OK);
	t = slurp("run2.out");
	CHECK_STR(t, "out1\nout2\n");
	free(t);
	t = slurp("run2.err");
	CHECK_STR(t, "err1\nerr2\n");
	free(t);
	t = slurp("run2.log");
	CHECK(strstr(t, "out2") && strstr(t, "err2"));
	free(t);
}

static void test_failures(void)
{
	struct run_result res;
	char buf[300];

	CHECK_INT(run_sh("exit 7", 10, &res, NULL), 0);
	CHECK_INT(res.status, RUN_FAILED);
	CHECK_INT(res.exit_code, 7);
	CHECK_STR(run_result_describe(&res, buf, sizeof(buf)), "exited with status 7");

	CHECK_INT(run_sh("kill -SEGV $$", 10, &res, NULL), 0);
	CHECK_INT(res.status, RUN_SIGNALED);
	CHECK_INT(res.signal, 11);

	/* a program that ignores SIGTERM is killed after the grace period;
	 * the timeout reaches its children too (own process group) */
	CHECK_INT(run_sh("sleep 30 & sleep 30", 0.5, &res, NULL), 0);
	CHECK_INT(res.status, RUN_TIMEOUT);
	CHECK(res.wall_seconds < 10);
}

static void test_not_started(void)
{
	char *argv[] = { "/nonexistent/program", NULL };
	struct run_spec spec;
	struct run_result res;
	char *resolved = NULL;

	memset(&spec, 0, sizeof(spec));
	spec.argv = argv;
	CHECK_INT(runner_run(&spec, &res), 0);
	CHECK_INT(res.status, RUN_NOT_STARTED);
	CHECK(strstr(res.start_error, "/nonexistent/program") != NULL);

	CHECK_INT(runner_resolve_program("/nonexistent/program", &resolved), CA_E_INPUT);
	CHECK_INT(runner_resolve_program("sh", &resolved), 0);
	CHECK(resolved && resolved[0] == '/');
	free(resolved);
	resolved = NULL;
	{
		char path[300];
		FILE *f;

		snprintf(path, sizeof(path), "%s/not-executable", dir);
		f = fopen(path, "w");
		if (f) {
			fputs("data\n", f);
			fclose(f);
		}
		CHECK_INT(runner_resolve_program(path, &resolved), CA_E_INPUT);
	}
}

static struct run_result run_argv(char *const *argv, const char *path)
{
	char log[256], out[256];
	struct run_spec spec;
	struct run_result res;

	snprintf(log, sizeof(log), "%s/run.log", dir);
	snprintf(out, sizeof(out), "%s/run.out", dir);
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv;
	spec.path = path;
	spec.log_path = log;
	spec.stdout_path = out;
	spec.timeout_seconds = 10;
	CHECK_INT(runner_run(&spec, &res), 0);
	return res;
}

static void write_script(const char *name, const char *text, int mode)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* Run what the user typed (issue 14): a bare name through PATH, "#!"
 * scripts, scripts without "#!" through /bin/sh, argv[0] as typed. */
static void test_what_the_user_typed(void)
{
	char *bare[] = { "sh", "-c", "exit 7", NULL };
	char *named[] = { "typed-name", "-c", "echo $0", NULL };
	char *missing[] = { "ca-no-such-program-here", NULL };
	char *script[] = { "ca-script", "arg1", NULL };
	char *noshebang[] = { "ca-noshebang", "arg2", NULL };
	char *badinterp[] = { "ca-badinterp", NULL };
	char path[300], *saved_path, *out, *resolved = NULL;
	struct run_result res;

	res = run_argv(bare, NULL);
	CHECK_INT(res.status, RUN_FAILED);
	CHECK_INT(res.exit_code, 7);

	/* the file is spec.path, argv[0] stays what the user typed */
	res = run_argv(named, "/bin/sh");
	CHECK_INT(res.status, RUN_OK);
	out = slurp("run.out");
	CHECK_STR(out, "typed-name\n");
	free(out);

	res = run_argv(missing, NULL);
	CHECK_INT(res.status, RUN_NOT_STARTED);
	CHECK(strstr(res.start_error, "'ca-no-such-program-here' not found in PATH") != NULL);

	write_script("ca-script", "#!/bin/sh\necho script \"$1\"\nexit 5\n", 0755);
	write_script("ca-noshebang", "echo noshebang \"$1\"\nexit 4\n", 0755);
	write_script("ca-badinterp", "#!/nonexistent/interpreter -x\necho never\n", 0755);
	write_script("ca-notexec", "#!/bin/sh\nexit 0\n", 0644);
	saved_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	snprintf(path, sizeof(path), "%s:/usr/bin:/bin", dir);
	setenv("PATH", path, 1);

	res = run_argv(script, NULL);
	CHECK_INT(res.status, RUN_FAILED);
	CHECK_INT(res.exit_code, 5);
	out = slurp("run.out");
	CHECK_STR(out, "script arg1\n");
	free(out);

	res = run_argv(noshebang, NULL);
	CHECK_INT(res.status, RUN_FAILED);
	CHECK_INT(res.exit_code, 4);
	out = slurp("run.out");
	CHECK_STR(out, "noshebang arg2\n");
	free(out);

	res = run_argv(badinterp, NULL);
	CHECK_INT(res.status, RUN_NOT_STARTED);
	CHECK(strstr(res.start_error, "interpreter") != NULL);
	CHECK(strstr(res.start_error, "/nonexistent/interpreter") != NULL);

	/* resolving skips a file that is not executable, and says so by path */
	CHECK_INT(runner_resolve_program("ca-script", &resolved), 0);
	CHECK(resolved && !strncmp(resolved, dir, strlen(dir)));
	free(resolved);
	resolved = NULL;
	CHECK_INT(runner_resolve_program("ca-notexec", &resolved), CA_E_INPUT);
	CHECK(strstr(error_message(), "not found in PATH") != NULL);
	snprintf(path, sizeof(path), "%s/ca-notexec", dir);
	CHECK_INT(runner_resolve_program(path, &resolved), CA_E_INPUT);
	CHECK(strstr(error_message(), "chmod +x") != NULL);

	if (saved_path)
		setenv("PATH", saved_path, 1);
	else
		unsetenv("PATH");
	free(saved_path);
}

/* A wrapper that starts the CUDA program as a child: the added variables
 * (CUDA_INJECTION64_PATH, CACHEADVISE_*) reach the grandchild. */
static void test_env_reaches_children(void)
{
	struct run_result res;
	char *env[] = { "CACHEADVISE_OUT=/some/dir", NULL };
	char *out;

	CHECK_INT(run_sh("sh -c 'echo child $CACHEADVISE_OUT'", 10, &res, env), 0);
	CHECK_INT(res.status, RUN_OK);
	out = slurp("run.out");
	CHECK_STR(out, "child /some/dir\n");
	free(out);
}

static void on_alarm(int sig)
{
	(void)sig;
	raise(SIGINT);   /* as if the user pressed Ctrl-C */
}

/* Ctrl-C while a program runs: it is stopped and the run says interrupted. */
static void test_interrupt(void)
{
	struct run_result res;

	runner_install_interrupt_handler();
	CHECK(!runner_interrupted());
	signal(SIGALRM, on_alarm);
	alarm(1);
	CHECK_INT(run_sh("sleep 20", 0, &res, NULL), 0);
	CHECK_INT(res.status, RUN_INTERRUPTED);
	CHECK(res.wall_seconds < 10);
	CHECK(runner_interrupted());
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_ok_and_output();
	test_stderr_alone();
	test_failures();
	test_not_started();
	test_what_the_user_typed();
	test_env_reaches_children();
	test_interrupt();
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return check_done();
}
