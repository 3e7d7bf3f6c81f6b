/*
 * emitters/rewrite/rebuild_copy.c: the program's command pointed into the
 * private copy of its sources.
 */
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "emitters/rewrite/rebuild_copy.h"
#include "tests/unit/check.h"

/* Run from outside the tree: paths under the root, absolute or relative
 * to where it runs, and NAME=PATH values name the copy; the rest stays. */
static void test_outside(void)
{
	char *argv[] = { "/home/me/app/build/app", "--in=/home/me/app/data/x.bin", "-n", "100",
			 "/home/me/other/y.bin", "--mode=fast", NULL };
	char *cwd = (char *)1, **out;

	out = rebuild_copy_map_argv("/home/me/app", "/tmp/c/src", "/home/me", argv, &cwd);
	CHECK(cwd == NULL);
	CHECK_STR(out[0], "/tmp/c/src/build/app");
	CHECK_STR(out[1], "--in=/tmp/c/src/data/x.bin");
	CHECK_STR(out[2], "-n");
	CHECK_STR(out[3], "100");
	CHECK_STR(out[4], "/home/me/other/y.bin");
	CHECK_STR(out[5], "--mode=fast");
	CHECK(out[6] == NULL);
	free_string_list(out);
}

/* Run from inside the tree: it runs in the same place of the copy, so
 * relative paths stay as they are; absolute ones under the root move. */
static void test_inside(void)
{
	char *argv[] = { "python3", "kernels/softmax.py", "/home/me/app/cfg.json",
			 "/home/me/apps/not-ours.py", NULL };
	char *cwd = NULL, **out;

	out = rebuild_copy_map_argv("/home/me/app", "/tmp/c/src", "/home/me/app/bench", argv,
				    &cwd);
	CHECK_STR(cwd, "/tmp/c/src/bench");
	CHECK_STR(out[0], "python3");
	CHECK_STR(out[1], "kernels/softmax.py");
	CHECK_STR(out[2], "/tmp/c/src/cfg.json");
	CHECK_STR(out[3], "/home/me/apps/not-ours.py");   /* a sibling, not under the root */
	free_string_list(out);
	free(cwd);
	/* a relative path out of the tree, where the program runs in the copy:
	 * the original, named whole (/tmp exists; a word stays a word) */
	{
		char *up[] = { "./app", "../../..", "../../../no-such-file", NULL };

		out = rebuild_copy_map_argv("/tmp/x/app", "/tmp/c/src", "/tmp/x/app/bench", up,
					    &cwd);
		CHECK_STR(out[0], "./app");
		CHECK_STR(out[1], "/tmp");
		CHECK_STR(out[2], "../../../no-such-file");
		free_string_list(out);
		free(cwd);
	}
	/* the root itself */
	out = rebuild_copy_map_argv("/home/me/app", "/tmp/c/src", "/home/me/app", argv, &cwd);
	CHECK_STR(cwd, "/tmp/c/src");
	free_string_list(out);
	free(cwd);
}

int main(void)
{
	test_outside();
	test_inside();
	return check_done();
}
