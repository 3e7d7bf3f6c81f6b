#include <errno.h>
#include <getopt.h>
#include <signal.h>
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
#include "emitters/report.h"
#include "emitters/report_input.h"
#include "emitters/source_patch.h"
#include "emitters/capture_layout.h"
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
		"capture saw (its SHA-256 differs from DIR/sources.json), when the capture\n"
		"or source.patch is invalid, and when the sources are read-only. Where DIR\n"
		"has no source.patch, writes one from the capture and the sources as they\n"
		"are now (a dry run only prints it).\n"
		"\n"
		"      --source-root P  where the sources are now (default: where they were\n"
		"                       when the program was profiled)\n"
		"  -n, --dry-run        print the patch and check that it applies; change nothing\n"
		"  -h, --help           show this help\n"
		"\n"
		"A capture whose source.patch is empty (the sources were not readable when it\n"
		"was profiled) gets its patch made from the sources as they are now: pass\n"
		"--source-root with where they are.\n"
		"\n"
		"Exit status: 0 applied (or the plan changes no load), 1 usage error, 2 DIR is\n"
		"not a capture, a source changed since the capture, the patch does not apply,\n"
		"or it rewrites none of the advised loads (the reasons are listed).\n"
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
 * Runs argv[0] in directory dir with input (len bytes) on its standard
 * input, and waits. Returns its exit status, 127 when it cannot be
 * started, or -1 when fork or pipe fails.
 */
static int run_in(const char *dir, char *const argv[], const char *input, size_t len)
{
	void (*old_pipe)(int);
	int fd[2], status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		/* The tool's messages go to stderr: stdout may carry the patch. */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		close(fd[1]);
		if (chdir(dir))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[0]);
	/* A tool that stops reading (or is missing) must not kill us. */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	while (len) {
		ssize_t n = write(fd[1], input, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		input += n;
		len -= (size_t)n;
	}
	close(fd[1]);
	signal(SIGPIPE, old_pipe);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * git apply, or patch -p1 where git is missing, reading the patch (named
 * name in messages) from standard input.
 */
static int apply_patch(const char *root, const char *name, const struct strbuf *patch, int check)
{
	char *git[] = { "git", "apply", check ? "--check" : "--verbose", NULL };
	char *pat[] = { "patch", "-p1", "--forward", "--batch", "--silent",
			check ? "--dry-run" : NULL, NULL };
	int st = run_in(root, git, patch->buf, patch->len);

	if (st == 127)
		st = run_in(root, pat, patch->buf, patch->len);
	if (st == 127)
		return error_set(CA_E_IO, "cannot run 'git apply' or 'patch': install git or patch");
	if (st == 126)
		return error_set(CA_E_INPUT, "cannot enter the source root '%s'", root);
	if (st < 0)
		return error_set(CA_E_IO, "cannot run 'git apply': %s", strerror(errno));
	if (st)
		return error_set(CA_E_INPUT, "%s does not apply to the sources in '%s' (see the "
				 "messages above); were they changed since the capture?", name, root);
	return 0;
}

/*
 * The files a patch changes ("+++ b/FILE" lines), each passed to fn until
 * it returns non-zero. Returns the number of files, or fn's result.
 */
static int for_each_patched_file(const struct strbuf *patch,
				 int (*fn)(const char *root, const char *file), const char *root)
{
	const char *line = patch->buf;
	int n = 0, ret;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len > 6 && !strncmp(line, "+++ b/", 6)) {
			char *file = xstrndup(line + 6, len - 6);
			ret = fn ? fn(root, file) : 0;
			free(file);
			if (ret)
				return ret;
			n++;
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* Where path cannot be written, says why: read-only, or not writable. */
static int check_writable(const char *root, const char *file)
{
	char *full = xasprintf("%s/%s", root, file), *slash;
	int ret = 0;

	if (access(full, W_OK) && errno != ENOENT)
		goto refuse;
	slash = strrchr(full, '/');
	*slash = '\0';      /* git and patch replace the file: its directory too */
	if (!access(full, W_OK))
		goto out;
	*slash = '/';
refuse:
	if (errno == EROFS)
		ret = error_set(CA_E_INPUT, "the source tree '%s' is read-only: cannot change '%s'; "
				"copy the sources somewhere writable and pass --source-root",
				root, full);
	else
		ret = error_set(CA_E_INPUT, "'%s' is not writable (%s): cannot apply the patch "
				"there; make it writable, or copy the sources and pass --source-root",
				full, strerror(errno));
out:
	free(full);
	return ret;
}

/*
 * The patch is empty. Where the plan changes no load there is nothing to
 * apply (0); otherwise every load the plan changes is listed with why the
 * patch leaves it, and the answer is CA_E_INPUT: the advice cannot reach
 * the sources this way.
 */
static int nothing_rewritten(const struct report_input *in, const struct apply_cmd *o)
{
	size_t i, j, changes = 0;

	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];

		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			char *label;

			if (!l->changes)
				continue;
			if (!changes++)
				fprintf(stderr, "cacheadvise apply: no advised load could be rewritten "
					"in source:\n");
			label = report_kernel_label(k);
			if (l->file)
				fprintf(stderr, "  %s load %u (%s:%d, %s): %s\n", label, l->ordinal,
					l->hint.path ? l->hint.path : l->file, l->line,
					l->action ? l->action : "?",
					l->hint.message ? l->hint.message : "no reason recorded");
			else
				fprintf(stderr, "  %s load %u (%s): %s\n", label, l->ordinal,
					l->action ? l->action : "?",
					l->hint.message ? l->hint.message : "no reason recorded");
			free(label);
		}
	}
	if (!changes) {
		fprintf(stderr, "cacheadvise apply: nothing to apply: the plan changes no load\n");
		return 0;
	}
	return error_set(CA_E_INPUT, "nothing to apply: the source patch rewrites none of the %zu "
			 "load%s the plan changes (reasons above)%s; 'cacheadvise run --plan "
			 "%s/plan.json -- PROGRAM' applies the advice without a rebuild", changes,
			 changes == 1 ? "" : "s",
			 o->source_root ? "" : "; where the sources were not readable, pass "
			 "--source-root", o->dir);
}

