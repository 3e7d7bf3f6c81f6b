/*
 * source.patch's one strict reader and applier (emitters/rewrite/unified_diff.h).
 * Lines are counted as git counts them, so that no line can mean one
 * thing to a check and another to the tool that applies the patch: here
 * they are the same code.
 */
#include "emitters/rewrite/unified_diff.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

/* The largest line number or count a hunk header may give. */
#define MAX_LINE_NUMBER 100000000UL
/* How much of a refused line a message shows. */
#define QUOTE_MAX 80

/* What may be done to a file: change it in place. Said after a refusal. */
#define IN_PLACE "the patch may only change a file in place ('--- a/FILE', " \
		 "'+++ b/FILE')"

struct cursor {
	const char *p, *end;        /* the rest of the text */
	size_t lineno;              /* of the line last read, 1-based */
	const char *name;
};

void unified_diff_init(struct unified_diff *d)
{
	memset(d, 0, sizeof(*d));
}

void unified_diff_release(struct unified_diff *d)
{
	size_t i, j;

	for (i = 0; i < d->nr_files; i++) {
		for (j = 0; j < d->files[i].nr_hunks; j++)
			free(d->files[i].hunks[j].lines);
		free(d->files[i].hunks);
		free(d->files[i].path);
	}
	free(d->files);
	free(d->text);
	memset(d, 0, sizeof(*d));
}

/* The next line (without '\n'; every line has one, checked before). */
static int next_line(struct cursor *c, const char **line, size_t *len)
{
	const char *nl;

	if (c->p >= c->end)
		return 0;
	nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	*line = c->p;
	*len = (size_t)(nl - c->p);
	c->p = nl + 1;
	c->lineno++;
	return 1;
}

static int starts(const char *line, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(line, prefix, n);
}

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* A line as a message shows it: control characters escaped, cut short. */
static char *quote(const char *line, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	char *raw = xstrndup(line, len > QUOTE_MAX ? QUOTE_MAX : len);

	strbuf_add_printable(&sb, raw);
	if (len > QUOTE_MAX)
		strbuf_addstr(&sb, "...");
	free(raw);
	return strbuf_detach(&sb, NULL);
}

/* Refuses the line c is on: "NAME, line N: 'LINE': why". */
static int refuse(const struct cursor *c, const char *line, size_t len, const char *why)
{
	char *q = quote(line, len);
	int ret = error_set(CA_E_INPUT, "%s, line %zu: '%s': %s", c->name, c->lineno, q, why);

	free(q);
	return ret;
}

/*
 * Whether a path may be written under the source root: relative, no empty,
 * ".", ".." or ".git" component (git's verify_path), no control character,
 * backslash or quote, and of a sane length.
 */
static const char *bad_path(const char *path, size_t len)
{
	const char *p = path, *end = path + len;

	if (!len)
		return "an empty path";
	if (len > 4096)
		return "a path longer than 4096 bytes";
	if (path[0] == '/')
		return "an absolute path";
	if (path[0] == '"')
		return "a quoted path (git quotes names with unusual characters)";
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t n = slash ? (size_t)(slash - p) : (size_t)(end - p);

		if (!n)
			return "a path with an empty component ('//' or a trailing '/')";
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return "a path with a '.' or '..' component";
		if (n == 4 && p[0] == '.' && (p[1] | 0x20) == 'g' && (p[2] | 0x20) == 'i' &&
		    (p[3] | 0x20) == 't')
			return "a path into '.git'";
		p += n + (slash != NULL);
		if (slash && p == end)
			return "a path with an empty component ('//' or a trailing '/')";
	}
	for (p = path; p < end; p++) {
		if (is_control((unsigned char)*p))
			return "a path with a control character (a tab, a carriage return, ...)";
		if (*p == '\\')
			return "a path with a backslash";
	}
	return NULL;
}

