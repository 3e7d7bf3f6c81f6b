#include "emitters/rewrite/regcache_patch.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "emitters/rewrite/source_file.h"
#include "emitters/rewrite/source_rewrite.h"

/*
 * The source side of the register-cache rewrite: matching the kernel's
 * grid-stride loop and its taps (regcache_rewrite_find) and writing the
 * rewritten lines. The diff and the capture's rewrites are in
 * regcache_patch.c.
 */

#define WINDOW_MAX_K 15         /* regcache::window<T, K>: 2K < 32 */

struct body {
	const struct source_file *sf;
	const char *s;              /* sf->text */
	struct source_token *t;     /* the kernel body's tokens, offsets into s */
	size_t nr;
	char **params;
	size_t nr_params;
};

/* A for statement: token ranges [b, e). */
struct loop {
	size_t for_tok;
	size_t init_b, init_e, cond_b, cond_e, step_b, step_e;
	size_t var;                 /* token of the induction variable */
	size_t body_b, body_e;      /* the controlled statement, braces included */
	int braced;
};

static int tis(const struct body *b, size_t i, const char *s)
{
	return i < b->nr && source_token_is(b->s, &b->t[i], s);
}

static int same_tok(const struct body *b, size_t i, size_t j)
{
	size_t n = b->t[i].end - b->t[i].begin;

	return n == b->t[j].end - b->t[j].begin && !memcmp(b->s + b->t[i].begin,
							    b->s + b->t[j].begin, n);
}

static size_t line_of(const struct body *b, size_t i)
{
	return source_file_line_of(b->sf, b->t[i].begin);
}

/* Index of the bracket closing the one at i, or b->nr. */
static size_t match(const struct body *b, size_t i)
{
	static const char open[] = "([{", close[] = ")]}";
	int depth = 0;
	size_t j;

	for (j = i; j < b->nr; j++) {
		size_t n = b->t[j].end - b->t[j].begin;
		const char *c = b->s + b->t[j].begin;

		if (b->t[j].kind != SOURCE_TOKEN_PUNCT || n != 1)
			continue;
		if (strchr(open, *c))
			depth++;
		else if (strchr(close, *c) && --depth == 0)
			return j;
	}
	return b->nr;
}

/* The end (one past the ';') of the simple statement starting at i, or 0. */
static size_t statement_end(const struct body *b, size_t i)
{
	size_t j;

	if (tis(b, i, "for") || tis(b, i, "if") || tis(b, i, "while") || tis(b, i, "do") ||
	    tis(b, i, "switch") || tis(b, i, "{"))
		return 0;
	for (j = i; j < b->nr; j++) {
		if (tis(b, j, "(") || tis(b, j, "[")) {
			j = match(b, j);
			continue;
		}
		if (tis(b, j, "{") || tis(b, j, "}"))
			return 0;
		if (tis(b, j, ";"))
			return j + 1;
	}
	return 0;
}

static int loop_parse(const struct body *b, size_t i, struct loop *l)
{
	size_t close, j, s1 = 0, s2 = 0;

	if (!tis(b, i, "for") || !tis(b, i + 1, "("))
		return -1;
	close = match(b, i + 1);
	if (close >= b->nr)
		return -1;
	for (j = i + 2; j < close; j++) {
		if (tis(b, j, "(") || tis(b, j, "[")) {
			j = match(b, j);
			continue;
		}
		if (tis(b, j, ";")) {
			if (!s1)
				s1 = j;
			else if (!s2)
				s2 = j;
			else
				return -1;
		}
	}
	if (!s1 || !s2)
		return -1;
	memset(l, 0, sizeof(*l));
	l->for_tok = i;
	l->init_b = i + 2;
	l->init_e = s1;
	l->cond_b = s1 + 1;
	l->cond_e = s2;
	l->step_b = s2 + 1;
	l->step_e = close;
	for (j = l->init_b; j < l->init_e; j++)
		if (tis(b, j, "=") && j > l->init_b && b->t[j - 1].kind == SOURCE_TOKEN_IDENT)
			break;
	if (j >= l->init_e)
		return -1;
	l->var = j - 1;
	l->body_b = close + 1;
	if (tis(b, l->body_b, "{")) {
		l->braced = 1;
		l->body_e = match(b, l->body_b) + 1;
		if (l->body_e > b->nr)
			return -1;
	} else {
		l->body_e = statement_end(b, l->body_b);
		if (!l->body_e)
			return -1;
	}
	return 0;
}

