/*
 * The monitor instrumentation on real nvcc PTX (tests/fixtures/monitor/):
 * the layout, the promise that the original text is kept line for line,
 * and what the inserted code computes. For the last, a small warp
 * evaluator runs the inserted lines (and only those: straight-line code
 * with the dozen opcodes the instrumentation writes) for 32 lanes with
 * chosen addresses, guards and active masks, and the counter array is
 * checked against the counts worked out by hand.
 */
#include <ctype.h>
#include <stdint.h>

#include "base/error.h"
#include "analysis/monitor_counts.h"
#include "analysis/ptx.h"
#include "analysis/ptx_instrument.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

#define LANES 32
#define MAX_SLOTS 1024

/* ---- fixtures ---- */

static int expect_failure;  /* quiet while a test expects an error */

struct instrumented {
	struct strbuf src;          /* original text */
	struct ptx_module *m;
	struct strbuf out;          /* instrumented text */
	json_t *layout;
};

static int instrument_file(struct instrumented *t, const char *rel,
			   const struct ptx_instrument_options *opt)
{
	int ret;

	strbuf_init(&t->src, 0);
	strbuf_init(&t->out, 0);
	t->m = NULL;
	t->layout = NULL;
	ret = strbuf_read_file(&t->src, check_source_path(rel), 0);
	if (!ret)
		ret = ptx_parse(rel, t->src.buf, t->src.len, &t->m);
	if (!ret)
		ret = ptx_instrument(t->m, opt, &t->out, &t->layout);
	if (ret && !expect_failure)
		fprintf(stderr, "%s: %s\n", rel, error_message());
	return ret;
}

static void instrumented_release(struct instrumented *t)
{
	strbuf_release(&t->src);
	strbuf_release(&t->out);
	ptx_module_free(t->m);
	json_decref(t->layout);
}

static json_t *layout_function(json_t *layout, const char *name)
{
	size_t i;
	json_t *f;

	json_array_foreach(json_object_get(layout, "functions"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "name")), name))
			return f;
	return NULL;
}

static long long load_slot(json_t *layout, const char *fn, unsigned ordinal, const char *what)
{
	json_t *f = layout_function(layout, fn), *l;
	size_t i;

	json_array_foreach(json_object_get(f, "loads"), i, l)
		if (json_integer_value(json_object_get(l, "ordinal")) == ordinal)
			return json_integer_value(json_object_get(l, what));
	return -1;
}

static long long ds_slot(json_t *layout, const char *fn, int param, const char *what)
{
	json_t *f = layout_function(layout, fn), *d;
	size_t i;

	json_array_foreach(json_object_get(f, "data_structures"), i, d)
		if (json_integer_value(json_object_get(d, "param")) == param)
			return json_integer_value(json_object_get(d, what));
	return -1;
}

/* An inserted line: names a monitor register or the counters, or is one of
 * the instrumentation's comments. */
static int is_inserted(const char *line, size_t len)
{
	char buf[512];
	const char *p;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (p = buf; *p == '\t' || *p == ' '; p++)
		;
	return strstr(buf, "%ca_") || !strncmp(p, "// cacheadvise:", 15) ||
	       strstr(buf, ".u64 __cacheadvise_counters[");
}

/* The instrumented text without its inserted lines. */
static void strip_inserted(const char *text, struct strbuf *out)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (!is_inserted(p, len))
			strbuf_add(out, p, len);
		p += len;
	}
}

/*
 * The inserted lines that start at the line containing marker, inside the
 * function called fn: every following line up to the first original one.
 */
static char *nth_block_after(const char *text, const char *fn, const char *marker, int nth)
{
	char *decl = xasprintf(" %s(", fn);
	const char *f = strstr(text, decl), *p, *end;

	free(decl);
	if (!f)
		return NULL;
	for (p = f; nth >= 0 && p; nth--)
		p = strstr(p == f ? f : p + 1, marker);
	if (!p)
		return NULL;
	while (p > text && p[-1] != '\n')
		p--;
	end = p;
	while (*end) {
		const char *nl = strchr(end, '\n');
		size_t len = nl ? (size_t)(nl - end + 1) : strlen(end);

		if (!is_inserted(end, len))
			break;
		end += len;
	}
	return xstrndup(p, (size_t)(end - p));
}

static char *block_after(const char *text, const char *fn, const char *marker)
{
	return nth_block_after(text, fn, marker, 0);
}

/* ---- the warp evaluator ---- */

struct reg {
	char name[48];
	uint64_t v[LANES];
};

struct warp {
	struct reg regs[96];
	size_t nr;
	uint32_t active;
	int global[LANES];          /* isspacep.global per lane */
	uint64_t counters[MAX_SLOTS];
	int errors;
};

static void warp_init(struct warp *w, uint32_t active)
{
	int i;

	memset(w, 0, sizeof(*w));
	w->active = active;
	for (i = 0; i < LANES; i++)
		w->global[i] = 1;
}