/* Why a line outside any hunk is refused: what it is, where known. */
static int refuse_line(const struct cursor *c, const char *line, size_t len,
		       const struct unified_diff *d)
{
	static const struct { const char *prefix, *why; } known[] = {
		{ "*** ", "a context diff, which is never applied: only unified diffs ('---', "
			  "'+++', '@@') are" },
		{ "***************", "a context diff, which is never applied: only unified diffs "
				     "('---', '+++', '@@') are" },
		{ "new file mode 120000", "creates a symbolic link; " IN_PLACE },
		{ "new file mode 160000", "creates a submodule; " IN_PLACE },
		{ "new file mode", "creates a file; " IN_PLACE },
		{ "deleted file mode", "deletes a file; " IN_PLACE },
		{ "old mode", "changes a file's mode; " IN_PLACE },
		{ "new mode 120000", "turns a file into a symbolic link; " IN_PLACE },
		{ "new mode", "changes a file's mode; " IN_PLACE },
		{ "rename from", "renames a file; " IN_PLACE },
		{ "rename to", "renames a file; " IN_PLACE },
		{ "copy from", "copies a file; " IN_PLACE },
		{ "copy to", "copies a file; " IN_PLACE },
		{ "similarity index", "renames or copies a file; " IN_PLACE },
		{ "dissimilarity index", "rewrites a file whole; " IN_PLACE },
		{ "GIT binary patch", "a binary patch, which is never applied" },
		{ "Binary files ", "a binary patch, which is never applied" },
		{ "literal ", "a binary patch, which is never applied" },
		{ "delta ", "a binary patch, which is never applied" },
		{ "index ", "an 'index' line outside a 'diff --git' header" },
		{ "+++ ", "a '+++' line without a '---' line before it" },
		{ "@@ ", "a hunk outside any file (no '--- a/FILE' and '+++ b/FILE' before it)" },
	};
	size_t i;

	if (len && line[len - 1] == '\r')
		return refuse(c, line, len, "the line ends in a carriage return: the patch has "
			      "Windows (CRLF) line ends, which cacheadvise never writes (was it "
			      "converted on the way?)");
	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (starts(line, len, known[i].prefix))
			return refuse(c, line, len, known[i].why);
	if (d->nr_files && (!len || line[0] == ' ' || line[0] == '-' || line[0] == '+' ||
			    line[0] == '\\'))
		return refuse(c, line, len, "a hunk line after the last line the hunk header "
			      "above counts");
	if (!d->nr_files) {
		char *q = quote(line, len);
		int ret = error_set(CA_E_INPUT, "%s is not a patch: line %zu ('%s') is not part of "
				    "a unified diff", c->name, c->lineno, q);

		free(q);
		return ret;
	}
	return refuse(c, line, len, "not part of a unified diff");
}

/* A decimal number of at most MAX_LINE_NUMBER at *p; advances *p. */
static int number(const char **p, const char *end, size_t *out)
{
	const char *s = *p;
	size_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (size_t)(*s - '0');
		if (v > MAX_LINE_NUMBER)
			return -1;
	}
	*p = s;
	*out = v;
	return 0;
}

/* "@@ -A[,B] +C[,D] @@[ text]" into h. */
static int hunk_header(const char *line, size_t len, struct unified_diff_hunk *h)
{
	const char *p = line + 4, *end = line + len;

	h->old_count = h->new_count = 1;
	if (number(&p, end, &h->old_start))
		return -1;
	if (p < end && *p == ',' && (p++, number(&p, end, &h->old_count)))
		return -1;
	if (end - p < 2 || memcmp(p, " +", 2))
		return -1;
	p += 2;
	if (number(&p, end, &h->new_start))
		return -1;
	if (p < end && *p == ',' && (p++, number(&p, end, &h->new_count)))
		return -1;
	if (end - p < 3 || memcmp(p, " @@", 3))
		return -1;
	p += 3;
	return p == end || *p == ' ' ? 0 : -1;
}

/* Where a hunk's old (new) lines start, 0-based: "-5,0" inserts after line 5. */
static size_t first_index(size_t start, size_t count)
{
	return count ? start - 1 : start;
}