static int is_param(const struct body *b, size_t i)
{
	size_t p, n = b->t[i].end - b->t[i].begin;

	for (p = 0; p < b->nr_params; p++)
		if (b->params[p] && strlen(b->params[p]) == n &&
		    !memcmp(b->params[p], b->s + b->t[i].begin, n))
			return 1;
	return 0;
}

static int is_type_word(const struct body *b, size_t i)
{
	static const char *const w[] = {
		"const", "unsigned", "signed", "int", "long", "short", "char", "float", "double",
		"size_t", "ptrdiff_t", "uint64_t", "int64_t", "uint32_t", "int32_t", "uint16_t",
		"int16_t", "uint8_t", "int8_t", "bool", "auto", "static_cast",
	};
	size_t k;

	for (k = 0; k < ARRAY_SIZE(w); k++)
		if (tis(b, i, w[k]))
			return 1;
	return 0;
}

/*
 * Whether tokens [from, to) are the same in every lane of a warp: kernel
 * parameters, literals, blockIdx/blockDim/gridDim members, the variables
 * named in extra (token indexes, may be NULL), type words for casts; no
 * memory access and no call.
 */
static int uniform(const struct body *b, size_t from, size_t to, const size_t *extra, size_t nr_extra)
{
	size_t i, e;

	if (from >= to)
		return 0;
	for (i = from; i < to; i++) {
		if (tis(b, i, "[") || tis(b, i, "->") || tis(b, i, "=") || tis(b, i, "++") ||
		    tis(b, i, "--") || tis(b, i, "&&") || tis(b, i, "||") || tis(b, i, "?") ||
		    tis(b, i, ","))
			return 0;
		if (b->t[i].kind == SOURCE_TOKEN_STRING)
			return 0;
		if (b->t[i].kind != SOURCE_TOKEN_IDENT)
			continue;
		if (tis(b, i + 1, "(") && !is_type_word(b, i))
			return 0;
		if (i > from && tis(b, i - 1, ".")) {
			if (!(tis(b, i, "x") || tis(b, i, "y") || tis(b, i, "z")))
				return 0;
			continue;
		}
		if (tis(b, i, "blockIdx") || tis(b, i, "blockDim") || tis(b, i, "gridDim") ||
		    is_param(b, i) || is_type_word(b, i))
			continue;
		for (e = 0; e < nr_extra; e++)
			if (same_tok(b, i, extra[e]))
				break;
		if (e == nr_extra)
			return 0;
	}
	return 1;
}

/* A token range's text, caller frees. */
static char *range_text(const struct body *b, size_t from, size_t to)
{
	return xstrndup(b->s + b->t[from].begin, b->t[to - 1].end - b->t[from].begin);
}

static char *paren(const struct body *b, size_t from, size_t to)
{
	char *s = range_text(b, from, to);
	char *r;

	if (to - from == 1)
		return s;
	r = xasprintf("(%s)", s);
	free(s);
	return r;
}

/* One read P[index] of the structure. */
struct tap {
	size_t name, open, close;   /* tokens: P, '[', ']' */
	long offset;                /* index = i + offset (literal) */
	int by_j;                   /* index = i + j */
};

/* Reads an index [open+1, close) as i, i + c, c + i, i + j or j + i. */
static int tap_index(const struct body *b, struct tap *tp, size_t var_i, size_t var_j)
{
	size_t f = tp->open + 1, n = tp->close - f;
	size_t other;

	tp->offset = 0;
	tp->by_j = 0;
	if (n == 1)
		return same_tok(b, f, var_i) ? 0 : -1;
	if (n != 3 || !tis(b, f + 1, "+"))
		return -1;
	if (same_tok(b, f, var_i))
		other = f + 2;
	else if (same_tok(b, f + 2, var_i))
		other = f;
	else
		return -1;
	if (var_j < b->nr && same_tok(b, other, var_j)) {
		tp->by_j = 1;
		return 0;
	}
	if (b->t[other].kind == SOURCE_TOKEN_NUMBER) {
		char *txt = range_text(b, other, other + 1), *end;
		long v = strtol(txt, &end, 0);
		int ok = *end == '\0' || !strcmp(end, "u") || !strcmp(end, "U");

		free(txt);
		if (!ok || v < 0 || v > 2 * WINDOW_MAX_K)
			return -1;
		tp->offset = v;
		return 0;
	}
	return -1;
}

