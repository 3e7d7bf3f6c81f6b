#include "emitters/capture_write.h"

#include "analysis/advise.h"
#include "analysis/capture_model.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/file_lock.h"
#include "base/json_file.h"
#include "base/output_guard.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/patched_ptx.h"
#include "emitters/rewrite/rewrite_backend.h"
#include "emitters/report.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/source_patch.h"
#include "emitters/rewrite/sources_file.h"

static int write_buffer(const char *dir, const char *name, const struct strbuf *sb)
{
	char *path = capture_layout_file(dir, name);
	int ret = write_file_atomic(path, sb->buf, sb->len);

	free(path);
	return ret;
}

/* regcache.patch where a register-cache rewrite is made; otherwise none
 * (one left by an earlier `report --all` is removed: it would be stale).
 * NEEDSWORK: the removal is not part of the caller's atomic batch. */
static int write_regcache_patch(const struct report_input *in)
{
	struct strbuf diff = STRBUF_INIT;
	char *path;
	int ret = 0;

	if (rewrite_backend_regcache.patch(in, &diff)) {
		ret = write_buffer(in->dir, CAPTURE_LAYOUT_REGCACHE_PATCH, &diff);
	} else {
		path = capture_layout_file(in->dir, CAPTURE_LAYOUT_REGCACHE_PATCH);
		if (unlink(path) && errno != ENOENT)
			ret = error_set(CA_E_IO, "cannot remove the stale '%s': %s", path,
					strerror(errno));
		free(path);
	}
	strbuf_release(&diff);
	return ret;
}

/* The top-level files capture_write_input() writes, besides the reports. */
static const char *const written_files[] = {
	CAPTURE_LAYOUT_PLAN, CAPTURE_LAYOUT_SOURCE_PLAN, CAPTURE_LAYOUT_SOURCE_PATCH,
	CAPTURE_LAYOUT_SOURCES,
	CAPTURE_LAYOUT_REGCACHE_PATCH,
};

/* 0 when path is absent or of the type wanted (S_IFREG or S_IFDIR), not
 * a link; else CA_E_INPUT naming it. */
static int check_plain(const char *dir, const char *path, mode_t type)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : error_set(CA_E_INPUT, "cannot write in the capture "
						       "'%s': '%s': %s", dir, path, strerror(errno));
	if ((st.st_mode & S_IFMT) == type)
		return 0;
	return error_set(CA_E_INPUT, "refusing to write in the capture '%s': '%s' is %s; a "
			 "capture from elsewhere may lead outside it: remove it, or copy the "
			 "capture's files", dir, path, S_ISLNK(st.st_mode) ? "a symbolic link" :
			 type == S_IFDIR ? "not a directory" : "not a regular file");
}

int capture_write_check_dir(const char *dir)
{
	char *path = NULL;
	struct dirent *e;
	size_t i, n;
	DIR *d;
	int ret = 0;

	for (i = 0; !ret && i < ARRAY_SIZE(written_files); i++) {
		path = capture_layout_file(dir, written_files[i]);
		ret = check_plain(dir, path, S_IFREG);
		free(path);
	}
	for (i = 0; !ret && report_formats[i]; i++) {
		path = capture_layout_file(dir, report_formats[i]->file_name);
		ret = check_plain(dir, path, S_IFREG);
		free(path);
	}
	path = capture_layout_patched_dir(dir);
	if (!ret)
		ret = check_plain(dir, path, S_IFDIR);
	d = ret ? NULL : opendir(path);
	while (d && !ret && (e = readdir(d))) {
		char *ptx;

		n = strlen(e->d_name);
		if (n < 4 || strcmp(e->d_name + n - 4, ".ptx"))
			continue;
		ptx = xasprintf("%s/%s", path, e->d_name);
		ret = check_plain(dir, ptx, S_IFREG);
		free(ptx);
	}
	if (d)
		closedir(d);
	free(path);
	return ret;
}

/* plan.json and source-plan.json. */
static int write_plans(const struct report_input *in)
{
	char *path = capture_layout_file(in->dir, CAPTURE_LAYOUT_PLAN);
	int ret = plan_write_file(&in->plan, path);

	free(path);
	if (ret)
		return ret;
	path = capture_layout_file(in->dir, CAPTURE_LAYOUT_SOURCE_PLAN);
	ret = plan_write_file(&in->source_plan, path);
	free(path);
	return ret;
}

