/*
 * emitters/rewrite/rebuild_check: which compile of a Triton kernel `check`
 * reads when Triton's cache holds several (issue 35). With the events of a
 * run of the rebuilt program, the one it loaded, by identity (the module
 * id the injection library gives the cubin it loaded), whatever the files'
 * times; without one that launched the kernel, the choice falls back and
 * says why. On tests/fixtures/triton: rownorm_kernel compiled from
 * kernels.py (the original) and from rebuilt/kernels.py (the patched).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/error.h"
#include "base/module_id.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/events.h"
#include "emitters/rewrite/rebuild_check.h"
#include "tests/unit/check.h"

#define KERNEL "rownorm_kernel"

struct compile {
	char *dir;                  /* its folder in the cache */
	char *cubin;
	char id[MODULE_ID_LEN + 1]; /* its PTX's module id */
};

/* Copies fixture folder fix's rownorm_kernel files into cache/name. */
static void compile_init(struct compile *c, const char *cache, const char *name,
			 const char *fix)
{
	struct strbuf ptx = STRBUF_INIT;
	char *cmd, *path;

	c->dir = xasprintf("%s/%s", cache, name);
	c->cubin = xasprintf("%s/" KERNEL ".cubin", c->dir);
	cmd = xasprintf("mkdir -p '%s' && cp %s/*/" KERNEL ".* '%s'", c->dir,
			check_source_path(fix), c->dir);
	CHECK_INT(system(cmd), 0);
	path = xasprintf("%s/" KERNEL ".ptx", c->dir);
	CHECK_INT(strbuf_read_file(&ptx, path, 0), 0);
	module_id_compute(ptx.buf, ptx.len, c->id);
	free(cmd);
	free(path);
	strbuf_release(&ptx);
}

static void compile_release(struct compile *c)
{
	free(c->dir);
	free(c->cubin);
}

/* Sets the time of every file of c: "2020-01-01" is older than now. */
static void compile_touch(const struct compile *c, const char *when)
{
	char *cmd = xasprintf("touch -d '%s' '%s'/*", when, c->dir);

	CHECK_INT(system(cmd), 0);
	free(cmd);
}

/* A capture of the original rownorm_kernel whose plan changes its load 0. */
static void write_capture(const char *cap, const struct compile *orig)
{
	char *cmd = xasprintf("mkdir -p '%s/modules' && cp '%s/" KERNEL ".ptx' '%s/modules/%s.ptx'",
			      cap, orig->dir, cap, orig->id);
	char *mptx = xasprintf("modules/%s.ptx", orig->id), *path;
	json_t *doc, *plan;

	CHECK_INT(system(cmd), 0);
	doc = json_pack("{s:s, s:s, s:{s:s, s:[s], s:s}, s:{s:s, s:s, s:s},"
			" s:[{s:s, s:s, s:s, s:b, s:s}],"
			" s:[{s:s, s:s, s:i, s:[{s:i, s:s, s:s, s:i, s:i, s:b, s:b, s:b, s:i, s:i}],"
			" s:[]}], s:[]}",
			"schema", "cacheadvise.capture/1", "status", "complete",
			"program", "path", "python3", "args", "prog.py", "cwd", "/tmp",
			"device", "schema", "cacheadvise.device/1", "name", "NVIDIA H100 80GB HBM3",
			"cc", "9.0",
			"modules", "id", orig->id, "origin", "cuModuleLoadData#0", "arch", "sm_90",
			"has_ptx", 1, "ptx", mptx,
			"kernels", "module", orig->id, "name", KERNEL, "launches", 10,
			"loads", "ordinal", 0, "instruction", "ld.global.b32",
			"file", "/nonexistent/kernels.py", "line", 17, "param", 0, "read_only", 1,
			"patchable", 1, "measured", 1, "access", 1000, "hit", 100,
			"pairs", "runs");
	plan = json_pack("{s:s, s:[{s:s, s:[{s:s, s:[{s:i, s:s}]}]}]}",
			 "schema", "cacheadvise.plan/1", "modules", "id", orig->id,
			 "functions", "name", KERNEL, "loads", "ordinal", 0,
			 "action", "L1::evict_last+L2::evict_last");
	path = xasprintf("%s/capture.json", cap);
	CHECK_INT(json_dump_file(doc, path, 0), 0);
	free(path);
	path = xasprintf("%s/plan.json", cap);
	CHECK_INT(json_dump_file(plan, path, 0), 0);
	free(path);
	json_decref(doc);
	json_decref(plan);
	free(mptx);
	free(cmd);
}

