#include "emitters/rewrite/source_rewrite.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "emitters/rewrite/source_file.h"

/* What one occurrence of the parameter's name on the line is. */
enum occurrence {
	OCC_NONE,           /* not a read: a write, an address, pointer arithmetic */
	OCC_READ,           /* a read that can be wrapped */
	OCC_UNWRAPPABLE,    /* a read that cannot be wrapped (reason given) */
};

struct line_scan {
	const char *s;
	struct source_token *t;
	size_t nr;
};

static int tok_is(const struct line_scan *ls, size_t i, const char *str)
{
	return i < ls->nr && source_token_is(ls->s, &ls->t[i], str);
}

static int tok_is_ident(const struct line_scan *ls, size_t i)
{
	return i < ls->nr && ls->t[i].kind == SOURCE_TOKEN_IDENT;
}

/* Whether token i ends an operand, so that a following '*' or '&' is binary. */
static int ends_operand(const struct line_scan *ls, size_t i)
{
	static const char *const keywords[] = { "return", "case", "throw", "else", "do",
						"co_return", "co_yield", "sizeof" };
	size_t k;

	if (ls->t[i].kind == SOURCE_TOKEN_NUMBER || ls->t[i].kind == SOURCE_TOKEN_STRING)
		return 1;
	if (ls->t[i].kind == SOURCE_TOKEN_IDENT) {
		for (k = 0; k < ARRAY_SIZE(keywords); k++)
			if (tok_is(ls, i, keywords[k]))
				return 0;
		return 1;
	}
	return tok_is(ls, i, ")") || tok_is(ls, i, "]");
}

/* Token i is a unary '*' or '&' (or any prefix operator) at the line's level. */
static int is_prefix(const struct line_scan *ls, size_t i)
{
	return i == 0 || !ends_operand(ls, i - 1);
}

static size_t close_of(const struct line_scan *ls, size_t open)
{
	const char *o = tok_is(ls, open, "(") ? "(" : "[";
	const char *c = *o == '(' ? ")" : "]";
	int depth = 0;
	size_t i;

	for (i = open; i < ls->nr; i++) {
		if (tok_is(ls, i, o))
			depth++;
		else if (tok_is(ls, i, c) && --depth == 0)
			return i;
	}
	return ls->nr;
}

static int is_assign_op(const struct line_scan *ls, size_t i)
{
	return tok_is(ls, i, "=");
}

static int is_compound_op(const struct line_scan *ls, size_t i)
{
	static const char *const ops[] = { "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
					   "<<=", ">>=", "++", "--" };
	size_t k;

	for (k = 0; k < ARRAY_SIZE(ops); k++)
		if (tok_is(ls, i, ops[k]))
			return 1;
	return 0;
}

/*
 * Whether the occurrence at k sits inside a parenthesised group that a
 * prefix '*' dereferences, in a form classify() did not recognise
 * (*(k + q), *(cond ? q : r)): a read we cannot wrap.
 */
static int inside_deref_group(const struct line_scan *ls, size_t k)
{
	size_t i;
	int depth = 0;

	for (i = k; i-- > 0;) {
		if (tok_is(ls, i, ")") || tok_is(ls, i, "]")) {
			depth++;
		} else if (tok_is(ls, i, "(") || tok_is(ls, i, "[")) {
			if (depth > 0) {
				depth--;
				continue;
			}
			if (tok_is(ls, i, "(") && i > 0 && tok_is(ls, i - 1, "*") && is_prefix(ls, i - 1))
				return 1;
		}
	}
	return 0;
}

struct occ_info {
	enum occurrence kind;
	const char *why;
	size_t begin, end;          /* byte span of the read */
	size_t open_del;
	int take_address;
	int member;                 /* read through a member: type unknown */
	size_t member_begin, member_end; /* the first member's name (p[i].m, p->m, *s.m) */
	int nr_members;             /* members in the chain */
	int keeps_close;            /* the expression keeps its own ")" ("*(q + k)",
				       "__ldg(&p[i])"): none is inserted at end */
	size_t cast_begin, cast_end;/* the pointer type of a reinterpret_cast<T *>(p)[i]
				       read, else both 0 */
};

/*
 * The load intrinsics of CUDA that read through a pointer argument:
 * __ldg(&p[i]) or __ldg(p + i) becomes helper(&p[i]), helper(p + i).
 */
static const char *const load_intrinsics[] = { "__ldg", "__ldca", "__ldcs", "__ldlu" };

/*
 * Whether the name at k is (the whole base of) the pointer argument of a
 * load intrinsic: "__ldg ( & name chain )" or "__ldg ( name [op e] )", op one
 * of + - * and the like.
 * Fills o as a read of the intrinsic's call.
 */
static int intrinsic_arg(const struct line_scan *ls, size_t k, struct occ_info *o)
{
	size_t open, close, i, j;
	int amp = k > 0 && tok_is(ls, k - 1, "&"), depth = 0;

	open = amp ? k - 2 : k - 1;
	if (k < (amp ? 3u : 2u) || !tok_is(ls, open, "("))
		return 0;
	for (i = 0; i < ARRAY_SIZE(load_intrinsics); i++)
		if (tok_is(ls, open - 1, load_intrinsics[i]))
			break;
	if (i == ARRAY_SIZE(load_intrinsics))
		return 0;
	close = close_of(ls, open);
	if (close >= ls->nr)
		return 0;
	for (j = k + 1; j < close; j++) {
		if (tok_is(ls, j, "(") || tok_is(ls, j, "[")) {
			depth++;
		} else if (tok_is(ls, j, ")") || tok_is(ls, j, "]")) {
			depth--;
		} else if (depth == 0 && ls->t[j].kind == SOURCE_TOKEN_PUNCT &&
			   !tok_is(ls, j, "+") && !tok_is(ls, j, "-") && !tok_is(ls, j, "*") &&
			   !tok_is(ls, j, "/") && !tok_is(ls, j, "%") && !tok_is(ls, j, ".") &&
			   !tok_is(ls, j, "->") && !tok_is(ls, j, "::")) {
			return 0;   /* a comma, a comparison: not one pointer expression */
		} else if (depth == 0 && amp && (tok_is(ls, j, "+") || tok_is(ls, j, "-"))) {
			return 0;   /* &p[i] + 1 */
		}
	}
	o->kind = OCC_READ;
	o->begin = ls->t[open - 1].begin;
	o->end = ls->t[close].end;
	o->open_del = ls->t[open].end - ls->t[open - 1].begin;   /* "__ldg(" */
	o->keeps_close = 1;
	o->take_address = 0;
	return 1;
}

/*
 * Whether the name at k is the operand of "reinterpret_cast < T * > ( name )
 * [i]", one subscript and nothing after it but the end of the read: a
 * vector load of a scalar array (float4 through float). Fills o as a read
 * of the whole expression, its element type T's.
 */