int capture_write_input(const struct report_input *in)
{
	struct report_options ropt = { 0 };
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int ret = write_plans(in);

	if (ret)
		return ret;
	ret = patched_ptx_write_all(in, in->dir);
	if (ret < 0)
		return ret;
	for (i = 0; report_formats[i]; i++) {
		strbuf_reset(&sb);
		ret = report_formats[i]->render(in, &ropt, &sb);
		if (!ret)
			ret = write_buffer(in->dir, report_formats[i]->file_name, &sb);
		if (ret)
			goto out;
	}
	strbuf_reset(&sb);
	source_patch_write(in, &sb);
	ret = write_buffer(in->dir, CAPTURE_LAYOUT_SOURCE_PATCH, &sb);
	if (ret)
		goto out;
	{
		struct sources_file sf;
		char *path;

		sources_file_init(&sf);
		source_patch_sources(in, &sf);
		path = capture_layout_file(in->dir, CAPTURE_LAYOUT_SOURCES);
		ret = sources_file_write(&sf, path);
		free(path);
		sources_file_release(&sf);
	}
	if (!ret)
		ret = write_regcache_patch(in);
out:
	strbuf_release(&sb);
	return ret;
}

int capture_write_analysed(const char *dir, json_t *capture, const struct analysis *analysis,
			   const struct plan *plan, const struct plan *source_plan,
			   const struct capture_write_options *opt)
{
	struct report_input_options ropt = { opt ? opt->source_root : NULL, NULL };
	struct report_input in;
	int ret = report_input_init_from(&in, dir, capture, analysis, plan, source_plan, &ropt);

	if (!ret)
		ret = capture_write_input(&in);
	report_input_release(&in);
	return ret;
}

int capture_write_all_opts(const char *dir, json_t *capture, const struct plan *plan,
			   const struct capture_write_options *opt)
{
	struct plan aplan, asplan;
	struct capture cap;
	struct analysis analysis;
	int analysed;
	const char *status;
	int ret;

	plan_init(&aplan);
	plan_init(&asplan);
	capture_init(&cap);
	ret = capture_from_json(&cap, capture, CAPTURE_LAYOUT_CAPTURE);
	status = cap.status;
	if (!ret)
		ret = report_input_analyse(&cap, &aplan, &asplan, &analysis);
	else
		analysis_init(&analysis);
	analysed = !ret;
	if (ret) {
		/* An interrupted capture is written as far as it goes. */
		if (status && !strcmp(status, "complete")) {
			plan_release(&aplan);
			plan_release(&asplan);
			capture_release(&cap);
			return error_prefix(ret, "cannot analyse the capture in '%s'", dir);
		}
		error_clear();
	}
	capture_release(&cap);
	/* a plan given is the advice as kept: its source plan is its own */
	ret = capture_write_analysed(dir, capture, analysed ? &analysis : NULL,
				     plan ? plan : &aplan, plan ? NULL : &asplan, opt);
	analysis_release(&analysis);
	plan_release(&aplan);
	plan_release(&asplan);
	return ret;
}

int capture_write_all(const char *dir, json_t *capture, const struct plan *plan)
{
	return capture_write_all_opts(dir, capture, plan, NULL);
}

/* The capture's own top-level files besides the reports, whose names come
 * from report_formats[]. */
static const char *const capture_files[] = {
	CAPTURE_LAYOUT_CAPTURE, CAPTURE_LAYOUT_PLAN, CAPTURE_LAYOUT_SOURCE_PLAN,
	CAPTURE_LAYOUT_SOURCES,
	CAPTURE_LAYOUT_SOURCE_PATCH, CAPTURE_LAYOUT_REGCACHE_PATCH,
};

static const char capture_input[] = "the capture";

static void guard_add(struct output_guard *g, const char *dir, const char *name)
{
	char *path = capture_layout_file(dir, name);

	output_guard_add_file(g, path, capture_input);
	free(path);
}

/*
 * The inputs -o may not replace: the files of the capture directory dir at
 * its top level (own, the format's own report file, may be re-written) and
 * everything in its folders (modules/, patched/, graphs/, runs/, any other).
 */
void capture_write_guard(struct output_guard *g, const char *dir, const char *own)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	size_t i;

	for (i = 0; i < sizeof(capture_files) / sizeof(capture_files[0]); i++)
		guard_add(g, dir, capture_files[i]);
	for (i = 0; report_formats[i]; i++)
		if (strcmp(report_formats[i]->file_name, own))
			guard_add(g, dir, report_formats[i]->file_name);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		char *path;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path = capture_layout_file(dir, e->d_name);
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			output_guard_add_tree(g, path, capture_input);
		free(path);
	}
	if (d)
		closedir(d);
}

int capture_write_check_output(const struct output_guard *g, const char *output, const char *dir)
{
	const char *what = output_guard_check(g, output);

	if (what == capture_input)
		return error_set(CA_E_INPUT, "refusing to write over '%s': it is one of the files "
				 "of the capture '%s'; write the report elsewhere, or re-write the "
				 "capture's reports with --all", output, dir);
	if (what)
		return error_set(CA_E_INPUT, "refusing to write over '%s': it is %s the report "
				 "reads; write the report elsewhere", output, what);
	return 0;
}

int capture_write_lock(struct file_lock *lock, const char *dir)
{
	char *path = capture_layout_file(dir, CAPTURE_LAYOUT_LOCK);
	int ret = capture_write_check_dir(dir);

	if (!ret)
		ret = file_lock_acquire(lock, path);
	free(path);
	return ret;
}
