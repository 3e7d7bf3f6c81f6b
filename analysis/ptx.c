#include "analysis/ptx.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

/*
 * One pass over the text, statement by statement, with no regular
 * expressions. Inside each function body, instructions that can carry a
 * pointer (ld.param, cvta, mov, add, mad, selp, 64-bit loads...) are
 * recorded as small "definitions" over interned register names; after the
 * body, a bounded fixpoint over those definitions tells which parameter
 * each register derives from (flow-insensitive: a register redefined in a
 * loop derives from a parameter only if every definition does). Loads,
 * stores and atomics then read their address register's value. Which
 * parameters are written is resolved across calls once every function is
 * known.
 */

/* ---------------------------------------------------------------- values */

enum vkind { V_BOT, V_NONE, V_PARAM, V_UNK };

/*
 * What a register holds, as far as pointers go: nothing yet (BOT), no
 * pointer parameter (NONE: indices, constants, special registers), a value
 * derived from parameter `param` (weakly: read from the parameter; strongly:
 * also converted with cvta.to.global, so certainly an address), or a mix of
 * sources that cannot be told apart (UNK: a pointer loaded from memory, two
 * different parameters).
 */
struct val {
	unsigned char kind;
	unsigned char strong;
	int param;
};

static const struct val val_bot = { V_BOT, 0, -1 };
static const struct val val_unk = { V_UNK, 0, -1 };

static int val_eq(struct val a, struct val b)
{
	return a.kind == b.kind && a.strong == b.strong && a.param == b.param;
}

/* Two definitions of one register (a phi): both must agree. */
static struct val join_phi(struct val a, struct val b)
{
	if (a.kind == V_BOT || (a.kind == V_NONE && b.kind != V_BOT))
		return b;
	if (b.kind == V_BOT || b.kind == V_NONE)
		return a;
	if (a.kind == V_UNK || b.kind == V_UNK || a.param != b.param)
		return val_unk;
	return a.strong >= b.strong ? a : b;
}

/* base + offset: an index adds nothing; a certain address beats a guess. */
static struct val join_add(struct val a, struct val b)
{
	if (a.kind == V_BOT || a.kind == V_NONE)
		return b.kind == V_BOT ? a : b;
	if (b.kind == V_BOT || b.kind == V_NONE)
		return a;
	if (a.kind == V_PARAM && b.kind == V_PARAM) {
		if (a.param == b.param)
			return a.strong >= b.strong ? a : b;
		if (a.strong != b.strong)
			return a.strong ? a : b;
		return val_unk;
	}
	if (a.kind == V_PARAM && a.strong)
		return a;
	if (b.kind == V_PARAM && b.strong)
		return b;
	return val_unk;
}

/* ------------------------------------------------------ register names */

struct slice {
	const char *s;
	size_t n;
};

/*
 * Interns register (and symbol) names of one function: name -> dense id.
 * nvcc names registers %<letters><number> (%rd12, %f3): those go straight
 * to a per-prefix array indexed by the number, which is much faster than
 * hashing on big functions; every other name goes to a hash table.
 */
#define REG_PREFIXES 16
#define REG_PREFIX_LEN 7
#define REG_MAX_NUMBER (1u << 22)

struct reg_prefix {
	char s[REG_PREFIX_LEN + 1];
	size_t n;
	int *ids;                   /* number -> id, -1 unset */
	size_t alloc, used;         /* used: entries that may be set */
};

struct hashed_name {
	struct slice name;
	int id;
};

struct regmap {
	size_t nr;                  /* ids handed out */
	struct reg_prefix prefixes[REG_PREFIXES];
	size_t nr_prefixes;
	struct hashed_name *names;
	size_t nr_names, alloc_names;
	int *table;                 /* open addressing: index into names, -1 empty */
	size_t size;                /* power of two */
};

static uint32_t hash_slice(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h ^ (h >> 15);
}

static void regmap_reset(struct regmap *r)
{
	size_t i;

	r->nr = 0;
	r->nr_names = 0;
	if (r->table)
		memset(r->table, 0xff, r->size * sizeof(*r->table));
	for (i = 0; i < r->nr_prefixes; i++) {
		struct reg_prefix *p = &r->prefixes[i];
		memset(p->ids, 0xff, p->used * sizeof(*p->ids));
		p->used = 0;
	}
}

static void regmap_release(struct regmap *r)
{
	size_t i;

	for (i = 0; i < r->nr_prefixes; i++)
		free(r->prefixes[i].ids);
	free(r->names);
	free(r->table);
	memset(r, 0, sizeof(*r));
}

static void regmap_rehash(struct regmap *r, size_t size)
{
	size_t i;

	free(r->table);
	r->size = size;
	r->table = xmalloc(size * sizeof(*r->table));
	memset(r->table, 0xff, size * sizeof(*r->table));
	for (i = 0; i < r->nr_names; i++) {
		size_t h = hash_slice(r->names[i].name.s, r->names[i].name.n) & (size - 1);
		while (r->table[h] >= 0)
			h = (h + 1) & (size - 1);
		r->table[h] = (int)i;
	}
}

/* The slot of "%<prefix><number>" names, or NULL when s is not of that form. */
static int *regmap_numbered(struct regmap *r, const char *s, size_t n)
{
	size_t plen = 1, i;
	unsigned long num = 0;
	struct reg_prefix *p = NULL;

	if (n < 3 || s[0] != '%')
		return NULL;
	while (plen < n && ((s[plen] >= 'a' && s[plen] <= 'z') || (s[plen] >= 'A' && s[plen] <= 'Z')))
		plen++;
	if (plen == 1 || plen - 1 > REG_PREFIX_LEN || plen == n || (s[plen] == '0' && plen + 1 < n))
		return NULL;
	for (i = plen; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return NULL;
		num = num * 10 + (unsigned long)(s[i] - '0');
		if (num >= REG_MAX_NUMBER)
			return NULL;
	}
	for (i = 0; i < r->nr_prefixes; i++) {
		if (r->prefixes[i].n == plen - 1 && !memcmp(r->prefixes[i].s, s + 1, plen - 1)) {
			p = &r->prefixes[i];
			break;
		}
	}
	if (!p) {
		if (r->nr_prefixes == REG_PREFIXES)
			return NULL;
		p = &r->prefixes[r->nr_prefixes++];
		memcpy(p->s, s + 1, plen - 1);
		p->s[plen - 1] = '\0';
		p->n = plen - 1;
	}
	if (num >= p->alloc) {
		size_t old = p->alloc, want = num + 1 > old * 2 ? num + 1 : old * 2;
		p->ids = xrealloc(p->ids, want * sizeof(*p->ids));
		memset(p->ids + old, 0xff, (want - old) * sizeof(*p->ids));
		p->alloc = want;
	}
	if (num >= p->used)
		p->used = num + 1;
	return &p->ids[num];
}

/* The id of a name already interned, or -1; interns nothing. */
static int regmap_find(const struct regmap *r, const char *s, size_t n)
{
	size_t h, i;

	if (n >= 3 && s[0] == '%') {
		/* Numbered names live in the prefix arrays (see regmap_numbered). */
		for (i = 0; i < r->nr_prefixes; i++) {
			const struct reg_prefix *p = &r->prefixes[i];
			unsigned long num = 0;
			size_t k;
			if (n <= p->n + 1 || memcmp(p->s, s + 1, p->n) || s[p->n + 1] < '0' ||
			    s[p->n + 1] > '9')
				continue;
			for (k = p->n + 1; k < n && s[k] >= '0' && s[k] <= '9' && num < REG_MAX_NUMBER; k++)
				num = num * 10 + (unsigned long)(s[k] - '0');
			if (k == n && num < p->used && !(s[p->n + 1] == '0' && n > p->n + 2))
				return p->ids[num];
		}
	}
	if (!r->size)
		return -1;
	h = hash_slice(s, n) & (r->size - 1);
	while (r->table[h] >= 0) {
		const struct hashed_name *e = &r->names[r->table[h]];
		if (e->name.n == n && !memcmp(e->name.s, s, n))
			return e->id;
		h = (h + 1) & (r->size - 1);
	}
	return -1;
}

static int regmap_intern(struct regmap *r, const char *s, size_t n)
{
	int *slot = regmap_numbered(r, s, n);
	size_t h;

	if (slot) {
		if (*slot < 0)
			*slot = (int)r->nr++;
		return *slot;
	}
	if ((r->nr_names + 1) * 2 > r->size)
		regmap_rehash(r, r->size ? r->size * 2 : 256);
	h = hash_slice(s, n) & (r->size - 1);
	while (r->table[h] >= 0) {
		struct hashed_name *e = &r->names[r->table[h]];
		if (e->name.n == n && !memcmp(e->name.s, s, n))
			return e->id;
		h = (h + 1) & (r->size - 1);
	}
	ALLOC_GROW(r->names, r->nr_names + 1, r->alloc_names);
	r->names[r->nr_names].name.s = s;
	r->names[r->nr_names].name.n = n;
	r->names[r->nr_names].id = (int)r->nr;
	r->table[h] = (int)r->nr_names++;
	return (int)r->nr++;
}

/* ------------------------------------------------------ parser state */

enum def_op {
	D_CONST,    /* dst = k */
	D_COPY,     /* dst = a */
	D_STRONG,   /* dst = a, certainly an address (cvta.to.global) */
	D_ADD,      /* dst = a + b */
	D_PHI,      /* dst = a or b (selp) */
};

struct def {
	int dst, a, b;
	unsigned char op;
	struct val k;
};

enum use_kind {
	U_LOAD,     /* idx: load index; reg: address base */
	U_MEMOP,    /* idx: memop index; reg: address base; writes when store/atomic */
	U_WRITE,    /* reg is the address of an unmodelled instruction that may write */
	U_ESCAPE,   /* reg is stored to memory as a value: the pointer escapes */
};

