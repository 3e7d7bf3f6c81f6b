/*
 * collectors/intake: from the nvcc-built fixtures (tests/fixtures/intake,
 * see its README) to modules, ids, kernels and their global loads.
 *
 * The expected loads come from `nvcc -arch=sm_90 -lineinfo -ptx kernels.cu`
 * (kernels.ptx): mix has 8 global loads (ld.global.nc.u32, ld.global.f32,
 * ld.global.nc.f32, then 5 ld.global.f32), scale 1, strong 4
 * (ld.volatile.global, ldu.global, ld.global.L1::no_allocate, ld.global.cg;
 * its ld.shared is not a global load) and the device function pick 2
 * generic ld.
 */
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "base/error.h"
#include "base/module_id.h"
#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/fatbin.h"
#include "collectors/intake.h"
#include "tests/unit/check.h"

#define FIX "tests/fixtures/intake/"
#define MIX "_Z3mixPKfS0_PKiPfii"
#define SCALE "_Z5scalePffi"
#define STRONG "_Z6strongPVfPKfS2_Pf"
#define PICK "_Z4pickPKfi"

static int has(const char *haystack, const char *needle)
{
	if (haystack && strstr(haystack, needle))
		return 1;
	fprintf(stderr, "  expected \"%s\" in \"%s\"\n", needle, haystack ? haystack : "(null)");
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

static const struct intake_module *module_with(const struct intake *in, const char *fn)
{
	size_t i;

	for (i = 0; i < in->nr_modules; i++)
		if (in->modules[i].ptx && ptx_module_find(in->modules[i].ptx, fn))
			return &in->modules[i];
	return NULL;
}

static size_t count_loads(const struct ptx_function *f, enum ptx_space space)
{
	size_t i, n = 0;

	for (i = 0; i < f->nr_loads; i++)
		n += f->loads[i].space == space;
	return n;
}

/* The kernels.cu module, wherever it comes from; lineinfo says whether
 * the PTX was built with -lineinfo. */
static void check_kernels_module(const struct intake_module *m, int lineinfo)
{
	const struct ptx_function *mix, *scale, *strong, *pick;
	size_t i;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(m->has_ptx);
	CHECK(m->no_ptx_reason == NULL);
	CHECK_INT(strlen(m->id), MODULE_ID_LEN);
	mix = ptx_module_find(m->ptx, MIX);
	scale = ptx_module_find(m->ptx, SCALE);
	strong = ptx_module_find(m->ptx, STRONG);
	pick = ptx_module_find(m->ptx, PICK);
	CHECK(mix && scale && strong && pick);
	if (!mix || !scale || !strong || !pick)
		return;
	CHECK(mix->is_entry && scale->is_entry && strong->is_entry && !pick->is_entry);
	CHECK_INT(mix->nr_loads, 8);
	CHECK_INT(count_loads(mix, PTX_SPACE_GLOBAL), 8);
	CHECK_INT(scale->nr_loads, 1);
	CHECK_INT(strong->nr_loads, 4);
	CHECK_INT(pick->nr_loads, 2);
	CHECK_INT(count_loads(pick, PTX_SPACE_GENERIC), 2);
	CHECK_INT(mix->nr_params, 6);

	/* mix's first load reads idx[i]: parameter 2, restrict, so .nc. */
	CHECK_STR(mix->loads[0].opcode, "ld.global.nc.u32");
	CHECK_INT(mix->loads[0].param, 2);
	CHECK_INT(mix->loads[0].nc, 1);
	CHECK_INT(mix->loads[0].patchable, 1);
	for (i = 0; i < mix->nr_loads; i++) {
		CHECK_INT(mix->loads[i].ordinal, i);
		if (lineinfo) {
			CHECK(ends_with(mix->loads[i].file, "kernels.cu"));
			CHECK(mix->loads[i].line >= 9 && mix->loads[i].line <= 16);
		} else {
			CHECK(mix->loads[i].file == NULL);
			CHECK_INT(mix->loads[i].line, 0);
		}
	}
	/* scale reads and writes x: not read-only. */
	CHECK_INT(scale->loads[0].param, 0);
	CHECK_INT(scale->loads[0].read_only, 0);

	/* strong: volatile, ldu and .cg are never rewritten. */
	CHECK_INT(strong->loads[0].strong, 1);
	CHECK_INT(strong->loads[0].patchable, 0);
	CHECK(strong->loads[0].unpatchable_reason != NULL);
	CHECK_INT(strong->loads[1].is_ldu, 1);
	CHECK_INT(strong->loads[1].patchable, 0);
	CHECK_INT(strong->loads[2].l1_eviction, PTX_L1_NO_ALLOCATE);
	CHECK_INT(strong->loads[3].cache_op, PTX_CACHE_OP_CG);
	CHECK_INT(strong->loads[3].patchable, 0);
}

static void test_app(void)
{
	struct intake in;
	struct fatbin fb;
	const struct intake_module *m;
	char id[MODULE_ID_LEN + 1];
	size_t i;

	intake_init(&in);
	CHECK_INT(intake_read_file(&in, check_source_path(FIX "app"), 90), 0);
	CHECK_INT(in.nr_modules, 4);
	CHECK_INT(in.relocatable_device_code, 0);
	if (in.nr_modules == 4) {
		/* The runtime's own fatbin: an empty cubin. */
		CHECK_INT(in.modules[0].has_ptx, 0);
		CHECK(has(in.modules[0].no_ptx_reason, "no PTX and no kernels"));
		CHECK_STR(in.modules[0].origin, "app#fatbin0");
		/* main.cu: PTX without functions. */
		CHECK_INT(in.modules[1].has_ptx, 1);
		CHECK_INT(in.modules[1].ptx->nr_functions, 0);
		CHECK_STR(in.modules[1].source_name, "main.cu");
		CHECK_STR(in.modules[2].origin, "app#fatbin2");
		CHECK_STR(in.modules[2].source_name, "kernels.cu");
		CHECK_INT(in.modules[2].arch, 90);
		CHECK_STR(in.modules[3].origin, "app#fatbin3");
	}
	m = module_with(&in, MIX);
	check_kernels_module(m, 1);
	CHECK(m == &in.modules[2]);

	/* The id is module_id_compute of the entry's decompressed PTX. */
	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "app")), 0);
	for (i = 0; i < fb.nr_entries; i++)
		if (fb.entries[i].kind == FATBIN_KIND_PTX && fb.entries[i].fatbin_index == 2) {
			module_id_compute(fb.entries[i].data, fb.entries[i].size, id);
			CHECK(m && !strcmp(m->id, id));
			CHECK(m && m->ptx->len == fb.entries[i].size &&
			      !memcmp(m->ptx->text, fb.entries[i].data, m->ptx->len));
		}
	fatbin_release(&fb);

	m = module_with(&in, "_Z3addPKdPdi");
	CHECK(m == &in.modules[3]);
	intake_release(&in);
	CHECK_INT(in.nr_modules, 0);
}