static int cast_subscript(const struct line_scan *ls, size_t k, struct occ_info *o)
{
	size_t lt, gt, c, after;

	if (k < 4 || !tok_is(ls, k - 1, "(") || !tok_is(ls, k + 1, ")") || !tok_is(ls, k - 2, ">"))
		return 0;
	gt = k - 2;
	for (lt = gt; lt > 0 && !tok_is(ls, lt, "<"); lt--)
		if (tok_is(ls, lt, "(") || tok_is(ls, lt, ")") || tok_is(ls, lt, ";"))
			return 0;
	if (!lt || !tok_is(ls, lt, "<") || !tok_is(ls, lt - 1, "reinterpret_cast") ||
	    !tok_is(ls, k + 2, "["))
		return 0;
	c = close_of(ls, k + 2);
	if (c >= ls->nr)
		return 0;
	after = c + 1;
	if (tok_is(ls, after, "[") || tok_is(ls, after, ".") || tok_is(ls, after, "->") ||
	    tok_is(ls, after, "(") || tok_is(ls, after, "++") || tok_is(ls, after, "--") ||
	    is_assign_op(ls, after) || is_compound_op(ls, after))
		return 0;           /* a store, a member of the vector, more derefs */
	if (lt >= 2 && tok_is(ls, lt - 2, "&") && is_prefix(ls, lt - 2))
		return 0;           /* an address */
	o->kind = OCC_READ;
	o->begin = ls->t[lt - 1].begin;
	o->end = ls->t[c].end;
	o->open_del = 0;
	o->take_address = 1;
	o->cast_begin = ls->t[lt + 1].begin;
	o->cast_end = ls->t[gt - 1].end;
	return 1;
}

static void classify(const struct line_scan *ls, size_t k, struct occ_info *o)
{
	size_t j = k + 1, derefs = 0, first_deref = 0, after;
	int members = 0;

	memset(o, 0, sizeof(*o));
	o->kind = OCC_NONE;
	if (k > 0 && (tok_is(ls, k - 1, ".") || tok_is(ls, k - 1, "->") || tok_is(ls, k - 1, "::")))
		return;             /* a member or qualified name that happens to match */
	if (intrinsic_arg(ls, k, o))
		return;             /* __ldg(&p[i]): the intrinsic becomes the helper */
	if (cast_subscript(ls, k, o))
		return;             /* reinterpret_cast<const float4 *>(p)[i] */

	/* The postfix chain: [..], .member, ->member. */
	for (;;) {
		if (tok_is(ls, j, "[")) {
			size_t c = close_of(ls, j);
			if (c >= ls->nr) {
				o->kind = OCC_UNWRAPPABLE;
				o->why = "the subscript continues on another line";
				return;
			}
			if (!derefs++)
				first_deref = j;
			j = c + 1;
		} else if (tok_is(ls, j, "->") && tok_is_ident(ls, j + 1)) {
			if (!derefs++)
				first_deref = j;
			if (!members++) {
				o->member_begin = ls->t[j + 1].begin;
				o->member_end = ls->t[j + 1].end;
			}
			j += 2;
		} else if (tok_is(ls, j, ".") && tok_is_ident(ls, j + 1)) {
			if (!members++) {
				o->member_begin = ls->t[j + 1].begin;
				o->member_end = ls->t[j + 1].end;
			}
			j += 2;
		} else {
			break;
		}
	}
	after = j;
	(void)first_deref;

	if (derefs == 0) {
		size_t star = ls->nr, close;

		if (k > 0 && tok_is(ls, k - 1, "*") && is_prefix(ls, k - 1)) {
			/* *name */
			if (members) {
				/* *s.a: the dereference applies to the member. */
				star = k - 1;
				close = after - 1;
			} else {
				star = k - 1;
				close = k;
			}
			o->begin = ls->t[star].begin;
			o->end = ls->t[close].end;
			o->open_del = 1;
		} else if (k > 1 && tok_is(ls, k - 1, "(") && tok_is(ls, k - 2, "*") &&
			   is_prefix(ls, k - 2)) {
			/* *(name), *(name + e), *(name - e) */
			size_t i;
			int depth = 0;

			star = k - 2;
			close = close_of(ls, k - 1);
			if (close >= ls->nr) {
				o->kind = OCC_UNWRAPPABLE;
				o->why = "the dereference continues on another line";
				return;
			}
			if (after != close && !tok_is(ls, after, "+") && !tok_is(ls, after, "-")) {
				o->kind = OCC_UNWRAPPABLE;
				o->why = "a dereference this matcher does not recognise";
				return;
			}
			for (i = k + 1; i < close; i++) {
				if (tok_is(ls, i, "(") || tok_is(ls, i, "[")) {
					depth++;
				} else if (tok_is(ls, i, ")") || tok_is(ls, i, "]")) {
					depth--;
				} else if (depth == 0 && ls->t[i].kind == SOURCE_TOKEN_PUNCT &&
					   !tok_is(ls, i, "+") && !tok_is(ls, i, "-") &&
					   !tok_is(ls, i, "*") && !tok_is(ls, i, "/") &&
					   !tok_is(ls, i, "%") && !tok_is(ls, i, ".") &&
					   !tok_is(ls, i, "->") && !tok_is(ls, i, "::")) {
					o->kind = OCC_UNWRAPPABLE;
					o->why = "a dereference this matcher does not recognise";
					return;
				}
			}
			after = close + 1;
			if (tok_is(ls, after, "[") || tok_is(ls, after, ".") || tok_is(ls, after, "->")) {
				o->kind = OCC_UNWRAPPABLE;
				o->why = "the dereferenced expression is used further";
				return;
			}
			o->begin = ls->t[star].begin;
			o->end = ls->t[close].end;
			o->open_del = 2;    /* "*(" becomes "<helper>(" */
			o->keeps_close = 1;
		} else {
			if (inside_deref_group(ls, k)) {
				o->kind = OCC_UNWRAPPABLE;
				o->why = "a dereference this matcher does not recognise";
			}
			return;     /* pointer arithmetic, an argument, a comparison */
		}
		if (star >= 2 && (tok_is(ls, star - 1, "++") || tok_is(ls, star - 1, "--"))) {
			o->kind = OCC_UNWRAPPABLE;
			o->why = "the value is incremented in place";
			return;
		}
		if (tok_is(ls, after, "++") || tok_is(ls, after, "--")) {
			o->kind = OCC_UNWRAPPABLE;
			o->why = o->open_del == 1 ? "the pointer is incremented in the same expression"
						  : "the value is incremented in place";
			return;
		}
		if (is_assign_op(ls, after))
			return;     /* a store */
		if (is_compound_op(ls, after)) {
			o->kind = OCC_UNWRAPPABLE;
			o->why = "a compound assignment reads and writes it";
			return;
		}
		if (star > 0 && tok_is(ls, star - 1, "&") && is_prefix(ls, star - 1))
			return;     /* &*p: an address */
		/* *q -> helper(q), *(q + k) -> helper(q + k), *s.a -> helper(s.a) */
		o->kind = OCC_READ;
		o->member = members > 0;
		o->nr_members = members;
		o->take_address = 0;
		return;
	}

	/* name[...] / name->m / s.a[...]: one dereference in the chain. */
	if (derefs > 1) {
		o->kind = OCC_UNWRAPPABLE;
		o->why = "the expression dereferences more than once";
		return;
	}
	if (tok_is(ls, after, "(")) {
		o->kind = OCC_UNWRAPPABLE;
		o->why = "the expression is called";
		return;
	}
	if (k > 0 && tok_is(ls, k - 1, "&") && is_prefix(ls, k - 1))
		return;             /* &a[i]: an address */
	if (k > 0 && (tok_is(ls, k - 1, "sizeof") ||
		      (k > 1 && tok_is(ls, k - 1, "(") && (tok_is(ls, k - 2, "sizeof") ||
							   tok_is(ls, k - 2, "decltype")))))
		return;
	if (k > 0 && (tok_is(ls, k - 1, "++") || tok_is(ls, k - 1, "--"))) {
		o->kind = OCC_UNWRAPPABLE;
		o->why = "the value is incremented in place";
		return;
	}
	if (is_assign_op(ls, after))
		return;             /* a store */
	if (is_compound_op(ls, after)) {
		o->kind = OCC_UNWRAPPABLE;
		o->why = "a compound assignment reads and writes it";
		return;
	}
	o->kind = OCC_READ;
	o->begin = ls->t[k].begin;
	o->end = ls->t[after - 1].end;
	o->open_del = 0;
	o->take_address = 1;
	o->member = members > 0;
	o->nr_members = members;
}

