/*
 * analysis/rebuild_match.c: finding the capture's advised loads in the
 * program rebuilt from source.patch (tests/fixtures/rebuilt/, made by nvcc
 * from samples/stream_table.cu with capture-real's patch applied).
 */
#include <string.h>

#include "analysis/ptx.h"
#include "analysis/rebuild_match.h"
#include "base/strbuf.h"
#include "tests/unit/check.h"

#define DK "_Z11decode_keysPK5uint4jmjPKjjS3_jjPj"

static struct ptx_module *load(const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *m = NULL;

	if (strbuf_read_file(&sb, check_source_path(rel), 0) ||
	    ptx_parse(rel, sb.buf, sb.len, &m))
		CHECK(!"fixture parses");
	strbuf_release(&sb);
	return m;
}

static void test_diff_lines(void)
{
	static const char diff[] =
		"--- a/k.cu\n+++ b/k.cu\n"
		"@@ -2,3 +2,5 @@\n"
		" two\n+new a\n+new b\n three\n four\n"
		"@@ -10,3 +12,3 @@\n"
		" ten\n-eleven\n+ELEVEN\n twelve\n"
		"--- a/other.cu\n+++ b/other.cu\n"
		"@@ -1,1 +1,2 @@\n+top\n one\n";

	CHECK_INT(rebuild_diff_new_line(diff, "/src/k.cu", 1), 1);   /* before the hunks */
	CHECK_INT(rebuild_diff_new_line(diff, "/src/k.cu", 2), 2);
	CHECK_INT(rebuild_diff_new_line(diff, "/src/k.cu", 3), 5);   /* after two insertions */
	CHECK_INT(rebuild_diff_new_line(diff, "/src/k.cu", 7), 9);   /* between hunks */
	CHECK_INT(rebuild_diff_new_line(diff, "/src/k.cu", 11), 13); /* a replaced line */
	CHECK_INT(rebuild_diff_new_line(diff, "/src/k.cu", 50), 52); /* after the last hunk */
	CHECK_INT(rebuild_diff_new_line(diff, "/src/other.cu", 1), 2);
	CHECK_INT(rebuild_diff_new_line(diff, "/src/not-k.cu", 3), 3);
	CHECK_INT(rebuild_diff_new_line(diff, "/src/x.cu", 5), 5);
	CHECK_INT(rebuild_diff_new_line("", "k.cu", 5), 5);
	/* only the '-' line counts as replaced: a load there was rewritten */
	CHECK_INT(rebuild_diff_replaces_line(diff, "/src/k.cu", 11), 1);
	CHECK_INT(rebuild_diff_replaces_line(diff, "/src/k.cu", 10), 0);
	CHECK_INT(rebuild_diff_replaces_line(diff, "/src/k.cu", 3), 0);
	CHECK_INT(rebuild_diff_replaces_line(diff, "/src/other.cu", 11), 0);
}

/* Consecutive replaced lines (two tl.load calls in a row, each rewritten)
 * map one for one, not all to the run's first line; a run replaced by fewer
 * lines maps its extra lines to the last of them. */
static void test_diff_replaced_run(void)
{
	static const char diff[] =
		"--- a/k.py\n+++ b/k.py\n"
		"@@ -60,5 +60,5 @@\n"
		" for k in range(n):\n-    a = tl.load(A)\n-    b = tl.load(B)\n-    c = tl.load(C)\n"
		"+    a = tl.load(A, cache_modifier=\".cg\")\n+    b = tl.load(B, cache_modifier=\".ca\")\n"
		"+    c = tl.load(C, eviction_policy=\"evict_last\")\n     acc += a * b * c\n"
		"@@ -70,4 +70,3 @@\n"
		" x\n-    y = f(1,\n-          2)\n+    y = f(1, 2)\n z\n";

	CHECK_INT(rebuild_diff_new_line(diff, "k.py", 61), 61);
	CHECK_INT(rebuild_diff_new_line(diff, "k.py", 62), 62);
	CHECK_INT(rebuild_diff_new_line(diff, "k.py", 63), 63);
	CHECK_INT(rebuild_diff_replaces_line(diff, "k.py", 63), 1);
	CHECK_INT(rebuild_diff_new_line(diff, "k.py", 64), 64);
	CHECK_INT(rebuild_diff_new_line(diff, "k.py", 71), 71);
	CHECK_INT(rebuild_diff_new_line(diff, "k.py", 72), 71);     /* folded into line 71 */
	CHECK_INT(rebuild_diff_new_line(diff, "k.py", 73), 72);
	CHECK_INT(rebuild_diff_new_line(diff, "k.py", 80), 79);
}