static void test_multi_arch(void)
{
	struct intake in;
	char id90[MODULE_ID_LEN + 1] = "", id80[MODULE_ID_LEN + 1] = "";

	intake_init(&in);
	CHECK_INT(intake_read_file(&in, check_source_path(FIX "multi.fatbin"), 0), 0);
	CHECK_INT(in.nr_modules, 1);
	if (in.nr_modules == 1) {
		CHECK_INT(in.modules[0].arch, 90);
		CHECK_INT(in.modules[0].nr_ptx_archs, 2);
		CHECK_INT(in.modules[0].nr_cubin_archs, 1);
		CHECK_STR(in.modules[0].ptx->target, "sm_90");
		memcpy(id90, in.modules[0].id, sizeof(id90));
		check_kernels_module(&in.modules[0], 1);
	}
	intake_release(&in);

	CHECK_INT(intake_read_file(&in, check_source_path(FIX "multi.fatbin"), 90), 0);
	CHECK(in.nr_modules == 1 && !strcmp(in.modules[0].id, id90));
	intake_release(&in);

	/* An sm_86 device JITs the compute_80 PTX. */
	CHECK_INT(intake_read_file(&in, check_source_path(FIX "multi.fatbin"), 86), 0);
	CHECK_INT(in.nr_modules, 1);
	if (in.nr_modules == 1) {
		CHECK_INT(in.modules[0].arch, 80);
		CHECK_STR(in.modules[0].ptx->target, "sm_80");
		memcpy(id80, in.modules[0].id, sizeof(id80));
		CHECK(strcmp(id80, id90) != 0);
	}
	intake_release(&in);

	/* Older than every PTX: nothing usable. */
	CHECK_INT(intake_read_file(&in, check_source_path(FIX "multi.fatbin"), 75), 0);
	CHECK(in.nr_modules == 1 && !in.modules[0].has_ptx && !in.modules[0].ptx);
	if (in.nr_modules == 1)
		CHECK(has(in.modules[0].no_ptx_reason, "no PTX for sm_75 or older"));
	intake_release(&in);
}

