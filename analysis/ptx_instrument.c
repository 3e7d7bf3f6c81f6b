/*
 * The monitor run's instrumentation: PTX in, PTX out (docs/monitor.md).
 *
 * The original text is copied unchanged; the instrumentation is spliced in
 * as whole lines at a few places:
 *   - after the module header: the counter array;
 *   - at the top of each instrumented function body: .reg declarations with
 *     a prefix no register of the module uses, and for entries the
 *     simulateCache state;
 *   - before each global load: the warp-aggregated counts of that load, and
 *     for entries the simulateCache step of the load's data structure;
 *   - before each store through a data structure of an entry: its
 *     simulateCache step;
 *   - before each ret/exit of an entry: the simulateCache totals.
 * The counting code only writes registers it declares and the counter
 * array, and contains no branches, so control flow, predicates and every
 * original register keep their values.
 */
#include "analysis/ptx_instrument.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

/*
 * NEEDSWORK: every warp adds to the same few counters; in long kernels a
 * per-SM copy of the array would cut the atomic contention.
 */
#define SIM_LINE_SHIFT 4       /* the seed's 16-byte line */
#define MAX_THRESHOLD (1u << 24) /* 32 lanes x threshold must fit a u32 */

struct insertion {
	size_t offset;
	size_t seq;             /* keeps insertions at one offset in order */
	char *text;
};

/* A parsed instruction guard: "@%p1" or "@!%p1". */
struct guard {
	char reg[64];
	int negated;
	int present;
};

/* A parsed address operand: register, variable or absolute, plus offset. */
struct address {
	enum { ADDR_REG, ADDR_VAR, ADDR_ABS } kind;
	char base[128];
	long long offset;
};

struct instrumenter {
	const struct ptx_module *m;
	char prefix[16];        /* "%ca_" unless the module uses it */
	unsigned threshold;
	unsigned sector_shift, line_shift;
	int use_redux;          /* sm_80+: redux.sync at exit */
	size_t slots;
	struct insertion *ins;
	size_t nr_ins, alloc_ins;
};

/* The per-function state while one function is instrumented. */
struct fn_state {
	const struct ptx_function *f;
	int *ds_of_param;       /* param index -> data structure index, -1 none */
	size_t nr_ds;
	int *ds_param;          /* data structure index -> param index */
	size_t ds_slot;         /* first slot of the data structures */
	int used;               /* any code inserted: declare registers */
};

static void add_insertion(struct instrumenter *in, size_t offset, char *text)
{
	ALLOC_GROW(in->ins, in->nr_ins + 1, in->alloc_ins);
	in->ins[in->nr_ins].offset = offset;
	in->ins[in->nr_ins].seq = in->nr_ins;
	in->ins[in->nr_ins].text = text;
	in->nr_ins++;
}

static int cmp_insertion(const void *a, const void *b)
{
	const struct insertion *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int is_ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

/*
 * Where inserted lines go for an instruction starting at pos: the start of
 * its line when only blanks precede it there (the text then stays a
 * sequence of whole original lines), else pos itself, in which case the
 * inserted block must begin with a newline. *whole_line tells which.
 */
static size_t insertion_point(const char *text, size_t lo, size_t pos, int *whole_line)
{
	size_t i = pos;

	while (i > lo && (text[i - 1] == ' ' || text[i - 1] == '\t'))
		i--;
	if (i == lo || text[i - 1] == '\n') {
		*whole_line = 1;
		return i;
	}
	*whole_line = 0;
	return pos;
}

static void insert_block(struct instrumenter *in, const struct ptx_function *f, size_t pos,
			 struct strbuf *block)
{
	int whole;
	size_t at = insertion_point(in->m->text, f->body_begin + 1, pos, &whole);
	char *text;

	if (whole) {
		text = strbuf_detach(block, NULL);
	} else {
		/* "label: ld..." or "a; ld...": break the line before the instruction */
		text = xasprintf("\n%s\t", block->buf);
		strbuf_release(block);
	}
	add_insertion(in, at, text);
}

/*
 * The start of the instruction whose opcode is at op: the guard before it
 * when there is one. The guard's text is parsed into *g.
 */
static size_t instruction_start(const char *text, size_t lo, size_t op, struct guard *g)
{
	size_t i = op, end, len;

	memset(g, 0, sizeof(*g));
	while (i > lo && (text[i - 1] == ' ' || text[i - 1] == '\t'))
		i--;
	end = i;
	while (i > lo && (is_ident_char((unsigned char)text[i - 1]) || text[i - 1] == '%' ||
			  text[i - 1] == '!' || text[i - 1] == '@'))
		i--;
	if (i == end || text[i] != '@')
		return op;
	i++;
	g->present = 1;
	if (text[i] == '!') {
		g->negated = 1;
		i++;
	}
	len = end - i;
	if (len >= sizeof(g->reg))
		len = sizeof(g->reg) - 1;
	memcpy(g->reg, text + i, len);
	g->reg[len] = '\0';
	return i - 1 - (g->negated ? 1 : 0);
}

static int parse_guard_text(const char *s, struct guard *g)
{
	memset(g, 0, sizeof(*g));
	if (!s)
		return 0;
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '@')
		return -1;
	s++;
	if (*s == '!') {
		g->negated = 1;
		s++;
	}
	if (!*s || strlen(s) >= sizeof(g->reg))
		return -1;
	strcpy(g->reg, s);
	g->present = 1;
	return 0;
}

