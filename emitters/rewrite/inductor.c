/*
 * Kernels torch.compile generated (emitters/rewrite/inductor.h).
 */
#include "emitters/rewrite/inductor.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#define MAX_FILES 512
#define MAX_BYTES (16u << 20)

/* The cache folder of path: up to its torchinductor_<user>/ folder, or the
 * configured one it lies under; NULL when neither (caller frees). */
static char *cache_root(const char *path)
{
	const char *dir = getenv("TORCHINDUCTOR_CACHE_DIR"), *t;

	if (dir && *dir && !strncmp(path, dir, strlen(dir)) && path[strlen(dir)] == '/')
		return xstrdup(dir);
	t = strstr(path, "/torchinductor_");
	if (!t)
		return NULL;
	t = strchr(t + 1, '/');
	return t ? xstrndup(path, (size_t)(t - path)) : NULL;
}

int inductor_generated(const char *path)
{
	char *root = path ? cache_root(path) : NULL;
	int yes = root != NULL;

	free(root);
	return yes;
}

/* The comments after "# kernel path: <kernel_file>" in text, or NULL. */
static char *provenance_in(const char *text, const char *kernel_file)
{
	struct strbuf marker = STRBUF_INIT, out = STRBUF_INIT;
	const char *p, *nl;

	strbuf_addf(&marker, "# kernel path: %s", kernel_file);
	for (p = text; (p = strstr(p, marker.buf)); p += marker.len) {
		/* the marker is a whole line */
		if ((p != text && p[-1] != '\n') || (p[marker.len] != '\n' && p[marker.len] != '\r'))
			continue;
		for (p = strchr(p, '\n'); p && p[1] == '#'; p = nl) {
			const char *line = p + 2;

			nl = strchr(line, '\n');
			if (*line == ' ')
				line++;
			strbuf_addf(&out, "%s%.*s", out.len ? "\n" : "",
				    (int)((nl ? nl : line + strlen(line)) - line), line);
			if (!nl)
				break;
		}
		break;
	}
	strbuf_release(&marker);
	while (out.len && (out.buf[out.len - 1] == '\r' || out.buf[out.len - 1] == ' '))
		strbuf_setlen(&out, out.len - 1);
	return out.len ? strbuf_detach(&out, NULL) : (strbuf_release(&out), NULL);
}

char *inductor_provenance(const char *kernel_file)
{
	char *root = cache_root(kernel_file), *found = NULL;
	DIR *top, *sub;
	struct dirent *d, *f;
	size_t files = 0;

	if (!root || !(top = opendir(root))) {
		free(root);
		return NULL;
	}
	while (!found && files < MAX_FILES && (d = readdir(top))) {
		char *dir;

		if (d->d_name[0] == '.')
			continue;
		dir = xasprintf("%s/%s", root, d->d_name);
		sub = opendir(dir);
		while (sub && !found && files < MAX_FILES && (f = readdir(sub))) {
			size_t n = strlen(f->d_name);
			struct strbuf sb = STRBUF_INIT;
			struct stat st;
			char *path;

			if (n < 4 || strcmp(f->d_name + n - 3, ".py"))
				continue;
			path = xasprintf("%s/%s", dir, f->d_name);
			files++;
			if (strcmp(path, kernel_file) && !stat(path, &st) && S_ISREG(st.st_mode) &&
			    (size_t)st.st_size <= MAX_BYTES && !strbuf_read_file(&sb, path, MAX_BYTES))
				found = provenance_in(sb.buf, kernel_file);
			error_clear();
			strbuf_release(&sb);
			free(path);
		}
		if (sub)
			closedir(sub);
		free(dir);
	}
	closedir(top);
	free(root);
	return found;
}