struct use {
	unsigned char kind;
	int reg;
	size_t idx;
};

/* A call: its callee (NULL when indirect) and the register of each argument. */
struct call_rec {
	char *callee;
	int *args;                  /* register id or -1 */
	size_t nr_args;
};

/* The last register stored to each call parameter (st.param [param0], %rd6). */
struct param_store {
	struct slice name;
	int reg;
};

struct escape {
	int param;
	char *callee;               /* NULL: unknown callee */
	size_t arg;
};

/* Per function, kept until every function is parsed. */
struct flow {
	unsigned char *written;     /* per parameter */
	struct escape *esc;
	size_t nr_esc, alloc_esc;
};

/* One .loc line; parent is the previous .loc of the same inlining chain. */
struct loc_rec {
	unsigned file, line, inl_file, inl_line;
	int has_inl;
	long parent;
};

struct load_loc {
	size_t fn, load;
	long loc;
};

struct shared_var {
	struct slice name;
	size_t bytes;
};

struct parser {
	const char *name;
	struct ptx_module *m;
	const char *base, *p, *end;
	unsigned line;
	int seen_version, seen_target;

	struct shared_var *shvars;  /* module-scope .shared variables */
	size_t nr_shvars, alloc_shvars;
	struct regmap shnames;      /* their names -> index in shvars */
	size_t *shvar_seen;         /* function index + 1 that last counted it */

	struct loc_rec *locs;
	size_t nr_locs, alloc_locs;
	long cur_loc;
	struct load_loc *load_locs;
	size_t nr_load_locs, alloc_load_locs;

	struct flow *flows;
	size_t alloc_flows;

	/* per function scratch */
	struct regmap regs;
	struct def *defs;
	size_t nr_defs, alloc_defs;
	struct use *uses;
	size_t nr_uses, alloc_uses;
	struct call_rec *calls;
	size_t nr_calls, alloc_calls;
	struct param_store *pstores;
	size_t nr_pstores, alloc_pstores;
	struct val *vals;
	size_t alloc_vals;
	size_t alloc_loads, alloc_memops;
};

static int perr(struct parser *P, unsigned line, const char *what)
{
	return error_set(CA_E_INPUT, "%s:%u: %s", P->name, line, what);
}

/* ------------------------------------------------------ lexing */

static int is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
	       c == '%';
}

static int is_ident_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static int is_opcode_char(int c)
{
	return is_ident_char(c) || c == '.' || c == ':';
}

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Skips blanks, newlines and comments from p; counts lines. */
static const char *skip_ws(const char *p, const char *end, unsigned *line)
{
	while (p < end) {
		if (is_space(*p)) {
			p++;
		} else if (*p == '\n') {
			(*line)++;
			p++;
		} else if (*p == '/' && p + 1 < end && p[1] == '/') {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			p = nl ? nl : end;
		} else if (*p == '/' && p + 1 < end && p[1] == '*') {
			p += 2;
			while (p < end && !(*p == '*' && p + 1 < end && p[1] == '/')) {
				if (*p == '\n')
					(*line)++;
				p++;
			}
			p = p < end ? p + 2 : end;
		} else {
			break;
		}
	}
	return p;
}

static void skip_space(struct parser *P)
{
	P->p = skip_ws(P->p, P->end, &P->line);
}

/* Skips blanks and comments, but not newlines. */
static const char *skip_blank(const char *p, const char *end)
{
	while (p < end) {
		if (is_space(*p))
			p++;
		else if (*p == '/' && p + 1 < end && p[1] == '*') {
			const char *q = p + 2;
			while (q < end && !(*q == '*' && q + 1 < end && q[1] == '/')) {
				if (*q == '\n')
					return p;
				q++;
			}
			p = q < end ? q + 2 : end;
		} else
			break;
	}
	return p;
}

static const char *scan_ident(const char *p, const char *end)
{
	while (p < end && is_ident_char((unsigned char)*p))
		p++;
	return p;
}

/* End of the line at p: the '\n' or the end of the text. */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

/* Skips a string literal starting at p ('"'); returns the position after it. */
static const char *skip_string(const char *p, const char *end, unsigned *line)
{
	p++;
	while (p < end && *p != '"') {
		if (*p == '\\' && p + 1 < end)
			p++;
		if (*p == '\n')
			(*line)++;
		p++;
	}
	return p < end ? p + 1 : end;
}

enum stmt_end { STMT_OK, STMT_EOF, STMT_BRACE };

/* Bytes the statement scanner must look at; the rest are skipped in a tight loop. */
static const unsigned char stmt_special[256] = {
	[';'] = 1, ['\n'] = 1, ['"'] = 1, ['/'] = 1, ['('] = 1, ['['] = 1, ['{'] = 1,
	[')'] = 1, [']'] = 1, ['}'] = 1,
};

static const unsigned char operand_special[256] = {
	[','] = 1, ['"'] = 1, ['('] = 1, ['['] = 1, ['{'] = 1, [')'] = 1, [']'] = 1, ['}'] = 1,
};

/*
 * Finds the ';' ending the statement that starts at p, skipping comments,
 * strings and balanced (), [], {} (vector operands, initializers). Counts
 * newlines into *line. Stops with STMT_EOF at the end of the text and with
 * STMT_BRACE at a '}' that the statement did not open (a missing ';').
 */
static enum stmt_end scan_statement(const char *p, const char *end, unsigned *line,
				    const char **semi)
{
	int depth = 0;

	while (p < end) {
		char c;
		while (p < end && !stmt_special[(unsigned char)*p])
			p++;
		if (p >= end)
			break;
		c = *p;
		if (c == ';' && depth <= 0) {
			*semi = p;
			return STMT_OK;
		}
		switch (c) {
		case '\n':
			(*line)++;
			p++;
			break;
		case '"':
			p = skip_string(p, end, line);
			break;
		case '/':
			if (p + 1 < end && (p[1] == '/' || p[1] == '*'))
				p = skip_ws(p, end, line);
			else
				p++;
			break;
		case '(': case '[': case '{':
			depth++;
			p++;
			break;
		case ')': case ']':
			depth--;
			p++;
			break;
		case '}':
			if (depth <= 0) {
				*semi = p;
				return STMT_BRACE;
			}
			depth--;
			p++;
			break;
		default:
			p++;
		}
	}
	*semi = end;
	return STMT_EOF;
}

/* Skips a balanced { } block starting at p ('{'). Returns NULL if unclosed. */
static const char *skip_block(const char *p, const char *end, unsigned *line)
{
	int depth = 0;

	while (p < end) {
		switch (*p) {
		case '{':
			depth++;
			p++;
			break;
		case '}':
			p++;
			if (--depth == 0)
				return p;
			break;
		case '\n':
			(*line)++;
			p++;
			break;
		case '"':
			p = skip_string(p, end, line);
			break;
		case '/':
			if (p + 1 < end && (p[1] == '/' || p[1] == '*'))
				p = skip_ws(p, end, line);
			else
				p++;
			break;
		default:
			p++;
		}
	}
	return NULL;
}

static struct slice trim(const char *s, const char *e)
{
	struct slice r;

	while (s < e && (is_space(*s) || *s == '\n'))
		s++;
	while (e > s && (is_space(e[-1]) || e[-1] == '\n'))
		e--;
	r.s = s;
	r.n = (size_t)(e - s);
	return r;
}

static int slice_eq(struct slice a, const char *lit)
{
	size_t n = strlen(lit);
	return a.n == n && !memcmp(a.s, lit, n);
}

/* slice_eq for a string literal (only: "" lit fails to compile otherwise), no strlen. */
#define SLICE_IS(a, lit) \
	((a).n == sizeof("" lit) - 1 && !memcmp((a).s, "" lit, sizeof("" lit) - 1))

/* Parses an unsigned decimal number; returns 0 and sets *v, or -1. */
static int parse_uint(const char *s, const char *e, unsigned long *v)
{
	unsigned long r = 0;

	if (s >= e || *s < '0' || *s > '9')
		return -1;
	for (; s < e && *s >= '0' && *s <= '9'; s++) {
		if (r > (ULONG_MAX - 9) / 10)
			return -1;
		r = r * 10 + (unsigned long)(*s - '0');
	}
	*v = r;
	return 0;
}

/*
 * Splits the operand text [s, e) at top-level commas. Fills up to max
 * slices, returns how many operands there are (possibly more than max).
 */
static size_t split_operands(const char *s, const char *e, struct slice *ops, size_t max)
{
	size_t n = 0;
	int depth = 0;
	const char *start = s;

	if (trim(s, e).n == 0)
		return 0;
	for (; s < e; s++) {
		char c;
		while (s < e && !operand_special[(unsigned char)*s])
			s++;
		if (s >= e)
			break;
		c = *s;
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (c == '"') {
			unsigned dummy = 0;
			s = skip_string(s, e, &dummy) - 1;
		} else if (c == ',' && depth <= 0) {
			if (n < max)
				ops[n] = trim(start, s);
			n++;
			start = s + 1;
		}
	}
	if (n < max)
		ops[n] = trim(start, e);
	return n + 1;
}

/* The leading identifier of an operand ("%rd4" of "%rd4+16"), maybe empty. */
static struct slice operand_name(struct slice op)
{
	struct slice r = { op.s, 0 };
	const char *p = op.s, *e = op.s + op.n;

	if (p < e && *p == '[')
		p++;
	while (p < e && is_space(*p))
		p++;
	if (p < e && *p == '-')
		return r;
	if (p < e && is_ident_start((unsigned char)*p)) {
		r.s = p;
		r.n = (size_t)(scan_ident(p + 1, e) - p);
	}
	return r;
}

/* ------------------------------------------------------ opcode qualifiers */