/* Parses "%rd4", "%rd4+16", "%rd4+-4", "g_table+8", "0x1000". */
static int parse_address(const char *s, struct address *a)
{
	size_t n = 0;
	char *end;

	memset(a, 0, sizeof(*a));
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '%' || *s == '_' || *s == '$' || isalpha((unsigned char)*s)) {
		a->kind = *s == '%' ? ADDR_REG : ADDR_VAR;
		while (s[n] && (is_ident_char((unsigned char)s[n]) || (n == 0 && s[n] == '%'))) {
			if (n + 1 >= sizeof(a->base))
				return -1;
			a->base[n] = s[n];
			n++;
		}
		a->base[n] = '\0';
		s += n;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			return 0;
		if (*s != '+' && *s != '-')
			return -1;
		if (*s == '+')
			s++;
		while (isspace((unsigned char)*s))
			s++;
	} else {
		a->kind = ADDR_ABS;
	}
	if (!*s)
		return -1;
	a->offset = strtoll(s, &end, 0);
	while (isspace((unsigned char)*end))
		end++;
	return *end ? -1 : 0;
}

/* The bracketed operand of the instruction at op (a store's address). */
static char *bracket_operand(const char *text, size_t len, size_t op)
{
	size_t i, open;

	for (i = op; i < len && text[i] != ';' && text[i] != '['; i++)
		;
	if (i >= len || text[i] != '[')
		return NULL;
	open = ++i;
	for (; i < len && text[i] != ']' && text[i] != ';'; i++)
		;
	if (i >= len || text[i] != ']')
		return NULL;
	return xstrndup(text + open, i - open);
}

static void emit_address(struct instrumenter *in, struct strbuf *sb, const struct address *a)
{
	const char *P = in->prefix;

	switch (a->kind) {
	case ADDR_REG:
		if (a->offset)
			strbuf_addf(sb, "\tadd.s64 \t%sa, %s, %lld;\n", P, a->base, a->offset);
		else
			strbuf_addf(sb, "\tmov.b64 \t%sa, %s;\n", P, a->base);
		break;
	case ADDR_VAR:
		strbuf_addf(sb, "\tmov.u64 \t%sa, %s;\n", P, a->base);
		if (a->offset)
			strbuf_addf(sb, "\tadd.s64 \t%sa, %sa, %lld;\n", P, P, a->offset);
		break;
	case ADDR_ABS:
		strbuf_addf(sb, "\tmov.u64 \t%sa, %lld;\n", P, a->offset);
		break;
	}
}

/*
 * Sets %<P>pv to "this lane accesses memory": the instruction's guard, and
 * for a generic access also "the address is global". Returns 1 when %<P>pv
 * was written, 0 when every executing lane accesses (no predicate needed).
 */
static int emit_access_predicate(struct instrumenter *in, struct strbuf *sb,
				 const struct guard *g, int generic)
{
	const char *P = in->prefix;

	if (g->present)
		strbuf_addf(sb, "\t%s \t%spv, %s;\n", g->negated ? "not.pred" : "mov.pred", P, g->reg);
	if (generic) {
		strbuf_addf(sb, "\tisspacep.global \t%sq, %sa;\n", P, P);
		if (g->present)
			strbuf_addf(sb, "\tand.pred \t%spv, %spv, %sq;\n", P, P, P);
		else
			strbuf_addf(sb, "\tmov.pred \t%spv, %sq;\n", P, P);
	}
	return g->present || generic;
}

