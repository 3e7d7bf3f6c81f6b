/*
 * The program as the user will build it, in a private copy: see
 * rebuild_copy.h.
 */
#define _GNU_SOURCE
#include "emitters/rewrite/rebuild_copy.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/capture_names.h"
#include "base/error.h"
#include "base/path.h"
#include "base/xalloc.h"
#include "collectors/runner.h"
#include "emitters/capture_layout.h"
#include "emitters/rewrite/python_rewrite.h"
#include "emitters/rewrite/source_patch.h"
#include "emitters/rewrite/source_apply.h"
#include "emitters/rewrite/sources_file.h"

/* path, absolute and normalised against cwd (owned). */
static char *absolute(const char *path, const char *cwd)
{
	char *joined, *norm;

	if (path[0] == '/')
		return path_normalize(path);
	joined = xasprintf("%s/%s", cwd, path);
	norm = path_normalize(joined);
	free(joined);
	return norm;
}

/* path's place in the copy when it lies under root (owned), else NULL. */
static char *in_copy(const char *path, const char *root, const char *copy)
{
	const char *rel = path_under(path, root);

	if (!rel)
		return NULL;
	return *rel ? xasprintf("%s/%s", copy, rel) : xstrdup(copy);
}

static char *map_one(const char *arg, const char *root, const char *copy, const char *cwd,
		     int runs_in_copy)
{
	const char *eq = strchr(arg, '=');
	char *abs, *mapped;

	/* "NAME=PATH": the value */
	if (eq && eq != arg && !memchr(arg, '/', (size_t)(eq - arg))) {
		char *value = map_one(eq + 1, root, copy, cwd, runs_in_copy), *out;

		out = xasprintf("%.*s=%s", (int)(eq - arg), arg, value);
		free(value);
		return out;
	}
	abs = absolute(arg, cwd);
	if (arg[0] != '/' && path_under(abs, root)) {
		/* in the tree: it resolves in the copy where the program runs there;
		 * else named there, if it is a path at all (not a word, a number) */
		mapped = runs_in_copy || access(abs, F_OK) ? xstrdup(arg) :
			 in_copy(abs, root, copy);
	} else if (arg[0] != '/') {
		/* out of the tree ("../data/x"): the original, named whole where the
		 * program runs elsewhere */
		mapped = runs_in_copy && !access(abs, F_OK) ? xstrdup(abs) : xstrdup(arg);
	} else {
		mapped = in_copy(abs, root, copy);
	}
	free(abs);
	return mapped ? mapped : xstrdup(arg);
}

char **rebuild_copy_map_argv(const char *root, const char *copy, const char *cwd,
			     char *const *argv, char **cwd_out)
{
	size_t n = 0, i;
	char **out;

	while (argv[n])
		n++;
	*cwd_out = in_copy(cwd, root, copy);
	out = xcalloc(n + 1, sizeof(*out));
	for (i = 0; i < n; i++)
		out[i] = map_one(argv[i], root, copy, cwd, *cwd_out != NULL);
	return out;
}

/* The file argv[0] names, found where the program runs. */
static int resolve_program(struct rebuild_copy *rc)
{
	const char *p = rc->argv[0];
	char *where;
	int ret;

	free(rc->program);
	rc->program = NULL;
	if (strchr(p, '/') && p[0] != '/' && rc->cwd) {
		where = xasprintf("%s/%s", rc->cwd, p);
		ret = runner_resolve_program(where, &rc->program);
		free(where);
	} else {
		ret = runner_resolve_program(p, &rc->program);
	}
	return ret;
}