struct quals {
	struct slice mnemonic;      /* "ld" */
	int space_global, space_other, space_param;
	int strong_sem;             /* volatile relaxed acquire mmio */
	int nc;
	enum ptx_cache_op cop;
	enum ptx_l1_eviction l1;
	int l2;
	int vec;
	int bits;
	int wide;
};

/* Bits of a PTX type name ("f32" -> 32), 0 when q is not a type. */
static int type_bits(struct slice q)
{
	const char *s = q.s;

	if (q.n < 2 || q.n > 6)
		return 0;
	switch (s[0]) {
	case 'b': case 'u': case 's': case 'f':
		if (q.n == 2 && s[1] == '8' && s[0] != 'f')
			return 8;
		if (q.n == 3) {
			if (s[1] == '1' && s[2] == '6')
				return 16;
			if (s[1] == '3' && s[2] == '2')
				return 32;
			if (s[1] == '6' && s[2] == '4')
				return 64;
			return 0;
		}
		if (SLICE_IS(q, "b128"))
			return 128;
		if (SLICE_IS(q, "bf16"))
			return 16;
		if (SLICE_IS(q, "f16x2") || SLICE_IS(q, "bf16x2"))
			return 32;
		return 0;
	case 't':
		return SLICE_IS(q, "tf32") ? 32 : 0;
	case 'e':
		if (SLICE_IS(q, "e4m3") || SLICE_IS(q, "e5m2"))
			return 8;
		if (SLICE_IS(q, "e4m3x2") || SLICE_IS(q, "e5m2x2"))
			return 16;
		return 0;
	default:
		return 0;
	}
}

static void parse_quals(struct slice op, struct quals *q)
{
	const char *p = op.s, *e = op.s + op.n;
	const char *dot = memchr(p, '.', op.n);

	memset(q, 0, sizeof(*q));
	q->vec = 1;
	q->mnemonic.s = p;
	q->mnemonic.n = (size_t)((dot ? dot : e) - p);
	p = dot;
	while (p && p < e) {
		struct slice c;
		const char *next;

		p++;
		next = memchr(p, '.', (size_t)(e - p));
		c.s = p;
		c.n = (size_t)((next ? next : e) - p);
		p = next;
		if (!c.n)
			continue;
		switch (c.s[0]) {
		case 'g':
			if (SLICE_IS(c, "global"))
				q->space_global = 1;
			break;
		case 's':
			if (c.n >= 6 && !memcmp(c.s, "shared", 6))
				q->space_other = 1;
			else if (SLICE_IS(c, "sys"))
				;
			else if (!q->bits)
				q->bits = type_bits(c);
			break;
		case 'l':
			if (SLICE_IS(c, "local"))
				q->space_other = 1;
			else if (SLICE_IS(c, "lu"))
				q->cop = PTX_CACHE_OP_LU;
			break;
		case 'p':
			if (c.n >= 5 && !memcmp(c.s, "param", 5))
				q->space_param = 1;
			break;
		case 'c':
			if (SLICE_IS(c, "const"))
				q->space_other = 1;
			else if (SLICE_IS(c, "ca"))
				q->cop = PTX_CACHE_OP_CA;
			else if (SLICE_IS(c, "cg"))
				q->cop = PTX_CACHE_OP_CG;
			else if (SLICE_IS(c, "cs"))
				q->cop = PTX_CACHE_OP_CS;
			else if (SLICE_IS(c, "cv"))
				q->cop = PTX_CACHE_OP_CV;
			break;
		case 'n':
			if (SLICE_IS(c, "nc"))
				q->nc = 1;
			break;
		case 'v':
			if (SLICE_IS(c, "volatile"))
				q->strong_sem = 1;
			else if (SLICE_IS(c, "v2"))
				q->vec = 2;
			else if (SLICE_IS(c, "v4"))
				q->vec = 4;
			else if (SLICE_IS(c, "v8"))
				q->vec = 8;
			break;
		case 'r':
			if (SLICE_IS(c, "relaxed"))
				q->strong_sem = 1;
			break;
		case 'a':
			if (SLICE_IS(c, "acquire"))
				q->strong_sem = 1;
			break;
		case 'm':
			if (SLICE_IS(c, "mmio"))
				q->strong_sem = 1;
			break;
		case 'w':
			if (SLICE_IS(c, "wide"))
				q->wide = 1;
			break;
		case 'L':
			if (c.n > 4 && !memcmp(c.s, "L1::", 4)) {
				struct slice l = { c.s + 4, c.n - 4 };
				if (SLICE_IS(l, "evict_normal"))
					q->l1 = PTX_L1_EVICT_NORMAL;
				else if (SLICE_IS(l, "evict_unchanged"))
					q->l1 = PTX_L1_EVICT_UNCHANGED;
				else if (SLICE_IS(l, "evict_first"))
					q->l1 = PTX_L1_EVICT_FIRST;
				else if (SLICE_IS(l, "evict_last"))
					q->l1 = PTX_L1_EVICT_LAST;
				else if (SLICE_IS(l, "no_allocate"))
					q->l1 = PTX_L1_NO_ALLOCATE;
			} else if (c.n > 4 && !memcmp(c.s, "L2::", 4)) {
				q->l2 = 1;
			}
			break;
		default:
			if (!q->bits)
				q->bits = type_bits(c);
		}
	}
}

/* ------------------------------------------------------ module pieces */

static void add_file(struct parser *P, unsigned long idx, struct slice name)
{
	struct ptx_module *m = P->m;

	if (idx > 1000000)
		return;
	if (idx >= m->nr_files) {
		m->files = xrealloc(m->files, (idx + 1) * sizeof(*m->files));
		memset(m->files + m->nr_files, 0, (idx + 1 - m->nr_files) * sizeof(*m->files));
		m->nr_files = idx + 1;
	}
	free(m->files[idx]);
	m->files[idx] = xstrndup(name.s, name.n);
}

/* .file N "name" [, timestamp, size] -- the rest of the line from p. */
static void parse_file_directive(struct parser *P, const char *p, const char *e)
{
	unsigned long idx;
	const char *q;

	p = skip_blank(p, e);
	q = p;
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	if (parse_uint(p, q, &idx))
		return;
	p = skip_blank(q, e);
	if (p < e && *p == '"') {
		unsigned dummy = 0;
		const char *close = skip_string(p, e, &dummy);
		struct slice name = { p + 1, (size_t)(close - p - 1) };
		if (close <= e && close[-1] == '"' && close - p >= 2)
			name.n--;
		add_file(P, idx, name);
	}
}

/* .loc FILE LINE COL [, function_name L [+off], inlined_at FILE LINE COL] */
static void parse_loc_directive(struct parser *P, const char *p, const char *e)
{
	struct loc_rec r;
	unsigned long v[3] = { 0, 0, 0 };
	const char *inl;
	int i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < 2; i++) {
		const char *q;
		p = skip_blank(p, e);
		q = p;
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (parse_uint(p, q, &v[i]))
			return;
		p = q;
	}
	r.file = (unsigned)(v[0] > UINT_MAX ? UINT_MAX : v[0]);
	r.line = (unsigned)(v[1] > UINT_MAX ? UINT_MAX : v[1]);
	r.parent = -1;
	inl = NULL;
	for (; p + 10 <= e; p++)
		if (*p == 'i' && !memcmp(p, "inlined_at", 10)) {
			inl = p + 10;
			break;
		}
	if (inl) {
		for (i = 0; i < 2; i++) {
			const char *q;
			inl = skip_blank(inl, e);
			q = inl;
			while (q < e && *q >= '0' && *q <= '9')
				q++;
			if (parse_uint(inl, q, &v[i]))
				break;
			inl = q;
		}
		if (i == 2) {
			r.has_inl = 1;
			r.inl_file = (unsigned)(v[0] > UINT_MAX ? UINT_MAX : v[0]);
			r.inl_line = (unsigned)(v[1] > UINT_MAX ? UINT_MAX : v[1]);
			r.parent = P->cur_loc;
		}
	}
	ALLOC_GROW(P->locs, P->nr_locs + 1, P->alloc_locs);
	P->locs[P->nr_locs] = r;
	P->cur_loc = (long)P->nr_locs++;
}

/*
 * Size in bytes of a variable declaration's tail: "[.align N] [.vN] .type
 * name[dims]...". Unsized arrays ([]) are 0 bytes.
 */
static size_t decl_bytes(const char *p, const char *e, struct slice *name)
{
	size_t elem = 0, vec = 1, count = 1;
	int in_init = 0;

	name->s = p;
	name->n = 0;
	while (p < e && !in_init) {
		p = skip_blank(p, e);
		while (p < e && *p == '\n')
			p = skip_blank(p + 1, e);
		if (p >= e)
			break;
		if (*p == '.') {
			const char *q = scan_ident(p + 1, e);
			struct slice t = { p + 1, (size_t)(q - p - 1) };
			int bits = type_bits(t);
			if (bits)
				elem = (size_t)(bits / 8);
			else if (SLICE_IS(t, "v2"))
				vec = 2;
			else if (SLICE_IS(t, "v4"))
				vec = 4;
			else if (SLICE_IS(t, "v8"))
				vec = 8;
			else if (SLICE_IS(t, "pred"))
				elem = 1;
			p = q > p + 1 ? q : p + 1;
		} else if (is_ident_start((unsigned char)*p)) {
			const char *q = scan_ident(p + 1, e);
			name->s = p;
			name->n = (size_t)(q - p);
			p = q;
		} else if (*p == '[') {
			const char *q = memchr(p, ']', (size_t)(e - p));
			unsigned long d;
			const char *ds = skip_blank(p + 1, e);
			if (!q)
				break;
			if (parse_uint(ds, q, &d))
				count = 0;
			else if (d && count > SIZE_MAX / 4 / d)
				count = SIZE_MAX / 4;
			else
				count *= d;
			p = q + 1;
		} else if (*p == '=') {
			in_init = 1;
		} else {
			p++;
		}
	}
	if (elem && vec && count > SIZE_MAX / 4 / (elem * vec))
		return SIZE_MAX / 4;
	return elem * vec * count;
}

