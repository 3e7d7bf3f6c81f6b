/*
 * Rewriting load opcodes (analysis/ptx_rewrite.c): the exact form of every
 * action on every kind of load, that nothing but the opcode changes, and
 * that every error is reported without touching the output. ptxas checks
 * the same forms in tests/cli/t_patch_ptxas.sh.
 */
#include <string.h>

#include "base/error.h"
#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

static const char module_text[] =
	".version 8.3\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".visible .entry k(.param .u64 k_param_0)\n"
	"{\n"
	"\t.reg .b64 %rd<9>;\n"
	"\t.reg .f32 %f<20>;\n"
	"\t.reg .b16 %rs<2>;\n"
	"\t.reg .b128 %rq<2>;\n"
	"\t.reg .pred %p<2>;\n"
	"\tld.param.u64 %rd1, [k_param_0];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tcreatepolicy.fractional.L2::evict_last.b64 %rd3, 1.0;\n"
	"\tld.global.f32 \t%f1, [%rd2];\n"
	"\t@%p1 ld.global.nc.f32 %f2, [%rd2+4];\n"
	"\tld.global.cs.v4.f32 {%f3, %f4, %f5, %f6}, [%rd2+16];\n"
	"\tld.global.L1::evict_last.L2::cache_hint.f32 %f7, [%rd2+32], %rd3;\n"
	"\t@!%p1 ld.global.nc.L1::no_allocate.L2::128B.v2.f32 {%f8, %f9}, [%rd2+64];\n"
	"\tld.weak.global.lu.u8 %rs1, [%rd2+3];\n"
	"\tld.f32 %f10, [%rd1+8];\n"
	"\tld.global.L1::evict_first.L2::256B.b128 %rq1, [%rd2+128];\n"
	"\tld.global.ca.f32 %f11, [%rd2+256];\n"
	"\tst.global.f32 [%rd2], %f1;\n"
	"\tret;\n"
	"}\n";

#define NR_LOADS 8      /* the patchable ones, in order; then one .ca */

/* expected[load][action]; NULL: the action is refused for that load. */
static const char *const expected[NR_LOADS][LOAD_ACTION__COUNT] = {
	{ "ld.global.f32", "ld.global.ca.f32", "ld.global.cg.f32", "ld.global.cs.f32",
	  "ld.global.lu.f32", "ld.global.L1::no_allocate.f32", "ld.global.L1::evict_first.f32",
	  "ld.global.L1::evict_last.f32" },
	{ "ld.global.nc.f32", "ld.global.ca.nc.f32", "ld.global.cg.nc.f32", "ld.global.cs.nc.f32",
	  NULL, "ld.global.nc.L1::no_allocate.f32", "ld.global.nc.L1::evict_first.f32",
	  "ld.global.nc.L1::evict_last.f32" },
	{ "ld.global.v4.f32", "ld.global.ca.v4.f32", "ld.global.cg.v4.f32", "ld.global.cs.v4.f32",
	  "ld.global.lu.v4.f32", "ld.global.L1::no_allocate.v4.f32",
	  "ld.global.L1::evict_first.v4.f32", "ld.global.L1::evict_last.v4.f32" },
	{ "ld.global.L2::cache_hint.f32", "ld.global.ca.L2::cache_hint.f32",
	  "ld.global.cg.L2::cache_hint.f32", "ld.global.cs.L2::cache_hint.f32",
	  "ld.global.lu.L2::cache_hint.f32", "ld.global.L1::no_allocate.L2::cache_hint.f32",
	  "ld.global.L1::evict_first.L2::cache_hint.f32",
	  "ld.global.L1::evict_last.L2::cache_hint.f32" },
	{ "ld.global.nc.L2::128B.v2.f32", "ld.global.ca.nc.L2::128B.v2.f32",
	  "ld.global.cg.nc.L2::128B.v2.f32", "ld.global.cs.nc.L2::128B.v2.f32", NULL,
	  "ld.global.nc.L1::no_allocate.L2::128B.v2.f32",
	  "ld.global.nc.L1::evict_first.L2::128B.v2.f32",
	  "ld.global.nc.L1::evict_last.L2::128B.v2.f32" },
	{ "ld.weak.global.u8", "ld.weak.global.ca.u8", "ld.weak.global.cg.u8",
	  "ld.weak.global.cs.u8", "ld.weak.global.lu.u8", "ld.weak.global.L1::no_allocate.u8",
	  "ld.weak.global.L1::evict_first.u8", "ld.weak.global.L1::evict_last.u8" },
	{ "ld.f32", "ld.ca.f32", "ld.cg.f32", "ld.cs.f32", "ld.lu.f32", "ld.L1::no_allocate.f32",
	  "ld.L1::evict_first.f32", "ld.L1::evict_last.f32" },
	{ "ld.global.L2::256B.b128", "ld.global.ca.L2::256B.b128", "ld.global.cg.L2::256B.b128",
	  "ld.global.cs.L2::256B.b128", "ld.global.lu.L2::256B.b128",
	  "ld.global.L1::no_allocate.L2::256B.b128", "ld.global.L1::evict_first.L2::256B.b128",
	  "ld.global.L1::evict_last.L2::256B.b128" },
};

