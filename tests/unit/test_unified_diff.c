/*
 * emitters/rewrite/unified_diff.c, source.patch's one reader and applier (issue 36
 * item 2), and apply's guard over it (source_apply_check_files): lines are
 * counted as git counts them, and everything but a change of existing
 * files in place is refused, naming the line and what it is.
 */
#include "tests/unit/check.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/rewrite/source_apply.h"
#include "emitters/rewrite/sources_file.h"
#include "emitters/rewrite/unified_diff.h"

static struct unified_diff d;

/* Parses text: the answer, and the message in *msg ("" when none). */
static int parse(const char *text)
{
	unified_diff_release(&d);
	error_clear();
	return unified_diff_parse(&d, text, strlen(text), "'p'");
}

/* Refused, with a message that holds want and no raw control character. */
static int refused(const char *text, const char *want)
{
	const char *m, *c;

	if (parse(text) != CA_E_INPUT) {
		fprintf(stderr, "accepted: %s\n", text);
		return 0;
	}
	m = error_message();
	for (c = m; *c; c++)
		if ((unsigned char)*c < 0x20) {
			fprintf(stderr, "control character in: %s\n", m);
			return 0;
		}
	if (!strstr(m, want)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", m, want);
		return 0;
	}
	return d.nr_files == 0;
}

/* Applies file i of the last parse to old: the result, or NULL (message set). */
static char *applied(size_t i, const char *old)
{
	struct strbuf out = STRBUF_INIT;

	if (unified_diff_apply(&d.files[i], old, strlen(old), &out, "k.cu")) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out, NULL);
}

static void check_str_free(char *got, const char *want)
{
	CHECK_STR(got, want);
	free(got);
}

/* What emitters/rewrite/source_patch.c writes: two files, hunks, no newline at the end. */
static void test_parse_and_apply(void)
{
	const char *p =
		"--- a/k.cu\n"
		"+++ b/k.cu\n"
		"@@ -1,3 +1,4 @@\n"
		" #include <x.h>\n"
		"+#define H 1\n"
		" int a;\n"
		" int b;\n"
		"@@ -5,2 +6,2 @@ void f()\n"
		"-\tx = a[i];\n"
		"+\tx = ca_ld_na(&a[i]);\n"
		" }\n"
		"\\ No newline at end of file\n"
		"--- a/sub/m.cu\n"
		"+++ b/sub/m.cu\n"
		"@@ -2 +2 @@\n"
		"-old\n"
		"\\ No newline at end of file\n"
		"+new\n"
		"\\ No newline at end of file\n";

	CHECK_INT(parse(p), 0);
	CHECK_INT(d.nr_files, 2);
	CHECK_STR(d.files[0].path, "k.cu");
	CHECK_STR(d.files[1].path, "sub/m.cu");
	CHECK_INT(d.files[0].nr_hunks, 2);
	CHECK_INT(d.files[0].hunks[1].old_start, 5);
	CHECK_INT(d.files[0].hunks[1].patch_line, 8);
	CHECK_INT(d.files[1].hunks[0].old_count, 1);
	check_str_free(applied(0, "#include <x.h>\nint a;\nint b;\nvoid f() {\n\tx = a[i];\n}"),
		       "#include <x.h>\n#define H 1\nint a;\nint b;\nvoid f() {\n"
		       "\tx = ca_ld_na(&a[i]);\n}");
	check_str_free(applied(1, "first\nold"), "first\nnew");
	/* the file is not the one the patch was made from: refused, by line */
	CHECK(!applied(0, "#include <x.h>\nint a;\nint c;\nvoid f() {\n\tx = a[i];\n}"));
	CHECK(strstr(error_message(), "line 3 of 'k.cu' is not the line the patch's hunk at its "
		     "line 3 expects"));
	/* a newline where the patch says there is none, and the other way */
	CHECK(!applied(1, "first\nold\n"));
	CHECK(!applied(0, "#include <x.h>\nint a;\nint b;\nvoid f() {\n\tx = a[i];\n}\n"));
	CHECK(!applied(0, "#include <x.h>\n"));
}

/* git's counting: an empty line in a hunk is an empty context line. */
static void test_empty_context_line(void)
{
	CHECK_INT(parse("--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n\n"), 0);
	check_str_free(applied(0, "a\nb\n\nc\n"), "a\nB\n\nc\n");
	/* the bypass of issue 36: a file header after it is a file header */
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n\n"
		      "--- /dev/null\n+++ b/evil.sh\n@@ -0,0 +1 @@\n+echo pwned\n",
		      "line 9: '+++ b/evil.sh': creates a file"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n\n"
		      "diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n"
		      "+++ b/evil\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n",
		      "'new file mode 120000': creates a symbolic link"));
	/* one line more than the header counts */
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n\n",
		      "line 7: '': a hunk line after the last line the hunk header above counts"));
}