static void emit_red(struct strbuf *sb, const char *guard,
		     size_t slot, const char *value)
{
	strbuf_addf(sb, "\t%s%sred.global.add.u64 \t[%s+%zu], %s;\n", guard ? guard : "",
		    guard ? " " : "", PTX_INSTRUMENT_SYMBOL, slot * 8, value);
}

/*
 * Distinct blocks of 2^shift bytes touched by the accessing lanes, added to
 * slot by the elected lane: a lane leads its group of equal block numbers
 * when no lower lane of the group exists (the lowest set bit of its
 * match.any mask is its own).
 */
static void emit_distinct(struct instrumenter *in, struct strbuf *sb, unsigned shift,
			  int has_pv, size_t slot)
{
	const char *P = in->prefix;
	char guard[32], value[24];

	strbuf_addf(sb, "\tshr.u64 \t%sk, %sa, %u;\n", P, P, shift);
	if (has_pv)
		strbuf_addf(sb, "\tselp.b64 \t%sk, %sk, -1, %spv;\n", P, P, P);
	strbuf_addf(sb, "\tmatch.any.sync.b64 \t%smm, %sk, %sm;\n", P, P, P);
	strbuf_addf(sb, "\tand.b32 \t%st, %smm, %slt;\n", P, P, P);
	if (has_pv)
		strbuf_addf(sb, "\tsetp.eq.and.u32 \t%sq, %st, 0, %spv;\n", P, P, P);
	else
		strbuf_addf(sb, "\tsetp.eq.u32 \t%sq, %st, 0;\n", P, P);
	strbuf_addf(sb, "\tvote.sync.ballot.b32 \t%st, %sq, %sm;\n", P, P, P);
	strbuf_addf(sb, "\tpopc.b32 \t%st, %st;\n", P, P);
	strbuf_addf(sb, "\tcvt.u64.u32 \t%sv, %st;\n", P, P);
	snprintf(guard, sizeof(guard), "@%se", P);
	snprintf(value, sizeof(value), "%sv", P);
	emit_red(sb, guard, slot, value);
}

/* One simulateCache step for data structure ds at address %<P>a. */
static void emit_simulate(struct instrumenter *in, struct strbuf *sb, size_t ds, int has_pv)
{
	const char *P = in->prefix;

	if (has_pv)
		strbuf_addf(sb, "\tsetp.lt.and.u32 \t%sq, %sn, %u, %spv;\n", P, P, in->threshold, P);
	else
		strbuf_addf(sb, "\tsetp.lt.u32 \t%sq, %sn, %u;\n", P, P, in->threshold);
	strbuf_addf(sb, "\tshr.u64 \t%sk, %sa, %u;\n", P, P, SIM_LINE_SHIFT);
	strbuf_addf(sb, "\tsetp.eq.and.u64 \t%sh, %sk, %stag%zu, %sq;\n", P, P, P, ds, P);
	strbuf_addf(sb, "\t@%sh add.u32 \t%shit%zu, %shit%zu, 1;\n", P, P, ds, P, ds);
	strbuf_addf(sb, "\t@%sq add.u32 \t%sacc%zu, %sacc%zu, 1;\n", P, P, ds, P, ds);
	strbuf_addf(sb, "\t@%sq add.u32 \t%sn, %sn, 1;\n", P, P, P);
	strbuf_addf(sb, "\t@%sq mov.b64 \t%stag%zu, %sk;\n", P, P, ds, P);
}

static int load_size(const struct ptx_load *ld)
{
	int bytes = (ld->vector > 0 ? ld->vector : 1) * (ld->bits > 0 ? ld->bits : 8) / 8;

	return bytes > 0 ? bytes : 1;
}