static uint64_t *reg(struct warp *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->nr; i++)
		if (!strcmp(w->regs[i].name, name))
			return w->regs[i].v;
	if (w->nr == sizeof(w->regs) / sizeof(w->regs[0]) || strlen(name) >= 48) {
		w->errors++;
		return w->regs[0].v;
	}
	strcpy(w->regs[w->nr].name, name);
	return w->regs[w->nr++].v;
}

static void set_reg(struct warp *w, const char *name, uint64_t (*f)(int lane, void *), void *arg)
{
	uint64_t *v = reg(w, name);
	int l;

	for (l = 0; l < LANES; l++)
		v[l] = f(l, arg);
}

static uint64_t value(struct warp *w, const char *tok, int lane)
{
	if (!strcmp(tok, "%lanemask_lt"))
		return (1ull << lane) - 1;
	if (isdigit((unsigned char)tok[0]) || tok[0] == '-')
		return (uint64_t)strtoll(tok, NULL, 0);
	return reg(w, tok)[lane];
}

static int compare(const char *cmp, uint64_t a, uint64_t b)
{
	if (!strcmp(cmp, "eq"))
		return a == b;
	if (!strcmp(cmp, "ne"))
		return a != b;
	if (!strcmp(cmp, "lt"))
		return a < b;
	return -1;
}

static int guard_on(struct warp *w, const char *guard, int negate, int lane)
{
	return !guard || ((reg(w, guard)[lane] != 0) ^ negate);
}

/* Runs one instruction for every active lane, in lock step. */
static void exec_line(struct warp *w, char *line)
{
	char *guard = NULL, *op, *ops[5], *p, *save = NULL;
	int nops = 0, negate = 0, l;
	uint64_t res[LANES];
	int writes = 1;

	while (isspace((unsigned char)*line))
		line++;
	if (!*line || !strncmp(line, "//", 2) || *line == '.')
		return;
	if (*line == '@') {
		guard = strtok_r(line + 1, " \t", &save);
		if (*guard == '!') {
			negate = 1;
			guard++;
		}
		op = strtok_r(NULL, " \t", &save);
	} else {
		op = strtok_r(line, " \t", &save);
	}
	p = strtok_r(NULL, ";", &save);
	for (p = p ? strtok_r(p, ",", &save) : NULL; p && nops < 5; p = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*p))
			p++;
		ops[nops++] = p;
		for (char *e = p + strlen(p); e > p && isspace((unsigned char)e[-1]); e--)
			e[-1] = '\0';
	}
	for (l = 0; l < LANES; l++) {
		uint64_t a, b;
		uint32_t mask;
		int k;

		if (!(w->active >> l & 1))
			continue;
		if (!guard_on(w, guard, negate, l))
			continue;
		if (!strcmp(op, "activemask.b32")) {
			res[l] = w->active;
		} else if (!strncmp(op, "mov.", 4)) {
			res[l] = value(w, ops[1], l);
		} else if (!strcmp(op, "not.pred")) {
			res[l] = !value(w, ops[1], l);
		} else if (!strcmp(op, "and.pred")) {
			res[l] = value(w, ops[1], l) && value(w, ops[2], l);
		} else if (!strcmp(op, "and.b32")) {
			res[l] = value(w, ops[1], l) & value(w, ops[2], l) & 0xffffffffu;
		} else if (!strcmp(op, "add.s64")) {
			res[l] = value(w, ops[1], l) + value(w, ops[2], l);
		} else if (!strcmp(op, "add.u32")) {
			res[l] = (value(w, ops[1], l) + value(w, ops[2], l)) & 0xffffffffu;
		} else if (!strcmp(op, "shr.u64")) {
			res[l] = value(w, ops[1], l) >> value(w, ops[2], l);
		} else if (!strncmp(op, "selp.", 5)) {
			res[l] = value(w, ops[3], l) ? value(w, ops[1], l) : value(w, ops[2], l);
			if (!strcmp(op, "selp.b32"))
				res[l] &= 0xffffffffu;
		} else if (!strncmp(op, "setp.", 5)) {
			char cmp[4] = { 0 };
			int is32 = strstr(op, "32") != NULL, with_and = strstr(op, ".and.") != NULL;

			memcpy(cmp, op + 5, 2);
			a = value(w, ops[1], l);
			b = value(w, ops[2], l);
			if (is32) {
				a &= 0xffffffffu;
				b &= 0xffffffffu;
			}
			res[l] = compare(cmp, a, b) == 1 && (!with_and || value(w, ops[3], l));
		} else if (!strcmp(op, "isspacep.global")) {
			res[l] = w->global[l];
		} else if (!strcmp(op, "vote.sync.ballot.b32")) {
			mask = (uint32_t)value(w, ops[2], l) & w->active;
			res[l] = 0;
			for (k = 0; k < LANES; k++)
				if ((mask >> k & 1) && value(w, ops[1], k))
					res[l] |= 1u << k;
		} else if (!strcmp(op, "match.any.sync.b64")) {
			mask = (uint32_t)value(w, ops[2], l) & w->active;
			res[l] = 0;
			for (k = 0; k < LANES; k++)
				if ((mask >> k & 1) && value(w, ops[1], k) == value(w, ops[1], l))
					res[l] |= 1u << k;
		} else if (!strcmp(op, "redux.sync.add.u32")) {
			mask = (uint32_t)value(w, ops[2], l) & w->active;
			res[l] = 0;
			for (k = 0; k < LANES; k++)
				if (mask >> k & 1)
					res[l] = (res[l] + (value(w, ops[1], k) & 0xffffffffu)) & 0xffffffffu;
		} else if (!strcmp(op, "popc.b32")) {
			res[l] = (uint64_t)__builtin_popcount((uint32_t)value(w, ops[1], l));
		} else if (!strcmp(op, "cvt.u64.u32")) {
			res[l] = value(w, ops[1], l) & 0xffffffffu;
		} else if (!strcmp(op, "mul.wide.u32")) {
			res[l] = (value(w, ops[1], l) & 0xffffffffu) * (value(w, ops[2], l) & 0xffffffffu);
		} else if (!strcmp(op, "red.global.add.u64")) {
			const char *plus = strchr(ops[0], '+');
			long off = plus ? strtol(plus + 1, NULL, 0) : 0;

			writes = 0;
			if (strncmp(ops[0], "[__cacheadvise_counters", 23) || off % 8 ||
			    off / 8 >= MAX_SLOTS)
				w->errors++;
			else
				w->counters[off / 8] += value(w, ops[1], l);
		} else {
			fprintf(stderr, "evaluator: unknown instruction '%s'\n", op);
			w->errors++;
			return;
		}
	}
	if (writes) {
		uint64_t *d = reg(w, ops[0]);

		/* writes land after every lane read its operands (lock step) */
		for (l = 0; l < LANES; l++)
			if ((w->active >> l & 1) && guard_on(w, guard, negate, l))
				d[l] = res[l];
	}
}

