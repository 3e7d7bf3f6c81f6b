/*
 * The PTX model (analysis/ptx.c) on real nvcc output (tests/fixtures/ptx/,
 * made by regen.sh from the .cu files in src/) and on small hand-written modules for
 * the forms nvcc does not emit. Expected values were read off the PTX.
 */
#include <malloc.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

static struct ptx_module *load_fixture(const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *m = NULL;
	char *rel = xasprintf("tests/fixtures/ptx/%s", name);

	if (strbuf_read_file(&sb, check_source_path(rel), 0)) {
		fprintf(stderr, "%s\n", error_message());
		CHECK(!"fixture readable");
	} else if (ptx_parse(name, sb.buf, sb.len, &m)) {
		fprintf(stderr, "%s\n", error_message());
		CHECK(!"fixture parses");
	}
	free(rel);
	strbuf_release(&sb);
	return m;
}

static struct ptx_module *parse_str(const char *text)
{
	struct ptx_module *m = NULL;

	if (ptx_parse("snippet.ptx", text, strlen(text), &m)) {
		fprintf(stderr, "unexpected error: %s\n", error_message());
		CHECK(!"snippet parses");
	}
	return m;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);
	return s && a >= b && !strcmp(s + a - b, suffix);
}

static const struct ptx_function *fn(const struct ptx_module *m, const char *name)
{
	const struct ptx_function *f = m ? ptx_module_find(m, name) : NULL;
	if (!f)
		fprintf(stderr, "function %s not found\n", name);
	CHECK(f != NULL);
	return f;
}

static void test_cacheops(void)
{
	struct ptx_module *m = load_fixture("cacheops.ptx");
	const struct ptx_function *f;
	static const enum ptx_cache_op ops[] = {
		PTX_CACHE_OP_NONE, PTX_CACHE_OP_CG, PTX_CACHE_OP_CA, PTX_CACHE_OP_CS,
		PTX_CACHE_OP_LU, PTX_CACHE_OP_CV, PTX_CACHE_OP_NONE, PTX_CACHE_OP_CS,
	};
	static const int patchable[] = { 1, 0, 0, 1, 1, 0, 1, 1 };
	static const unsigned lines[] = { 102, 109, 118, 127, 136, 145, 155, 162 };
	size_t i;

	if (!m)
		return;
	CHECK_STR(m->version, "9.0");
	CHECK_STR(m->target, "sm_90");
	CHECK_INT(m->address_size, 64);
	CHECK_INT(m->nr_functions, 2);
	CHECK(ends_with(m->nr_files > 1 ? m->files[1] : NULL, "src/cacheops.cu"));

	/* const __restrict__: nvcc chose ld.global.nc for all three. */
	f = fn(m, "_Z11restrict_roPKfS0_Pfi");
	if (f) {
		CHECK(f->is_entry);
		CHECK_INT(f->nr_params, 4);
		CHECK_STR(f->params[3].type, ".u32");
		CHECK(f->params[0].is_pointer_sized && !f->params[3].is_pointer_sized);
		CHECK_INT(f->nr_loads, 3);
		for (i = 0; i < f->nr_loads && i < 3; i++) {
			CHECK_INT(f->loads[i].ordinal, i);
			CHECK(f->loads[i].nc);
			CHECK(f->loads[i].patchable);
			CHECK_INT(f->loads[i].read_only, 1);
			CHECK_INT(f->loads[i].line, 9);
			CHECK(ends_with(f->loads[i].file, "src/cacheops.cu"));
		}
		if (f->nr_loads == 3) {
			CHECK_INT(f->loads[0].param, 1);   /* b[i] first */
			CHECK_INT(f->loads[1].param, 0);
			CHECK_INT(f->loads[2].param, 0);
			CHECK_INT(f->loads[0].ptx_line, 49);
		}
		CHECK_INT(f->nr_memops, 1);
		if (f->nr_memops == 1) {
			CHECK_INT(f->memops[0].kind, PTX_MEMOP_STORE);
			CHECK_INT(f->memops[0].param, 2);
			CHECK_STR(f->memops[0].opcode, "st.global.f32");
		}
	}

	f = fn(m, "_Z10intrinsicsPKfPK6float4Pfi");
	if (f) {
		CHECK_INT(f->nr_loads, 8);
		for (i = 0; i < f->nr_loads && i < 8; i++) {
			const struct ptx_load *ld = &f->loads[i];
			CHECK_INT(ld->ordinal, i);
			CHECK_INT(ld->cache_op, ops[i]);
			CHECK_INT(ld->patchable, patchable[i]);
			CHECK(ld->patchable == (ld->unpatchable_reason == NULL));
			CHECK_INT(ld->ptx_line, lines[i]);
			CHECK_INT(ld->line, 17 + (int)i);   /* __ldg..: the call site, not the header */
			CHECK_INT(ld->call_line, 0);
			CHECK(ends_with(ld->file, "src/cacheops.cu"));
			CHECK_INT(ld->param, i < 6 ? 0 : 1);
			CHECK_INT(ld->read_only, 1);
			CHECK_INT(ld->space, PTX_SPACE_GLOBAL);
			CHECK_INT(ld->vector, i < 6 ? 1 : 4);
			CHECK_INT(ld->bits, 32);
		}
		if (f->nr_loads == 8) {
			CHECK(f->loads[0].nc);          /* __ldg */
			CHECK(!f->loads[1].nc);
			CHECK(f->loads[5].strong);      /* .cv */
			CHECK(!f->loads[3].strong);
			CHECK(strstr(f->loads[1].unpatchable_reason, ".cg") != NULL);
			CHECK(strstr(f->loads[2].unpatchable_reason, ".ca") != NULL);
			CHECK_STR(f->loads[6].opcode, "ld.global.nc.v4.f32");
			CHECK_STR(f->loads[6].dest, "{%f7,%f8,%f9,%f10}");
			CHECK_STR(f->loads[1].opcode, "ld.global.cg.f32");
			CHECK_STR(f->loads[1].address, "%rd5");
			CHECK(f->loads[1].predicate == NULL);
			/* text_offset/len point at "ld..." up to the ';' */
			CHECK(!strncmp(m->text + f->loads[1].text_offset, "ld.global.cg.f32 %f2, [%rd5];",
				       f->loads[1].text_len));
		}
	}
	ptx_module_free(m);
}

