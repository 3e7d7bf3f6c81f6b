#ifndef CACHEADVISE_XALLOC_H
#define CACHEADVISE_XALLOC_H

#include <stddef.h>

/*
 * Allocation that never returns NULL: on exhaustion these print one line to
 * stderr and abort(), so callers need no NULL checks (redis zmalloc style).
 * Everything they return is freed with free().
 */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh heap string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * ALLOC_GROW(ptr, nr, alloc): make room for at least nr elements in the
 * array ptr whose capacity is alloc (git's ALLOC_GROW). Typical use:
 *     ALLOC_GROW(v->items, v->nr + 1, v->alloc);
 *     v->items[v->nr++] = item;
 */
#define ALLOC_GROW(ptr, nr, alloc)                                            \
	do {                                                                  \
		if ((size_t)(nr) > (size_t)(alloc)) {                         \
			size_t alloc_grow_n_ = ((size_t)(alloc) + 16) * 3 / 2; \
			if (alloc_grow_n_ < (size_t)(nr))                     \
				alloc_grow_n_ = (size_t)(nr);                 \
			(ptr) = xrealloc((ptr), alloc_grow_n_ * sizeof(*(ptr))); \
			(alloc) = alloc_grow_n_;                              \
		}                                                             \
	} while (0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Frees each string of a NULL-terminated list, then the list (NULL: nothing). */
void free_string_list(char **list);

#endif
