#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "analysis/stencil_detect.h"
#include "base/xalloc.h"

/*
 * The function body as instructions: enough of PTX to follow how a
 * register's value varies across the lanes of a warp. Everything not
 * understood makes a value "varying", so the detector errs towards
 * finding nothing.
 */

#define MAX_OPS 6
#define MAX_DEPTH 256
#define MAX_SPAN 31          /* regcache::window holds 32 + 2k, 2k < 32 */

struct insn {
	char *op;                   /* "add.s64" */
	char *ops[MAX_OPS];         /* operands, trimmed */
	int nops;
};

/*
 * How a value changes from lane to lane: UNDEF while a loop-carried
 * register is being evaluated (no information yet), CONST c when lane
 * l + 1 sees the value of lane l plus c (c = 0: the same in every lane),
 * VARYING otherwise.
 */
enum lat_kind { LAT_UNDEF, LAT_CONST, LAT_VARYING };

struct lat {
	enum lat_kind kind;
	long long c;
};

struct reg {
	char *name;
	size_t *defs;
	size_t nr_defs, alloc_defs;
	int state;                  /* 0 new, 1 being evaluated, 2 done */
	struct lat value;
	struct reg *next;
};

#define NR_BUCKETS 1024

struct body {
	struct insn *insns;
	size_t nr, alloc;
	struct reg *buckets[NR_BUCKETS];
};

static const struct lat undef = { LAT_UNDEF, 0 };
static const struct lat varying = { LAT_VARYING, 0 };

static struct lat lconst(long long c)
{
	struct lat l = { LAT_CONST, c };
	return l;
}

static unsigned hash_name(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % NR_BUCKETS;
}

static struct reg *reg_get(struct body *b, const char *name, int create)
{
	unsigned h = hash_name(name);
	struct reg *r;

	for (r = b->buckets[h]; r; r = r->next)
		if (!strcmp(r->name, name))
			return r;
	if (!create)
		return NULL;
	r = xcalloc(1, sizeof(*r));
	r->name = xstrdup(name);
	r->next = b->buckets[h];
	b->buckets[h] = r;
	return r;
}

static void body_release(struct body *b)
{
	size_t i;
	int k;

	for (i = 0; i < b->nr; i++) {
		free(b->insns[i].op);
		for (k = 0; k < b->insns[i].nops; k++)
			free(b->insns[i].ops[k]);
	}
	free(b->insns);
	for (i = 0; i < NR_BUCKETS; i++) {
		struct reg *r = b->buckets[i], *next;

		for (; r; r = next) {
			next = r->next;
			free(r->name);
			free(r->defs);
			free(r);
		}
	}
	memset(b, 0, sizeof(*b));
}

static char *trimmed(const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	return xstrndup(s, len);
}

static int is_ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$' || c == '.' || c == '%';
}

/* Opcodes whose first operand is not a register they define. */
static int defines_nothing(const char *op)
{
	static const char *const none[] = { "st", "bar", "barrier", "bra", "ret", "exit",
					    "membar", "fence", "red", "prefetch", "prefetchu",
					    "call", "trap", "brkpt", "nanosleep", "pmevent",
					    "cp", "mbarrier", "stmatrix", "wgmma", "griddepcontrol" };
	size_t i, n = strcspn(op, ".");

	for (i = 0; i < ARRAY_SIZE(none); i++)
		if (strlen(none[i]) == n && !strncmp(op, none[i], n))
			return 1;
	return 0;
}

static void add_def(struct body *b, const char *name, size_t insn)
{
	struct reg *r = reg_get(b, name, 1);

	ALLOC_GROW(r->defs, r->nr_defs + 1, r->alloc_defs);
	r->defs[r->nr_defs++] = insn;
}