static void test_inline_qualifiers(void)
{
	struct ptx_module *m = load_fixture("inline_qual.ptx");
	const struct ptx_function *f;

	if (!m)
		return;
	f = fn(m, "_Z10qualifiersPKfPK6float4PKjPKoPfi");
	if (!f || f->nr_loads != 7) {
		CHECK_INT(f ? f->nr_loads : 0, 7);
		ptx_module_free(m);
		return;
	}
	CHECK_INT(f->loads[0].l1_eviction, PTX_L1_NO_ALLOCATE);
	CHECK(!f->loads[0].nc && !f->loads[0].has_l2_qualifier);
	CHECK_INT(f->loads[0].line, 8);   /* the asm line inside ld_na() */

	CHECK_INT(f->loads[1].l1_eviction, PTX_L1_NO_ALLOCATE);
	CHECK(f->loads[1].nc);
	CHECK_INT(f->loads[1].vector, 4);
	CHECK_INT(f->loads[1].param, 1);

	CHECK_STR(f->loads[2].opcode, "ld.global.L1::evict_last.L2::cache_hint.f32");
	CHECK_INT(f->loads[2].l1_eviction, PTX_L1_EVICT_LAST);
	CHECK(f->loads[2].has_l2_qualifier);
	CHECK(f->loads[2].patchable);

	CHECK_INT(f->loads[3].l1_eviction, PTX_L1_EVICT_FIRST);
	CHECK(f->loads[3].has_l2_qualifier);      /* .L2::256B */
	CHECK_INT(f->loads[3].param, 2);

	/* Predicated loads inside the asm's own { } scope, named predicate q. */
	CHECK_STR(f->loads[4].predicate, "@q");
	CHECK(f->loads[4].has_l2_qualifier);       /* .L2::64B */
	CHECK_STR(f->loads[5].predicate, "@!q");
	CHECK_STR(f->loads[5].address, "%rd12+4");
	CHECK(f->loads[5].nc);
	CHECK_INT(f->loads[4].param, 0);
	CHECK_INT(f->loads[5].param, 0);
	CHECK_INT(f->loads[4].ptx_line, 99);
	CHECK_INT(f->loads[5].ptx_line, 100);

	CHECK_INT(f->loads[6].bits, 128);
	CHECK_INT(f->loads[6].param, 3);
	CHECK_INT(f->loads[6].line, 51);
	ptx_module_free(m);
}

static void test_strong(void)
{
	struct ptx_module *m = load_fixture("strong.ptx");
	const struct ptx_function *f;
	size_t i;

	if (!m)
		return;
	f = fn(m, "_Z12strong_loadsPViPiPKiS1_i");
	if (!f || f->nr_loads != 5) {
		CHECK_INT(f ? f->nr_loads : 0, 5);
		ptx_module_free(m);
		return;
	}
	for (i = 0; i < 4; i++) {
		CHECK(f->loads[i].strong);
		CHECK(!f->loads[i].patchable);
		CHECK(f->loads[i].unpatchable_reason != NULL);
	}
	CHECK_STR(f->loads[0].opcode, "ld.volatile.global.u32");
	/* cuda::atomic_ref loads are generic (no state space). */
	CHECK_STR(f->loads[1].opcode, "ld.relaxed.gpu.b32");
	CHECK_INT(f->loads[1].space, PTX_SPACE_GENERIC);
	CHECK_INT(f->loads[2].space, PTX_SPACE_GENERIC);
	CHECK_INT(f->loads[3].space, PTX_SPACE_GLOBAL);
	/* data[] is atomically updated: not read-only; plain[] is. */
	CHECK_INT(f->loads[1].param, 1);
	CHECK_INT(f->loads[1].read_only, 0);
	CHECK_INT(f->loads[3].param, 2);
	CHECK_INT(f->loads[3].read_only, 1);
	CHECK_INT(f->loads[0].param, 0);
	CHECK_INT(f->loads[0].read_only, 1);
	/* atomic_ref's load lives in cccl headers: the line is the user's. */
	CHECK_INT(f->loads[1].line, 12);
	CHECK_INT(f->loads[2].line, 14);
	CHECK(ends_with(f->loads[2].file, "src/strong.cu"));
	CHECK(f->loads[4].patchable && !f->loads[4].strong);
	CHECK_INT(f->loads[4].param, 2);

	CHECK_INT(f->nr_memops, 3);
	if (f->nr_memops == 3) {
		CHECK_INT(f->memops[0].kind, PTX_MEMOP_ATOMIC);
		CHECK_INT(f->memops[0].param, 1);
		CHECK_INT(f->memops[1].kind, PTX_MEMOP_FENCE);
		CHECK_STR(f->memops[1].opcode, "membar.gl");
		CHECK_INT(f->memops[2].kind, PTX_MEMOP_STORE);
		CHECK_INT(f->memops[2].param, 3);
	}
	ptx_module_free(m);
}

/* Async copies from global to shared memory (Triton's pipelined tl.load,
 * cp.async, TMA) are memops of their own, with their source location;
 * commit/wait groups, prefetches and shared-to-global bulk copies are not. */
