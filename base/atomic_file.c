#include "base/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/xalloc.h"

/* The thread's batch: the files written and not yet renamed. */
static __thread struct {
	int active;
	char **path, **tmp_path;
	size_t nr, alloc;
} batch;

/* Takes over path and tmp_path. */
static void batch_add(char *path, char *tmp_path)
{
	size_t i;

	for (i = 0; i < batch.nr; i++) {
		if (!strcmp(batch.path[i], path)) {
			/* The same path was written again: keep the last. */
			unlink(batch.tmp_path[i]);
			free(batch.path[i]);
			free(batch.tmp_path[i]);
			batch.path[i] = path;
			batch.tmp_path[i] = tmp_path;
			return;
		}
	}
	if (batch.nr == batch.alloc) {
		batch.alloc = batch.alloc ? 2 * batch.alloc : 16;
		batch.path = xrealloc(batch.path, batch.alloc * sizeof(*batch.path));
		batch.tmp_path = xrealloc(batch.tmp_path, batch.alloc * sizeof(*batch.tmp_path));
	}
	batch.path[batch.nr] = path;
	batch.tmp_path[batch.nr++] = tmp_path;
}

static void batch_end(void)
{
	size_t i;

	for (i = 0; i < batch.nr; i++) {
		free(batch.path[i]);
		free(batch.tmp_path[i]);
	}
	free(batch.path);
	free(batch.tmp_path);
	memset(&batch, 0, sizeof(batch));
}

void atomic_batch_begin(void)
{
	batch_end();
	batch.active = 1;
}

int atomic_batch_commit(void)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < batch.nr; i++) {
		if (ret) {
			unlink(batch.tmp_path[i]);
		} else if (rename(batch.tmp_path[i], batch.path[i])) {
			ret = error_set(CA_E_IO, "cannot rename '%s' to '%s': %s",
					batch.tmp_path[i], batch.path[i], strerror(errno));
			unlink(batch.tmp_path[i]);
		}
	}
	batch_end();
	return ret;
}

void atomic_batch_abort(void)
{
	size_t i;

	for (i = 0; i < batch.nr; i++)
		unlink(batch.tmp_path[i]);
	batch_end();
}

static void atomic_file_release(struct atomic_file *af)
{
	free(af->path);
	free(af->tmp_path);
	af->path = af->tmp_path = NULL;
	af->fp = NULL;
}

/*
 * Whether the symbolic link path leads through /proc: /dev/stdout ->
 * /proc/self/fd/1, /dev/fd/N. It names a file the process already has open
 * (where the shell sent standard output), which is written into as a device
 * is, never renamed over: a rename would replace /dev/stdout itself.
 */
static int leads_through_proc(const char *path)
{
	char *cur = xstrdup(path), *dir, *slash, real[PATH_MAX], link[PATH_MAX];
	int hops, ret = 0;

	for (hops = 0; hops < 40 && !ret; hops++) {
		ssize_t n;

		dir = xstrdup(cur);
		slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = '\0';
		ret = realpath(slash ? dir : ".", real) && !strncmp(real, "/proc/", 6);
		free(dir);
		n = readlink(cur, link, sizeof(link) - 1);
		if (ret || n < 0)
			break;
		link[n] = '\0';
		slash = strrchr(cur, '/');
		if (link[0] != '/' && slash) {
			char *next = xasprintf("%.*s/%s", (int)(slash - cur), cur, link);

			free(cur);
			cur = next;
		} else {
			free(cur);
			cur = xstrdup(link);
		}
	}
	free(cur);
	return ret;
}

/*
 * How path is written: 0 renamed over (nothing there, a regular file, a
 * symbolic link to a regular file or to nothing: the link is replaced), 1
 * written into (a FIFO, a device, or a link to one; *st is that file), or
 * CA_E_IO with the message set (a directory, or a link to one).
 */
static int output_kind(const char *path, struct stat *st)
{
	struct stat lst;

	if (!*path)
		return error_set(CA_E_IO, "cannot write '': no file name given");
	if (lstat(path, &lst) || stat(path, st))
		return 0;           /* nothing there, or a dangling link: created */
	if (S_ISDIR(st->st_mode))
		return error_set(CA_E_IO, "cannot write '%s': it is a directory: name a file in it",
				 path);
	if (!S_ISREG(st->st_mode))
		return 1;
	return S_ISLNK(lst.st_mode) && leads_through_proc(path);
}

/*
 * A new file "<path>.tmp.XXXXXX" beside path, made with O_EXCL and
 * O_NOFOLLOW: whatever is at a name already (a planted link or FIFO) is
 * never opened, another name is tried. The mode is 0666 less the umask, as
 * fopen gives (mkstemp's 0600 would need the umask read, which no thread
 * can do safely). Returns the descriptor and sets *tmp, or -1 with errno.
 */
