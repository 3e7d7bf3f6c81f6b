#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "emitters/source_patch.h"
#include "src/cli.h"

/*
 * `cacheadvise apply DIR`: applies a capture's source.patch to the program's
 * sources (git apply, else patch -p1), after checking that every file it
 * changes is still the file the capture saw (sources.json).
 */

struct apply_cmd {
	const char *dir;
	const char *source_root;
	int dry_run;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise apply DIR [--source-root PATH] [--dry-run]\n"
		"\n"
		"Applies DIR/source.patch, written by 'cacheadvise profile', to the program's\n"
		"sources: each advised global load is wrapped in a small inline-PTX helper\n"
		"(ca_ld_na() for L1::no_allocate, ca_ld_el() for L1::evict_last, ...) that the\n"
		"patch adds to the file. Loads the tool cannot rewrite safely are left alone;\n"
		"report.txt says why for each. Rebuild the program afterwards.\n"
		"\n"
		"Refuses (exit 2) when a file the patch changes is no longer the file the\n"
		"capture saw (its SHA-256 differs from DIR/sources.json). Where DIR has no\n"
		"source.patch, writes one from the capture and the sources as they are now.\n"
		"\n"
		"      --source-root P  where the sources are now (default: where they were\n"
		"                       when the program was profiled)\n"
		"  -n, --dry-run        print the patch and check that it applies; change nothing\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 applied (or nothing to apply), 1 usage error, 2 DIR is not a\n"
		"capture, a source changed since the capture, or the patch does not apply.\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise apply cacheadvise-out/app-20261122-031000 --dry-run\n"
		"  cacheadvise apply cacheadvise-out/app-20261122-031000\n"
		"  cacheadvise apply cacheadvise-out/app-20261122-031000 --source-root ~/src/app\n");
}

static int parse(struct apply_cmd *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "source-root", required_argument, NULL, 'S' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":nh", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			o->source_root = optarg;
			break;
		case 'n':
			o->dry_run = 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (cli_capture_dir_operand(argc, argv, optind, "cacheadvise apply DIR", &o->dir))
		return 1;
	return 0;
}

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/*
 * Runs argv[0] in directory dir and waits. Returns its exit status, 127
 * when it cannot be started, or -1 when fork fails.
 */
static int run_in(const char *dir, char *const argv[])
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* The tool's messages go to stderr: stdout may carry the patch. */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		if (chdir(dir))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* git apply, or patch -p1 where git is missing. */
static int apply_patch(const char *root, const char *patch, int check)
{
	char *git[] = { "git", "apply", check ? "--check" : "--verbose", (char *)patch, NULL };
	char *pat[] = { "patch", "-p1", "--forward", "--batch", "--silent", "-i", (char *)patch,
			check ? "--dry-run" : NULL, NULL };
	int st = run_in(root, git);

	if (st == 127)
		st = run_in(root, pat);
	if (st == 127)
		return error_set(CA_E_IO, "cannot run 'git apply' or 'patch': install git or patch");
	if (st == 126)
		return error_set(CA_E_INPUT, "cannot enter the source root '%s'", root);
	if (st)
		return error_set(CA_E_INPUT, "'%s' does not apply to the sources in '%s' (see the "
				 "messages above); were they changed since the capture?", patch, root);
	return 0;
}

/* Writes DIR/source.patch and DIR/sources.json from the capture and the sources now. */
static int write_patch(const struct apply_cmd *o, const char *patch_path, const char *sources_path)
{
	struct report_input_options iopt = { o->source_root };
	struct report_input in;
	struct strbuf sb = STRBUF_INIT;
	json_t *doc;
	int ret = report_input_load(&in, o->dir, &iopt);

	if (!ret) {
		source_patch_write(&in, &sb);
		ret = write_file_atomic(patch_path, sb.buf, sb.len);
	}
	if (!ret) {
		doc = source_patch_sources_json(&in);
		ret = json_file_write(sources_path, doc);
		json_decref(doc);
	}
	if (!ret)
		cli_warn("'%s' had no source.patch: wrote one from the sources as they are now in "
			 "'%s'; check that they are the sources the program was built from",
			 o->dir, in.lookup_root);
	strbuf_release(&sb);
	report_input_release(&in);
	return ret;
}

static int apply(const struct apply_cmd *o)
{
	char *patch_path = xasprintf("%s/source.patch", o->dir);
	char *sources_path = xasprintf("%s/sources.json", o->dir);
	char *capture_path = xasprintf("%s/capture.json", o->dir);
	char abs_patch[PATH_MAX];
	struct strbuf patch = STRBUF_INIT;
	json_t *sources = NULL;
	const char *root;
	int ret = 0;

	if (!exists(capture_path)) {
		ret = error_set(CA_E_INPUT, "'%s' is not a capture directory: capture.json is "
				"missing (cacheadvise profile writes one)", o->dir);
		goto out;
	}
	if (!exists(patch_path) || !exists(sources_path)) {
		ret = write_patch(o, patch_path, sources_path);
		if (ret)
			goto out;
	}
	sources = json_file_load(sources_path);
	if (!sources) {
		ret = CA_E_INPUT;
		goto out;
	}
	root = o->source_root ? o->source_root :
	       json_string_value(json_object_get(sources, "read_from"));
	if (!root)
		root = json_string_value(json_object_get(sources, "root"));
	if (root) {
		struct stat st;
		if (stat(root, &st) || !S_ISDIR(st.st_mode)) {
			ret = error_set(CA_E_INPUT, "the source root '%s' is not a directory: pass "
					"--source-root with the directory the sources are in", root);
			goto out;
		}
	}
	ret = source_patch_check_sources(sources, sources_path, root);
	if (ret == 1) {
		fprintf(stderr, "cacheadvise apply: '%s' is already applied in '%s': nothing to do\n",
			patch_path, root);
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	ret = strbuf_read_file(&patch, patch_path, 0);
	if (ret)
		goto out;
	if (!strstr(patch.buf, "\n+++ b/") && strncmp(patch.buf, "+++ b/", 6)) {
		fprintf(stderr, "cacheadvise apply: nothing to apply: no advised load could be "
			"rewritten in source (report.txt, SOURCE HINTS, says why for each)\n");
		goto out;
	}
	if (!realpath(patch_path, abs_patch)) {
		ret = error_set(CA_E_INPUT, "cannot resolve '%s': %s", patch_path, strerror(errno));
		goto out;
	}
	if (o->dry_run) {
		if (fwrite(patch.buf, 1, patch.len, stdout) != patch.len) {
			ret = error_set(CA_E_IO, "cannot write the patch to standard output");
			goto out;
		}
		ret = apply_patch(root, abs_patch, 1);
		if (!ret)
			fprintf(stderr, "cacheadvise apply: the patch applies cleanly in '%s' (dry run: "
				"nothing changed)\n", root);
		goto out;
	}
	ret = apply_patch(root, abs_patch, 0);
	if (!ret)
		fprintf(stderr, "cacheadvise apply: applied '%s' in '%s'; rebuild the program\n",
			patch_path, root);
out:
	strbuf_release(&patch);
	json_decref(sources);
	free(patch_path);
	free(sources_path);
	free(capture_path);
	return ret;
}

int cmd_apply(int argc, char **argv)
{
	struct apply_cmd o;
	int ret = parse(&o, argc, argv);

	if (ret < 0)
		return 0;   /* --help */
	if (ret)
		return ret;
	ret = apply(&o);
	return ret ? cli_fail(ret, NULL) : 0;
}