static struct ptx_module *parse(const char *name, const char *text, size_t len)
{
	struct ptx_module *m = NULL;

	if (ptx_parse(name, text, len, &m)) {
		fprintf(stderr, "%s\n", error_message());
		CHECK(!"parses");
	}
	return m;
}

/* What a load looks like after action a (the parser's view). */
static void check_after(const struct ptx_load *before, const struct ptx_load *after,
			enum load_action a)
{
	static const enum ptx_cache_op cop[LOAD_ACTION__COUNT] = {
		[LOAD_ACTION_CACHE] = PTX_CACHE_OP_CA, [LOAD_ACTION_BYPASS] = PTX_CACHE_OP_CG,
		[LOAD_ACTION_STREAM] = PTX_CACHE_OP_CS, [LOAD_ACTION_LAST_USE] = PTX_CACHE_OP_LU,
	};
	static const enum ptx_l1_eviction l1[LOAD_ACTION__COUNT] = {
		[LOAD_ACTION_NO_ALLOCATE] = PTX_L1_NO_ALLOCATE,
		[LOAD_ACTION_EVICT_FIRST] = PTX_L1_EVICT_FIRST,
		[LOAD_ACTION_EVICT_LAST] = PTX_L1_EVICT_LAST,
	};

	CHECK_INT(after->cache_op, cop[a]);
	CHECK_INT(after->l1_eviction, l1[a]);
	CHECK_INT(after->nc, before->nc);
	CHECK_INT(after->vector, before->vector);
	CHECK_INT(after->bits, before->bits);
	CHECK_INT(after->has_l2_qualifier, before->has_l2_qualifier);
	CHECK_INT(after->space, before->space);
	CHECK_INT(after->param, before->param);
	CHECK_INT(after->ptx_line, before->ptx_line);
	CHECK_STR(after->dest, before->dest);
	CHECK_STR(after->address, before->address);
	CHECK((!after->predicate && !before->predicate) ||
	      (after->predicate && before->predicate && !strcmp(after->predicate, before->predicate)));
}

/*
 * The output equals the input with each edited opcode replaced: walk both
 * texts, skipping the opcodes at the loads' offsets.
 */
static int same_but_opcodes(const struct ptx_module *a, const struct ptx_module *b)
{
	size_t pa = 0, pb = 0, i, j;

	for (i = 0; i < a->nr_functions; i++) {
		if (b->nr_functions != a->nr_functions ||
		    b->functions[i].nr_loads != a->functions[i].nr_loads)
			return 0;
		for (j = 0; j < a->functions[i].nr_loads; j++) {
			const struct ptx_load *la = &a->functions[i].loads[j];
			const struct ptx_load *lb = &b->functions[i].loads[j];
			size_t na = la->text_offset - pa, nb = lb->text_offset - pb;
			if (na != nb || memcmp(a->text + pa, b->text + pb, na))
				return 0;
			pa = la->text_offset + strlen(la->opcode);
			pb = lb->text_offset + strlen(lb->opcode);
		}
	}
	return a->len - pa == b->len - pb && !memcmp(a->text + pa, b->text + pb, a->len - pa);
}