static void test_cubin_only(void)
{
	struct intake in;
	const struct intake_module *m;

	intake_init(&in);
	CHECK_INT(intake_read_file(&in, check_source_path(FIX "cubin_only.fatbin"), 90), 0);
	CHECK_INT(in.nr_modules, 1);
	if (in.nr_modules == 1) {
		m = &in.modules[0];
		CHECK_INT(m->has_ptx, 0);
		CHECK(m->ptx == NULL);
		CHECK_STR(m->no_ptx_reason,
			  "no PTX: cannot patch; rebuild with -gencode arch=compute_90,"
			  "code=[sm_90,compute_90] (or nvcc -arch=sm_90, which embeds PTX)");
		CHECK_INT(m->nr_cubin_kernels, 3);
		CHECK_INT(m->arch, 90);
		CHECK_INT(strlen(m->id), MODULE_ID_LEN);
	}
	intake_release(&in);

	CHECK_INT(intake_read_file(&in, check_source_path(FIX "app_rdc"), 90), 0);
	CHECK_INT(in.relocatable_device_code, 1);
	CHECK(in.nr_modules >= 1);
	if (in.nr_modules >= 1) {
		CHECK_INT(in.modules[0].has_ptx, 0);
		CHECK(has(in.modules[0].no_ptx_reason, "-rdc=true"));
		/* nvlink keeps the kernels the host code launches: mix and add. */
		CHECK_INT(in.modules[0].nr_cubin_kernels, 2);
		if (in.modules[0].nr_cubin_kernels == 2)
			CHECK(!strcmp(in.modules[0].cubin_kernels[0], MIX) ||
			      !strcmp(in.modules[0].cubin_kernels[1], MIX));
	}
	intake_release(&in);
}

/* The same PTX, whatever the container and compression, has one id. */
static void test_ids_agree(void)
{
	static const char *files[] = { "uncompressed.fatbin", "lz4.fatbin",
				       "compressed_cubin.fatbin" };
	char first[MODULE_ID_LEN + 1] = "";
	struct intake in;
	size_t i;

	intake_init(&in);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), FIX "%s", files[i]);
		CHECK_INT(intake_read_file(&in, check_source_path(rel), 0), 0);
		CHECK_INT(in.nr_modules, 1);
		if (in.nr_modules == 1) {
			if (!i)
				memcpy(first, in.modules[0].id, sizeof(first));
			CHECK_STR(in.modules[0].id, first);
			check_kernels_module(&in.modules[0], 0);
		}
		intake_release(&in);
	}
}

