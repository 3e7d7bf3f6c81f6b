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

#endif
