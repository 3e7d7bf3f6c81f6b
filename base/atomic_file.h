#ifndef CACHEADVISE_ATOMIC_FILE_H
#define CACHEADVISE_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Output files are written to "<path>.tmp.<pid>" and renamed over <path>
 * only when complete, so a crash or an error never leaves a half-written
 * file under the final name.
 *
 *     struct atomic_file af;
 *     if (atomic_file_open(&af, path)) return ...;
 *     fprintf(af.fp, ...);
 *     return atomic_file_commit(&af);   // or atomic_file_abort(&af)
 */
struct atomic_file {
	FILE *fp;
	char *path;
	char *tmp_path;
};

/* Returns 0 or CA_E_IO with the message set. */
int atomic_file_open(struct atomic_file *af, const char *path);
/* Flushes, fsyncs, closes and renames. Returns 0 or CA_E_IO; on error the
 * temporary file is removed. Releases af either way. */
int atomic_file_commit(struct atomic_file *af);
/* Removes the temporary file and releases af. */
void atomic_file_abort(struct atomic_file *af);

/* Writes len bytes to path atomically. Returns 0 or CA_E_IO. */
int write_file_atomic(const char *path, const void *data, size_t len);

/* mkdir -p. Returns 0 or CA_E_IO with the message set. */
int mkdir_p(const char *path);

#endif