static void test_ptx_files(void)
{
	struct intake in;
	struct strbuf sb = STRBUF_INIT;
	char id[MODULE_ID_LEN + 1];

	intake_init(&in);
	CHECK_INT(intake_read_file(&in, check_source_path(FIX "kernels.ptx"), 0), 0);
	CHECK_INT(in.nr_modules, 1);
	if (in.nr_modules == 1) {
		CHECK_STR(in.modules[0].origin, "kernels.ptx");
		CHECK_INT(in.modules[0].arch, 90);
		CHECK_INT(strbuf_read_file(&sb, check_source_path(FIX "kernels.ptx"), 0), 0);
		module_id_compute(sb.buf, sb.len, id);
		CHECK_STR(in.modules[0].id, id);
		check_kernels_module(&in.modules[0], 1);
	}
	intake_release(&in);

	CHECK_INT(intake_read_file(&in, check_source_path(FIX "kernels_noline.ptx"), 0), 0);
	CHECK_INT(in.nr_modules, 1);
	if (in.nr_modules == 1)
		check_kernels_module(&in.modules[0], 0);
	intake_release(&in);
	strbuf_release(&sb);
}

static void test_image(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct intake a, b;
	struct { unsigned magic, version; const void *fatbin, *unused; } wrapper;

	intake_init(&a);
	intake_init(&b);
	CHECK_INT(strbuf_read_file(&sb, check_source_path(FIX "multi.fatbin"), 0), 0);
	wrapper.magic = FATBIN_WRAPPER_MAGIC;
	wrapper.version = 1;
	wrapper.fatbin = sb.buf;
	wrapper.unused = NULL;
	CHECK_INT(intake_read_image(&a, &wrapper, "prog", 90), 0);
	CHECK_INT(intake_read_file(&b, check_source_path(FIX "multi.fatbin"), 90), 0);
	CHECK(a.nr_modules == 1 && b.nr_modules == 1);
	if (a.nr_modules == 1 && b.nr_modules == 1) {
		CHECK_STR(a.modules[0].id, b.modules[0].id);
		CHECK_STR(a.modules[0].origin, "prog#fatbin0");
	}
	intake_release(&a);
	intake_release(&b);
	strbuf_release(&sb);
}

static void test_errors(void)
{
	static const char bad_ptx[] = ".version 9.0\n.target sm_90\n.address_size 64\n\n"
				      ".visible .entry k(\n.param .u64 p\n)\n{\n"
				      "ld.global.f32 %f1, [%rd1];\n";  /* no closing brace */
	char dir[] = "/tmp/test_intake.XXXXXX";
	struct intake in;
	char *path;
	FILE *f;

	intake_init(&in);
	CHECK_INT(intake_read_file(&in, "/nonexistent/app", 90), CA_E_INPUT);
	CHECK(has(error_message(), "/nonexistent/app"));
	CHECK_INT(in.nr_modules, 0);

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	path = xasprintf("%s/broken.ptx", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(bad_ptx, f);
		fclose(f);
		error_clear();
		CHECK_INT(intake_read_file(&in, path, 90), CA_E_INPUT);
		CHECK(has(error_message(), "broken.ptx"));
		CHECK_INT(in.nr_modules, 0);
	}
	unlink(path);
	rmdir(dir);
	free(path);
	intake_release(&in);
}