/* The leading white space of line n (1-based). */
static char *indent_of(const struct source_file *sf, size_t n)
{
	size_t len, i;
	const char *s = source_file_line(sf, n, &len);

	for (i = 0; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	return xstrndup(s, i);
}

/* A replacement of bytes [b, e) of the file. */
struct edit {
	size_t b, e;
	char *s;
};

struct lines {
	char **v;
	size_t nr, alloc;
};

static void lines_add(struct lines *l, char *s)
{
	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	l->v[l->nr++] = s;
}

/* Line n with the edits that fall in it applied (edits sorted, disjoint). */
static char *edited_line(const struct source_file *sf, size_t n, const struct edit *ed, size_t nr_ed)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len, pos, i;
	const char *s = source_file_line(sf, n, &len);
	size_t off = sf->line_off[n - 1];

	pos = 0;
	for (i = 0; i < nr_ed; i++) {
		if (ed[i].b < off || ed[i].b >= off + len)
			continue;
		strbuf_add(&sb, s + pos, ed[i].b - off - pos);
		strbuf_addstr(&sb, ed[i].s);
		pos = ed[i].e - off;
	}
	strbuf_add(&sb, s + pos, len - pos);
	return strbuf_detach(&sb, NULL);
}

static char *indented(const char *unit, const char *line)
{
	return *line ? xasprintf("%s%s", unit, line) : xstrdup("");
}

static int edit_cmp(const void *x, const void *y)
{
	const struct edit *p = x, *q = y;

	return p->b < q->b ? -1 : p->b > q->b;
}

static void set_paste(struct regcache_rewrite *rw, char *reason, const char *kernel,
		      const char *param, const char *elem, const struct regcache_target *t)
{
	unsigned k = t->k ? t->k : 1;
	const char *p = param ? param : "P";
	char *decl, *load, *last = t->k_exact ? xasprintf("%u", 2 * k) : xstrdup("2k");
	char *span = t->k_exact ? xasprintf("0..%u", 2 * k) :
		     xasprintf("0..2k (k at least %u, known at run time)", k);

	/* A radius known only at run time: the widest window, loaded to the
	 * run-time reach. */
	if (t->k_exact) {
		decl = xasprintf("regcache::window<%s, %u> ca_rc;", elem ? elem : "T", k);
		load = xasprintf("ca_rc.load(%s, (long long)(i - regcache::lane()), (long long)n);", p);
	} else {
		decl = xasprintf("regcache::window<%s, %d> ca_rc;   /* radius known at run time: "
				 "2k <= %d */", elem ? elem : "T", WINDOW_MAX_K, 2 * WINDOW_MAX_K);
		load = xasprintf("ca_rc.load(%s, (long long)(i - regcache::lane()), (long long)n, "
				 "2 * k);", p);
	}
	rw->status = REGCACHE_REWRITE_PASTE;
	rw->reason = reason;
	free(rw->text);
	rw->text = xasprintf(
		"#include \"regcache.cuh\"   /* cacheadvise's device/regcache.cuh */\n"
		"\n"
		"/* In %s, for the reads of %s at offsets %s from each thread's index i.\n"
		" * Every lane of the warp must reach these lines (no early return, loop while\n"
		" * i - regcache::lane() < BOUND) and only the stores are guarded by i < BOUND;\n"
		" * blocks must be a multiple of 32 threads. n: the elements of %s that may be\n"
		" * read (the last index read + 1). */\n"
		"%s\n%s\n"
		"/* then %s[i + c] is ca_rc.read(c), c = 0..%s, called by every lane with the same c */\n",
		kernel, param ? param : "the structure", span, p,
		decl, load, p, last);
	free(last);
	free(span);
	free(decl);
	free(load);
}

struct match {
	struct loop gs;             /* the grid-stride loop */
	struct loop tl;             /* the tap loop (by_j) */
	int has_tl;
	struct tap *taps;
	size_t nr_taps;
	size_t stmt_b, stmt_e;      /* the statement holding the taps (or the tap loop) */
	long reach_lit;             /* highest offset, -1 when run-time (tl's bound) */
	char *reach;                /* its text */
	int inclusive;              /* tl's condition is j <= E */
	size_t bound_b, bound_e;    /* gs's BOUND */
};

