#ifndef CACHEADVISE_SOURCE_TYPES_H
#define CACHEADVISE_SOURCE_TYPES_H

#include <stddef.h>

struct source_file;

/*
 * What the program's sources say a type is, for the source patch's helpers
 * (emitters/rewrite/source_hints.c): the declared type of a struct's member, and
 * what a type name a "#define" or "typedef" gives stands for. Looked for
 * in the files a struct used in a file may be defined in: the file, the
 * files it includes with "" (two levels), the C, C++ and CUDA files beside
 * it, then those of the directories above it up to the source root (three
 * at most). Each file is read once and each answer found once, however
 * many loads ask.
 */
struct source_types {
	const char *root;           /* where the sources are (--source-root), borrowed */
	struct { char *path; struct source_file *sf; } *aux;   /* files read; sf NULL unreadable */
	size_t nr_aux;
	struct { char *key; char *type; int defined; } *members;  /* member answers */
	size_t nr_members;
	struct { char *path; char **files; size_t nr; } *lists;  /* files to look in, by file */
	size_t nr_lists;
};

void source_types_init(struct source_types *st, const char *root);
void source_types_release(struct source_types *st);

/*
 * The declared type of member `member` of struct `name` as a file at path
 * (read there) may see it (source_member_type's answer: "long", "float *");
 * NULL when not found, *defined saying whether the struct was. Caller frees.
 */
char *source_types_member(struct source_types *st, const char *path, const char *name,
			  const char *member, int *defined);

/* What a type name stands for through at most two "#define" or "typedef"
 * steps ("fp" -> "double"), NULL when no file says. Caller frees. */
char *source_types_alias(struct source_types *st, const char *path, const char *type);

#endif
