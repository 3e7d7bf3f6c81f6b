#ifndef CACHEADVISE_PATH_H
#define CACHEADVISE_PATH_H

/*
 * A source path as line info may record it ("kernel/./k.cu",
 * "src/../kernel/k.cu", "a//b.cu") without its "." components, empty
 * components and "dir/.." pairs: the path a diff can name. Leading ".."
 * components stay. Returns a new string.
 */
char *path_normalize(const char *path);

/* Removes dir and everything under it (links are removed, not followed).
 * Returns 0, or -1 when something could not be removed. */
int path_remove_tree(const char *dir);

/* Limits and exclusions of path_copy_tree. */
struct path_copy_limits {
	unsigned long long max_bytes;   /* regular files' bytes in all (0: no limit) */
	unsigned long max_files;        /* entries in all (0: no limit) */
	const char *const *skip;        /* absolute paths not copied (NULL-terminated or NULL) */
};

/*
 * Copies the tree under src to dst (created; it must not exist): folders,
 * regular files with their permission bits, and symbolic links as links
 * (never followed). A folder named ".git", and the paths in lim->skip, are
 * left out; anything else (a device, a socket) is left out too. Returns 0,
 * or CA_E_IO / CA_E_INPUT (over a limit) with the message set, naming the
 * path; dst may then be half made (the caller removes it).
 */
int path_copy_tree(const char *src, const char *dst, const struct path_copy_limits *lim);

/*
 * Where path lies under root: a pointer into path past root and its '/'
 * ("" for root itself), or NULL when it is not under root. Both absolute
 * and normalised (no "." or ".." parts, no trailing '/').
 */
const char *path_under(const char *path, const char *root);

/* The deepest folder holding both a and b (absolute and normalised), owned:
 * "/" at least. */
char *path_common(const char *a, const char *b);

#endif