static void test_async_copies(void)
{
	static const char text[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".file 1 \"/src/k.py\"\n"
		".visible .entry k(.param .u64 k_param_0)\n{\n"
		"\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<9>;\n\t.shared .align 16 .b8 buf[4096];\n"
		"\tld.param.u64 %rd1, [k_param_0];\n"
		"\t.loc 1 10 20\n"
		"\tcp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;\n"
		"\tcp.async.cg.shared.global [ %r1 + 16 ], [ %rd1 + 16 ], 0x10, %r2;\n"
		"\tcp.async.commit_group;\n"
		"\t.loc 1 11 20\n"
		"\tcp.async.ca.shared.global.L2::128B [ %r3 ], [ %rd2 ], 8;\n"
		"\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		" [%r4], [%rd3, {%r5, %r6}], [%r7];\n"
		"\t.loc 1 12 4\n"
		"\tcp.async.bulk.global.shared::cta.bulk_group [%rd4], [%r8], 256;\n"
		"\tcp.async.bulk.prefetch.L2.global [%rd5], 256;\n"
		"\tcp.async.wait_group 0;\n"
		"\tret;\n}\n";
	struct ptx_module *m = parse_str(text);
	const struct ptx_function *f = m ? fn(m, "k") : NULL;
	struct ptx_async_site *sites = NULL;
	size_t i, n = 0, nr;

	if (!f) {
		ptx_module_free(m);
		return;
	}
	CHECK_INT(f->nr_loads, 0);
	for (i = 0; i < f->nr_memops; i++)
		n += f->memops[i].kind == PTX_MEMOP_ASYNC_COPY;
	CHECK_INT(n, 4);
	nr = ptx_async_copy_sites(f, &sites);
	CHECK_INT(nr, 2);
	if (nr == 2) {
		CHECK_STR(sites[0].file, "/src/k.py");
		CHECK_INT(sites[0].line, 10);
		CHECK_INT(sites[0].column, 20);
		CHECK_INT(sites[0].copies, 2);
		CHECK_INT(sites[0].first_ptx_line, 12);
		CHECK_INT(sites[1].line, 11);
		CHECK_INT(sites[1].copies, 2);
	}
	free(sites);
	ptx_module_free(m);
}

/*
 * An async copy whose location is unknown (no .loc before it, or a .loc
 * naming a file the module never declares) has no file and line 0, never
 * what the allocator left there (issue 36 sweep: `inspect
 * libcublasLt.so.13` crashed printing such a copy's "file").
 */
static void test_async_copies_unlocated(void)
{
	static const char text[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry k(.param .u64 k_param_0)\n{\n"
		"\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<9>;\n"
		"\tld.param.u64 %rd1, [k_param_0];\n"
		"\tcp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;\n"
		"\t.loc 7 10 20\n"
		"\tcp.async.cg.shared.global [ %r1 + 16 ], [ %rd1 + 16 ], 0x10, %r2;\n"
		"\tret;\n}\n";
	struct ptx_module *m;
	const struct ptx_function *f;
	size_t i;

	/* new memory filled with 0x5a, not the zeros a fresh heap gives:
	 * what is left unset shows (ASan fills it with 0xbe anyway) */
	mallopt(M_PERTURB, 0xa5);
	m = parse_str(text);
	mallopt(M_PERTURB, 0);
	f = m ? fn(m, "k") : NULL;
	if (!f) {
		ptx_module_free(m);
		return;
	}
	CHECK_INT(f->nr_memops, 2);
	for (i = 0; i < f->nr_memops; i++) {
		CHECK(f->memops[i].file == NULL);
		CHECK_INT(f->memops[i].line, 0);
		CHECK_INT(f->memops[i].column, 0);
	}
	ptx_module_free(m);
}

static void test_shared(void)
{
	struct ptx_module *m = load_fixture("shared.ptx");
	const struct ptx_function *f;
	static const enum ptx_memop_kind kinds[] = {
		PTX_MEMOP_BARRIER, PTX_MEMOP_STORE, PTX_MEMOP_FENCE, PTX_MEMOP_BARRIER,
		PTX_MEMOP_ATOMIC,
	};
	size_t i;

	if (!m)
		return;
	f = fn(m, "_Z13transpose_sumPKfPfPji");
	if (f) {
		CHECK(f->uses_shared);
		/* tile[32][33] floats + one unsigned; the extern dyn[] has no size. */
		CHECK_INT(f->static_shared_bytes, 32 * 33 * 4 + 4);
		CHECK_INT(f->nr_loads, 2);
		for (i = 0; i < f->nr_loads; i++) {
			CHECK_INT(f->loads[i].param, 0);
			CHECK_INT(f->loads[i].read_only, 1);
		}
		/* Shared-memory atomics are not global memops. */
		CHECK_INT(f->nr_memops, 5);
		for (i = 0; i < f->nr_memops && i < 5; i++)
			CHECK_INT(f->memops[i].kind, kinds[i]);
		if (f->nr_memops == 5) {
			CHECK_INT(f->memops[1].param, 1);
			CHECK_INT(f->memops[4].param, 2);
			CHECK_STR(f->memops[0].opcode, "bar.sync");
			CHECK_INT(f->memops[0].ptx_line, 89);
		}
	}
	ptx_module_free(m);
}

/* Module-scope .global and .const variables (__device__, __constant__):
 * names, spaces and sizes; .extern ones flagged; .shared ones not listed. */
static void test_module_variables(void)
{
	struct ptx_module *m = parse_str(
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".const .align 4 .b8 c_filter[68] = {0, 0, 128, 63};\n"
		".visible .global .align 8 .u64 clipped;\n"
		".extern .global .align 4 .b8 elsewhere[];\n"
		".shared .align 4 .b8 tile[256];\n"
		".extern .func (.param .b32 r) helper(.param .b32 a);\n"
		".global .align 4 .u32 after_func;\n"
		".visible .entry k(.param .u64 p)\n{\n"
		"\t.reg .b64 %rd<8>;\n"
		"\tld.param.u64 %rd1, [p];\n"
		"\tcvta.to.global.u64 %rd2, %rd1;\n"
		"\tst.global.u32 [%rd2], 1;\n"                          /* memop 0: parameter 0 */
		"\tatom.global.add.u64 %rd3, [clipped], 1;\n"           /* 1: the variable, directly */
		"\tmov.u64 %rd4, after_func;\n"
		"\tadd.s64 %rd5, %rd4, 4;\n"
		"\tst.global.u32 [%rd5], 2;\n"                          /* 2: through a register */
		"\tld.global.u64 %rd6, [%rd2+8];\n"
		"\tst.global.u32 [%rd6], 3;\n"                          /* 3: a loaded pointer */
		"\tret;\n}\n");
	const struct ptx_function *k;

	if (!m)
		return;
	k = fn(m, "k");
	if (k && k->nr_memops == 4) {
		CHECK_INT(k->memops[0].param, 0);
		CHECK_INT(k->memops[0].module_var, -1);
		CHECK_INT(k->memops[1].param, -1);
		CHECK_INT(k->memops[1].module_var, 1);
		CHECK_INT(k->memops[2].param, -1);
		CHECK_INT(k->memops[2].module_var, 3);
		CHECK_INT(k->memops[3].param, -1);
		CHECK_INT(k->memops[3].module_var, -1);
	} else {
		CHECK(k && k->nr_memops == 4);
	}
	CHECK_INT(m->nr_variables, 4);
	if (m->nr_variables == 4) {
		CHECK_STR(m->variables[0].name, "c_filter");
		CHECK_INT(m->variables[0].is_const, 1);
		CHECK_INT(m->variables[0].bytes, 68);
		CHECK_INT(m->variables[0].is_extern, 0);
		CHECK_STR(m->variables[1].name, "clipped");
		CHECK_INT(m->variables[1].is_const, 0);
		CHECK_INT(m->variables[1].bytes, 8);
		CHECK_STR(m->variables[2].name, "elsewhere");
		CHECK_INT(m->variables[2].is_extern, 1);
		/* the .extern of a function prototype does not carry over */
		CHECK_STR(m->variables[3].name, "after_func");
		CHECK_INT(m->variables[3].is_extern, 0);
		CHECK_INT(m->variables[3].bytes, 4);
	}
	ptx_module_free(m);
}

static void test_func_and_prototypes(void)
{
	struct ptx_module *m = load_fixture("func.ptx");
	const struct ptx_function *f;

	if (!m)
		return;
	/* Three prototypes (one .extern) are skipped; five bodies remain. */
	CHECK_INT(m->nr_functions, 5);
	CHECK(ptx_module_find(m, "_Z9ext_scalePKf") == NULL);

	f = fn(m, "_Z11generic_sumPKfi");
	if (f && f->nr_loads == 2) {
		CHECK(!f->is_entry);
		CHECK_STR(f->params[0].type, ".b64");
		CHECK_INT(f->loads[0].space, PTX_SPACE_GENERIC);
		CHECK_STR(f->loads[0].opcode, "ld.f32");
		CHECK(!f->loads[0].patchable);
		CHECK(strstr(f->loads[0].unpatchable_reason, "generic") != NULL);
		CHECK_INT(f->loads[0].param, 0);
		CHECK_INT(f->loads[1].param, 0);
		CHECK_INT(f->loads[1].read_only, 1);
	} else {
		CHECK_INT(f ? f->nr_loads : 0, 2);
	}

	f = fn(m, "_Z7ro_loadPKfi");
	if (f && f->nr_loads == 2) {
		CHECK(f->loads[0].nc);
		CHECK_INT(f->loads[0].param, 0);
		CHECK_INT(f->loads[0].line, 16);
		/* table[] is a __device__ array, not a parameter. */
		CHECK_INT(f->loads[1].param, -1);
		CHECK_INT(f->loads[1].read_only, -1);
	} else {
		CHECK_INT(f ? f->nr_loads : 0, 2);
	}

	/* The internal clone nvcc makes under -rdc, with '$' in its name. */
	f = fn(m, "_Z11generic_sumPKfi$2");
	if (f) {
		CHECK_INT(f->nr_loads, 2);
		CHECK(f->nr_loads && f->loads[0].space == PTX_SPACE_GLOBAL);
	}

	f = fn(m, "_Z5callsPKfS0_Pfi");
	if (f && f->nr_loads == 1) {
		CHECK(f->is_entry);
		/* b is passed to ro_load$1, which only reads it. */
		CHECK_INT(f->loads[0].param, 1);
		CHECK_INT(f->loads[0].read_only, 1);
		CHECK_INT(f->loads[0].line, 27);
		CHECK_INT(f->nr_memops, 1);
	} else {
		CHECK_INT(f ? f->nr_loads : 0, 1);
	}
	ptx_module_free(m);
}

static void test_loops_vectors_predicates(void)
{
	struct ptx_module *m = load_fixture("loop.ptx");
	const struct ptx_function *f;
	static const int params[] = { 1, 2, 0, 3 }, ro[] = { 1, 1, 1, 0 };
	size_t i;

	if (m) {
		/* %rd17 is set before the loop and advanced inside it. */
		f = fn(m, "_Z4walkPKfS0_Pf");
		if (f && f->nr_loads == 1) {
			CHECK_INT(f->loads[0].param, 0);
			CHECK_INT(f->loads[0].read_only, 1);
			CHECK_INT(f->loads[0].line, 7);
		} else {
			CHECK_INT(f ? f->nr_loads : 0, 1);
		}
		f = fn(m, "_Z11grid_stridePKfPKiS0_Pfi");
		if (f && f->nr_loads == 4) {
			for (i = 0; i < 4; i++) {
				CHECK_INT(f->loads[i].param, params[i]);
				CHECK_INT(f->loads[i].read_only, ro[i]);
			}
		} else {
			CHECK_INT(f ? f->nr_loads : 0, 4);
		}
		ptx_module_free(m);
	}

	m = load_fixture("vectors.ptx");
	if (m) {
		static const int vec[] = { 4, 2, 2, 1, 1, 1 }, bits[] = { 32, 32, 64, 8, 16, 32 };
		f = fn(m, "_Z8vec_copyPK6float4PK6float2PK7double2PKcPKsPK7__half2PS_i");
		if (f && f->nr_loads == 6) {
			for (i = 0; i < 6; i++) {
				CHECK_INT(f->loads[i].vector, vec[i]);
				CHECK_INT(f->loads[i].bits, bits[i]);
				CHECK_INT(f->loads[i].param, (int)i);
				CHECK_INT(f->loads[i].line, 12 + (int)i);
			}
			CHECK_STR(f->loads[3].opcode, "ld.global.s8");
		} else {
			CHECK_INT(f ? f->nr_loads : 0, 6);
		}
		f = fn(m, "_Z8int4_sumPK4int4Pxi");
		if (f && f->nr_loads == 2) {
			CHECK_INT(f->loads[1].bits, 64);
			CHECK_INT(f->loads[1].read_only, 0);   /* out[i] += ... */
			CHECK_INT(f->loads[0].read_only, 1);
		} else {
			CHECK_INT(f ? f->nr_loads : 0, 2);
		}
		ptx_module_free(m);
	}

	m = load_fixture("predicated.ptx");
	if (m) {
		f = fn(m, "_Z4pickPKfS0_PKiPfi");
		if (f && f->nr_loads == 3) {
			CHECK(f->loads[0].predicate == NULL);
			CHECK_STR(f->loads[1].predicate, "@p");
			CHECK_STR(f->loads[2].predicate, "@!p");
			CHECK_INT(f->loads[0].param, 2);
			CHECK_INT(f->loads[1].param, 0);
			CHECK_INT(f->loads[2].param, 1);
		} else {
			CHECK_INT(f ? f->nr_loads : 0, 3);
		}
		ptx_module_free(m);
	}
}

static const char header[] = ".version 8.0\n.target sm_90\n.address_size 64\n";

static void test_snippets(void)
{
	struct ptx_module *m;
	const struct ptx_function *f;
	char *t;

	/* .file with timestamp and size, given after the function; comments with
	 * braces and fake instructions; a string with braces; nested scopes; an
	 * unknown directive and instruction; .ptr/.align parameter attributes. */
	t = xasprintf("%s"
		      "/* a comment { with ld.global.f32 %%f1, [%%rd1]; } */\n"
		      ".foo bar baz\n"
		      ".visible .entry k(\n"
		      "\t.param .u64 .ptr .global .align 16 k_param_0,\n"
		      "\t.param .align 8 .b8 k_param_1[16]\n"
		      ")\n"
		      ".maxntid 256, 1, 1\n"
		      "{\n"
		      "\t.reg .b64 %%rd<9>; .reg .f32 %%f<4>; .reg .pred %%p<2>;\n"
		      "\t.pragma \"nounroll { }\";\n"
		      "\t.loc 2 40 1\n"
		      "\tld.param.u64 %%rd1, [k_param_0];\n"
		      "\tld.param.u64 %%rd2, [k_param_1+8];  // a pointer in a struct\n"
		      "\tcvta.to.global.u64 %%rd3, %%rd1;\n"
		      "\tfrobnicate.b32 %%rd4, %%rd3;\n"
		      "\t{\n\t\t.reg .pred q;\n\t\tsetp.eq.u64 q, %%rd3, 0;\n"
		      "\t\t@!q ld.global.ca.f32 %%f1, [%%rd3+16];\n\t}\n"
		      "\t.loc 2 41 1\n"
		      "\tldu.global.f32 %%f2, [%%rd3];\n"
		      "\tld.f32 %%f3, [%%rd1+4];      /* generic, from a kernel pointer */\n"
		      "\tld.global.f32 %%f3, [%%rd2];\n"
		      "\tst.global.f32 [%%rd2+4], %%f3;\n"
		      "\tret;\n"
		      "}\n"
		      ".file 2 \"/src/app/k.cu\", 1700000000, 4711\n", header);
	m = parse_str(t);
	free(t);
	if (m) {
		CHECK_STR(m->version, "8.0");
		f = fn(m, "k");
		if (f && f->nr_loads == 4) {
			CHECK_INT(f->nr_params, 2);
			CHECK(f->params[0].is_pointer_sized);
			CHECK_STR(f->params[0].type, ".u64 .ptr .global .align 16");
			CHECK(!f->params[1].is_pointer_sized);
			CHECK(strstr(f->params[1].type, "[16]") != NULL);
			CHECK_STR(f->loads[0].predicate, "@!q");
			CHECK_INT(f->loads[0].cache_op, PTX_CACHE_OP_CA);
			CHECK_INT(f->loads[0].param, 0);
			CHECK_STR(f->loads[0].file, "/src/app/k.cu");
			CHECK_INT(f->loads[0].line, 40);
			CHECK(f->loads[1].is_ldu && !f->loads[1].patchable);
			CHECK_INT(f->loads[1].line, 41);
			/* A generic load from a kernel's pointer parameter is global. */
			CHECK_INT(f->loads[2].space, PTX_SPACE_GENERIC);
			CHECK(f->loads[2].patchable);
			CHECK_INT(f->loads[2].param, 0);
			CHECK_INT(f->loads[2].read_only, 1);
			/* The struct's pointer field: parameter 1, stored to. */
			CHECK_INT(f->loads[3].param, 1);
			CHECK_INT(f->loads[3].read_only, 0);
			CHECK_INT(f->loads[3].ptx_line, 27);
			CHECK(f->body_end > f->body_begin && m->text[f->body_begin] == '{' &&
			      m->text[f->body_end] == '}');
			CHECK_INT(f->decl_line, 6);
		} else {
			CHECK_INT(f ? f->nr_loads : 0, 4);
		}
		ptx_module_free(m);
	}

	/*
	 * Dataflow: a select of two parameters is unknown; a cvta'd pointer plus
	 * a 64-bit integer parameter is the pointer; a pointer stored as data
	 * escapes (not read-only); a call to an unknown function escapes too;
	 * a pointer loaded from memory is unknown; loop-carried registers.
	 */
	t = xasprintf("%s"
		      ".extern .func ext(.param .b64 ext_param_0);\n"
		      ".visible .entry d(.param .u64 d_param_0, .param .u64 d_param_1,\n"
		      "                  .param .u64 d_param_2, .param .u64 d_param_3,\n"
		      "                  .param .u64 d_param_4)\n"
		      "{\n"
		      "\t.reg .b64 %%rd<30>; .reg .pred %%p<3>; .reg .f32 %%f<9>;\n"
		      "\tld.param.u64 %%rd1, [d_param_0];\n"
		      "\tld.param.u64 %%rd2, [d_param_1];\n"
		      "\tld.param.u64 %%rd3, [d_param_2];\n"
		      "\tld.param.u64 %%rd4, [d_param_3];\n"
		      "\tld.param.u64 %%rd5, [d_param_4];\n"
		      "\tselp.b64 %%rd6, %%rd1, %%rd2, %%p1;\n"
		      "\tld.global.f32 %%f1, [%%rd6];\n"
		      "\tcvta.to.global.u64 %%rd7, %%rd3;\n"
		      "\tadd.s64 %%rd8, %%rd7, %%rd4;\n"
		      "\tld.global.f32 %%f2, [%%rd8];\n"
		      "\tadd.s64 %%rd9, %%rd1, %%rd2;\n"
		      "\tld.global.f32 %%f3, [%%rd9];\n"
		      "\tst.global.u64 [%%rd7], %%rd1;\n"
		      "\tld.global.u64 %%rd10, [%%rd7+8];\n"
		      "\tld.global.f32 %%f4, [%%rd10];\n"
		      "\tmov.u64 %%rd11, %%rd5;\n"
		      "$L_loop:\n"
		      "\tld.global.f32 %%f5, [%%rd11];\n"
		      "\tadd.s64 %%rd11, %%rd11, 4;\n"
		      "\t@%%p2 bra $L_loop;\n"
		      "\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0+0], %%rd5;\n"
		      "\tcall.uni ext, (param0);\n\t}\n"
		      "\tmad.wide.s32 %%rd12, %%r1, 4, %%rd7;\n"
		      "\tld.global.nc.L2::cache_hint.f32 %%f6, [%%rd12], %%rd13;\n"
		      "\tatom.global.add.f32 %%f7, [%%rd12+4], %%f6;\n"
		      "\tred.global.add.f32 [%%rd8], %%f6;\n"
		      "\tfence.sc.gpu;\n\tbar.warp.sync -1;\n\tbarrier.sync 0;\n"
		      "\tret;\n"
		      "}\n", header);
	m = parse_str(t);
	free(t);
	if (m) {
		CHECK_INT(m->nr_functions, 1);
		f = fn(m, "d");
		if (f && f->nr_loads == 7 && f->nr_memops == 5) {
			CHECK_INT(f->loads[0].param, -1);        /* selp of two params */
			CHECK_INT(f->loads[0].read_only, -1);
			CHECK_INT(f->loads[1].param, 2);         /* cvta'd pointer + integer */
			CHECK_INT(f->loads[2].param, -1);        /* two raw parameters */
			CHECK_INT(f->loads[3].param, 2);         /* ld.global.u64 [%rd7+8] */
			CHECK_INT(f->loads[3].bits, 64);
			CHECK_INT(f->loads[4].param, -1);        /* pointer read from memory */
			CHECK_INT(f->loads[5].param, 4);         /* loop-carried */
			CHECK_INT(f->loads[5].read_only, 0);     /* passed to ext() */
			CHECK_INT(f->loads[6].param, 2);         /* mad.wide base */
			CHECK_INT(f->loads[6].read_only, 0);     /* stored to, atomics */
			CHECK(f->loads[6].has_l2_qualifier && f->loads[6].nc);
			CHECK_INT(f->memops[0].kind, PTX_MEMOP_STORE);
			CHECK_INT(f->memops[0].param, 2);
			CHECK_INT(f->memops[1].kind, PTX_MEMOP_ATOMIC);
			CHECK_INT(f->memops[1].param, 2);
			CHECK_INT(f->memops[2].kind, PTX_MEMOP_ATOMIC);   /* red */
			CHECK_INT(f->memops[2].param, 2);
			CHECK_INT(f->memops[3].kind, PTX_MEMOP_FENCE);
			CHECK_INT(f->memops[4].kind, PTX_MEMOP_BARRIER);  /* not bar.warp.sync */
			CHECK_STR(f->memops[4].opcode, "barrier.sync");
		} else {
			CHECK_INT(f ? f->nr_loads : 0, 7);
			CHECK_INT(f ? f->nr_memops : 0, 5);
		}
		ptx_module_free(m);
	}

	/* Param 0 escapes as data (st.global.u64 of the pointer): not read-only. */
	t = xasprintf("%s.entry e(.param .u64 e_param_0, .param .u64 e_param_1)\n{\n"
		      "\tld.param.u64 %%rd1, [e_param_0]; ld.param.u64 %%rd2, [e_param_1];\n"
		      "\tcvta.to.global.u64 %%rd3, %%rd2;\n"
		      "\tst.global.u64 [%%rd3], %%rd1;\n"
		      "\tld.global.f32 %%f1, [%%rd1];\n\tret;\n}\n", header);
	m = parse_str(t);
	free(t);
	if (m && m->nr_functions == 1 && m->functions[0].nr_loads == 1) {
		CHECK_INT(m->functions[0].loads[0].param, 0);
		CHECK_INT(m->functions[0].loads[0].read_only, 0);
	} else {
		CHECK(!"escape snippet");
	}
	ptx_module_free(m);

	/* Generic loads that are not provably global; module-level .shared. */
	t = xasprintf("%s.extern .shared .align 16 .b8 dyn[];\n"
		      ".shared .align 8 .b8 mod_tile[512];\n"
		      ".visible .func (.param .b32 r) g(.param .b64 g_param_0)\n{\n"
		      "\tld.param.u64 %%rd1, [g_param_0];\n"
		      "\tld.f32 %%f1, [%%rd1];\n"
		      "\tst.param.f32 [r], %%f1;\n\tret;\n}\n"
		      ".visible .entry h(.param .u64 h_param_0)\n{\n"
		      "\tmov.u64 %%rd1, mod_tile;\n"
		      "\tcvta.shared.u64 %%rd2, %%rd1;\n"
		      "\tld.f32 %%f1, [%%rd2];\n"
		      "\tmov.u32 %%r1, dyn;\n"
		      "\tret;\n}\n", header);
	m = parse_str(t);
	free(t);
	if (m && m->nr_functions == 2) {
		f = &m->functions[0];
		CHECK(!f->is_entry);
		CHECK(f->nr_loads == 1 && !f->loads[0].patchable && f->loads[0].param == 0);
		CHECK(!f->uses_shared);
		f = &m->functions[1];
		CHECK(f->nr_loads == 1 && !f->loads[0].patchable && f->loads[0].param == -1);
		CHECK(f->uses_shared);
		CHECK_INT(f->static_shared_bytes, 512);
	} else {
		CHECK(!"generic snippet");
	}
	ptx_module_free(m);

	/* Without .address_size PTX is 32-bit: .u32 parameters are pointers. */
	m = parse_str(".version 7.0\n.target sm_70\n"
		      ".entry s(.param .u32 s_param_0)\n{\n"
		      "\tld.param.u32 %r1, [s_param_0];\n"
		      "\tcvta.to.global.u32 %r2, %r1;\n"
		      "\tld.global.v2.f32 {%f1, %f2}, [%r2+8];\n\tret;\n}\n");
	if (m && m->nr_functions == 1 && m->functions[0].nr_loads == 1) {
		CHECK_INT(m->address_size, 32);
		CHECK(m->functions[0].params[0].is_pointer_sized);
		CHECK_INT(m->functions[0].loads[0].param, 0);
		CHECK_INT(m->functions[0].loads[0].vector, 2);
		CHECK(m->functions[0].loads[0].file == NULL);
		CHECK_INT(m->functions[0].loads[0].line, 0);
	} else {
		CHECK(!"32-bit snippet");
	}
	ptx_module_free(m);

	/* Function attributes before the return parameters. */
	m = parse_str(".version 8.3\n.target sm_90\n.address_size 64\n"
		      ".visible .func .attribute(.unified(0x1234567890abcdef, 0x1)) (.param .b32 r)\n"
		      "f(.param .b64 f_param_0)\n{\n"
		      "\tld.param.u64 %rd1, [f_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
		      "\tld.global.f32 %f1, [%rd2];\n\tst.param.f32 [r], %f1;\n\tret;\n}\n");
	if (m && m->nr_functions == 1) {
		CHECK_STR(m->functions[0].name, "f");
		CHECK(m->functions[0].nr_loads == 1 && m->functions[0].loads[0].param == 0);
		CHECK_INT(m->functions[0].loads[0].ptx_line, 9);
	} else {
		CHECK(!"attribute snippet");
	}
	ptx_module_free(m);

	CHECK_STR(ptx_cache_op_name(PTX_CACHE_OP_NONE), "default");
	CHECK_STR(ptx_cache_op_name(PTX_CACHE_OP_LU), "lu");
	CHECK_STR(ptx_l1_eviction_name(PTX_L1_NO_ALLOCATE), "L1::no_allocate");
	CHECK_STR(ptx_l1_eviction_name(PTX_L1_NONE), "default");
}

static void expect_error(const char *text, const char *needle)
{
	struct ptx_module *m = (struct ptx_module *)1;
	int ret = ptx_parse("bad.ptx", text, strlen(text), &m);

	CHECK_INT(ret, CA_E_INPUT);
	CHECK(m == NULL);
	if (!strstr(error_message(), needle)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", error_message(), needle);
		CHECK(!"error message");
	}
}

static void test_errors(void)
{
	expect_error(".target sm_90\n.address_size 64\n", "no .version");
	expect_error(".version 8.0\n.address_size 64\n", "no .target");
	expect_error("", "no .version");
	/* A body that never closes names the line of its '{'. */
	expect_error(".version 8.0\n.target sm_90\n.entry k()\n{\n\tret;\n{\n\tret;\n}\n",
		     "bad.ptx:4:");
	expect_error(".version 8.0\n.target sm_90\n.entry k()\n{\n\tret;\n}\n}\n",
		     "bad.ptx:7: unbalanced '}'");
	expect_error(".version 8.0\n.target sm_90\n.entry k()\n{\n\tret;\n\tld.global.f32 %f1, [%rd1]",
		     "bad.ptx:6: instruction is truncated");
	expect_error(".version 8.0\n.target sm_90\n.entry k()\n{\n\tld.global.f32 %f1, [%rd1]\n}\n",
		     "bad.ptx:5: missing ';'");
	expect_error(".version 8.0\n.target sm_90\n.entry k(\n.param .u64 p\n",
		     "bad.ptx:3: unclosed '('");
	expect_error(".version 8.0\n.target sm_90\n.address_size 48\n", ".address_size");
	/* issue 36: an out-of-range or malformed ISA version is named as such,
	 * never "too old" later on */
	expect_error(".version 99999999999999.x\n.target sm_90\n",
		     "bad.ptx:1: .version '99999999999999.x' is not a PTX ISA version");
	expect_error(".version 99999999999999.0\n.target sm_90\n", "is not a PTX ISA version");
	expect_error(".version 4294967302.2\n.target sm_90\n", "is not a PTX ISA version");
	expect_error(".version 9\n.target sm_90\n", "is not a PTX ISA version");
	expect_error(".version 9.0.1\n.target sm_90\n", "is not a PTX ISA version");
}

/* Linear time: a 16 MB module, many functions, and one big function. */
static void test_speed(void)
{
	struct strbuf sb = STRBUF_INIT, one = STRBUF_INIT;
	struct ptx_module *m = NULL;
	clock_t t0;
	double s1, s2;
	size_t i;

	strbuf_addstr(&sb, header);
	for (i = 0; sb.len < 16u << 20; i++)
		strbuf_addf(&sb, ".visible .entry k%zu(.param .u64 k%zu_param_0)\n{\n"
			    "\t.loc 1 %zu 1\n\tld.param.u64 %%rd1, [k%zu_param_0];\n"
			    "\tcvta.to.global.u64 %%rd2, %%rd1;\n"
			    "\tld.global.nc.f32 %%f1, [%%rd2];\n"
			    "\tadd.s64 %%rd3, %%rd2, 4;\n\tst.global.f32 [%%rd3], %%f1;\n"
			    "\tret;\n}\n", i, i, i % 1000 + 1, i);
	t0 = clock();
	CHECK_INT(ptx_parse("many.ptx", sb.buf, sb.len, &m), 0);
	s1 = (double)(clock() - t0) / CLOCKS_PER_SEC;
	CHECK(m && m->nr_functions == i);
	ptx_module_free(m);

	strbuf_addstr(&one, header);
	strbuf_addstr(&one, ".visible .entry big(.param .u64 big_param_0)\n{\n"
		      "\tld.param.u64 %rd1, [big_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n");
	for (i = 0; one.len < 16u << 20; i++)
		strbuf_addf(&one, "\tadd.s64 %%rd%zu, %%rd2, %zu;\n\tld.global.f32 %%f%zu, [%%rd%zu];\n"
			    "\tadd.s64 %%rd2, %%rd2, 4;\n", i + 3, i * 4, i, i + 3);
	strbuf_addstr(&one, "\tret;\n}\n");
	t0 = clock();
	m = NULL;
	CHECK_INT(ptx_parse("big.ptx", one.buf, one.len, &m), 0);
	s2 = (double)(clock() - t0) / CLOCKS_PER_SEC;
	CHECK(m && m->nr_functions == 1 && m->functions[0].nr_loads == i);
	if (m && m->functions[0].nr_loads == i)
		CHECK_INT(m->functions[0].loads[i - 1].param, 0);
	ptx_module_free(m);
	printf("parse speed: %.0f MB/s (many functions), %.0f MB/s (one function)\n",
	       sb.len / 1e6 / (s1 > 1e-6 ? s1 : 1e-6), one.len / 1e6 / (s2 > 1e-6 ? s2 : 1e-6));
	/* Generous bounds (sanitizer builds, busy machines); quadratic work fails them. */
	CHECK(s1 < 10.0);
	CHECK(s2 < 10.0);
	strbuf_release(&sb);
	strbuf_release(&one);
}

/*
 * A helper inlined in a helper (tests/fixtures/rebuilt: ca_ld_na_ro, line
 * 50, in load_key_na at its line 117, called at line 160): the chain holds
 * both calls, innermost first.
 */
static void test_inlined_twice(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *m = NULL;
	const struct ptx_function *f;
	const struct ptx_load *l;
	const char *path = check_source_path("tests/fixtures/rebuilt/stream_table.patched.ptx");

	if (strbuf_read_file(&sb, path, 0) || ptx_parse("st.ptx", sb.buf, sb.len, &m)) {
		CHECK(!"stream_table.patched.ptx parses");
		strbuf_release(&sb);
		return;
	}
	f = fn(m, "_Z11decode_keysPK5uint4jmjPKjjS3_jjPj");
	l = f && f->nr_loads > 2 ? &f->loads[2] : NULL;
	CHECK(l && l->line == 50 && l->inline_depth == 2 && l->inlined_at);
	if (l && l->inline_depth == 2 && l->inlined_at) {
		CHECK_INT(l->inlined_at[0].line, 117);
		CHECK_INT(l->inlined_at[0].column, 2);
		CHECK_INT(l->inlined_at[1].line, 160);
		CHECK_INT(l->inlined_at[1].column, 5);
		CHECK_INT(l->call_line, 160);
	}
	ptx_module_free(m);
	strbuf_release(&sb);
}

/*
 * A load inside an inlined __device__ helper (stream_table's decode_keys,
 * tests/fixtures/capture-real): file:line is the helper's line, call_line
 * the call site in the kernel's body, inlined_at the chain with the call's
 * column (".loc 1 92 2, ..., inlined_at 1 130 4"). __ldg-style toolkit
 * inlining is not a user helper (test_cacheops: call_line 0).
 */
static void test_inlined_helper(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *m = NULL;
	const struct ptx_function *f;
	const char *path = check_source_path(
		"tests/fixtures/capture-real/modules/83c50ebd491c19e2.ptx");

	if (strbuf_read_file(&sb, path, 0) || ptx_parse("cr.ptx", sb.buf, sb.len, &m)) {
		CHECK(!"capture-real PTX parses");
		strbuf_release(&sb);
		return;
	}
	f = fn(m, "_Z11decode_keysPK5uint4jmjPKjjS3_jjPj");
	if (f && f->nr_loads == 4) {
		static const int line[] = { 119, 92, 92, 103 }, call[] = { 0, 130, 135, 146 },
				 call_col[] = { 0, 4, 5, 5 };
		size_t i;

		for (i = 0; i < 4; i++) {
			const struct ptx_load *l = &f->loads[i];

			CHECK_INT(l->line, line[i]);
			CHECK_INT(l->call_line, call[i]);
			CHECK_INT(l->inline_depth, call[i] ? 1 : 0);
			CHECK(!call[i] || ends_with(l->call_file, "stream_table.cu"));
			CHECK((l->inlined_at != NULL) == (call[i] != 0));
			if (!l->inlined_at)
				continue;
			CHECK(l->inlined_at[0].file == l->call_file);
			CHECK_INT(l->inlined_at[0].line, call[i]);
			CHECK_INT(l->inlined_at[0].column, call_col[i]);
		}
	} else {
		CHECK(!"decode_keys has 4 loads");
	}
	ptx_module_free(m);
	strbuf_release(&sb);
}

int main(void)
{
	test_inlined_helper();
	test_inlined_twice();
	test_cacheops();
	test_inline_qualifiers();
	test_strong();
	test_shared();
	test_async_copies();
	test_async_copies_unlocated();
	test_module_variables();
	test_func_and_prototypes();
	test_loops_vectors_predicates();
	test_snippets();
	test_errors();
	test_speed();
	return check_done();
}
