/*
 * Unit tests of the source-side emitters: the C++ tokenizer and kernel
 * lookup (emitters/rewrite/source_file.h), the expression matcher and the load
 * helpers (emitters/rewrite/source_rewrite.h). The helpers are also compiled with
 * nvcc and assembled with ptxas (a CUDA toolkit is required: CA_CUDA_BIN).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/rewrite/source_file.h"
#include "emitters/rewrite/source_macro.h"
#include "emitters/rewrite/source_rewrite.h"
#include "tests/unit/check.h"

static void test_base_names(void)
{
	char *s;

	s = source_kernel_base_name("_Z3mixPKfS0_PKiPfii", NULL);
	CHECK_STR(s, "mix");
	free(s);
	s = source_kernel_base_name("_ZN2ns5innerEPf", NULL);
	CHECK_STR(s, "inner");
	free(s);
	s = source_kernel_base_name("_Z6kernelIfEvPT_i", NULL);
	CHECK_STR(s, "kernel");
	free(s);
	s = source_kernel_base_name("plain_c_kernel", NULL);
	CHECK_STR(s, "plain_c_kernel");
	free(s);
	s = source_kernel_base_name("_Z3mixPKf", "mix(float const*, float const*)");
	CHECK_STR(s, "mix");
	free(s);
	s = source_kernel_base_name("x", "void ns::tiled<float, 4>(float const*, float*)");
	CHECK_STR(s, "tiled");
	free(s);
	s = source_kernel_base_name("_Z999x", NULL);
	CHECK(s == NULL);
}

static struct source_file *load_fixture(void)
{
	struct source_file *sf = source_file_load(check_source_path("tests/fixtures/sources/stencil.cu"));

	CHECK(sf != NULL);
	return sf;
}

static void test_find_kernel(void)
{
	struct source_file *sf = load_fixture();
	struct source_kernel k;
	size_t len;
	const char *line;

	if (!sf)
		return;
	CHECK_INT(strlen(sf->sha256), 64);
	line = source_file_line(sf, 13, &len);
	CHECK(line && len == strlen("\tfloat s = a[i];") && !strncmp(line, "\tfloat s = a[i];", len));
	CHECK(source_file_line(sf, 0, &len) == NULL);
	CHECK(source_file_line(sf, sf->nr_lines + 1, &len) == NULL);

	CHECK_INT(source_file_find_kernel(sf, "mix", &k), 1);
	CHECK_INT(k.nr_params, 6);
	if (k.nr_params == 6) {
		CHECK_STR(k.params[0], "a");
		CHECK_STR(k.params[1], "b");
		CHECK_STR(k.params[2], "idx");
		CHECK_STR(k.params[3], "out");
		CHECK_STR(k.params[5], "k");
		CHECK_STR(k.param_types[2], "const int *__restrict__");
	}
	CHECK_INT(k.decl_line, 7);
	CHECK_INT(k.body_first_line, 9);
	CHECK_INT(k.body_last_line, 19);
	source_kernel_release(&k);

	CHECK_INT(source_file_find_kernel(sf, "gather", &k), 1);
	CHECK_INT(k.nr_params, 5);
	if (k.nr_params == 5)
		CHECK_STR(k.params[0], "p");
	source_kernel_release(&k);
	CHECK_INT(source_file_find_kernel(sf, "axpy_inplace", &k), 1);
	source_kernel_release(&k);
	/* A struct name and something that is not there. */
	CHECK_INT(source_file_find_kernel(sf, "particle", &k), 0);
	CHECK_INT(source_file_find_kernel(sf, "nothere", &k), 0);
	source_file_free(sf);
}

static struct source_file *file_from(const char *text)
{
	char path[] = "/tmp/test_emit_source_XXXXXX";
	int fd = mkstemp(path);
	struct source_file *sf;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		CHECK(!"cannot write a temporary file");
		return NULL;
	}
	close(fd);
	sf = source_file_load(path);
	unlink(path);
	return sf;
}

static void test_find_kernel_forms(void)
{
	struct source_kernel k;
	struct source_file *sf = file_from(
		"/* a __global__ void f(int *x) { in a comment } */\n"
		"__global__ void f(float *x);  // a declaration\n"
		"template <typename T>\n"
		"__global__ void __launch_bounds__(256) f(T *x, const T *y, int n = 4)\n"
		"{\n"
		"\tconst char *s = \"f(int *z) {\";\n"
		"\tx[0] = y[0];\n"
		"}\n"
		"__device__ void g(float *a) { f(a); }\n"
		"extern \"C\" __global__ void two(float *a) {}\n"
		"extern \"C\" __global__ void two(int *a) {}\n"
		"__global__ void unnamed(float *, int) {}\n");

	if (!sf)
		return;
	CHECK_INT(source_file_find_kernel(sf, "f", &k), 1);
	CHECK_INT(k.nr_params, 3);
	if (k.nr_params == 3) {
		CHECK_STR(k.params[0], "x");
		CHECK_STR(k.params[1], "y");
		CHECK_STR(k.params[2], "n");
		CHECK_STR(k.param_types[1], "const T *");
	}
	CHECK_INT(k.body_first_line, 5);
	CHECK_INT(k.body_last_line, 8);
	source_kernel_release(&k);
	CHECK_INT(source_file_find_kernel(sf, "g", &k), 0);     /* not __global__ */
	CHECK_INT(source_file_find_kernel(sf, "two", &k), -1);  /* overloads */
	CHECK_INT(source_file_find_kernel(sf, "unnamed", &k), 1);
	CHECK_INT(k.nr_params, 2);
	if (k.nr_params == 2) {
		CHECK(k.params[0] == NULL);
		CHECK(k.params[1] == NULL);
	}
	source_kernel_release(&k);
	/* The first line starts inside no comment; line 2 does not either. */
	CHECK_INT(sf->in_comment[0], 0);
	source_file_free(sf);

	sf = file_from("int x; /* opens\n still inside\n ends */ int y;\n");
	if (!sf)
		return;
	CHECK_INT(sf->in_comment[0], 0);
	CHECK_INT(sf->in_comment[1], 1);
	CHECK_INT(sf->in_comment[2], 1);
	source_file_free(sf);
}

