/*
 * The switchable module (analysis/ptx_switch.c): each switched load is
 * present in both forms under complementary predicates derived from its
 * mask bit (and its own guard), the mask symbol is declared once per
 * kernel, nothing else changes, every error leaves the output untouched,
 * and ptxas -arch=sm_90 accepts the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/ptx.h"
#include "analysis/ptx_switch.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

static const char module_text[] =
	".version 8.3\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	"\t// .globl k\n"
	".visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)\n"
	"{\n"
	"\t.reg .b64 %rd<9>;\n"
	"\t.reg .f32 %f<20>;\n"
	"\t.reg .pred %p<2>;\n"
	"\tld.param.u64 %rd1, [k_param_0];\n"
	"\tld.param.u64 %rd4, [k_param_1];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tcvta.to.global.u64 %rd5, %rd4;\n"
	"\tsetp.eq.f32 %p1, %f19, 0f00000000;\n"
	"\tld.global.f32 \t%f1, [%rd2];\n"
	"\t@%p1 ld.global.nc.f32 %f2, [%rd2+4];\n"
	"\t@!%p1 ld.global.v4.f32 {%f3, %f4, %f5, %f6}, [%rd2+16];\n"
	"\tld.global.cg.f32 %f7, [%rd2+32];\n"
	"\tadd.f32 %f8, %f1, %f2;\n"
	"\tadd.f32 %f8, %f8, %f3;\n"
	"\tst.global.f32 [%rd5], %f8;\n"
	"\tret;\n"
	"}\n"
	"\t// .globl other\n"
	".visible .entry other(.param .u64 other_param_0)\n"
	"{\n"
	"\t.reg .b64 %rd<4>;\n"
	"\t.reg .f32 %f<3>;\n"
	"\tld.param.u64 %rd1, [other_param_0];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tld.global.f32 %f1, [%rd2];\n"
	"\tst.global.f32 [%rd2+4], %f1;\n"
	"\tret;\n"
	"}\n";

static void test_switch_kernel(void)
{
	struct ptx_module *m = NULL;
	struct strbuf out = STRBUF_INIT;
	const unsigned ordinals[] = { 0, 1, 2 };
	struct ptx_switch_kernel k = { "k", ordinals, NULL, 3 };
	char *sym;
	int ok;

	CHECK_INT(ptx_parse("t.ptx", module_text, strlen(module_text), &m), 0);
	if (!m)
		return;
	CHECK_INT(ptx_write_switchable(m, &k, 1, &out), 0);
	sym = ptx_switch_symbol("k");
	CHECK_STR(sym, "__cacheadvise_mask_k");
	/* declared once, read once, initialised to the original form */
	CHECK(strstr(out.buf, ".visible .const .align 8 .u64 __cacheadvise_mask_k = 0xffffffffffffffff;") != NULL);
	CHECK_INT(check_count(out.buf, "ld.const.u64 %cacheadvise_mask, [__cacheadvise_mask_k];"), 1);
	CHECK_INT(check_count(out.buf, "__cacheadvise_mask_other"), 0);
	/* each switched load: original under p0, no_allocate under p1 */
	CHECK(strstr(out.buf, "\t@%cacheadvise_p0 ld.global.f32 \t%f1, [%rd2];\n") != NULL);
	CHECK(strstr(out.buf, "\t@%cacheadvise_p1 ld.global.L1::no_allocate.f32 \t%f1, [%rd2];") != NULL);
	CHECK(strstr(out.buf, "@%cacheadvise_p1 ld.global.nc.L1::no_allocate.f32 %f2, [%rd2+4];") != NULL);
	CHECK(strstr(out.buf, "@%cacheadvise_p1 ld.global.L1::no_allocate.v4.f32 {%f3, %f4, %f5, %f6}, [%rd2+16];") != NULL);
	/* bits 0, 1, 2 in load order */
	CHECK(strstr(out.buf, "and.b64 %cacheadvise_t, %cacheadvise_mask, 1U;") != NULL);
	CHECK(strstr(out.buf, "and.b64 %cacheadvise_t, %cacheadvise_mask, 2U;") != NULL);
	CHECK(strstr(out.buf, "and.b64 %cacheadvise_t, %cacheadvise_mask, 4U;") != NULL);
	/* guards: kept by conjunction, negated guards negated; no guard left on the loads */
	CHECK(strstr(out.buf, "mov.pred %cacheadvise_p2, %p1;") != NULL);
	CHECK(strstr(out.buf, "not.pred %cacheadvise_p2, %p1;") != NULL);
	CHECK_INT(check_count(out.buf, "@%p1 ld"), 0);
	CHECK_INT(check_count(out.buf, "@!%p1 ld"), 0);
	/* the strong .cg load and the other kernel are untouched */
	CHECK_INT(check_count(out.buf, "ld.global.cg.f32 %f7, [%rd2+32];"), 1);
	CHECK_INT(check_count(out.buf, "\tld.global.f32 %f1, [%rd2];\n\tst.global.f32 [%rd2+4], %f1;"), 1);
	ok = check_ptxas_accepts(out.buf);
	if (ok < 0)
		printf("note: no ptxas in /usr/local/cuda/bin: the module was not assembled\n");
	else
		CHECK(ok == 1);
	free(sym);
	strbuf_release(&out);
	ptx_module_free(m);
}