static void instrument_load(struct instrumenter *in, struct fn_state *fs, const struct ptx_load *ld,
			    const struct address *a, const struct guard *g, size_t start,
			    size_t slot)
{
	const char *P = in->prefix;
	int generic = ld->space == PTX_SPACE_GENERIC;
	struct strbuf sb = STRBUF_INIT;
	char guard[32], value[24];
	int has_pv;

	strbuf_addf(&sb, "\t// cacheadvise: load %u (%s) -> %s[%zu..%zu]\n", ld->ordinal, ld->opcode,
		    PTX_INSTRUMENT_SYMBOL, slot, slot + 3);
	strbuf_addf(&sb, "\tactivemask.b32 \t%sm;\n", P);
	emit_address(in, &sb, a);
	has_pv = emit_access_predicate(in, &sb, g, generic);
	if (has_pv)
		strbuf_addf(&sb, "\tvote.sync.ballot.b32 \t%spm, %spv, %sm;\n", P, P, P);
	else
		strbuf_addf(&sb, "\tmov.b32 \t%spm, %sm;\n", P, P);
	/* the elected lane: the lowest active one, when any lane accesses */
	strbuf_addf(&sb, "\tmov.u32 \t%slt, %%lanemask_lt;\n", P);
	strbuf_addf(&sb, "\tand.b32 \t%st, %slt, %sm;\n", P, P, P);
	strbuf_addf(&sb, "\tsetp.eq.u32 \t%se, %st, 0;\n", P, P);
	if (has_pv)
		strbuf_addf(&sb, "\tsetp.ne.and.u32 \t%se, %spm, 0, %se;\n", P, P, P);
	emit_distinct(in, &sb, in->sector_shift, has_pv, slot + 1);
	emit_distinct(in, &sb, in->line_shift, has_pv, slot + 2);
	strbuf_addf(&sb, "\tpopc.b32 \t%st, %spm;\n", P, P);
	strbuf_addf(&sb, "\tmul.wide.u32 \t%sv, %st, %d;\n", P, P, load_size(ld));
	snprintf(guard, sizeof(guard), "@%se", P);
	snprintf(value, sizeof(value), "%sv", P);
	emit_red(&sb, guard, slot + 3, value);
	emit_red(&sb, guard, slot, "1");
	if (fs->nr_ds && ld->param >= 0 && (size_t)ld->param < fs->f->nr_params &&
	    fs->ds_of_param[ld->param] >= 0) {
		strbuf_addf(&sb, "\t// cacheadvise: simulateCache, param %d\n", ld->param);
		emit_simulate(in, &sb, (size_t)fs->ds_of_param[ld->param], has_pv);
	}
	insert_block(in, fs->f, start, &sb);
	fs->used = 1;
}

static void instrument_store(struct instrumenter *in, struct fn_state *fs,
			     const struct ptx_memop *op)
{
	const struct ptx_module *m = in->m;
	struct strbuf sb = STRBUF_INIT;
	struct guard g;
	struct address a;
	size_t start = instruction_start(m->text, fs->f->body_begin + 1, op->text_offset, &g);
	char *operand = bracket_operand(m->text, m->len, op->text_offset);
	int has_pv;

	if (!operand || parse_address(operand, &a)) {
		free(operand);
		return; /* not simulated; see docs/monitor.md */
	}
	strbuf_addf(&sb, "\t// cacheadvise: simulateCache, store through param %d\n", op->param);
	emit_address(in, &sb, &a);
	has_pv = emit_access_predicate(in, &sb, &g, 0);
	emit_simulate(in, &sb, (size_t)fs->ds_of_param[op->param], has_pv);
	insert_block(in, fs->f, start, &sb);
	fs->used = 1;
	free(operand);
}

/*
 * The totals of this thread's simulateCache counters, added before a
 * ret/exit guarded by g. Only lanes that leave here contribute, so each
 * lane's counts are added exactly once, at the exit it takes.
 */