static char *normalize_type(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	struct source_token *t = NULL;
	size_t nr = source_tokenize(s, strlen(s), 0, &t), i;
	int has_unsigned = 0, has_signed = 0, longs = 0, has_int = 0, other = 0;

	for (i = 0; i < nr; i++) {
		if (source_token_is(s, &t[i], "unsigned"))
			has_unsigned = 1;
		else if (source_token_is(s, &t[i], "signed"))
			has_signed = 1;
		else if (source_token_is(s, &t[i], "long"))
			longs++;
		else if (source_token_is(s, &t[i], "int"))
			has_int = 1;
		else
			other = 1;
	}
	if (!other && (has_unsigned || has_signed || longs || has_int)) {
		if (has_unsigned)
			strbuf_addstr(&sb, "unsigned ");
		if (longs == 1)
			strbuf_addstr(&sb, "long");
		else if (longs >= 2)
			strbuf_addstr(&sb, "long long");
		else
			strbuf_addstr(&sb, "int");
	} else {
		for (i = 0; i < nr; i++) {
			if (sb.len)
				strbuf_addch(&sb, ' ');
			strbuf_add(&sb, s + t[i].begin, t[i].end - t[i].begin);
		}
	}
	free(t);
	return strbuf_detach(&sb, NULL);
}

char *source_pointee_type(const char *param_type)
{
	struct strbuf base = STRBUF_INIT;
	struct source_token *t = NULL;
	size_t nr, i;
	int pointers = 0, arrays = 0;
	char *ret;

	if (!param_type)
		return NULL;
	nr = source_tokenize(param_type, strlen(param_type), 0, &t);
	for (i = 0; i < nr; i++) {
		const struct source_token *k = &t[i];

		if (source_token_is(param_type, k, "*")) {
			pointers++;
		} else if (source_token_is(param_type, k, "[")) {
			arrays++;
			while (i < nr && !source_token_is(param_type, &t[i], "]"))
				i++;
		} else if (source_token_is(param_type, k, "const") ||
			   source_token_is(param_type, k, "volatile") ||
			   source_token_is(param_type, k, "__restrict__") ||
			   source_token_is(param_type, k, "__restrict") ||
			   source_token_is(param_type, k, "restrict") ||
			   source_token_is(param_type, k, "__grid_constant__") ||
			   source_token_is(param_type, k, "struct") ||
			   source_token_is(param_type, k, "class")) {
			continue;
		} else if (k->kind == SOURCE_TOKEN_IDENT || source_token_is(param_type, k, "::")) {
			if (pointers || arrays) {
				free(t);
				strbuf_release(&base);
				return NULL;    /* float *const *p and the like */
			}
			if (base.len && k->kind == SOURCE_TOKEN_IDENT &&
			    !source_token_is(param_type, &t[i - 1], "::"))
				strbuf_addch(&base, ' ');
			strbuf_add(&base, param_type + k->begin, k->end - k->begin);
		} else {
			/* Parentheses, template arguments: not a simple pointer. */
			free(t);
			strbuf_release(&base);
			return NULL;
		}
	}
	free(t);
	if (pointers + arrays != 1 || !base.len) {
		strbuf_release(&base);
		return NULL;
	}
	ret = normalize_type(base.buf);
	strbuf_release(&base);
	return ret;
}

void source_rewrite_find(struct source_rewrite *rw, const char *line, size_t len,
			 int in_comment, const char *param, const char *param_type)
{
	struct line_scan ls = { line, NULL, 0 };
	struct occ_info found = { 0 }, first_bad = { 0 };
	size_t k, reads = 0, bad = 0;

	memset(rw, 0, sizeof(*rw));
	ls.nr = source_tokenize(line, len, in_comment, &ls.t);
	for (k = 0; k < ls.nr; k++) {
		struct occ_info o;

		if (ls.t[k].kind != SOURCE_TOKEN_IDENT || !source_token_is(line, &ls.t[k], param))
			continue;
		classify(&ls, k, &o);
		if (o.kind == OCC_NONE)
			continue;
		reads++;
		if (o.kind == OCC_READ) {
			found = o;
		} else if (!bad++) {
			first_bad = o;
		}
	}
	free(ls.t);
	rw->nr_reads = reads;
	if (reads == 0) {
		rw->status = SOURCE_REWRITE_NOT_FOUND;
		rw->reason = xasprintf("the line does not read '%s' directly (is the address "
				       "computed on another line?)", param);
	} else if (reads > 1) {
		rw->status = SOURCE_REWRITE_AMBIGUOUS;
		rw->reason = xasprintf("the line reads '%s' %zu times: cannot tell which read "
				       "is this load", param, reads);
	} else if (bad) {
		rw->status = SOURCE_REWRITE_UNSUPPORTED;
		rw->reason = xasprintf("the line reads '%s' in a form that cannot be wrapped: %s",
				       param, first_bad.why);
	} else {
		rw->status = SOURCE_REWRITE_OK;
		rw->begin = found.begin;
		rw->end = found.end;
		rw->open_del = found.open_del;
		rw->keeps_close = found.keeps_close;
		rw->take_address = found.take_address;
		if (found.cast_end > found.cast_begin) {
			char *cast = xstrndup(line + found.cast_begin,
					      found.cast_end - found.cast_begin);

			rw->elem_type = source_pointee_type(cast);
			free(cast);
		} else {
			rw->elem_type = found.member ? NULL : source_pointee_type(param_type);
		}
		if (found.nr_members == 1 && found.member_end > found.member_begin)
			rw->member = xstrndup(line + found.member_begin,
					      found.member_end - found.member_begin);
	}
}