/* One statement (without its ';'): labels, guard, opcode, operands. */
static void add_statement(struct body *b, const char *s, size_t len)
{
	const char *end = s + len, *p, *start;
	struct insn in;
	int depth = 0;

	for (;;) {
		while (s < end && isspace((unsigned char)*s))
			s++;
		/* "label:" but not "L1::no_allocate" (that follows the opcode) */
		for (p = s; p < end && is_ident_char((unsigned char)*p); p++)
			;
		if (p > s && p < end && *p == ':' && (p + 1 >= end || p[1] != ':')) {
			s = p + 1;
			continue;
		}
		/* .loc and .file end at the line's end, not at a ';' */
		if ((end - s >= 4 && !strncmp(s, ".loc", 4) && (end - s == 4 || isspace((unsigned char)s[4]))) ||
		    (end - s >= 5 && !strncmp(s, ".file", 5) && (end - s == 5 || isspace((unsigned char)s[5])))) {
			while (s < end && *s != '\n')
				s++;
			continue;
		}
		break;
	}
	if (s >= end || *s == '.' || *s == '{' || *s == '}')
		return;
	if (*s == '@') {                /* guard: still a definition */
		while (s < end && !isspace((unsigned char)*s))
			s++;
		while (s < end && isspace((unsigned char)*s))
			s++;
	}
	for (p = s; p < end && !isspace((unsigned char)*p); p++)
		;
	if (p == s)
		return;
	memset(&in, 0, sizeof(in));
	in.op = xstrndup(s, (size_t)(p - s));
	start = p;
	for (; p <= end; p++) {
		if (p < end && (*p == '[' || *p == '{' || *p == '('))
			depth++;
		else if (p < end && (*p == ']' || *p == '}' || *p == ')'))
			depth--;
		else if (p == end || (*p == ',' && depth <= 0)) {
			char *o = trimmed(start, (size_t)(p - start));

			if (*o && in.nops < MAX_OPS)
				in.ops[in.nops++] = o;
			else
				free(o);
			start = p + 1;
		}
	}
	ALLOC_GROW(b->insns, b->nr + 1, b->alloc);
	b->insns[b->nr] = in;
	if (in.nops && !defines_nothing(in.op)) {
		const char *d = in.ops[0];

		if (d[0] == '%') {
			char *name = xstrndup(d, strcspn(d, "|"));

			add_def(b, name, b->nr);
			free(name);
		} else if (d[0] == '{') {        /* vector destination */
			const char *q = d + 1;

			while (*q) {
				size_t n;

				while (*q == ' ' || *q == '\t' || *q == ',')
					q++;
				n = strcspn(q, ", \t}");
				if (n && q[0] == '%') {
					char *name = xstrndup(q, n);
					add_def(b, name, b->nr);
					free(name);
				}
				q += n;
				if (*q == '}' || !*q)
					break;
			}
		}
	}
	b->nr++;
}

static void body_parse(struct body *b, const char *text, size_t begin, size_t end)
{
	size_t n = end - begin, i, stmt;
	char *t;

	if (end <= begin)
		return;
	/* a copy with comments and string literals blanked out */
	t = xmalloc(n + 1);
	memcpy(t, text + begin, n);
	t[n] = '\0';
	for (i = 0; i < n; i++) {
		if (t[i] == '/' && i + 1 < n && t[i + 1] == '/') {
			while (i < n && t[i] != '\n')
				t[i++] = ' ';
		} else if (t[i] == '/' && i + 1 < n && t[i + 1] == '*') {
			t[i++] = ' ';
			t[i++] = ' ';
			while (i < n && !(t[i] == '*' && i + 1 < n && t[i + 1] == '/')) {
				if (t[i] != '\n')
					t[i] = ' ';
				i++;
			}
			if (i < n)
				t[i++] = ' ';
			if (i < n)
				t[i] = ' ';
		} else if (t[i] == '"') {
			t[i++] = ' ';
			while (i < n && t[i] != '"')
				t[i++] = ' ';
			if (i < n)
				t[i] = ' ';
		}
	}
	for (i = 0, stmt = 0; i <= n; i++) {
		if (i == n || t[i] == ';' || t[i] == '{' || t[i] == '}') {
			if (i > stmt)
				add_statement(b, t + stmt, i - stmt);
			stmt = i + 1;
		}
	}
	free(t);
}

