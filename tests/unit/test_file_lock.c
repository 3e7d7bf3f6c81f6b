/* base/file_lock: held, taken in turns, and never through a link or a FIFO. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/file_lock.h"
#include "base/xalloc.h"
#include "check.h"

static char dir[] = "/tmp/test_file_lock.XXXXXX";

int main(void)
{
	struct file_lock lock, other;
	char *path, *link, *fifo, *victim, *cmd;
	struct stat st;
	pid_t pid;
	int status = 0, fd;

	if (!mkdtemp(dir))
		return 2;
	path = xasprintf("%s/.lock", dir);
	link = xasprintf("%s/link.lock", dir);
	fifo = xasprintf("%s/fifo.lock", dir);
	victim = xasprintf("%s/victim", dir);

	/* held: another open file description cannot take it meanwhile */
	CHECK_INT(file_lock_acquire(&lock, path), 0);
	CHECK(lock.fd >= 0);
	CHECK(!stat(path, &st) && S_ISREG(st.st_mode) && st.st_size == 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK);
	/* a second process waits until it is released */
	pid = fork();
	if (!pid) {
		struct file_lock l;

		close(lock.fd);     /* the parent's: a fork shares its lock */
		close(fd);
		_exit(file_lock_acquire(&l, path) ? 3 : 0);
	}
	usleep(1000);
	CHECK_INT(waitpid(pid, &status, WNOHANG), 0);
	file_lock_release(&lock);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status));
	CHECK(!flock(fd, LOCK_EX | LOCK_NB));
	close(fd);
	file_lock_release(&lock);   /* twice: nothing */
	CHECK_INT(lock.fd, -1);

	/* a link is refused, the file it leads to not created */
	CHECK_INT(symlink(victim, link), 0);
	CHECK_INT(file_lock_acquire(&other, link), CA_E_IO);
	CHECK(strstr(error_message(), "it is a symbolic link") != NULL);
	CHECK(lstat(victim, &st) != 0);
	/* a FIFO is refused at once, never waited on */
	CHECK_INT(mkfifo(fifo, 0600), 0);
	alarm(20);
	CHECK_INT(file_lock_acquire(&other, fifo), CA_E_IO);
	alarm(0);
	CHECK(strstr(error_message(), "not a regular file") != NULL);
	CHECK_INT(other.fd, -1);

	cmd = xasprintf("rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	free(path);
	free(link);
	free(fifo);
	free(victim);
	return check_done();
}
