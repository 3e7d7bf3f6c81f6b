#include "base/output_guard.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/xalloc.h"

struct output_guard_input {
	char *name;         /* the real path of its folder joined with its name, or NULL */
	char *real;         /* its own real path (through links), or NULL */
	struct stat st;     /* valid where has_st */
	int has_st;
	int tree;           /* a folder: everything under it */
	const char *what;
};

/*
 * The real path of path's folder joined with path's last name (a link
 * there is not followed: this is the name a rename would replace). A last
 * name of "", "." or ".." is resolved whole. NULL when the folder cannot
 * be resolved (it does not exist: nothing can be written there either).
 */
static char *resolve_name(const char *path)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	char real[PATH_MAX], *dir;
	int found;

	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return realpath(path, NULL);
	dir = !slash ? xstrdup(".") : slash == path ? xstrdup("/") : xstrndup(path, slash - path);
	found = realpath(dir, real) != NULL;
	free(dir);
	if (!found)
		return NULL;
	return xasprintf("%s/%s", strcmp(real, "/") ? real : "", name);
}

/* Fills the resolved forms of path; 0 for "-" and "" (no file). */
static int resolve(struct output_guard_input *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	if (!path || !*path || !strcmp(path, "-"))
		return 0;
	r->name = resolve_name(path);
	r->real = realpath(path, NULL);
	r->has_st = !stat(path, &r->st);
	return 1;
}

static void add(struct output_guard *g, const char *path, const char *what, int tree)
{
	struct output_guard_input r;

	if (!resolve(&r, path))
		return;
	r.tree = tree;
	r.what = what;
	if (g->nr == g->alloc) {
		g->alloc = g->alloc ? 2 * g->alloc : 8;
		g->in = xrealloc(g->in, g->alloc * sizeof(*g->in));
	}
	g->in[g->nr++] = r;
}

void output_guard_add_file(struct output_guard *g, const char *path, const char *what)
{
	add(g, path, what, 0);
}

void output_guard_add_tree(struct output_guard *g, const char *dir, const char *what)
{
	add(g, dir, what, 1);
}

static int same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Whether path is strictly under the folder whose real path is dir. */
static int under(const char *path, const char *dir)
{
	size_t n;

	if (!path || !dir)
		return 0;
	if (!strcmp(dir, "/"))
		return path[0] == '/' && path[1];
	n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/' && path[n + 1];
}

static int hits(const struct output_guard_input *out, const struct output_guard_input *in)
{
	if (in->tree)
		return under(out->name, in->real) || under(out->real, in->real);
	if (same(out->name, in->name) || same(out->name, in->real) ||
	    same(out->real, in->name) || same(out->real, in->real))
		return 1;
	/* the same regular file by another name (a hard link, a bind mount);
	 * devices and FIFOs are no input files */
	return out->has_st && in->has_st && S_ISREG(in->st.st_mode) &&
	       out->st.st_dev == in->st.st_dev && out->st.st_ino == in->st.st_ino;
}

static void release_input(struct output_guard_input *r)
{
	free(r->name);
	free(r->real);
}

const char *output_guard_check(const struct output_guard *g, const char *out)
{
	struct output_guard_input o;
	const char *what = NULL;
	size_t i;

	if (!resolve(&o, out))
		return NULL;
	for (i = 0; i < g->nr && !what; i++)
		if (hits(&o, &g->in[i]))
			what = g->in[i].what;
	release_input(&o);
	return what;
}

void output_guard_release(struct output_guard *g)
{
	size_t i;

	for (i = 0; i < g->nr; i++)
		release_input(&g->in[i]);
	free(g->in);
	g->in = NULL;
	g->nr = g->alloc = 0;
}