/* ------------------------------------------------------------ lane strides */

static int parse_int(const char *s, long long *v)
{
	char *end;

	if (!s || !*s)
		return 0;
	if ((s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) )
		return 0;               /* float literal */
	*v = strtoll(s, &end, 0);
	return end != s && *end == '\0';
}

static int is_immediate(const char *s)
{
	return s[0] == '-' || isdigit((unsigned char)s[0]);
}

static struct lat lat_join(struct lat a, struct lat b)
{
	if (a.kind == LAT_UNDEF)
		return b;
	if (b.kind == LAT_UNDEF)
		return a;
	if (a.kind == LAT_CONST && b.kind == LAT_CONST && a.c == b.c)
		return a;
	return varying;
}

static struct lat lat_add(struct lat a, struct lat b, int sign)
{
	long long r;

	if (a.kind == LAT_VARYING || b.kind == LAT_VARYING)
		return varying;
	if (a.kind == LAT_UNDEF || b.kind == LAT_UNDEF) {
		/* x = x + c has a solution only for c = 0 */
		struct lat other = a.kind == LAT_UNDEF ? b : a;

		if (other.kind == LAT_UNDEF || other.c == 0)
			return undef;
		return varying;
	}
	if (sign > 0 ? __builtin_add_overflow(a.c, b.c, &r) : __builtin_sub_overflow(a.c, b.c, &r))
		return varying;
	return lconst(r);
}

static struct lat lat_scale(struct lat a, long long k)
{
	long long r;

	if (a.kind == LAT_CONST)
		return __builtin_mul_overflow(a.c, k, &r) ? varying : lconst(r);
	if (a.kind == LAT_UNDEF)
		return k == 1 ? undef : varying;
	return k == 0 ? lconst(0) : varying;
}

struct eval {
	struct body *b;
	unsigned long steps;        /* bounds the work on pathological input */
};

#define MAX_STEPS 200000

static struct lat eval_reg(struct eval *e, const char *name, int depth);

static int special_register(const char *s, struct lat *out)
{
	static const char *const uniform[] = { "%ctaid", "%ntid", "%nctaid", "%gridid", "%smid",
					       "%nsmid", "%warpid", "%nwarpid", "%dynamic_smem_size",
					       "%total_smem_size", "%clusterid", "%nclusterid",
					       "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank",
					       "%cluster_nctarank", "%is_explicit_cluster" };
	size_t i;

	if (!strcmp(s, "%tid.x") || !strcmp(s, "%laneid")) {
		*out = lconst(1);
		return 1;
	}
	if (!strncmp(s, "%tid", 4) || !strncmp(s, "%lanemask", 9) || !strncmp(s, "%clock", 6) ||
	    !strncmp(s, "%globaltimer", 12)) {
		*out = varying;
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(uniform); i++)
		if (!strncmp(s, uniform[i], strlen(uniform[i])) &&
		    (s[strlen(uniform[i])] == '\0' || s[strlen(uniform[i])] == '.')) {
			*out = lconst(0);
			return 1;
		}
	return 0;
}

static struct lat eval_operand(struct eval *e, const char *s, int depth)
{
	struct lat l;

	if (s[0] == '%') {
		if (special_register(s, &l))
			return l;
		return eval_reg(e, s, depth);
	}
	if (s[0] == '[' || s[0] == '{')
		return varying;
	/* immediates and symbols (parameters, globals) are the same in every lane */
	return lconst(0);
}

/* The literal a register holds when its one definition is `mov r, imm`. */
static int reg_literal(struct eval *e, const char *s, long long *v)
{
	struct reg *r;
	const struct insn *in;

	if (parse_int(s, v))
		return 1;
	if (s[0] != '%' || !(r = reg_get(e->b, s, 0)) || r->nr_defs != 1)
		return 0;
	in = &e->b->insns[r->defs[0]];
	return !strncmp(in->op, "mov", 3) && in->nops == 2 && is_immediate(in->ops[1]) &&
	       parse_int(in->ops[1], v);
}

