/*
 * The table of source rewriting's back-ends (emitters/rewrite/rewrite_backend.h).
 */
#include "emitters/rewrite/rewrite_backend.h"

#include <string.h>

const struct rewrite_backend *const rewrite_backends[] = {
	&rewrite_backend_cuda,      /* rewrites first: its loads' order is source.patch's */
	&rewrite_backend_triton,
	&rewrite_backend_regcache,
	NULL,
};

const struct rewrite_backend *rewrite_backend_for(const char *path)
{
	size_t i;

	/* the language-specific rows first; CUDA C++ takes the rest */
	for (i = 1; rewrite_backends[i]; i++)
		if (rewrite_backends[i]->decide && rewrite_backends[i]->recognises(path))
			return rewrite_backends[i];
	return &rewrite_backend_cuda;
}

const struct rewrite_backend *rewrite_backend_find(const char *name)
{
	size_t i;

	for (i = 0; rewrite_backends[i]; i++)
		if (!strcmp(rewrite_backends[i]->name, name))
			return rewrite_backends[i];
	return NULL;
}