void source_rewrite_release(struct source_rewrite *rw)
{
	free(rw->reason);
	free(rw->elem_type);
	free(rw->member);
	memset(rw, 0, sizeof(*rw));
}

struct edit {
	size_t pos;
	size_t del;
	const char *ins;
	int closing;
};

static int edit_cmp(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	/* At one position, closing parentheses come before openings. */
	return y->closing - x->closing;
}

char *source_rewrite_apply(const char *line, size_t len, const struct source_rewrite *const *rws,
			   const char *const *helpers, size_t n)
{
	struct edit *e = xcalloc(2 * n + 1, sizeof(*e));
	struct strbuf sb = STRBUF_INIT;
	size_t i, pos = 0, nr = 0;
	char **opens = xcalloc(n + 1, sizeof(*opens));

	for (i = 0; i < n; i++) {
		const struct source_rewrite *rw = rws[i];

		if (rw->status != SOURCE_REWRITE_OK || rw->end > len || rw->begin >= rw->end)
			goto fail;
		opens[i] = xasprintf("%s(%s", helpers[i], rw->take_address ? "&" : "");
		e[nr++] = (struct edit){ rw->begin, rw->open_del, opens[i], 0 };
		/* "*(q + k)" and "__ldg(p)" keep their own closing parenthesis. */
		e[nr++] = (struct edit){ rw->end, 0, rw->keeps_close ? "" : ")", 1 };
	}
	qsort(e, nr, sizeof(*e), edit_cmp);
	for (i = 0; i < nr; i++) {
		if (i > 0 && e[i].pos == e[i - 1].pos && e[i].closing == e[i - 1].closing)
			goto fail;  /* two rewrites of the same expression */
		if (e[i].pos < pos)
			goto fail;  /* overlapping deletions */
		strbuf_add(&sb, line + pos, e[i].pos - pos);
		strbuf_addstr(&sb, e[i].ins);
		pos = e[i].pos + e[i].del;
	}
	strbuf_add(&sb, line + pos, len - pos);
	for (i = 0; i < n; i++)
		free(opens[i]);
	free(opens);
	free(e);
	return strbuf_detach(&sb, NULL);
fail:
	for (i = 0; i < n; i++)
		free(opens[i]);
	free(opens);
	free(e);
	strbuf_release(&sb);
	return NULL;
}

int source_ld_type_parse(const char *instruction, struct source_ld_type *t)
{
	const char *p = instruction, *last = NULL;

	if (!instruction)
		return -1;
	t->vector = 1;
	while ((p = strchr(p, '.'))) {
		p++;
		if (p[0] == 'v' && isdigit((unsigned char)p[1]) && (p[2] == '.' || p[2] == '\0'))
			t->vector = p[1] - '0';
		last = p;
	}
	/* (strchr finds the terminator too: "ld.global." ends in an empty part) */
	if (!last || !last[0] || !strchr("fbsu", last[0]) || !isdigit((unsigned char)last[1]))
		return -1;
	t->bits = atoi(last + 1);
	t->kind = last[0] == 'f' ? 'f' : 'i';
	return t->bits > 0 ? 0 : -1;
}

/* Element types the helpers are written for, in groups that share a guard. */
struct helper_type {
	const char *ctype;
	const char *ptx;            /* element type suffix */
	const char *constraint;     /* asm output constraint letter */
	int vector;
	int bits;
	char kind;
	const char *group;
	/* the register the asm writes when the type has none of its own
	 * (8-bit: a 16-bit register, the load sign- or zero-extends), else NULL */
	const char *reg;
	/* how the helper returns that register as the type: "__ushort_as_half(v)"
	 * (a bit cast); NULL: "(ctype)v" */
	const char *from_reg;
	/* written only for an expression of this very type (its header,
	 * cuda_fp16.h or cuda_bf16.h, is then included): never for a load whose
	 * type the source does not name */
	int named_only;
};

static const struct helper_type helper_types[] = {
	{ "char", "s8", "h", 1, 8, 'i', "I8", "short", NULL, 0 },
	{ "signed char", "s8", "h", 1, 8, 'i', "I8", "short", NULL, 0 },
	{ "unsigned char", "u8", "h", 1, 8, 'i', "I8", "unsigned short", NULL, 0 },
	/* a bool is a byte holding 0 or 1: loaded as u8, converted back */
	{ "bool", "u8", "h", 1, 8, 'i', "I8", "unsigned short", NULL, 0 },
	{ "short", "s16", "h", 1, 16, 'i', "I16", NULL, NULL, 0 },
	{ "unsigned short", "u16", "h", 1, 16, 'i', "I16", NULL, NULL, 0 },
	/* half precision: 16 bits loaded as they are, bit-cast back */
	{ "__half", "b16", "h", 1, 16, 'f', "H16", "unsigned short", "__ushort_as_half(v)", 1 },
	{ "__nv_bfloat16", "b16", "h", 1, 16, 'f', "BF16", "unsigned short",
	  "__ushort_as_bfloat16(v)", 1 },
	{ "float", "f32", "f", 1, 32, 'f', "F32", NULL, NULL, 0 },
	{ "int", "s32", "r", 1, 32, 'i', "I32", NULL, NULL, 0 },
	{ "unsigned int", "u32", "r", 1, 32, 'i', "I32", NULL, NULL, 0 },
	{ "double", "f64", "d", 1, 64, 'f', "F64", NULL, NULL, 0 },
	{ "long", "s64", "l", 1, 64, 'i', "I64", NULL, NULL, 0 },
	{ "unsigned long", "u64", "l", 1, 64, 'i', "I64", NULL, NULL, 0 },
	{ "long long", "s64", "l", 1, 64, 'i', "I64", NULL, NULL, 0 },
	{ "unsigned long long", "u64", "l", 1, 64, 'i', "I64", NULL, NULL, 0 },
	{ "float2", "f32", "f", 2, 32, 'f', "F32X2", NULL, NULL, 0 },
	{ "float4", "f32", "f", 4, 32, 'f', "F32X4", NULL, NULL, 0 },
	{ "int2", "s32", "r", 2, 32, 'i', "I32X2", NULL, NULL, 0 },
	{ "uint2", "u32", "r", 2, 32, 'i', "I32X2", NULL, NULL, 0 },
	{ "int4", "s32", "r", 4, 32, 'i', "I32X4", NULL, NULL, 0 },
	{ "uint4", "u32", "r", 4, 32, 'i', "I32X4", NULL, NULL, 0 },
	{ "double2", "f64", "d", 2, 64, 'f', "F64X2", NULL, NULL, 0 },
	{ "longlong2", "s64", "l", 2, 64, 'i', "I64X2", NULL, NULL, 0 },
	{ "ulonglong2", "u64", "l", 2, 64, 'i', "I64X2", NULL, NULL, 0 },
};

