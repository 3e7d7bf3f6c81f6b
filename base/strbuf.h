#ifndef CACHEADVISE_STRBUF_H
#define CACHEADVISE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A growable, always NUL-terminated byte buffer (git's strbuf). The storage
 * belongs to the strbuf until strbuf_detach() hands it to the caller.
 * Initialise with STRBUF_INIT or strbuf_init(); release with strbuf_release().
 */
struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_empty_[];
#define STRBUF_INIT { 0, 0, strbuf_empty_ }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
/* Returns the buffer (caller frees) and leaves sb empty and initialised. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Appends s with HTML special characters (& < > " ') escaped. */
void strbuf_add_html(struct strbuf *sb, const char *s);

/*
 * Appends s as it may be shown on a terminal: control characters (below
 * 0x20, 0x7f, and the C1 controls U+0080 to U+009F as UTF-8) as \xHH, so
 * text from a capture, a PTX file or a graph cannot ring the bell, return
 * the cursor, clear the screen or change colours. The one escaper of the
 * tool: every name or text from input that reaches a terminal or a message
 * goes through it.
 */
void strbuf_add_printable(struct strbuf *sb, const char *s);
/* The same for a text of several lines: newlines and tabs are kept. */
void strbuf_add_printable_lines(struct strbuf *sb, const char *s);
/* The same for len bytes of s (which may hold NULs, written as \x00);
 * keep_lines as in strbuf_add_printable_lines. */
void strbuf_add_printable_mem(struct strbuf *sb, const char *s, size_t len, int keep_lines);

/*
 * Appends s as one word of a POSIX shell command line that, pasted, passes
 * s unchanged: as it is when it holds only letters, digits and _@%+=:,./-;
 * else in single quotes ('\'' for a quote); and where s holds control
 * characters, in bash's $'...' with \xHH for them (never raw on a terminal).
 */
void strbuf_add_shell_word(struct strbuf *sb, const char *s);

/*
 * Appends the whole file at path. Returns 0, or a negative CA_E_* code with
 * the error message set (see error.h) when the file cannot be read.
 * It is input_file_read() (base/input_file.h): a directory, FIFO or device
 * is refused without blocking, and a file larger than max_bytes (0:
 * INPUT_MAX_BINARY, 1 GiB) is refused by its size before it is read.
 */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max_bytes);

#endif