static struct lat eval_mul(struct eval *e, const char *a, const char *b, int depth)
{
	struct lat la, lb;
	long long v;

	if (reg_literal(e, a, &v))
		return lat_scale(eval_operand(e, b, depth), v);
	if (reg_literal(e, b, &v))
		return lat_scale(eval_operand(e, a, depth), v);
	la = eval_operand(e, a, depth);
	lb = eval_operand(e, b, depth);
	if (la.kind == LAT_CONST && la.c == 0 && lb.kind == LAT_CONST && lb.c == 0)
		return lconst(0);
	/* tid times something uniform but unknown: not a neighbour stride */
	return varying;
}

/* Uniform when every register operand is. */
static struct lat eval_uniform(struct eval *e, const struct insn *in, int from, int depth)
{
	struct lat acc = lconst(0);
	int i;

	for (i = from; i < in->nops; i++) {
		struct lat l = eval_operand(e, in->ops[i], depth);

		if (l.kind == LAT_VARYING || (l.kind == LAT_CONST && l.c != 0))
			return varying;
		if (l.kind == LAT_UNDEF)
			acc = undef;
	}
	return acc;
}

static int op_is(const char *op, const char *family)
{
	size_t n = strlen(family);

	return !strncmp(op, family, n) && (op[n] == '.' || op[n] == '\0');
}

static struct lat eval_insn(struct eval *e, const struct insn *in, int depth)
{
	const char *op = in->op;
	long long v;

	if (in->nops < 2)
		return varying;
	if (op_is(op, "mov") || op_is(op, "cvt") || op_is(op, "cvta"))
		return in->nops == 2 ? eval_operand(e, in->ops[1], depth) : varying;
	if (op_is(op, "add") && in->nops == 3)
		return lat_add(eval_operand(e, in->ops[1], depth), eval_operand(e, in->ops[2], depth), 1);
	if (op_is(op, "sub") && in->nops == 3)
		return lat_add(eval_operand(e, in->ops[1], depth), eval_operand(e, in->ops[2], depth), -1);
	if (op_is(op, "neg") && in->nops == 2)
		return lat_scale(eval_operand(e, in->ops[1], depth), -1);
	if ((!strncmp(op, "mul.lo", 6) || !strncmp(op, "mul.wide", 8) || !strncmp(op, "mul24.lo", 8)) &&
	    in->nops == 3)
		return eval_mul(e, in->ops[1], in->ops[2], depth);
	if ((!strncmp(op, "mad.lo", 6) || !strncmp(op, "mad.wide", 8) || !strncmp(op, "mad24.lo", 8)) &&
	    in->nops == 4)
		return lat_add(eval_mul(e, in->ops[1], in->ops[2], depth),
			       eval_operand(e, in->ops[3], depth), 1);
	if (op_is(op, "shl") && in->nops == 3 && parse_int(in->ops[2], &v) && v >= 0 && v < 62)
		return lat_scale(eval_operand(e, in->ops[1], depth), 1LL << v);
	if (op_is(op, "ld") || op_is(op, "ldu")) {
		if (strstr(op, ".param") || strstr(op, ".const"))
			return lconst(0);
		/* a load from an address every lane shares reads the same value */
		if (in->ops[1][0] == '[') {
			char *addr = xstrndup(in->ops[1] + 1, strcspn(in->ops[1] + 1, "+]"));
			struct lat l = eval_operand(e, addr, depth);

			free(addr);
			if (l.kind == LAT_CONST && l.c == 0)
				return l;
		}
		return varying;
	}
	if (op_is(op, "atom") || op_is(op, "tex") || op_is(op, "suld") || op_is(op, "shfl") ||
	    op_is(op, "vote") || op_is(op, "match") || op_is(op, "activemask") ||
	    op_is(op, "redux") || op_is(op, "call"))
		return varying;
	return eval_uniform(e, in, 1, depth);
}