static void run_block(struct warp *w, const char *block)
{
	char *copy, *line, *save = NULL;

	if (!block) {
		w->errors++;
		return;
	}
	copy = xstrdup(block);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		exec_line(w, line);
	free(copy);
}

/* lane -> address helpers */
struct stride { uint64_t base, step; };
static uint64_t strided(int lane, void *arg)
{
	const struct stride *s = arg;
	return s->base + s->step * (uint64_t)lane;
}
static uint64_t lane_even(int lane, void *arg)
{
	(void)arg;
	return !(lane & 1);
}
static uint64_t lane_below(int lane, void *arg)
{
	return (uint64_t)lane < *(uint64_t *)arg;
}

/* ---- tests ---- */

static void test_layout_and_text(void)
{
	static const char *const fixtures[] = {
		"tests/fixtures/monitor/kernels.ptx",
		"tests/fixtures/monitor/forms.ptx",
		"tests/fixtures/monitor/kernels_sm75.ptx",
	};
	size_t fi;

	for (fi = 0; fi < ARRAY_SIZE(fixtures); fi++) {
		struct instrumented t;
		struct strbuf stripped = STRBUF_INIT;
		unsigned char seen[MAX_SLOTS] = { 0 };
		long long slots;
		size_t i, j, used = 0;
		char *decl;

		if (instrument_file(&t, fixtures[fi], NULL)) {
			CHECK(!"instrumenting a fixture failed");
			continue;
		}
		CHECK_STR(json_string_value(json_object_get(t.layout, "schema")),
			  PTX_INSTRUMENT_LAYOUT_SCHEMA);
		CHECK_STR(json_string_value(json_object_get(t.layout, "symbol")), PTX_INSTRUMENT_SYMBOL);
		CHECK_INT(json_integer_value(json_object_get(t.layout, "threshold")), 300);
		slots = json_integer_value(json_object_get(t.layout, "slots"));
		CHECK(slots > 0 && slots < MAX_SLOTS);
		decl = xasprintf(".visible .global .align 8 .u64 %s[%lld];", PTX_INSTRUMENT_SYMBOL, slots);
		CHECK(strstr(t.out.buf, decl) != NULL);
		free(decl);

		/* the original text, line for line, once the inserted lines go */
		strip_inserted(t.out.buf, &stripped);
		CHECK_INT(stripped.len, t.src.len);
		CHECK(!strcmp(stripped.buf, t.src.buf));
		strbuf_release(&stripped);

		/* every load of every function is either counted or skipped, and
		 * every slot belongs to exactly one counter */
		for (i = 0; i < t.m->nr_functions; i++) {
			const struct ptx_function *f = &t.m->functions[i];
			json_t *jf = layout_function(t.layout, f->name), *x;
			size_t k;

			if (!f->is_entry && !f->nr_loads)
				continue;
			CHECK(jf != NULL);
			if (!jf)
				continue;
			CHECK_INT(json_array_size(json_object_get(jf, "loads")) +
					  json_array_size(json_object_get(jf, "skipped_loads")),
				  f->nr_loads);
			for (j = 0; j < f->nr_loads; j++) {
				int counted = load_slot(t.layout, f->name, f->loads[j].ordinal, "requests") >= 0;
				int skipped = 0;

				json_array_foreach(json_object_get(jf, "skipped_loads"), k, x)
					skipped |= json_integer_value(json_object_get(x, "ordinal")) ==
						   f->loads[j].ordinal;
				CHECK_INT(counted + skipped, 1);
			}
			json_array_foreach(json_object_get(jf, "loads"), k, x) {
				static const char *const keys[] = { "requests", "sectors", "lines", "bytes" };
				for (j = 0; j < 4; j++) {
					long long s = json_integer_value(json_object_get(x, keys[j]));
					if (s >= 0 && s < slots) {
						seen[s]++;
						used++;
					}
				}
			}
			json_array_foreach(json_object_get(jf, "data_structures"), k, x) {
				long long h = json_integer_value(json_object_get(x, "hits"));
				long long a = json_integer_value(json_object_get(x, "accesses"));
				CHECK(f->is_entry);
				CHECK(f->params[json_integer_value(json_object_get(x, "param"))].is_pointer_sized);
				if (h >= 0 && h < slots && a >= 0 && a < slots) {
					seen[h]++;
					seen[a]++;
					used += 2;
				}
			}
		}
		CHECK_INT(used, slots);
		for (j = 0; j < (size_t)slots; j++)
			CHECK_INT(seen[j], 1);
		instrumented_release(&t);
	}
}

