#define _GNU_SOURCE
#include "collectors/file_snapshot.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/input_file.h"
#include "base/xalloc.h"

/*
 * How far the walk of the working directory goes: the directory and two
 * levels below it, and so many entries. A program that writes deeper or
 * among more files is checked through its arguments and --compare.
 */
#define WALK_DEPTH 3
#define WALK_MAX_ENTRIES 20000

static void add(struct file_snapshot *s, const char *path, const struct stat *st)
{
	struct file_snapshot_entry *e;

	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 64;
		s->e = xrealloc(s->e, s->alloc * sizeof(*s->e));
	}
	e = &s->e[s->n++];
	e->path = xstrdup(path);
	e->exists = st != NULL;
	e->size = st ? (long long)st->st_size : 0;
	e->mtime_ns = st ? (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec : 0;
}

static void walk(struct file_snapshot *s, const char *dir, const char *prefix, int depth,
		 const struct stat *exclude)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		char *full, *rel;

		/* ours (the default capture folder) and git's are not the program's */
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, ".git") ||
		    (!depth && !strcmp(de->d_name, "cacheadvise-out")))
			continue;
		if (s->n >= WALK_MAX_ENTRIES) {
			s->truncated = 1;
			break;
		}
		full = xasprintf("%s/%s", dir, de->d_name);
		rel = *prefix ? xasprintf("%s/%s", prefix, de->d_name) : xstrdup(de->d_name);
		if (!lstat(full, &st)) {
			if (S_ISREG(st.st_mode)) {
				add(s, rel, &st);
			} else if (S_ISDIR(st.st_mode) &&
				   !(exclude && st.st_dev == exclude->st_dev && st.st_ino == exclude->st_ino)) {
				if (depth + 1 < WALK_DEPTH)
					walk(s, full, rel, depth + 1, exclude);
				else
					s->truncated = 1;
			}
		}
		free(full);
		free(rel);
	}
	closedir(d);
}

/* A path an argument may name: itself, or what follows its first '='. */
static void add_argument(struct file_snapshot *s, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *cand[2] = { arg[0] == '-' ? NULL : arg, eq ? eq + 1 : NULL };
	int k;

	for (k = 0; k < 2; k++) {
		const char *p = cand[k];
		struct stat st;
		char *dir, *slash;

		if (!p || !*p || strlen(p) >= PATH_MAX || strchr(p, '\n'))
			continue;
		while (!strncmp(p, "./", 2))
			p += 2;
		if (!stat(p, &st)) {
			if (S_ISREG(st.st_mode))
				add(s, p, &st);
			continue;
		}
		/* not there yet: a file the run may create, if its folder exists */
		dir = xstrdup(p);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		if (!slash || (!stat(*dir ? dir : "/", &st) && S_ISDIR(st.st_mode)))
			add(s, p, NULL);
		free(dir);
	}
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct file_snapshot_entry *)a)->path,
		      ((const struct file_snapshot_entry *)b)->path);
}

void file_snapshot_take(struct file_snapshot *s, const struct file_snapshot_spec *spec)
{
	struct stat ex;
	size_t i, j;

	memset(s, 0, sizeof(*s));
	walk(s, ".", "", 0,
	     spec->exclude && !stat(spec->exclude, &ex) ? &ex : NULL);
	for (i = 1; spec->argv && spec->argv[0] && spec->argv[i]; i++)
		add_argument(s, spec->argv[i]);
	if (s->n)   /* an empty directory: no array at all */
		qsort(s->e, s->n, sizeof(*s->e), cmp_entry);
	/* the same file found by the walk and named by an argument: once */
	for (i = j = 0; i < s->n; i++) {
		if (j && !strcmp(s->e[j - 1].path, s->e[i].path)) {
			free(s->e[i].path);
			continue;
		}
		s->e[j++] = s->e[i];
	}
	s->n = j;
}

void file_snapshot_release(struct file_snapshot *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->e[i].path);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

static const struct file_snapshot_entry *find(const struct file_snapshot *s, const char *path)
{
	struct file_snapshot_entry key = { .path = (char *)path };

	return s->n ? bsearch(&key, s->e, s->n, sizeof(*s->e), cmp_entry) : NULL;
}

static void add_hashed(struct run_output *out, const char *path)
{
	char hex[65] = "";
	struct stat st;

	if (stat(path, &st)) {
		run_output_add_file(out, path, 0, 0, NULL);
		return;
	}
	if (digest_file_sha256_hex(path, hex))
		hex[0] = '\0';
	run_output_add_file(out, path, 1, (long long)st.st_size, hex);
}

/*
 * Whether path is a file out already lists under another name: the walk
 * finds "out.bin" where an argument or --compare names "/abs/dir/out.bin"
 * (issue 25: one result file listed twice, as two files).
 */
static int listed_already(const struct run_output *out, size_t from, const char *path)
{
	size_t i;

	for (i = from; i < out->nr_files; i++)
		if (out->files[i].exists && input_file_same(out->files[i].path, path))
			return 1;
	return 0;
}

size_t file_snapshot_changes(const struct file_snapshot *before, const struct file_snapshot *after,
			     const char *always, struct run_output *out)
{
	size_t i, n0 = out->nr_files;

	while (always && !strncmp(always, "./", 2))
		always += 2;
	for (i = 0; i < after->n; i++) {
		const struct file_snapshot_entry *a = &after->e[i], *b = find(before, a->path);

		/* --compare's file goes by the name the user gave it, in every run */
		if (always && (!strcmp(a->path, always) ||
			       (a->exists && input_file_same(a->path, always))))
			continue;
		if (!a->exists && (!b || !b->exists))
			continue;
		if (b && b->exists == a->exists && b->size == a->size && b->mtime_ns == a->mtime_ns)
			continue;
		if (a->exists) {
			if (!listed_already(out, n0, a->path))
				add_hashed(out, a->path);
		} else {
			run_output_add_file(out, a->path, 0, 0, NULL);
		}
	}
	for (i = 0; i < before->n; i++)
		if (before->e[i].exists && !find(after, before->e[i].path))
			run_output_add_file(out, before->e[i].path, 0, 0, NULL);
	if (always)
		add_hashed(out, always);
	return out->nr_files - n0;
}

int file_snapshot_keep(const struct output_file *f, const char *keep_path,
		       unsigned long long *kept)
{
	struct atomic_file out;
	struct stat st;
	char buf[65536];
	FILE *in;
	size_t n;
	int ok = 1;

	if (!f->exists || !f->sha256[0] || f->size < 0)
		return 0;
	if (!stat(keep_path, &st))
		return 1;
	if ((unsigned long long)f->size > FILE_SNAPSHOT_KEEP_MAX ||
	    *kept + (unsigned long long)f->size > FILE_SNAPSHOT_KEEP_TOTAL)
		return 0;
	in = fopen(f->path, "rb");
	if (!in)
		return 0;
	if (atomic_file_open(&out, keep_path)) {
		fclose(in);
		return 0;
	}
	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out.fp) == n;
	ok = ok && !ferror(in);
	fclose(in);
	/* the file may have changed since it was hashed: a copy under another
	 * content's name would mislead, so it must have the size hashed */
	ok = ok && !atomic_file_flush(&out) && !fstat(fileno(out.fp), &st) &&
	     st.st_size == f->size;
	if (!ok) {
		atomic_file_abort(&out);
		return 0;
	}
	if (atomic_file_commit(&out))
		return 0;
	*kept += (unsigned long long)f->size;
	return 1;
}