/* The reads of the structure on the taps' line, into m->taps. */
static char *find_taps(const struct body *b, size_t line, size_t var_p, struct match *m,
		       size_t *first_tap)
{
	size_t i;

	*first_tap = b->nr;
	for (i = 0; i < b->nr; i++) {
		if (b->t[i].kind != SOURCE_TOKEN_IDENT || !same_tok(b, i, var_p) || !tis(b, i + 1, "["))
			continue;
		if (line_of(b, i) != line)
			continue;
		m->taps = xrealloc(m->taps, (m->nr_taps + 1) * sizeof(*m->taps));
		m->taps[m->nr_taps].name = i;
		m->taps[m->nr_taps].open = i + 1;
		m->taps[m->nr_taps].close = match(b, i + 1);
		if (m->taps[m->nr_taps].close >= b->nr)
			return xstrdup("a read's brackets do not close on its line");
		if (*first_tap == b->nr)
			*first_tap = i;
		m->nr_taps++;
	}
	if (!m->nr_taps)
		return xasprintf("line %zu does not index the parameter with []", line);
	if (m->nr_taps > 2 * WINDOW_MAX_K + 1)
		return xasprintf("line %zu reads the parameter %zu times", line, m->nr_taps);
	for (i = 0; i < m->nr_taps; i++) {
		size_t a = m->taps[i].close + 1;

		if (tis(b, a, "=") || tis(b, a, "+=") || tis(b, a, "-=") || tis(b, a, "*=") ||
		    tis(b, a, "/=") || tis(b, a, "++") || tis(b, a, "--") ||
		    (m->taps[i].name && (tis(b, m->taps[i].name - 1, "++") ||
					 tis(b, m->taps[i].name - 1, "--") ||
					 tis(b, m->taps[i].name - 1, "&"))))
			return xasprintf("line %zu writes to the parameter or takes an address in it",
					 line);
	}
	return NULL;
}

/* The loop around the taps: the tap loop (index i + j) and the
 * grid-stride loop around it, or the grid-stride loop alone. */
static char *find_loops(const struct body *b, size_t line, size_t first_tap, struct match *m)
{
	size_t i, j, nloops = 0;
	struct loop *loops = NULL;
	char *why = NULL;

	for (i = 0; i < b->nr; i++) {
		struct loop l;

		if (tis(b, i, "for") && !loop_parse(b, i, &l)) {
			loops = xrealloc(loops, (nloops + 1) * sizeof(*loops));
			loops[nloops++] = l;
		}
	}
	/* The innermost loop around the taps (loops are in text order, so the
	 * last one that contains them), and the one around it. */
	for (i = nloops; i-- > 0;) {
		size_t gi;

		if (loops[i].body_b > first_tap || loops[i].body_e <= first_tap)
			continue;
		for (gi = i; m->nr_taps == 1 && gi-- > 0;) {
			struct tap probe = m->taps[0];

			if (loops[gi].body_b > loops[i].for_tok || loops[gi].body_e <= loops[i].for_tok)
				continue;
			if (!tap_index(b, &probe, loops[gi].var, loops[i].var) && probe.by_j) {
				m->has_tl = 1;
				m->tl = loops[i];
				m->gs = loops[gi];
				m->taps[0] = probe;
			}
			break;
		}
		if (!m->has_tl) {
			m->gs = loops[i];
			for (j = 0; j < m->nr_taps; j++)
				if (tap_index(b, &m->taps[j], m->gs.var, b->nr)) {
					why = xasprintf("line %zu: an index is not i + constant or i + j "
							"(i: the thread's loop variable, j: the tap loop's)",
							line);
					goto out;
				}
		}
		break;
	}
	if (i == (size_t)-1)
		why = xstrdup("the reads are not in a for loop over the thread's index");
out:
	free(loops);
	return why;
}

/* The grid-stride loop: i = ... threadIdx.x ...; i < BOUND; i += STEP,
 * a statement of the kernel's body, which every lane reaches. */
