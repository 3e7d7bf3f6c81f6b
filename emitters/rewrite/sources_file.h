#ifndef CACHEADVISE_SOURCES_FILE_H
#define CACHEADVISE_SOURCES_FILE_H

#include <stddef.h>

/*
 * sources.json (schema "cacheadvise.sources/1", docs/cmd-apply.md): the
 * source files source.patch changes, as the capture read them, so `apply`
 * can refuse a file that changed since and recognise one already patched.
 * This module is the format's one reader and one writer.
 *
 *   {"schema": "cacheadvise.sources/1",
 *    "root": "/abs/src" | null,     where the sources were when profiled
 *    "read_from": "/abs/src",       where they were read (--source-root)
 *    "files": [{"path": "stencil.cu",          relative to the root
 *               "sha256": "<64 hex>",          the file as read
 *               "patched": true,               source.patch changes it
 *               "patched_sha256": "<64 hex>",  the file once patched
 *               "rewritten_lines": 5}],
 *    "left_out": [{"kernel": "_Z6KernelPi",    the loads the plan changes that
 *                  "ordinal": 3,               source.patch does not rewrite,
 *                  "reason": "..."}]}          and why, as the sources said
 *                                              when it was written (optional)
 */

#define SOURCES_SCHEMA "cacheadvise.sources/1"

struct sources_file_entry {
	char *path;                 /* relative to the root, no ".." */
	char *sha256;               /* 64 lowercase hex digits */
	int patched;                /* source.patch changes it */
	char *patched_sha256;       /* NULL when not patched */
	long rewritten_lines;       /* 0 when not patched */
};

/* A load the plan changes that source.patch leaves alone, and why: `check`
 * says it as it was when the patch was written, not as the sources patched
 * since would make it read. */
struct sources_file_left_out {
	char *kernel;               /* the kernel's (mangled) name */
	unsigned ordinal;
	char *reason;
};

struct sources_file {
	char *root;                 /* absolute, NULL unknown */
	char *read_from;            /* NULL unknown */
	struct sources_file_entry *files;
	size_t nr_files;
	struct sources_file_left_out *left_out;
	size_t nr_left_out;
};

void sources_file_init(struct sources_file *sf);
void sources_file_release(struct sources_file *sf);

/* Appends an entry (strings copied; patched_sha256 may be NULL). */
void sources_file_add(struct sources_file *sf, const char *path, const char *sha256,
		      const char *patched_sha256, long rewritten_lines);

/*
 * Reads and validates path into sf (initialised): the schema, a "root"
 * that is absolute where given, each file's relative path (no "..", not
 * absolute, not listed twice) and SHA-256s. Returns 0 or CA_E_INPUT naming
 * the file and the field.
 */
int sources_file_load(struct sources_file *sf, const char *path);

/* Writes sf atomically to path. Returns 0 or CA_E_IO. */
int sources_file_write(const struct sources_file *sf, const char *path);

/* Appends a left-out load (strings copied). */
void sources_file_add_left_out(struct sources_file *sf, const char *kernel, unsigned ordinal,
			       const char *reason);
/* The recorded reason a load was left out, NULL when none is recorded. */
const char *sources_file_left_out_reason(const struct sources_file *sf, const char *kernel,
					 unsigned ordinal);

/* The entry for a relative path, NULL when sources.json does not list it. */
const struct sources_file_entry *sources_file_find(const struct sources_file *sf,
						   const char *path);

#endif