static void test_table(void)
{
	struct ptx_module *m = parse("k.ptx", module_text, sizeof(module_text) - 1);
	const struct ptx_function *f;
	int a;
	size_t i;

	if (!m)
		return;
	f = ptx_module_find(m, "k");
	CHECK(f && f->nr_loads == NR_LOADS + 1);
	if (!f || f->nr_loads != NR_LOADS + 1) {
		ptx_module_free(m);
		return;
	}
	for (i = 0; i < NR_LOADS; i++)
		CHECK(f->loads[i].patchable);
	CHECK(!f->loads[NR_LOADS].patchable);   /* .ca is strong */

	for (a = 0; a < LOAD_ACTION__COUNT; a++) {
		struct ptx_load_edit edits[NR_LOADS];
		struct strbuf out = STRBUF_INIT;
		size_t n = 0;
		int ret;

		/* ptx_load_rewrite_opcode: the form itself. */
		for (i = 0; i < NR_LOADS; i++) {
			struct strbuf op = STRBUF_INIT;
			const char *want = a == LOAD_ACTION_AS_BUILT ? f->loads[i].opcode :
					   expected[i][a];

			strbuf_addstr(&op, "x");
			ret = ptx_load_rewrite_opcode(&f->loads[i], (enum load_action)a, &op);
			if (want) {
				CHECK_INT(ret, 0);
				CHECK_STR(op.buf + 1, want);
				edits[n].function = "k";
				edits[n].ordinal = (unsigned)i;
				edits[n].action = (enum load_action)a;
				edits[n].l2 = L2_PRIORITY_NONE;
				n++;
			} else {
				CHECK_INT(ret, CA_E_INPUT);
				CHECK_STR(op.buf, "x");
				CHECK(strstr(error_message(), ".nc") != NULL);
			}
			strbuf_release(&op);
		}

		/* The whole module: only the opcodes change, everything else parses the same. */
		strbuf_addstr(&out, "// before\n");
		ret = ptx_rewrite_loads(m, edits, n, &out);
		CHECK_INT(ret, 0);
		if (!ret) {
			struct ptx_module *r = parse("out.ptx", out.buf + 10, out.len - 10);
			CHECK(!strncmp(out.buf, "// before\n", 10));
			if (r) {
				const struct ptx_function *g = ptx_module_find(r, "k");
				CHECK(same_but_opcodes(m, r));
				for (i = 0; g && i < NR_LOADS; i++) {
					if (!expected[i][a]) {
						CHECK_STR(g->loads[i].opcode, f->loads[i].opcode);
						continue;
					}
					CHECK_STR(g->loads[i].opcode, expected[i][a]);
					check_after(&f->loads[i], &g->loads[i], (enum load_action)a);
				}
				/* The unedited .ca load is untouched. */
				CHECK(g && !strcmp(g->loads[NR_LOADS].opcode, "ld.global.ca.f32"));
				ptx_module_free(r);
			}
		}
		strbuf_release(&out);
	}
	/* The tab after the first opcode and the predicates survive. */
	{
		struct ptx_load_edit e[2] = { { "k", 0, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE },
					     { "k", 1, LOAD_ACTION_BYPASS, L2_PRIORITY_NONE } };
		struct strbuf out = STRBUF_INIT;
		CHECK_INT(ptx_rewrite_loads(m, e, 2, &out), 0);
		CHECK(strstr(out.buf, "\tld.global.L1::no_allocate.f32 \t%f1, [%rd2];\n") != NULL);
		CHECK(strstr(out.buf, "\t@%p1 ld.global.cg.nc.f32 %f2, [%rd2+4];\n") != NULL);
		CHECK_INT(out.len, sizeof(module_text) - 1 + strlen(".L1::no_allocate") + strlen(".cg"));
		strbuf_release(&out);
	}
	ptx_module_free(m);
}

static void expect_fail(const struct ptx_module *m, const struct ptx_load_edit *e, size_t n,
			const char *needle)
{
	struct strbuf out = STRBUF_INIT;
	int ret;

	strbuf_addstr(&out, "keep");
	ret = ptx_rewrite_loads(m, e, n, &out);
	CHECK_INT(ret, CA_E_INPUT);
	CHECK_STR(out.buf, "keep");
	if (!strstr(error_message(), needle)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", error_message(), needle);
		CHECK(!"error message");
	}
	strbuf_release(&out);
}

static void test_errors(void)
{
	struct ptx_module *m = parse("k.ptx", module_text, sizeof(module_text) - 1);
	struct ptx_load_edit e[2] = { { 0 } };
	struct strbuf out = STRBUF_INIT;

	if (!m)
		return;
	e[0].function = "nope";
	e[0].ordinal = 0;
	e[0].action = LOAD_ACTION_BYPASS;
	expect_fail(m, e, 1, "no function 'nope'");

	e[0].function = "k";
	e[0].ordinal = 9;
	expect_fail(m, e, 1, "has 9 global loads: no load 9");

	e[0].ordinal = 8;   /* the .ca load */
	expect_fail(m, e, 1, "load 8 of 'k' (PTX line 23, 'ld.global.ca.f32') cannot be rewritten");

	e[0].ordinal = 1;   /* .nc */
	e[0].action = LOAD_ACTION_LAST_USE;
	expect_fail(m, e, 1, "load 1 of 'k' (PTX line 16)");

	e[0].action = LOAD_ACTION_STREAM;
	e[1] = e[0];
	e[1].action = LOAD_ACTION_CACHE;
	expect_fail(m, e, 2, "two actions");

	/* The same action twice is fine, and so are no edits at all. */
	e[1].action = LOAD_ACTION_STREAM;
	CHECK_INT(ptx_rewrite_loads(m, e, 2, &out), 0);
	CHECK(strstr(out.buf, "ld.global.cs.nc.f32 %f2") != NULL);
	strbuf_reset(&out);
	CHECK_INT(ptx_rewrite_loads(m, NULL, 0, &out), 0);
	CHECK_INT(out.len, sizeof(module_text) - 1);
	CHECK(!memcmp(out.buf, module_text, out.len));
	strbuf_release(&out);
	ptx_module_free(m);
}

