/*
 * Loads read through a function-like macro (emitters/rewrite/source_macro.h).
 */
#include "emitters/rewrite/source_macro.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "emitters/rewrite/source_file.h"

void source_macro_release(struct source_macro *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_params; i++)
		free(m->params[i]);
	free(m->params);
	free(m->name);
	free(m->body);
	memset(m, 0, sizeof(*m));
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Fills m from the text after "#define NAME(" up to the line's end; 0 when
 * the parameter list is not one of plain names. */
static int parse_define(const char *p, const char *end, struct source_macro *m)
{
	for (;;) {
		const char *b;

		p = skip_blanks(p, end);
		if (p < end && *p == ')' && !m->nr_params)
			break;
		for (b = p; p < end && (isalnum((unsigned char)*p) || *p == '_'); p++)
			;
		if (p == b)
			return 0;
		m->params = xrealloc(m->params, (m->nr_params + 1) * sizeof(*m->params));
		m->params[m->nr_params++] = xstrndup(b, (size_t)(p - b));
		p = skip_blanks(p, end);
		if (p < end && *p == ')')
			break;
		if (p >= end || *p != ',')
			return 0;
		p++;
	}
	p = skip_blanks(p + 1, end);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	m->continued = end > p && end[-1] == '\\';
	m->body = xstrndup(p, (size_t)(end - p));
	return 1;
}

int source_macro_find(const struct source_file *sf, const char *name, struct source_macro *m)
{
	size_t n = strlen(name), line;

	memset(m, 0, sizeof(*m));
	for (line = 1; sf && line <= sf->nr_lines; line++) {
		size_t len;
		const char *text = source_file_line(sf, line, &len), *end = text + len, *p;

		if (sf->in_comment[line - 1])
			continue;
		p = skip_blanks(text, end);
		if (p >= end || *p != '#')
			continue;
		p = skip_blanks(p + 1, end);
		if ((size_t)(end - p) < 7 || strncmp(p, "define", 6) || (p[6] != ' ' && p[6] != '\t'))
			continue;
		p = skip_blanks(p + 6, end);
		if ((size_t)(end - p) <= n || strncmp(p, name, n) || p[n] != '(')
			continue;
		m->name = xstrdup(name);
		m->line = line;
		if (parse_define(p + n + 1, end, m))
			return 1;
		source_macro_release(m);
		return 0;
	}
	return 0;
}

/* Whether t[b, e) is "( ... )" with the first "(" closed by the last ")". */
static int wrapped(const char *s, const struct source_token *t, size_t nr, size_t b, size_t e)
{
	return e - b >= 2 && source_token_is(s, &t[b], "(") &&
	       source_token_close(s, t, nr, b) == e - 1;
}

int source_macro_indexed_param(const struct source_macro *m)
{
	struct source_token *t = NULL;
	size_t nr = source_tokenize(m->body, strlen(m->body), 0, &t), b = 0, e = nr, i;
	int ret = -1;

	while (wrapped(m->body, t, nr, b, e)) {
		b++;
		e--;
	}
	/* "(P)[...]" or "P[...]", the "]" last */
	if (e - b >= 4 && wrapped(m->body, t, nr, b, b + 3) && t[b + 1].kind == SOURCE_TOKEN_IDENT)
		b++;
	else if (e - b >= 3 && t[b].kind == SOURCE_TOKEN_IDENT)
		b += 0;
	else
		b = e;
	if (b < e) {
		size_t open = source_token_is(m->body, &t[b + 1], ")") ? b + 2 : b + 1;

		if (open < e && source_token_is(m->body, &t[open], "[") &&
		    source_token_close(m->body, t, nr, open) == e - 1)
			for (i = 0; i < m->nr_params; i++)
				if (source_token_is(m->body, &t[b], m->params[i]))
					ret = (int)i;
	}
	free(t);
	return ret;
}

/* The argument index at which t[open]'s call passes exactly the name param,
 * -1 when none does; *close gets the call's ")". */
static int arg_of(const char *line, const struct source_token *t, size_t nr, size_t open,
		  const char *param, size_t *close)
{
	size_t i, b = open + 1, arg = 0;
	int found = -1;

	*close = source_token_close(line, t, nr, open);
	for (i = open + 1; *close < nr && i <= *close; i++) {
		int depth_end = i == *close || source_token_is(line, &t[i], ",");

		if (!depth_end) {
			if (source_token_is(line, &t[i], "(") || source_token_is(line, &t[i], "["))
				i = source_token_close(line, t, nr, i);
			continue;
		}
		if (i == b + 1 && source_token_is(line, &t[b], param))
			found = (int)arg;
		arg++;
		b = i + 1;
	}
	return found;
}

/* The macro called name in files, 1 with *m, 0 when none defines it. */
static int macro_in(const struct source_file *const *files, size_t nr, const char *name,
		    struct source_macro *m, const struct source_file **in)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (source_macro_find(files[i], name, m)) {
			*in = files[i];
			return 1;
		}
	return 0;
}

int source_macro_read(const struct source_file *const *files, size_t nr, const char *line,
		      size_t len, int in_comment, const char *param, const char *param_type,
		      struct source_rewrite *rw, char **why)
{
	struct source_token *t = NULL;
	size_t nt = source_tokenize(line, len, in_comment, &t), i, close, uses = 0;
	int ret = 0;

	*why = NULL;
	for (i = 0; i + 1 < nt && ret >= 0; i++) {
		struct source_macro m;
		const struct source_file *in = NULL;
		int arg, read;
		char *name;

		if (t[i].kind != SOURCE_TOKEN_IDENT || !source_token_is(line, &t[i + 1], "("))
			continue;
		arg = arg_of(line, t, nt, i + 1, param, &close);
		if (arg < 0 || close >= nt)
			continue;
		name = xstrndup(line + t[i].begin, t[i].end - t[i].begin);
		if (macro_in(files, nr, name, &m, &in)) {
			read = m.continued ? -2 : source_macro_indexed_param(&m);
			if (uses++)
				*why = xasprintf("the line passes '%s' to macros more than once", param);
			else if (read != arg)
				*why = xasprintf("the line reads '%s' through macro '%s' (%s:%zu), whose "
						 "body is not one indexed read of that argument%s: rewrite "
						 "it by hand", param, name, in->path, m.line,
						 m.continued ? " on one line" : "");
			if (*why) {
				source_rewrite_release(rw);
				ret = -1;
			} else {
				memset(rw, 0, sizeof(*rw));
				rw->status = SOURCE_REWRITE_OK;
				rw->nr_reads = 1;
				rw->begin = t[i].begin;
				rw->end = t[close].end;
				rw->take_address = 1;
				rw->elem_type = param_type ? source_pointee_type(param_type) : NULL;
				ret = 1;
			}
			source_macro_release(&m);
		}
		free(name);
	}
	free(t);
	return ret;
}