/* Whether an overload for h can be what a load of type t reads. */
static int type_fits(const struct helper_type *h, const struct source_ld_type *t)
{
	return h->vector == t->vector && h->bits == t->bits && (t->kind == 'i' || h->kind == 'f');
}

/*
 * The <stdint.h> names as the built-in types they are on Linux x86-64 and
 * aarch64 (LP64), so a uint32_t array gets the unsigned int overload.
 */
static const char *canonical_ctype(const char *t)
{
	static const char *const alias[][2] = {
		{ "int32_t", "int" }, { "uint32_t", "unsigned int" }, { "unsigned", "unsigned int" },
		{ "int64_t", "long" }, { "uint64_t", "unsigned long" }, { "size_t", "unsigned long" },
		{ "ptrdiff_t", "long" }, { "intptr_t", "long" }, { "uintptr_t", "unsigned long" },
		{ "signed int", "int" }, { "long int", "long" }, { "unsigned long int", "unsigned long" },
		{ "int8_t", "signed char" }, { "uint8_t", "unsigned char" }, { "int16_t", "short" },
		{ "uint16_t", "unsigned short" }, { "short int", "short" }, { "signed short", "short" },
		{ "half", "__half" }, { "nv_bfloat16", "__nv_bfloat16" },
		{ "unsigned short int", "unsigned short" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(alias); i++)
		if (!strcmp(t, alias[i][0]))
			return alias[i][1];
	return t;
}

int source_type_matches(const char *elem_type, const struct source_ld_type *t)
{
	size_t i;

	if (!elem_type)
		return -1;
	elem_type = canonical_ctype(elem_type);
	for (i = 0; i < ARRAY_SIZE(helper_types); i++) {
		const struct helper_type *h = &helper_types[i];

		if (strcmp(h->ctype, elem_type))
			continue;
		/* Integer and untyped PTX loads may copy float bits; a float load
		 * is never an integer expression. */
		return type_fits(h, t);
	}
	return -1;
}

int source_ld_type_supported(const struct source_ld_type *t)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(helper_types); i++)
		if (type_fits(&helper_types[i], t))
			return 1;
	return 0;
}

struct helper_family {
	const char *name;
	const char *qualifiers;     /* between "ld" and the type */
	int clobber;
	const char *guard;
	enum l2_priority l2;        /* L2_PRIORITY_NONE: no policy */
};

/* The L1 families: the L1 qualifier alone. */
static const struct helper_family l1_families[] = {
	{ "ca_ld_na", ".global.L1::no_allocate", 1, "CACHEADVISE_LD_NA", L2_PRIORITY_NONE },
	{ "ca_ld_na_ro", ".global.L1::no_allocate", 0, "CACHEADVISE_LD_NA_RO", L2_PRIORITY_NONE },
	{ "ca_ldg_na", ".global.nc.L1::no_allocate", 0, "CACHEADVISE_LDG_NA", L2_PRIORITY_NONE },
	{ "ca_ld_el", ".global.L1::evict_last", 1, "CACHEADVISE_LD_EL", L2_PRIORITY_NONE },
	{ "ca_ld_el_ro", ".global.L1::evict_last", 0, "CACHEADVISE_LD_EL_RO", L2_PRIORITY_NONE },
	{ "ca_ldg_el", ".global.nc.L1::evict_last", 0, "CACHEADVISE_LDG_EL", L2_PRIORITY_NONE },
	{ "ca_ld_ef", ".global.L1::evict_first", 1, "CACHEADVISE_LD_EF", L2_PRIORITY_NONE },
	{ "ca_ld_ef_ro", ".global.L1::evict_first", 0, "CACHEADVISE_LD_EF_RO", L2_PRIORITY_NONE },
	{ "ca_ldg_ef", ".global.nc.L1::evict_first", 0, "CACHEADVISE_LDG_EF", L2_PRIORITY_NONE },
};

/*
 * Every family: the L1 ones, then for each L1 form (none, na, el, ef), L2
 * priority (ef, el, en, eu) and access (read-write, read-only, .nc) one with
 * an L2 policy: ca_ld_l2el, ca_ld_na_l2ef_ro, ca_ldg_el_l2el, ...
 */
#define NR_L1_FORMS 4
#define NR_L2_FORMS (L2_PRIORITY__COUNT - 1)
#define NR_FAMILIES (ARRAY_SIZE(l1_families) + NR_L1_FORMS * NR_L2_FORMS * 3)

static const char *const l1_codes[NR_L1_FORMS] = { "", "na", "el", "ef" };
static const char *const l1_quals[NR_L1_FORMS] = { "", ".L1::no_allocate", ".L1::evict_last",
						   ".L1::evict_first" };
static const char *const l2_codes[L2_PRIORITY__COUNT] = { "", "l2ef", "l2el", "l2en", "l2eu" };

static const struct helper_family *family_table(void)
{
	static struct helper_family table[NR_FAMILIES];
	static char names[NR_FAMILIES][32], quals[NR_FAMILIES][64], guards[NR_FAMILIES][48];
	static int built;
	size_t n = 0, a, b, m, i;

	if (built)
		return table;
	for (i = 0; i < ARRAY_SIZE(l1_families); i++)
		table[n++] = l1_families[i];
	for (a = 0; a < NR_L1_FORMS; a++) {
		for (b = 1; b < L2_PRIORITY__COUNT; b++) {
			for (m = 0; m < 3; m++) {   /* read-write, read-only, .nc */
				struct helper_family *f = &table[n];
				char *g;

				snprintf(names[n], sizeof(names[n]), "%s%s%s_%s%s",
					 m == 2 ? "ca_ldg" : "ca_ld", *l1_codes[a] ? "_" : "",
					 l1_codes[a], l2_codes[b], m == 1 ? "_ro" : "");
				snprintf(quals[n], sizeof(quals[n]), ".global%s%s.L2::cache_hint",
					 m == 2 ? ".nc" : "", l1_quals[a]);
				snprintf(guards[n], sizeof(guards[n]), "CACHEADVISE_%s",
					 names[n] + strlen("ca_"));
				for (g = guards[n]; *g; g++)
					*g = (char)toupper((unsigned char)*g);
				f->name = names[n];
				f->qualifiers = quals[n];
				f->clobber = m == 0;
				f->guard = guards[n];
				f->l2 = (enum l2_priority)b;
				n++;
			}
		}
	}
	built = 1;
	return table;
}

