#define _GNU_SOURCE
#include "emitters/capture_layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/xalloc.h"

#define MODULES CAPTURE_LAYOUT_MODULES_DIR
#define PATCHED CAPTURE_LAYOUT_PATCHED_DIR
#define GRAPHS CAPTURE_LAYOUT_GRAPHS_DIR
#define RUNS CAPTURE_LAYOUT_RUNS_DIR

/* dir/<fmt...>, or <fmt...> alone when dir is NULL. */
static char *path(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *path(const char *dir, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	char *rel;

	va_start(ap, fmt);
	if (vasprintf(&rel, fmt, ap) < 0)
		rel = NULL;
	va_end(ap);
	if (!rel)
		return xstrdup("");
	if (!dir)
		return rel;
	strbuf_addf(&sb, "%s/%s", dir, rel);
	free(rel);
	return strbuf_detach(&sb, NULL);
}

char *capture_layout_file(const char *dir, const char *name)
{
	return path(dir, "%s", name);
}

char *capture_layout_module_ptx(const char *dir, const char *id)
{
	return path(dir, MODULES "/%s.ptx", id);
}

char *capture_layout_patched_dir(const char *dir)
{
	return path(dir, PATCHED);
}

char *capture_layout_patched_ptx(const char *dir, const char *id)
{
	return path(dir, PATCHED "/%s.ptx", id);
}

char *capture_layout_softcache_ptx(const char *dir, const char *id)
{
	return path(dir, PATCHED "/%s.softcache.ptx", id);
}

char *capture_layout_graph(const char *dir, const char *kernel)
{
	if (!kernel || strchr(kernel, '/'))
		return NULL;
	return path(dir, GRAPHS "/%s.json", kernel);
}

char *capture_layout_run_log(const char *dir, unsigned run)
{
	return path(dir, RUNS "/%03u.log", run);
}

char *capture_layout_run_stdout(const char *dir, unsigned run)
{
	return path(dir, RUNS "/%03u.out", run);
}

char *capture_layout_run_stderr(const char *dir, unsigned run)
{
	return path(dir, RUNS "/%03u.err", run);
}

char *capture_layout_run_events_dir(const char *dir, unsigned run)
{
	return path(dir, RUNS "/%03u.d", run);
}

char *capture_layout_kept_file(const char *dir, const char *sha256)
{
	return path(dir, RUNS "/files/%s", sha256);
}

char *capture_layout_run_events(const char *dir, unsigned run)
{
	return path(dir, RUNS "/%03u.d/events.jsonl", run);
}

char *capture_layout_subst_dir(const char *dir, const char *label)
{
	return path(dir, RUNS "/%s.subst", label);
}

char *capture_layout_run_subst_dir(const char *dir, unsigned run)
{
	return path(dir, RUNS "/%03u.subst", run);
}

char *capture_layout_run_launch_plan(const char *dir, unsigned run)
{
	return path(dir, RUNS "/%03u.plan.json", run);
}

char *capture_layout_subst_ptx(const char *subst_dir, const char *id)
{
	return path(subst_dir, "%s.ptx", id);
}

char *capture_layout_subst_layout(const char *subst_dir, const char *id)
{
	return path(subst_dir, "%s.layout.json", id);
}

char *capture_layout_l2_windows(const char *dir, const char *variant)
{
	return path(dir, RUNS "/l2-%s.json", variant);
}

int capture_layout_create(const char *dir)
{
	static const char *const subdirs[] = { RUNS, MODULES, PATCHED, GRAPHS };
	char *capture = capture_layout_file(dir, CAPTURE_LAYOUT_CAPTURE);
	struct stat st;
	int exists = !stat(capture, &st);
	size_t i;

	free(capture);
	if (exists)
		return error_set(CA_E_USAGE, "'%s' already holds a capture: choose another --out "
				 "directory or remove it", dir);
	if (mkdir_p(dir))
		return CA_E_IO;
	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		char *p = path(dir, "%s", subdirs[i]);
		int ret = mkdir_p(p);
		free(p);
		if (ret)
			return ret;
	}
	return 0;
}
