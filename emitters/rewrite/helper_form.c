/*
 * A helper given its form as a template parameter (helper_form.h): the
 * checks that keep it right for every use, the helper's template line,
 * its load line's dispatch and each call site's explicit form.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/helper_form.h"
#include "emitters/rewrite/source_hints.h"
#include "emitters/rewrite/source_locate.h"
#include "emitters/rewrite/source_rewrite.h"

#define FORM_PARAM "CA_FORM"
#define FORM_DEFAULT "CA_FORM_AS_BUILT"

/* The L1 forms in the order of source_form_code's codes ("", na, el, ef). */
static const enum load_action l1_forms[] = {
	LOAD_ACTION_AS_BUILT, LOAD_ACTION_NO_ALLOCATE, LOAD_ACTION_EVICT_LAST,
	LOAD_ACTION_EVICT_FIRST,
};
#define NR_L1 (sizeof(l1_forms) / sizeof(l1_forms[0]))

static char *form_macro(enum load_action a, enum l2_priority p)
{
	const char *code = source_form_code(a, p);
	char *name, *s;

	if (!code)
		return NULL;
	name = xasprintf("CA_FORM_%s", code);
	for (s = name; *s; s++)
		*s = (char)toupper((unsigned char)*s);
	return name;
}

char *helper_form_name(const char *form)
{
	enum load_action a;
	enum l2_priority p;

	if (!form || load_form_parse(form, &a, &p))
		return NULL;
	return form_macro(a, p);
}

int helper_form_macros_write(struct strbuf *out, const char *existing_text)
{
	size_t a, p;

	if (existing_text && strstr(existing_text, "#define " FORM_DEFAULT " "))
		return 0;
	strbuf_addstr(out, "/* cacheadvise: the forms a helper's " FORM_PARAM " template parameter "
			   "takes (" FORM_DEFAULT ":\n * the load as written). */\n"
			   "#ifndef " FORM_DEFAULT "\n#define " FORM_DEFAULT " 0\n");
	for (a = 0; a < NR_L1; a++)
		for (p = 0; p < L2_PRIORITY__COUNT; p++) {
			char *m = form_macro(l1_forms[a], (enum l2_priority)p);

			if (m)
				strbuf_addf(out, "#define %s %zu\n", m, a * L2_PRIORITY__COUNT + p);
			free(m);
		}
	strbuf_addstr(out, "#endif\n");
	return 1;
}

/* Whether o is a use of c's helper (the same definition, inlined). */
static int same_helper(const struct rewrite_cand *c, const struct rewrite_cand *o)
{
	return o->inl && o->l->hint.source_index == c->l->hint.source_index &&
	       o->fn.decl_line == c->fn.decl_line && o->l->hint.inlined_in &&
	       !strcmp(o->l->hint.inlined_in, c->l->hint.inlined_in);
}

/* The form a use's call site passes: its plan form when rewritten, NULL: as built. */
static const char *use_form(const struct rewrite_cand *o)
{
	return o->l->hint.status == SOURCE_HINT_REWRITTEN && o->helper ? o->l->patch_action : NULL;
}

static int same_form(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int same_call(const struct rewrite_cand *a, const struct rewrite_cand *b)
{
	return a->direct_source == b->direct_source && a->at[0].line == b->at[0].line &&
	       a->at[0].column == b->at[0].column;
}

/*
 * Every use is one call deep, in a file of the source tree, and the loads
 * of one call (file, line, column) want one form: the call passes one.
 * Returns 1, or 0 with *why (NULL: the caller names it as before).
 */
static int check_uses(struct rewrite_resolver *r, const struct rewrite_cand *cands, size_t n,
		      const struct rewrite_cand *c, char **why)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct rewrite_cand *o = &cands[i];

		if (!same_helper(c, o))
			continue;
		if (o->nr_at != 1 || o->direct_source < 0 ||
		    !r->in->sources[o->direct_source].file ||
		    !r->in->sources[o->direct_source].under_root)
			return 0;
		for (j = 0; j < i; j++)
			if (same_helper(c, &cands[j]) && same_call(o, &cands[j]) &&
			    !same_form(use_form(o), use_form(&cands[j]))) {
				*why = xasprintf("the loads of the call at %s:%d want different forms "
						 "(or the line calls '%s' twice and the PTX's column does "
						 "not tell the calls apart)",
						 r->in->sources[o->direct_source].path, o->at[0].line,
						 c->l->hint.inlined_in);
				return 0;
			}
	}
	return 1;
}