const char *source_form_code(enum load_action action, enum l2_priority l2)
{
	static char names[NR_L1_FORMS][L2_PRIORITY__COUNT][16];
	size_t a;

	switch (action) {
	case LOAD_ACTION_NO_ALLOCATE: a = 1; break;
	case LOAD_ACTION_EVICT_LAST: a = 2; break;
	case LOAD_ACTION_EVICT_FIRST: a = 3; break;
	case LOAD_ACTION_AS_BUILT:
	case LOAD_ACTION_DEFAULT: a = 0; break;
	default: return NULL;
	}
	if ((unsigned)l2 >= L2_PRIORITY__COUNT || (!a && l2 == L2_PRIORITY_NONE))
		return NULL;
	if (!names[a][l2][0])
		snprintf(names[a][l2], sizeof(names[a][l2]), "%s%s%s", l1_codes[a],
			 *l1_codes[a] && *l2_codes[l2] ? "_" : "", l2_codes[l2]);
	return names[a][l2];
}

const char *source_helper_name(enum load_action action, enum l2_priority l2, int nc,
			       int read_only)
{
	const struct helper_family *t = family_table();
	size_t a, m = nc ? 2 : read_only == 1 ? 1 : 0;

	switch (action) {
	case LOAD_ACTION_NO_ALLOCATE: a = 1; break;
	case LOAD_ACTION_EVICT_LAST: a = 2; break;
	case LOAD_ACTION_EVICT_FIRST: a = 3; break;
	/* the L1 form as built, or none: a plain load, with the policy */
	case LOAD_ACTION_AS_BUILT:
	case LOAD_ACTION_DEFAULT: a = 0; break;
	default: return NULL;
	}
	if ((unsigned)l2 >= L2_PRIORITY__COUNT)
		return NULL;
	if (l2 == L2_PRIORITY_NONE)
		return a ? t[(a - 1) * 3 + m].name : NULL;
	return t[ARRAY_SIZE(l1_families) + (a * NR_L2_FORMS + (size_t)(l2 - 1)) * 3 + m].name;
}

static void write_helper(struct strbuf *out, const struct helper_family *f,
			 const struct helper_type *h)
{
	static const char *const lanes[] = { "x", "y", "z", "w" };
	int i;

	strbuf_addf(out, "__device__ __forceinline__ %s %s(const %s *p) { %s v; ",
		    h->ctype, f->name, h->ctype, h->reg ? h->reg : h->ctype);
	if (f->l2 != L2_PRIORITY_NONE)
		strbuf_addf(out, "unsigned long long pol; asm(\"createpolicy.fractional.%s.b64 %%0, "
			    "1.0;\" : \"=l\"(pol)); ", l2_priority_name(f->l2));
	strbuf_addf(out, "asm(\"ld%s.", f->qualifiers);
	if (h->vector > 1)
		strbuf_addf(out, "v%d.", h->vector);
	strbuf_addf(out, "%s ", h->ptx);
	if (h->vector == 1) {
		strbuf_addstr(out, "%0");
	} else {
		strbuf_addch(out, '{');
		for (i = 0; i < h->vector; i++)
			strbuf_addf(out, "%s%%%d", i ? "," : "", i);
		strbuf_addch(out, '}');
	}
	if (f->l2 != L2_PRIORITY_NONE)
		strbuf_addf(out, ", [%%%d], %%%d;\" : ", h->vector, h->vector + 1);
	else
		strbuf_addf(out, ", [%%%d];\" : ", h->vector);
	if (h->vector == 1) {
		strbuf_addf(out, "\"=%s\"(v)", h->constraint);
	} else {
		for (i = 0; i < h->vector; i++)
			strbuf_addf(out, "%s\"=%s\"(v.%s)", i ? ", " : "", h->constraint, lanes[i]);
	}
	strbuf_addstr(out, f->l2 != L2_PRIORITY_NONE ? " : \"l\"(p), \"l\"(pol)" : " : \"l\"(p)");
	if (f->clobber)
		strbuf_addstr(out, " : \"memory\"");
	if (h->from_reg)
		strbuf_addf(out, "); return %s; }\n", h->from_reg);
	else if (h->reg)
		strbuf_addf(out, "); return (%s)v; }\n", h->ctype);
	else
		strbuf_addstr(out, "); return v; }\n");
}

/* Whether text has the line "#define <name>" for exactly this name. */
static int defines(const char *text, const char *define)
{
	const char *p = text;
	size_t n = strlen(define);

	while ((p = strstr(p, define))) {
		if (!isalnum((unsigned char)p[n]) && p[n] != '_')
			return 1;
		p += n;
	}
	return 0;
}

/* Whether a need calls for the overload h of family f. */
static int needed(const struct helper_family *f, const struct helper_type *h,
		  const struct source_helper_need *needs, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		if (!needs[j].helper || strcmp(needs[j].helper, f->name))
			continue;
		/* an element type no overload names (a typedef of its own): by the load's type */
		if (needs[j].elem_type && source_type_matches(needs[j].elem_type, &needs[j].type) >= 0
		    ? !strcmp(canonical_ctype(needs[j].elem_type), h->ctype)
		    : type_fits(h, &needs[j].type) && !h->named_only)
			return 1;
	}
	return 0;
}

size_t source_helpers_write(struct strbuf *out, const struct source_helper_need *needs, size_t n,
			    const char *existing_text)
{
	size_t i, j, k, written = 0;

	for (i = 0; i < NR_FAMILIES; i++) {
		const struct helper_family *f = &family_table()[i];

		for (j = 0; j < ARRAY_SIZE(helper_types); j++) {
			const char *group = helper_types[j].group;
			int wanted = 0;
			char *define;

			if (j > 0 && !strcmp(helper_types[j - 1].group, group))
				continue;   /* each group once, at its first type */
			for (k = j; k < ARRAY_SIZE(helper_types) &&
				    !strcmp(helper_types[k].group, group); k++)
				wanted |= needed(f, &helper_types[k], needs, n);
			if (!wanted)
				continue;
			define = xasprintf("#define %s_%s", f->guard, group);
			if (existing_text && defines(existing_text, define)) {
				free(define);
				continue;
			}
			strbuf_addf(out, "#ifndef %s_%s\n%s\n", f->guard, group, define);
			free(define);
			for (k = j; k < ARRAY_SIZE(helper_types) &&
				    !strcmp(helper_types[k].group, group); k++)
				write_helper(out, f, &helper_types[k]);
			strbuf_addstr(out, "#endif\n");
			written++;
		}
	}
	return written;
}

/* The type of member in the declaration t[b, e) ("int x, y;", "long off;",
 * "float *p;"), NULL when it does not declare it. */
