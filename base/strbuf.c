#include "base/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/input_file.h"
#include "base/xalloc.h"

char strbuf_empty_[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_empty_;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *res;

	strbuf_grow(sb, 0);
	res = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return res;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	int fresh = !sb->alloc;

	if (sb->len + extra + 1 <= sb->alloc)
		return;
	if (fresh)
		sb->buf = NULL;
	ALLOC_GROW(sb->buf, sb->len + extra + 1, sb->alloc);
	if (fresh)
		sb->buf[0] = '\0';
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return;
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	strbuf_setlen(sb, sb->len + len);
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc ? sb->alloc - sb->len : 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if (sb->len + (size_t)n + 1 > sb->alloc) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	strbuf_setlen(sb, sb->len + (size_t)n);
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_add_html(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&#39;"); break;
		default: strbuf_addch(sb, *s);
		}
	}
}

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

void strbuf_add_printable_mem(struct strbuf *sb, const char *s, size_t len, int keep_lines)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (keep_lines && (c == '\n' || c == '\t')) {
			strbuf_addch(sb, c);
		} else if (is_control(c)) {
			strbuf_addf(sb, "\\x%02x", c);
		} else if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 &&
			   (unsigned char)s[i + 1] <= 0x9f) {
			/* a C1 control (CSI is U+009B) */
			strbuf_addf(sb, "\\x%02x\\x%02x", c, (unsigned char)s[++i]);
		} else {
			strbuf_addch(sb, c);
		}
	}
}

void strbuf_add_printable(struct strbuf *sb, const char *s)
{
	strbuf_add_printable_mem(sb, s, strlen(s), 0);
}

void strbuf_add_printable_lines(struct strbuf *sb, const char *s)
{
	strbuf_add_printable_mem(sb, s, strlen(s), 1);
}

void strbuf_add_shell_word(struct strbuf *sb, const char *s)
{
	static const char safe_punct[] = "_@%+=:,./-";
	int safe = *s != '\0', ctrl = 0;
	const char *p;

	for (p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;

		ctrl |= is_control(c);
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(safe_punct, c)))
			safe = 0;
	}
	if (safe) {
		strbuf_addstr(sb, s);
		return;
	}
	if (ctrl) {
		strbuf_addstr(sb, "$'");
		for (p = s; *p; p++) {
			unsigned char c = (unsigned char)*p;

			if (c == '\'' || c == '\\') {
				strbuf_addch(sb, '\\');
				strbuf_addch(sb, c);
			} else if (is_control(c)) {
				strbuf_addf(sb, "\\x%02x", c);
			} else {
				strbuf_addch(sb, c);
			}
		}
		strbuf_addch(sb, '\'');
		return;
	}
	strbuf_addch(sb, '\'');
	for (p = s; *p; p++) {
		if (*p == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_addch(sb, *p);
	}
	strbuf_addch(sb, '\'');
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t max_bytes)
{
	return input_file_read(sb, path, max_bytes);
}