/* The root the capture's sources were read from (sources.json). */
static int sources_root(const char *dir, char **root)
{
	struct sources_file sf;
	char *path = capture_layout_file(dir, CAPTURE_LAYOUT_SOURCES);
	const char *r;
	int ret;

	*root = NULL;
	sources_file_init(&sf);
	ret = sources_file_load(&sf, path);
	if (ret) {
		ret = error_prefix(ret, "the sources cannot be copied");
		goto out;
	}
	/* where they were last read (report --source-root), else where profiled */
	r = sf.read_from && sf.read_from[0] == '/' && !access(sf.read_from, F_OK) ?
	    sf.read_from : sf.root;
	if (!r) {
		ret = error_set(CA_E_INPUT, "'%s' records no source root", path);
		goto out;
	}
	*root = realpath(r, NULL);
	if (!*root)
		ret = error_set(CA_E_INPUT, "the source root '%s' cannot be read: %s", r,
				strerror(errno));
out:
	sources_file_release(&sf);
	free(path);
	return ret;
}

/*
 * A capture may come from someone else (docs/security.md), and what the
 * copy gets is built and run without the user reading it: so only a patch
 * this tool makes itself, from the capture's plan and these sources (the
 * rewrite layer writes load forms and nothing else), is applied there.
 */
static int same_as_made(const struct source_apply *res, const char *dir)
{
	struct strbuf made = STRBUF_INIT;
	int ret = 0;

	source_patch_write(&res->in, &made);
	if (made.len != res->patch.len || memcmp(made.buf, res->patch.buf, made.len))
		ret = error_set(CA_E_INPUT, "%s is not the patch cacheadvise makes from the "
				"capture's plan and these sources, so it is not built and run "
				"unread: 'cacheadvise report %s --all' writes it again (read it "
				"with 'cacheadvise apply %s --dry-run')", res->name, dir, dir);
	strbuf_release(&made);
	return ret;
}

/* source.patch applied in the copy, by apply's own code. */
static int patch_copy(const char *dir, const char *python, struct rebuild_copy *rc)
{
	struct source_apply_options o = { dir, rc->sources_copy, python, 0 };
	struct source_apply res;
	struct stat st;
	char *patch = capture_layout_file(dir, CAPTURE_LAYOUT_SOURCE_PATCH);
	int ret = 0;

	if (stat(patch, &st) || !st.st_size)
		ret = error_set(CA_E_INPUT, "'%s' rewrites nothing: there is nothing to rebuild",
				patch);
	free(patch);
	if (ret)
		return ret;
	ret = source_apply_prepare(&o, &res);
	if (!ret && res.state == SOURCE_APPLY_TODO)
		ret = same_as_made(&res, dir);
	if (!ret && res.state == SOURCE_APPLY_TODO)
		ret = source_apply_write(&res, 0);
	if (!ret)
		rc->patched_files = res.diff.nr_files;
	if (ret)
		ret = error_prefix(ret, "source.patch does not apply to the copy of the sources");
	source_apply_release(&res);
	return ret;
}

/*
 * The tree to copy: the sources' root, widened to hold the program's own
 * folder (a CUDA program built beside its sources, ./build/app next to
 * ./src) or the script a Python program runs; never "/" or $HOME whole.
 */
static int tree_root(struct rebuild_copy *rc, char *const *argv, const char *cwd)
{
	const char *prog = argv[0];
	char *file = NULL, *real = NULL, *tree, *home;
	size_t i;
	int ret = 0;

	if (python_program(argv[0])) {
		prog = NULL;
		for (i = 1; argv[i] && !prog; i++)
			if (strlen(argv[i]) > 3 && !strcmp(argv[i] + strlen(argv[i]) - 3, ".py"))
				prog = argv[i];
	}
	if (prog && prog[0] != '/' && strchr(prog, '/'))
		file = xasprintf("%s/%s", cwd, prog);
	else if (prog && prog[0] != '/' && !python_program(argv[0]) &&
		 runner_resolve_program(prog, &file))
		error_clear();      /* not found: the sources' root alone */
	if (prog && !file)
		file = xstrdup(prog);
	real = file ? realpath(file, NULL) : NULL;
	if (real) {
		*strrchr(real, '/') = '\0';
		tree = path_common(rc->sources, *real ? real : "/");
	} else {
		tree = xstrdup(rc->sources);
	}
	home = getenv("HOME") ? realpath(getenv("HOME"), NULL) : NULL;
	if (!strcmp(tree, "/") || (home && !strcmp(tree, home)))
		ret = error_set(CA_E_INPUT, "the sources ('%s') and the program ('%s') share no "
				"folder short of '%s': run the program from inside its source "
				"tree", rc->sources, argv[0], tree);
	rc->root = tree;
	free(home);
	free(real);
	free(file);
	return ret;
}