static char *declared_type(const char *text, const struct source_token *t, size_t b, size_t e,
			   const char *member)
{
	struct strbuf base = STRBUF_INIT;
	size_t i, start = e, d;
	char *type, *ret = NULL;

	for (i = b; i < e; i++)
		if (source_token_is(text, &t[i], "("))
			return NULL;        /* a method, a function pointer */
	/* the first declarator: an identifier after the type, followed by , [ = : or the end */
	for (i = b + 1; i < e; i++)
		if (t[i].kind == SOURCE_TOKEN_IDENT &&
		    (i + 1 == e || source_token_is(text, &t[i + 1], ",") ||
		     source_token_is(text, &t[i + 1], "[") || source_token_is(text, &t[i + 1], "=") ||
		     source_token_is(text, &t[i + 1], ":"))) {
			start = i;
			break;
		}
	if (start == e)
		return NULL;
	while (start > b && (source_token_is(text, &t[start - 1], "*") ||
			     source_token_is(text, &t[start - 1], "&")))
		start--;
	for (i = b; i < start; i++) {
		if (source_token_is(text, &t[i], "const") || source_token_is(text, &t[i], "volatile") ||
		    source_token_is(text, &t[i], "static") || source_token_is(text, &t[i], "mutable") ||
		    source_token_is(text, &t[i], "struct") || source_token_is(text, &t[i], "class") ||
		    source_token_is(text, &t[i], "union") || source_token_is(text, &t[i], "enum"))
			continue;
		if (t[i].kind != SOURCE_TOKEN_IDENT && !source_token_is(text, &t[i], "::")) {
			strbuf_release(&base);
			return NULL;        /* templates, alignas(...), attributes */
		}
		if (base.len && t[i].kind == SOURCE_TOKEN_IDENT && !source_token_is(text, &t[i - 1], "::"))
			strbuf_addch(&base, ' ');
		strbuf_add(&base, text + t[i].begin, t[i].end - t[i].begin);
	}
	if (!base.len)
		return NULL;
	type = normalize_type(base.buf);
	strbuf_release(&base);
	/* each declarator: [*...] name [[n]...] [= init] [: bits] */
	for (d = start; d < e;) {
		size_t stars = 0, name = e, arrays = 0, k;

		for (k = d; k < e && !source_token_is(text, &t[k], ","); k++) {
			if (source_token_is(text, &t[k], "*"))
				stars++;
			else if (source_token_is(text, &t[k], "[")) {
				arrays++;
				k = source_token_close(text, t, e, k);
			} else if (source_token_is(text, &t[k], "=") || source_token_is(text, &t[k], ":")) {
				while (k + 1 < e && !source_token_is(text, &t[k + 1], ","))
					k++;
			} else if (t[k].kind == SOURCE_TOKEN_IDENT && name == e) {
				name = k;
			}
		}
		if (name < e && source_token_is(text, &t[name], member)) {
			ret = xasprintf("%s%s", type, arrays ? " []" : stars ? " *" : "");
			break;
		}
		d = k + 1;
	}
	free(type);
	return ret;
}

char *source_member_type(const char *text, size_t len, const char *name, const char *member,
			 int *defined)
{
	struct source_token *t = NULL;
	size_t nr = source_tokenize(text, len, 0, &t), i, body = nr, end, b;
	char *ret = NULL;

	*defined = 0;
	for (i = 0; i + 2 < nr && body == nr; i++) {
		int tag = source_token_is(text, &t[i], "struct") || source_token_is(text, &t[i], "class") ||
			  source_token_is(text, &t[i], "union");

		if (!tag)
			continue;
		if (source_token_is(text, &t[i + 1], name) && source_token_is(text, &t[i + 2], "{")) {
			body = i + 2;           /* struct name { */
		} else if (i > 0 && source_token_is(text, &t[i - 1], "typedef")) {
			/* typedef struct [tag] { ... } name; */
			size_t open = source_token_is(text, &t[i + 1], "{") ? i + 1 :
				      source_token_is(text, &t[i + 2], "{") ? i + 2 : nr, close, k;

			if (open == nr || (close = source_token_close(text, t, nr, open)) == nr)
				continue;
			for (k = close + 1; k < nr && !source_token_is(text, &t[k], ";"); k++)
				if (source_token_is(text, &t[k], name)) {
					body = open;
					break;
				}
		}
	}
	if (body == nr) {
		free(t);
		return NULL;
	}
	*defined = 1;
	end = source_token_close(text, t, nr, body);
	for (b = i = body + 1; i < end; i++) {
		if (source_token_is(text, &t[i], "{") || source_token_is(text, &t[i], "(") ||
		    source_token_is(text, &t[i], "[")) {
			i = source_token_close(text, t, end, i);      /* a nested body or a method's */
			if (source_token_is(text, &t[i], "}"))
				b = i + 1;                 /* a method body ends its declaration */
			continue;
		}
		if (source_token_is(text, &t[i], ";")) {
			if (i > b && (ret = declared_type(text, t, b, i, member)))
				break;
			b = i + 1;
		} else if (i == b && (source_token_is(text, &t[i], "public") ||
				      source_token_is(text, &t[i], "private") ||
				      source_token_is(text, &t[i], "protected")) &&
			   i + 1 < end && source_token_is(text, &t[i + 1], ":")) {
			b = i + 2;
			i++;
		}
	}
	free(t);
	return ret;
}

/* "#define name T" on a line of text: T, when it is words only ("double",
 * "unsigned int"), normalized; NULL otherwise. */
static char *define_alias(const char *text, size_t len, const char *name)
{
	const char *p = text, *end = text + len;
	size_t nl = strlen(name);

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;

		if (!eol)
			eol = end;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		if (q < eol && *q == '#') {
			q++;
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (eol - q > 7 && !strncmp(q, "define", 6) && (q[6] == ' ' || q[6] == '\t')) {
				q += 6;
				while (q < eol && (*q == ' ' || *q == '\t'))
					q++;
				if ((size_t)(eol - q) > nl && !strncmp(q, name, nl) &&
				    (q[nl] == ' ' || q[nl] == '\t')) {
					struct source_token *t = NULL;
					size_t nr = source_tokenize(q + nl, (size_t)(eol - q - nl), 0, &t), i;
					struct strbuf sb = STRBUF_INIT;
					char *ret = NULL;

					for (i = 0; i < nr && t[i].kind == SOURCE_TOKEN_IDENT; i++) {
						if (sb.len)
							strbuf_addch(&sb, ' ');
						strbuf_add(&sb, q + nl + t[i].begin, t[i].end - t[i].begin);
					}
					if (nr && i == nr)
						ret = normalize_type(sb.buf);
					strbuf_release(&sb);
					free(t);
					return ret;
				}
			}
		}
		p = eol + 1;
	}
	return NULL;
}