static void test_refused_kinds(void)
{
	CHECK(refused("*** a/k.cu\n--- b/k.cu\n***************\n*** 1 ****\n! a\n--- 1 ----\n! b\n",
		      "a context diff"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b\n"
		      "*** a/n.txt\n--- b/n.txt\n***************\n", "line 6: '*** a/n.txt': a "
		      "context diff"));
	CHECK(refused("--- a/k.cu\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
		      "deletes a file ('+++ /dev/null'); the patch may only change a file in place"));
	CHECK(refused("diff --git a/k.cu b/k.cu\ndeleted file mode 100644\n", "deletes a file"));
	CHECK(refused("diff --git a/k.cu b/k.cu\nold mode 100644\nnew mode 100755\n",
		      "changes a file's mode"));
	CHECK(refused("diff --git a/k.cu b/k.cu\nold mode 100644\n", "'old mode 100644'"));
	CHECK(refused("diff --git a/k.cu b/k.cu\nnew mode 120000\n",
		      "turns a file into a symbolic link"));
	CHECK(refused("diff --git a/k.cu b/k.cu\nindex 1234..5678 120000\n--- a/k.cu\n",
		      "a symbolic link"));
	CHECK(refused("diff --git a/k.cu b/k.cu\nnew file mode 160000\n", "creates a submodule"));
	CHECK(refused("diff --git a/k.cu b/x.cu\nsimilarity index 90%\n", "renames a file"));
	CHECK(refused("diff --git a/k.cu b/k.cu\nsimilarity index 90%\n", "renames or copies"));
	CHECK(refused("diff --git a/k.cu b/k.cu\nrename from k.cu\n", "renames a file"));
	CHECK(refused("diff --git a/k.cu b/k.cu\ncopy from x.cu\n", "copies a file"));
	CHECK(refused("--- a/k.cu\n+++ b/x.cu\n@@ -1 +1 @@\n-a\n+b\n", "renames a file"));
	CHECK(refused("diff --git a/k.bin b/k.bin\nGIT binary patch\nliteral 3\n",
		      "a binary patch"));
	CHECK(refused("Binary files a/k.bin and b/k.bin differ\n", "a binary patch"));
	{
		static const char nul[] = "--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\0\n+b\n";

		unified_diff_release(&d);
		CHECK_INT(unified_diff_parse(&d, nul, sizeof(nul) - 1, "'p'"), CA_E_INPUT);
		CHECK(strstr(error_message(), "'p' has a NUL byte at offset 36") != NULL);
	}
	CHECK(refused("diff --git a/k.cu b/k.cu\n", "without '---' and '+++' lines"));
	CHECK(refused("diff --git a/k.cu b/k.cu\nindex 12..34 100644\n--- a/m.cu\n+++ b/m.cu\n"
		      "@@ -1 +1 @@\n-a\n+b\n", "not the file its 'diff --git' line names"));
	/* git's own header, and the mode of a regular file: understood */
	CHECK_INT(parse("diff --git a/k.cu b/k.cu\nindex 12ab..34cd 100644\n--- a/k.cu\n"
			"+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b\n"), 0);
	CHECK_INT(d.nr_files, 1);
}

static void test_paths(void)
{
	static const struct { const char *path, *why; } bad[] = {
		{ "../x.cu", "a '.' or '..' component" },
		{ "src/../../x.cu", "a '.' or '..' component" },
		{ "./x.cu", "a '.' or '..' component" },
		{ "/etc/passwd", "an absolute path" },
		{ ".git/config", "a path into '.git'" },
		{ "sub/.GIT/hooks/pre-commit", "a path into '.git'" },
		{ "a//b.cu", "an empty component" },
		{ "a/", "an empty component" },
		{ "\"a\\tb.cu\"", "a quoted path" },
		{ "a\tb.cu", "a control character" },
		{ "a\\b.cu", "a backslash" },
	};
	size_t i;
	char text[256];

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-a\n+b\n",
			 bad[i].path, bad[i].path);
		CHECK(refused(text, bad[i].why));
	}
	/* /dev/null is a file created or deleted, never a path */
	CHECK(refused("--- /dev/null\n+++ b/k.cu\n@@ -0,0 +1 @@\n+a\n", "creates a file"));
	CHECK(refused("--- k.cu\n+++ k.cu\n@@ -1 +1 @@\n-a\n+b\n", "not 'b/FILE' after"));
}

/* A CRLF patch: refused, and the message shows no carriage return. */
static void test_crlf(void)
{
	CHECK(refused("--- a/stream_table.cu\r\n+++ b/stream_table.cu\r\n@@ -1 +1 @@\r\n-a\r\n"
		      "+b\r\n", "line 1: '--- a/stream_table.cu\\x0d': the line ends in a carriage "
		      "return: the patch has Windows (CRLF) line ends"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\r\n@@ -1 +1 @@\n-a\n+b\n", "(CRLF) line ends"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\r\n-a\n+b\n", "(CRLF) line ends"));
	/* a CRLF source file's lines in a LF patch are text like any other */
	CHECK_INT(parse("--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,2 @@\n-a\r\n+b\r\n c\r\n"), 0);
	check_str_free(applied(0, "a\r\nc\r\n"), "b\r\nc\r\n");
	CHECK(!applied(0, "a\nc\n"));
}