static void test_switch_errors(void)
{
	struct ptx_module *m = NULL;
	struct strbuf out = STRBUF_INIT;
	const unsigned strong[] = { 3 }, missing[] = { 9 }, twice[] = { 0, 0 }, one[] = { 0 };
	struct ptx_switch_kernel k_strong = { "k", strong, NULL, 1 }, k_missing = { "k", missing, NULL, 1 },
		k_twice = { "k", twice, NULL, 2 }, k_nokernel = { "nope", one, NULL, 1 };
	struct ptx_switch_kernel k_dup[2] = { { "k", one, NULL, 1 }, { "k", one, NULL, 1 } };
	unsigned many[PTX_SWITCH_MAX_LOADS + 1];
	struct ptx_switch_kernel k_many = { "k", many, NULL, PTX_SWITCH_MAX_LOADS + 1 };

	memset(many, 0, sizeof(many));
	CHECK_INT(ptx_parse("t.ptx", module_text, strlen(module_text), &m), 0);
	if (!m)
		return;
	CHECK_INT(ptx_write_switchable(m, &k_strong, 1, &out), CA_E_INPUT);
	CHECK(strstr(error_message(), "load 3") != NULL);
	CHECK_INT(ptx_write_switchable(m, &k_missing, 1, &out), CA_E_INPUT);
	CHECK(strstr(error_message(), "no load 9") != NULL);
	CHECK_INT(ptx_write_switchable(m, &k_twice, 1, &out), CA_E_INPUT);
	CHECK_INT(ptx_write_switchable(m, &k_nokernel, 1, &out), CA_E_INPUT);
	CHECK_INT(ptx_write_switchable(m, k_dup, 2, &out), CA_E_INPUT);
	CHECK_INT(ptx_write_switchable(m, &k_many, 1, &out), CA_E_INPUT);
	CHECK_INT(out.len, 0);
	strbuf_release(&out);
	ptx_module_free(m);
}

/* Several loads on one bit (profile's unmeasured loads share bit 63). */
static void test_shared_bit(void)
{
	struct ptx_module *m = NULL;
	struct strbuf out = STRBUF_INIT;
	const unsigned ordinals[] = { 0, 1, 2 };
	const unsigned char bits[] = { 0, 63, 63 }, bad[] = { 0, 64, 1 };
	struct ptx_switch_kernel k = { "k", ordinals, bits, 3 }, kbad = { "k", ordinals, bad, 3 };

	CHECK_INT(ptx_parse("t.ptx", module_text, strlen(module_text), &m), 0);
	if (!m)
		return;
	CHECK_INT(ptx_write_switchable(m, &kbad, 1, &out), CA_E_INPUT);
	CHECK(strstr(error_message(), "bit 64") != NULL);
	CHECK_INT(out.len, 0);
	CHECK_INT(ptx_write_switchable(m, &k, 1, &out), 0);
	CHECK_INT(check_count(out.buf, "%cacheadvise_mask, 1U;"), 1);
	CHECK_INT(check_count(out.buf, "%cacheadvise_mask, 9223372036854775808U;"), 2);
	CHECK_INT(check_count(out.buf, "%cacheadvise_mask, 2U;"), 0);
	CHECK(check_ptxas_accepts(out.buf) != 0);
	strbuf_release(&out);
	ptx_module_free(m);
}

int main(void)
{
	test_shared_bit();
	test_switch_kernel();
	test_switch_errors();
	return check_done();
}