static struct lat eval_reg(struct eval *e, const char *name, int depth)
{
	struct reg *r = reg_get(e->b, name, 0);
	struct lat acc = undef;
	size_t i;

	if (!r || !r->nr_defs || depth > MAX_DEPTH || ++e->steps > MAX_STEPS)
		return varying;
	if (r->state == 1)
		return undef;
	if (r->state == 2)
		return r->value;
	r->state = 1;
	for (i = 0; i < r->nr_defs && acc.kind != LAT_VARYING; i++)
		acc = lat_join(acc, eval_insn(e, &e->b->insns[r->defs[i]], depth + 1));
	if (acc.kind == LAT_UNDEF) {
		/* only loop-carried copies of a register still being evaluated:
		 * no information yet, and nothing to remember */
		r->state = 0;
		return undef;
	}
	r->state = 2;
	r->value = acc;
	return acc;
}

static void reset_states(struct body *b)
{
	size_t i;
	struct reg *r;

	for (i = 0; i < NR_BUCKETS; i++)
		for (r = b->buckets[i]; r; r = r->next)
			r->state = 0;
}

/*
 * Folds `add R, S, imm`, `sub R, S, imm` and `mov R, S` chains of
 * registers defined once. *name is replaced (heap) by the root register.
 */
static void fold_root(struct body *b, char **name, long long *off, int *loop_carried)
{
	int hops;

	*loop_carried = 0;
	for (hops = 0; hops < 64; hops++) {
		struct reg *r = reg_get(b, *name, 0);
		const struct insn *in;
		long long v;
		const char *next = NULL;

		if (!r)
			return;
		if (r->nr_defs != 1) {
			*loop_carried = r->nr_defs > 1;
			return;
		}
		in = &b->insns[r->defs[0]];
		if ((op_is(in->op, "add") || op_is(in->op, "sub")) && in->nops == 3 &&
		    !strstr(in->op, ".f")) {
			int sub = op_is(in->op, "sub");

			if (in->ops[1][0] == '%' && parse_int(in->ops[2], &v) &&
			    !(sub ? __builtin_sub_overflow(*off, v, &v) : __builtin_add_overflow(*off, v, &v))) {
				next = in->ops[1];
				*off = v;
			} else if (!sub && in->ops[2][0] == '%' && parse_int(in->ops[1], &v) &&
				   !__builtin_add_overflow(*off, v, &v)) {
				next = in->ops[2];
				*off = v;
			}
		} else if (op_is(in->op, "mov") && in->nops == 2 && in->ops[1][0] == '%' &&
			   !special_register(in->ops[1], &(struct lat){ LAT_UNDEF, 0 })) {
			next = in->ops[1];
		}
		if (!next)
			return;
		free(*name);
		*name = xstrdup(next);
	}
}

/* ------------------------------------------------------------------ groups */

struct member {
	unsigned ordinal;
	long long off;              /* from the root register */
};

struct group {
	char *root;
	unsigned elem;
	int param;
	int loop_carried;
	struct member *m;
	size_t nr, alloc;
};

static int parse_address(const char *addr, char **reg, long long *off)
{
	size_t n;
	const char *p;

	while (isspace((unsigned char)*addr))
		addr++;
	if (addr[0] != '%')
		return 0;
	n = strcspn(addr, "+ \t");
	*reg = xstrndup(addr, n);
	*off = 0;
	p = addr + n;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+') {
		p++;
		while (isspace((unsigned char)*p))
			p++;
		if (!parse_int(p, off)) {
			free(*reg);
			return 0;
		}
	} else if (*p) {
		free(*reg);
		return 0;
	}
	return 1;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

