#ifndef CACHEADVISE_PATCH_TOOL_H
#define CACHEADVISE_PATCH_TOOL_H

#include <stddef.h>

/*
 * Applies a unified diff (len bytes at patch, named name in messages) to
 * the files under root with `git apply`, or `patch -p1` where git is
 * missing, reading it from standard input; the tool's messages go to
 * stderr. check: only check that it applies (git apply --check, patch
 * --dry-run). Returns 0, or CA_E_IO / CA_E_INPUT with the message set.
 */
int patch_tool_apply(const char *root, const char *name, const char *patch, size_t len,
		     int check);

#endif