/* ------------------------------------------------------ function headers */

/* A new function at index nr_functions (counted only once its body parsed). */
static struct ptx_function *new_function(struct parser *P)
{
	struct ptx_module *m = P->m;
	size_t old = P->alloc_flows;

	/* m->functions and P->flows grow together, so one capacity serves both. */
	ALLOC_GROW(m->functions, m->nr_functions + 1, P->alloc_flows);
	if (P->alloc_flows != old) {
		P->flows = xrealloc(P->flows, P->alloc_flows * sizeof(*P->flows));
		memset(P->flows + old, 0, (P->alloc_flows - old) * sizeof(*P->flows));
	}
	memset(&m->functions[m->nr_functions], 0, sizeof(m->functions[0]));
	return &m->functions[m->nr_functions];
}

static void function_release(struct ptx_function *f)
{
	size_t i;

	free(f->name);
	for (i = 0; i < f->nr_params; i++) {
		free(f->params[i].name);
		free(f->params[i].type);
	}
	free(f->params);
	for (i = 0; i < f->nr_loads; i++) {
		free(f->loads[i].opcode);
		free(f->loads[i].dest);
		free(f->loads[i].address);
		free(f->loads[i].predicate);
	}
	free(f->loads);
	for (i = 0; i < f->nr_memops; i++)
		free(f->memops[i].opcode);
	free(f->memops);
}

static void flow_release(struct flow *fl)
{
	size_t i;

	free(fl->written);
	for (i = 0; i < fl->nr_esc; i++)
		free(fl->esc[i].callee);
	free(fl->esc);
}

/* One parameter "[.param|.reg] <attrs and type> name[dims]". */
static void add_param(struct parser *P, struct ptx_function *f, size_t *alloc, struct slice t)
{
	struct ptx_param *pa;
	const char *p = t.s, *e = t.s + t.n;
	struct slice name = { NULL, 0 };
	struct strbuf type = STRBUF_INIT;
	int ptr_sized = 0, array = 0;
	const char *want64[] = { "u64", "b64", "s64" }, *want32[] = { "u32", "b32", "s32" };
	const char **want = P->m->address_size == 32 ? want32 : want64;

	if (!t.n)
		return;
	while (p < e) {
		const char *q;
		if (is_space(*p) || *p == '\n') {
			p++;
			continue;
		}
		if (*p == '.') {
			q = scan_ident(p + 1, e);
			if (q > p + 1) {
				struct slice tok = { p + 1, (size_t)(q - p - 1) };
				if (!SLICE_IS(tok, "param") && !SLICE_IS(tok, "reg")) {
					int i;
					if (type.len)
						strbuf_addch(&type, ' ');
					strbuf_add(&type, p, (size_t)(q - p));
					for (i = 0; i < 3; i++)
						if (slice_eq(tok, want[i]))
							ptr_sized = 1;
				}
			}
			p = q > p + 1 ? q : p + 1;
		} else if (is_ident_start((unsigned char)*p)) {
			q = scan_ident(p + 1, e);
			name.s = p;
			name.n = (size_t)(q - p);
			p = q;
		} else if (*p == '[') {
			array = 1;
			q = memchr(p, ']', (size_t)(e - p));
			p = q ? q + 1 : e;
		} else if (*p >= '0' && *p <= '9') {
			if (type.len)
				strbuf_addch(&type, ' ');
			q = p;
			while (q < e && *q >= '0' && *q <= '9')
				q++;
			strbuf_add(&type, p, (size_t)(q - p));
			p = q;
		} else {
			p++;
		}
	}
	if (array && name.n) {
		const char *open = memchr(name.s, '[', (size_t)(e - name.s));
		if (open) {
			const char *close = memchr(open, ']', (size_t)(e - open));
			if (close) {
				strbuf_addch(&type, ' ');
				strbuf_add(&type, open, (size_t)(close - open + 1));
			}
		}
	}
	ALLOC_GROW(f->params, f->nr_params + 1, *alloc);
	pa = &f->params[f->nr_params++];
	pa->name = name.n ? xstrndup(name.s, name.n) : xstrdup("");
	pa->type = strbuf_detach(&type, NULL);
	pa->is_pointer_sized = ptr_sized && !array;
}

/* ------------------------------------------------------ instructions */

static int intern(struct parser *P, struct slice name)
{
	return name.n ? regmap_intern(&P->regs, name.s, name.n) : -1;
}

static void add_def(struct parser *P, int dst, enum def_op op, int a, int b, struct val k)
{
	struct def *d;

	if (dst < 0)
		return;
	ALLOC_GROW(P->defs, P->nr_defs + 1, P->alloc_defs);
	d = &P->defs[P->nr_defs++];
	d->dst = dst;
	d->op = (unsigned char)op;
	d->a = a;
	d->b = b;
	d->k = k;
}

static void add_use(struct parser *P, enum use_kind kind, int reg, size_t idx)
{
	ALLOC_GROW(P->uses, P->nr_uses + 1, P->alloc_uses);
	P->uses[P->nr_uses].kind = (unsigned char)kind;
	P->uses[P->nr_uses].reg = reg;
	P->uses[P->nr_uses].idx = idx;
	P->nr_uses++;
}

static int param_index(const struct ptx_function *f, struct slice name)
{
	size_t i;

	for (i = 0; i < f->nr_params; i++)
		if (slice_eq(name, f->params[i].name))
			return (int)i;
	return -1;
}

/* A name that is a number, not a register or symbol. */
static int is_immediate(struct slice op)
{
	return op.n && ((op.s[0] >= '0' && op.s[0] <= '9') || op.s[0] == '-' || op.s[0] == '+');
}

/* Registers defined by a destination operand: "%r1" or "{%f1, %f2}". */
static void def_dests(struct parser *P, struct slice dst, struct val k)
{
	const char *p = dst.s, *e = dst.s + dst.n;

	if (dst.n && *p == '{') {
		for (p++; p < e; p++) {
			if (is_ident_start((unsigned char)*p)) {
				const char *q = scan_ident(p + 1, e);
				struct slice n = { p, (size_t)(q - p) };
				add_def(P, intern(P, n), D_CONST, -1, -1, k);
				p = q - 1;
			}
		}
		return;
	}
	add_def(P, intern(P, operand_name(dst)), D_CONST, -1, -1, k);
}

static void note_shared_refs(struct parser *P, struct ptx_function *f, const struct slice *ops,
			     size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct slice nm = operand_name(ops[i]);
		if (!nm.n)
			continue;
		j = (size_t)regmap_find(&P->shnames, nm.s, nm.n);
		if (j < P->nr_shvars) {
			if (P->shvar_seen[j] != P->m->nr_functions + 1) {
				P->shvar_seen[j] = P->m->nr_functions + 1;
				f->uses_shared = 1;
				f->static_shared_bytes += P->shvars[j].bytes;
			}
		}
	}
}

/* Index of the first bracketed operand, or -1. */
static int bracket_operand(const struct slice *ops, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ops[i].n && ops[i].s[0] == '[')
			return (int)i;
	return -1;
}

static struct slice bracket_inner(struct slice op)
{
	const char *close = memchr(op.s, ']', op.n);
	return trim(op.s + 1, close ? close : op.s + op.n);
}

#define MAX_OPS 16

static void record_load(struct parser *P, struct ptx_function *f, struct slice opcode,
			const struct quals *q, struct slice pred, const struct slice *ops,
			size_t nops, const char *stmt_end, unsigned line, int is_ldu)
{
	struct ptx_load *ld;
	int addr = bracket_operand(ops, nops < MAX_OPS ? nops : MAX_OPS);

	ALLOC_GROW(f->loads, f->nr_loads + 1, P->alloc_loads);
	ld = &f->loads[f->nr_loads];
	memset(ld, 0, sizeof(*ld));
	ld->ordinal = (unsigned)f->nr_loads;
	ld->ptx_line = line;
	ld->text_offset = (size_t)(opcode.s - P->base);
	ld->text_len = (size_t)(stmt_end - opcode.s + 1);
	ld->opcode = xstrndup(opcode.s, opcode.n);
	ld->dest = nops ? xstrndup(ops[0].s, ops[0].n) : xstrdup("");
	if (addr >= 0) {
		struct slice in = bracket_inner(ops[addr]);
		ld->address = xstrndup(in.s, in.n);
	} else {
		ld->address = xstrdup("");
	}
	ld->predicate = pred.n ? xstrndup(pred.s, pred.n) : NULL;
	ld->space = q->space_global ? PTX_SPACE_GLOBAL : PTX_SPACE_GENERIC;
	ld->is_ldu = is_ldu;
	ld->nc = q->nc;
	ld->cache_op = q->cop;
	ld->l1_eviction = q->l1;
	ld->has_l2_qualifier = q->l2;
	ld->vector = q->vec;
	ld->bits = q->bits;
	ld->strong = q->strong_sem || q->cop == PTX_CACHE_OP_CV;
	ld->param = -1;
	ld->read_only = -1;
	ld->line = 0;
	if (addr >= 0)
		add_use(P, U_LOAD, intern(P, operand_name(ops[addr])), f->nr_loads);
	ALLOC_GROW(P->load_locs, P->nr_load_locs + 1, P->alloc_load_locs);
	P->load_locs[P->nr_load_locs].fn = P->m->nr_functions;
	P->load_locs[P->nr_load_locs].load = f->nr_loads;
	P->load_locs[P->nr_load_locs].loc = P->cur_loc;
	P->nr_load_locs++;
	f->nr_loads++;
}

static void record_memop(struct parser *P, struct ptx_function *f, enum ptx_memop_kind kind,
			 struct slice opcode, unsigned line, int addr_reg)
{
	struct ptx_memop *op;