/* A column moves with the text before it on a rewritten line. */
static void test_diff_column(void)
{
	static const char diff[] =
		"--- a/k.py\n+++ b/k.py\n"
		"@@ -120,1 +120,1 @@\n"
		"-    z = tl.load(X + offs, m, 0.0) + tl.load(Y + offs, mask=m)\n"
		"+    z = tl.load(X + offs, m, 0.0, eviction_policy=\"evict_first\") + "
		"tl.load(Y + offs, mask=m)\n"
		"@@ -130,2 +130,2 @@\n"
		"-    i = tl.load(I, mask=m, cache_modifier=\".cg\"); s = tl.load(S)\n"
		"-    t = tl.load(T)\n"
		"+    i = tl.load(I, mask=m); s = tl.load(S)\n"
		"+    t = tl.load(T, cache_modifier=\".ca\")\n";

	/* "X" at 16 stays; "Y" at 44 moves by the 31 bytes inserted before it */
	CHECK_INT(rebuild_diff_new_column(diff, "k.py", 120, 16), 16);
	CHECK_INT(rebuild_diff_new_column(diff, "k.py", 120, 44), 75);
	/* removed text before it: "S" at 62 moves back 22 bytes */
	CHECK_INT(rebuild_diff_new_column(diff, "k.py", 130, 62), 40);
	CHECK_INT(rebuild_diff_new_column(diff, "k.py", 131, 16), 16);
	/* a line the diff does not replace, and another file, keep it */
	CHECK_INT(rebuild_diff_new_column(diff, "k.py", 119, 30), 30);
	CHECK_INT(rebuild_diff_new_column(diff, "other.py", 120, 44), 44);
	CHECK_INT(rebuild_diff_new_column(NULL, "k.py", 120, 44), 44);
}

static void test_stream_table(void)
{
	struct ptx_module *o = load("tests/fixtures/capture-real/modules/83c50ebd491c19e2.ptx");
	struct ptx_module *r = load("tests/fixtures/rebuilt/stream_table.patched.ptx");
	struct strbuf diff = STRBUF_INIT;
	const struct ptx_function *fo, *fr;
	struct rebuild_check c;

	if (!o || !r)
		goto out;
	fo = ptx_module_find(o, DK);
	fr = ptx_module_find(r, DK);
	CHECK(fo && fr);
	if (!fo || !fr)
		goto out;
	if (strbuf_read_file(&diff, check_source_path("tests/fixtures/capture-real/source.patch"), 0))
		CHECK(!"source.patch readable");

	rebuild_match_load(fo, 0, r, fr, diff.buf, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, &c);
	CHECK_STR(rebuild_status_name(c.status), "found");
	CHECK_INT(c.line, 119 + 12 + 13);   /* the load helpers, then load_key_na, above it */
	rebuild_match_load(fo, 2, r, fr, diff.buf, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, &c);
	CHECK_STR(rebuild_status_name(c.status), "found");
	CHECK(c.found && c.found->inline_depth == 2);   /* ca_ld_na_ro in load_key_na */
	/* Load 1 (the other call of load_key) stays as it was: plain. */
	rebuild_match_load(fo, 1, r, fr, diff.buf, LOAD_ACTION_DEFAULT, L2_PRIORITY_NONE, &c);
	CHECK_STR(rebuild_status_name(c.status), "found");
	rebuild_match_load(fo, 1, r, fr, diff.buf, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, &c);
	CHECK_STR(rebuild_status_name(c.status), "wrong form");
	rebuild_match_load(fo, 3, r, fr, diff.buf, LOAD_ACTION_DEFAULT, L2_PRIORITY_NONE, &c);
	CHECK_STR(rebuild_status_name(c.status), "found");
	/* The original program against itself: load 2 is not bypassed there. */
	rebuild_match_load(fo, 2, o, fo, NULL, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, &c);
	CHECK_STR(rebuild_status_name(c.status), "wrong form");
	/* Without the patch's line map, the rebuilt lines do not fit. */
	rebuild_match_load(fo, 2, r, fr, NULL, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, &c);
	CHECK_STR(rebuild_status_name(c.status), "missing");
	CHECK(rebuild_load_has_form(&fo->loads[0], LOAD_ACTION_DEFAULT));
	CHECK(!rebuild_load_has_form(&fo->loads[0], LOAD_ACTION_EVICT_LAST));
out:
	strbuf_release(&diff);
	ptx_module_free(o);
	ptx_module_free(r);
}

int main(void)
{
	test_diff_lines();
	test_diff_replaced_run();
	test_diff_column();
	test_stream_table();
	return check_done();
}