static void add_line(struct unified_diff_hunk *h, size_t *alloc, char kind, const char *text,
		     size_t len)
{
	struct unified_diff_line *l;

	ALLOC_GROW(h->lines, h->nr_lines + 1, *alloc);
	l = &h->lines[h->nr_lines++];
	l->kind = kind;
	l->text = text;
	l->len = len;
	l->no_newline = 0;
}

#define NO_NEWLINE "\\ No newline at end of file"
/* A file's last line without a newline holds something: "" would be no line. */
#define EMPTY_LAST "an empty line without a newline, which no file has"

/*
 * The hunk whose header c has just read (line, len), its lines counted
 * exactly. *old_end and *delta carry the file's previous hunks (where its
 * old lines ended, 0-based, and new minus old lines so far); *ended says
 * an earlier hunk reached the end of a file without a newline.
 */
static int parse_hunk(struct cursor *c, const char *line, size_t len,
		      struct unified_diff_hunk *h, size_t *old_end, long *delta, int *ended)
{
	size_t old_left, new_left, header_line = c->lineno, alloc = 0;
	int old_done = 0, new_done = 0;     /* a side ended without a newline */

	memset(h, 0, sizeof(*h));
	h->patch_line = c->lineno;
	if (len && line[len - 1] == '\r')
		return refuse(c, line, len, "the line ends in a carriage return: the patch has "
			      "Windows (CRLF) line ends, which cacheadvise never writes (was it "
			      "converted on the way?)");
	if (hunk_header(line, len, h))
		return refuse(c, line, len, "not a hunk header ('@@ -A,B +C,D @@')");
	if ((h->old_count && !h->old_start) || (h->new_count && !h->new_start))
		return refuse(c, line, len, "a hunk that starts at line 0");
	if (!h->old_count && !h->new_count)
		return refuse(c, line, len, "a hunk with no lines");
	if (*ended)
		return refuse(c, line, len, "a hunk after the end of the file (the hunk above "
			      "ends it without a newline)");
	if (first_index(h->old_start, h->old_count) < *old_end)
		return refuse(c, line, len, "a hunk that starts before the end of the hunk above: "
			      "hunks must be in order and must not overlap");
	if ((long)first_index(h->new_start, h->new_count) !=
	    (long)first_index(h->old_start, h->old_count) + *delta)
		return refuse(c, line, len, "its new line number does not follow from its old "
			      "line number and the hunks above");
	old_left = h->old_count;
	new_left = h->new_count;
	while (old_left || new_left) {
		const char *l;
		size_t n;
		char kind;

		if (!next_line(c, &l, &n))
			return error_set(CA_E_INPUT, "%s ends inside the hunk of line %zu: it counts "
					 "%zu more old and %zu more new lines", c->name,
					 header_line, old_left, new_left);
		if (n && l[0] == '\\') {
			if (n != strlen(NO_NEWLINE) || memcmp(l, NO_NEWLINE, n) || !h->nr_lines ||
			    h->lines[h->nr_lines - 1].no_newline)
				return refuse(c, l, n, "not '" NO_NEWLINE "' after a line of the hunk");
			if (!h->lines[h->nr_lines - 1].len)
				return refuse(c, l, n, EMPTY_LAST);
			h->lines[h->nr_lines - 1].no_newline = 1;
			kind = h->lines[h->nr_lines - 1].kind;
			old_done |= kind != '+';
			new_done |= kind != '-';
			continue;
		}
		kind = n ? l[0] : ' ';      /* git: an empty line is an empty context line */
		if (kind != ' ' && kind != '-' && kind != '+')
			return refuse(c, l, n, kind == '@' ?
				      "a hunk header before the hunk above has all its lines" :
				      "not a hunk line (' ', '-' or '+'), where the hunk above still "
				      "counts lines");
		if ((kind != '+' && !old_left) || (kind != '-' && !new_left))
			return refuse(c, l, n, "more lines of this kind than the hunk header counts");
		if ((kind != '+' && old_done) || (kind != '-' && new_done))
			return refuse(c, l, n, "a line after '" NO_NEWLINE "'");
		add_line(h, &alloc, kind, n ? l + 1 : l, n ? n - 1 : 0);
		old_left -= kind != '+';
		new_left -= kind != '-';
	}
	/* a "\ No newline" may follow the hunk's last line */
	{
		struct cursor save = *c;
		const char *l;
		size_t n;

		if (next_line(c, &l, &n) && n && l[0] == '\\') {
			if (n != strlen(NO_NEWLINE) || memcmp(l, NO_NEWLINE, n) ||
			    h->lines[h->nr_lines - 1].no_newline)
				return refuse(c, l, n, "not '" NO_NEWLINE "' after a line of the hunk");
			if (!h->lines[h->nr_lines - 1].len)
				return refuse(c, l, n, EMPTY_LAST);
			h->lines[h->nr_lines - 1].no_newline = 1;
			old_done |= h->lines[h->nr_lines - 1].kind != '+';
			new_done |= h->lines[h->nr_lines - 1].kind != '-';
		} else {
			*c = save;
		}
	}
	*ended = old_done || new_done;
	*old_end = first_index(h->old_start, h->old_count) + h->old_count;
	*delta += (long)h->new_count - (long)h->old_count;
	return 0;
}