static void test_layout_details(void)
{
	struct instrumented t, s;

	if (instrument_file(&t, "tests/fixtures/monitor/kernels.ptx", NULL))
		return;
	/* saxpy: x is read-only (param 0), y read and written (param 1) */
	CHECK(ds_slot(t.layout, "_Z5saxpyPKfPffi", 0, "hits") >= 0);
	CHECK(json_is_true(json_object_get(json_array_get(json_object_get(
		layout_function(t.layout, "_Z5saxpyPKfPffi"), "data_structures"), 0), "read_only")));
	CHECK(json_is_false(json_object_get(json_array_get(json_object_get(
		layout_function(t.layout, "_Z5saxpyPKfPffi"), "data_structures"), 1), "read_only")));
	/* the scalar params are no data structures */
	CHECK_INT(ds_slot(t.layout, "_Z5saxpyPKfPffi", 2, "hits"), -1);
	/* the device function: loads, no data structures */
	CHECK_STR(json_string_value(json_object_get(layout_function(t.layout, "_Z10load_twicePKfi"), "kind")),
		  "func");
	CHECK_INT(json_array_size(json_object_get(layout_function(t.layout, "_Z10load_twicePKfi"),
						  "data_structures")), 0);
	CHECK(load_slot(t.layout, "_Z10load_twicePKfi", 1, "bytes") >= 0);
	/* strong and .cg loads are counted too: they move sectors all the same */
	CHECK(load_slot(t.layout, "_Z5tiledPKfPVfPf", 0, "sectors") >= 0);
	CHECK(load_slot(t.layout, "_Z5tiledPKfPVfPf", 1, "sectors") >= 0);
	CHECK_STR(json_string_value(json_object_get(t.layout, "exit_aggregation")), "warp");
	CHECK(strstr(t.out.buf, "redux.sync.add.u32") != NULL);
	/* vector and byte sizes */
	{
		char *b = block_after(t.out.buf, "_Z5copy4PK6float4PS_i", "// cacheadvise: load 0 (");
		CHECK(b && strstr(b, "mul.wide.u32 \t%ca_v, %ca_t, 16;"));
		free(b);
		b = block_after(t.out.buf, "_Z6gatherPKiPKdPK6float2Pdi", "// cacheadvise: load 0 (");
		CHECK(b && strstr(b, "mul.wide.u32 \t%ca_v, %ca_t, 8;"));
		free(b);
		b = block_after(t.out.buf, "_Z7stencilPKfPKhPfii", "// cacheadvise: load 0 (");
		CHECK(b && strstr(b, "mul.wide.u32 \t%ca_v, %ca_t, 1;"));
		free(b);
		/* the pointer chase: the address is taken before the load
		 * overwrites its own address register */
		b = block_after(t.out.buf, "_Z5chasePK4nodePKxPii", "// cacheadvise: load 2 (");
		CHECK(b && strstr(b, "mov.b64 \t%ca_a, %rd20;"));
		free(b);
	}
	CHECK(strstr(t.out.buf, "\t// cacheadvise: load 2 (ld.global.u64) -> __cacheadvise_counters[") != NULL);
	instrumented_release(&t);

	/* sm_75: no redux.sync, each lane adds its own counts at exit */
	if (!instrument_file(&s, "tests/fixtures/monitor/kernels_sm75.ptx", NULL)) {
		CHECK_STR(json_string_value(json_object_get(s.layout, "exit_aggregation")), "lane");
		CHECK(strstr(s.out.buf, "redux") == NULL);
		instrumented_release(&s);
	}

	/* forms: the generic load through a pointer nvcc could not place is
	 * guarded with isspacep.global; a global variable address works */
	if (!instrument_file(&s, "tests/fixtures/monitor/forms.ptx", NULL)) {
		char *b = block_after(s.out.buf, "_Z16generic_and_widePKfPfii", "// cacheadvise: load 0 (");
		CHECK(b && strstr(b, "isspacep.global"));
		free(b);
		b = block_after(s.out.buf, "_Z10predicatedPKfPfi", "// cacheadvise: load 2 (");
		CHECK(b && strstr(b, "mov.u64 \t%ca_a, g_coeff;") && strstr(b, "add.s64 \t%ca_a, %ca_a, 16;"));
		free(b);
		instrumented_release(&s);
	}
}

