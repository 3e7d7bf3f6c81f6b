#ifndef CACHEADVISE_FILE_SNAPSHOT_H
#define CACHEADVISE_FILE_SNAPSHOT_H

/*
 * The files a program run creates or changes (issue 14): a snapshot of
 * size and mtime before the run and after it, taken of our working
 * directory (the program runs in it; paths are relative to it) (a few levels deep) and of the paths the program's arguments
 * name ("out.bin", "-o=out.bin", "--output=dir/out.bin"); after the run the
 * files that differ are hashed (SHA-256) into a struct run_output, which
 * analysis/output_check.h judges. Where a hash differs, the check compares
 * contents (numbers within a tolerance): file_snapshot_keep() keeps a copy
 * of a file by its hash, once per content.
 *
 *     file_snapshot_take(&before, &spec);
 *     ...run...
 *     file_snapshot_take(&after, &spec);
 *     file_snapshot_changes(&before, &after, spec.always, &out);
 */

#include <stddef.h>

#include "analysis/output_check.h"

struct file_snapshot_entry {
	char *path;
	int exists;
	long long size, mtime_ns;
};

struct file_snapshot {
	struct file_snapshot_entry *e;
	size_t n, alloc;
	int truncated;          /* the working directory held more than the walk looks at */
};

struct file_snapshot_spec {
	const char *exclude;    /* a directory not to enter (the capture directory); NULL: none */
	char *const *argv;      /* the program's arguments (argv[0] is skipped); NULL: none */
	const char *always;     /* a file hashed after every run (--compare); NULL: none */
};

/* Takes a snapshot (s is initialised here; release with file_snapshot_release). */
void file_snapshot_take(struct file_snapshot *s, const struct file_snapshot_spec *spec);
void file_snapshot_release(struct file_snapshot *s);

/*
 * Adds to out every file that exists in after with another size or mtime
 * than in before, or is new (hashed now), or that before had and after
 * does not (removed); and always, hashed whether or not it changed.
 * Returns how many files were added.
 */
size_t file_snapshot_changes(const struct file_snapshot *before, const struct file_snapshot *after,
			     const char *always, struct run_output *out);

/* The largest file kept, and the most kept in all for one profile. */
#define FILE_SNAPSHOT_KEEP_MAX OUTPUT_DATA_MAX
#define FILE_SNAPSHOT_KEEP_TOTAL (1ULL << 30)

/*
 * Copies f (a file of the run's working directory, as
 * file_snapshot_changes() found it) to keep_path unless a file is there
 * already (the same content: keep_path names it by its SHA-256). *kept
 * counts the bytes kept so far; a file over FILE_SNAPSHOT_KEEP_MAX, or one
 * that would take *kept over FILE_SNAPSHOT_KEEP_TOTAL, is not kept.
 * Returns 1 when keep_path holds f's content, 0 when it was not kept
 * (too large, removed, unreadable: the check then has the hash alone).
 */
int file_snapshot_keep(const struct output_file *f, const char *keep_path,
		       unsigned long long *kept);

#endif