static void test_action_names(void)
{
	int a;
	enum load_action got;

	for (a = 0; a < LOAD_ACTION__COUNT; a++) {
		if (a == LOAD_ACTION_AS_BUILT) {
			/* no name of its own in plan.json */
			CHECK_INT(load_action_parse(load_action_name((enum load_action)a), &got), -1);
			continue;
		}
		CHECK_INT(load_action_parse(load_action_name((enum load_action)a), &got), 0);
		CHECK_INT(got, a);
	}
	CHECK_STR(load_action_name(LOAD_ACTION_NO_ALLOCATE), "L1::no_allocate");
	CHECK_STR(load_action_name(LOAD_ACTION_BYPASS), "bypass");
	CHECK_INT(load_action_parse("no_allocate", &got), -1);
	CHECK_INT(load_action_parse("", &got), -1);
	CHECK_INT(load_action_parse("Bypass", &got), -1);
}

/* The spelling of a load's whole form: L1 alone, L2 alone, both with '+'. */
static void test_form_names(void)
{
	enum load_action a, ga;
	enum l2_priority p, gp;

	for (a = 0; a < LOAD_ACTION__COUNT; a++) {
		for (p = 0; p < L2_PRIORITY__COUNT; p++) {
			if (a == LOAD_ACTION_AS_BUILT && p == L2_PRIORITY_NONE)
				continue;   /* changes nothing: never written */
			CHECK_INT(load_form_parse(load_form_name(a, p), &ga, &gp), 0);
			CHECK_INT(ga, a);
			CHECK_INT(gp, p);
		}
	}
	CHECK_STR(load_form_name(LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_EVICT_FIRST),
		  "L1::no_allocate+L2::evict_first");
	CHECK_STR(load_form_name(LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST), "L2::evict_last");
	CHECK_STR(load_form_name(LOAD_ACTION_DEFAULT, L2_PRIORITY_NONE), "default");
	CHECK_INT(load_form_parse("default+L2::evict_normal", &ga, &gp), 0);
	CHECK(ga == LOAD_ACTION_DEFAULT && gp == L2_PRIORITY_EVICT_NORMAL);
	CHECK_INT(load_form_parse("L2::evict_first+L1::no_allocate", &ga, &gp), -1);
	CHECK_INT(load_form_parse("L2::evict_first+L2::evict_last", &ga, &gp), -1);
	CHECK_INT(load_form_parse("default+", &ga, &gp), -1);
	CHECK_INT(load_form_parse("+L2::evict_last", &ga, &gp), -1);
	CHECK_INT(load_form_parse("L2::evict_none", &ga, &gp), -1);
	CHECK_INT(load_form_parse("as_built", &ga, &gp), -1);
	CHECK_INT(load_form_parse("none", &ga, &gp), -1);
	CHECK_INT(load_form_parse("L2::evict_last ", &ga, &gp), -1);
}

/* The number of times needle occurs in hay. */
static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

/* L2 priorities: the hinted opcodes, the policy operand, one createpolicy
 * per function and priority at the top of its body, and the refusals. */
/* sb with its first "from" replaced by "to". */
static void replace_first(struct strbuf *sb, const char *from, const char *to)
{
	char *at = strstr(sb->buf, from);
	struct strbuf r = STRBUF_INIT;

	CHECK(at != NULL);
	if (!at)
		return;
	strbuf_add(&r, sb->buf, (size_t)(at - sb->buf));
	strbuf_addstr(&r, to);
	strbuf_addstr(&r, at + strlen(from));
	strbuf_release(sb);
	*sb = r;
}

