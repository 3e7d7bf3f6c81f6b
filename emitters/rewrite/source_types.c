#include "emitters/rewrite/source_types.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/path.h"
#include "base/xalloc.h"
#include "emitters/rewrite/source_file.h"
#include "emitters/rewrite/source_rewrite.h"

void source_types_init(struct source_types *st, const char *root)
{
	memset(st, 0, sizeof(*st));
	st->root = root ? root : ".";
}

void source_types_release(struct source_types *st)
{
	size_t i, j;

	for (i = 0; i < st->nr_aux; i++) {
		free(st->aux[i].path);
		source_file_free(st->aux[i].sf);
	}
	free(st->aux);
	for (i = 0; i < st->nr_members; i++) {
		free(st->members[i].key);
		free(st->members[i].type);
	}
	free(st->members);
	for (i = 0; i < st->nr_lists; i++) {
		for (j = 0; j < st->lists[i].nr; j++)
			free(st->lists[i].files[j]);
		free(st->lists[i].files);
		free(st->lists[i].path);
	}
	free(st->lists);
	memset(st, 0, sizeof(*st));
}

/* A file read once; NULL when unreadable. */
static const struct source_file *aux_file(struct source_types *st, const char *path)
{
	size_t i;

	for (i = 0; i < st->nr_aux; i++)
		if (!strcmp(st->aux[i].path, path))
			return st->aux[i].sf;
	st->aux = xrealloc(st->aux, (st->nr_aux + 1) * sizeof(*st->aux));
	st->aux[st->nr_aux].path = xstrdup(path);
	st->aux[st->nr_aux].sf = source_file_load(path);
	error_clear();
	return st->aux[st->nr_aux++].sf;
}

/* Appends dir's C, C++ and CUDA files (at most 200) to files. */
static void dir_files(const char *dir, char ***files, size_t *nr)
{
	static const char *const exts[] = { ".cu", ".cuh", ".h", ".hpp", ".hh", ".c", ".cc",
					    ".cpp", ".cxx", ".inl" };
	DIR *dp = opendir(dir);
	struct dirent *de;
	size_t seen = 0, i;

	while (dp && (de = readdir(dp)) && seen < 200) {
		const char *dot = strrchr(de->d_name, '.');
		char *full;

		for (i = 0; dot && i < ARRAY_SIZE(exts) && strcmp(dot, exts[i]); i++)
			;
		if (!dot || i == ARRAY_SIZE(exts))
			continue;
		seen++;
		full = xasprintf("%s/%s", dir, de->d_name);
		for (i = 0; i < *nr && strcmp((*files)[i], full); i++)
			;
		if (i == *nr) {
			*files = xrealloc(*files, (*nr + 1) * sizeof(**files));
			(*files)[(*nr)++] = full;
		} else {
			free(full);
		}
	}
	if (dp)
		closedir(dp);
}

/* The files a struct used on a line of path may be defined in, in the order
 * looked at: the file, the files it includes with "" (two levels), the
 * other C, C++ and CUDA files beside it, then those of the directories
 * above it up to the source root (three at most). */
static void struct_files(struct source_types *st, const char *path, int depth, char ***files,
			 size_t *nr)
{
	const struct source_file *sf;
	const char *slash = strrchr(path, '/'), *p, *end;
	char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	size_t i;

	for (i = 0; i < *nr; i++)
		if (!strcmp((*files)[i], path)) {
			free(dir);
			return;
		}
	*files = xrealloc(*files, (*nr + 1) * sizeof(**files));
	(*files)[(*nr)++] = xstrdup(path);
	sf = aux_file(st, path);
	for (p = sf ? sf->text : NULL, end = sf ? sf->text + sf->len : NULL; p && p < end && depth < 3;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;

		if (!eol)
			eol = end;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		if (eol - q > 10 && *q == '#') {
			q++;
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (eol - q > 9 && !strncmp(q, "include", 7)) {
				const char *a = memchr(q, '"', (size_t)(eol - q)), *b;

				if (a && (b = memchr(a + 1, '"', (size_t)(eol - a - 1)))) {
					char *inc = xasprintf("%s/%.*s", dir, (int)(b - a - 1), a + 1);
					char *norm = path_normalize(inc);

					struct_files(st, norm, depth + 1, files, nr);
					free(norm);
					free(inc);
				}
			}
		}
		p = eol + 1;
	}
	if (!depth) {
		const char *root = st->root;
		size_t rl = strlen(root), up;

		dir_files(dir, files, nr);
		for (up = 0; up < 3 && strlen(dir) > rl && !strncmp(dir, root, rl) &&
		     (slash = strrchr(dir, '/')) && (size_t)(slash - dir) >= rl; up++) {
			dir[slash - dir] = '\0';
			dir_files(dir, files, nr);
		}
	}
	free(dir);
}

/* struct_files(path), made once per path (borrowed by the caller). */
static char **files_for(struct source_types *st, const char *path, size_t *nr)
{
	size_t i;

	for (i = 0; i < st->nr_lists; i++)
		if (!strcmp(st->lists[i].path, path))
			break;
	if (i == st->nr_lists) {
		st->lists = xrealloc(st->lists, (st->nr_lists + 1) * sizeof(*st->lists));
		st->lists[i].path = xstrdup(path);
		st->lists[i].files = NULL;
		st->lists[i].nr = 0;
		struct_files(st, path, 0, &st->lists[i].files, &st->lists[i].nr);
		st->nr_lists++;
	}
	*nr = st->lists[i].nr;
	return st->lists[i].files;
}

char *source_types_alias(struct source_types *st, const char *path, const char *type)
{
	char **files, *cur = xstrdup(type);
	size_t nr, i, step;
	int changed = 1;

	files = files_for(st, path, &nr);
	for (step = 0; step < 2 && changed; step++) {
		changed = 0;
		for (i = 0; i < nr && !changed; i++) {
			const struct source_file *sf = aux_file(st, files[i]);
			char *alias = sf ? source_type_alias(sf->text, sf->len, cur) : NULL;

			if (alias) {
				free(cur);
				cur = alias;
				changed = 1;
			}
		}
	}
	if (!strcmp(cur, type)) {
		free(cur);
		return NULL;
	}
	return cur;
}

char *source_types_member(struct source_types *st, const char *path, const char *name,
			  const char *member, int *defined)
{
	char *key = xasprintf("%s\n%s\n%s", path, name, member), *type = NULL, **files;
	size_t i, nr;

	*defined = 0;
	for (i = 0; i < st->nr_members; i++)
		if (!strcmp(st->members[i].key, key)) {
			free(key);
			*defined = st->members[i].defined;
			return st->members[i].type ? xstrdup(st->members[i].type) : NULL;
		}
	files = files_for(st, path, &nr);
	for (i = 0; i < nr && !*defined; i++) {
		const struct source_file *sf = aux_file(st, files[i]);

		if (sf)
			type = source_member_type(sf->text, sf->len, name, member, defined);
	}
	st->members = xrealloc(st->members, (st->nr_members + 1) * sizeof(*st->members));
	st->members[st->nr_members].key = key;
	st->members[st->nr_members].type = type ? xstrdup(type) : NULL;
	st->members[st->nr_members++].defined = *defined;
	return type;
}