static void test_options_and_errors(void)
{
	struct ptx_instrument_options opt = { .threshold = 17, .sector_bytes = 64, .line_bytes = 256 };
	struct instrumented t;
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
	struct ptx_module *m = NULL;
	json_t *layout = NULL;
	char *p;

	if (!instrument_file(&t, "tests/fixtures/monitor/kernels.ptx", &opt)) {
		CHECK_INT(json_integer_value(json_object_get(t.layout, "threshold")), 17);
		CHECK_INT(json_integer_value(json_object_get(t.layout, "sector_bytes")), 64);
		CHECK_INT(json_integer_value(json_object_get(t.layout, "line_bytes")), 256);
		CHECK(strstr(t.out.buf, "setp.lt.u32 \t%ca_q, %ca_n, 17;") != NULL);
		CHECK(strstr(t.out.buf, "shr.u64 \t%ca_k, %ca_a, 6;") != NULL);
		CHECK(strstr(t.out.buf, "shr.u64 \t%ca_k, %ca_a, 8;") != NULL);

		/* instrumenting twice is refused */
		if (!ptx_parse("again", t.out.buf, t.out.len, &m)) {
			CHECK_INT(ptx_instrument(m, NULL, &out, &layout), CA_E_INPUT);
			CHECK(strstr(error_message(), "already") != NULL);
			CHECK(layout == NULL);
			CHECK_INT(out.len, 0);
			ptx_module_free(m);
			m = NULL;
		}
		instrumented_release(&t);
	}

	expect_failure = 1;
	opt.threshold = (1u << 24) + 1;
	opt.sector_bytes = opt.line_bytes = 0;
	CHECK_INT(instrument_file(&t, "tests/fixtures/monitor/kernels.ptx", &opt), CA_E_INPUT);
	CHECK(strstr(error_message(), "threshold") != NULL);
	instrumented_release(&t);
	opt.threshold = 0;
	opt.sector_bytes = 48;
	CHECK_INT(instrument_file(&t, "tests/fixtures/monitor/kernels.ptx", &opt), CA_E_INPUT);
	CHECK(strstr(error_message(), "powers of two") != NULL);
	instrumented_release(&t);
	expect_failure = 0;

	/* a register prefix in use: the next free one is taken */
	CHECK_INT(strbuf_read_file(&text, check_source_path("tests/fixtures/monitor/kernels.ptx"), 0), 0);
	strbuf_addstr(&text, "// %ca_x %ca1_y\n");
	if (!ptx_parse("prefix", text.buf, text.len, &m)) {
		CHECK_INT(ptx_instrument(m, NULL, &out, &layout), 0);
		CHECK(strstr(out.buf, "activemask.b32 \t%ca2_m;") != NULL);
		ptx_module_free(m);
		json_decref(layout);
		layout = NULL;
	}
	strbuf_reset(&out);

	/* too old a target */
	p = strstr(text.buf, ".target sm_90");
	if (p) {
		memcpy(p, ".target sm_60", 13);
		if (!ptx_parse("old", text.buf, text.len, &m)) {
			CHECK_INT(ptx_instrument(m, NULL, &out, &layout), CA_E_INPUT);
			CHECK(strstr(error_message(), "sm_70") != NULL);
			ptx_module_free(m);
		}
	}
	strbuf_release(&text);
	strbuf_release(&out);
}

static void test_layout_decodes(void)
{
	struct instrumented t;
	struct monitor_counts mc;
	uint64_t counters[MAX_SLOTS];
	const struct monitor_function *f;
	long long i, slots;

	if (instrument_file(&t, "tests/fixtures/monitor/kernels.ptx", NULL))
		return;
	slots = json_integer_value(json_object_get(t.layout, "slots"));
	for (i = 0; i < slots; i++)
		counters[i] = (uint64_t)i * 10;
	monitor_counts_init(&mc);
	CHECK_INT(monitor_counts_read(&mc, t.layout, counters, (size_t)slots), 0);
	f = monitor_counts_find(&mc, "_Z7stencilPKfPKhPfii");
	CHECK(f && f->nr_loads == 11);
	if (f) {
		CHECK_INT(f->loads[3].sectors,
			  10 * load_slot(t.layout, "_Z7stencilPKfPKhPfii", 3, "sectors"));
		CHECK_INT(f->ds[0].sim_accesses,
			  10 * ds_slot(t.layout, "_Z7stencilPKfPKhPfii", f->ds[0].param, "accesses"));
	}
	monitor_counts_release(&mc);
	instrumented_release(&t);
}

