#ifndef CACHEADVISE_OUTPUT_GUARD_H
#define CACHEADVISE_OUTPUT_GUARD_H

#include <stddef.h>

/*
 * "Is this output one of my inputs?": a command that writes a file names
 * every file it reads, and every folder whose contents it reads, and asks
 * here before it writes, so that no output replaces an input however it is
 * spelled (issue 36). Paths are compared resolved: the real path of a
 * path's folder joined with its last name, and, where the path exists, its
 * own real path (through a symbolic link at it); an existing output is also
 * compared with an existing input by device and inode (a hard link, a bind
 * mount). "-" (standard input or output) is no file and never matches.
 *
 *     struct output_guard g = OUTPUT_GUARD_INIT;
 *     output_guard_add_file(&g, plan_path, "the plan to apply");
 *     output_guard_add_file(&g, ptx_path, "the PTX to patch");
 *     hit = output_guard_check(&g, out_path);   // "the plan to apply" or NULL
 *     output_guard_release(&g);
 */
struct output_guard_input;

struct output_guard {
	struct output_guard_input *in;
	size_t nr, alloc;
};

#define OUTPUT_GUARD_INIT { NULL, 0, 0 }

/* An input file; what (a static string) names it in the caller's message. */
void output_guard_add_file(struct output_guard *g, const char *path, const char *what);
/* Everything under the folder dir, at any depth (not dir itself). */
void output_guard_add_tree(struct output_guard *g, const char *dir, const char *what);

/* The `what` of the input that writing out would replace or write into,
 * or NULL when it is none of them. */
const char *output_guard_check(const struct output_guard *g, const char *out);

void output_guard_release(struct output_guard *g);

#endif