	ALLOC_GROW(f->memops, f->nr_memops + 1, P->alloc_memops);
	op = &f->memops[f->nr_memops];
	op->kind = kind;
	op->ptx_line = line;
	op->text_offset = (size_t)(opcode.s - P->base);
	op->opcode = xstrndup(opcode.s, opcode.n);
	op->param = -1;
	if (addr_reg >= 0)
		add_use(P, U_MEMOP, addr_reg, f->nr_memops);
	f->nr_memops++;
}

/* call{.uni} [(ret),] callee [, (args)] [, proto] */
static void record_call(struct parser *P, const struct slice *ops, size_t nops)
{
	struct call_rec *c;
	size_t i = 0;
	struct slice callee, args = { NULL, 0 };

	if (nops > MAX_OPS)
		nops = MAX_OPS;
	if (nops >= 2 && ops[0].n && ops[0].s[0] == '(')
		i = 1;
	if (i >= nops)
		return;
	callee = ops[i];
	if (i + 1 < nops && ops[i + 1].n && ops[i + 1].s[0] == '(')
		args = ops[i + 1];
	ALLOC_GROW(P->calls, P->nr_calls + 1, P->alloc_calls);
	c = &P->calls[P->nr_calls++];
	memset(c, 0, sizeof(*c));
	{
		struct slice nm = operand_name(callee);
		int is_reg = nm.n && nm.s[0] == '%';
		/* A register callee is an indirect call: unknown target. */
		c->callee = (nm.n && !is_reg) ? xstrndup(nm.s, nm.n) : NULL;
	}
	if (args.n >= 2) {
		struct slice inner = trim(args.s + 1, args.s + args.n - 1);
		struct slice a[64];
		size_t n = split_operands(inner.s, inner.s + inner.n, a, 64), k;
		if (n > 64)
			n = 64;
		c->args = xmalloc((n ? n : 1) * sizeof(*c->args));
		c->nr_args = n;
		for (k = 0; k < n; k++) {
			struct slice nm = operand_name(a[k]);
			size_t s;
			c->args[k] = -1;
			for (s = P->nr_pstores; s-- > 0;) {
				if (P->pstores[s].name.n == nm.n &&
				    !memcmp(P->pstores[s].name.s, nm.s, nm.n)) {
					c->args[k] = P->pstores[s].reg;
					break;
				}
			}
		}
	}
}

static void note_param_store(struct parser *P, struct slice name, int reg)
{
	size_t s;

	for (s = 0; s < P->nr_pstores; s++) {
		if (P->pstores[s].name.n == name.n && !memcmp(P->pstores[s].name.s, name.s, name.n)) {
			P->pstores[s].reg = reg;
			return;
		}
	}
	ALLOC_GROW(P->pstores, P->nr_pstores + 1, P->alloc_pstores);
	P->pstores[P->nr_pstores].name = name;
	P->pstores[P->nr_pstores].reg = reg;
	P->nr_pstores++;
}

#define mnem_is(mn, lit) SLICE_IS(mn, lit)

/*
 * One instruction: [opcode.s, opcode end) then operands up to semi.
 * Records loads, memops, definitions and uses.
 */
static void do_instruction(struct parser *P, struct ptx_function *f, struct slice opcode,
			   struct slice pred, const char *semi, unsigned line)
{
	struct slice ops[MAX_OPS];
	struct quals q;
	size_t nops;
	const char *args = opcode.s + opcode.n;
	struct slice mn;
	int ptr_bits = P->m->address_size == 32 ? 32 : 64;

	nops = split_operands(args, semi, ops, MAX_OPS);
	if (P->nr_shvars)
		note_shared_refs(P, f, ops, nops < MAX_OPS ? nops : MAX_OPS);
	parse_quals(opcode, &q);
	mn = q.mnemonic;
	if (nops > MAX_OPS)
		nops = MAX_OPS;

	switch (mn.s[0]) {
	case 'l':
		if (mnem_is(mn, "ld") || mnem_is(mn, "ldu")) {
			int is_ldu = mn.n == 3;
			int width = q.bits;
			if (q.space_param) {
				/* ld.param: a function parameter (or a call's return value). */
				int addr = bracket_operand(ops, nops);
				struct val k = { V_NONE, 0, -1 };
				if (width == ptr_bits && q.vec == 1 && addr >= 0) {
					int pi = param_index(f, operand_name(bracket_inner(ops[addr])));
					if (pi >= 0) {
						k.kind = V_PARAM;
						k.param = pi;
					} else {
						k = val_unk;
					}
				}
				if (k.kind != V_NONE && nops)
					def_dests(P, ops[0], k);
				return;
			}
			if (!q.space_other)
				record_load(P, f, opcode, &q, pred, ops, nops, semi, line, is_ldu);
			/* A loaded pointer-sized value may be a pointer of unknown origin. */
			if (width >= ptr_bits && nops)
				def_dests(P, ops[0], val_unk);
			return;
		}
		break;
	case 's':
		if (mnem_is(mn, "st")) {
			int addr = bracket_operand(ops, nops);
			int reg = addr >= 0 ? intern(P, operand_name(ops[addr])) : -1;
			if (q.space_param) {
				if (addr >= 0 && (size_t)addr + 1 < nops) {
					struct slice v = operand_name(ops[addr + 1]);
					note_param_store(P, operand_name(bracket_inner(ops[addr])),
							 is_immediate(ops[addr + 1]) ? -1 : intern(P, v));
				}
				return;
			}
			if (!q.space_other)
				record_memop(P, f, PTX_MEMOP_STORE, opcode, line, reg);
			/* Storing a pointer as data lets it escape. */
			if (addr >= 0 && (size_t)addr + 1 < nops && q.bits >= ptr_bits) {
				struct slice v = ops[addr + 1];
				if (v.n && v.s[0] == '{') {
					const char *p = v.s, *e = v.s + v.n;
					for (p++; p < e; p++) {
						if (is_ident_start((unsigned char)*p)) {
							const char *qq = scan_ident(p + 1, e);
							struct slice n = { p, (size_t)(qq - p) };
							add_use(P, U_ESCAPE, intern(P, n), 0);
							p = qq - 1;
						}
					}
				} else if (!is_immediate(v)) {
					add_use(P, U_ESCAPE, intern(P, operand_name(v)), 0);
				}
			}
			return;
		}
		if (mnem_is(mn, "sub"))
			goto arith;
		if (mnem_is(mn, "selp")) {
			if (nops >= 3)
				add_def(P, intern(P, operand_name(ops[0])), D_PHI,
					is_immediate(ops[1]) ? -1 : intern(P, operand_name(ops[1])),
					is_immediate(ops[2]) ? -1 : intern(P, operand_name(ops[2])),
					val_bot);
			return;
		}
		break;
	case 'a':
		if (mnem_is(mn, "atom"))
			goto atomic;
		if (mnem_is(mn, "add") || mnem_is(mn, "and"))
			goto arith;
		if (mnem_is(mn, "applypriority"))
			return;
		break;
	case 'r':
		if (mnem_is(mn, "red"))
			goto atomic;
		if (mnem_is(mn, "ret"))
			return;
		break;
	case 'o':
		if (mnem_is(mn, "or"))
			goto arith;
		break;
	case 'x':
		if (mnem_is(mn, "xor"))
			goto arith;
		break;
	case 'm':
		if (mnem_is(mn, "mov")) {
			if (nops >= 2) {
				int dst = intern(P, operand_name(ops[0]));
				if (ops[1].n && ops[1].s[0] == '{')
					add_def(P, dst, D_CONST, -1, -1,
						q.bits >= ptr_bits ? val_unk : (struct val){ V_NONE, 0, -1 });
				else if (!is_immediate(ops[1]))
					add_def(P, dst, D_COPY, intern(P, operand_name(ops[1])), -1,
						val_bot);
			}
			return;
		}
		if (mnem_is(mn, "mad")) {
			if (nops >= 4 && !is_immediate(ops[3]))
				add_def(P, intern(P, operand_name(ops[0])), D_COPY,
					intern(P, operand_name(ops[3])), -1, val_bot);
			return;
		}
		if (mnem_is(mn, "membar")) {
			record_memop(P, f, PTX_MEMOP_FENCE, opcode, line, -1);
			return;
		}
		break;
	case 'f':
		if (mnem_is(mn, "fence")) {
			record_memop(P, f, PTX_MEMOP_FENCE, opcode, line, -1);
			return;
		}
		break;
	case 'b':
		if (mnem_is(mn, "bar") || mnem_is(mn, "barrier")) {
			/* Block barriers only: not bar.warp.sync, not barrier.cluster. */
			const char *rest = opcode.s + mn.n;
			size_t rn = opcode.n - mn.n;
			if (!(rn >= 5 && !memcmp(rest, ".warp", 5)) &&
			    !(rn >= 8 && !memcmp(rest, ".cluster", 8)))
				record_memop(P, f, PTX_MEMOP_BARRIER, opcode, line, -1);
			return;
		}
		if (mnem_is(mn, "bra"))
			return;
		break;
	case 'c':
		if (mnem_is(mn, "cvta")) {
			/* cvta.to.global: certainly a global address. cvta.global:
			 * its generic form. Other spaces: not a parameter's memory. */
			if (nops >= 2 && q.space_global && !is_immediate(ops[1])) {
				int to = opcode.n >= 8 && !memcmp(opcode.s + 4, ".to.", 4);
				add_def(P, intern(P, operand_name(ops[0])), to ? D_STRONG : D_COPY,
					intern(P, operand_name(ops[1])), -1, val_bot);
			}
			return;
		}
		if (mnem_is(mn, "call")) {
			record_call(P, ops, nops);
			return;
		}
		if (mnem_is(mn, "cp")) {
			/* cp.async*: the first address operand is written. */
			int addr = bracket_operand(ops, nops);
			if (addr >= 0)
				add_use(P, U_WRITE, intern(P, operand_name(ops[addr])), 0);
			return;
		}
		if (mnem_is(mn, "createpolicy"))
			return;
		break;
	case 'p':
		if (mnem_is(mn, "prefetch") || mnem_is(mn, "prefetchu"))
			return;
		break;
	default:
		break;
	}
	/* Anything else that addresses memory may write it, unless it only reads. */
	{
		static const char *const readers[] = {
			"ldmatrix", "tex", "tld4", "suld", "txq", "suq", "isspacep", "istypep",
		};
		size_t i;
		for (i = 0; i < ARRAY_SIZE(readers); i++)
			if (slice_eq(mn, readers[i]))
				return;
		if (mnem_is(mn, "wmma") && opcode.n > 10 && !memcmp(opcode.s, "wmma.load.", 10))
			return;
		for (i = 0; i < nops; i++)
			if (ops[i].n && ops[i].s[0] == '[')
				add_use(P, U_WRITE, intern(P, operand_name(ops[i])), 0);
	}
	return;

arith:
	if (nops >= 3)
		add_def(P, intern(P, operand_name(ops[0])), D_ADD,
			is_immediate(ops[1]) ? -1 : intern(P, operand_name(ops[1])),
			is_immediate(ops[2]) ? -1 : intern(P, operand_name(ops[2])), val_bot);
	return;

atomic:
	if (!q.space_other) {
		int addr = bracket_operand(ops, nops);
		record_memop(P, f, PTX_MEMOP_ATOMIC, opcode, line,
			     addr >= 0 ? intern(P, operand_name(ops[addr])) : -1);
	}
	if (mn.n == 4 && nops && q.bits >= ptr_bits)
		def_dests(P, ops[0], val_unk);
	/* The stored operand may be a pointer. */
	{
		size_t i;
		int addr = bracket_operand(ops, nops);
		for (i = (size_t)(addr + 1); addr >= 0 && i < nops; i++)
			if (q.bits >= ptr_bits && !is_immediate(ops[i]))
				add_use(P, U_ESCAPE, intern(P, operand_name(ops[i])), 0);
	}
}