static void test_counts_and_order(void)
{
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n",
		      "ends inside the hunk of line 3: it counts 1 more old and 1 more new"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,1 @@\n a\n+b\n",
		      "more lines of this kind than the hunk header counts"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,2 @@\n a\n?b\n", "not a hunk line"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,2 @@\n a\n@@ -3 +3 @@\n",
		      "a hunk header before the hunk above has all its lines"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -5 +5 @@\n-a\n+b\n@@ -3 +3 @@\n-a\n+b\n",
		      "hunks must be in order and must not overlap"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -5 +6 @@\n-a\n+b\n",
		      "its new line number does not follow"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -0 +1 @@\n-a\n+b\n", "starts at line 0"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,0 +1,0 @@\n", "a hunk with no lines"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,2@@\n a\n b\n", "not a hunk header"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -99999999999 +1 @@\n-a\n+b\n",
		      "not a hunk header"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n", "is not followed by a hunk"));
	CHECK(refused("--- a/k.cu\n", "a '---' line not followed by a '+++' line"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b\n--- a/k.cu\n+++ b/k.cu\n"
		      "@@ -3 +3 @@\n-a\n+b\n", "a file the patch changes twice"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1 +0,0 @@\n-a\n\\ No newline at end of file\n"
		      "@@ -3 +2 @@\n-a\n+b\n", "a hunk after the end of the file"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n"
		      " b\n+c\n", "a line after '\\ No newline at end of file'"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b\n\\ Keine Newline\n",
		      "not '\\ No newline at end of file'"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b", "truncated"));
	/* found by fuzz_unified_diff: an empty last line without newline is no line */
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,2 @@\n a\n\n\\ No newline at end of file\n",
		      "an empty line without a newline"));
	CHECK(refused("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\n+\n\\ No newline at end of file\n",
		      "an empty line without a newline"));
	CHECK(refused("this is not a patch\nat all\n", "'p' is not a patch: line 1 ('this is "
		      "not a patch') is not part of a unified diff"));
	CHECK(refused("\n", "'p' is not a patch"));
	CHECK(refused("+++ b/k.cu\n", "a '+++' line without a '---' line"));
	CHECK(refused("@@ -1 +1 @@\n", "a hunk outside any file"));
	/* a line of the new side ends without newline in the middle of a file */
	CHECK_INT(parse("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n"),
		  0);
	CHECK(!applied(0, "a\nc\n"));
	CHECK(strstr(error_message(), "without a newline before the end of the file") != NULL);
	check_str_free(applied(0, "a\n"), "b");
	/* an insertion at the top, and after the last line */
	CHECK_INT(parse("--- a/k.cu\n+++ b/k.cu\n@@ -0,0 +1 @@\n+top\n@@ -2,0 +4 @@\n+end\n"), 0);
	check_str_free(applied(0, "a\nb\n"), "top\na\nb\nend\n");
	CHECK(!applied(0, "a\n"));
}

/* apply's guard: only the files sources.json records as patched. */
static void test_guard(void)
{
	struct sources_file sf;
	const char *sha = "0000000000000000000000000000000000000000000000000000000000000000";

	sources_file_init(&sf);
	sources_file_add(&sf, "k.cu", sha, sha, 1);
	sources_file_add(&sf, "read.cu", sha, NULL, 0);
	CHECK_INT(parse("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b\n"), 0);
	CHECK_INT(source_apply_check_files(&d, &sf, "'p'", "'s.json'"), 0);
	CHECK_INT(parse("--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b\n"
			"--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-a\n+b\n"), 0);
	CHECK_INT(source_apply_check_files(&d, &sf, "'p'", "'s.json'"), CA_E_INPUT);
	CHECK(strstr(error_message(), "'p' changes 'notes.txt', which 's.json' does not record") !=
	      NULL);
	/* read, but not patched: not a file of the advice either */
	CHECK_INT(parse("--- a/read.cu\n+++ b/read.cu\n@@ -1 +1 @@\n-a\n+b\n"), 0);
	CHECK_INT(source_apply_check_files(&d, &sf, "'p'", "'s.json'"), CA_E_INPUT);
	sources_file_release(&sf);
}

int main(void)
{
	unified_diff_init(&d);
	test_parse_and_apply();
	test_empty_context_line();
	test_refused_kinds();
	test_paths();
	test_crlf();
	test_counts_and_order();
	test_guard();
	unified_diff_release(&d);
	return check_done();
}
