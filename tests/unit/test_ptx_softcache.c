/*
 * The automatic software cache (analysis/ptx_softcache.c) on real nvcc PTX
 * (tests/fixtures/softcache/): every load of the cached read-only
 * structures becomes a call of the embedded read functions, the other loads
 * stay, the line storage is sized by structures x 16 x threads, refusals
 * say why and leave the output untouched, and ptxas -arch=sm_90 assembles
 * every rewritten module.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/ptx.h"
#include "analysis/ptx_softcache.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

#define RECORDS "_Z15process_recordsPKcPKiPijm"

static void check_assembles(const char *text)
{
	int ok = check_ptxas_accepts(text);

	if (ok < 0)
		printf("note: no ptxas in /usr/local/cuda/bin: the module was not assembled\n");
	else
		CHECK(ok == 1);
}

static struct ptx_module *load_fixture(const char *rel, struct strbuf *src)
{
	struct ptx_module *m = NULL;

	strbuf_init(src, 0);
	if (strbuf_read_file(src, check_source_path(rel), 0) ||
	    ptx_parse(rel, src->buf, src->len, &m)) {
		fprintf(stderr, "%s: %s\n", rel, error_message());
		CHECK(!"fixture unreadable");
		return NULL;
	}
	return m;
}

/* Loads of fn in the module text t whose parameter is p. */
static size_t loads_of(const char *t, const char *fn, int p)
{
	struct ptx_module *m = NULL;
	const struct ptx_function *f;
	size_t i, n = 0;

	if (ptx_parse("out.ptx", t, strlen(t), &m)) {
		CHECK(!"the rewritten module does not parse");
		return (size_t)-1;
	}
	f = ptx_module_find(m, fn);
	for (i = 0; f && i < f->nr_loads; i++)
		n += f->loads[i].param == p;
	ptx_module_free(m);
	return n;
}

static void test_records(void)
{
	struct strbuf src, out = STRBUF_INIT;
	struct ptx_module *m = load_fixture("tests/fixtures/softcache/records.ptx", &src);
	const int params[] = { 0, 1 };
	struct ptx_softcache_kernel k = { RECORDS, params, 2, 256, 0, 232448 };
	struct ptx_softcache_done done;
	const struct ptx_function *f;
	size_t i, want = 0;
	char *why = NULL;

	if (!m)
		return;
	f = ptx_module_find(m, RECORDS);
	for (i = 0; i < f->nr_loads; i++)
		want += f->loads[i].param == 0 || f->loads[i].param == 1;
	CHECK(want >= 2);
	memset(&done, 0, sizeof(done));
	CHECK_INT(ptx_softcache_rewrite(m, &k, 1, &out, &done, &why), 0);
	if (why)
		fprintf(stderr, "refused: %s\n", why);
	CHECK_INT(done.nr_loads, want);
	CHECK_INT(done.nr_left, 0);
	CHECK_INT(done.nr_params, 2);
	CHECK_INT(done.shared_bytes, 2 * 16 * 256);
	/* two lines per thread of a 256-thread block, slot-major */
	CHECK(strstr(out.buf, ".shared .align 16 .b8 __cacheadvise_sc_lines0[8192];") != NULL);
	CHECK(strstr(out.buf, "add.u32 \t%__cacheadvise_sc_ln1, %__cacheadvise_sc_ln0, 4096;") != NULL);
	CHECK(strstr(out.buf, "setp.gt.u32 \t%__cacheadvise_sc_off, %__cacheadvise_sc_nt, 256;") != NULL);
	/* charInput is read a byte at a time (signed char), intInput a word */
	CHECK(check_count(out.buf, "call (__cacheadvise_sc_rv), __cacheadvise_sc_read1,") > 0);
	CHECK(check_count(out.buf, "call (__cacheadvise_sc_rv), __cacheadvise_sc_read4,") > 0);
	CHECK(check_count(out.buf, "call (__cacheadvise_sc_rv)") == want);
	CHECK(check_count(out.buf, "bfe.s32 \t%__cacheadvise_sc_t32, %__cacheadvise_sc_t32, 0, 8;") > 0);
	/* the functions are appended once, module-internal */
	CHECK_INT(check_count(out.buf, ".func  (.param .b32 func_retval0) __cacheadvise_sc_read1("), 1);
	CHECK_INT(check_count(out.buf, ".visible .func"), 0);
	/* no load of the cached structures is left in the kernel; the store stays */
	CHECK_INT(loads_of(out.buf, RECORDS, 0), 0);
	CHECK_INT(loads_of(out.buf, RECORDS, 1), 0);
	CHECK(check_count(out.buf, "st.global.u32") == check_count(src.buf, "st.global.u32"));
	check_assembles(out.buf);
	ptx_softcache_done_release(&done);
	free(why);
	strbuf_release(&out);
	strbuf_release(&src);
	ptx_module_free(m);
}

