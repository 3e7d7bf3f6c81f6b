#define _GNU_SOURCE
#include "collectors/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/xalloc.h"

extern char **environ;

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

void runner_install_interrupt_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int runner_interrupted(void)
{
	return interrupted != 0;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char **build_env(char *const *add)
{
	size_t n = 0, k = 0, i, j;
	char **env;

	while (environ[n])
		n++;
	while (add && add[k])
		k++;
	env = xcalloc(n + k + 1, sizeof(*env));
	for (i = 0, j = 0; i < n; i++) {
		size_t name_len = strcspn(environ[i], "=");
		int overridden = 0;
		size_t a;

		for (a = 0; a < k; a++)
			if (!strncmp(add[a], environ[i], name_len + 1))
				overridden = 1;
		if (!overridden)
			env[j++] = environ[i];
	}
	for (i = 0; i < k; i++)
		env[j++] = add[i];
	env[j] = NULL;
	return env;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void kill_group(pid_t pid, int sig)
{
	if (kill(-pid, sig))
		kill(pid, sig);
}

/* The first executable regular file called name in PATH (caller frees), or NULL. */
static char *search_path(const char *name)
{
	const char *p = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;
	struct stat st;

	if (!p)
		p = "/usr/bin:/bin";
	copy = xstrdup(p);
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", *dir ? dir : ".", name);

		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, X_OK))
			found = cand;
		else
			free(cand);
	}
	free(copy);
	return found;
}

/*
 * In the child: execute file as execvp(3) would. A file the kernel cannot
 * execute (ENOEXEC: a script without "#!") runs through /bin/sh with
 * sh_argv ("/bin/sh", file, argv[1]...). Returns errno when both fail.
 */
static int exec_program(const char *file, char *const *argv, char *const *sh_argv, char **env)
{
	execve(file, argv, env);
	if (errno == ENOEXEC)
		execve("/bin/sh", sh_argv, env);
	return errno;
}

/* Why exec failed, in words: a "#!" line naming a missing interpreter says so. */
static void describe_exec_error(struct run_result *res, const char *argv0, const char *file, int err)
{
	char line[128] = "";
	FILE *f;

	if (err == ENOENT && !access(file, F_OK) && (f = fopen(file, "r"))) {
		if (!fgets(line, sizeof(line), f) || strncmp(line, "#!", 2))
			line[0] = '\0';
		fclose(f);
		line[strcspn(line, "\r\n")] = '\0';
	}
	if (line[0])
		snprintf(res->start_error, sizeof(res->start_error),
			 "cannot execute '%s': its interpreter in '%s' was not found", argv0, line);
	else if (strcmp(argv0, file))
		snprintf(res->start_error, sizeof(res->start_error), "cannot execute '%s' (%s): %s",
			 argv0, file, strerror(err));
	else
		snprintf(res->start_error, sizeof(res->start_error), "cannot execute '%s': %s",
			 argv0, strerror(err));
}

