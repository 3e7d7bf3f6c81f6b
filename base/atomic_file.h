#ifndef CACHEADVISE_ATOMIC_FILE_H
#define CACHEADVISE_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Output files are written to "<path>.tmp.<pid>" and renamed over <path>
 * only when complete, so a crash or an error never leaves a half-written
 * file under the final name. A FIFO or a device (/dev/null, /dev/full, a
 * terminal) is written into, never renamed over, and a write error there
 * is still an error; a symbolic link is written through (the file it leads
 * to is replaced, the link stays); a directory is refused.
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
/* Flushes (and fsyncs a file to be renamed) without closing, so that a
 * write error shows before a second file is committed. Returns 0 or
 * CA_E_IO naming the output. */
int atomic_file_flush(struct atomic_file *af);
/* Flushes, fsyncs, closes and renames. Returns 0 or CA_E_IO; on error the
 * temporary file is removed. Releases af either way. */
int atomic_file_commit(struct atomic_file *af);
/* Removes the temporary file and releases af. */
void atomic_file_abort(struct atomic_file *af);

/*
 * Batches: several files replaced together, all or none (`report --all`: no
 * report new while another is old after a full disk). Between
 * atomic_batch_begin() and atomic_batch_commit(), atomic_file_commit() in
 * this thread (and so write_file_atomic() and json_file_write()) writes,
 * syncs and closes its temporary file but leaves the rename: the batch
 * renames them all at its commit, once every file is written. The batch is
 * the thread's, not a parameter, so that writers deep in the emitters join
 * it unchanged.
 *
 *     atomic_batch_begin();
 *     ret = write_every_file();               // write_file_atomic() each
 *     ret = ret ? atomic_batch_abort(), ret : atomic_batch_commit();
 *
 * Writing one path twice in a batch keeps the second. Batches do not nest.
 */
void atomic_batch_begin(void);
/* Renames every file written since atomic_batch_begin() into place and
 * ends the batch. Returns 0, or CA_E_IO when a rename fails (the files not
 * yet renamed are removed; renames within a directory need no space, so
 * this is rare). */
int atomic_batch_commit(void);
/* Removes every temporary file of the batch, replacing nothing, and ends it. */
void atomic_batch_abort(void);

/* Writes len bytes to path atomically. Returns 0 or CA_E_IO. */
int write_file_atomic(const char *path, const void *data, size_t len);
/* The same for a file of the tool's own (a substitute module): a symbolic
 * link at path is replaced, never written through. */
int write_file_replacing(const char *path, const void *data, size_t len);

/* mkdir -p. Returns 0 or CA_E_IO with the message set. */
int mkdir_p(const char *path);

#endif
