/*
 * libFuzzer target for source.patch's one reader (emitters/rewrite/unified_diff.c)
 * and apply's guard over it (source_apply_check_files), issue 36: parse
 * anything. A refusal's message must hold no control character (a CRLF
 * patch once printed 'stream_table.cu^M'). What parses must be what the
 * parser promises: relative paths without "." / ".." / ".git" components
 * or control characters, hunks whose lines add up to their headers, in
 * order. The guard, over a fixed sources.json, passes only the files it
 * records as patched. Each file is then applied to the file its hunks
 * describe (filler lines between them): that must succeed and give exactly
 * the hunks' new side; and to a fixed text, where it may fail but must not
 * crash. Seeds: tests/fuzz/corpus/unified_diff/ (the bypasses of issue 36).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "emitters/rewrite/source_apply.h"
#include "emitters/rewrite/sources_file.h"
#include "emitters/rewrite/unified_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SHA "0000000000000000000000000000000000000000000000000000000000000000"
/* The oracle builds files this long at most. */
#define MAX_ORACLE_LINE 4096

static void check_path(const char *p)
{
	const char *c;

	if (!*p || p[0] == '/' || !strcmp(p, "..") || !strncmp(p, "../", 3) || strstr(p, "/../") ||
	    strstr(p, "//") || p[strlen(p) - 1] == '/' || !strncmp(p, "./", 2) ||
	    strstr(p, "/./") || !strncmp(p, ".git/", 5) || strstr(p, "/.git/"))
		__builtin_trap();
	for (c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\')
			__builtin_trap();
}

static size_t first_index(size_t start, size_t count)
{
	return count ? start - 1 : start;
}

static void add_line(struct strbuf *sb, const struct unified_diff_line *l)
{
	strbuf_add(sb, l->text, l->len);
	if (!l->no_newline)
		strbuf_addch(sb, '\n');
}

/* The hunks' old and new sides with filler lines between them. */
static int oracle(const struct unified_diff_file *f, struct strbuf *old, struct strbuf *new)
{
	size_t pos = 0, i, j;
	int open_end = 0;

	for (i = 0; i < f->nr_hunks; i++) {
		const struct unified_diff_hunk *h = &f->hunks[i];
		size_t at = first_index(h->old_start, h->old_count), old_n = 0, new_n = 0;

		if (at > MAX_ORACLE_LINE)
			return 0;
		if (at < pos)
			__builtin_trap();       /* out of order: the parser promised not */
		for (; pos < at; pos++) {
			strbuf_addf(old, "filler %zu\n", pos);
			strbuf_addf(new, "filler %zu\n", pos);
		}
		for (j = 0; j < h->nr_lines; j++) {
			const struct unified_diff_line *l = &h->lines[j];

			if (l->kind != ' ' && l->kind != '-' && l->kind != '+')
				__builtin_trap();
			if (l->kind != '+') {
				add_line(old, l);
				pos++;
				old_n++;
			}
			if (l->kind != '-') {
				add_line(new, l);
				new_n++;
			}
			open_end |= l->no_newline;
		}
		if (old_n != h->old_count || new_n != h->new_count)
			__builtin_trap();
	}
	if (!open_end) {
		strbuf_addstr(old, "tail\n");
		strbuf_addstr(new, "tail\n");
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char fixed[] = "#include <x.h>\nint a;\n\n\tx = a[i];\n}";
	struct unified_diff d;
	struct sources_file sf;
	size_t i;
	int ret;

	ret = unified_diff_parse(&d, (const char *)data, size, "'fuzz.patch'");
	if (ret) {
		const char *c;

		if (d.nr_files || d.text)
			__builtin_trap();
		for (c = error_message(); *c; c++)
			if ((unsigned char)*c < 0x20)
				__builtin_trap();
		error_clear();
		return 0;
	}
	if (!d.nr_files)
		__builtin_trap();
	for (i = 0; i < d.nr_files; i++) {
		struct strbuf old = STRBUF_INIT, new = STRBUF_INIT, out = STRBUF_INIT;

		check_path(d.files[i].path);
		if (!d.files[i].nr_hunks)
			__builtin_trap();
		if (oracle(&d.files[i], &old, &new)) {
			if (unified_diff_apply(&d.files[i], old.buf, old.len, &out, "k.cu") ||
			    out.len != new.len || memcmp(out.buf, new.buf, out.len)) {
				fprintf(stderr, "%s\n", error_message());
				__builtin_trap();
			}
		}
		strbuf_reset(&out);
		if (unified_diff_apply(&d.files[i], fixed, sizeof(fixed) - 1, &out, "k.cu") &&
		    out.len)
			__builtin_trap();   /* a failure leaves out as it was */
		error_clear();
		strbuf_release(&old);
		strbuf_release(&new);
		strbuf_release(&out);
	}
	/* the guard: only the files sources.json records as patched pass */
	sources_file_init(&sf);
	sources_file_add(&sf, "k.cu", SHA, SHA, 1);
	sources_file_add(&sf, "sub/m.cu", SHA, SHA, 1);
	sources_file_add(&sf, "read.cu", SHA, NULL, 0);
	if (!source_apply_check_files(&d, &sf, "'fuzz.patch'", "'sources.json'"))
		for (i = 0; i < d.nr_files; i++)
			if (strcmp(d.files[i].path, "k.cu") && strcmp(d.files[i].path, "sub/m.cu"))
				__builtin_trap();
	error_clear();
	sources_file_release(&sf);
	unified_diff_release(&d);
	return 0;
}
