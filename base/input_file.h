#ifndef CACHEADVISE_INPUT_FILE_H
#define CACHEADVISE_INPUT_FILE_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

/*
 * Opening the user's input files safely: every reader of a path given on
 * the command line or found in a capture goes through here, so that a FIFO
 * or a device never blocks the tool, a directory is called a directory and
 * a huge (or sparse) file is refused by its size before a byte is read.
 *
 *     int fd = input_file_open(path, INPUT_MAX_JSON, &size);
 *     if (fd < 0) return fd;                 // message set
 *
 * The limits, by kind of input (a file over its limit is refused by stat
 * alone, before a byte is read; they are far above any real input):
 */
#define INPUT_MAX_EXECUTABLE ((uint64_t)4 << 30) /* ELF executables and libraries:
						    mapped, not read, 4 GiB */
#define INPUT_MAX_BINARY ((size_t)1 << 30)       /* fatbins, cubins, anything read whole
						    into memory: 1 GiB */
#define INPUT_MAX_TEXT ((size_t)512 << 20)       /* PTX and source text: 512 MiB */
#define INPUT_MAX_JSON ((size_t)256 << 20)       /* captures, plans, graphs, layouts:
						    256 MiB */

/*
 * Opens path for reading without blocking (O_NONBLOCK, then fstat) and
 * refuses what is not a regular file ("'d' is a directory", "'f' is not a
 * regular file") and a file larger than max_bytes (0: INPUT_MAX_BINARY).
 * "-" is standard input (a duplicate of fd 0), which may be a pipe; its
 * size is then only known by reading (*size = UINT64_MAX). Returns the
 * descriptor (caller closes; O_NONBLOCK cleared) and stores the file's size
 * in *size (may be NULL), or a negative CA_E_INPUT with the message set.
 */
int input_file_open(const char *path, uint64_t max_bytes, uint64_t *size);

/* 1 when both paths exist and name the same file (device and inode, so
 * through links and other spellings), else 0. An output that is the input
 * would destroy it before it is read: commands refuse it. */
int input_file_same(const char *a, const char *b);

/*
 * Appends the whole of path (see input_file_open for "-" and the limits;
 * max_bytes 0: INPUT_MAX_BINARY) to sb. Returns 0, or a negative CA_E_INPUT
 * with the message set and sb as it was.
 */
int input_file_read(struct strbuf *sb, const char *path, size_t max_bytes);

/*
 * Checks that buf (len bytes, read from name) is text: no NUL byte
 * ("'x.ptx' has a NUL byte at offset 123: it is not text"). Returns the
 * length of a leading UTF-8 byte order mark (3) that the caller should
 * skip, 0 when there is none, or a negative CA_E_INPUT with the message set.
 */
int input_text_check(const char *name, const char *buf, size_t len);

/*
 * input_file_read(), then input_text_check(): a UTF-8 byte order mark is
 * dropped, a NUL byte refused. Used for PTX, so that inspect and patch read
 * the same bytes and refuse the same files.
 */
int input_file_read_text(struct strbuf *sb, const char *path, size_t max_bytes);

#endif