static void instrument_exit(struct instrumenter *in, struct fn_state *fs, size_t start,
			    const struct guard *g)
{
	const char *P = in->prefix;
	struct strbuf sb = STRBUF_INIT;
	size_t j, k;
	char guard[72], value[24];

	strbuf_addf(&sb, "\t// cacheadvise: simulateCache totals (%s)\n",
		    in->use_redux ? "warp-aggregated" : "per lane");
	if (in->use_redux) {
		strbuf_addf(&sb, "\tactivemask.b32 \t%sm;\n", P);
		strbuf_addf(&sb, "\tmov.u32 \t%slt, %%lanemask_lt;\n", P);
		strbuf_addf(&sb, "\tand.b32 \t%st, %slt, %sm;\n", P, P, P);
		strbuf_addf(&sb, "\tsetp.eq.u32 \t%se, %st, 0;\n", P, P);
		snprintf(guard, sizeof(guard), "@%se", P);
	} else if (g->present) {
		snprintf(guard, sizeof(guard), "@%s%s", g->negated ? "!" : "", g->reg);
	}
	snprintf(value, sizeof(value), "%sv", P);
	for (j = 0; j < fs->nr_ds; j++) {
		for (k = 0; k < 2; k++) {
			const char *what = k ? "acc" : "hit";
			size_t slot = fs->ds_slot + 2 * j + k;

			if (!in->use_redux) {
				strbuf_addf(&sb, "\tcvt.u64.u32 \t%sv, %s%s%zu;\n", P, P, what, j);
				emit_red(&sb, g->present ? guard : NULL, slot, value);
				continue;
			}
			if (g->present && !g->negated)
				strbuf_addf(&sb, "\tselp.b32 \t%st, %s%s%zu, 0, %s;\n", P, P, what, j,
					    g->reg);
			else if (g->present)
				strbuf_addf(&sb, "\tselp.b32 \t%st, 0, %s%s%zu, %s;\n", P, P, what, j,
					    g->reg);
			else
				strbuf_addf(&sb, "\tmov.b32 \t%st, %s%s%zu;\n", P, P, what, j);
			strbuf_addf(&sb, "\tredux.sync.add.u32 \t%st, %st, %sm;\n", P, P, P);
			strbuf_addf(&sb, "\tcvt.u64.u32 \t%sv, %st;\n", P, P);
			emit_red(&sb, guard, slot, value);
		}
	}
	insert_block(in, fs->f, start, &sb);
}

/* Skips a comment or string at t[i]; returns the index after it, or i. */
static size_t skip_comment(const char *t, size_t i, size_t end)
{
	if (t[i] == '/' && i + 1 < end && t[i + 1] == '/') {
		while (i < end && t[i] != '\n')
			i++;
		return i;
	}
	if (t[i] == '/' && i + 1 < end && t[i + 1] == '*') {
		for (i += 2; i + 1 < end && !(t[i] == '*' && t[i + 1] == '/'); i++)
			;
		return i + 2 <= end ? i + 2 : end;
	}
	if (t[i] == '"') {
		for (i++; i < end && t[i] != '"'; i++)
			if (t[i] == '\\')
				i++;
		return i < end ? i + 1 : end;
	}
	return i;
}

/*
 * Calls instrument_exit before every ret and exit statement of the body.
 * This walks statements only to find where they begin: labels, directives,
 * braces, comments and everything up to each ';' are stepped over.
 */
static void instrument_exits(struct instrumenter *in, struct fn_state *fs)
{
	const char *t = in->m->text;
	size_t i = fs->f->body_begin + 1, end = fs->f->body_end;

	while (i < end) {
		size_t j, s, op;
		struct guard g;

		j = skip_comment(t, i, end);
		if (j != i) {
			i = j;
			continue;
		}
		if (isspace((unsigned char)t[i]) || t[i] == '{' || t[i] == '}' || t[i] == ';') {
			i++;
			continue;
		}
		s = i;
		if (t[i] == '.') {  /* directives: .reg ...; or .loc (no ';') */
			while (i < end && t[i] != ';' && t[i] != '\n')
				i++;
			continue;
		}
		for (j = i; j < end && is_ident_char((unsigned char)t[j]); j++)
			;
		if (j > i && j + 1 < end && t[j] == ':' && t[j + 1] != ':') {
			i = j + 1;  /* a label */
			continue;
		}
		/* a statement: find its end, stepping over comments */
		while (i < end && t[i] != ';') {
			j = skip_comment(t, i, end);
			i = j != i ? j : i + 1;
		}
		op = s;
		if (t[op] == '@') {
			while (op < i && !isspace((unsigned char)t[op]))
				op++;
			while (op < i && isspace((unsigned char)t[op]))
				op++;
		}
		for (j = op; j < i && (isalpha((unsigned char)t[j])); j++)
			;
		if ((j - op == 3 && !strncmp(t + op, "ret", 3)) ||
		    (j - op == 4 && !strncmp(t + op, "exit", 4))) {
			if (j == i || t[j] == '.' || isspace((unsigned char)t[j])) {
				size_t start = instruction_start(t, fs->f->body_begin + 1, op, &g);
				instrument_exit(in, fs, start, &g);
			}
		}
	}
}