static void test_l2(void)
{
	struct ptx_module *m = parse("k.ptx", module_text, sizeof(module_text) - 1), *r;
	struct ptx_load_edit e[5] = {
		{ "k", 0, LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_FIRST },
		{ "k", 1, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_EVICT_LAST },
		{ "k", 2, LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST },
		{ "k", 4, LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_FIRST },
		{ "k", 6, LOAD_ACTION_DEFAULT, L2_PRIORITY_EVICT_NORMAL },
	};
	struct strbuf out = STRBUF_INIT;

	if (!m)
		return;
	CHECK_INT(ptx_rewrite_loads(m, e, 5, &out), 0);
	CHECK(strstr(out.buf, "\tld.global.L2::cache_hint.f32 \t%f1, [%rd2], %ca_l2p_first;\n") != NULL);
	CHECK(strstr(out.buf, "\t@%p1 ld.global.nc.L1::no_allocate.L2::cache_hint.f32 %f2, [%rd2+4], "
			      "%ca_l2p_last;\n") != NULL);
	CHECK(strstr(out.buf, "\tld.global.cs.L2::cache_hint.v4.f32 {%f3, %f4, %f5, %f6}, [%rd2+16], "
			      "%ca_l2p_last;\n") != NULL);
	/* the prefetch size stays after the hint */
	CHECK(strstr(out.buf, "ld.global.nc.L1::no_allocate.L2::cache_hint.L2::128B.v2.f32 {%f8, %f9}, "
			      "[%rd2+64], %ca_l2p_first;") != NULL);
	CHECK(strstr(out.buf, "\tld.L2::cache_hint.f32 %f10, [%rd1+8], %ca_l2p_normal;\n") != NULL);
	CHECK_INT(count_of(out.buf, "createpolicy.fractional.L2::evict_first.b64 %ca_l2p_first, 1.0;"), 1);
	CHECK_INT(count_of(out.buf, "createpolicy.fractional.L2::evict_last.b64 %ca_l2p_last, 1.0;"), 1);
	CHECK_INT(count_of(out.buf, "createpolicy.fractional.L2::evict_normal.b64 %ca_l2p_normal, 1.0;"), 1);
	CHECK_INT(count_of(out.buf, ".reg .b64 %ca_l2p_"), 3);
	/* hoisted: before the body's first instruction */
	CHECK(strstr(out.buf, "createpolicy.fractional.L2::evict_first") <
	      strstr(out.buf, "ld.param.u64"));
	r = parse("out.ptx", out.buf, out.len);
	if (r) {
		const struct ptx_function *g = ptx_module_find(r, "k");

		CHECK(g && g->nr_loads == NR_LOADS + 1);
		CHECK(g && g->loads[0].has_l2_qualifier && g->loads[6].has_l2_qualifier);
		if (g && g->nr_loads == NR_LOADS + 1) {
			/* each hint traced to its createpolicy */
			CHECK_INT(ptx_load_l2_priority(r, g, &g->loads[0]), L2_PRIORITY_EVICT_FIRST);
			CHECK_INT(ptx_load_l2_priority(r, g, &g->loads[1]), L2_PRIORITY_EVICT_LAST);
			CHECK_INT(ptx_load_l2_priority(r, g, &g->loads[6]), L2_PRIORITY_EVICT_NORMAL);
			/* the program's own hint: %rd3, its createpolicy evict_last */
			CHECK_INT(ptx_load_l2_priority(r, g, &g->loads[3]), L2_PRIORITY_EVICT_LAST);
			CHECK_INT(ptx_load_l2_priority(r, g, &g->loads[5]), L2_PRIORITY_NONE);
		}
		ptx_module_free(r);
	}
	strbuf_reset(&out);

	/* a load with an L2 cache hint of the program's own (Triton's
	 * eviction_policy): the plan's policy takes its operand's place, the
	 * program's createpolicy stays (others may use it), and the L1 action
	 * still applies */
	{
		struct ptx_load_edit h = { "k", 3, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_EVICT_FIRST };

		CHECK(ptx_load_l2_refused(&ptx_module_find(m, "k")->loads[3]) == NULL);
		CHECK_INT(ptx_rewrite_loads(m, &h, 1, &out), 0);
		CHECK(strstr(out.buf, "\tld.global.L1::no_allocate.L2::cache_hint.f32 %f7, [%rd2+32], "
			     "%ca_l2p_first;\n") != NULL);
		CHECK(strstr(out.buf, "createpolicy.fractional.L2::evict_last.b64 %rd3, 1.0;") != NULL);
		r = parse("own.ptx", out.buf, out.len);
		if (r) {
			const struct ptx_function *g = ptx_module_find(r, "k");

			CHECK(g && g->nr_loads == NR_LOADS + 1);
			if (g && g->nr_loads == NR_LOADS + 1)
				CHECK_INT(ptx_load_l2_priority(r, g, &g->loads[3]),
					  L2_PRIORITY_EVICT_FIRST);
			ptx_module_free(r);
		}
		strbuf_reset(&out);
	}
	/* "default" on a load with a hint of its own: a CUDA load keeps the
	 * hint (only the L1 side is the plan's); a Triton load (its line in a
	 * .py file) becomes the plain load a tl.load without eviction_policy
	 * compiles to, as the Python patch writes it */
	{
		struct ptx_load_edit d = { "k", 3, LOAD_ACTION_DEFAULT, L2_PRIORITY_NONE };
		struct strbuf py = STRBUF_INIT;
		struct ptx_module *pm;

		CHECK_INT(ptx_rewrite_loads(m, &d, 1, &out), 0);
		CHECK(strstr(out.buf, "\tld.global.L2::cache_hint.f32 %f7, [%rd2+32], %rd3;\n") != NULL);
		strbuf_reset(&out);
		strbuf_addstr(&py, module_text);
		replace_first(&py, ".address_size 64\n", ".address_size 64\n.file 1 \"/k/kernels.py\"\n");
		replace_first(&py, "\tld.global.L1::evict_last.L2::cache_hint.f32",
				     "\t.loc 1 17 20\n\tld.global.L1::evict_last.L2::cache_hint.f32");
		pm = parse("py.ptx", py.buf, py.len);
		if (pm) {
			CHECK_INT(ptx_rewrite_loads(pm, &d, 1, &out), 0);
			CHECK(strstr(out.buf, "\tld.global.f32 %f7, [%rd2+32];\n") != NULL);
			ptx_module_free(pm);
		}
		strbuf_reset(&out);
		strbuf_release(&py);
	}
	/* a bare L2 eviction qualifier of its own (256-bit loads) is refused */
	{
		struct ptx_load bare;

		memset(&bare, 0, sizeof(bare));
		bare.opcode = "ld.global.L2::evict_last.v8.f32";
		CHECK(ptx_load_l2_refused(&bare) != NULL &&
		      strstr(ptx_load_l2_refused(&bare), "L2 eviction priority qualifier of its own"));
	}
	/* one load, two priorities */
	{
		struct ptx_load_edit two[2] = { { "k", 0, LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_FIRST },
						{ "k", 0, LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST } };

		CHECK_INT(ptx_rewrite_loads(m, two, 2, &out), CA_E_INPUT);
		CHECK(strstr(error_message(), "'L2::evict_first' and 'L2::evict_last'") != NULL);
	}
	ptx_module_free(m);

	/* a hint whose policy is no createpolicy of the function (a parameter) */
	{
		static const char text[] =
			".version 8.0\n.target sm_90\n.address_size 64\n"
			".visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)\n{\n"
			"\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<2>;\n"
			"\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u64 %rd3, [k_param_1];\n"
			"\tcvta.to.global.u64 %rd2, %rd1;\n"
			"\tld.global.L2::cache_hint.f32 %f1, [%rd2], %rd3;\n\tret;\n}\n";

		m = parse("q.ptx", text, sizeof(text) - 1);
		if (m) {
			const struct ptx_function *g = ptx_module_find(m, "k");

			CHECK(g && g->nr_loads == 1);
			if (g && g->nr_loads == 1)
				CHECK_INT(ptx_load_l2_priority(m, g, &g->loads[0]), L2_PRIORITY__COUNT);
			ptx_module_free(m);
		}
	}
	/* a module that names %ca_l2p already gets another prefix */
	{
		static const char text[] =
			".version 8.0\n.target sm_90\n.address_size 64\n"
			".visible .entry k(.param .u64 k_param_0)\n{\n"
			"\t.reg .b64 %rd<3>;\n\t.reg .b64 %ca_l2p_x;\n\t.reg .f32 %f<2>;\n"
			"\tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
			"\tld.global.f32 %f1, [%rd2];\n\tret;\n}\n";
		struct ptx_load_edit one = { "k", 0, LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST };

		m = parse("p.ptx", text, sizeof(text) - 1);
		strbuf_reset(&out);
		CHECK_INT(m ? ptx_rewrite_loads(m, &one, 1, &out) : -1, 0);
		CHECK(strstr(out.buf, "[%rd2], %ca1_l2p_last;") != NULL);
		ptx_module_free(m);
	}
	/* before PTX ISA 7.4 or sm_80: refused, saying what is needed */
	{
		static const char text[] =
			".version 7.0\n.target sm_75\n.address_size 64\n"
			".visible .entry k(.param .u64 k_param_0)\n{\n"
			"\t.reg .b64 %rd<3>;\n\t.reg .f32 %f<2>;\n"
			"\tld.param.u64 %rd1, [k_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
			"\tld.global.f32 %f1, [%rd2];\n\tret;\n}\n";
		struct ptx_load_edit one = { "k", 0, LOAD_ACTION_AS_BUILT, L2_PRIORITY_EVICT_LAST };
		struct ptx_load_edit l1 = { "k", 0, LOAD_ACTION_NO_ALLOCATE, L2_PRIORITY_NONE };

		m = parse("old.ptx", text, sizeof(text) - 1);
		strbuf_reset(&out);
		CHECK_INT(m ? ptx_rewrite_loads(m, &one, 1, &out) : -1, CA_E_INPUT);
		CHECK(strstr(error_message(), "PTX ISA 7.4") != NULL);
		CHECK_INT(out.len, 0);
		/* the L1 form alone is fine there */
		CHECK_INT(m ? ptx_rewrite_loads(m, &l1, 1, &out) : -1, 0);
		ptx_module_free(m);
	}
	strbuf_release(&out);
}