/* ------------------------------------------------------ dataflow */

static struct val reg_val(const struct parser *P, int r)
{
	return r < 0 ? val_bot : P->vals[r];
}

/*
 * Solves the definitions: each register's value is the join of what every
 * definition gives it. Values only rise in a lattice of height 4, so the
 * number of passes is small; a cap bounds it on pathological input.
 */
static void solve_flow(struct parser *P)
{
	size_t i, pass, n = P->regs.nr;

	ALLOC_GROW(P->vals, n + 1, P->alloc_vals);
	for (i = 0; i < n; i++)
		P->vals[i] = val_bot;
	for (pass = 0; pass < 64; pass++) {
		int changed = 0;
		for (i = 0; i < P->nr_defs; i++) {
			const struct def *d = &P->defs[i];
			struct val v, old = P->vals[d->dst], nv;
			switch (d->op) {
			case D_CONST:
				v = d->k;
				break;
			case D_COPY:
				v = reg_val(P, d->a);
				break;
			case D_STRONG:
				v = reg_val(P, d->a);
				if (v.kind == V_PARAM)
					v.strong = 1;
				break;
			case D_ADD:
				v = join_add(reg_val(P, d->a), reg_val(P, d->b));
				break;
			default:
				v = join_phi(reg_val(P, d->a), reg_val(P, d->b));
				break;
			}
			nv = join_phi(old, v);
			if (!val_eq(nv, old)) {
				P->vals[d->dst] = nv;
				changed = 1;
			}
		}
		if (!changed)
			break;
	}
}

static int val_param(struct val v)
{
	return v.kind == V_PARAM ? v.param : -1;
}

static void add_escape(struct flow *fl, int param, const char *callee, size_t arg)
{
	ALLOC_GROW(fl->esc, fl->nr_esc + 1, fl->alloc_esc);
	fl->esc[fl->nr_esc].param = param;
	fl->esc[fl->nr_esc].callee = callee ? xstrdup(callee) : NULL;
	fl->esc[fl->nr_esc].arg = arg;
	fl->nr_esc++;
}

/* After the body: parameters of loads and memops, what is written. */
static void finish_function(struct parser *P, struct ptx_function *f)
{
	struct flow *fl = &P->flows[P->m->nr_functions];
	size_t i, k;

	solve_flow(P);
	fl->written = xcalloc(f->nr_params ? f->nr_params : 1, 1);
	for (i = 0; i < P->nr_uses; i++) {
		const struct use *u = &P->uses[i];
		int pi = val_param(reg_val(P, u->reg));
		switch (u->kind) {
		case U_LOAD: {
			struct ptx_load *ld = &f->loads[u->idx];
			struct val v = reg_val(P, u->reg);
			ld->param = pi;
			/*
			 * A generic address derived from a kernel's pointer
			 * parameter is global: CUDA passes only global (device or
			 * mapped host) pointers to kernels.
			 */
			if (ld->space == PTX_SPACE_GENERIC && f->is_entry && v.kind == V_PARAM &&
			    (size_t)pi < f->nr_params && f->params[pi].is_pointer_sized)
				ld->patchable = 2;  /* provisional: provably global */
			break;
		}
		case U_MEMOP: {
			struct ptx_memop *op = &f->memops[u->idx];
			op->param = pi;
			if (pi >= 0 && (op->kind == PTX_MEMOP_STORE || op->kind == PTX_MEMOP_ATOMIC))
				fl->written[pi] = 1;
			break;
		}
		case U_WRITE:
		case U_ESCAPE:
			if (pi >= 0)
				fl->written[pi] = 1;
			break;
		}
	}
	for (i = 0; i < P->nr_calls; i++) {
		struct call_rec *c = &P->calls[i];
		for (k = 0; k < c->nr_args; k++) {
			int pi = val_param(reg_val(P, c->args[k]));
			if (pi >= 0 && !fl->written[pi])
				add_escape(fl, pi, c->callee, k);
		}
		free(c->callee);
		free(c->args);
	}
	P->nr_calls = 0;
}

/* ------------------------------------------------------ bodies */

/* Directives that end at the end of their line rather than at ';'. */
static int line_directive(struct slice d)
{
	static const char *const names[] = {
		"loc", "file", "version", "target", "address_size", "section", "maxntid",
		"reqntid", "minnctapersm", "maxnctapersm", "maxnreg", "noreturn",
		"explicitcluster", "reqnctapercluster", "maxclusterrank", "blocksareclusters",
	};
	size_t i;

	if (SLICE_IS(d, "loc"))
		return 1;
	if (SLICE_IS(d, "reg") || SLICE_IS(d, "param") || SLICE_IS(d, "pragma"))
		return 0;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (slice_eq(d, names[i]))
			return 1;
	return 0;
}

static int parse_body(struct parser *P, struct ptx_function *f, unsigned open_line)
{
	int depth = 1;

	P->nr_defs = P->nr_uses = P->nr_calls = P->nr_pstores = 0;
	regmap_reset(&P->regs);
	P->cur_loc = -1;
	P->alloc_loads = P->alloc_memops = 0;

	for (;;) {
		const char *s;
		unsigned line;
		struct slice pred = { NULL, 0 };

		skip_space(P);
		if (P->p >= P->end)
			return error_set(CA_E_INPUT, "%s:%u: body of '%s' is never closed (unbalanced '{')",
					 P->name, open_line, f->name);
		s = P->p;
		line = P->line;
		switch (*s) {
		case '{':
			depth++;
			P->p++;
			continue;
		case '}':
			P->p++;
			if (--depth == 0) {
				f->body_end = (size_t)(s - P->base);
				finish_function(P, f);
				return 0;
			}
			continue;
		case ';':
			P->p++;
			continue;
		case '#': {
			P->p = line_end(s, P->end);
			continue;
		}
		case '.': {
			const char *q = scan_ident(s + 1, P->end);
			struct slice d = { s + 1, (size_t)(q - s - 1) };
			const char *semi;
			enum stmt_end se;
			if (line_directive(d)) {
				const char *le = line_end(q, P->end);
				if (SLICE_IS(d, "loc"))
					parse_loc_directive(P, q, le);
				else if (SLICE_IS(d, "file"))
					parse_file_directive(P, q, le);
				P->p = le;
				continue;
			}
			se = scan_statement(q, P->end, &P->line, &semi);
			if (se == STMT_EOF)
				return perr(P, line, "directive is truncated at end of file");
			if (se == STMT_BRACE)
				return perr(P, line, "missing ';' after directive");
			if (SLICE_IS(d, "shared")) {
				struct slice nm;
				f->uses_shared = 1;
				f->static_shared_bytes += decl_bytes(q, semi, &nm);
			}
			P->p = semi + 1;
			continue;
		}
		case '@': {
			const char *q = s + 1;
			q = skip_blank(q, P->end);
			if (q < P->end && *q == '!')
				q = skip_blank(q + 1, P->end);
			if (q >= P->end || !is_ident_start((unsigned char)*q))
				return perr(P, line, "'@' is not followed by a predicate register");
			q = scan_ident(q + 1, P->end);
			pred.s = s;
			pred.n = (size_t)(q - s);
			P->p = q;
			skip_space(P);
			s = P->p;
			break;
		}
		default:
			break;
		}
		if (P->p >= P->end)
			return perr(P, line, "instruction is truncated at end of file");
		/* A label, an instruction, or something unknown. */
		{
			const char *q = s, *semi;
			struct slice opcode;
			enum stmt_end se;

			if (!is_ident_start((unsigned char)*q) || *q == '%') {
				char what[64];
				snprintf(what, sizeof(what), "unexpected character '%c'",
					 (unsigned char)*q >= 32 && (unsigned char)*q < 127 ? *q : '?');
				return perr(P, line, what);
			}
			q = scan_ident(q + 1, P->end);
			if (!pred.n) {
				const char *r = skip_blank(q, P->end);
				if (r < P->end && *r == ':' && !(r + 1 < P->end && r[1] == ':')) {
					P->p = r + 1;   /* label */
					continue;
				}
			}
			while (q < P->end && is_opcode_char((unsigned char)*q))
				q++;
			opcode.s = s;
			opcode.n = (size_t)(q - s);
			se = scan_statement(q, P->end, &P->line, &semi);
			if (se == STMT_EOF)
				return perr(P, line, "instruction is truncated at end of file");
			if (se == STMT_BRACE)
				return perr(P, line, "missing ';' after instruction");
			do_instruction(P, f, opcode, pred, semi, line);
			P->p = semi + 1;
		}
	}
}