/*
 * Why a load is not instrumented, or NULL; on NULL, *a, *g and *start hold
 * its address, guard and the start of its instruction.
 */
static const char *load_skip_reason(const struct ptx_module *m, const struct ptx_function *f,
				    const struct ptx_load *ld, struct address *a, struct guard *g,
				    size_t *start)
{
	struct guard g2;

	if (ld->space == PTX_SPACE_GENERIC && !ld->patchable)
		return "generic load not proven to reach global memory";
	if (!ld->address || parse_address(ld->address, a))
		return "address operand not understood";
	*start = instruction_start(m->text, f->body_begin + 1, ld->text_offset, g);
	if (ld->predicate ? parse_guard_text(ld->predicate, &g2) || !g->present ||
				    strcmp(g->reg, g2.reg) || g->negated != g2.negated
			  : g->present)
		return "guard not understood";
	return NULL;
}

/* Whether a store's address can be simulated. */
static int store_understood(const struct ptx_module *m, const struct ptx_memop *op)
{
	char *operand = bracket_operand(m->text, m->len, op->text_offset);
	struct address a;
	int ok = operand && !parse_address(operand, &a);

	free(operand);
	return ok;
}

static void instrument_function(struct instrumenter *in, const struct ptx_function *f,
				json_t *jfunctions)
{
	const struct ptx_module *m = in->m;
	struct fn_state fs = { f, NULL, 0, NULL, 0, 0 };
	json_t *jf = json_object(), *jloads = json_array(), *jskipped = json_array();
	json_t *jds = json_array();
	size_t i, decl;

	/* the declarations must come first even where a load starts the body */
	decl = in->nr_ins;
	add_insertion(in, f->body_begin + 1, NULL);

	fs.ds_of_param = xcalloc(f->nr_params ? f->nr_params : 1, sizeof(int));
	fs.ds_param = xcalloc(f->nr_params ? f->nr_params : 1, sizeof(int));
	for (i = 0; i < f->nr_params; i++)
		fs.ds_of_param[i] = -1;

	/*
	 * Data structures: pointer parameters of an entry that some
	 * instrumented load or simulated store uses.
	 */
	if (f->is_entry) {
		int *used = xcalloc(f->nr_params ? f->nr_params : 1, sizeof(int));

		for (i = 0; i < f->nr_loads; i++) {
			const struct ptx_load *ld = &f->loads[i];
			struct address a;
			struct guard g;
			size_t start;

			if (ld->param >= 0 && (size_t)ld->param < f->nr_params &&
			    !load_skip_reason(m, f, ld, &a, &g, &start))
				used[ld->param] = 1;
		}
		for (i = 0; i < f->nr_memops; i++)
			if (f->memops[i].kind == PTX_MEMOP_STORE && f->memops[i].param >= 0 &&
			    (size_t)f->memops[i].param < f->nr_params &&
			    store_understood(m, &f->memops[i]))
				used[f->memops[i].param] = 1;
		for (i = 0; i < f->nr_params; i++) {
			if (!used[i] || !f->params[i].is_pointer_sized)
				continue;
			fs.ds_param[fs.nr_ds] = (int)i;
			fs.ds_of_param[i] = (int)fs.nr_ds++;
		}
		free(used);
	}

	/* Loads: four slots each. */
	for (i = 0; i < f->nr_loads; i++) {
		const struct ptx_load *ld = &f->loads[i];
		struct address a;
		struct guard g;
		size_t start = 0;
		const char *why = load_skip_reason(m, f, ld, &a, &g, &start);
		json_t *jl;

		if (why) {
			json_array_append_new(jskipped, json_pack("{s:I, s:s}", "ordinal",
								  (json_int_t)ld->ordinal,
								  "reason", why));
			continue;
		}
		instrument_load(in, &fs, ld, &a, &g, start, in->slots);
		jl = json_pack("{s:I, s:I, s:I, s:I, s:I}", "ordinal", (json_int_t)ld->ordinal,
			       "requests", (json_int_t)in->slots,
			       "sectors", (json_int_t)(in->slots + 1),
			       "lines", (json_int_t)(in->slots + 2),
			       "bytes", (json_int_t)(in->slots + 3));
		json_array_append_new(jloads, jl);
		in->slots += 4;
	}

	/* Data structures: stores, exits, two slots each. */
	if (fs.nr_ds) {
		fs.ds_slot = in->slots;
		for (i = 0; i < f->nr_memops; i++) {
			const struct ptx_memop *op = &f->memops[i];

			if (op->kind == PTX_MEMOP_STORE && op->param >= 0 &&
			    (size_t)op->param < f->nr_params && fs.ds_of_param[op->param] >= 0)
				instrument_store(in, &fs, op);
		}
		instrument_exits(in, &fs);
		fs.used = 1;
		for (i = 0; i < fs.nr_ds; i++) {
			int p = fs.ds_param[i];
			int ro = 1;
			size_t k;

			for (k = 0; k < f->nr_memops; k++)
				if (f->memops[k].param == p && (f->memops[k].kind == PTX_MEMOP_STORE ||
								f->memops[k].kind == PTX_MEMOP_ATOMIC))
					ro = 0;
			for (k = 0; k < f->nr_loads; k++)
				if (f->loads[k].param == p && f->loads[k].read_only == 0)
					ro = 0;
			json_array_append_new(jds, json_pack("{s:i, s:s?, s:b, s:I, s:I}",
							     "param", p,
							     "name", f->params[p].name,
							     "read_only", ro,
							     "hits", (json_int_t)(in->slots + 2 * i),
							     "accesses", (json_int_t)(in->slots + 2 * i + 1)));
		}
		in->slots += 2 * fs.nr_ds;
	}

	/* Registers, and the simulateCache state, at the top of the body. */
	if (!fs.used) {
		in->ins[decl].text = xstrdup("");
	} else {
		const char *P = in->prefix;
		struct strbuf sb = STRBUF_INIT;
		size_t pos = f->body_begin + 1;

		if (pos < m->len && m->text[pos] == '\n')
			pos++;
		else
			strbuf_addch(&sb, '\n');
		strbuf_addf(&sb, "\t// cacheadvise: monitor registers\n");
		strbuf_addf(&sb, "\t.reg .b64 \t%sa, %sk, %sv;\n", P, P, P);
		strbuf_addf(&sb, "\t.reg .b32 \t%sm, %slt, %spm, %smm, %st;\n", P, P, P, P, P);
		strbuf_addf(&sb, "\t.reg .pred \t%spv, %sq, %se, %sh;\n", P, P, P, P);
		if (fs.nr_ds) {
			strbuf_addf(&sb, "\t.reg .b32 \t%sn, %shit<%zu>, %sacc<%zu>;\n", P, P, fs.nr_ds,
				    P, fs.nr_ds);
			strbuf_addf(&sb, "\t.reg .b64 \t%stag<%zu>;\n", P, fs.nr_ds);
			strbuf_addf(&sb, "\tmov.u32 \t%sn, 0;\n", P);
			for (i = 0; i < fs.nr_ds; i++) {
				strbuf_addf(&sb, "\tmov.b64 \t%stag%zu, -1;\n", P, i);
				strbuf_addf(&sb, "\tmov.u32 \t%shit%zu, 0;\n", P, i);
				strbuf_addf(&sb, "\tmov.u32 \t%sacc%zu, 0;\n", P, i);
			}
		}
		in->ins[decl].offset = pos;
		in->ins[decl].text = strbuf_detach(&sb, NULL);
	}

	json_object_set_new(jf, "name", json_string(f->name));
	json_object_set_new(jf, "kind", json_string(f->is_entry ? "entry" : "func"));
	json_object_set_new(jf, "loads", jloads);
	json_object_set_new(jf, "skipped_loads", jskipped);
	json_object_set_new(jf, "data_structures", jds);
	if (f->is_entry || json_array_size(jloads) || json_array_size(jskipped))
		json_array_append_new(jfunctions, jf);
	else
		json_decref(jf);
	free(fs.ds_of_param);
	free(fs.ds_param);
}