/* Whether a template header line declares a parameter pack ("..."). */
static int has_pack(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i + 2 < len; i++)
		if (!memcmp(text + i, "...", 3))
			return 1;
	return 0;
}

/*
 * The helper's template line with the form parameter appended
 * ("template <typename T, int CA_FORM = CA_FORM_AS_BUILT>"), or a plain
 * function's first line made a template; NULL with *why.
 */
static char *template_line(const struct source_file *sf, const struct rewrite_cand *c, char **why)
{
	size_t len, nr, close;
	const char *text = source_file_line(sf, c->fn.start_line, &len);
	struct source_token *t = NULL;
	char *out = NULL;

	nr = text ? source_tokenize(text, len, sf->in_comment[c->fn.start_line - 1], &t) : 0;
	if (nr && source_token_is(text, &t[0], "template")) {
		close = nr > 1 && source_token_is(text, &t[1], "<") ?
			source_token_close(text, t, nr, 1) : nr;
		if (close >= nr || close == 2 || has_pack(text, len))
			*why = xasprintf("the template header of helper '%s' (line %zu) is not one "
					 "line of named parameters", c->l->hint.inlined_in,
					 c->fn.start_line);
		else
			out = xasprintf("%.*s, int " FORM_PARAM " = " FORM_DEFAULT "%.*s",
					(int)t[close].begin, text, (int)(len - t[close].begin),
					text + t[close].begin);
	} else if (nr && !c->fn.nr_template_params) {
		/* NEEDSWORK: a declaration of the helper elsewhere would declare
		 * another function; the matcher does not look for one. */
		out = xasprintf("/* cacheadvise: a template rather than an overload, so that every "
				"call as written still\n * compiles and keeps the load as built (the "
				"default form). */\ntemplate <int " FORM_PARAM " = " FORM_DEFAULT ">\n"
				"%.*s", (int)len, text);
	} else {
		*why = xasprintf("cannot find the template header of helper '%s' on line %zu",
				 c->l->hint.inlined_in, c->fn.start_line);
	}
	free(t);
	return out;
}

/* Whether the line is one whole statement that an if-else can wrap: a
 * return or an assignment, brackets balanced, one ';' at its end. */
static int one_statement(const char *text, size_t len, int in_comment)
{
	struct source_token *t = NULL;
	size_t nr = source_tokenize(text, len, in_comment, &t), i;
	int depth = 0, ok = nr >= 3 && source_token_is(text, &t[nr - 1], ";");
	static const char *const assign[] = { "=", "+=", "-=", "*=", "/=", "|=", "&=", "^=", NULL };

	if (ok && !source_token_is(text, &t[0], "return")) {
		ok = t[0].kind == SOURCE_TOKEN_IDENT;
		for (i = 0; ok && assign[i] && !source_token_is(text, &t[1], assign[i]); i++)
			;
		ok = ok && assign[i];
	}
	for (i = 0; ok && i < nr; i++) {
		if (source_token_is(text, &t[i], "(") || source_token_is(text, &t[i], "["))
			depth++;
		else if (source_token_is(text, &t[i], ")") || source_token_is(text, &t[i], "]"))
			ok = --depth >= 0;
		else if (source_token_is(text, &t[i], "{") || source_token_is(text, &t[i], "}") ||
			 (source_token_is(text, &t[i], ";") && i + 1 < nr))
			ok = 0;
	}
	free(t);
	return ok && !depth;
}

/*
 * The helper line of use u, dispatching on the form: "if constexpr
 * (CA_FORM == CA_FORM_L2EF) return ca_ld_l2ef_ro(&p[i]); else return
 * p[i];", one branch per form its uses want, the line as written last.
 * Sets each use's hint.helper to its branch's. NULL with *why.
 */
