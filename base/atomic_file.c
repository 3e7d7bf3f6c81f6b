#include "base/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
			/* The same temporary name was written again: keep the last. */
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

/*
 * The file to replace for path: path itself, or where a symlink leads (the
 * link stays a link). Sets *direct when path is a FIFO or a device, which
 * is written into, never renamed over. NULL with the message set when path
 * cannot be an output file (a directory, a dangling symlink).
 */
static char *output_target(const char *path, int *direct)
{
	struct stat st;
	char *real;

	*direct = 0;
	if (lstat(path, &st))
		return xstrdup(path);       /* a new file */
	if (S_ISLNK(st.st_mode)) {
		real = realpath(path, NULL);
		if (!real) {
			error_set(CA_E_IO, "cannot write '%s': it is a symbolic link to a file that "
				  "cannot be reached (%s): name the file itself", path,
				  strerror(errno));
			return NULL;
		}
		if (stat(real, &st)) {
			error_set(CA_E_IO, "cannot write '%s': %s", real, strerror(errno));
			free(real);
			return NULL;
		}
	} else {
		real = xstrdup(path);
	}
	if (S_ISDIR(st.st_mode)) {
		error_set(CA_E_IO, "cannot write '%s': it is a directory: name a file in it", path);
		free(real);
		return NULL;
	}
	*direct = !S_ISREG(st.st_mode);
	return real;
}

int atomic_file_open(struct atomic_file *af, const char *path)
{
	int direct;

	af->path = output_target(path, &direct);
	if (!af->path)
		return CA_E_IO;
	if (direct) {
		/* a FIFO or a device: written into (a reader may be waiting) */
		af->tmp_path = NULL;
		af->fp = fopen(af->path, "wb");
		if (!af->fp) {
			int ret = error_set(CA_E_IO, "cannot write '%s': %s", af->path,
					    strerror(errno));
			free(af->path);
			af->path = NULL;
			return ret;
		}
		return 0;
	}
	af->tmp_path = xasprintf("%s.tmp.%ld", af->path, (long)getpid());
	af->fp = fopen(af->tmp_path, "wb");
	if (!af->fp) {
		int ret = error_set(CA_E_IO, "cannot write '%s': %s", af->tmp_path,
				    strerror(errno));
		free(af->path);
		free(af->tmp_path);
		af->path = af->tmp_path = NULL;
		return ret;
	}
	return 0;
}

static void atomic_file_release(struct atomic_file *af)
{
	free(af->path);
	free(af->tmp_path);
	af->path = af->tmp_path = NULL;
	af->fp = NULL;
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

int write_file_replacing(const char *path, const void *data, size_t len)
{
	struct stat st;

	if (!lstat(path, &st) && S_ISLNK(st.st_mode) && unlink(path))
		return error_set(CA_E_IO, "cannot replace the link '%s': %s", path, strerror(errno));
	return write_file_atomic(path, data, len);
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