/* The events of a run that launched KERNEL from module id (NULL: none). */
static void loaded_init(struct run_events *ev, const char *id)
{
	run_events_init(ev);
	if (id)
		run_events_kernel(ev, KERNEL)->module = xstrdup(id);
	else
		run_events_kernel(ev, "other_kernel")->module = xstrdup("0000");
}

/* check reads cap with the events of a run that loaded module id; the
 * module it read has id want and its notes say note. */
static void expect_read(const char *cap, const char *loaded_id, const char *want,
			const char *note)
{
	struct rebuild_input ri;
	struct run_events ev;
	int ret;

	loaded_init(&ev, loaded_id);
	ret = rebuild_input_load(&ri, cap, "python3", NULL, "/nonexistent/python3");
	CHECK(ri.python);
	if (!ret)
		ret = rebuild_input_read_triton(&ri, &ev);
	CHECK_INT(ret, 0);
	if (ret) {
		fprintf(stderr, "  %s\n", error_message());
		error_clear();
	}
	CHECK_INT(ri.rb.nr_modules, 1);
	if (ri.rb.nr_modules == 1)
		CHECK_STR(ri.rb.modules[0].id, want);
	if (!strstr(ri.notes.buf, note))
		fprintf(stderr, "  expected \"%s\" in \"%s\"\n", note, ri.notes.buf);
	CHECK(strstr(ri.notes.buf, note) != NULL);
	rebuild_input_release(&ri);
	run_events_release(&ev);
}

static void test_loaded_compile(void)
{
	char root[] = "/tmp/ca-test-rebuild-check-XXXXXX";
	char *cache, *cap, *note, *old_env;
	struct compile orig, patched;

	CHECK(mkdtemp(root) != NULL);
	cache = xasprintf("%s/cache", root);
	cap = xasprintf("%s/cap", root);
	compile_init(&patched, cache, "patched", "tests/fixtures/triton/rebuilt/cache");
	compile_init(&orig, cache, "orig", "tests/fixtures/triton/cache");
	CHECK(strcmp(orig.id, patched.id) != 0);
	write_capture(cap, &orig);
	old_env = getenv("TRITON_CACHE_DIR") ? xstrdup(getenv("TRITON_CACHE_DIR")) : NULL;
	setenv("TRITON_CACHE_DIR", cache, 1);

	/* the rerun in the same environment: the original written last, the
	 * patched one loaded */
	compile_touch(&patched, "2020-01-01 00:00");
	note = xasprintf("reading '%s', the compile the rebuilt program loaded (module %s)",
			 patched.cubin, patched.id);
	expect_read(cap, patched.id, patched.id, note);
	free(note);

	/* identity, not time, either way: the patched one written last, the
	 * original loaded (a rerun of the program as it was) */
	compile_touch(&orig, "2019-01-01 00:00");
	note = xasprintf("reading '%s', the compile the rebuilt program loaded", orig.cubin);
	expect_read(cap, orig.id, orig.id, note);
	free(note);

	/* a run that did not launch the kernel, or loaded a module the cache
	 * does not hold: said, and the choice falls back (the advised load is
	 * not in a source.patch here, so nothing tells them apart: the newest) */
	expect_read(cap, NULL, patched.id, KERNEL ": the rebuilt program did not launch it");
	expect_read(cap, "f00d", patched.id, KERNEL ": the rebuilt program loaded module f00d, "
		    "which none of the 2 compiles of it in Triton's cache is");

	if (old_env)
		setenv("TRITON_CACHE_DIR", old_env, 1);
	else
		unsetenv("TRITON_CACHE_DIR");
	free(old_env);
	compile_release(&orig);
	compile_release(&patched);
	check_remove_dir(root);
	free(cache);
	free(cap);
}

int main(void)
{
	test_loaded_compile();
	return check_done();
}
