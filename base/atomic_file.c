#include "base/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/xalloc.h"

int atomic_file_open(struct atomic_file *af, const char *path)
{
	af->path = xstrdup(path);
	af->tmp_path = xasprintf("%s.tmp.%ld", path, (long)getpid());
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

int atomic_file_commit(struct atomic_file *af)
{
	int ret = 0;
	int failed = ferror(af->fp) || fflush(af->fp) || fsync(fileno(af->fp));
	int saved = errno;

	if (fclose(af->fp) && !failed) {
		failed = 1;
		saved = errno;
	}
	if (failed) {
		ret = error_set(CA_E_IO, "cannot write '%s': %s", af->path,
				strerror(saved ? saved : EIO));
		unlink(af->tmp_path);
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