static char *dispatch_line(const struct source_file *sf, struct rewrite_cand *cands, size_t n,
			   const struct rewrite_cand *u, char **why)
{
	size_t len, ind = 0, i, j;
	const char *text = source_file_line(sf, (size_t)u->l->line, &len);
	struct strbuf sb = STRBUF_INIT;

	if (!text || !one_statement(text, len, sf->in_comment[u->l->line - 1])) {
		*why = xasprintf("line %d of helper '%s' is not one return or assignment an "
				 "if constexpr can choose between", u->l->line, u->l->hint.inlined_in);
		return NULL;
	}
	while (ind < len && (text[ind] == ' ' || text[ind] == '\t'))
		ind++;
	strbuf_add(&sb, text, ind);
	for (i = 0; i < n; i++) {
		const struct rewrite_cand *o = &cands[i];
		const struct source_rewrite *rw = &u->rw;
		char *macro, *line;

		if (!same_helper(u, o) || o->l->line != u->l->line || !use_form(o))
			continue;
		for (j = 0; j < i; j++)
			if (same_helper(u, &cands[j]) && cands[j].l->line == u->l->line &&
			    same_form(use_form(&cands[j]), use_form(o)))
				break;
		if (j < i)
			continue;   /* this form's branch is written */
		macro = helper_form_name(o->l->patch_action);
		line = macro ? source_rewrite_apply(text, len, &rw, &o->helper, 1) : NULL;
		if (line)
			strbuf_addf(&sb, "if constexpr (" FORM_PARAM " == %s) %s else ", macro,
				    line + ind);
		free(macro);
		if (!line) {
			*why = xasprintf("cannot write form %s on line %d", o->l->patch_action,
					 u->l->line);
			strbuf_release(&sb);
			return NULL;
		}
		free(line);
	}
	strbuf_add(&sb, text + ind, len - ind);
	return strbuf_detach(&sb, NULL);
}

/* The C++ type a helper template's one type parameter is, read from the
 * PTX load, where one type reads so; NULL otherwise (static). */
static const char *ptx_type(const struct rewrite_cand *o)
{
	struct source_ld_type t;

	if (source_ld_type_parse(o->l->instruction, &t) || t.vector != 1 || t.kind != 'f')
		return NULL;
	return t.bits == 32 ? "float" : t.bits == 64 ? "double" : NULL;
}

/*
 * The C++ type a helper template's one type parameter T takes at the call
 * t[i] (no explicit arguments), from the call's argument for the helper's
 * `T *` parameter when that argument is a parameter of the calling kernel
 * (caller) declared a pointer to a type the load reads as: `load_at(keys,
 * i)` in a kernel taking `const uint4 *keys` is load_at<uint4>. NULL
 * otherwise; owned.
 */
static char *arg_type(const char *text, const struct source_token *t, size_t nr, size_t i,
		      const struct rewrite_cand *o, const struct source_kernel *caller)
{
	const struct source_kernel *fn = &o->fn;
	struct source_ld_type lt;
	size_t pi, k, arg = 0, depth = 0, first = i + 2;
	char *type = NULL;

	if (!caller || fn->nr_template_params != 1 || !fn->template_param_is_type[0] ||
	    source_ld_type_parse(o->l->instruction, &lt))
		return NULL;
	for (pi = 0; pi < fn->nr_params; pi++) {
		char *p = fn->param_types[pi] ? source_pointee_type(fn->param_types[pi]) : NULL;
		int is_t = p && !strcmp(p, fn->template_params[0]);

		free(p);
		if (is_t)
			break;
	}
	if (pi == fn->nr_params)
		return NULL;
	for (k = i + 2; k < nr; k++) {
		int open = source_token_is(text, &t[k], "(") || source_token_is(text, &t[k], "[");
		int close = source_token_is(text, &t[k], ")") || source_token_is(text, &t[k], "]");

		if (!depth && (close || source_token_is(text, &t[k], ","))) {
			if (arg == pi) {
				size_t j;

				/* the argument: one name, a parameter of the kernel */
				if (k != first + 1 || t[first].kind != SOURCE_TOKEN_IDENT)
					return NULL;
				for (j = 0; j < caller->nr_params; j++)
					if (caller->params[j] && caller->param_types[j] &&
					    strlen(caller->params[j]) == t[first].end - t[first].begin &&
					    !strncmp(caller->params[j], text + t[first].begin,
						     t[first].end - t[first].begin))
						type = source_pointee_type(caller->param_types[j]);
				if (type && source_type_matches(type, &lt) != 1) {
					free(type);
					type = NULL;
				}
				return type;
			}
			if (close)
				return NULL;
			arg++;
			first = k + 1;
			continue;
		}
		depth += open;
		depth -= close && depth;
	}
	return NULL;
}

