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

	/* one file named two ways (the walk's "res.bin", an argument's absolute
	 * path, --compare's absolute path): listed once (issue 25) */
	{
		char *abs_res = malloc(strlen(dir) + 16), *abs_cmp = malloc(strlen(dir) + 16);
		char *argv2[] = { "./app", abs_res, NULL };
		struct file_snapshot_spec spec2 = { .exclude = "capture", .argv = argv2,
						    .always = abs_cmp };
		unsigned long long kept = 0;
		char *keep = malloc(strlen(dir) + 32);

		sprintf(abs_res, "%s/res.bin", dir);
		sprintf(abs_cmp, "%s/cmp.bin", dir);
		file_snapshot_take(&before, &spec2);
		put("res.bin", "result bytes");
		put("cmp.bin", "changed too");
		file_snapshot_take(&after, &spec2);
		run_output_init(&out);
		CHECK_INT(file_snapshot_changes(&before, &after, spec2.always, &out), 2);
		CHECK(find(&out, abs_cmp) != NULL);
		CHECK(find(&out, "cmp.bin") == NULL);
		CHECK((find(&out, "res.bin") != NULL) != (find(&out, abs_res) != NULL));
		/* a copy kept by its content, once */
		sprintf(keep, "%s/kept", dir);
		f = find(&out, abs_cmp);
		CHECK_INT(file_snapshot_keep(f, keep, &kept), 1);
		CHECK_INT(kept, 11);
		CHECK_INT(file_snapshot_keep(f, keep, &kept), 1);
		CHECK_INT(kept, 11);
		{
			FILE *k = fopen(keep, "rb");
			char buf[32] = "";

			CHECK(k && fread(buf, 1, sizeof(buf) - 1, k) == 11);
			CHECK_STR(buf, "changed too");
			if (k)
				fclose(k);
		}
		/* too large for what is left of the total: not kept */
		kept = FILE_SNAPSHOT_KEEP_TOTAL - 5;
		unlink(keep);
		CHECK_INT(file_snapshot_keep(f, keep, &kept), 0);
		run_output_release(&out);
		file_snapshot_release(&before);
		file_snapshot_release(&after);
		free(abs_res);
		free(abs_cmp);
		free(keep);
	}

	CHECK_INT(chdir(cwd), 0);
	{
		char *cmd = malloc(strlen(dir) + 16);
		sprintf(cmd, "rm -rf '%s'", dir);
		CHECK_INT(system(cmd), 0);
		free(cmd);
	}
}

/* A run in an empty directory, with no arguments: nothing before, one
 * file after (a snapshot of nothing is no array at all). */
static void test_empty_dir(void)
{
	char dir[] = "/tmp/ca-test-snapshot-XXXXXX";
	char *argv[] = { "./app", NULL };
	struct file_snapshot_spec spec = { .argv = argv };
	struct file_snapshot before, after;
	struct run_output out;
	char cwd[4096];

	CHECK(mkdtemp(dir) != NULL);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_INT(chdir(dir), 0);
	file_snapshot_take(&before, &spec);
	CHECK_INT(before.n, 0);
	put("made.txt", "x");
	file_snapshot_take(&after, &spec);
	run_output_init(&out);
	CHECK_INT(file_snapshot_changes(&before, &after, NULL, &out), 1);
	run_output_release(&out);
	file_snapshot_release(&before);
	file_snapshot_release(&after);
	unlink("made.txt");
	CHECK_INT(chdir(cwd), 0);
	rmdir(dir);
}

int main(void)
{
	test_empty_dir();
	test_changes();
	return check_done();
}
