#ifndef CACHEADVISE_ATOMIC_FILE_H
#define CACHEADVISE_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Every output file of the tool is written here, so that a crash or an
 * error never leaves a half-written file under the final name and nothing
 * planted beside it can redirect or stall the write (issue 36).
 *
 * A file is written to a new temporary "<path>.tmp.XXXXXX" in path's own
 * folder, created with O_CREAT | O_EXCL | O_NOFOLLOW (a link or FIFO
 * already at a name is never opened: another name is tried) with the mode
 * fopen would give (0666 less the umask), and renamed over path only when
 * complete. rename() does not follow links: a symbolic link at path is
 * replaced, never written through, and the file it led to stays as it was.
 * A FIFO or a device (/dev/null, /dev/full, a terminal), or a link to one,
 * is written into (appended to, never created or truncated), never renamed
 * over, and a write error there is still an error; so is a link through
 * /proc (/dev/stdout, /dev/fd/N: a file the shell opened for the process).
 * A directory is refused, and so is an empty path.
 *
 *     struct atomic_file af;
 *     if (atomic_file_open(&af, path)) return ...;
 *     fprintf(af.fp, ...);
 *     return atomic_file_commit(&af);   // or atomic_file_abort(&af)
 */
struct atomic_file {
	FILE *fp;
	char *path;         /* as given: what is renamed over */
	char *tmp_path;     /* NULL when written into (a FIFO, a device) */
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

/* Writes len bytes to path atomically, as above. Returns 0 or CA_E_IO. */
int write_file_atomic(const char *path, const void *data, size_t len);

/* mkdir -p. Returns 0 or CA_E_IO with the message set. */
int mkdir_p(const char *path);

#endif