/* Explicit template arguments between t[open] and t[close]: how many. */
static size_t nr_args(const char *text, const struct source_token *t, size_t open, size_t close)
{
	size_t i, n = close > open + 1, depth = 0;

	for (i = open + 1; i < close; i++) {
		if (source_token_is(text, &t[i], "(") || source_token_is(text, &t[i], "<") ||
		    source_token_is(text, &t[i], "["))
			depth++;
		else if (source_token_is(text, &t[i], ")") || source_token_is(text, &t[i], ">") ||
			 source_token_is(text, &t[i], "]"))
			depth--;
		else if (!depth && source_token_is(text, &t[i], ","))
			n++;
	}
	return n;
}

/*
 * Call token t[i] of the helper passing form macro: appends the text from
 * *from to the insertion and the insertion to sb. Returns 0, or -1 with
 * *why.
 */
static int pass_form(struct strbuf *sb, const char *text, const struct source_token *t, size_t nr,
		     size_t i, size_t *from, const struct rewrite_cand *o, const char *macro,
		     const struct source_kernel *caller, char **why)
{
	const struct source_kernel *fn = &o->fn;
	const char *type;
	char *deduced = NULL;

	if (source_token_is(text, &t[i + 1], "<")) {
		size_t close = source_token_close(text, t, nr, i + 1);

		if (close >= nr || nr_args(text, t, i + 1, close) != fn->nr_template_params) {
			*why = xasprintf("the call at line %d names other template arguments than "
					 "'%s' has", o->at[0].line, o->l->hint.inlined_in);
			return -1;
		}
		strbuf_addf(sb, "%.*s, %s", (int)(t[close].begin - *from), text + *from, macro);
		*from = t[close].begin;
		return 0;
	}
	type = fn->nr_template_params == 1 && fn->template_param_is_type[0] ? ptx_type(o) : NULL;
	if (fn->nr_template_params && !type)
		type = deduced = arg_type(text, t, nr, i, o, caller);
	if (fn->nr_template_params && !type) {
		*why = xasprintf("cannot tell the template arguments of the call of '%s' at line %d "
				 "from its load (.%s) or its argument: pass them and %s by hand",
				 o->l->hint.inlined_in, o->at[0].line,
				 strrchr(o->l->instruction, '.') + 1, macro);
		return -1;
	}
	strbuf_addf(sb, "%.*s<%s%s%s>", (int)(t[i].end - *from), text + *from, type ? type : "",
		    type ? ", " : "", macro);
	*from = t[i].end;
	free(deduced);
	return 0;
}

/* Whether t[i] calls name: "name(" or "name<", not a member's. */
static int is_call(const char *text, const struct source_token *t, size_t nr, size_t i,
		   const char *name)
{
	return i + 1 < nr && t[i].kind == SOURCE_TOKEN_IDENT && source_token_is(text, &t[i], name) &&
	       (source_token_is(text, &t[i + 1], "(") || source_token_is(text, &t[i + 1], "<")) &&
	       !(i && (source_token_is(text, &t[i - 1], ".") || source_token_is(text, &t[i - 1], "->")));
}

/*
 * The call line of use u with every advised call of the helper on it
 * passing its form: the one call of the line, or, where the line calls it
 * more than once, the call at the PTX's column. NULL with *why.
 */
static char *call_line(const struct source_file *sf, const struct rewrite_cand *cands, size_t n,
		       const struct rewrite_cand *u, const struct source_kernel *caller, char **why)
{
	size_t len, nr, i, j, calls = 0, from = 0;
	const char *text = source_file_line(sf, (size_t)u->at[0].line, &len);
	const char *name = u->l->hint.inlined_in;
	struct source_token *t = NULL;
	struct strbuf sb = STRBUF_INIT;

	nr = text ? source_tokenize(text, len, sf->in_comment[u->at[0].line - 1], &t) : 0;
	for (i = 0; i < nr; i++)
		calls += is_call(text, t, nr, i, name);
	for (i = 0; i < nr && !*why; i++) {
		const struct rewrite_cand *o = NULL;
		char *macro;

		if (!is_call(text, t, nr, i, name))
			continue;
		for (j = 0; j < n && !o; j++)
			if (same_helper(u, &cands[j]) && use_form(&cands[j]) &&
			    cands[j].direct_source == u->direct_source &&
			    cands[j].at[0].line == u->at[0].line &&
			    (calls == 1 || (size_t)cands[j].at[0].column == t[i].begin + 1))
				o = &cands[j];
		if (!o)
			continue;
		macro = helper_form_name(o->l->patch_action);
		pass_form(&sb, text, t, nr, i, &from, o, macro, caller, why);
		free(macro);
	}
	if (!*why && !from)
		*why = xasprintf("line %d calls '%s' %s", u->at[0].line, name, calls ?
				 "more than once and the PTX's column does not tell which call is "
				 "the advised one" : "nowhere the matcher can see");
	free(t);
	if (*why) {
		strbuf_release(&sb);
		return NULL;
	}
	strbuf_add(&sb, text + from, len - from);
	return strbuf_detach(&sb, NULL);
}