/* Every fixture, every action, every patchable load at once. */
static void test_fixtures(void)
{
	static const char *const names[] = {
		"cacheops.ptx", "func.ptx", "inline_qual.ptx", "loop.ptx", "predicated.ptx",
		"shared.ptx", "strong.ptx", "vectors.ptx",
	};
	size_t k;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct strbuf sb = STRBUF_INIT;
		struct ptx_module *m;
		char *rel = xasprintf("tests/fixtures/ptx/%s", names[k]);
		int a;

		CHECK_INT(strbuf_read_file(&sb, check_source_path(rel), 0), 0);
		free(rel);
		m = parse(names[k], sb.buf, sb.len);
		strbuf_release(&sb);
		if (!m)
			continue;
		for (a = 0; a < LOAD_ACTION__COUNT; a++) {
			struct ptx_load_edit *e = NULL;
			size_t n = 0, alloc = 0, i, j;
			struct strbuf out = STRBUF_INIT;
			struct ptx_module *r;

			for (i = 0; i < m->nr_functions; i++)
				for (j = 0; j < m->functions[i].nr_loads; j++) {
					const struct ptx_load *ld = &m->functions[i].loads[j];
					if (!ld->patchable || (a == LOAD_ACTION_LAST_USE && ld->nc))
						continue;
					ALLOC_GROW(e, n + 1, alloc);
					e[n].function = m->functions[i].name;
					e[n].ordinal = ld->ordinal;
					e[n].action = (enum load_action)a;
					e[n].l2 = L2_PRIORITY_NONE;
					n++;
				}
			CHECK(n > 0);
			CHECK_INT(ptx_rewrite_loads(m, e, n, &out), 0);
			if (a == LOAD_ACTION_AS_BUILT) {
				/* the form as built, and no L2 priority: nothing changes */
				CHECK(out.len == m->len && !memcmp(out.buf, m->text, m->len));
				strbuf_release(&out);
				free(e);
				continue;
			}
			r = parse("out.ptx", out.buf, out.len);
			if (r) {
				CHECK(same_but_opcodes(m, r));
				for (i = 0; i < n; i++) {
					const struct ptx_function *f = ptx_module_find(m, e[i].function);
					const struct ptx_function *g = ptx_module_find(r, e[i].function);
					if (f && g && e[i].ordinal < g->nr_loads)
						check_after(&f->loads[e[i].ordinal], &g->loads[e[i].ordinal],
							    (enum load_action)a);
				}
				ptx_module_free(r);
			}
			strbuf_release(&out);
			free(e);
		}
		ptx_module_free(m);
	}
}