/* Finds param on line; returns the status and, when OK, the line rewritten with helper. */
static enum source_rewrite_status rewrite(const char *line, const char *param, const char *type,
					  const char *helper, char **out)
{
	struct source_rewrite rw;
	const struct source_rewrite *rws[1];
	const char *helpers[1] = { helper };
	enum source_rewrite_status st;

	source_rewrite_find(&rw, line, strlen(line), 0, param, type);
	st = rw.status;
	*out = NULL;
	rws[0] = &rw;
	if (st == SOURCE_REWRITE_OK)
		*out = source_rewrite_apply(line, strlen(line), rws, helpers, 1);
	else
		CHECK(rw.reason != NULL && strlen(rw.reason) > 10);
	source_rewrite_release(&rw);
	return st;
}

#define EXPECT_REWRITE(line, param, helper, want)                                  \
	do {                                                                       \
		char *got_;                                                        \
		CHECK_INT(rewrite(line, param, NULL, helper, &got_), SOURCE_REWRITE_OK); \
		CHECK_STR(got_, want);                                             \
		free(got_);                                                        \
	} while (0)

#define EXPECT_STATUS(line, param, status)                                         \
	do {                                                                       \
		char *got_;                                                        \
		CHECK_INT(rewrite(line, param, NULL, "h", &got_), status);         \
		free(got_);                                                        \
	} while (0)

/* The element type a read says: the cast's, over the parameter's. */
static void test_cast_type(void)
{
	struct source_rewrite rw;
	const char *line = "\tfloat4 v = reinterpret_cast<const float4 *>(x)[i];";

	source_rewrite_find(&rw, line, strlen(line), 0, "x", "const float *__restrict__");
	CHECK_INT(rw.status, SOURCE_REWRITE_OK);
	CHECK_STR(rw.elem_type, "float4");
	CHECK_INT(rw.keeps_close, 0);
	source_rewrite_release(&rw);
	line = "\tout[i] = __ldg(&x[i]);";
	source_rewrite_find(&rw, line, strlen(line), 0, "x", "const float *__restrict__");
	CHECK_INT(rw.status, SOURCE_REWRITE_OK);
	CHECK_STR(rw.elem_type, "float");
	CHECK_INT(rw.keeps_close, 1);
	source_rewrite_release(&rw);
	line = "\tv = p[i].offset;";
	source_rewrite_find(&rw, line, strlen(line), 0, "p", "const box_str *");
	CHECK_INT(rw.status, SOURCE_REWRITE_OK);
	CHECK(rw.elem_type == NULL);
	CHECK_STR(rw.member, "offset");
	source_rewrite_release(&rw);
	line = "\tv = p[i].a.b;";
	source_rewrite_find(&rw, line, strlen(line), 0, "p", "const box_str *");
	CHECK(rw.member == NULL);   /* two members: the struct's own member is another struct */
	source_rewrite_release(&rw);
}