static void add_edit(struct source_hint *h, long source_index, size_t line, const char *text)
{
	h->edits = xrealloc(h->edits, (h->nr_edits + 1) * sizeof(*h->edits));
	h->edits[h->nr_edits].source_index = source_index;
	h->edits[h->nr_edits].line = line;
	h->edits[h->nr_edits++].text = xstrdup(text);
}

/* A line another rewrite of cands changes (its own load's line). */
static int line_taken(const struct rewrite_cand *cands, size_t n, const struct rewrite_cand *c,
		      long source_index, size_t line)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!same_helper(c, &cands[i]) &&
		    cands[i].l->hint.status == SOURCE_HINT_REWRITTEN &&
		    cands[i].l->hint.source_index == source_index &&
		    source_hint_patch_line(&cands[i].l->hint, cands[i].l->line) == line)
			return 1;
	return 0;
}

/* Use o's hint: its helper line, the template line and its call line. */
static int rewrite_use(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n,
		       struct rewrite_cand *o, const char *tline, char **why)
{
	const struct source_file *sf = r->in->sources[o->l->hint.source_index].file;
	struct source_hint *h = &o->l->hint;
	char *line = dispatch_line(sf, cands, n, o, why), *call = NULL;

	if (line) {
		/* the kernel the call is in, whose parameters may tell the helper's T */
		const struct rewrite_kernel_def *kd = source_locate_kernel(r, o->direct_source, o->k);

		call = call_line(r->in->sources[o->direct_source].file, cands, n, o,
				 kd && kd->found == 1 ? &kd->def : NULL, why);
	}
	if (call && line_taken(cands, n, o, o->direct_source, (size_t)o->at[0].line))
		*why = xasprintf("line %d of %s is rewritten for another load too", o->at[0].line,
				 r->in->sources[o->direct_source].path);
	if (!*why) {
		free(h->rewritten);
		h->rewritten = line;
		add_edit(h, h->source_index, o->fn.start_line, tline);
		add_edit(h, o->direct_source, (size_t)o->at[0].line, call);
		h->form_macros = 1;
		free(h->message);
		h->message = xasprintf("%s in source.patch: helper '%s' takes the form as template "
				       "parameter " FORM_PARAM " (default: as built), and its call at "
				       "%s:%d passes %s() through it", o->l->patch_action,
				       h->inlined_in, r->in->sources[o->direct_source].path,
				       o->at[0].line, o->helper);
		line = NULL;
	}
	free(line);
	free(call);
	return *why ? -1 : 0;
}

int helper_form_rewrite(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n,
			struct rewrite_cand *c, char **why)
{
	const struct source_file *sf = r->in->sources[c->l->hint.source_index].file;
	char *tline;
	size_t i;

	*why = NULL;
	if (!check_uses(r, cands, n, c, why))
		return 0;
	if (strstr(sf->text, FORM_PARAM)) {
		*why = xasprintf("'%s' already names " FORM_PARAM, c->l->hint.path);
		return 0;
	}
	if (!(tline = template_line(sf, c, why)))
		return 0;
	for (i = 0; i < n && !*why; i++)
		if (same_helper(c, &cands[i]) && use_form(&cands[i]))
			rewrite_use(r, cands, n, &cands[i], tline, why);
	for (i = 0; i < n; i++) {
		struct source_hint *h = &cands[i].l->hint;

		if (!same_helper(c, &cands[i]) || !use_form(&cands[i]))
			continue;
		cands[i].variant = 1;
		if (!*why)
			continue;
		free(h->rewritten);
		h->rewritten = NULL;
		while (h->nr_edits)
			free(h->edits[--h->nr_edits].text);
		h->form_macros = 0;
	}
	free(tline);
	return !*why;
}