/* Whether a group has the stencil shape; fills points/span. */
static int group_is_stencil(const struct group *g, unsigned *points, unsigned *span)
{
	long long *offs = xmalloc(g->nr * sizeof(*offs)), lo;
	size_t i, distinct = 0;
	int ok = 1;

	for (i = 0; i < g->nr; i++)
		offs[i] = g->m[i].off;
	qsort(offs, g->nr, sizeof(*offs), cmp_ll);
	lo = offs[0];
	/* offsets are small in any stencil: refuse huge ones before subtracting */
	if (lo < -(1LL << 40) || offs[g->nr - 1] > (1LL << 40)) {
		free(offs);
		return 0;
	}
	for (i = 0; i < g->nr; i++) {
		if ((offs[i] - lo) % g->elem)
			ok = 0;
		if (!i || offs[i] != offs[i - 1])
			distinct++;
	}
	*points = (unsigned)distinct;
	*span = (unsigned)((offs[g->nr - 1] - lo) / g->elem + 1);
	free(offs);
	return ok && distinct >= 3 && *span <= MAX_SPAN;
}

static void add_hint(struct stencil_detect *sd, const char *fn, struct group *g, unsigned points,
		     unsigned span)
{
	struct stencil_hint *h = NULL;
	size_t i;
	long long lo = g->m[0].off;
	unsigned k = span / 2;                /* span = 2k + 1, rounded up */

	for (i = 1; i < g->nr; i++)
		if (g->m[i].off < lo)
			lo = g->m[i].off;
	/* one hint per kernel and data structure: merge loads of other groups */
	if (g->param >= 0)
		for (i = 0; i < sd->nr_hints; i++)
			if (sd->hints[i].param == g->param && !strcmp(sd->hints[i].function, fn))
				h = &sd->hints[i];
	if (!h) {
		ALLOC_GROW(sd->hints, sd->nr_hints + 1, sd->alloc_hints);
		h = &sd->hints[sd->nr_hints++];
		memset(h, 0, sizeof(*h));
		h->function = xstrdup(fn);
		h->param = g->param;
		h->element_bytes = g->elem;
		h->k_exact = !g->loop_carried && span % 2 == 1 && points == span;
	} else {
		h->k_exact = 0;
	}
	qsort(g->m, g->nr, sizeof(*g->m), cmp_member);
	h->ordinals = xrealloc(h->ordinals, (h->nr_loads + g->nr) * sizeof(*h->ordinals));
	h->offsets = xrealloc(h->offsets, (h->nr_loads + g->nr) * sizeof(*h->offsets));
	for (i = 0; i < g->nr; i++) {
		h->ordinals[h->nr_loads] = g->m[i].ordinal;
		h->offsets[h->nr_loads] = (long)(g->m[i].off - lo);
		h->nr_loads++;
	}
	if (points > h->points)
		h->points = points;
	if (span > h->span)
		h->span = span;
	if (k > h->k)
		h->k = k;
	h->shuffles_per_thread = 2 * h->k;
	h->loads_after = 2;
}

static void detect_function(struct stencil_detect *sd, const struct ptx_module *m,
			    const struct ptx_function *f)
{
	struct body b;
	struct eval e;
	struct group *groups = NULL;
	size_t nr_groups = 0, alloc_groups = 0, i, j;

	memset(&b, 0, sizeof(b));
	if (f->body_end > m->len || f->body_begin >= f->body_end)
		return;
	body_parse(&b, m->text, f->body_begin, f->body_end);
	e.b = &b;
	e.steps = 0;

	for (i = 0; i < f->nr_loads; i++) {
		const struct ptx_load *ld = &f->loads[i];
		char *reg;
		long long off;
		int loop_carried;
		unsigned elem;

		if (ld->is_ldu || ld->vector != 1 || ld->bits < 8 || !ld->address ||
		    !parse_address(ld->address, &reg, &off))
			continue;
		elem = (unsigned)ld->bits / 8;
		fold_root(&b, &reg, &off, &loop_carried);
		for (j = 0; j < nr_groups; j++)
			if (groups[j].elem == elem && !strcmp(groups[j].root, reg))
				break;
		if (j == nr_groups) {
			ALLOC_GROW(groups, nr_groups + 1, alloc_groups);
			memset(&groups[j], 0, sizeof(groups[j]));
			groups[j].root = reg;
			groups[j].elem = elem;
			groups[j].param = ld->param;
			groups[j].loop_carried = loop_carried;
			nr_groups++;
		} else {
			free(reg);
			if (groups[j].param != ld->param)
				groups[j].param = -1;
		}
		ALLOC_GROW(groups[j].m, groups[j].nr + 1, groups[j].alloc);
		groups[j].m[groups[j].nr].ordinal = ld->ordinal;
		groups[j].m[groups[j].nr].off = off;
		groups[j].nr++;
	}

	for (j = 0; j < nr_groups; j++) {
		struct group *g = &groups[j];
		unsigned points, span;
		struct lat stride;

		if (g->nr < 3 || !group_is_stencil(g, &points, &span))
			continue;
		reset_states(&b);
		e.steps = 0;
		stride = eval_reg(&e, g->root, 0);   /* UNDEF here: no definition helps */
		if (stride.kind == LAT_CONST && stride.c == (long long)g->elem)
			add_hint(sd, f->name, g, points, span);
	}

	for (j = 0; j < nr_groups; j++) {
		free(groups[j].root);
		free(groups[j].m);
	}
	free(groups);
	body_release(&b);
}

