#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "analysis/ptx.h"
#include "analysis/stencil_detect.h"
#include "base/strbuf.h"
#include "tests/unit/check.h"

/*
 * The fixture is nvcc's PTX of tests/gpu/device/fixtures/stencil_shapes.cu
 * (the kernels of tests/gpu/device/stencil_kernels.cuh that the GPU test
 * runs): plain k-stencils for k = 1, 2, 4, a run-time-k stencil, a float
 * 3-point difference, and kernels that must not be flagged (rows of 8, a
 * gather, the shared-memory and register-cache versions).
 */

static struct ptx_module *load_fixture(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *m = NULL;
	const char *path = check_source_path("tests/gpu/device/fixtures/stencil_shapes.ptx");

	if (strbuf_read_file(&sb, path, 0) || ptx_parse(path, sb.buf, sb.len, &m)) {
		fprintf(stderr, "cannot load %s: %s\n", path, error_message());
		exit(1);
	}
	strbuf_release(&sb);
	return m;
}

/* The hints of one kernel (by a substring of its mangled name). */
static size_t hints_for(const struct stencil_detect *sd, const char *name,
			const struct stencil_hint **out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < sd->nr_hints; i++)
		if (strstr(sd->hints[i].function, name) && n < max)
			out[n++] = &sd->hints[i];
	return n;
}

static void check_exact(const struct stencil_detect *sd, const char *kernel, unsigned k)
{
	const struct stencil_hint *h[4];
	size_t i, n = hints_for(sd, kernel, h, 4);
	long lo = 1 << 30, hi = -1;

	CHECK_INT(n, 1);
	if (n != 1)
		return;
	CHECK_INT(h[0]->k, k);
	CHECK_INT(h[0]->k_exact, 1);
	CHECK_INT(h[0]->nr_loads, 2 * k + 1);
	CHECK_INT(h[0]->points, 2 * k + 1);
	CHECK_INT(h[0]->span, 2 * k + 1);
	CHECK_INT(h[0]->element_bytes, 4);
	CHECK_INT(h[0]->param, 0);
	CHECK_INT(h[0]->shuffles_per_thread, 2 * k);
	CHECK_INT(h[0]->loads_after, 2);
	for (i = 0; i < h[0]->nr_loads; i++) {
		CHECK_INT(h[0]->ordinals[i], i);
		if (h[0]->offsets[i] < lo)
			lo = h[0]->offsets[i];
		if (h[0]->offsets[i] > hi)
			hi = h[0]->offsets[i];
	}
	CHECK_INT(lo, 0);
	CHECK_INT(hi, 4 * 2 * k);
}

static void test_fixture(void)
{
	struct ptx_module *m = load_fixture();
	struct stencil_detect sd;
	const struct stencil_hint *h[4];
	size_t n, i, j;
	unsigned seen = 0, kmax = 0;
	json_t *js, *o;

	stencil_detect_init(&sd);
	CHECK_INT(stencil_detect_run(&sd, m), 0);

	check_exact(&sd, "stencil_plainILi1E", 1);
	check_exact(&sd, "stencil_plainILi2E", 2);
	check_exact(&sd, "stencil_plainILi4E", 4);

	/* y[i] = x[i-1] - 2x[i] + x[i+1] on floats */
	n = hints_for(&sd, "diff3", h, 4);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_INT(h[0]->k, 1);
		CHECK_INT(h[0]->k_exact, 1);
		CHECK_INT(h[0]->element_bytes, 4);
	}

	/* run-time k: nvcc unrolled by 4 plus a remainder; k is a lower bound */
	n = hints_for(&sd, "stencil_runtime_k", h, 4);
	CHECK(n >= 1);
	for (i = 0; i < n; i++) {
		CHECK_INT(h[i]->k_exact, 0);
		if (h[i]->k > kmax)
			kmax = h[i]->k;
		for (j = 0; j < h[i]->nr_loads; j++)
			if (h[i]->ordinals[j] < 32)
				seen |= 1u << h[i]->ordinals[j];
	}
	CHECK_INT(kmax, 2);
	CHECK_INT(seen, 0x7f);       /* loads 0..6, all of A */

	/* Not stencils. */
	CHECK_INT(hints_for(&sd, "rows_of_8", h, 4), 0);   /* lanes 32 bytes apart */
	CHECK_INT(hints_for(&sd, "gather3", h, 4), 0);     /* index from memory */
	CHECK_INT(hints_for(&sd, "stencil_shared", h, 4), 0);
	CHECK_INT(hints_for(&sd, "stencil_rc", h, 4), 0);

	js = stencil_detect_to_json(&sd);
	CHECK(json_is_array(js));
	CHECK_INT(json_array_size(js), sd.nr_hints);
	o = NULL;
	for (i = 0; i < json_array_size(js); i++)
		if (strstr(json_string_value(json_object_get(json_array_get(js, i), "kernel")),
			   "stencil_plainILi2E"))
			o = json_array_get(js, i);
	CHECK(o != NULL);
	if (o) {
		CHECK_INT(json_integer_value(json_object_get(o, "k")), 2);
		CHECK(json_is_true(json_object_get(o, "k_exact")));
		CHECK_INT(json_array_size(json_object_get(o, "loads")), 5);
		CHECK_INT(json_integer_value(json_object_get(o, "shuffles_per_thread")), 4);
		CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "global_loads_per_thread"),
							     "before")), 5);
		CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "global_loads_per_thread"),
							     "after")), 2);
		CHECK_STR(json_string_value(json_object_get(o, "helper")), "regcache::window<T, 2>");
	}
	json_decref(js);

	stencil_detect_release(&sd);
	CHECK_INT(sd.nr_hints, 0);
	ptx_module_free(m);
}