static char *check_grid_stride(const struct body *b, struct match *m)
{
	size_t j;
	const struct loop *g = &m->gs;
	int tid = 0;

	for (j = g->init_b; j < g->init_e; j++)
		if (tis(b, j, "threadIdx") && tis(b, j + 1, ".") && tis(b, j + 2, "x"))
			tid = 1;
	if (!tid)
		return xstrdup("the loop's variable does not start from threadIdx.x");
	if (!g->braced)
		return xstrdup("the loop's body has no braces");
	if (g->cond_e - g->cond_b < 3 || !same_tok(b, g->cond_b, g->var) ||
	    !tis(b, g->cond_b + 1, "<") ||
	    !uniform(b, g->cond_b + 2, g->cond_e, NULL, 0))
		return xstrdup("the loop's condition is not `i < BOUND` with BOUND the same in "
			       "every thread");
	m->bound_b = g->cond_b + 2;
	m->bound_e = g->cond_e;
	if (g->step_e - g->step_b < 3 || !same_tok(b, g->step_b, g->var) ||
	    !tis(b, g->step_b + 1, "+=") || !uniform(b, g->step_b + 2, g->step_e, NULL, 0))
		return xstrdup("the loop's step is not `i += STRIDE` with STRIDE the same in "
			       "every thread");
	for (j = g->body_b; j < g->body_e; j++)
		if (tis(b, j, "return") || tis(b, j, "break") || tis(b, j, "continue") ||
		    tis(b, j, "goto") || tis(b, j, "__syncthreads") || tis(b, j, "__syncwarp"))
			return xasprintf("the loop's body has `%.*s`, which the warp's lanes would "
					 "not all reach", (int)(b->t[j].end - b->t[j].begin),
					 b->s + b->t[j].begin);
	{
		int depth = 0;

		for (j = 0; j < g->for_tok; j++)
			depth += tis(b, j, "{") - tis(b, j, "}");
		if (depth != 1 || !g->for_tok ||
		    !(tis(b, g->for_tok - 1, ";") || tis(b, g->for_tok - 1, "{") ||
		      tis(b, g->for_tok - 1, "}")))
			return xstrdup("the loop is not a statement of the kernel's body itself "
				       "(it sits in a block or under a condition)");
	}
	for (j = 0; j < g->for_tok; j++)
		if (tis(b, j, "return"))
			return xstrdup("the kernel may return before the loop: the warp's lanes "
				       "would not all reach it");
	return NULL;
}

/* The tap loop: for (j = 0; j <= R; j++) acc += P[i + j]; with R the same
 * in every lane and nothing else in its statement that idle lanes must not do. */
static char *check_tap_loop(const struct body *b, struct match *m)
{
	size_t j;
	const struct loop *l = &m->tl;
	size_t e = l->cond_e, sb, se;

	if (!tis(b, l->init_e - 1, "0") || !tis(b, l->init_e - 2, "="))
		return xstrdup("the tap loop does not start at 0");
	if (!same_tok(b, l->cond_b, l->var) ||
	    !(tis(b, l->cond_b + 1, "<=") || tis(b, l->cond_b + 1, "<")) ||
	    !uniform(b, l->cond_b + 2, e, NULL, 0))
		return xstrdup("the tap loop's condition is not `j <= R` or `j < R` with R the "
			       "same in every thread");
	m->inclusive = tis(b, l->cond_b + 1, "<=");
	if (!((l->step_e - l->step_b == 2 && ((same_tok(b, l->step_b, l->var) &&
					       tis(b, l->step_b + 1, "++")) ||
					      (tis(b, l->step_b, "++") &&
					       same_tok(b, l->step_b + 1, l->var)))) ||
	      (l->step_e - l->step_b == 3 && same_tok(b, l->step_b, l->var) &&
	       tis(b, l->step_b + 1, "+=") && tis(b, l->step_b + 2, "1"))))
		return xstrdup("the tap loop's step is not j++");
	if (e - (l->cond_b + 2) == 1 && b->t[l->cond_b + 2].kind == SOURCE_TOKEN_NUMBER) {
		char *txt = range_text(b, l->cond_b + 2, e);

		m->reach_lit = strtol(txt, NULL, 0) - !m->inclusive;
		free(txt);
		if (m->reach_lit < 0 || m->reach_lit > 2 * WINDOW_MAX_K)
			return xasprintf("the tap loop reads %ld elements; the window holds 32 + %d",
					 m->reach_lit + 1, 2 * WINDOW_MAX_K);
	}
	{
		char *r = paren(b, l->cond_b + 2, e);

		m->reach = m->inclusive ? r : xasprintf("%s - 1", r);
		if (!m->inclusive)
			free(r);
	}
	/* Its body: one statement `acc op= EXPR;` on the taps' line. */
	sb = l->body_b + (l->braced ? 1 : 0);
	se = l->braced ? l->body_e - 1 : l->body_e;
	if (statement_end(b, sb) != se)
		return xstrdup("the tap loop's body is not one statement");
	m->stmt_b = l->for_tok;
	m->stmt_e = l->body_e;
	if (b->t[sb].kind != SOURCE_TOKEN_IDENT ||
	    !(tis(b, sb + 1, "+=") || tis(b, sb + 1, "-=") || tis(b, sb + 1, "*=") ||
	      tis(b, sb + 1, "=")))
		return xstrdup("the tap loop's statement is not `acc += ...`");
	for (j = sb + 2; j + 1 < se; j++) {
		if (j == m->taps[0].name) {
			j = m->taps[0].close;
			continue;
		}
		if (tis(b, j, "[")) {
			size_t c = match(b, j);
			size_t extra[1] = { l->var };

			if (!uniform(b, j + 1, c, extra, 1))
				return xstrdup("the tap loop's statement reads other memory at an "
					       "index that differs between threads");
			j = c;
			continue;
		}
		if (tis(b, j, "=") || tis(b, j, "++") || tis(b, j, "--") || tis(b, j, "->") ||
		    tis(b, j, "+=") || tis(b, j, "-=") ||
		    (b->t[j].kind == SOURCE_TOKEN_IDENT && tis(b, j + 1, "(") &&
		     !is_type_word(b, j)))
			return xstrdup("the tap loop's statement does more than add up reads");
	}
	return NULL;
}