/* Runs the block before a load and returns its four counts. */
static void count_load(struct warp *w, const char *text, json_t *layout, const char *fn,
		       unsigned ordinal, uint64_t got[4])
{
	char marker[64];
	char *b;
	static const char *const keys[4] = { "requests", "sectors", "lines", "bytes" };
	int k;

	snprintf(marker, sizeof(marker), "// cacheadvise: load %u (", ordinal);
	b = block_after(text, fn, marker);
	run_block(w, b);
	free(b);
	for (k = 0; k < 4; k++) {
		long long s = load_slot(layout, fn, ordinal, keys[k]);
		got[k] = s >= 0 ? w->counters[s] : UINT64_MAX;
	}
}

#define CHECK_COUNTS(got, r, s, l, b)                                          \
	do {                                                                   \
		CHECK_INT((got)[0], r);                                        \
		CHECK_INT((got)[1], s);                                        \
		CHECK_INT((got)[2], l);                                        \
		CHECK_INT((got)[3], b);                                        \
	} while (0)

static void test_warp_counts(void)
{
	struct instrumented t, fm;
	struct warp *w = xcalloc(1, sizeof(*w));
	struct stride st;
	uint64_t got[4], n;
	const char *saxpy = "_Z5saxpyPKfPffi";

	if (instrument_file(&t, "tests/fixtures/monitor/kernels.ptx", NULL))
		goto out;

	/* a coalesced float load: 4 sectors, 1 line, 128 bytes */
	warp_init(w, 0xffffffffu);
	st = (struct stride){ 0x10000, 4 };
	set_reg(w, "%rd6", strided, &st);
	count_load(w, t.out.buf, t.layout, saxpy, 0, got);
	CHECK_COUNTS(got, 1, 4, 1, 128);
	/* again, 64 bytes off a line boundary: 2 lines; counts accumulate */
	st = (struct stride){ 0x10040, 4 };
	set_reg(w, "%rd6", strided, &st);
	count_load(w, t.out.buf, t.layout, saxpy, 0, got);
	CHECK_COUNTS(got, 2, 8, 3, 256);
	CHECK_INT(w->errors, 0);

	/* divergence: lanes 0-3, 8-11, 16-19, 24-27 active */
	warp_init(w, 0x0f0f0f0fu);
	st = (struct stride){ 0x10000, 4 };
	set_reg(w, "%rd6", strided, &st);
	count_load(w, t.out.buf, t.layout, saxpy, 0, got);
	CHECK_COUNTS(got, 1, 4, 1, 64);
	/* one lane */
	warp_init(w, 0x00000100u);
	set_reg(w, "%rd6", strided, &st);
	count_load(w, t.out.buf, t.layout, saxpy, 0, got);
	CHECK_COUNTS(got, 1, 1, 1, 4);

	/* scattered: every lane its own line */
	warp_init(w, 0xffffffffu);
	st = (struct stride){ 0x100000, 4096 };
	set_reg(w, "%rd6", strided, &st);
	count_load(w, t.out.buf, t.layout, saxpy, 0, got);
	CHECK_COUNTS(got, 1, 32, 32, 128);
	/* a broadcast: one address */
	st = (struct stride){ 0x100000, 0 };
	set_reg(w, "%rd6", strided, &st);
	warp_init(w, 0xffffffffu);
	set_reg(w, "%rd6", strided, &st);
	count_load(w, t.out.buf, t.layout, saxpy, 0, got);
	CHECK_COUNTS(got, 1, 1, 1, 128);

	/* 16-byte vectors: 512 bytes, 16 sectors, 4 lines */
	warp_init(w, 0xffffffffu);
	st = (struct stride){ 0x20000, 16 };
	set_reg(w, "%rd5", strided, &st);
	count_load(w, t.out.buf, t.layout, "_Z5copy4PK6float4PS_i", 0, got);
	CHECK_COUNTS(got, 1, 16, 4, 512);
	/* bytes with an offset in the address: [%rd27+3], all lanes alike */
	warp_init(w, 0xffffffffu);
	st = (struct stride){ 0x30000, 0 };
	set_reg(w, "%rd27", strided, &st);
	count_load(w, t.out.buf, t.layout, "_Z7stencilPKfPKhPfii", 6, got);
	CHECK_COUNTS(got, 1, 1, 1, 32);
	/* [%rd4+128] in the device function: 8-byte stride, 256 bytes over
	 * 8 sectors and 2 lines, shifted by 128 */
	warp_init(w, 0xffffffffu);
	st = (struct stride){ 0x40000 - 128, 8 };
	set_reg(w, "%rd4", strided, &st);
	count_load(w, t.out.buf, t.layout, "_Z10load_twicePKfi", 1, got);
	CHECK_COUNTS(got, 1, 8, 2, 128);
	CHECK_INT(w->errors, 0);

	if (instrument_file(&fm, "tests/fixtures/monitor/forms.ptx", NULL))
		goto out_t;
	/* @p: only even lanes load; 16 lanes x 4 bytes over all 4 sectors */
	warp_init(w, 0xffffffffu);
	st = (struct stride){ 0x50000, 4 };
	set_reg(w, "%rd3", strided, &st);
	set_reg(w, "p", lane_even, NULL);
	count_load(w, fm.out.buf, fm.layout, "_Z10predicatedPKfPfi", 0, got);
	CHECK_COUNTS(got, 1, 4, 1, 64);
	/* @!p, [%rd3+-4], p true below lane 8: lanes 8-31 load, 3 sectors */
	n = 8;
	set_reg(w, "p", lane_below, &n);
	st = (struct stride){ 0x50004, 4 };
	set_reg(w, "%rd3", strided, &st);
	count_load(w, fm.out.buf, fm.layout, "_Z10predicatedPKfPfi", 1, got);
	CHECK_COUNTS(got, 1, 3, 1, 96);
	/* @!p with p true everywhere: nobody loads, nothing is counted */
	n = 32;
	set_reg(w, "p", lane_below, &n);
	count_load(w, fm.out.buf, fm.layout, "_Z10predicatedPKfPfi", 1, got);
	CHECK_COUNTS(got, 1, 3, 1, 96);
	/* a generic load: lanes 16-31 point to shared memory */
	warp_init(w, 0xffffffffu);
	for (n = 16; n < 32; n++)
		w->global[n] = 0;
	st = (struct stride){ 0x60000, 4 };
	set_reg(w, "%rd22", strided, &st);
	count_load(w, fm.out.buf, fm.layout, "_Z16generic_and_widePKfPfii", 0, got);
	CHECK_COUNTS(got, 1, 2, 1, 64);
	/* ld.global.nc.b128 with two lanes on each address: 256 bytes asked */
	warp_init(w, 0xffffffffu);
	st = (struct stride){ 0x70000, 8 };
	set_reg(w, "%rd15", strided, &st);
	count_load(w, fm.out.buf, fm.layout, "_Z16generic_and_widePKfPfii", 2, got);
	CHECK_COUNTS(got, 1, 8, 2, 512);
	CHECK_INT(w->errors, 0);
	instrumented_release(&fm);
out_t:
	instrumented_release(&t);
out:
	free(w);
}