static int apply(const struct apply_cmd *o)
{
	struct report_input_options iopt = { o->source_root };
	char *patch_path = capture_layout_file(o->dir, CAPTURE_LAYOUT_SOURCE_PATCH);
	char *sources_path = capture_layout_file(o->dir, CAPTURE_LAYOUT_SOURCES);
	char *name = NULL;
	struct strbuf patch = STRBUF_INIT;
	struct report_input in;
	json_t *sources = NULL;
	const char *root;
	int ret;

	/* capture.json (and its PTX and plan) first: a corrupt capture is
	 * refused before anything is applied or written. */
	ret = report_input_load(&in, o->dir, &iopt);
	if (!ret)
		ret = report_check_input(&in);
	if (ret)
		goto out;
	if (!exists(patch_path) || !exists(sources_path)) {
		/* Made from the capture and the sources as they are now; a dry
		 * run keeps it in memory. */
		source_patch_write(&in, &patch);
		sources = source_patch_sources_json(&in);
		if (!o->dry_run) {
			ret = write_file_atomic(patch_path, patch.buf, patch.len);
			if (!ret)
				ret = json_file_write(sources_path, sources);
			if (ret)
				goto out;
			cli_warn("'%s' had no source.patch or sources.json: wrote them from the sources "
				 "as they are now in '%s'; check that they are the sources the program "
				 "was built from", o->dir, in.lookup_root);
		} else {
			cli_warn("'%s' has no source.patch or sources.json: the patch below is made "
				 "from the sources as they are now in '%s' (dry run: nothing written)",
				 o->dir, in.lookup_root);
		}
		name = o->dry_run ? xstrdup("the patch made from the capture") :
		       xasprintf("'%s'", patch_path);
	} else {
		sources = json_file_load(sources_path);
		if (!sources) {
			ret = CA_E_INPUT;
			goto out;
		}
		ret = strbuf_read_file(&patch, patch_path, 0);
		if (ret)
			goto out;
		name = xasprintf("'%s'", patch_path);
		if (!patch.len) {
			/* The capture could not read the sources, or rewrote
			 * nothing there: make the patch from the sources as they
			 * are now (--source-root). */
			size_t n = source_patch_write(&in, &patch);

			if (n) {
				json_decref(sources);
				sources = source_patch_sources_json(&in);
				if (!o->dry_run) {
					ret = write_file_atomic(patch_path, patch.buf, patch.len);
					if (!ret)
						ret = json_file_write(sources_path, sources);
					if (ret)
						goto out;
				}
				fprintf(stderr, "cacheadvise apply: the capture's source.patch was empty: made "
					"it from the sources in '%s' (%zu line%s rewritten)%s\n",
					in.lookup_root, n, n == 1 ? "" : "s",
					o->dry_run ? " (dry run: nothing written)" : "");
			}
		}
	}
	/* An empty patch is what profile writes when no load could be
	 * rewritten; anything else must name the files it changes. */
	if (patch.len && for_each_patched_file(&patch, NULL, NULL) <= 0) {
		ret = error_set(CA_E_INPUT, "'%s' is not a patch (no '+++ b/FILE' line): re-write it "
				"with 'cacheadvise report %s --all'", patch_path, o->dir);
		goto out;
	}
	if (!patch.len) {
		ret = nothing_rewritten(&in, o);
		goto out;
	}
	root = o->source_root ? o->source_root :
	       json_string_value(json_object_get(sources, "read_from"));
	if (!root)
		root = json_string_value(json_object_get(sources, "root"));
	if (!root) {
		ret = error_set(CA_E_INPUT, "'%s' records no source root: pass --source-root",
				sources_path);
		goto out;
	}
	{
		struct stat st;
		if (stat(root, &st) || !S_ISDIR(st.st_mode)) {
			ret = error_set(CA_E_INPUT, "the source root '%s' is not a directory: pass "
					"--source-root with the directory the sources are in", root);
			goto out;
		}
	}
	ret = source_patch_check_sources(sources, sources_path, root);
	if (ret == 1) {
		fprintf(stderr, "cacheadvise apply: %s is already applied in '%s': nothing to do\n",
			name, root);
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	if (o->dry_run) {
		if (fwrite(patch.buf, 1, patch.len, stdout) != patch.len) {
			ret = error_set(CA_E_IO, "cannot write the patch to standard output");
			goto out;
		}
		ret = apply_patch(root, name, &patch, 1);
		if (!ret)
			fprintf(stderr, "cacheadvise apply: the patch applies cleanly in '%s' (dry run: "
				"nothing changed)\n", root);
		goto out;
	}
	ret = for_each_patched_file(&patch, check_writable, root);
	if (ret < 0)
		goto out;
	ret = apply_patch(root, name, &patch, 0);
	if (!ret)
		fprintf(stderr, "cacheadvise apply: applied %s in '%s'; rebuild the program\n",
			name, root);
out:
	strbuf_release(&patch);
	json_decref(sources);
	report_input_release(&in);
	free(name);
	free(patch_path);
	free(sources_path);
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