/* Reads P[i], P[i + 1], ... in one simple statement. */
static char *check_explicit_taps(const struct body *b, size_t first_tap, struct match *m)
{
	size_t j;
	long lo = 1L << 30, hi = -1;

	for (j = 0; j < m->nr_taps; j++) {
		if (m->taps[j].offset < lo)
			lo = m->taps[j].offset;
		if (m->taps[j].offset > hi)
			hi = m->taps[j].offset;
	}
	if (lo != 0)
		return xstrdup("the lowest read is not at the thread's own index");
	m->reach_lit = hi;
	m->reach = xasprintf("%ld", hi);
	/* The statement holding the taps, from its first token. */
	for (j = first_tap; j > m->gs.body_b + 1; j--)
		if (tis(b, j - 1, ";") || tis(b, j - 1, "{") || tis(b, j - 1, "}"))
			break;
	m->stmt_b = j;
	m->stmt_e = statement_end(b, j);
	if (!m->stmt_e)
		return xstrdup("the reads are not in a simple statement");
	return NULL;
}

/* What the idle lanes run before the guard (declarations without memory
 * accesses or calls), and lines the rewrite can edit whole. */
static char *check_rest(const struct body *b, const struct match *m)
{
	size_t j;

	for (j = m->gs.body_b + 1; j < m->stmt_b; j++)
		if (tis(b, j, "[") || tis(b, j, "->") || tis(b, j, "++") || tis(b, j, "--") ||
		    tis(b, j, "{") || tis(b, j, "if") || tis(b, j, "for") || tis(b, j, "while") ||
		    (tis(b, j, "*") && (j == m->gs.body_b + 1 || tis(b, j - 1, ";"))) ||
		    (b->t[j].kind == SOURCE_TOKEN_IDENT && tis(b, j + 1, "(") && !is_type_word(b, j)))
			return xstrdup("the loop's statements before the taps access memory or call "
				       "functions, which the idle lanes of the last warp would do too");
	/* Lines: the loop starts its line, its '{' ends one, its '}' is alone. */
	{
		size_t close = m->gs.body_e - 1;

		if (m->gs.for_tok && line_of(b, m->gs.for_tok - 1) == line_of(b, m->gs.for_tok))
			return xstrdup("the loop does not start its line");
		if (line_of(b, m->gs.body_b + 1) == line_of(b, m->gs.body_b) ||
		    line_of(b, close - 1) == line_of(b, close) ||
		    (close + 1 < b->nr && line_of(b, close + 1) == line_of(b, close)))
			return xstrdup("the loop's braces share their lines with statements");
		if (line_of(b, m->stmt_b) == line_of(b, m->stmt_b - 1) ||
		    line_of(b, m->stmt_e - 1) == line_of(b, m->stmt_e))
			return xstrdup("the taps' statement shares its lines with other statements");
	}
	return NULL;
}

/* Checks the shape; returns NULL, or the reason it is not certain (caller frees). */
static char *match_shape(const struct body *b, size_t line, size_t var_p, struct match *m)
{
	size_t first_tap;
	char *why;

	memset(m, 0, sizeof(*m));
	m->reach_lit = -1;
	if ((why = find_taps(b, line, var_p, m, &first_tap)) ||
	    (why = find_loops(b, line, first_tap, m)) || (why = check_grid_stride(b, m)) ||
	    (why = m->has_tl ? check_tap_loop(b, m) : check_explicit_taps(b, first_tap, m)))
		return why;
	return check_rest(b, m);
}