static void test_matcher(void)
{
	EXPECT_REWRITE("\tfloat s = a[i];", "a", "ca_ldg_na", "\tfloat s = ca_ldg_na(&a[i]);");
	EXPECT_REWRITE("\tfloat x = p[i].x;", "p", "h", "\tfloat x = h(&p[i].x);");
	EXPECT_REWRITE("\tfloat w = p->w;", "p", "h", "\tfloat w = h(&p->w);");
	EXPECT_REWRITE("\tout[i] = x * w + 2.0f * *(q + i + k);", "q", "h",
		       "\tout[i] = x * w + 2.0f * h(q + i + k);");
	EXPECT_REWRITE("v = *q;", "q", "h", "v = h(q);");
	EXPECT_REWRITE("v = *(q);", "q", "h", "v = h(q);");
	EXPECT_REWRITE("return a[i];", "a", "h", "return h(&a[i]);");
	EXPECT_REWRITE("v = s.a[i];", "s", "h", "v = h(&s.a[i]);");
	EXPECT_REWRITE("v = x * a[i] & m;", "a", "h", "v = x * h(&a[i]) & m;");
	EXPECT_REWRITE("v = t[a[i]];", "a", "h", "v = t[h(&a[i])];");
	/* The write is not a read; the other x[i] is. */
	EXPECT_REWRITE("\t\tx[i] = alpha * y[i] + x[i];", "x", "ca_ld_na",
		       "\t\tx[i] = alpha * y[i] + ca_ld_na(&x[i]);");
	EXPECT_REWRITE("if (a[i] == 0) n++;", "a", "h", "if (h(&a[i]) == 0) n++;");
	EXPECT_REWRITE("v = a[i]; // a[j] in a comment, \"a[k]\"", "a", "h",
		       "v = h(&a[i]); // a[j] in a comment, \"a[k]\"");
	/* a load intrinsic becomes the helper; its argument and ")" stay */
	EXPECT_REWRITE("\tout[i] = __ldg(&x[i]) * 2.0f;", "x", "ca_ldg_na",
		       "\tout[i] = ca_ldg_na(&x[i]) * 2.0f;");
	EXPECT_REWRITE("v = __ldg(x + i + 1);", "x", "h", "v = h(x + i + 1);");
	EXPECT_REWRITE("v = __ldcs(&p[i].w);", "p", "h", "v = h(&p[i].w);");
	EXPECT_REWRITE("v = __ldg(&t[__ldg(&a[i])]);", "a", "h", "v = __ldg(&t[h(&a[i])]);");
	/* a vector read of a scalar array through a cast */
	EXPECT_REWRITE("\tfloat4 v = reinterpret_cast<const float4 *>(x)[i];", "x", "h",
		       "\tfloat4 v = h(&reinterpret_cast<const float4 *>(x)[i]);");

	EXPECT_STATUS("\ts += a[i + k] * a[i + 2 * k];", "a", SOURCE_REWRITE_AMBIGUOUS);
	EXPECT_STATUS("\ts += row[1];", "a", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("\tconst float *row = a + (size_t)i * k;", "a", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("a[i] = 0;", "a", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("foo(&a[i], a);", "a", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("v = sizeof(a[0]);", "a", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("v = b.a[i];", "a", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("// v = a[i];", "a", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("v = __ldg(&x[i]) + __ldg(&x[i + 1]);", "x", SOURCE_REWRITE_AMBIGUOUS);
	EXPECT_STATUS("v = __ldg(&x[i] + 1);", "x", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("reinterpret_cast<float4 *>(x)[i] = v;", "x", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("v = reinterpret_cast<const float4 *>(x)[i].y;", "x", SOURCE_REWRITE_NOT_FOUND);
	EXPECT_STATUS("x[i] += 1;", "x", SOURCE_REWRITE_UNSUPPORTED);
	EXPECT_STATUS("x[i]++;", "x", SOURCE_REWRITE_UNSUPPORTED);
	EXPECT_STATUS("++x[i];", "x", SOURCE_REWRITE_UNSUPPORTED);
	EXPECT_STATUS("v = *q++;", "q", SOURCE_REWRITE_UNSUPPORTED);
	EXPECT_STATUS("v = *(k + q);", "q", SOURCE_REWRITE_UNSUPPORTED);
	EXPECT_STATUS("v = a[i][j];", "a", SOURCE_REWRITE_UNSUPPORTED);
	EXPECT_STATUS("v = p->f(1);", "p", SOURCE_REWRITE_UNSUPPORTED);
	EXPECT_STATUS("v = a[i +", "a", SOURCE_REWRITE_UNSUPPORTED);
	/* A read and an unwrappable read on one line: two reads. */
	EXPECT_STATUS("v = a[i]; a[j] += 2;", "a", SOURCE_REWRITE_AMBIGUOUS);

	/* The line starts inside a block comment. */
	{
		struct source_rewrite rw;
		const char *l = "still comment a[0] */ v = a[i];";

		source_rewrite_find(&rw, l, strlen(l), 1, "a", NULL);
		CHECK_INT(rw.status, SOURCE_REWRITE_OK);
		CHECK_INT(rw.begin, strlen("still comment a[0] */ v = "));
		source_rewrite_release(&rw);
	}
}

static void test_nested_apply(void)
{
	const char *line = "\ts += b[idx[i]];";
	struct source_rewrite rb, ri;
	const struct source_rewrite *rws[2] = { &rb, &ri };
	const char *helpers[2] = { "ca_ldg_na", "ca_ldg_na" };
	char *out;

	source_rewrite_find(&rb, line, strlen(line), 0, "b", "const float *__restrict__");
	source_rewrite_find(&ri, line, strlen(line), 0, "idx", "const int *__restrict__");
	CHECK_INT(rb.status, SOURCE_REWRITE_OK);
	CHECK_INT(ri.status, SOURCE_REWRITE_OK);
	CHECK_STR(rb.elem_type, "float");
	CHECK_STR(ri.elem_type, "int");
	out = source_rewrite_apply(line, strlen(line), rws, helpers, 2);
	CHECK_STR(out, "\ts += ca_ldg_na(&b[ca_ldg_na(&idx[i])]);");
	free(out);
	/* The same rewrite twice touches one place twice: refused. */
	rws[1] = &rb;
	CHECK(source_rewrite_apply(line, strlen(line), rws, helpers, 2) == NULL);
	source_rewrite_release(&rb);
	source_rewrite_release(&ri);
}

static void test_types(void)
{
	struct source_ld_type t;
	char *s;

	s = source_pointee_type("const float *__restrict__");
	CHECK_STR(s, "float");
	free(s);
	s = source_pointee_type("unsigned *");
	CHECK_STR(s, "unsigned int");
	free(s);
	s = source_pointee_type("const float []");
	CHECK_STR(s, "float");
	free(s);
	s = source_pointee_type("unsigned long int *");
	CHECK_STR(s, "unsigned long");
	free(s);
	s = source_pointee_type("const struct particle *");
	CHECK_STR(s, "particle");
	free(s);
	CHECK(source_pointee_type("float **") == NULL);
	CHECK(source_pointee_type("float") == NULL);
	CHECK(source_pointee_type("float *const *") == NULL);

	CHECK_INT(source_ld_type_parse("ld.global.nc.v4.f32", &t), 0);
	CHECK_INT(t.vector, 4);
	CHECK_INT(t.bits, 32);
	CHECK_INT(t.kind, 'f');
	CHECK_INT(source_type_matches("float4", &t), 1);
	CHECK_INT(source_type_matches("float", &t), 0);
	CHECK_INT(source_type_matches("particle", &t), -1);
	CHECK_INT(source_ld_type_parse("ld.global.u32", &t), 0);
	CHECK_INT(source_type_matches("float", &t), 1);     /* a bit copy */
	CHECK_INT(source_type_matches("unsigned int", &t), 1);
	CHECK_INT(source_type_matches("double", &t), 0);
	CHECK_INT(source_ld_type_parse("ld.global.f32", &t), 0);
	CHECK_INT(source_type_matches("int", &t), 0);
	CHECK_INT(source_ld_type_parse("ld.global.u8", &t), 0);
	CHECK_INT(source_ld_type_supported(&t), 1);       /* through a 16-bit register */
	CHECK_INT(source_type_matches("char", &t), 1);
	CHECK_INT(source_type_matches("uint8_t", &t), 1);
	CHECK_INT(source_type_matches("int", &t), 0);
	CHECK_INT(source_ld_type_parse("ld.global.v2.u8", &t), 0);
	CHECK_INT(source_ld_type_supported(&t), 0);       /* char2: no helper */
	CHECK_INT(source_ld_type_parse("ld.global", &t), -1);
	/* a capture's instruction ending in '.' (the fuzzer's find): no type,
	 * and nothing read past its end (ASan) */
	{
		char *dot = xstrdup("ld.global.");

		CHECK_INT(source_ld_type_parse(dot, &t), -1);
		free(dot);
	}
}

static void test_helpers(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct source_helper_need ldg_float = { "ca_ldg_na", "float", { 1, 32, 'f' } };
	struct source_helper_need na_float = { "ca_ld_na", "float", { 1, 32, 'f' } };
	struct source_helper_need member_u32 = { "ca_ld_el_ro", NULL, { 1, 32, 'i' } };
	struct source_helper_need member_f32 = { "ca_ld_el_ro", NULL, { 1, 32, 'f' } };
	const char *p;

	CHECK_STR(source_helper_name(LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, 1, 1), "ca_ldg_na");
	CHECK_STR(source_helper_name(LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, 0, 1), "ca_ld_na_ro");
	CHECK_STR(source_helper_name(LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, 0, 0), "ca_ld_na");
	CHECK_STR(source_helper_name(LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE, 0, -1), "ca_ld_na");
	CHECK_STR(source_helper_name(LOAD_ACTION_EVICT_LAST, L2_PRIORITY_NONE, 0, 0), "ca_ld_el");
	CHECK_STR(source_helper_name(LOAD_ACTION_EVICT_FIRST, L2_PRIORITY_NONE, 1, 0), "ca_ldg_ef");
	CHECK(source_helper_name(LOAD_ACTION_DEFAULT, L2_PRIORITY_NONE, 0, 0) == NULL);
	CHECK(source_helper_name(LOAD_ACTION_BYPASS, L2_PRIORITY_NONE, 0, 0) == NULL);
	CHECK(source_helper_name(LOAD_ACTION_CACHE, L2_PRIORITY_NONE, 0, 0) == NULL);
	/* with an L2 priority: the plain load (default, or the L1 form as built) too */
	CHECK_STR(source_helper_name(LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST, 0, 0), "ca_ld_l2el");
	CHECK_STR(source_helper_name(LOAD_ACTION_DEFAULT, L2_PRIORITY_EVICT_FIRST, 0, 1),
		  "ca_ld_l2ef_ro");
	CHECK_STR(source_helper_name(LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST, 1, 1), "ca_ldg_l2el");
	CHECK_STR(source_helper_name(LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_EVICT_FIRST, 0, -1),
		  "ca_ld_na_l2ef");
	CHECK_STR(source_helper_name(LOAD_ACTION_EVICT_FIRST, L2_PRIORITY_EVICT_NORMAL, 1, 0),
		  "ca_ldg_ef_l2en");
	CHECK_STR(source_helper_name(LOAD_ACTION_EVICT_LAST, L2_PRIORITY_EVICT_UNCHANGED, 0, 1),
		  "ca_ld_el_l2eu_ro");
	CHECK(source_helper_name(LOAD_ACTION_BYPASS, L2_PRIORITY_EVICT_LAST, 0, 0) == NULL);
	CHECK(source_helper_name(LOAD_ACTION_AS_BUILT, L2_PRIORITY_NONE, 0, 0) == NULL);
	/* the codes in helper names: one table for the helpers and their copies */
	CHECK_STR(source_form_code(LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE), "na");
	CHECK_STR(source_form_code(LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST), "l2el");
	CHECK_STR(source_form_code(LOAD_ACTION_EVICT_FIRST, L2_PRIORITY_EVICT_UNCHANGED), "ef_l2eu");
	CHECK(source_form_code(LOAD_ACTION_DEFAULT, L2_PRIORITY_NONE) == NULL);
	CHECK(source_form_code(LOAD_ACTION_BYPASS, L2_PRIORITY_EVICT_LAST) == NULL);
	{
		struct source_helper_need l2 = { "ca_ld_na_l2el_ro", "float", { 1, 32, 'f' } };

		CHECK_INT(source_helpers_write(&sb, &l2, 1, NULL), 1);
		CHECK(strstr(sb.buf, "#ifndef CACHEADVISE_LD_NA_L2EL_RO_F32\n") != NULL);
		CHECK(strstr(sb.buf, "__device__ __forceinline__ float ca_ld_na_l2el_ro(const float *p) "
				     "{ float v; unsigned long long pol; asm(\"createpolicy.fractional."
				     "L2::evict_last.b64 %0, 1.0;\" : \"=l\"(pol)); asm(\"ld.global."
				     "L1::no_allocate.L2::cache_hint.f32 %0, [%1], %2;\" : \"=f\"(v) : "
				     "\"l\"(p), \"l\"(pol)); return v; }") != NULL);
		strbuf_reset(&sb);
	}

	CHECK_INT(source_helpers_write(&sb, &ldg_float, 1, NULL), 1);
	CHECK(strstr(sb.buf, "#ifndef CACHEADVISE_LDG_NA_F32\n#define CACHEADVISE_LDG_NA_F32\n") != NULL);
	CHECK(strstr(sb.buf, "__device__ __forceinline__ float ca_ldg_na(const float *p) "
			     "{ float v; asm(\"ld.global.nc.L1::no_allocate.f32 %0, [%1];\" : "
			     "\"=f\"(v) : \"l\"(p)); return v; }") != NULL);
	CHECK(strstr(sb.buf, "int ca_ldg_na") == NULL);     /* only the group needed */
	CHECK(strstr(sb.buf, "volatile") == NULL);
	CHECK(strstr(sb.buf, "memory") == NULL);    /* read-only data needs no clobber */
	strbuf_reset(&sb);
	CHECK_INT(source_helpers_write(&sb, &na_float, 1, NULL), 1);
	p = strstr(sb.buf, "ca_ld_na(const float *p)");
	CHECK(p && strstr(p, ": \"memory\"); return v; }"));
	/* An unknown element type gets every group the PTX type can be. */
	strbuf_reset(&sb);
	CHECK_INT(source_helpers_write(&sb, &member_u32, 1, NULL), 2);
	CHECK(strstr(sb.buf, "float ca_ld_el_ro(const float *p)") != NULL);
	CHECK(strstr(sb.buf, "unsigned int ca_ld_el_ro(const unsigned int *p)") != NULL);
	CHECK(strstr(sb.buf, "ld.global.L1::evict_last.s32") != NULL);
	CHECK(strstr(sb.buf, "double") == NULL);
	strbuf_reset(&sb);
	CHECK_INT(source_helpers_write(&sb, &member_f32, 1, NULL), 1);
	CHECK(strstr(sb.buf, "int ca_ld_el_ro") == NULL);
	/* A file that already has a group gets no second copy; F32X2 is not F32. */
	strbuf_reset(&sb);
	CHECK_INT(source_helpers_write(&sb, &ldg_float, 1, "x\n#define CACHEADVISE_LDG_NA_F32\n"), 0);
	CHECK_INT(sb.len, 0);
	CHECK_INT(source_helpers_write(&sb, &ldg_float, 1, "#define CACHEADVISE_LDG_NA_F32X2\n"), 1);
	strbuf_release(&sb);
}

/*
 * Every helper, compiled by nvcc and assembled by ptxas: each family's
 * instruction appears in the PTX with the qualifiers it promises.
 */
static void test_helpers_compile(void)
{
	static const char *const all[] = { "ca_ld_na", "ca_ld_na_ro", "ca_ldg_na", "ca_ld_el",
					   "ca_ld_el_ro", "ca_ldg_el", "ca_ld_ef", "ca_ld_ef_ro",
					   "ca_ldg_ef", "ca_ld_l2el", "ca_ld_l2ef_ro", "ca_ldg_l2el",
					   "ca_ld_na_l2ef", "ca_ldg_ef_l2en", "ca_ld_el_l2eu_ro" };
	static const char *const types[] = { "char", "signed char", "unsigned char", "bool", "__half",
					     "__nv_bfloat16", "short",
					     "unsigned short", "float", "double", "int", "unsigned int", "long",
					     "unsigned long", "long long", "unsigned long long",
					     "float2", "float4", "double2", "int2", "int4", "uint2",
					     "uint4", "longlong2", "ulonglong2" };
	static const char *const want[] = {
		"ld.global.L1::no_allocate.f32", "ld.global.nc.L1::no_allocate.v4.f32",
		"ld.global.L1::evict_last.s64", "ld.global.nc.L1::evict_last.v2.f64",
		"ld.global.L1::evict_first.v4.u32", "ld.global.nc.L1::evict_first.v2.u64",
		"ld.global.L1::no_allocate.s8", "ld.global.nc.L1::evict_last.u8",
		"ld.global.L1::evict_first.s16", "ld.global.L1::no_allocate.b16",
		"ld.global.nc.L1::evict_first.L2::cache_hint.b16",
		"ld.global.L2::cache_hint.f32", "ld.global.nc.L2::cache_hint.v4.f32",
		"ld.global.L1::no_allocate.L2::cache_hint.v2.f64",
		"ld.global.nc.L1::evict_first.L2::cache_hint.u8",
		"ld.global.L1::evict_last.L2::cache_hint.v2.u64",
		"createpolicy.fractional.L2::evict_last.b64", "createpolicy.fractional.L2::evict_first.b64",
		"createpolicy.fractional.L2::evict_normal.b64",
		"createpolicy.fractional.L2::evict_unchanged.b64",
	};
	/* CA_CUDA_BIN: another CUDA's bin/ (default /usr/local/cuda/bin, as in CI) */
	const char *bin = getenv("CA_CUDA_BIN") ? getenv("CA_CUDA_BIN") : "/usr/local/cuda/bin";
	char nvcc[4096], ptxas[4096];
	char dir[] = "/tmp/test_emit_nvcc_XXXXXX";
	struct source_helper_need needs[ARRAY_SIZE(all) * ARRAY_SIZE(types)];
	struct strbuf src = STRBUF_INIT, ptx = STRBUF_INIT;
	char *cmd, *path;
	size_t f, t, n = 0;
	FILE *fp;

	snprintf(nvcc, sizeof(nvcc), "%s/nvcc", bin);
	snprintf(ptxas, sizeof(ptxas), "%s/ptxas", bin);
	/* The toolkit is a build requirement (CI and the dev machines have it):
	 * a missing nvcc is a failure, not a silent pass. */
	if (access(nvcc, X_OK) || access(ptxas, X_OK)) {
		fprintf(stderr, "no nvcc/ptxas in %s: cannot compile the helpers "
			"(set CA_CUDA_BIN to the CUDA toolkit's bin/)\n", bin);
		CHECK(!"nvcc and ptxas are executable");
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	for (f = 0; f < ARRAY_SIZE(all); f++)
		for (t = 0; t < ARRAY_SIZE(types); t++)
			needs[n++] = (struct source_helper_need){ all[f], types[t], { 1, 32, 'i' } };
	strbuf_addstr(&src, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n");
	/* guard groups: the 12 of the scalar and vector types, and __half's and
	 * __nv_bfloat16's own (written only where the source names them) */
	CHECK_INT(source_helpers_write(&src, needs, n, NULL), ARRAY_SIZE(all) * 14);
	strbuf_addstr(&src, "__global__ void k(const char *in, char *out)\n{\n"
			    "\tunsigned i = threadIdx.x;\n");
	for (f = 0; f < ARRAY_SIZE(all); f++)
		for (t = 0; t < ARRAY_SIZE(types); t++)
			strbuf_addf(&src, "\t{ %s v = %s((const %s *)in + i); "
				    "*(%s *)(out + %zu) = v; }\n", types[t], all[f], types[t],
				    types[t], (f * ARRAY_SIZE(types) + t) * 64);
	strbuf_addstr(&src, "}\n");
	path = xasprintf("%s/all.cu", dir);
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	if (fp) {
		fwrite(src.buf, 1, src.len, fp);
		fclose(fp);
	}
	cmd = xasprintf("cd %s && %s -ptx -arch=sm_90 all.cu -o all.ptx 2> nvcc.log && "
			"%s -arch=sm_90 all.ptx -o all.cubin 2> ptxas.log", dir, nvcc, ptxas);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	free(path);
	path = xasprintf("%s/all.ptx", dir);
	CHECK_INT(strbuf_read_file(&ptx, path, 0), 0);
	for (f = 0; f < ARRAY_SIZE(want); f++) {
		if (!strstr(ptx.buf, want[f]))
			fprintf(stderr, "missing in PTX: %s\n", want[f]);
		CHECK(strstr(ptx.buf, want[f]) != NULL);
	}
	/* Every family, every type: one load each, none combined away. */
	{
		size_t nl = 0;
		const char *p = ptx.buf;
		while ((p = strstr(p, "\tld.global."))) {
			nl++;
			p++;
		}
		CHECK_INT(nl, ARRAY_SIZE(all) * ARRAY_SIZE(types));
	}
	free(path);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	strbuf_release(&src);
	strbuf_release(&ptx);
}

/* Inlined helpers: the function around a line, and the calls of a helper. */
static void test_function_at(void)
{
	struct source_file *sf = file_from(
		"#include <cuda.h>\n"                                          /* 1 */
		"template <typename T>\n"                                      /* 2 */
		"static __device__ __forceinline__ T ld(const T *p, int k)\n"  /* 3 */
		"{\n"                                                          /* 4 */
		"\tif (k) {\n"                                                /* 5 */
		"\t\treturn p[k];\n"                                         /* 6 */
		"\t}\n"                                                       /* 7 */
		"\treturn *p;\n"                                              /* 8 */
		"}\n"                                                          /* 9 */
		"__global__ void k(const float *a, float *o)\n"                /* 10 */
		"{\n"                                                          /* 11 */
		"\to[0] = ld(a, 0) + ld<float>(a + 1, 1);\n"                  /* 12 */
		"\tfor (int i = 0; i < 4; i++) o[i] = s.ld(a);\n"             /* 13 */
		"\to[1] = ld(a, 2);\n"                                        /* 14 */
		"}\n");
	struct source_kernel k;
	size_t *lines = NULL, n;
	char *name = NULL;

	if (!sf)
		return;
	CHECK_INT(source_file_function_at(sf, 6, &k, &name), 1);
	CHECK_STR(name, "ld");
	CHECK_INT(k.start_line, 2);     /* the template header */
	CHECK_INT(k.decl_line, 3);
	CHECK_INT(k.body_first_line, 4);
	CHECK_INT(k.body_last_line, 9);
	CHECK_INT(k.nr_params, 2);
	if (k.nr_params == 2) {
		CHECK_STR(k.params[0], "p");
		CHECK_STR(k.param_types[0], "const T *");
	}
	/* a helper template's T: its loads get the overloads of the PTX's type */
	CHECK_INT(k.nr_template_params, 1);
	if (k.nr_template_params == 1) {
		CHECK_STR(k.template_params[0], "T");
		CHECK_INT(k.template_param_is_type[0], 1);
	}
	source_kernel_release(&k);
	free(name);
	CHECK_INT(source_file_function_at(sf, 13, &k, &name), 1);
	CHECK_STR(name, "k");
	source_kernel_release(&k);
	free(name);
	CHECK_INT(source_file_function_at(sf, 1, &k, &name), 0);
	CHECK(name == NULL);
	/* Calls, not the definition nor a member function s.ld(). */
	n = source_file_call_lines(sf, "ld", &lines);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_INT(lines[0], 12);
		CHECK_INT(lines[1], 12);
		CHECK_INT(lines[2], 14);
	}
	free(lines);
	source_file_free(sf);
}

/* A load read through a function-like macro: its #define, the use wrapped. */
static void test_macro(void)
{
	struct source_file *sf = file_from(
		"#define LOAD_ROW(m, cols, r, c) ((m)[(size_t)(r) * (cols) + (c)])\n"  /* 1 */
		"#  define AT(p, i)  p[i]\n"                                            /* 2 */
		"#define SUM(p, i) ((p)[i] + (p)[i + 1])\n"                              /* 3 */
		"#define LONG(p, i) \\\n"                                               /* 4 */
		"\t((p)[i])\n");                                                        /* 5 */
	const struct source_file *files[1] = { sf };
	struct source_macro m;
	struct source_rewrite rw;
	const struct source_rewrite *rws[1] = { &rw };
	const char *helpers[1] = { "ca_ld_l2ef" };
	const char *line = "\tfloat v = LOAD_ROW(rows, n, c, r) * 2.0f;", *other;
	char *why = NULL, *out;

	if (!sf)
		return;
	CHECK_INT(source_macro_find(sf, "LOAD_ROW", &m), 1);
	CHECK_INT(m.line, 1);
	CHECK_INT(m.nr_params, 4);
	CHECK_INT(source_macro_indexed_param(&m), 0);
	source_macro_release(&m);
	CHECK_INT(source_macro_find(sf, "AT", &m), 1);
	CHECK_INT(source_macro_indexed_param(&m), 0);
	source_macro_release(&m);
	CHECK_INT(source_macro_find(sf, "SUM", &m), 1);
	CHECK_INT(source_macro_indexed_param(&m), -1);   /* two reads */
	source_macro_release(&m);
	CHECK_INT(source_macro_find(sf, "LOAD", &m), 0);

	memset(&rw, 0, sizeof(rw));
	CHECK_INT(source_macro_read(files, 1, line, strlen(line), 0, "rows", "const float *", &rw,
				    &why), 1);
	CHECK_STR(rw.elem_type, "float");
	out = source_rewrite_apply(line, strlen(line), rws, helpers, 1);
	CHECK_STR(out, "\tfloat v = ca_ld_l2ef(&LOAD_ROW(rows, n, c, r)) * 2.0f;");
	free(out);
	source_rewrite_release(&rw);
	/* the parameter passed as another argument than the one read: not this load */
	memset(&rw, 0, sizeof(rw));
	CHECK_INT(source_macro_read(files, 1, line, strlen(line), 0, "n", NULL, &rw, &why), -1);
	CHECK(why && strstr(why, "not one indexed read"));
	free(why);
	other = "\ts += SUM(x, i) + LONG(x, j);";
	CHECK_INT(source_macro_read(files, 1, other, strlen(other), 0, "x", NULL, &rw, &why), -1);
	free(why);
	other = "\ts += LONG(x, j);";
	CHECK_INT(source_macro_read(files, 1, other, strlen(other), 0, "x", NULL, &rw, &why), -1);
	CHECK(why && strstr(why, "on one line"));
	free(why);
	other = "\ts += g(x, j);";
	CHECK_INT(source_macro_read(files, 1, other, strlen(other), 0, "x", NULL, &rw, &why), 0);
	source_file_free(sf);
}

/* A member's declared type, from the struct's definition. */
static void test_member_type(void)
{
	static const char src[] =
		"#define fp double\n"
		"typedef unsigned long long u64_t;\n"
		"struct particle { float x, y, z; int *next; char tag[8]; unsigned flags : 3; };\n"
		"typedef struct box_str {\n"
		"\tint x, y, z;\n"
		"\tlong offset; // the first particle\n"
		"\tstruct { int a; } inner;\n"
		"\tfp weight;\n"
		"\tu64_t key;\n"
		"} box_str;\n"
		"typedef struct { unsigned short lo; const bool on = true; } anon_t;\n"
		"class node {\n"
		"public:\n"
		"\t__device__ int degree() const { return n; }\n"
		"\tint n;\n"
		"private:\n"
		"\tdouble w;\n"
		"};\n";
	static const struct { const char *s, *m, *want; int defined; } cases[] = {
		{ "particle", "y", "float", 1 },
		{ "particle", "next", "int *", 1 },
		{ "particle", "tag", "char []", 1 },
		{ "particle", "flags", "unsigned int", 1 },
		{ "box_str", "offset", "long", 1 },
		{ "box_str", "z", "int", 1 },
		{ "box_str", "weight", "fp", 1 },
		{ "box_str", "key", "u64_t", 1 },
		{ "box_str", "a", NULL, 1 },        /* the nested struct's, not box_str's */
		{ "anon_t", "lo", "unsigned short", 1 },
		{ "anon_t", "on", "bool", 1 },
		{ "node", "n", "int", 1 },
		{ "node", "w", "double", 1 },
		{ "node", "degree", NULL, 1 },
		{ "particle", "missing", NULL, 1 },
		{ "nowhere", "x", NULL, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int defined = -1;
		char *got = source_member_type(src, sizeof(src) - 1, cases[i].s, cases[i].m, &defined);

		if (cases[i].want)
			CHECK_STR(got, cases[i].want);
		else
			CHECK(got == NULL);
		CHECK_INT(defined, cases[i].defined);
		free(got);
	}
	{
		char *a = source_type_alias(src, sizeof(src) - 1, "fp");
		char *b = source_type_alias(src, sizeof(src) - 1, "u64_t");
		char *c = source_type_alias(src, sizeof(src) - 1, "box_str");

		CHECK_STR(a, "double");
		CHECK_STR(b, "unsigned long long");
		CHECK(c == NULL);   /* a struct, not a type a helper reads */
		free(a);
		free(b);
		free(c);
	}
}

/* A kernel instantiation's template arguments, and a template's parameters. */
static void test_templates(void)
{
	size_t nr;
	char **a = source_template_args("_ZN3ops4axpyIfEEviT_PKS1_PS1_", NULL, &nr);
	struct source_file *sf;
	struct source_kernel k;

	CHECK_INT(nr, 1);
	if (nr == 1)
		CHECK_STR(a[0], "float");
	source_template_args_free(a, nr);
	a = source_template_args("_Z4tileIdLi256E6__halfEvPKT_", NULL, &nr);
	CHECK_INT(nr, 3);
	if (nr == 3) {
		CHECK_STR(a[0], "double");
		CHECK(a[1] == NULL);        /* a value */
		CHECK_STR(a[2], "__half");
	}
	source_template_args_free(a, nr);
	a = source_template_args("_Z5scaleifPKfPf", NULL, &nr);
	CHECK(a == NULL);
	CHECK_INT(nr, 0);
	a = source_template_args("x", "void ns::axpy<unsigned int, 256>(int, unsigned int const*)",
				 &nr);
	CHECK_INT(nr, 2);
	if (nr == 2) {
		CHECK_STR(a[0], "unsigned int");
		CHECK_STR(a[1], "256");
	}
	source_template_args_free(a, nr);

	sf = file_from("template <typename T, int BLOCK = 256, class Op = plus<T>>\n"
		       "__global__ void red(const T *x, T *out) { out[0] = x[0]; }\n");
	CHECK_INT(source_file_find_kernel(sf, "red", &k), 1);
	CHECK_INT(k.nr_template_params, 3);
	if (k.nr_template_params == 3) {
		CHECK_STR(k.template_params[0], "T");
		CHECK_INT(k.template_param_is_type[0], 1);
		CHECK_STR(k.template_params[1], "BLOCK");
		CHECK_INT(k.template_param_is_type[1], 0);
		CHECK_STR(k.template_params[2], "Op");
		CHECK_INT(k.template_param_is_type[2], 1);
	}
	source_kernel_release(&k);
	source_file_free(sf);
}

/* Local pointers into a parameter, and the ones that are not only that. */
static void test_aliases(void)
{
	struct source_file *sf = file_from(
		"__global__ void k(const float *a, const float *b, float *out, int n, int k)\n"  /* 1 */
		"{\n"                                                                 /* 2 */
		"\tconst float *row = a + (size_t)n * k;\n"                          /* 3 */
		"\tconst float *either = n ? a : b;\n"                               /* 4 */
		"\tfloat4 *q;\n"                                                     /* 5 */
		"\tconst float *p = a, *r = b;\n"                                    /* 6 */
		"\tq = (float4 *)&a[n];\n"                                           /* 7 */
		"\tconst float *moved = a;\n"                                        /* 8 */
		"\tmoved = out;\n"                                                   /* 9 */
		"\tout[0] = row[1] + p[2] + q->x + moved[0] + r[0] + either[0];\n"   /* 10 */
		"}\n");
	const char *const ptrs[] = { "a", "b", "out" };
	char **names, **types;
	size_t n = source_pointer_aliases(sf, 2, 11, "a", ptrs, 3, &names, &types), i;
	int row = 0, p = 0, q = 0;

	/* row, p and q point into a alone; either also into b, moved also into out */
	CHECK_INT(n, 3);
	for (i = 0; i < n; i++) {
		if (!strcmp(names[i], "row")) {
			row = 1;
			CHECK_STR(types[i], "const float *");
		}
		p |= !strcmp(names[i], "p");
		if (!strcmp(names[i], "q")) {
			q = 1;
			CHECK_STR(types[i], "float4 *");
		}
	}
	CHECK(row && p && q);
	source_aliases_free(names, types, n);
	n = source_pointer_aliases(sf, 2, 11, "b", ptrs, 3, &names, &types);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(names[0], "r");
	source_aliases_free(names, types, n);
	source_file_free(sf);
}

int main(void)
{
	test_aliases();
	test_templates();
	test_cast_type();
	test_member_type();
	test_function_at();
	test_macro();
	test_base_names();
	test_find_kernel();
	test_find_kernel_forms();
	test_matcher();
	test_nested_apply();
	test_types();
	test_helpers();
	test_helpers_compile();
	return check_done();
}
