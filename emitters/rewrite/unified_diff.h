#ifndef CACHEADVISE_UNIFIED_DIFF_H
#define CACHEADVISE_UNIFIED_DIFF_H

#include <stddef.h>

#include "base/strbuf.h"

/*
 * The one reader of source.patch (emitters/rewrite/source_patch.c writes it): a
 * strict unified diff that changes existing text files in place, and
 * nothing else (STYLE.md "Untrusted input"). `apply` parses the patch once
 * with unified_diff_parse(), checks the files it names, and applies
 * exactly those parsed hunks with unified_diff_apply(); no other tool
 * reads the patch.
 *
 * What parses:
 *
 *     [diff --git a/PATH b/PATH          optional git header, same PATH
 *      index HEX..HEX[ 100644|100755]]
 *     --- a/PATH
 *     +++ b/PATH
 *     @@ -A[,B] +C[,D] @@[ anything]     B old and D new lines follow,
 *     ' ' / '-' / '+' line, or ""        counted as git counts them (an
 *     \ No newline at end of file        empty line is an empty context line)
 *     @@ ...                             more hunks, in order, not overlapping
 *     --- a/OTHER ...                    more files, each once
 *
 * Everything else is refused with a message that names the line and what
 * it is: a context diff, a file created or deleted (/dev/null, "new file
 * mode", "deleted file mode"), a mode change, a symbolic link or submodule
 * (mode 120000, 160000), a rename or copy (a/X to b/Y, "rename from",
 * "copy from", "similarity index"), a binary patch, a path that is absolute,
 * quoted, holds "." / ".." / ".git" components, empty components or control
 * characters, CRLF line ends on the patch's own lines, a NUL byte, a line
 * cut short at the end of the text, a hunk whose lines do not add up to
 * its header, and any line the grammar above has no place for.
 */

/* One line of a hunk, pointing into the diff's own copy of the text. */
struct unified_diff_line {
	char kind;                  /* ' ' context, '-' removed, '+' added */
	const char *text;           /* without its '\n' */
	size_t len;
	int no_newline;             /* "\ No newline at end of file" follows it */
};

struct unified_diff_hunk {
	size_t old_start, old_count;    /* as in "@@ -A,B +C,D @@" */
	size_t new_start, new_count;
	size_t patch_line;              /* 1-based line of the "@@" in the patch */
	struct unified_diff_line *lines;
	size_t nr_lines;
};

struct unified_diff_file {
	char *path;                 /* PATH of "--- a/PATH" and "+++ b/PATH" */
	size_t patch_line;          /* 1-based line of its "--- " */
	struct unified_diff_hunk *hunks;
	size_t nr_hunks;
};

struct unified_diff {
	struct unified_diff_file *files;
	size_t nr_files;
	char *text;                 /* the patch (owned): the lines point into it */
};

void unified_diff_init(struct unified_diff *d);
void unified_diff_release(struct unified_diff *d);

/*
 * Parses len bytes of text (a copy is kept) into d (initialised). name
 * is the patch in messages ("'DIR/source.patch'"). Returns 0 with at least
 * one file, or CA_E_INPUT with the message set ("NAME, line 7: 'new file
 * mode 100755': creates a file: ...") and d left empty. Names and lines
 * of the patch in messages are shown with control characters escaped.
 */
int unified_diff_parse(struct unified_diff *d, const char *text, size_t len, const char *name);

/*
 * Applies f's hunks to old (len bytes, the file's contents) into out
 * (appended). Every context and removed line must be the file's line at
 * the place its hunk's header says, byte for byte and with or without its
 * newline as the patch says: no offset, no fuzz. Returns 0, or CA_E_INPUT
 * naming file (the file in messages) and the line that differs, with out
 * as it was.
 */
int unified_diff_apply(const struct unified_diff_file *f, const char *old, size_t len,
		       struct strbuf *out, const char *file);

#endif