int rebuild_copy_make(const char *dir, char *const *argv, const char *cwd, const char *python,
		      struct rebuild_copy *rc)
{
	char tmpl[] = "/tmp/cacheadvise-rebuild-XXXXXX", here[PATH_MAX], *capture = NULL, *outs;
	char *real_cwd, *norm;
	const char *skip[3] = { NULL, NULL, NULL };
	struct path_copy_limits lim = { REBUILD_COPY_MAX_BYTES, REBUILD_COPY_MAX_FILES, skip };
	int ret;

	memset(rc, 0, sizeof(*rc));
	rc->typed = xstrdup(argv[0]);
	if (!cwd) {
		if (!getcwd(here, sizeof(here)))
			return error_set(CA_E_IO, "cannot read the current folder: %s",
					 strerror(errno));
		cwd = here;
	}
	real_cwd = realpath(cwd, NULL);
	norm = path_normalize(real_cwd ? real_cwd : cwd);
	free(real_cwd);
	ret = sources_root(dir, &rc->sources);
	if (!ret)
		ret = tree_root(rc, argv, norm);
	if (!ret && !mkdtemp(tmpl))
		ret = error_set(CA_E_IO, "cannot create a temporary directory: %s",
				strerror(errno));
	if (ret)
		goto out;
	rc->tmp = xstrdup(tmpl);
	rc->copy = xasprintf("%s/src", rc->tmp);
	rc->sources_copy = in_copy(rc->sources, rc->root, rc->copy);
	rc->triton_cache = xasprintf("%s/triton-cache", rc->tmp);
	/* the capture itself is not copied where it lies in the tree */
	capture = realpath(dir, NULL);
	skip[0] = capture;
	/* nor the captures of profile's default --out */
	skip[1] = outs = xasprintf("%s/cacheadvise-out", rc->root);
	ret = path_copy_tree(rc->root, rc->copy, &lim);
	free(capture);
	free(outs);
	if (ret) {
		ret = error_prefix(ret, "the tree '%s' cannot be copied", rc->root);
		goto out;
	}
	if (mkdir(rc->triton_cache, 0700)) {
		ret = error_set(CA_E_IO, "cannot create '%s': %s", rc->triton_cache,
				strerror(errno));
		goto out;
	}
	ret = patch_copy(dir, python, rc);
	if (ret)
		goto out;
	rc->argv = rebuild_copy_map_argv(rc->root, rc->copy, norm, argv, &rc->cwd);
	ret = resolve_program(rc);
out:
	free(norm);
	return ret;
}

/* Whether path starts with "#!". */
static int is_script(const char *path)
{
	char head[2] = { 0, 0 };
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	if (fread(head, 1, 2, f) != 2)
		head[0] = 0;
	fclose(f);
	return head[0] == '#' && head[1] == '!';
}