static int open_temporary(const char *path, char **tmp)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned long long counter;
	unsigned char rnd[6];
	int attempt, fd, i;

	for (attempt = 0; attempt < 100; attempt++) {
		char suffix[sizeof(rnd) + 1];

		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
			/* no entropy yet: O_EXCL keeps it safe, the name need only differ */
			struct timespec ts;
			unsigned long long x;

			clock_gettime(CLOCK_REALTIME, &ts);
			x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32) ^
			    __atomic_add_fetch(&counter, 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED);
			for (i = 0; i < (int)sizeof(rnd); i++, x >>= 8)
				rnd[i] = (unsigned char)x;
		}
		for (i = 0; i < (int)sizeof(rnd); i++)
			suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		suffix[sizeof(rnd)] = '\0';
		*tmp = xasprintf("%s.tmp.%s", path, suffix);
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0)
			return fd;
		free(*tmp);
		*tmp = NULL;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

int atomic_file_open(struct atomic_file *af, const char *path)
{
	struct stat st, fst;
	int kind, fd, saved, changed = 0;

	memset(af, 0, sizeof(*af));
	kind = output_kind(path, &st);
	if (kind < 0)
		return kind;
	af->path = xstrdup(path);
	if (kind) {
		/* a FIFO or a device: written into (a reader may be waiting),
		 * appended to as a shell's >> would, never truncated or created */
		fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &fst) || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino)) {
			close(fd);
			fd = -1;
			changed = 1;
		}
	} else {
		fd = open_temporary(path, &af->tmp_path);
	}
	if (fd < 0 || !(af->fp = fdopen(fd, "w"))) {
		saved = errno;
		if (fd >= 0)
			close(fd);
		if (af->tmp_path)
			unlink(af->tmp_path);
		atomic_file_release(af);
		return error_set(CA_E_IO, "cannot write '%s': %s", path,
				 changed ? "it changed while it was opened" : strerror(saved));
	}
	return 0;
}

int atomic_file_flush(struct atomic_file *af)
{
	if (ferror(af->fp) || fflush(af->fp) || (af->tmp_path && fsync(fileno(af->fp))))
		return error_set(CA_E_IO, "cannot write '%s': %s", af->path,
				 strerror(errno ? errno : EIO));
	return 0;
}

int atomic_file_commit(struct atomic_file *af)
{
	int ret = 0;
	int failed, saved;

	if (!af->tmp_path) {
		/* written into a FIFO or a device: nothing to rename, and a
		 * device may not sync (EINVAL), but a write error is an error */
		failed = ferror(af->fp) || fflush(af->fp);
		saved = errno;
		if (fclose(af->fp) && !failed) {
			failed = 1;
			saved = errno;
		}
		if (failed)
			ret = error_set(CA_E_IO, "cannot write '%s': %s", af->path,
					strerror(saved ? saved : EIO));
		atomic_file_release(af);
		return ret;
	}
	failed = ferror(af->fp) || fflush(af->fp) || fsync(fileno(af->fp));
	saved = errno;

	if (fclose(af->fp) && !failed) {
		failed = 1;
		saved = errno;
	}
	if (failed) {
		ret = error_set(CA_E_IO, "cannot write '%s': %s", af->path,
				strerror(saved ? saved : EIO));
		unlink(af->tmp_path);
	} else if (batch.active) {
		batch_add(af->path, af->tmp_path);
		af->path = af->tmp_path = NULL;
	} else if (rename(af->tmp_path, af->path)) {
		ret = error_set(CA_E_IO, "cannot rename '%s' to '%s': %s",
				af->tmp_path, af->path, strerror(errno));
		unlink(af->tmp_path);
	}
	atomic_file_release(af);
	return ret;
}

void atomic_file_abort(struct atomic_file *af)
{
	if (af->fp) {
		fclose(af->fp);
		if (af->tmp_path)
			unlink(af->tmp_path);
	}
	atomic_file_release(af);
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	struct atomic_file af;
	int ret = atomic_file_open(&af, path);

	if (ret)
		return ret;
	if (len && fwrite(data, 1, len, af.fp) != len) {
		ret = error_set(CA_E_IO, "cannot write '%s': %s", path, strerror(errno));
		atomic_file_abort(&af);
		return ret;
	}
	return atomic_file_commit(&af);
}

int mkdir_p(const char *path)
{
	char *p = xstrdup(path), *s;
	int ret = 0;

	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0777) && errno != EEXIST) {
				ret = error_set(CA_E_IO, "cannot create directory '%s': %s",
						p, strerror(errno));
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return ret;
}