static int parse_sm(const char *target)
{
	const char *s = strstr(target, "sm_");

	return s ? atoi(s + 3) : 0;
}

/* log2 of a power of two from 2 to 2^20; 0 for anything else. */
static unsigned log2_exact(unsigned v)
{
	unsigned s = 0;

	if (v > 1u << 20)
		return 0;
	while ((1u << s) < v)
		s++;
	return (1u << s) == v ? s : 0;
}

int ptx_instrument(const struct ptx_module *m, const struct ptx_instrument_options *opt,
		   struct strbuf *out, json_t **layout)
{
	struct instrumenter in;
	json_t *jl, *jfunctions;
	unsigned sector = 32, line = 128;
	int sm, major = 0, minor = 0;
	size_t i, copied, hdr;

	*layout = NULL;
	memset(&in, 0, sizeof(in));
	in.m = m;
	in.threshold = PTX_INSTRUMENT_DEFAULT_THRESHOLD;
	if (opt && opt->threshold)
		in.threshold = opt->threshold;
	if (opt && opt->sector_bytes)
		sector = opt->sector_bytes;
	if (opt && opt->line_bytes)
		line = opt->line_bytes;
	if (in.threshold > MAX_THRESHOLD)
		return error_set(CA_E_INPUT, "monitor threshold %u is too large: at most %u accesses per thread",
				 in.threshold, MAX_THRESHOLD);
	in.sector_shift = log2_exact(sector);
	in.line_shift = log2_exact(line);
	if (!in.sector_shift || !in.line_shift || sector > line)
		return error_set(CA_E_INPUT, "sector size %u and line size %u must be powers of two, sector <= line",
				 sector, line);

