#include "base/file_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

int file_lock_acquire(struct file_lock *lock, const char *path)
{
	struct stat st;
	int fd, r;

	lock->fd = -1;
	/* O_NONBLOCK: a FIFO planted at path opens at once and is refused below */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd < 0)
		return error_set(CA_E_IO, "cannot lock '%s': %s", path,
				 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return error_set(CA_E_IO, "cannot lock '%s': it is not a regular file", path);
	}
	while ((r = flock(fd, LOCK_EX)) && errno == EINTR)
		;
	if (r) {
		int saved = errno;

		close(fd);
		if (saved == ENOLCK || saved == EOPNOTSUPP || saved == EINVAL)
			return 0;   /* no locks here: the job runs unlocked */
		return error_set(CA_E_IO, "cannot lock '%s': %s", path, strerror(saved));
	}
	lock->fd = fd;
	return 0;
}

void file_lock_release(struct file_lock *lock)
{
	if (lock->fd >= 0)
		close(lock->fd);    /* closing the only descriptor releases the flock */
	lock->fd = -1;
}
