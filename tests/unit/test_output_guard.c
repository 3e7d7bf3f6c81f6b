/* base/output_guard: an output matched against inputs however it is spelled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/output_guard.h"
#include "base/xalloc.h"
#include "check.h"

static char dir[] = "/tmp/test_output_guard.XXXXXX";

static char *at(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void touch(const char *name)
{
	char *p = at(name);
	FILE *f = fopen(p, "w");

	CHECK(f != NULL);
	if (f)
		fclose(f);
	free(p);
}

/* what output_guard_check says for dir/name (name NULL: out as given) */
static const char *check_at(const struct output_guard *g, const char *name)
{
	char *p = at(name);
	const char *what = output_guard_check(g, p);

	free(p);
	return what;
}

int main(void)
{
	struct output_guard g = OUTPUT_GUARD_INIT;
	char *plan, *ptx, *tree, *p, cwd[4096];

	if (!mkdtemp(dir) || !getcwd(cwd, sizeof(cwd)))
		return 2;
	touch("plan.json");
	touch("k.ptx");
	touch("other");
	p = at("sub");
	CHECK_INT(mkdir(p, 0777), 0);
	free(p);
	p = at("tree");
	CHECK_INT(mkdir(p, 0777), 0);
	free(p);
	touch("tree/in");
	plan = at("plan.json");
	ptx = at("k.ptx");
	tree = at("tree");
	output_guard_add_file(&g, plan, "the plan");
	output_guard_add_file(&g, ptx, "the PTX");
	output_guard_add_tree(&g, tree, "the tree");
	output_guard_add_file(&g, "-", "stdin");

	/* spellings */
	CHECK_STR(check_at(&g, "plan.json"), "the plan");
	CHECK_STR(check_at(&g, "./plan.json"), "the plan");
	CHECK_STR(check_at(&g, "sub/../k.ptx"), "the PTX");
	CHECK_STR(check_at(&g, "sub//..//plan.json"), "the plan");
	CHECK(!check_at(&g, "other"));
	CHECK(!check_at(&g, "new-file"));
	CHECK(!check_at(&g, "sub/plan.json"));
	CHECK(!check_at(&g, "no/such/dir/plan.json"));
	CHECK(!output_guard_check(&g, "-"));
	CHECK(!output_guard_check(&g, ""));
	CHECK_INT(chdir(dir), 0);
	CHECK_STR(output_guard_check(&g, "plan.json"), "the plan");
	CHECK_STR(output_guard_check(&g, "sub/../k.ptx"), "the PTX");
	CHECK_INT(chdir(cwd), 0);

	/* links at the output, to the output's folder, hard links */
	CHECK_INT(symlink(plan, (p = at("abs-link"))), 0);
	free(p);
	CHECK_INT(symlink("k.ptx", (p = at("rel-link"))), 0);
	free(p);
	CHECK_INT(symlink("sub/../tree", (p = at("tree-link"))), 0);
	free(p);
	CHECK_INT(link(plan, (p = at("hard"))), 0);
	free(p);
	CHECK_INT(symlink(dir, (p = at("sub/up"))), 0);
	free(p);
	CHECK_STR(check_at(&g, "abs-link"), "the plan");
	CHECK_STR(check_at(&g, "rel-link"), "the PTX");
	CHECK_STR(check_at(&g, "hard"), "the plan");
	CHECK_STR(check_at(&g, "sub/up/plan.json"), "the plan");

	/* a tree: anything under it, at any depth, existing or not */
	CHECK_STR(check_at(&g, "tree/in"), "the tree");
	CHECK_STR(check_at(&g, "tree/new"), "the tree");
	CHECK_STR(check_at(&g, "tree-link/new"), "the tree");
	CHECK(!check_at(&g, "treetop"));
	output_guard_release(&g);

	/* an input given through a link matches the file it leads to */
	p = at("abs-link");
	output_guard_add_file(&g, p, "the plan");
	free(p);
	CHECK_STR(check_at(&g, "plan.json"), "the plan");
	CHECK_STR(check_at(&g, "abs-link"), "the plan");
	CHECK(!check_at(&g, "k.ptx"));
	output_guard_release(&g);
	output_guard_release(&g);   /* twice is harmless */

	free(plan);
	free(ptx);
	free(tree);
	p = xasprintf("rm -rf '%s'", dir);
	CHECK_INT(system(p), 0);
	free(p);
	return check_done();
}
