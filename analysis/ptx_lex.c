/*
 * The PTX parser (analysis/ptx_internal.h): lexing. Blanks, comments,
 * strings, balanced statements and blocks, operands.
 */
#include "analysis/ptx_internal.h"

#include <limits.h>
#include <string.h>

/* Skips blanks, newlines and comments from p; counts lines. */
const char *ptx_skip_ws(const char *p, const char *end, unsigned *line)
{
	while (p < end) {
		if (is_space(*p)) {
			p++;
		} else if (*p == '\n') {
			(*line)++;
			p++;
		} else if (*p == '/' && p + 1 < end && p[1] == '/') {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			p = nl ? nl : end;
		} else if (*p == '/' && p + 1 < end && p[1] == '*') {
			p += 2;
			while (p < end && !(*p == '*' && p + 1 < end && p[1] == '/')) {
				if (*p == '\n')
					(*line)++;
				p++;
			}
			p = p < end ? p + 2 : end;
		} else {
			break;
		}
	}
	return p;
}

/* Skips blanks and comments, but not newlines. */
const char *ptx_skip_blank(const char *p, const char *end)
{
	while (p < end) {
		if (is_space(*p))
			p++;
		else if (*p == '/' && p + 1 < end && p[1] == '*') {
			const char *q = p + 2;
			while (q < end && !(*q == '*' && q + 1 < end && q[1] == '/')) {
				if (*q == '\n')
					return p;
				q++;
			}
			p = q < end ? q + 2 : end;
		} else
			break;
	}
	return p;
}

/* Skips a string literal starting at p ('"'); returns the position after it. */
const char *ptx_skip_string(const char *p, const char *end, unsigned *line)
{
	p++;
	while (p < end && *p != '"') {
		if (*p == '\\' && p + 1 < end)
			p++;
		if (*p == '\n')
			(*line)++;
		p++;
	}
	return p < end ? p + 1 : end;
}

/* Bytes the balanced scanner must look at; the rest are skipped in a tight loop. */
static const unsigned char stmt_special[256] = {
	[';'] = 1, ['\n'] = 1, ['"'] = 1, ['/'] = 1, ['('] = 1, ['['] = 1, ['{'] = 1,
	[')'] = 1, [']'] = 1, ['}'] = 1,
};

static const unsigned char operand_special[256] = {
	[','] = 1, ['"'] = 1, ['('] = 1, ['['] = 1, ['{'] = 1, [')'] = 1, [']'] = 1, ['}'] = 1,
};

/*
 * Statements nest (), [] and {} (vector operands, initializers) and end at
 * ';'; blocks nest only { }. Both skip comments and strings the same way.
 */
const char *ptx_skip_balanced(const char *p, const char *end, unsigned *line, enum ptx_skip how)
{
	int stmt = how == PTX_SKIP_STATEMENT;
	int depth = 0;

	while (p < end) {
		char c;
		while (p < end && !stmt_special[(unsigned char)*p])
			p++;
		if (p >= end)
			break;
		c = *p;
		if (c == ';' && stmt && depth <= 0)
			return p;
		switch (c) {
		case '\n':
			(*line)++;
			p++;
			break;
		case '"':
			p = ptx_skip_string(p, end, line);
			break;
		case '/':
			if (p + 1 < end && (p[1] == '/' || p[1] == '*'))
				p = ptx_skip_ws(p, end, line);
			else
				p++;
			break;
		case '(': case '[':
			depth += stmt;
			p++;
			break;
		case ')': case ']':
			depth -= stmt;
			p++;
			break;
		case '{':
			depth++;
			p++;
			break;
		case '}':
			if (depth <= 0)
				return p;
			depth--;
			p++;
			break;
		default:
			p++;
		}
	}
	return end;
}

enum stmt_end ptx_scan_statement(const char *p, const char *end, unsigned *line,
				 const char **semi)
{
	*semi = ptx_skip_balanced(p, end, line, PTX_SKIP_STATEMENT);
	if (*semi >= end)
		return STMT_EOF;
	return **semi == ';' ? STMT_OK : STMT_BRACE;
}

const char *ptx_skip_block(const char *p, const char *end, unsigned *line)
{
	const char *close = ptx_skip_balanced(p + 1, end, line, PTX_SKIP_BLOCK);

	return close < end ? close + 1 : NULL;
}

struct slice ptx_trim(const char *s, const char *e)
{
	struct slice r;

	while (s < e && (is_space(*s) || *s == '\n'))
		s++;
	while (e > s && (is_space(e[-1]) || e[-1] == '\n'))
		e--;
	r.s = s;
	r.n = (size_t)(e - s);
	return r;
}

/* Parses an unsigned decimal number; returns 0 and sets *v, or -1. */
int ptx_parse_uint(const char *s, const char *e, unsigned long *v)
{
	unsigned long r = 0;

	if (s >= e || *s < '0' || *s > '9')
		return -1;
	for (; s < e && *s >= '0' && *s <= '9'; s++) {
		if (r > (ULONG_MAX - 9) / 10)
			return -1;
		r = r * 10 + (unsigned long)(*s - '0');
	}
	*v = r;
	return 0;
}

/*
 * Splits the operand text [s, e) at top-level commas. Fills up to max
 * slices, returns how many operands there are (possibly more than max).
 */
size_t ptx_split_operands(const char *s, const char *e, struct slice *ops, size_t max)
{
	size_t n = 0;
	int depth = 0;
	const char *start = s;

	if (ptx_trim(s, e).n == 0)
		return 0;
	for (; s < e; s++) {
		char c;
		while (s < e && !operand_special[(unsigned char)*s])
			s++;
		if (s >= e)
			break;
		c = *s;
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (c == '"') {
			unsigned dummy = 0;
			s = ptx_skip_string(s, e, &dummy) - 1;
		} else if (c == ',' && depth <= 0) {
			if (n < max)
				ops[n] = ptx_trim(start, s);
			n++;
			start = s + 1;
		}
	}
	if (n < max)
		ops[n] = ptx_trim(start, e);
	return n + 1;
}

/* The leading identifier of an operand ("%rd4" of "%rd4+16"), maybe empty. */
struct slice ptx_operand_name(struct slice op)
{
	struct slice r = { op.s, 0 };
	const char *p = op.s, *e = op.s + op.n;

	if (p < e && *p == '[')
		p++;
	while (p < e && is_space(*p))
		p++;
	if (p < e && *p == '-')
		return r;
	if (p < e && is_ident_start((unsigned char)*p)) {
		r.s = p;
		r.n = (size_t)(scan_ident(p + 1, e) - p);
	}
	return r;
}

size_t ptx_header_end(const char *text, size_t len)
{
	const char *p = text, *end = text + len, *after = text;
	unsigned line = 0;

	for (;;) {
		p = ptx_skip_ws(p, end, &line);
		if (p >= end || (strncmp(p, ".version", 8) && strncmp(p, ".target", 7) &&
				 strncmp(p, ".address_size", 13)))
			break;
		while (p < end && *p != '\n')
			p++;
		if (p < end)
			p++;
		after = p;
	}
	return (size_t)(after - text);
}
