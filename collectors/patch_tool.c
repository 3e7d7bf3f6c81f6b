#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "collectors/patch_tool.h"

/*
 * Runs argv[0] in directory dir with input (len bytes) on its standard
 * input, and waits. Returns its exit status, 127 when it cannot be
 * started, or -1 when fork or pipe fails.
 */
static int run_in(const char *dir, char *const argv[], const char *input, size_t len)
{
	void (*old_pipe)(int);
	int fd[2], status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		/* The tool's messages go to stderr: stdout may carry the patch. */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		close(fd[1]);
		if (chdir(dir))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[0]);
	/* A tool that stops reading (or is missing) must not kill us. */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	while (len) {
		ssize_t n = write(fd[1], input, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		input += n;
		len -= (size_t)n;
	}
	close(fd[1]);
	signal(SIGPIPE, old_pipe);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int patch_tool_apply(const char *root, const char *name, const char *patch, size_t len,
		     int check)
{
	char *git[] = { "git", "apply", check ? "--check" : "--verbose", NULL };
	char *pat[] = { "patch", "-p1", "--forward", "--batch", "--silent",
			check ? "--dry-run" : NULL, NULL };
	int st = run_in(root, git, patch, len);

	if (st == 127)
		st = run_in(root, pat, patch, len);
	if (st == 127)
		return error_set(CA_E_IO, "cannot run 'git apply' or 'patch': install git or patch");
	if (st == 126)
		return error_set(CA_E_INPUT, "cannot enter the source root '%s'", root);
	if (st < 0)
		return error_set(CA_E_IO, "cannot run 'git apply': %s", strerror(errno));
	if (st)
		return error_set(CA_E_INPUT, "%s does not apply to the sources in '%s' (see the "
				 "messages above); were they changed since the capture?", name, root);
	return 0;
}