/* A cubin loaded from a file at run time (issue 25): named as what it is. */
static void test_cubin_file_reason(void)
{
	char dir[] = "/tmp/ca-test-triton-XXXXXX";
	char *cubin, *ptx, *why;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	cubin = xasprintf("%s/add_kernel.cubin", dir);
	ptx = xasprintf("%s/add_kernel.ptx", dir);
	why = intake_cubin_file_reason(cubin);
	CHECK(strstr(why, "-gencode") != NULL);      /* nothing beside it: maybe the user's */
	free(why);
	f = fopen(ptx, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	why = intake_cubin_file_reason(cubin);
	CHECK(strstr(why, "a cubin loaded at run time") != NULL);
	CHECK(strstr(why, "the PTX beside it does not parse") != NULL);
	CHECK(strstr(why, "rebuild") == NULL && strstr(why, "-gencode") == NULL);
	free(why);
	why = intake_cubin_file_reason("/root/.triton/cache/AB12/add_kernel.cubin");
	CHECK(strstr(why, "compiled by Triton") != NULL);
	CHECK(strstr(why, "no PTX of it was found beside it") != NULL);
	CHECK(strstr(why, "-gencode") == NULL);
	free(why);
	unlink(ptx);
	rmdir(dir);
	free(cubin);
	free(ptx);
}

/* Triton's cache (tests/fixtures/triton, compiled offline by make_cache.py):
 * a cubin file or image brings the PTX beside it, and its metadata. */
static void test_triton_cache(void)
{
	const char *cache = check_source_path("tests/fixtures/triton/cache");
	char *cubin = NULL, *ptx = NULL, *cmd, *old_env;
	char dir[] = "/tmp/ca-test-triton-cache-XXXXXX";
	char id[MODULE_ID_LEN + 1];
	struct strbuf img = STRBUF_INIT, text = STRBUF_INIT;
	struct intake in;
	DIR *top;
	struct dirent *d;

	/* the rownorm kernel's folder */
	top = opendir(cache);
	CHECK(top != NULL);
	while (top && (d = readdir(top))) {
		char *c = xasprintf("%s/%s/rownorm_kernel.cubin", cache, d->d_name);

		if (!access(c, R_OK)) {
			cubin = c;
			ptx = xasprintf("%s/%s/rownorm_kernel.ptx", cache, d->d_name);
			break;
		}
		free(c);
	}
	if (top)
		closedir(top);
	CHECK(cubin != NULL);
	if (!cubin)
		return;

	intake_init(&in);
	CHECK_INT(intake_read_file(&in, cubin, 90), 0);
	CHECK_INT(in.nr_modules, 1);
	if (in.nr_modules == 1) {
		const struct intake_module *m = &in.modules[0];

		CHECK(m->has_ptx && m->ptx && !m->no_ptx_reason);
		CHECK(m->ptx && ptx_module_find(m->ptx, "rownorm_kernel") != NULL);
		CHECK_STR(m->ptx_file, ptx);
		CHECK_INT(m->arch, 90);
		/* its id is the PTX's, as for any module with PTX */
		CHECK_INT(strbuf_read_file(&text, ptx, 0), 0);
		module_id_compute(text.buf, text.len, id);
		CHECK_STR(m->id, id);
		CHECK(m->triton.present);
		CHECK_STR(m->triton.name, "rownorm_kernel");
		CHECK_INT(m->triton.num_warps, 4);
		CHECK_INT(m->triton.global_scratch_size, 0);
		CHECK_STR(m->triton.triton_version, "3.6.0");
	}
	intake_release(&in);

	/* the same bytes as an image: found in TRITON_CACHE_DIR */
	CHECK_INT(strbuf_read_file(&img, cubin, 0), 0);
	old_env = getenv("TRITON_CACHE_DIR") ? xstrdup(getenv("TRITON_CACHE_DIR")) : NULL;
	setenv("TRITON_CACHE_DIR", cache, 1);
	CHECK_INT(intake_read_image(&in, img.buf, "cuModuleLoadData#0", 90), 0);
	CHECK(in.nr_modules == 1 && in.modules[0].has_ptx && !strcmp(in.modules[0].id, id));
	intake_release(&in);
	/* run --plan of a Python program (issue 38 item 4): the plan's module ids
	 * found in the cache, each once, none for an id the cache lacks */
	{
		const char *ids[] = { "0123456789abcdef", id };

		intake_init(&in);
		CHECK_INT(intake_read_triton_modules(&in, ids, 2, 90), 0);
		CHECK(in.nr_modules == 1 && in.modules[0].has_ptx && !strcmp(in.modules[0].id, id));
		CHECK_INT(intake_read_triton_modules(&in, ids, 2, 90), 0);
		CHECK_INT(in.nr_modules, 1);
		intake_release(&in);
		intake_init(&in);
		CHECK_INT(intake_read_triton_modules(&in, ids, 1, 90), 0);
		CHECK_INT(in.nr_modules, 0);
		intake_release(&in);
	}
	setenv("TRITON_CACHE_DIR", "/nonexistent/triton-cache", 1);
	CHECK_INT(intake_read_image(&in, img.buf, "cuModuleLoadData#0", 90), 0);
	CHECK(in.nr_modules == 1 && !in.modules[0].has_ptx && in.modules[0].no_ptx_reason);
	intake_release(&in);
	if (old_env)
		setenv("TRITON_CACHE_DIR", old_env, 1);
	else
		unsetenv("TRITON_CACHE_DIR");
	free(old_env);

	/* a cubin alone keeps no PTX; a .ptx beside it of another kernel is refused */
	CHECK(mkdtemp(dir) != NULL);
	cmd = xasprintf("cp '%s' %s/k.cubin", cubin, dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	free(cubin);
	cubin = xasprintf("%s/k.cubin", dir);
	CHECK_INT(intake_read_file(&in, cubin, 90), 0);
	CHECK(in.nr_modules == 1 && !in.modules[0].has_ptx && !in.modules[0].ptx_file);
	intake_release(&in);
	cmd = xasprintf("cp %s/*/gather_kernel.ptx %s/k.ptx", cache, dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	CHECK_INT(intake_read_file(&in, cubin, 90), 0);
	CHECK(in.nr_modules == 1 && !in.modules[0].has_ptx);
	CHECK(in.nr_modules == 1 && in.modules[0].no_ptx_reason &&
	      strstr(in.modules[0].no_ptx_reason, "is not the cubin's"));
	intake_release(&in);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	free(cubin);
	free(ptx);
	strbuf_release(&img);
	strbuf_release(&text);
}

/* Every compile of a kernel in Triton's cache, newest first: the cubin,
 * else the PTX; other kernels' folders are not its compiles. */
static void test_triton_compiles(void)
{
	const char *fix = check_source_path("tests/fixtures/triton/cache");
	char dir[] = "/tmp/ca-test-triton-compiles-XXXXXX";
	char *cmd, *old_env, **paths, *want;
	size_t n = 99;

	CHECK(mkdtemp(dir) != NULL);
	cmd = xasprintf("cd %s && mkdir a b c && cp %s/*/rownorm_kernel.* a/ && "
			"cp %s/*/rownorm_kernel.ptx b/ && cp %s/*/gather_kernel.* c/ && "
			"touch -d '2020-01-01 00:00' a/* && touch -d '2021-01-01 00:00' b/*",
			dir, fix, fix, fix);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	old_env = getenv("TRITON_CACHE_DIR") ? xstrdup(getenv("TRITON_CACHE_DIR")) : NULL;
	setenv("TRITON_CACHE_DIR", dir, 1);
	paths = intake_triton_compiles("rownorm_kernel", &n);
	CHECK_INT(n, 2);
	if (n == 2) {
		want = xasprintf("%s/b/rownorm_kernel.ptx", dir);
		CHECK_STR(paths[0], want);
		free(want);
		want = xasprintf("%s/a/rownorm_kernel.cubin", dir);
		CHECK_STR(paths[1], want);
		free(want);
		CHECK(paths[2] == NULL);
	}
	intake_triton_compiles_free(paths);
	paths = intake_triton_compiles("no_such_kernel", &n);
	CHECK(n == 0 && paths && !paths[0]);
	intake_triton_compiles_free(paths);
	intake_triton_compiles_free(NULL);
	if (old_env)
		setenv("TRITON_CACHE_DIR", old_env, 1);
	else
		unsetenv("TRITON_CACHE_DIR");
	free(old_env);
	check_remove_dir(dir);
}

int main(void)
{
	test_triton_cache();
	test_triton_compiles();
	test_cubin_file_reason();
	test_app();
	test_multi_arch();
	test_cubin_only();
	test_ids_agree();
	test_ptx_files();
	test_image();
	test_errors();
	return check_done();
}