/* ------------------------------------------------------ module level */

/*
 * After ".entry" / ".func": [(ret params)] name [(params)] [directives]
 * then '{' body or ';' (a prototype, skipped).
 */

/*
 * At a '(': moves past the matching ')', counting lines. Returns 0, or -1
 * when the text ends first (P->p is then unchanged).
 */
static int skip_parens(struct parser *P)
{
	const char *q;
	int depth = 0;
	unsigned lines = 0;

	for (q = P->p; q < P->end; q++) {
		if (*q == '(')
			depth++;
		else if (*q == ')' && --depth == 0)
			break;
		else if (*q == '\n')
			lines++;
	}
	if (q >= P->end)
		return -1;
	P->line += lines;
	P->p = q + 1;
	return 0;
}

static int parse_function(struct parser *P, int is_entry, unsigned decl_line)
{
	struct ptx_function *f;
	const char *name_s;
	size_t name_n, alloc_params = 0;
	const char *q;

	skip_space(P);
	/* .attribute(.unified) and the like: skipped. */
	while (P->p < P->end && *P->p == '.') {
		P->p = scan_ident(P->p + 1, P->end);
		skip_space(P);
		if (P->p < P->end && *P->p == '(' && skip_parens(P))
			return perr(P, decl_line, "unclosed '(' in function header");
		skip_space(P);
	}
	if (P->p < P->end && *P->p == '(') {
		/* Return parameters: not modelled, skip the parentheses. */
		unsigned l = P->line;
		if (skip_parens(P))
			return perr(P, l, "unclosed '(' in function header");
		skip_space(P);
	}
	if (P->p >= P->end || !is_ident_start((unsigned char)*P->p))
		return perr(P, decl_line, "function header has no name");
	name_s = P->p;
	P->p = scan_ident(P->p + 1, P->end);
	name_n = (size_t)(P->p - name_s);

	f = new_function(P);
	f->name = xstrndup(name_s, name_n);
	f->is_entry = is_entry;
	f->decl_line = decl_line;

	skip_space(P);
	if (P->p < P->end && *P->p == '(') {
		const char *start = P->p + 1;
		int depth = 0;
		unsigned l = P->line;
		for (q = P->p; q < P->end; q++) {
			if (*q == '(' || *q == '[')
				depth++;
			else if ((*q == ')' || *q == ']') && --depth == 0 && *q == ')')
				break;
			else if (*q == '\n')
				P->line++;
		}
		if (q >= P->end) {
			function_release(f);
			return perr(P, l, "unclosed '(' in function header");
		}
		{
			const char *s = start, *c;
			int d = 0;
			for (c = start; c <= q; c++) {
				if (c < q && (*c == '[' || *c == '('))
					d++;
				else if (c < q && (*c == ']' || *c == ')'))
					d--;
				if (c == q || (*c == ',' && d == 0)) {
					add_param(P, f, &alloc_params, trim(s, c));
					s = c + 1;
				}
			}
		}
		P->p = q + 1;
	}
	/* Performance directives up to '{' or ';'. */
	for (;;) {
		skip_space(P);
		if (P->p >= P->end) {
			function_release(f);
			return perr(P, decl_line, "function header is truncated at end of file");
		}
		if (*P->p == ';') {
			/* A prototype: no body, not a function of this module. */
			P->p++;
			function_release(f);
			return 0;
		}
		if (*P->p == '{')
			break;
		if (*P->p == '}') {
			function_release(f);
			return perr(P, P->line, "unbalanced '}'");
		}
		P->p++;
	}
	f->body_begin = (size_t)(P->p - P->base);
	{
		unsigned open_line = P->line;
		int ret;
		P->p++;
		ret = parse_body(P, f, open_line);
		if (ret) {
			function_release(f);
			return ret;
		}
	}
	P->m->nr_functions++;
	return 0;
}

/* Module-scope variable: record .shared ones for the functions that use them. */
static int parse_module_var(struct parser *P, const char *after, int is_shared, unsigned line)
{
	const char *semi;
	enum stmt_end se = scan_statement(after, P->end, &P->line, &semi);

	if (se == STMT_EOF)
		return perr(P, line, "declaration is truncated at end of file");
	if (se == STMT_BRACE)
		return perr(P, line, "unbalanced '}'");
	if (is_shared) {
		struct slice nm;
		size_t bytes = decl_bytes(after, semi, &nm);
		if (nm.n && (size_t)regmap_intern(&P->shnames, nm.s, nm.n) == P->nr_shvars) {
			ALLOC_GROW(P->shvars, P->nr_shvars + 1, P->alloc_shvars);
			P->shvars[P->nr_shvars].name = nm;
			P->shvars[P->nr_shvars].bytes = bytes;
			P->nr_shvars++;
			P->shvar_seen = xrealloc(P->shvar_seen, P->nr_shvars * sizeof(*P->shvar_seen));
			P->shvar_seen[P->nr_shvars - 1] = 0;
		}
	}
	P->p = semi + 1;
	return 0;
}

static int parse_module(struct parser *P)
{
	struct ptx_module *m = P->m;

	for (;;) {
		const char *s, *q;
		unsigned line;
		struct slice d;

		skip_space(P);
		if (P->p >= P->end)
			break;
		s = P->p;
		line = P->line;
		if (*s == '{') {
			const char *e = skip_block(s, P->end, &P->line);
			if (!e)
				return perr(P, line, "'{' is never closed");
			P->p = e;
			continue;
		}
		if (*s == '}')
			return perr(P, line, "unbalanced '}'");
		if (*s == ';') {
			P->p++;
			continue;
		}
		if (*s != '.') {
			/* Not a directive (@@DWARF lines, preprocessor lines): skip the line. */
			P->p = line_end(s, P->end);
			continue;
		}
		q = scan_ident(s + 1, P->end);
		d.s = s + 1;
		d.n = (size_t)(q - s - 1);
		P->p = q;
		/* Linkage: .extern functions are prototypes, skipped at their ';'. */
		if (SLICE_IS(d, "visible") || SLICE_IS(d, "weak") || SLICE_IS(d, "common") ||
		    SLICE_IS(d, "extern"))
			continue;
		if (SLICE_IS(d, "entry") || SLICE_IS(d, "func")) {
			int ret = parse_function(P, SLICE_IS(d, "entry"), line);
			if (ret)
				return ret;
			continue;
		}
		if (SLICE_IS(d, "version") || SLICE_IS(d, "target") || SLICE_IS(d, "address_size") ||
		    SLICE_IS(d, "file")) {
			const char *le = line_end(q, P->end);
			struct slice v = trim(skip_blank(q, le), le);
			const char *cut = v.s;
			while (cut < v.s + v.n && *cut != ',' && !is_space(*cut) && *cut != '/')
				cut++;
			v.n = (size_t)(cut - v.s);
			if (SLICE_IS(d, "version")) {
				if (!v.n)
					return perr(P, line, ".version has no number");
				snprintf(m->version, sizeof(m->version), "%.*s", (int)v.n, v.s);
				P->seen_version = 1;
			} else if (SLICE_IS(d, "target")) {
				if (!v.n)
					return perr(P, line, ".target has no architecture");
				snprintf(m->target, sizeof(m->target), "%.*s", (int)v.n, v.s);
				P->seen_target = 1;
			} else if (SLICE_IS(d, "address_size")) {
				unsigned long a;
				if (parse_uint(v.s, v.s + v.n, &a) || (a != 32 && a != 64))
					return perr(P, line, ".address_size must be 32 or 64");
				m->address_size = (int)a;
			} else {
				parse_file_directive(P, q, le);
			}
			P->p = le;
			continue;
		}
		if (SLICE_IS(d, "section")) {
			/* .section NAME { ... }: debug sections (-lineinfo, -G). */
			unsigned l = P->line;
			const char *p = skip_ws(skip_blank(q, P->end), P->end, &l);
			p = skip_ws(p, P->end, &l);
			while (p < P->end && (is_ident_char((unsigned char)*p) || *p == '.'))
				p++;
			p = skip_ws(p, P->end, &l);
			if (p < P->end && *p == '{') {
				const char *e;
				P->line = l;
				e = skip_block(p, P->end, &P->line);
				if (!e)
					return perr(P, l, "'{' of .section is never closed");
				P->p = e;
			} else {
				P->p = line_end(q, P->end);
			}
			continue;
		}
		if (SLICE_IS(d, "global") || SLICE_IS(d, "const") || SLICE_IS(d, "shared") ||
		    SLICE_IS(d, "local") || SLICE_IS(d, "tex") || SLICE_IS(d, "surf") ||
		    SLICE_IS(d, "sampler") || SLICE_IS(d, "texref") || SLICE_IS(d, "surfref") ||
		    SLICE_IS(d, "samplerref") || SLICE_IS(d, "alias") || SLICE_IS(d, "pragma")) {
			int ret = parse_module_var(P, q, SLICE_IS(d, "shared"), line);
			if (ret)
				return ret;
			continue;
		}
		/* Unknown directive: to ';' or the end of the line, whichever is first. */
		{
			const char *le = line_end(q, P->end);
			const char *semi = memchr(q, ';', (size_t)(le - q));
			const char *brace = memchr(q, '{', (size_t)(le - q));
			if (brace && (!semi || brace < semi)) {
				const char *e = skip_block(brace, P->end, &P->line);
				if (!e)
					return perr(P, line, "'{' is never closed");
				P->p = e;
			} else {
				P->p = semi ? semi + 1 : le;
			}
		}
	}
	if (!P->seen_version)
		return error_set(CA_E_INPUT, "%s:1: not PTX: no .version directive", P->name);
	if (!P->seen_target)
		return error_set(CA_E_INPUT, "%s:1: not PTX: no .target directive", P->name);
	return 0;
}