void stencil_detect_init(struct stencil_detect *sd)
{
	memset(sd, 0, sizeof(*sd));
}

void stencil_detect_release(struct stencil_detect *sd)
{
	size_t i;

	for (i = 0; i < sd->nr_hints; i++) {
		free(sd->hints[i].function);
		free(sd->hints[i].ordinals);
		free(sd->hints[i].offsets);
	}
	free(sd->hints);
	memset(sd, 0, sizeof(*sd));
}

int stencil_detect_run(struct stencil_detect *sd, const struct ptx_module *m)
{
	size_t i;

	for (i = 0; i < m->nr_functions; i++) {
		const struct ptx_function *f = &m->functions[i];

		if (!f->is_entry)
			continue;
		if (f->body_end > m->len || f->body_begin > f->body_end)
			return error_set(CA_E_INPUT, "cannot read the body of '%s': offsets %zu..%zu "
					 "lie outside the module (%zu bytes)", f->name, f->body_begin,
					 f->body_end, m->len);
		detect_function(sd, m, f);
	}
	return 0;
}

json_t *stencil_detect_to_json(const struct stencil_detect *sd)
{
	json_t *arr = json_array();
	size_t i, j;

	for (i = 0; i < sd->nr_hints; i++) {
		const struct stencil_hint *h = &sd->hints[i];
		json_t *o = json_object(), *loads = json_array(), *offs = json_array(), *gl = json_object();
		char *helper = xasprintf("regcache::window<T, %u>", h->k);

		for (j = 0; j < h->nr_loads; j++) {
			json_array_append_new(loads, json_integer(h->ordinals[j]));
			json_array_append_new(offs, json_integer(h->offsets[j]));
		}
		json_object_set_new(o, "kernel", json_string(h->function));
		json_object_set_new(o, "param", h->param >= 0 ? json_integer(h->param) : json_null());
		json_object_set_new(o, "element_bytes", json_integer(h->element_bytes));
		json_object_set_new(o, "loads", loads);
		json_object_set_new(o, "offsets_bytes", offs);
		json_object_set_new(o, "points", json_integer(h->points));
		json_object_set_new(o, "span", json_integer(h->span));
		json_object_set_new(o, "k", json_integer(h->k));
		json_object_set_new(o, "k_exact", json_boolean(h->k_exact));
		json_object_set_new(o, "shuffles_per_thread", json_integer(h->shuffles_per_thread));
		json_object_set_new(gl, "before", json_integer(h->k_exact ? (json_int_t)h->points : (json_int_t)(2 * h->k + 1)));
		json_object_set_new(gl, "after", json_integer(h->loads_after));
		json_object_set_new(o, "global_loads_per_thread", gl);
		json_object_set_new(o, "helper", json_string(helper));
		json_array_append_new(arr, o);
		free(helper);
	}
	return arr;
}