/*
 * Hand-made variations on nvcc's output: lane strides that are not one
 * element, and the lane stride hidden behind a multiply by %ntid.
 */
static const char *synthetic =
	".version 9.0\n.target sm_90\n.address_size 64\n\n"
	".visible .entry strided(\n\t.param .u64 strided_param_0,\n\t.param .u64 strided_param_1\n)\n{\n"
	"\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<12>;\n"
	"\tld.param.u64 %rd1, [strided_param_0];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tmov.u32 %r2, %ntid.x;\n"
	"\tmul.lo.s32 %r3, %r1, %r2; // tid * ntid: lanes far apart\n"
	"\tmul.wide.s32 %rd3, %r3, 4;\n"
	"\tadd.s64 %rd4, %rd2, %rd3;\n"
	"\tld.global.u32 %r4, [%rd4];\n"
	"\tld.global.u32 %r5, [%rd4+4];\n"
	"\tld.global.u32 %r6, [%rd4+8];\n"
	"\tmul.wide.s32 %rd5, %r1, 4;\n"
	"\tadd.s64 %rd6, %rd2, %rd5;\n"
	"\tadd.s64 %rd7, %rd6, 4; /* folded into the base */\n"
	"\tld.global.u8 %r7, [%rd6];\n"
	"\tld.global.u32 %r4, [%rd7+-4];\n"
	"\tld.global.u32 %r5, [%rd7];\n"
	"\tld.global.u32 %r6, [%rd7+4];\n"
	"\tret;\n}\n";

static void test_synthetic(void)
{
	struct ptx_module *m = NULL;
	struct stencil_detect sd;

	if (ptx_parse("synthetic.ptx", synthetic, strlen(synthetic), &m)) {
		fprintf(stderr, "synthetic PTX: %s\n", error_message());
		CHECK(0);
		return;
	}
	stencil_detect_init(&sd);
	CHECK_INT(stencil_detect_run(&sd, m), 0);
	/* only the second group (ordinals 4..6, element 4 bytes): the u8 load
	 * is another element size, the first group's lanes are ntid apart */
	CHECK_INT(sd.nr_hints, 1);
	if (sd.nr_hints == 1) {
		CHECK_INT(sd.hints[0].nr_loads, 3);
		CHECK_INT(sd.hints[0].ordinals[0], 4);
		CHECK_INT(sd.hints[0].ordinals[2], 6);
		CHECK_INT(sd.hints[0].offsets[0], 0);
		CHECK_INT(sd.hints[0].offsets[2], 8);
		CHECK_INT(sd.hints[0].k, 1);
	}
	stencil_detect_release(&sd);
	ptx_module_free(m);
}

int main(void)
{
	test_fixture();
	test_synthetic();
	return check_done();
}
