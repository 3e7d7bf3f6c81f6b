#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/file_snapshot.h"
#include "tests/unit/check.h"

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static const struct output_file *find(const struct run_output *o, const char *path)
{
	size_t i;

	for (i = 0; i < o->nr_files; i++)
		if (!strcmp(o->files[i].path, path))
			return &o->files[i];
	return NULL;
}

/* A run's created, changed and removed files, in the working directory and
 * where its arguments point; the capture directory is not looked into. */
static void test_changes(void)
{
	char dir[] = "/tmp/ca-test-snapshot-XXXXXX";
	char *argv[] = { "./app", "in.bin", "--out=sub/res.txt", "-n", "100", NULL };
	struct file_snapshot_spec spec = { .exclude = "capture", .argv = argv, .always = "./cmp.bin" };
	struct file_snapshot before, after;
	struct run_output out;
	const struct output_file *f;
	char cwd[4096];

	CHECK(mkdtemp(dir) != NULL);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_INT(chdir(dir), 0);
	mkdir("sub", 0777);
	mkdir("capture", 0777);
	put("in.bin", "input");
	put("result.txt", "old");
	put("gone.txt", "x");
	put("cmp.bin", "same");
	file_snapshot_take(&before, &spec);
	CHECK_INT(before.truncated, 0);
	/* the run */
	put("result.txt", "new result");
	put("sub/res.txt", "hello");
	put("capture/capture.json", "{}");
	unlink("gone.txt");
	file_snapshot_take(&after, &spec);
	run_output_init(&out);
	CHECK_INT(file_snapshot_changes(&before, &after, spec.always, &out), 4);
	f = find(&out, "result.txt");
	CHECK(f && f->exists && f->size == 10);
	CHECK(f && strlen(f->sha256) == 64);
	f = find(&out, "sub/res.txt");
	CHECK(f && f->exists && f->size == 5);
	f = find(&out, "gone.txt");
	CHECK(f && !f->exists);
	f = find(&out, "cmp.bin");
	CHECK(f && f->exists && f->size == 4);
	CHECK(find(&out, "in.bin") == NULL);
	CHECK(find(&out, "capture/capture.json") == NULL);
	run_output_release(&out);
	file_snapshot_release(&before);
	file_snapshot_release(&after);

	/* nothing changed: only the --compare file */
	file_snapshot_take(&before, &spec);
	file_snapshot_take(&after, &spec);
	run_output_init(&out);
	CHECK_INT(file_snapshot_changes(&before, &after, NULL, &out), 0);
	run_output_release(&out);
	file_snapshot_release(&before);
	file_snapshot_release(&after);

	CHECK_INT(chdir(cwd), 0);
	{
		char *cmd = malloc(strlen(dir) + 16);
		sprintf(cmd, "rm -rf '%s'", dir);
		CHECK_INT(system(cmd), 0);
		free(cmd);
	}
}

int main(void)
{
	test_changes();
	return check_done();
}