char *source_type_alias(const char *text, size_t len, const char *name)
{
	struct source_token *t = NULL;
	size_t nr, i, k;
	char *ret = define_alias(text, len, name);

	if (ret)
		return ret;
	nr = source_tokenize(text, len, 0, &t);
	for (i = 0; i + 2 < nr && !ret; i++) {
		if (source_token_is(text, &t[i], "typedef")) {
			/* "typedef T name;" with T identifiers only */
			struct strbuf sb = STRBUF_INIT;

			for (k = i + 1; k + 1 < nr && t[k].kind == SOURCE_TOKEN_IDENT; k++)
				;
			if (k > i + 2 && source_token_is(text, &t[k], ";") && source_token_is(text, &t[k - 1], name)) {
				size_t j;

				for (j = i + 1; j < k - 1; j++) {
					if (sb.len)
						strbuf_addch(&sb, ' ');
					strbuf_add(&sb, text + t[j].begin, t[j].end - t[j].begin);
				}
				ret = normalize_type(sb.buf);
			}
			strbuf_release(&sb);
		}
	}
	free(t);
	return ret;
}

void source_aliases_free(char **names, char **types, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(names[i]);
		free(types[i]);
	}
	free(names);
	free(types);
}

/* Whether tokens [b, e) name identifier w (not as a member: after . or ->). */
static int names_ident(const char *text, const struct source_token *t, size_t b, size_t e,
		       const char *w)
{
	size_t i;

	for (i = b; i < e; i++)
		if (t[i].kind == SOURCE_TOKEN_IDENT && source_token_is(text, &t[i], w) &&
		    !(i > b && (source_token_is(text, &t[i - 1], ".") || source_token_is(text, &t[i - 1], "->"))))
			return 1;
	return 0;
}

/* The end of the expression starting at t[b]: the next ',' or ';' outside brackets. */
static size_t expr_end(const char *text, const struct source_token *t, size_t nr, size_t b)
{
	int depth = 0;

	for (; b < nr; b++) {
		if (source_token_is(text, &t[b], "(") || source_token_is(text, &t[b], "[") ||
		    source_token_is(text, &t[b], "{"))
			depth++;
		else if (source_token_is(text, &t[b], ")") || source_token_is(text, &t[b], "]") ||
			 source_token_is(text, &t[b], "}"))
			depth--;
		else if (depth <= 0 && (source_token_is(text, &t[b], ",") || source_token_is(text, &t[b], ";")))
			break;
	}
	return b;
}

/* A local pointer declared in a body: its name, declared type, and
 * whether its assignments point into the parameter only (good, not bad). */
struct alias_cand {
	char *name, *type;
	int good, bad;
};

/* Records the declaration of name[0, len) with type (stolen); a name
 * declared twice (shadowed, or another block's) is no alias. */
static void add_alias(struct alias_cand **c, size_t *nc, const char *name, size_t len,
		      char *type)
{
	size_t k;

	for (k = 0; k < *nc; k++)
		if (strlen((*c)[k].name) == len && !memcmp((*c)[k].name, name, len)) {
			(*c)[k].bad = 1;
			free(type);
			return;
		}
	*c = xrealloc(*c, (*nc + 1) * sizeof(**c));
	(*c)[*nc].name = xstrndup(name, len);
	(*c)[*nc].type = type;
	(*c)[*nc].good = (*c)[*nc].bad = 0;
	(*nc)++;
}

size_t source_pointer_aliases(const struct source_file *sf, size_t first, size_t last,
			      const char *param, const char *const *others, size_t nr_others,
			      char ***names, char ***types)
{
	struct source_token *t = NULL;
	size_t off, end, nr, i, j, k, n = 0;
	struct alias_cand *c = NULL;
	size_t nc = 0;
	const char *text;

	*names = *types = NULL;
	if (!first || first > last || last > sf->nr_lines)
		return 0;
	off = sf->line_off[first - 1];
	end = sf->line_off[last];
	text = sf->text + off;
	nr = source_tokenize(text, end - off, sf->in_comment[first - 1], &t);
	for (i = 1; i < nr; i++) {
		size_t s, len = t[i].end - t[i].begin;

		/* a declaration "... T * name (= e)? [,;]" */
		if (t[i].kind != SOURCE_TOKEN_IDENT || !source_token_is(text, &t[i - 1], "*") ||
		    !(i + 1 < nr && (source_token_is(text, &t[i + 1], "=") ||
				     source_token_is(text, &t[i + 1], ";") ||
				     source_token_is(text, &t[i + 1], ","))))
			continue;
		for (s = i - 1; s > 0 && !source_token_is(text, &t[s - 1], ";") &&
		     !source_token_is(text, &t[s - 1], "{") && !source_token_is(text, &t[s - 1], "}") &&
		     !source_token_is(text, &t[s - 1], "(") && !source_token_is(text, &t[s - 1], ","); s--)
			;
		if (s > 0 && source_token_is(text, &t[s - 1], ",")) {
			/* "T *p = a, *r = b;": r's type is the declaration's T */
			size_t st = s - 1, b;

			while (st > 0 && !source_token_is(text, &t[st - 1], ";") &&
			       !source_token_is(text, &t[st - 1], "{") && !source_token_is(text, &t[st - 1], "}"))
				st--;
			for (b = st; b < s - 1 && t[b].kind == SOURCE_TOKEN_IDENT &&
			     !(b + 1 < nr && (source_token_is(text, &t[b + 1], "=") ||
					      source_token_is(text, &t[b + 1], ",") ||
					      source_token_is(text, &t[b + 1], ";"))); b++)
				;
			if (b == st || !source_token_is(text, &t[b], "*"))
				continue;
			add_alias(&c, &nc, text + t[i].begin, len,
				  xasprintf("%.*s *", (int)(t[b - 1].end - t[st].begin),
					    text + t[st].begin));
			continue;
		}
		if (s >= i - 1 || t[s].kind != SOURCE_TOKEN_IDENT)
			continue;           /* "a * b;": no type before the star */
		add_alias(&c, &nc, text + t[i].begin, len,
			  xstrndup(text + t[s].begin, t[i - 1].end - t[s].begin));
	}
	for (k = 0; k < nc; k++) {
		for (i = 0; i < nr; i++) {
			size_t e;

			if (t[i].kind != SOURCE_TOKEN_IDENT || !source_token_is(text, &t[i], c[k].name) ||
			    i + 1 >= nr || !source_token_is(text, &t[i + 1], "=") ||
			    (i > 0 && (source_token_is(text, &t[i - 1], ".") || source_token_is(text, &t[i - 1], "->"))))
				continue;
			/* an assignment or an initialisation: what it points into */
			e = expr_end(text, t, nr, i + 2);
			if (!names_ident(text, t, i + 2, e, param)) {
				c[k].bad = 1;
				continue;
			}
			for (j = 0; j < nr_others; j++)
				if (others[j] && strcmp(others[j], param) &&
				    names_ident(text, t, i + 2, e, others[j]))
					c[k].bad = 1;
			c[k].good = 1;
		}
		if (c[k].good && !c[k].bad) {
			*names = xrealloc(*names, (n + 1) * sizeof(**names));
			*types = xrealloc(*types, (n + 1) * sizeof(**types));
			(*names)[n] = c[k].name;
			(*types)[n++] = c[k].type;
		} else {
			free(c[k].name);
			free(c[k].type);
		}
	}
	free(c);
	free(t);
	return n;
}