void regcache_rewrite_find(struct regcache_rewrite *rw, const struct source_file *sf,
			   const struct regcache_target *t)
{
	struct source_kernel sk;
	struct body b = { 0 };
	struct match m;
	struct edit ed[40];
	size_t nr_ed = 0, line = 0, i, var_p = 0, gs_first, gs_last, brace_line, guard_first,
	       guard_last;
	char *elem = NULL, *why = NULL, *ind = NULL, *inner = NULL, *unit = NULL, *var = NULL,
	     *bound = NULL, *bound_p = NULL;
	const char *param = NULL;
	struct lines out = { 0 };
	struct strbuf sb = STRBUF_INIT;
	unsigned K;
	int found;

	memset(rw, 0, sizeof(*rw));
	memset(&m, 0, sizeof(m));
	found = source_file_find_kernel(sf, t->kernel, &sk);
	if (found != 1) {
		set_paste(rw, xasprintf(found ? "%s has several definitions in the file"
					: "no definition of %s in the file", t->kernel),
			  t->kernel, NULL, NULL, t);
		return;
	}
	if (t->param < 0 || (size_t)t->param >= sk.nr_params || !sk.params[t->param]) {
		why = xstrdup("the structure's parameter is not known");
		goto paste;
	}
	param = sk.params[t->param];
	elem = source_pointee_type(sk.param_types[t->param]);
	for (i = 0; i < t->nr_lines; i++) {
		if (line && t->lines[i] != line) {
			why = xstrdup("the loads come from more than one source line");
			goto paste;
		}
		line = t->lines[i];
	}
	if (!line) {
		why = xstrdup("the loads have no source line");
		goto paste;
	}
	if (!elem) {
		why = xasprintf("the element type of %s cannot be read from its declaration", param);
		goto paste;
	}
	b.sf = sf;
	b.s = sf->text;
	b.params = sk.params;
	b.nr_params = sk.nr_params;
	{
		size_t from = sf->line_off[sk.body_first_line - 1], to = sf->line_off[sk.body_last_line];

		b.nr = source_tokenize(sf->text + from, to - from, sf->in_comment[sk.body_first_line - 1],
				       &b.t);
		for (i = 0; i < b.nr; i++) {
			b.t[i].begin += from;
			b.t[i].end += from;
		}
	}
	for (i = 0; i < b.nr; i++)
		if (b.t[i].kind == SOURCE_TOKEN_IDENT && source_token_is(b.s, &b.t[i], param))
			break;
	if (i == b.nr) {
		why = xasprintf("the kernel's body does not name %s", param);
		goto paste;
	}
	var_p = i;
	why = match_shape(&b, line, var_p, &m);
	if (why)
		goto paste;

	/* The rewrite. */
	gs_first = line_of(&b, m.gs.for_tok);
	gs_last = line_of(&b, m.gs.body_e - 1);
	brace_line = line_of(&b, m.gs.body_b);
	ind = indent_of(sf, gs_first);
	inner = indent_of(sf, line_of(&b, m.gs.body_b + 1));
	unit = strlen(inner) > strlen(ind) && !strncmp(inner, ind, strlen(ind)) ?
	       xstrdup(inner + strlen(ind)) : xstrdup("\t");
	var = range_text(&b, m.gs.var, m.gs.var + 1);
	bound = range_text(&b, m.bound_b, m.bound_e);
	bound_p = paren(&b, m.bound_b, m.bound_e);
	K = m.reach_lit >= 0 ? (unsigned)(m.reach_lit + 1) / 2 : WINDOW_MAX_K;
	if (!K)
		K = 1;
	ed[nr_ed++] = (struct edit){ b.t[m.gs.cond_b].begin, b.t[m.gs.cond_b].end,
				     xasprintf("%s - regcache::lane()", var) };
	for (i = 0; i < m.nr_taps && nr_ed < ARRAY_SIZE(ed); i++) {
		char *jv = m.has_tl ? range_text(&b, m.tl.var, m.tl.var + 1) : NULL;

		ed[nr_ed++] = (struct edit){ b.t[m.taps[i].name].begin, b.t[m.taps[i].close].end,
					     m.has_tl ? xasprintf("ca_rc.read(%s)", jv) :
					     xasprintf("ca_rc_%ld", m.taps[i].offset) };
		free(jv);
	}
	qsort(ed, nr_ed, sizeof(*ed), edit_cmp);
	if (m.has_tl) {
		guard_first = line_of(&b, m.stmt_e - 1) + 1;
	} else {
		guard_first = line_of(&b, m.stmt_b);
	}
	guard_last = gs_last - 1;
	for (i = gs_first; i <= gs_last; i++) {
		if (i == guard_first && guard_first <= guard_last) {
			if (!m.has_tl) {
				long c;

				for (c = 0; c <= m.reach_lit; c++) {
					size_t q;

					for (q = 0; q < m.nr_taps; q++)
						if (m.taps[q].offset == c)
							break;
					if (q < m.nr_taps)
						lines_add(&out, xasprintf("%sconst %s ca_rc_%ld = "
									  "ca_rc.read(%ld);", inner,
									  elem, c, c));
				}
			}
			lines_add(&out, xasprintf("%sif (%s < %s) {", inner, var, bound));
		}
		if (i == gs_last && guard_first <= guard_last)
			lines_add(&out, xasprintf("%s}", inner));
		{
			char *l = edited_line(sf, i, ed, nr_ed);

			if (i >= guard_first && i <= guard_last) {
				lines_add(&out, indented(unit, l));
				free(l);
			} else {
				lines_add(&out, l);
			}
		}
		if (i == brace_line) {
			lines_add(&out, xasprintf("%s/* cacheadvise: the warp's elements of %s in "
						  "registers (regcache.cuh); every", inner, param));
			lines_add(&out, xasprintf("%s * lane runs the loop while any lane of its "
						  "warp has work, and only", inner));
			lines_add(&out, xasprintf("%s * %s < %s stores. Blocks must be a multiple of "
						  "32 threads. */", inner, var, bound));
			lines_add(&out, xasprintf("%sregcache::window<%s, %u> ca_rc;", inner, elem, K));
			if (m.reach_lit >= 0)
				lines_add(&out, xasprintf("%sca_rc.load(%s, (long long)(%s - "
							  "regcache::lane()), (long long)%s + %ld);",
							  inner, param, var, bound_p, m.reach_lit));
			else
				lines_add(&out, xasprintf("%sca_rc.load(%s, (long long)(%s - "
							  "regcache::lane()), (long long)%s + %s, %s);",
							  inner, param, var, bound_p, m.reach, m.reach));
		}
	}
	rw->first_line = gs_first;
	rw->last_line = gs_last;
	if (m.reach_lit < 0) {
		/* A run-time radius: the original loop for the radii the window cannot hold. */
		struct lines w = { 0 };

		lines_add(&w, xasprintf("%sif (%s <= %d) {   /* cacheadvise: regcache::window<%s, %d> "
					"reads up to %d ahead */", ind, m.reach, 2 * WINDOW_MAX_K,
					elem, WINDOW_MAX_K, 2 * WINDOW_MAX_K));
		for (i = 0; i < out.nr; i++) {
			lines_add(&w, indented(unit, out.v[i]));
			free(out.v[i]);
		}
		lines_add(&w, xasprintf("%s} else {", ind));
		for (i = gs_first; i <= gs_last; i++) {
			size_t len;
			const char *s = source_file_line(sf, i, &len);
			char *l = xstrndup(s, len);

			lines_add(&w, indented(unit, l));
			free(l);
		}
		lines_add(&w, xasprintf("%s}", ind));
		free(out.v);
		out = w;
	}
	for (i = 0; i < out.nr; i++) {
		strbuf_addstr(&sb, out.v[i]);
		strbuf_addch(&sb, '\n');
	}
	rw->status = REGCACHE_REWRITE_PATCHED;
	rw->text = strbuf_detach(&sb, NULL);
	rw->new_lines = out.v;
	rw->nr_new_lines = out.nr;
	goto done;
paste:
	set_paste(rw, why, t->kernel, param, elem, t);
	why = NULL;
done:
	for (i = 0; i < nr_ed; i++)
		free(ed[i].s);
	free(m.taps);
	free(m.reach);
	free(b.t);
	free(why);
	free(elem);
	free(ind);
	free(inner);
	free(unit);
	free(var);
	free(bound);
	free(bound_p);
	source_kernel_release(&sk);
}

void regcache_rewrite_paste(struct regcache_rewrite *rw, const struct regcache_target *t,
			    const char *reason)
{
	memset(rw, 0, sizeof(*rw));
	set_paste(rw, xstrdup(reason), t->kernel, NULL, NULL, t);
}

void regcache_rewrite_release(struct regcache_rewrite *rw)
{
	size_t i;

	free(rw->reason);
	free(rw->text);
	for (i = 0; i < rw->nr_new_lines; i++)
		free(rw->new_lines[i]);
	free(rw->new_lines);
	memset(rw, 0, sizeof(*rw));
}