static void release_hunks(struct unified_diff_file *f)
{
	size_t i;

	for (i = 0; i < f->nr_hunks; i++)
		free(f->hunks[i].lines);
	free(f->hunks);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

/* "+++ b/PATH" and the hunks after the "--- a/PATH" line (line, len) c has read. */
static int parse_file(struct cursor *c, struct unified_diff *d, const char *line, size_t len,
		      const char *git_path)
{
	struct unified_diff_file f;
	const char *old = line + 4, *new, *why, *l;
	size_t old_len = len - 4, new_len, n, i, old_end = 0, minus_line = c->lineno;
	long delta = 0;
	int ended = 0, ret;

	memset(&f, 0, sizeof(f));
	f.patch_line = c->lineno;
	if (len && line[len - 1] == '\r')
		return refuse(c, line, len, "the line ends in a carriage return: the patch has "
			      "Windows (CRLF) line ends, which cacheadvise never writes (was it "
			      "converted on the way?)");
	if (!next_line(c, &l, &n) || !starts(l, n, "+++ "))
		return error_set(CA_E_INPUT, "%s, line %zu: a '---' line not followed by a '+++' "
				 "line", c->name, minus_line);
	if (n && l[n - 1] == '\r')
		return refuse(c, l, n, "the line ends in a carriage return: the patch has "
			      "Windows (CRLF) line ends, which cacheadvise never writes (was it "
			      "converted on the way?)");
	new = l + 4;
	new_len = n - 4;
	if (old_len == 9 && !memcmp(old, "/dev/null", 9))
		return refuse(c, l, n, "creates a file ('--- /dev/null'); " IN_PLACE);
	if (new_len == 9 && !memcmp(new, "/dev/null", 9))
		return refuse(c, l, n, "deletes a file ('+++ /dev/null'); " IN_PLACE);
	if (old_len < 2 || memcmp(old, "a/", 2) || new_len < 2 || memcmp(new, "b/", 2))
		return refuse(c, l, n, "not 'b/FILE' after '--- a/FILE'; " IN_PLACE);
	if (old_len != new_len || memcmp(old + 2, new + 2, new_len - 2))
		return refuse(c, l, n, "not the file of the '---' line above: renames a file; "
			      IN_PLACE);
	if ((why = bad_path(new + 2, new_len - 2)))
		return refuse(c, l, n, why);
	f.path = xstrndup(new + 2, new_len - 2);
	if (git_path && strcmp(git_path, f.path)) {
		free(f.path);
		return refuse(c, l, n, "not the file its 'diff --git' line names");
	}
	for (i = 0; i < d->nr_files; i++) {
		if (!strcmp(d->files[i].path, f.path)) {
			free(f.path);
			return refuse(c, l, n, "a file the patch changes twice: each file once");
		}
	}
	for (;;) {
		struct cursor save = *c;
		struct unified_diff_hunk h;

		if (!next_line(c, &l, &n) || !starts(l, n, "@@ ")) {
			*c = save;
			break;
		}
		ret = parse_hunk(c, l, n, &h, &old_end, &delta, &ended);
		if (ret) {
			free(h.lines);
			release_hunks(&f);
			return ret;
		}
		f.hunks = xrealloc(f.hunks, (f.nr_hunks + 1) * sizeof(*f.hunks));
		f.hunks[f.nr_hunks++] = h;
	}
	if (!f.nr_hunks) {
		ret = error_set(CA_E_INPUT, "%s, line %zu: '+++ b/%s' is not followed by a hunk "
				"('@@ -A,B +C,D @@')", c->name, minus_line + 1, f.path);
		release_hunks(&f);
		return ret;
	}
	d->files = xrealloc(d->files, (d->nr_files + 1) * sizeof(*d->files));
	d->files[d->nr_files++] = f;
	return 0;
}

/* "diff --git a/PATH b/PATH" (git's own header, the same PATH twice). */
static int git_header(const struct cursor *c, const char *line, size_t len, char **path)
{
	const char *p = line + 11, *why;
	size_t n = len - 11, half;

	if (len && line[len - 1] == '\r')
		return refuse(c, line, len, "the line ends in a carriage return: the patch has "
			      "Windows (CRLF) line ends, which cacheadvise never writes (was it "
			      "converted on the way?)");
	/* "a/P b/P": n = 2 + k + 1 + 2 + k */
	if (n < 7 || (n - 5) % 2)
		return refuse(c, line, len, "not 'diff --git a/FILE b/FILE' with one FILE");
	half = (n - 5) / 2;
	if (memcmp(p, "a/", 2) || p[2 + half] != ' ' || memcmp(p + 3 + half, "b/", 2) ||
	    memcmp(p + 2, p + 5 + half, half))
		return refuse(c, line, len, "not 'diff --git a/FILE b/FILE' with one FILE: "
			      "renames a file; " IN_PLACE);
	if ((why = bad_path(p + 2, half)))
		return refuse(c, line, len, why);
	*path = xstrndup(p + 2, half);
	return 0;
}

/* "index HEX..HEX[ MODE]" in a git header: a regular file's mode, if any. */
static int git_index(const struct cursor *c, const char *line, size_t len)
{
	const char *p = line + 6, *end = line + len;
	size_t n;

	for (n = 0; p < end && strchr("0123456789abcdef", *p) && *p; p++)
		n++;
	if (!n || end - p < 3 || memcmp(p, "..", 2))
		return refuse(c, line, len, "not 'index HASH..HASH[ MODE]'");
	for (p += 2, n = 0; p < end && strchr("0123456789abcdef", *p) && *p; p++)
		n++;
	if (!n)
		return refuse(c, line, len, "not 'index HASH..HASH[ MODE]'");
	if (p == end)
		return 0;
	if (end - p == 7 && (!memcmp(p, " 100644", 7) || !memcmp(p, " 100755", 7)))
		return 0;
	if (end - p == 7 && !memcmp(p, " 120000", 7))
		return refuse(c, line, len, "a symbolic link; " IN_PLACE);
	return refuse(c, line, len, "not the mode of a regular file (100644 or 100755)");
}

int unified_diff_parse(struct unified_diff *d, const char *text, size_t len, const char *name)
{
	struct cursor c;
	const char *line, *nul;
	char *git_path = NULL;
	size_t n, git_line = 0;
	int ret = 0;

	unified_diff_init(d);
	nul = memchr(text, '\0', len);
	if (nul)
		return error_set(CA_E_INPUT, "%s has a NUL byte at offset %zu: it is not a text "
				 "patch, and a binary patch is never applied", name,
				 (size_t)(nul - text));
	if (len && text[len - 1] != '\n')
		return error_set(CA_E_INPUT, "%s ends in the middle of a line: it is truncated",
				 name);
	d->text = xstrndup(text, len);
	c.p = d->text;
	c.end = d->text + len;
	c.lineno = 0;
	c.name = name;
	while (!ret && next_line(&c, &line, &n)) {
		if (starts(line, n, "--- ")) {
			ret = parse_file(&c, d, line, n, git_path);
			free(git_path);
			git_path = NULL;
		} else if (starts(line, n, "diff --git ")) {
			if (git_path)
				ret = error_set(CA_E_INPUT, "%s, line %zu: a 'diff --git' header "
						"without '---' and '+++' lines: it changes no text "
						"(a mode, an empty file), which is never applied",
						name, git_line);
			else
				ret = git_header(&c, line, n, &git_path);
			git_line = c.lineno;
		} else if (git_path && starts(line, n, "index ")) {
			ret = git_index(&c, line, n);
		} else {
			ret = refuse_line(&c, line, n, d);
		}
	}
	if (!ret && git_path)
		ret = error_set(CA_E_INPUT, "%s, line %zu: a 'diff --git' header without '---' "
				"and '+++' lines: it changes no text (a mode, an empty file), "
				"which is never applied", name, git_line);
	if (!ret && !d->nr_files)
		ret = error_set(CA_E_INPUT, "%s is not a patch: it names no file ('--- a/FILE', "
				"'+++ b/FILE')", name);
	free(git_path);
	if (ret)
		unified_diff_release(d);
	return ret;
}

/* The file's line i (0-based): its text, length without '\n', whether it has one. */
struct text_line {
	const char *text;
	size_t len;
	int newline;
};

static struct text_line *split(const char *text, size_t len, size_t *nr)
{
	struct text_line *v = NULL;
	const char *p = text, *end = text + len;
	size_t n = 0, alloc = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		ALLOC_GROW(v, n + 1, alloc);
		v[n].text = p;
		v[n].len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		v[n].newline = nl != NULL;
		n++;
		p = nl ? nl + 1 : end;
	}
	*nr = n;
	return v;
}