int rebuild_copy_build(struct rebuild_copy *rc, const char *cmd, double timeout)
{
	char *const sh[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	char *log = xasprintf("%s/build.log", rc->tmp);
	struct run_spec spec;
	struct run_result res;
	struct stat st;
	time_t start = time(NULL);
	int ret;

	/* a wrapper script is not what the build remakes */
	if (rc->program && is_script(rc->program)) {
		free(log);
		return error_set(CA_E_INPUT, "'%s' is a script: the rebuild checks and times the "
				 "program a build makes; name the binary it runs", rc->typed);
	}
	memset(&spec, 0, sizeof(spec));
	spec.argv = sh;
	spec.path = "/bin/sh";
	spec.log_path = log;
	spec.cwd = rc->cwd ? rc->cwd : rc->copy;
	spec.timeout_seconds = timeout;
	ret = runner_run(&spec, &res);
	if (!ret && res.status != RUN_OK) {
		struct strbuf out = STRBUF_INIT;
		size_t start;

		if (strbuf_read_file(&out, log, 0))
			error_clear();
		/* its last lines */
		start = out.len > 600 ? out.len - 600 : 0;
		ret = error_set(CA_E_PROGRAM, "the build command '%s' %s in the copy of the "
				"sources%s%.*s", cmd,
				res.status == RUN_FAILED ? "failed" :
				res.status == RUN_TIMEOUT ? "timed out" :
				res.status == RUN_NOT_STARTED ? "could not start" : "was killed",
				out.len ? ": ..." : "", (int)(out.len - start), out.buf + start);
		strbuf_release(&out);
	}
	free(log);
	if (!ret)
		ret = resolve_program(rc);
	if (ret == CA_E_INPUT)
		return error_prefix(ret, "after the build, in the copy of the sources");
	if (ret)
		return ret;
	/* the program must be the build's: in the copy, and made by it (the
	 * copy keeps the files' times, so a program the build left is as old as
	 * the original's) */
	if (!path_under(rc->program, rc->copy))
		return error_set(CA_E_INPUT, "the program '%s' is not in the tree copied ('%s'), "
				 "so the build in the copy cannot remake it: run the program "
				 "from inside the tree it is built in", rc->typed, rc->root);
	if (stat(rc->program, &st) || st.st_mtime < start - 1)
		return error_set(CA_E_INPUT, "the build command '%s' did not remake '%s' in the "
				 "copy of the sources: give the command that builds it", cmd,
				 rc->typed);
	return 0;
}

void rebuild_copy_release(struct rebuild_copy *rc)
{
	if (rc->tmp && path_remove_tree(rc->tmp))
		rc->tmp_left = xstrdup(rc->tmp);
	free(rc->tmp);
	free(rc->root);
	free(rc->sources);
	free(rc->sources_copy);
	free(rc->copy);
	free(rc->triton_cache);
	free_string_list(rc->argv);
	free(rc->cwd);
	free(rc->program);
	free(rc->typed);
	rc->typed = NULL;
	rc->tmp = rc->root = rc->sources = rc->sources_copy = rc->copy = NULL;
	rc->triton_cache = rc->cwd = rc->program = NULL;
	rc->argv = NULL;
}

int rebuild_copy_make_built(const char *dir, char *const *argv, const char *python,
			    const char *build, double timeout, struct rebuild_copy *rc,
			    struct strbuf *line)
{
	int ret = rebuild_copy_make(dir, argv, NULL, python, rc);

	if (!ret && build)
		ret = rebuild_copy_build(rc, build, timeout);
	if (ret)
		return ret;
	strbuf_addf(line, "REBUILT IN A COPY: source.patch applied to %zu file%s of a copy of "
		    "'%s'", rc->patched_files, rc->patched_files == 1 ? "" : "s", rc->root);
	if (build)
		strbuf_addf(line, ", built there with '%s'", build);
	else
		strbuf_addstr(line, " (no build)");
	strbuf_addch(line, '\n');
	return 0;
}

void rebuild_copy_timing(const struct rebuild_copy *rc, struct rebuild_timing_options *t)
{
	t->argv = rc->argv;
	t->rebuilt_path = rc->program;
	t->rebuilt_cwd = rc->cwd;
	t->rebuilt_triton_cache = rc->triton_cache;
	t->baseline_as_built = 1;
}
