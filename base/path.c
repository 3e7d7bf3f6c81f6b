#define _GNU_SOURCE
#include "base/path.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