static void test_forms(void)
{
	struct strbuf src, out = STRBUF_INIT;
	struct ptx_module *m = load_fixture("tests/fixtures/softcache/forms.ptx", &src);
	const int params[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	const struct ptx_function *f;
	struct ptx_softcache_kernel k;
	struct ptx_softcache_done done;
	size_t i, want = 0;
	char *why = NULL;

	if (!m)
		return;
	f = ptx_module_find(m, "_Z5formsPKaPKhPKsPK6__halfPKfPKdPK6float2PK6float4PK7double2PKiPxi");
	CHECK(f != NULL);
	if (!f)
		goto out;
	for (i = 0; i < f->nr_loads; i++)
		want += f->loads[i].param >= 0 && f->loads[i].param <= 9;
	k = (struct ptx_softcache_kernel){ f->name, params, 10, 256, 0, 232448 };
	memset(&done, 0, sizeof(done));
	CHECK_INT(ptx_softcache_rewrite(m, &k, 1, &out, &done, &why), 0);
	if (done.note)
		fprintf(stderr, "note: %s\n", done.note);
	/* every size and destination form nvcc wrote is handled */
	CHECK_INT(done.nr_loads, want);
	CHECK_INT(done.nr_left, 0);
	CHECK_INT(done.shared_bytes, 10 * 16 * 256);
	for (i = 0; i < 10; i++)
		CHECK_INT(loads_of(out.buf, f->name, (int)i), 0);
	CHECK(check_count(out.buf, "__cacheadvise_sc_read16,") > 0);
	CHECK(check_count(out.buf, "__cacheadvise_sc_read8,") > 0);
	CHECK(check_count(out.buf, "__cacheadvise_sc_read2,") > 0);
	/* s8 and s16 into 64-bit registers: sign-extended; u8: zero-extended */
	CHECK(check_count(out.buf, "cvt.s64.s32 \t%__cacheadvise_sc_t64") > 0);
	CHECK(check_count(out.buf, "cvt.u64.u32 \t%__cacheadvise_sc_t64") > 0);
	CHECK(check_count(out.buf, "mov.b64 \t{%f") > 0);
	check_assembles(out.buf);
	ptx_softcache_done_release(&done);
	free(why);

	/* the written parameter 10 is refused, with the reason */
	{
		const int written[] = { 10 };
		struct strbuf none = STRBUF_INIT;

		k = (struct ptx_softcache_kernel){ f->name, written, 1, 256, 0, 232448 };
		memset(&done, 0, sizeof(done));
		CHECK_INT(ptx_softcache_rewrite(m, &k, 1, &none, &done, &why), 1);
		CHECK(why && strstr(why, "parameter 10 is written by the kernel"));
		CHECK_INT(none.len, 0);
		ptx_softcache_done_release(&done);
		free(why);
		why = NULL;
	}
	/* too little static shared memory left: 48000 bytes of tile + 4096 */
	{
		const int in[] = { 0 };
		struct strbuf none = STRBUF_INIT;

		k = (struct ptx_softcache_kernel){ "_Z10big_sharedPKfPfi", in, 1, 256, 0, 232448 };
		memset(&done, 0, sizeof(done));
		CHECK_INT(ptx_softcache_rewrite(m, &k, 1, &none, &done, &why), 1);
		CHECK(why && strstr(why, "static shared memory"));
		CHECK_INT(none.len, 0);
		ptx_softcache_done_release(&done);
		free(why);
		why = NULL;
		/* dynamic shared memory that leaves too little */
		k = (struct ptx_softcache_kernel){ f->name, params, 1, 256, 230000, 232448 };
		memset(&done, 0, sizeof(done));
		CHECK_INT(ptx_softcache_rewrite(m, &k, 1, &none, &done, &why), 1);
		CHECK(why && strstr(why, "too little free shared memory"));
		ptx_softcache_done_release(&done);
		free(why);
	}
out:
	strbuf_release(&out);
	strbuf_release(&src);
	ptx_module_free(m);
}

static const char guarded_text[] =
	".version 8.3\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)\n"
	"{\n"
	"\t.reg .b64 %rd<9>;\n"
	"\t.reg .f32 %f<20>;\n"
	"\t.reg .b32 %r<4>;\n"
	"\t.reg .pred %p<2>;\n"
	"\tld.param.u64 %rd1, [k_param_0];\n"
	"\tld.param.u64 %rd4, [k_param_1];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tcvta.to.global.u64 %rd5, %rd4;\n"
	"\tmov.f32 %f2, 0f00000000;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n"
	"\t@%p1 ld.global.f32 %f2, [%rd2+4];\n"
	"$L0: @!%p1 ld.global.nc.f32 %f3, [%rd2+-8];\n"
	"\tld.global.volatile.f32 %f4, [%rd2];\n"
	"\tadd.f32 %f8, %f2, %f3;\n"
	"\tst.global.f32 [%rd5], %f8;\n"
	"\tret;\n"
	"}\n";

static void test_guarded(void)
{
	struct ptx_module *m = NULL;
	struct strbuf out = STRBUF_INIT;
	const int params[] = { 0 };
	struct ptx_softcache_kernel k = { "k", params, 1, 128, 0, 0 };
	struct ptx_softcache_done done;
	char *why = NULL;

	CHECK_INT(ptx_parse("g.ptx", guarded_text, strlen(guarded_text), &m), 0);
	if (!m)
		return;
	memset(&done, 0, sizeof(done));
	CHECK_INT(ptx_softcache_rewrite(m, &k, 1, &out, &done, &why), 0);
	CHECK_INT(done.nr_loads, 2);
	/* the volatile load stays as it is, and the note says so */
	CHECK_INT(done.nr_left, 1);
	CHECK(done.note && strstr(done.note, "load 2 left as it is: a strong or volatile load"));
	CHECK(strstr(out.buf, "ld.global.volatile.f32 %f4, [%rd2];") != NULL);
	/* guards become branches around the call, negated ones too */
	CHECK(strstr(out.buf, "\t@!%p1 bra \t$__cacheadvise_sc_skip0;\n") != NULL);
	CHECK(strstr(out.buf, "\t@%p1 bra \t$__cacheadvise_sc_skip1;\n") != NULL);
	CHECK(strstr(out.buf, "add.s64 \t%__cacheadvise_sc_a, %rd2, -8;") != NULL);
	/* a label in front of a load stays in front of its replacement */
	CHECK(strstr(out.buf, "$L0: \n") != NULL);
	check_assembles(out.buf);
	ptx_softcache_done_release(&done);
	free(why);

	/* a rewritten module is not rewritten again */
	{
		struct ptx_module *m2 = NULL;
		struct strbuf again = STRBUF_INIT;

		CHECK_INT(ptx_parse("o.ptx", out.buf, out.len, &m2), 0);
		memset(&done, 0, sizeof(done));
		CHECK_INT(ptx_softcache_rewrite(m2, &k, 1, &again, &done, &why), 1);
		CHECK(why && strstr(why, "rewritten before"));
		CHECK_INT(again.len, 0);
		free(why);
		ptx_softcache_done_release(&done);
		ptx_module_free(m2);
	}
	strbuf_release(&out);
	ptx_module_free(m);
}

int main(void)
{
	if (!ptx_softcache_available()) {
		struct ptx_module *m = NULL;
		struct strbuf out = STRBUF_INIT;
		const int params[] = { 0 };
		struct ptx_softcache_kernel k = { "k", params, 1, 128, 0, 0 };
		struct ptx_softcache_done done;
		char *why = NULL;

		/* without nvcc the rewrite says so and does nothing */
		printf("note: built without nvcc: only the refusal is tested\n");
		CHECK_INT(ptx_parse("g.ptx", guarded_text, strlen(guarded_text), &m), 0);
		memset(&done, 0, sizeof(done));
		CHECK_INT(ptx_softcache_rewrite(m, &k, 1, &out, &done, &why), 1);
		CHECK(why && strstr(why, "not built with nvcc"));
		free(why);
		ptx_module_free(m);
		return check_done();
	}
	test_records();
	test_forms();
	test_guarded();
	return check_done();
}