	sm = parse_sm(m->target);
	if (sm < 70)
		return error_set(CA_E_INPUT, "PTX module targets '%s': the monitor instrumentation needs sm_70 or later (match.any.sync)",
				 m->target);
	if (sscanf(m->version, "%d.%d", &major, &minor) != 2 || major * 10 + minor < 62)
		return error_set(CA_E_INPUT, "PTX module has .version %s: the monitor instrumentation needs PTX ISA 6.2 or later",
				 m->version);
	if (m->address_size != 64)
		return error_set(CA_E_INPUT, "PTX module has .address_size %d: only 64-bit modules can be instrumented",
				 m->address_size);
	if (strstr(m->text, PTX_INSTRUMENT_SYMBOL))
		return error_set(CA_E_INPUT, "PTX module already mentions %s: it is instrumented already",
				 PTX_INSTRUMENT_SYMBOL);
	in.use_redux = sm >= 80 && major * 10 + minor >= 70;

	strcpy(in.prefix, "%ca_");
	for (i = 1; strstr(m->text, in.prefix); i++) {
		if (i > 999)
			return error_set(CA_E_INPUT, "PTX module uses every register prefix %%caN_: cannot name the monitor registers");
		snprintf(in.prefix, sizeof(in.prefix), "%%ca%zu_", i);
	}

	jfunctions = json_array();
	for (i = 0; i < m->nr_functions; i++)
		instrument_function(&in, &m->functions[i], jfunctions);

	hdr = ptx_header_end(m->text, m->len);
	add_insertion(&in, hdr, xasprintf("// cacheadvise: monitor counters (docs/monitor.md)\n"
					  ".visible .global .align 8 .u64 %s[%zu];\n",
					  PTX_INSTRUMENT_SYMBOL, in.slots ? in.slots : 1));
	qsort(in.ins, in.nr_ins, sizeof(*in.ins), cmp_insertion);
	strbuf_grow(out, m->len + in.nr_ins * 1024);
	copied = 0;
	for (i = 0; i < in.nr_ins; i++) {
		strbuf_add(out, m->text + copied, in.ins[i].offset - copied);
		strbuf_addstr(out, in.ins[i].text);
		copied = in.ins[i].offset;
	}
	strbuf_add(out, m->text + copied, m->len - copied);

	jl = json_object();
	json_object_set_new(jl, "schema", json_string(PTX_INSTRUMENT_LAYOUT_SCHEMA));
	json_object_set_new(jl, "symbol", json_string(PTX_INSTRUMENT_SYMBOL));
	json_object_set_new(jl, "slots", json_integer((json_int_t)in.slots));
	json_object_set_new(jl, "threshold", json_integer(in.threshold));
	json_object_set_new(jl, "sector_bytes", json_integer(sector));
	json_object_set_new(jl, "line_bytes", json_integer(line));
	json_object_set_new(jl, "sim_line_bytes", json_integer(1 << SIM_LINE_SHIFT));
	json_object_set_new(jl, "exit_aggregation", json_string(in.use_redux ? "warp" : "lane"));
	json_object_set_new(jl, "functions", jfunctions);
	*layout = jl;
	for (i = 0; i < in.nr_ins; i++)
		free(in.ins[i].text);
	free(in.ins);
	return 0;
}
