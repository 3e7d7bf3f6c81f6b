#ifndef CACHEADVISE_FILE_LOCK_H
#define CACHEADVISE_FILE_LOCK_H

/*
 * An exclusive lock for a job that replaces several files which must stay
 * a consistent set (`report --all`: source.patch and sources.json from one
 * run), so that two processes doing it at once take turns: flock() on a
 * lock file, held until released or until the process ends (a crash never
 * leaves it held). The lock file is created empty (O_CREAT without O_EXCL,
 * O_NOFOLLOW, never truncated) and left in place: removing it would let a
 * third process lock a new file while the first still holds the old one.
 *
 *     struct file_lock lock;
 *     if (file_lock_acquire(&lock, "capture/.lock")) return ...;
 *     ...                                       // replace the files
 *     file_lock_release(&lock);
 */
struct file_lock {
	int fd;             /* -1 when not held */
};

/*
 * Waits for the lock on path. Returns 0 (held; also where the file system
 * has no locks, ENOLCK/EOPNOTSUPP, when it is not held: lock->fd is then
 * -1), or CA_E_IO with the message set when path cannot be opened or is a
 * symbolic link or not a regular file (a FIFO is never waited on).
 */
int file_lock_acquire(struct file_lock *lock, const char *path);
/* Releases a lock acquired (or not held); does nothing twice. */
void file_lock_release(struct file_lock *lock);

#endif