/* Appends text, and its newline; refuses text after a line without one. */
static int emit(struct strbuf *out, int *open_end, const char *text, size_t len, int newline,
		const char *file)
{
	if (*open_end)
		return error_set(CA_E_INPUT, "the patch ends a line of '%s' without a newline "
				 "before the end of the file", file);
	strbuf_add(out, text, len);
	if (newline)
		strbuf_addch(out, '\n');
	else
		*open_end = 1;
	return 0;
}

int unified_diff_apply(const struct unified_diff_file *f, const char *old, size_t len,
		       struct strbuf *out, const char *file)
{
	size_t nr, pos = 0, i, j, start_len = out->len;
	struct text_line *lines = split(old, len, &nr);
	int open_end = 0, ret = 0;

	for (i = 0; !ret && i < f->nr_hunks; i++) {
		const struct unified_diff_hunk *h = &f->hunks[i];
		size_t at = first_index(h->old_start, h->old_count);

		if (at > nr) {
			ret = error_set(CA_E_INPUT, "'%s' has %zu lines, and the patch's hunk at its "
					"line %zu starts at line %zu: the file is not the one the "
					"patch was made from", file, nr, h->patch_line, h->old_start);
			break;
		}
		for (; !ret && pos < at; pos++)
			ret = emit(out, &open_end, lines[pos].text, lines[pos].len,
				   lines[pos].newline, file);
		for (j = 0; !ret && j < h->nr_lines; j++) {
			const struct unified_diff_line *l = &h->lines[j];

			if (l->kind != '+') {
				if (pos >= nr || lines[pos].len != l->len ||
				    memcmp(lines[pos].text, l->text, l->len) ||
				    lines[pos].newline == l->no_newline) {
					ret = error_set(CA_E_INPUT, "line %zu of '%s' is not the line "
							"the patch's hunk at its line %zu expects "
							"there: the file is not the one the patch "
							"was made from", pos + 1, file, h->patch_line);
					break;
				}
				pos++;
			}
			if (l->kind != '-')
				ret = emit(out, &open_end, l->text, l->len, !l->no_newline, file);
		}
	}
	for (; !ret && pos < nr; pos++)
		ret = emit(out, &open_end, lines[pos].text, lines[pos].len, lines[pos].newline,
			   file);
	if (ret)
		strbuf_setlen(out, start_len);
	free(lines);
	return ret;
}