/* a variant module cut to one kernel: the other kernel's body is "{ ret; }",
 * the kept kernel is byte for byte the same, and the result parses */
static void test_keep_one_entry(void)
{
	struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
	struct ptx_module *m, *r;
	const struct ptx_function *walk, *gs;

	CHECK_INT(strbuf_read_file(&sb, check_source_path("tests/fixtures/ptx/loop.ptx"), 0), 0);
	m = parse("loop.ptx", sb.buf, sb.len);
	if (!m) {
		strbuf_release(&sb);
		return;
	}
	CHECK_INT(ptx_keep_one_entry(m, "_Z11grid_stridePKfPKiS0_Pfi", &out), 0);
	r = parse("cut.ptx", out.buf, out.len);
	CHECK(r != NULL);
	if (r) {
		walk = ptx_module_find(r, "_Z4walkPKfS0_Pf");
		gs = ptx_module_find(r, "_Z11grid_stridePKfPKiS0_Pfi");
		CHECK(walk && walk->nr_loads == 0 && walk->nr_params == ptx_module_find(m, "_Z4walkPKfS0_Pf")->nr_params);
		CHECK(gs && gs->nr_loads == ptx_module_find(m, "_Z11grid_stridePKfPKiS0_Pfi")->nr_loads);
		CHECK(gs && !memcmp(out.buf + gs->body_begin, m->text + ptx_module_find(m, "_Z11grid_stridePKfPKiS0_Pfi")->body_begin,
				    gs->body_end - gs->body_begin + 1));
		CHECK(strstr(out.buf, "{\n\tret;\n}") != NULL);
		ptx_module_free(r);
	}
	strbuf_reset(&out);
	CHECK_INT(ptx_keep_one_entry(m, "no_such_kernel", &out), CA_E_INPUT);
	strbuf_release(&out);
	strbuf_release(&sb);
	ptx_module_free(m);
}

