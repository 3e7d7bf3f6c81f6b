/*
 * The PTX parser's one balanced-skip scanner (analysis/ptx_lex.c), which
 * statements and { } blocks both go through: comments and strings that hold
 * braces, semicolons and quotes, nesting, line counts, unclosed text.
 */
#include <string.h>

#include "analysis/ptx_internal.h"
#include "tests/unit/check.h"

/* Offset of the byte where the scan stops, -1 at the end of the text. */
static long skip_at(const char *text, enum ptx_skip how, unsigned *lines)
{
	const char *end = text + strlen(text);
	const char *q;
	unsigned line = 0;

	q = ptx_skip_balanced(text, end, &line, how);
	if (lines)
		*lines = line;
	return q >= end ? -1 : (long)(q - text);
}

/* Offset of the statement's ';' (or '}'), with its stmt_end in *se. */
static long stmt_at(const char *text, enum stmt_end *se)
{
	const char *end = text + strlen(text), *semi = NULL;
	unsigned line = 0;

	*se = ptx_scan_statement(text, end, &line, &semi);
	return (long)(semi - text);
}

static void test_comments(void)
{
	const char *s;
	unsigned lines;

	/* Braces and semicolons inside comments are not structure. */
	s = "mov.u32 %r1, 2 /* ; } { */ + 1;";
	CHECK_INT(skip_at(s, PTX_SKIP_STATEMENT, NULL), (long)strlen(s) - 1);
	s = "add.s32 %r1, %r2 // } ;\n, %r3;";
	CHECK_INT(skip_at(s, PTX_SKIP_STATEMENT, &lines), (long)strlen(s) - 1);
	CHECK_INT(lines, 1);
	/* A '/' that starts no comment is a plain byte. */
	s = "div.s32 %r1, %r2 / 3;";
	CHECK_INT(skip_at(s, PTX_SKIP_STATEMENT, NULL), (long)strlen(s) - 1);
	/* Block: the '}' in the comments does not close it. */
	s = " a; /* } */ b; // }\n c; } tail";
	CHECK_INT(skip_at(s, PTX_SKIP_BLOCK, &lines), (long)(strchr(s, 'c') - s) + 3);
	CHECK_INT(lines, 1);
	/* Newlines inside a block comment are counted. */
	s = "x /*\n;\n}\n*/ ;";
	CHECK_INT(skip_at(s, PTX_SKIP_STATEMENT, &lines), (long)strlen(s) - 1);
	CHECK_INT(lines, 3);
}

static void test_strings(void)
{
	const char *s;
	unsigned lines;

	/* An escaped quote does not end the string; ';' and '}' in it do nothing. */
	s = ".file 1 \"a\\\";}{b\" ;";
	CHECK_INT(skip_at(s, PTX_SKIP_STATEMENT, NULL), (long)strlen(s) - 1);
	s = "\"\\\\\" ;";   /* "\\" then ';': the backslash escapes itself only */
	CHECK_INT(skip_at(s, PTX_SKIP_STATEMENT, NULL), 5);
	s = " .b8 \"}\\\"}\" } after";
	CHECK_INT(skip_at(s, PTX_SKIP_BLOCK, NULL), (long)(strstr(s, " } after") - s) + 1);
	/* A string's newlines count. */
	s = "\"a\nb\";";
	CHECK_INT(skip_at(s, PTX_SKIP_STATEMENT, &lines), 5);
	CHECK_INT(lines, 1);
}

static void test_nesting(void)
{
	const char *s;
	enum stmt_end se;

	/* A statement ends at the first ';' outside (), [] and {}. */
	s = ".global .u32 a[2] = { 1; 2 }, b[1] = {(3;)} ;";
	CHECK_INT(skip_at(s, PTX_SKIP_STATEMENT, NULL), (long)strlen(s) - 1);
	s = "ld.v2.f32 {%f1, %f2}, [%rd1 + 8];";
	CHECK_INT(stmt_at(s, &se), (long)strlen(s) - 1);
	CHECK_INT(se, STMT_OK);
	/* A '}' it did not open ends it: the ';' is missing. */
	s = "mov.u32 %r1, 2 } ;";
	CHECK_INT(stmt_at(s, &se), (long)(strchr(s, '}') - s));
	CHECK_INT(se, STMT_BRACE);
	/* Blocks nest { } only: '(' and ';' are plain text in them. */
	s = " { a; { b; } } ( ; } rest";
	CHECK_INT(skip_at(s, PTX_SKIP_BLOCK, NULL), (long)(strstr(s, "} rest") - s));
	s = "{ x; { y; } \"}\" /* } */ } z";
	{
		const char *end = s + strlen(s);
		unsigned line = 0;
		const char *after = ptx_skip_block(s, end, &line);
		CHECK(after != NULL);
		CHECK_STR(after, " z");
	}
}

static void test_unclosed(void)
{
	const char *s;
	enum stmt_end se;

	s = "mov.u32 %r1, 2";
	CHECK_INT(stmt_at(s, &se), (long)strlen(s));
	CHECK_INT(se, STMT_EOF);
	s = "a \"; unclosed";
	CHECK_INT(stmt_at(s, &se), (long)strlen(s));
	CHECK_INT(se, STMT_EOF);
	s = "a /* ; unclosed";
	CHECK_INT(stmt_at(s, &se), (long)strlen(s));
	CHECK_INT(se, STMT_EOF);
	s = "call (a, [b;";
	CHECK_INT(stmt_at(s, &se), (long)strlen(s));
	CHECK_INT(se, STMT_EOF);
	s = "{ a { b }";
	CHECK(ptx_skip_block(s, s + strlen(s), &(unsigned){ 0 }) == NULL);
	s = "{";
	CHECK(ptx_skip_block(s, s + 1, &(unsigned){ 0 }) == NULL);
	s = "{ \"}";
	CHECK(ptx_skip_block(s, s + strlen(s), &(unsigned){ 0 }) == NULL);
}

int main(void)
{
	test_comments();
	test_strings();
	test_nesting();
	test_unclosed();
	return check_done();
}
