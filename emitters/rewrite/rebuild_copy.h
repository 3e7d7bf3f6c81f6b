#ifndef CACHEADVISE_REBUILD_COPY_H
#define CACHEADVISE_REBUILD_COPY_H

#include <stddef.h>

#include "base/strbuf.h"
#include "collectors/rebuild_timing.h"

/*
 * The program as the user will build it, without touching the user's
 * tree (issue 38 item 3): the sources' root that the capture recorded
 * (sources.json) copied into a private folder, source.patch applied there
 * by `apply`'s own code, the build command run in the copy (a CUDA
 * program), and the program's command line pointed into the copy. A Triton
 * program needs no build: its patched .py compiles when it runs, into a
 * private TRITON_CACHE_DIR so no compile of the original is taken for it.
 * `profile` times the result against the original (its headline figure);
 * `check --build` checks it. Prints nothing.
 */

struct rebuild_copy {
	char *tmp;                  /* the private folder, removed by release (owned) */
	char *sources;              /* the sources' root (sources.json), unpatched (owned) */
	char *root;                 /* the tree copied: the sources' root, widened to hold
				       the program's folder (owned) */
	char *copy;                 /* tmp/src: the tree's copy (owned) */
	char *sources_copy;         /* the sources' root in the copy, patched (owned) */
	char *triton_cache;         /* tmp/triton-cache: a private TRITON_CACHE_DIR (owned) */
	char **argv;                /* the program's command pointed into the copy (owned) */
	char *cwd;                  /* where it runs: our folder in the copy, NULL: ours */
	char *program;              /* the file argv[0] names, resolved where it runs (owned) */
	char *typed;                /* argv[0] as the user typed it, for messages (owned) */
	size_t patched_files;       /* files source.patch changed in the copy */
	char *tmp_left;             /* a folder release could not remove, or NULL (owned) */
};

/* Limits of the copy: a tree past them is not copied (the rebuild is then
 * not done, and the report says why). */
#define REBUILD_COPY_MAX_BYTES (2ULL << 30)
#define REBUILD_COPY_MAX_FILES 200000UL

/*
 * Makes the copy for capture directory dir (its sources.json and
 * source.patch) and the program's argv (NULL-terminated, as the profile
 * ran it; cwd the folder it ran in, NULL: ours). python: the Python
 * interpreter for a Triton program's patch (report_input_options), NULL:
 * the default. Returns 0 with *rc filled, or CA_E_* with the message set
 * (no sources root recorded, a tree past the limits, the patch does not
 * apply, the program is not in the copy); release *rc either way.
 */
int rebuild_copy_make(const char *dir, char *const *argv, const char *cwd, const char *python,
		      struct rebuild_copy *rc);

/*
 * Runs cmd with /bin/sh -c in the copy of the folder the program runs in
 * (where that lies in the tree; else the copy's root), timeout seconds (0:
 * none), its
 * output kept; then resolves the program again (a build makes it).
 * Returns 0, or CA_E_PROGRAM with the message naming the exit status and
 * the output's last lines.
 */
int rebuild_copy_build(struct rebuild_copy *rc, const char *cmd, double timeout);

/*
 * rebuild_copy_make, then rebuild_copy_build where build is not NULL;
 * appends to line what was done ("REBUILT IN A COPY: ...\n").
 */
int rebuild_copy_make_built(const char *dir, char *const *argv, const char *python,
			    const char *build, double timeout, struct rebuild_copy *rc,
			    struct strbuf *line);

/* Points t at the program in the copy: its argv, file, folder and private
 * Triton cache; the original, the baseline, runs as built. */
void rebuild_copy_timing(const struct rebuild_copy *rc, struct rebuild_timing_options *t);

/* Removes rc->tmp (rc->tmp_left says when it could not: the caller frees
 * it) and frees the rest. */
void rebuild_copy_release(struct rebuild_copy *rc);

/*
 * argv pointed into the copy (NULL-terminated, owned): an argument naming
 * a path under root (absolute, or relative to cwd where cwd is outside
 * root), whole or as the value of "NAME=PATH", names the same path under
 * copy; where cwd is under root the program runs in the same place of the
 * copy (*cwd_out, owned; else NULL) and relative paths stay as they are.
 * root, copy and cwd absolute and normalised. Free with free_string_list.
 */
char **rebuild_copy_map_argv(const char *root, const char *copy, const char *cwd,
			     char *const *argv, char **cwd_out);

#endif