/* ------------------------------------------------------ after parsing */

static int find_function_index(const struct ptx_module *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nr_functions; i++)
		if (!strcmp(m->functions[i].name, name))
			return (int)i;
	return -1;
}

struct name_index {
	const char *name;
	size_t idx;
};

static int cmp_name_index(const void *a, const void *b)
{
	return strcmp(((const struct name_index *)a)->name, ((const struct name_index *)b)->name);
}

/* The function with a body called name, or -1 (unknown, or a prototype only). */
static int lookup_name(const struct name_index *ix, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (name && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, ix[mid].name);
		if (!r)
			return (int)ix[mid].idx;
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/*
 * Which parameters are written, through calls too: a parameter passed to a
 * callee is written when the callee writes that argument, or when the
 * callee is unknown (extern, indirect). A fixpoint over the call graph.
 */
static void resolve_written(struct parser *P)
{
	struct ptx_module *m = P->m;
	struct name_index *ix = xmalloc((m->nr_functions + 1) * sizeof(*ix));
	size_t i, j, k, round, total = 0;
	int *callee_of;

	for (i = 0; i < m->nr_functions; i++) {
		ix[i].name = m->functions[i].name;
		ix[i].idx = i;
		total += P->flows[i].nr_esc;
	}
	qsort(ix, m->nr_functions, sizeof(*ix), cmp_name_index);
	callee_of = xmalloc((total + 1) * sizeof(*callee_of));
	for (i = 0, k = 0; i < m->nr_functions; i++)
		for (j = 0; j < P->flows[i].nr_esc; j++, k++)
			callee_of[k] = lookup_name(ix, m->nr_functions, P->flows[i].esc[j].callee);
	for (round = 0; round <= total; round++) {
		int changed = 0;
		for (i = 0, k = 0; i < m->nr_functions; i++) {
			struct flow *fl = &P->flows[i];
			for (j = 0; j < fl->nr_esc; j++, k++) {
				const struct escape *e = &fl->esc[j];
				int c = callee_of[k];
				if (fl->written[e->param])
					continue;
				if (c < 0 || e->arg >= m->functions[c].nr_params ||
				    P->flows[c].written[e->arg]) {
					fl->written[e->param] = 1;
					changed = 1;
				}
			}
		}
		if (!changed)
			break;
	}
	free(ix);
	free(callee_of);
}

/* A header of the CUDA toolkit (intrinsics, cccl), not the user's source. */
static int toolkit_path(const char *p)
{
	const char *s;

	if (!p)
		return 0;
	if (strstr(p, "/targets/") && strstr(p, "/include/"))
		return 1;
	if (strstr(p, "/include/cccl/") || strstr(p, "/include/crt/"))
		return 1;
	for (s = strstr(p, "/cuda"); s; s = strstr(s + 1, "/cuda")) {
		const char *t = s + 5;
		while (*t == '-' || *t == '.' || (*t >= '0' && *t <= '9'))
			t++;
		if (!strncmp(t, "/include/", 9))
			return 1;
	}
	return 0;
}

static const char *file_name(const struct ptx_module *m, unsigned idx)
{
	return idx < m->nr_files ? m->files[idx] : NULL;
}

/*
 * The source line of a load: the innermost .loc, unless that lies in a
 * toolkit header (__ldg, atomics), in which case the call site it was
 * inlined at, walking outwards until user code.
 */
static void resolve_locations(struct parser *P)
{
	struct ptx_module *m = P->m;
	/* Per file: 1 a toolkit header, 0 not (computed once, not per load). */
	unsigned char *tk = xmalloc(m->nr_files + 1);
	size_t i;

	for (i = 0; i < m->nr_files; i++)
		tk[i] = (unsigned char)toolkit_path(m->files[i]);

	for (i = 0; i < P->nr_load_locs; i++) {
		struct ptx_load *ld = &m->functions[P->load_locs[i].fn].loads[P->load_locs[i].load];
		long r = P->load_locs[i].loc;
		unsigned file, line;
		int steps = 0;

		if (r < 0)
			continue;
		file = P->locs[r].file;
		line = P->locs[r].line;
		while (file < m->nr_files && tk[file] && P->locs[r].has_inl && steps++ < 64) {
			long up = P->locs[r].parent;
			int walk = 0;

			file = P->locs[r].inl_file;
			line = P->locs[r].inl_line;
			/* Bounded: a chain of inlined .loc lines may be long. */
			while (up >= 0 && walk++ < 256 &&
			       !(P->locs[up].file == file && P->locs[up].line == line))
				up = P->locs[up].parent;
			if (walk > 256)
				up = -1;
			if (up < 0)
				break;
			r = up;
		}
		if (file_name(m, file)) {
			ld->file = file_name(m, file);
			ld->line = (int)(line > INT_MAX ? INT_MAX : line);
		}
	}
	free(tk);
}

static const char *unpatchable_reason(const struct ptx_load *ld)
{
	if (ld->is_ldu)
		return "ldu loads are never rewritten";
	if (ld->strong) {
		if (ld->cache_op == PTX_CACHE_OP_CV)
			return "strong load (.cv)";
		return "strong load (.volatile, .relaxed, .acquire or .mmio)";
	}
	if (ld->cache_op == PTX_CACHE_OP_CG)
		return "already .cg, a strong load on sm_70 and later";
	if (ld->cache_op == PTX_CACHE_OP_CA)
		return "already .ca, a strong load on sm_70 and later";
	if (ld->space == PTX_SPACE_GENERIC && ld->patchable != 2)
		return "generic address not proven to be global";
	return NULL;
}

static void finish_module(struct parser *P)
{
	struct ptx_module *m = P->m;
	size_t i, j;

	resolve_written(P);
	resolve_locations(P);
	for (i = 0; i < m->nr_functions; i++) {
		struct ptx_function *f = &m->functions[i];
		const struct flow *fl = &P->flows[i];
		for (j = 0; j < f->nr_loads; j++) {
			struct ptx_load *ld = &f->loads[j];
			ld->unpatchable_reason = unpatchable_reason(ld);
			ld->patchable = ld->unpatchable_reason == NULL;
			if (ld->param >= 0 && (size_t)ld->param < f->nr_params)
				ld->read_only = fl->written[ld->param] ? 0 : 1;
			else
				ld->read_only = -1;
		}
	}
}

/* ------------------------------------------------------ public */

void ptx_module_free(struct ptx_module *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_functions; i++)
		function_release(&m->functions[i]);
	free(m->functions);
	for (i = 0; i < m->nr_files; i++)
		free(m->files[i]);
	free(m->files);
	free(m->text);
	free(m);
}

int ptx_parse(const char *name, const char *text, size_t len, struct ptx_module **out)
{
	struct parser P;
	struct ptx_module *m;
	int ret;
	size_t i;

	*out = NULL;
	m = xcalloc(1, sizeof(*m));
	m->text = xmalloc(len + 1);
	if (len)
		memcpy(m->text, text, len);
	m->text[len] = '\0';
	m->len = len;
	m->address_size = 32;   /* the PTX default without .address_size */

	memset(&P, 0, sizeof(P));
	P.name = name ? name : "PTX";
	P.m = m;
	P.base = m->text;
	P.p = m->text;
	P.end = m->text + len;
	P.line = 1;
	P.cur_loc = -1;

	ret = parse_module(&P);
	if (!ret)
		finish_module(&P);

	for (i = 0; i < P.alloc_flows; i++)
		flow_release(&P.flows[i]);
	free(P.flows);
	for (i = 0; i < P.nr_calls; i++) {
		free(P.calls[i].callee);
		free(P.calls[i].args);
	}
	free(P.calls);
	free(P.shvars);
	free(P.shvar_seen);
	regmap_release(&P.shnames);
	free(P.locs);
	free(P.load_locs);
	free(P.defs);
	free(P.uses);
	free(P.pstores);
	free(P.vals);
	regmap_release(&P.regs);
	if (ret) {
		ptx_module_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

const struct ptx_function *ptx_module_find(const struct ptx_module *m, const char *name)
{
	int i = find_function_index(m, name);
	return i < 0 ? NULL : &m->functions[i];
}

const char *ptx_cache_op_name(enum ptx_cache_op op)
{
	switch (op) {
	case PTX_CACHE_OP_CA: return "ca";
	case PTX_CACHE_OP_CG: return "cg";
	case PTX_CACHE_OP_CS: return "cs";
	case PTX_CACHE_OP_LU: return "lu";
	case PTX_CACHE_OP_CV: return "cv";
	default: return "default";
	}
}

const char *ptx_l1_eviction_name(enum ptx_l1_eviction ev)
{
	switch (ev) {
	case PTX_L1_EVICT_NORMAL: return "L1::evict_normal";
	case PTX_L1_EVICT_UNCHANGED: return "L1::evict_unchanged";
	case PTX_L1_EVICT_FIRST: return "L1::evict_first";
	case PTX_L1_EVICT_LAST: return "L1::evict_last";
	case PTX_L1_NO_ALLOCATE: return "L1::no_allocate";
	default: return "default";
	}
}