/*
 * The priority a rebuilt load carries when it was written with libcu++'s
 * cuda::annotated_ptr (tests/fixtures/ptx/annotated.ptx, nvcc 13.0): no
 * createpolicy, a descriptor moved or selected into the register. A
 * policy that is a parameter, or a createpolicy overwritten before the
 * load, carries no priority the PTX shows.
 */
static void test_annotated_ptr(void)
{
	static const struct { const char *kernel; enum l2_priority l2; } want[] = {
		{ "_Z12ap_streamingPKfPfi", L2_PRIORITY_EVICT_FIRST },
		{ "_Z13ap_persistingPKfPfi", L2_PRIORITY_EVICT_LAST },
		{ "_Z9ap_normalPKfPfi", L2_PRIORITY_EVICT_NORMAL },
		{ "_Z9ap_globalPKfPfi", L2_PRIORITY_EVICT_UNCHANGED },
		{ "_Z11ap_fractionPKfPfi", L2_PRIORITY_EVICT_LAST },
		{ "_Z15ap_param_policyPKfPfyi", L2_PRIORITY__COUNT },
		{ "_Z14ap_overwrittenPKfPfyi", L2_PRIORITY__COUNT },
	};
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *m;
	size_t i, j;

	CHECK_INT(strbuf_read_file(&sb, check_source_path("tests/fixtures/ptx/annotated.ptx"), 0), 0);
	m = parse("annotated.ptx", sb.buf, sb.len);
	strbuf_release(&sb);
	if (!m)
		return;
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		const struct ptx_function *f = ptx_module_find(m, want[i].kernel);
		size_t hinted = 0;

		CHECK(f != NULL);
		if (!f)
			continue;
		for (j = 0; j < f->nr_loads; j++) {
			if (!strstr(f->loads[j].opcode, ".L2::cache_hint"))
				continue;
			hinted++;
			if (ptx_load_l2_priority(m, f, &f->loads[j]) != want[i].l2)
				fprintf(stderr, "%s load %zu: priority %d, want %d\n", want[i].kernel,
					j, (int)ptx_load_l2_priority(m, f, &f->loads[j]),
					(int)want[i].l2);
			CHECK_INT(ptx_load_l2_priority(m, f, &f->loads[j]), want[i].l2);
		}
		CHECK_INT(hinted, 1);
	}
	ptx_module_free(m);

	/* a guarded createpolicy is no priority the load surely carries; the
	 * same unguarded one is, through a comment, a .loc and a label */
	{
		static const char text[] =
			".version 8.0\n.target sm_90\n.address_size 64\n"
			".visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)\n{\n"
			"\t.reg .pred %p<2>;\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<3>;\n"
			"\tld.param.u64 %rd1, [k_param_0];\n\tld.param.u32 %r1, [k_param_1];\n"
			"\tsetp.eq.s32 %p1, %r1, 0;\n\tcvta.to.global.u64 %rd2, %rd1;\n"
			"\tcreatepolicy.fractional.L2::evict_first.b64 %rd3, 1.0;\n"
			"$L__x:\n\t// begin inline asm\n\t.loc 1 7 3\n"
			"\tld.global.L2::cache_hint.f32 %f1, [%rd2], %rd3;\n"
			"\t@%p1 createpolicy.fractional.L2::evict_last.b64 %rd3, 1.0;\n"
			"\tld.global.L2::cache_hint.f32 %f2, [%rd2], %rd3;\n\tret;\n}\n";
		const struct ptx_function *g;

		m = parse("g.ptx", text, sizeof(text) - 1);
		if (m) {
			g = ptx_module_find(m, "k");
			CHECK(g && g->nr_loads == 2);
			if (g && g->nr_loads == 2) {
				CHECK_INT(ptx_load_l2_priority(m, g, &g->loads[0]), L2_PRIORITY_EVICT_FIRST);
				CHECK_INT(ptx_load_l2_priority(m, g, &g->loads[1]), L2_PRIORITY__COUNT);
			}
			ptx_module_free(m);
		}
	}
}

int main(void)
{
	test_form_names();
	test_l2();
	test_keep_one_entry();
	test_action_names();
	test_table();
	test_errors();
	test_fixtures();
	test_annotated_ptr();
	return check_done();
}