int runner_run(const struct run_spec *spec, struct run_result *res)
{
	int log_fd = -1, out_fd = -1, pipefd[2] = { -1, -1 }, errpipe[2] = { -1, -1 };
	int err_fd = -1, errout[2] = { -1, -1 };
	int ret = 0, status = 0, stopping = 0;
	double start, kill_at = 0;
	char **env = NULL, *found = NULL, **sh_argv = NULL;
	const char *file = spec->path;
	size_t argc = 0, i;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (!file && !strchr(spec->argv[0], '/'))
		file = found = search_path(spec->argv[0]);
	else if (!file)
		file = spec->argv[0];
	if (!file) {
		res->status = RUN_NOT_STARTED;
		snprintf(res->start_error, sizeof(res->start_error),
			 "program '%s' not found in PATH: give its path, e.g. ./%s",
			 spec->argv[0], spec->argv[0]);
		return 0;
	}
	while (spec->argv[argc])
		argc++;
	sh_argv = xcalloc(argc + 2, sizeof(*sh_argv));
	sh_argv[0] = "/bin/sh";
	sh_argv[1] = (char *)file;
	for (i = 1; i < argc; i++)
		sh_argv[i + 1] = spec->argv[i];
	if (spec->log_path && !spec->inherit_stdio) {
		log_fd = open(spec->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
		if (log_fd < 0) {
			ret = error_set(CA_E_IO, "cannot write '%s': %s", spec->log_path, strerror(errno));
			goto out;
		}
	}
	if (spec->stdout_path && !spec->inherit_stdio) {
		out_fd = open(spec->stdout_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (out_fd < 0) {
			ret = error_set(CA_E_IO, "cannot write '%s': %s", spec->stdout_path, strerror(errno));
			goto out;
		}
	}
	if (spec->stderr_path && !spec->inherit_stdio) {
		err_fd = open(spec->stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (err_fd < 0 || pipe2(errout, O_CLOEXEC)) {
			ret = error_set(CA_E_IO, "cannot write '%s': %s", spec->stderr_path, strerror(errno));
			goto out;
		}
	}
	if (pipe2(pipefd, O_CLOEXEC) || pipe2(errpipe, O_CLOEXEC)) {
		ret = error_set(CA_E_IO, "cannot create a pipe: %s", strerror(errno));
		goto out;
	}
	env = build_env(spec->env_add);
	start = now_seconds();
	pid = fork();
	if (pid < 0) {
		ret = error_set(CA_E_IO, "cannot fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		int err;

		/* Its own process group, so a timeout stops its children too; a
		 * program that shares our terminal stays in ours (Ctrl-C reaches it). */
		if (!spec->inherit_stdio)
			setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (spec->cwd && chdir(spec->cwd)) {
			err = errno;
			if (write(errpipe[1], &err, sizeof(err)) < 0)
				_exit(127);
			_exit(127);
		}
		if (spec->inherit_stdio) {
			err = exec_program(file, spec->argv, sh_argv, env);
			if (write(errpipe[1], &err, sizeof(err)) < 0)
				_exit(127);
			_exit(127);
		}
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(pipefd[1], 1);
		if (errout[1] >= 0)
			dup2(errout[1], 2);
		else if (log_fd >= 0)
			dup2(log_fd, 2);
		else
			dup2(open("/dev/null", O_WRONLY), 2);
		err = exec_program(file, spec->argv, sh_argv, env);
		if (write(errpipe[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	if (!spec->inherit_stdio)
		setpgid(pid, pid);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (errout[1] >= 0)
		close(errout[1]);
	errout[1] = -1;
	close(errpipe[1]);
	errpipe[1] = -1;
	{
		int child_errno = 0;
		ssize_t n = read(errpipe[0], &child_errno, sizeof(child_errno));

		if (n == (ssize_t)sizeof(child_errno)) {
			waitpid(pid, &status, 0);
			res->status = RUN_NOT_STARTED;
			describe_exec_error(res, spec->argv[0], file, child_errno);
			goto out;
		}
	}

	for (;;) {
		/* standard output, then standard error when it has a pipe of its own */
		struct pollfd pfd[2] = { { .fd = pipefd[0], .events = POLLIN },
					 { .fd = errout[0], .events = POLLIN } };
		int *fds[2] = { &pipefd[0], &errout[0] };
		int timeout_ms = 200, pr, k;

		if (!stopping && interrupted) {
			kill_group(pid, SIGINT);
			stopping = 1;
			kill_at = now_seconds() + 5;
			res->status = RUN_INTERRUPTED;
		}
		if (!stopping && spec->timeout_seconds > 0 &&
		    now_seconds() - start > spec->timeout_seconds) {
			kill_group(pid, SIGTERM);
			stopping = 1;
			kill_at = now_seconds() + 5;
			res->status = RUN_TIMEOUT;
		}
		if (stopping && now_seconds() > kill_at) {
			kill_group(pid, SIGKILL);
			kill_at = now_seconds() + 3600;
		}
		if (pipefd[0] < 0 && errout[0] < 0) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid)
				break;
			usleep(20000);
			continue;
		}
		pr = poll(pfd, 2, timeout_ms);
		for (k = 0; pr > 0 && k < 2; k++) {
			char buf[65536];
			int copy_fd = k ? err_fd : out_fd;
			ssize_t n;

			if (!pfd[k].revents || *fds[k] < 0)
				continue;
			n = read(*fds[k], buf, sizeof(buf));
			if (n > 0) {
				if ((log_fd >= 0 && write_all(log_fd, buf, (size_t)n)) ||
				    (copy_fd >= 0 && write_all(copy_fd, buf, (size_t)n))) {
					ret = error_set(CA_E_IO, "cannot write the log of '%s': %s",
							spec->argv[0], strerror(errno));
					kill_group(pid, SIGKILL);
					waitpid(pid, &status, 0);
					goto out;
				}
			} else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
				close(*fds[k]);
				*fds[k] = -1;
			}
		}
	}
	res->wall_seconds = now_seconds() - start;
	if (res->status == RUN_TIMEOUT || res->status == RUN_INTERRUPTED) {
		/* keep the status set when stopping */
	} else if (WIFEXITED(status)) {
		res->exit_code = WEXITSTATUS(status);
		res->status = res->exit_code ? RUN_FAILED : RUN_OK;
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->status = RUN_SIGNALED;
	}
out:
	free(env);
	free(sh_argv);
	free(found);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (errout[0] >= 0)
		close(errout[0]);
	if (errout[1] >= 0)
		close(errout[1]);
	if (err_fd >= 0 && close(err_fd) && !ret)
		ret = error_set(CA_E_IO, "cannot write '%s': %s", spec->stderr_path, strerror(errno));
	if (errpipe[0] >= 0)
		close(errpipe[0]);
	if (errpipe[1] >= 0)
		close(errpipe[1]);
	if (out_fd >= 0 && close(out_fd) && !ret)
		ret = error_set(CA_E_IO, "cannot write '%s': %s", spec->stdout_path, strerror(errno));
	if (log_fd >= 0 && close(log_fd) && !ret)
		ret = error_set(CA_E_IO, "cannot write '%s': %s", spec->log_path, strerror(errno));
	return ret;
}

const char *run_result_describe(const struct run_result *res, char *buf, size_t len)
{
	switch (res->status) {
	case RUN_OK:
		snprintf(buf, len, "exited with status 0");
		break;
	case RUN_FAILED:
		snprintf(buf, len, "exited with status %d", res->exit_code);
		break;
	case RUN_SIGNALED:
		snprintf(buf, len, "killed by signal %d (%s)", res->signal, strsignal(res->signal));
		break;
	case RUN_TIMEOUT:
		snprintf(buf, len, "timed out after %.0f s and was killed", res->wall_seconds);
		break;
	case RUN_INTERRUPTED:
		snprintf(buf, len, "was interrupted");
		break;
	case RUN_NOT_STARTED:
		snprintf(buf, len, "%s", res->start_error);
		break;
	}
	return buf;
}

int runner_resolve_program(const char *path, char **resolved)
{
	struct stat st;

	if (!strchr(path, '/')) {
		*resolved = search_path(path);
		if (*resolved)
			return 0;
		return error_set(CA_E_INPUT,
				 "program '%s' not found in PATH: give its path, e.g. ./%s", path, path);
	}
	/* a program that is not there is a bad command line (exit 2), not a
	 * program that failed (exit 3), as `check --static` says */
	if (stat(path, &st))
		return error_set(CA_E_INPUT, "program '%s' not found: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return error_set(CA_E_INPUT, "'%s' is a directory, not a program", path);
	if (!S_ISREG(st.st_mode))
		return error_set(CA_E_INPUT, "'%s' is not a regular file", path);
	if (access(path, X_OK))
		return error_set(CA_E_INPUT, "'%s' is not executable: chmod +x it", path);
	*resolved = realpath(path, NULL);
	if (!*resolved)
		*resolved = xstrdup(path);
	return 0;
}
