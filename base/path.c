#define _GNU_SOURCE
#include "base/path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/xalloc.h"

char *path_normalize(const char *path)
{
	size_t n = strlen(path), len = 0, kept = 0;
	char *out = xmalloc(n + 2);
	size_t *starts = xmalloc((n / 2 + 2) * sizeof(*starts));
	const char *p = path;

	if (*p == '/')
		out[len++] = '/';
	while (*p) {
		const char *e = strchr(p, '/');
		size_t c = e ? (size_t)(e - p) : strlen(p);

		if (c == 0 || (c == 1 && p[0] == '.')) {
			/* "" or ".": nothing */
		} else if (c == 2 && p[0] == '.' && p[1] == '.' && kept &&
			   strncmp(out + starts[kept - 1], "../", 3) &&
			   strcmp(out + starts[kept - 1], "..")) {
			len = starts[--kept];       /* "dir/..": drop dir */
			out[len] = '\0';
		} else {
			if (len && out[len - 1] != '/')
				out[len++] = '/';
			starts[kept++] = len;
			memcpy(out + len, p, c);
			len += c;
			out[len] = '\0';
		}
		p += c;
		while (*p == '/')
			p++;
	}
	if (len > 1 && out[len - 1] == '/')
		len--;
	out[len] = '\0';
	if (!len) {
		out[0] = '.';
		out[1] = '\0';
	}
	free(starts);
	return out;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int path_remove_tree(const char *dir)
{
	return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

const char *path_under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (!strcmp(root, "/"))
		return path[0] == '/' ? path + 1 : NULL;
	if (strncmp(path, root, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path[n] ? path + n + 1 : path + n;
}

char *path_common(const char *a, const char *b)
{
	char *dir = xstrdup(a);

	while (strcmp(dir, "/") && !path_under(b, dir)) {
		char *slash = strrchr(dir, '/');

		if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	}
	return dir;
}

struct copy_state {
	const struct path_copy_limits *lim;
	unsigned long long bytes;
	unsigned long files;
};

static int copy_file(const char *from, const char *to, const struct stat *sb,
		     struct copy_state *st)
{
	mode_t mode = sb->st_mode;
	struct timespec times[2];
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), out = -1, ret = 0;
	ssize_t n;

	if (in < 0)
		return error_set(CA_E_IO, "cannot read '%s': %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 07777);
	if (out < 0) {
		ret = error_set(CA_E_IO, "cannot write '%s': %s", to, strerror(errno));
		goto out;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = error_set(CA_E_IO, "cannot read '%s': %s", from, strerror(errno));
			goto out;
		}
		st->bytes += (unsigned long long)n;
		if (st->lim->max_bytes && st->bytes > st->lim->max_bytes) {
			ret = error_set(CA_E_INPUT, "the tree holds more than %llu bytes (at '%s')",
					st->lim->max_bytes, from);
			goto out;
		}
		if (write(out, buf, (size_t)n) != n) {
			ret = error_set(CA_E_IO, "cannot write '%s': %s", to, strerror(errno));
			goto out;
		}
	}
	/* its times too: a build in the copy sees what is newer as in the tree */
	times[0] = sb->st_atim;
	times[1] = sb->st_mtim;
	if (fchmod(out, mode & 07777) || futimens(out, times))
		ret = error_set(CA_E_IO, "cannot set the mode of '%s': %s", to, strerror(errno));
out:
	if (out >= 0 && close(out) && !ret)
		ret = error_set(CA_E_IO, "cannot write '%s': %s", to, strerror(errno));
	close(in);
	return ret;
}

static int skipped(const char *path, const char *name, const struct path_copy_limits *lim)
{
	size_t i;

	if (!strcmp(name, ".git"))
		return 1;
	for (i = 0; lim->skip && lim->skip[i]; i++)
		if (!strcmp(path, lim->skip[i]))
			return 1;
	return 0;
}

static int copy_dir(const char *src, const char *dst, mode_t mode, struct copy_state *st)
{
	DIR *d;
	struct dirent *e;
	int ret = 0;

	if (mkdir(dst, (mode & 07777) | 0700))
		return error_set(CA_E_IO, "cannot create '%s': %s", dst, strerror(errno));
	d = opendir(src);
	if (!d)
		return error_set(CA_E_IO, "cannot read the folder '%s': %s", src, strerror(errno));
	while (!ret && (errno = 0, e = readdir(d))) {
		char *from, *to;
		struct stat sb;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		from = xasprintf("%s/%s", src, e->d_name);
		to = xasprintf("%s/%s", dst, e->d_name);
		if (skipped(from, e->d_name, st->lim)) {
			/* left out */
		} else if (lstat(from, &sb)) {
			ret = error_set(CA_E_IO, "cannot read '%s': %s", from, strerror(errno));
		} else if (st->lim->max_files && ++st->files > st->lim->max_files) {
			ret = error_set(CA_E_INPUT, "the tree holds more than %lu files and folders "
					"(at '%s')", st->lim->max_files, from);
		} else if (S_ISDIR(sb.st_mode)) {
			ret = copy_dir(from, to, sb.st_mode, st);
		} else if (S_ISREG(sb.st_mode)) {
			ret = copy_file(from, to, &sb, st);
		} else if (S_ISLNK(sb.st_mode)) {
			char target[4096];
			ssize_t n = readlink(from, target, sizeof(target) - 1);

			if (n < 0)
				ret = error_set(CA_E_IO, "cannot read the link '%s': %s", from,
						strerror(errno));
			else {
				target[n] = '\0';
				if (symlink(target, to))
					ret = error_set(CA_E_IO, "cannot create the link '%s': %s", to,
							strerror(errno));
			}
		}
		free(from);
		free(to);
	}
	if (!ret && errno)
		ret = error_set(CA_E_IO, "cannot read the folder '%s': %s", src, strerror(errno));
	closedir(d);
	return ret;
}

int path_copy_tree(const char *src, const char *dst, const struct path_copy_limits *lim)
{
	static const struct path_copy_limits none = { 0, 0, NULL };
	struct copy_state st = { lim ? lim : &none, 0, 0 };
	struct stat sb;

	if (stat(src, &sb))
		return error_set(CA_E_IO, "cannot read '%s': %s", src, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return error_set(CA_E_INPUT, "'%s' is not a folder", src);
	return copy_dir(src, dst, sb.st_mode, &st);
}