/* Runs the simulateCache code of saxpy for one warp: load x[i], load y[i],
 * store y[i], exit. */
static void run_saxpy(struct warp *w, const struct instrumented *t, uint64_t x, uint64_t y)
{
	const char *fn = "_Z5saxpyPKfPffi";
	struct stride sx = { x, 4 }, sy = { y, 4 };
	char *b;

	set_reg(w, "%rd6", strided, &sx);
	set_reg(w, "%rd7", strided, &sy);
	b = block_after(t->out.buf, fn, "// cacheadvise: load 0 (");
	run_block(w, b);
	free(b);
	b = block_after(t->out.buf, fn, "// cacheadvise: load 1 (");
	run_block(w, b);
	free(b);
	b = block_after(t->out.buf, fn, "// cacheadvise: simulateCache, store");
	run_block(w, b);
	free(b);
}

static void test_warp_simulate(void)
{
	struct ptx_instrument_options two = { .threshold = 2 };
	struct instrumented t, t2, t75, fm;
	struct warp *w = xcalloc(1, sizeof(*w));
	const char *fn = "_Z5saxpyPKfPffi";
	char *init, *exit_block;
	uint64_t n;

	if (instrument_file(&t, "tests/fixtures/monitor/kernels.ptx", NULL))
		goto out;
	init = block_after(t.out.buf, fn, "// cacheadvise: monitor registers");
	exit_block = block_after(t.out.buf, fn, "// cacheadvise: simulateCache totals");
	CHECK(init && exit_block);

	/* x[i] once: 1 access, no hit; y[i] loaded then stored: 2 accesses,
	 * 1 hit (the store finds the line the load brought) */
	warp_init(w, 0xffffffffu);
	run_block(w, init);
	run_saxpy(w, &t, 0x10000, 0x20000);
	run_block(w, exit_block);
	CHECK_INT(w->counters[ds_slot(t.layout, fn, 0, "hits")], 0);
	CHECK_INT(w->counters[ds_slot(t.layout, fn, 0, "accesses")], 32);
	CHECK_INT(w->counters[ds_slot(t.layout, fn, 1, "hits")], 32);
	CHECK_INT(w->counters[ds_slot(t.layout, fn, 1, "accesses")], 64);
	/* a second pass over the same x: the thread's line still holds it */
	warp_init(w, 0x0000ffffu);
	run_block(w, init);
	run_saxpy(w, &t, 0x10000, 0x20000);
	run_saxpy(w, &t, 0x10000, 0x30000);
	run_block(w, exit_block);
	CHECK_INT(w->counters[ds_slot(t.layout, fn, 0, "hits")], 16);
	CHECK_INT(w->counters[ds_slot(t.layout, fn, 0, "accesses")], 32);
	CHECK_INT(w->counters[ds_slot(t.layout, fn, 1, "hits")], 32);
	CHECK_INT(w->counters[ds_slot(t.layout, fn, 1, "accesses")], 64);
	CHECK_INT(w->errors, 0);
	free(init);
	free(exit_block);

	/* threshold 2: the store is the third access and is not simulated */
	if (!instrument_file(&t2, "tests/fixtures/monitor/kernels.ptx", &two)) {
		warp_init(w, 0xffffffffu);
		init = block_after(t2.out.buf, fn, "// cacheadvise: monitor registers");
		exit_block = block_after(t2.out.buf, fn, "// cacheadvise: simulateCache totals");
		run_block(w, init);
		run_saxpy(w, &t2, 0x10000, 0x20000);
		run_block(w, exit_block);
		CHECK_INT(w->counters[ds_slot(t2.layout, fn, 1, "hits")], 0);
		CHECK_INT(w->counters[ds_slot(t2.layout, fn, 1, "accesses")], 32);
		CHECK_INT(w->counters[ds_slot(t2.layout, fn, 0, "accesses")], 32);
		free(init);
		free(exit_block);
		instrumented_release(&t2);
	}

	/* per-lane totals (sm_75) give the same numbers */
	if (!instrument_file(&t75, "tests/fixtures/monitor/kernels_sm75.ptx", NULL)) {
		warp_init(w, 0xffffffffu);
		init = block_after(t75.out.buf, fn, "// cacheadvise: monitor registers");
		exit_block = block_after(t75.out.buf, fn, "// cacheadvise: simulateCache totals");
		run_block(w, init);
		run_saxpy(w, &t75, 0x10000, 0x20000);
		run_block(w, exit_block);
		CHECK_INT(w->counters[ds_slot(t75.layout, fn, 1, "hits")], 32);
		CHECK_INT(w->counters[ds_slot(t75.layout, fn, 1, "accesses")], 64);
		CHECK_INT(w->errors, 0);
		free(init);
		free(exit_block);
		instrumented_release(&t75);
	}

	/* a guarded exit: lanes below 8 leave at "@q exit", the others at
	 * ret; each lane's counts are added once */
	if (!instrument_file(&fm, "tests/fixtures/monitor/forms.ptx", NULL)) {
		const char *g = "_Z12guarded_exitPKfPfi";
		struct stride s = { 0x80000, 4 };
		char *ld0, *ld1, *st, *ex1, *ex2;

		init = block_after(fm.out.buf, g, "// cacheadvise: monitor registers");
		ld0 = block_after(fm.out.buf, g, "// cacheadvise: load 0 (");
		ex1 = block_after(fm.out.buf, g, "// cacheadvise: simulateCache totals");
		ld1 = block_after(fm.out.buf, g, "// cacheadvise: load 1 (");
		st = block_after(fm.out.buf, g, "// cacheadvise: simulateCache, store");
		/* the second totals block: the one before ret */
		ex2 = nth_block_after(fm.out.buf, g, "// cacheadvise: simulateCache totals", 1);
		CHECK(init && ld0 && ex1 && ld1 && st && ex2);
		warp_init(w, 0xffffffffu);
		run_block(w, init);
		set_reg(w, "%rd6", strided, &s);
		run_block(w, ld0);                      /* in[i]: 1 access */
		n = 8;
		set_reg(w, "q", lane_below, &n);
		run_block(w, ex1);                      /* lanes 0-7 add theirs */
		w->active = 0xffffff00u;                /* and are gone */
		run_block(w, ld1);                      /* in[i+1]: same line: hit */
		s = (struct stride){ 0x90000, 4 };
		set_reg(w, "%rd7", strided, &s);
		run_block(w, st);                       /* out[i] */
		run_block(w, ex2);
		CHECK_INT(w->counters[ds_slot(fm.layout, g, 0, "accesses")], 8 + 24 * 2);
		/* in[i+1] starts a new 16-byte line for i % 4 == 3: lanes 11, 15,
		 * 19, 23, 27 and 31 miss */
		CHECK_INT(w->counters[ds_slot(fm.layout, g, 0, "hits")], 24 - 6);
		CHECK_INT(w->counters[ds_slot(fm.layout, g, 1, "accesses")], 24);
		CHECK_INT(w->counters[ds_slot(fm.layout, g, 1, "hits")], 0);
		CHECK_INT(w->errors, 0);
		free(init);
		free(ld0);
		free(ld1);
		free(st);
		free(ex1);
		free(ex2);
		instrumented_release(&fm);
	}
	instrumented_release(&t);
out:
	free(w);
}

int main(void)
{
	test_layout_and_text();
	test_layout_details();
	test_options_and_errors();
	test_layout_decodes();
	test_warp_counts();
	test_warp_simulate();
	return check_done();
}
