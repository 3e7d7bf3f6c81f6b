/*
 * base/path.c: paths as line info records them ("kernel/./k.cu", from an
 * #include "./k.cu"), as a diff names them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/path.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

static void test_path_normalize(void)
{
	static const char *const cases[][2] = {
		{ "cuda/lavaMD/kernel/./kernel_gpu_cuda.cu", "cuda/lavaMD/kernel/kernel_gpu_cuda.cu" },
		{ "./k.cu", "k.cu" },
		{ "a//b/./c.cu", "a/b/c.cu" },
		{ "src/../kernel/k.cu", "kernel/k.cu" },
		{ "a/b/../../c.cu", "c.cu" },
		{ "../up/k.cu", "../up/k.cu" },
		{ "a/../../up.cu", "../up.cu" },
		{ "/build/x/./y/../k.cu", "/build/x/k.cu" },
		{ "/../k.cu", "/../k.cu" },
		{ "k.cu", "k.cu" },
		{ ".", "." },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = path_normalize(cases[i][0]);

		CHECK_STR(got, cases[i][1]);
		free(got);
	}
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static char *read_text(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A source tree copied for a private rebuild: files with their modes,
 * folders, links as links; .git and the skipped paths left out; limits. */
static void test_copy_tree(void)
{
	char tmpl[] = "/tmp/test-path-XXXXXX", *src, *dst, *p, *out;
	const char *skip[2];
	struct path_copy_limits lim = { 0, 0, skip };
	struct stat sb;
	char target[64];
	ssize_t n;

	if (!mkdtemp(tmpl)) {
		CHECK(0);
		return;
	}
	src = xasprintf("%s/src", tmpl);
	dst = xasprintf("%s/dst", tmpl);
	mkdir(src, 0755);
	p = xasprintf("%s/kernels", src);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/.git", src);
	mkdir(p, 0755);
	free(p);
	out = xasprintf("%s/out", src);         /* the capture, inside the tree */
	mkdir(out, 0755);
	skip[0] = out;
	skip[1] = NULL;
	{
		char *f = xasprintf("%s/kernels/k.cu", src), *x = xasprintf("%s/build.sh", src),
		     *g = xasprintf("%s/.git/HEAD", src), *o = xasprintf("%s/out/capture.json", src),
		     *l = xasprintf("%s/link.cu", src);

		write_text(f, "__global__ void k() {}\n", 0644);
		write_text(x, "#!/bin/sh\n", 0755);
		write_text(g, "ref\n", 0644);
		write_text(o, "{}\n", 0644);
		CHECK_INT(symlink("kernels/k.cu", l), 0);
		free(f);
		free(x);
		free(g);
		free(o);
		free(l);
	}
	CHECK_INT(path_copy_tree(src, dst, &lim), 0);
	p = xasprintf("%s/kernels/k.cu", dst);
	CHECK_STR(read_text(p), "__global__ void k() {}\n");
	free(p);
	p = xasprintf("%s/build.sh", dst);
	CHECK(!stat(p, &sb) && (sb.st_mode & 0777) == 0755);
	free(p);
	p = xasprintf("%s/link.cu", dst);
	n = readlink(p, target, sizeof(target) - 1);
	CHECK(n > 0);
	target[n > 0 ? n : 0] = '\0';
	CHECK_STR(target, "kernels/k.cu");
	free(p);
	p = xasprintf("%s/.git", dst);
	CHECK(access(p, F_OK) != 0);
	free(p);
	p = xasprintf("%s/out", dst);
	CHECK(access(p, F_OK) != 0);
	free(p);
	/* over a limit: refused, naming it */
	path_remove_tree(dst);
	lim.max_bytes = 10;
	CHECK_INT(path_copy_tree(src, dst, &lim), CA_E_INPUT);
	CHECK(strstr(error_message(), "more than 10 bytes") != NULL);
	error_clear();
	path_remove_tree(dst);
	lim.max_bytes = 0;
	lim.max_files = 2;
	CHECK_INT(path_copy_tree(src, dst, &lim), CA_E_INPUT);
	CHECK(strstr(error_message(), "more than 2 files") != NULL);
	error_clear();
	/* an existing destination is not written into */
	CHECK_INT(path_copy_tree(src, dst, NULL), CA_E_IO);
	error_clear();
	path_remove_tree(tmpl);
	free(src);
	free(dst);
	free(out);
}

static void test_path_under(void)
{
	CHECK_STR(path_under("/home/me/app/k.cu", "/home/me/app"), "k.cu");
	CHECK_STR(path_under("/home/me/app", "/home/me/app"), "");
	CHECK(path_under("/home/me/apps/k.cu", "/home/me/app") == NULL);
	CHECK(path_under("/home/me", "/home/me/app") == NULL);
	CHECK_STR(path_under("/x/y", "/"), "x/y");
	{
		char *c = path_common("/home/me/app/src", "/home/me/app/build");

		CHECK_STR(c, "/home/me/app");
		free(c);
		c = path_common("/home/me/app", "/home/me/app/build");
		CHECK_STR(c, "/home/me/app");
		free(c);
		c = path_common("/home/me/app2", "/home/me/app");   /* not a string prefix */
		CHECK_STR(c, "/home/me");
		free(c);
		c = path_common("/a", "/b");
		CHECK_STR(c, "/");
		free(c);
	}
}

int main(void)
{
	test_path_normalize();
	test_copy_tree();
	test_path_under();
	return check_done();
}
