#include "emitters/rewrite/source_file.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

/* Source files larger than this are not C++ anyone hand-writes kernels in. */
#define SOURCE_FILE_MAX_BYTES (64u << 20)

static int is_ident_start(int c)
{
	return isalpha(c) || c == '_' || c == '$';
}

static int is_ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

/* Multi-character punctuators, longest first. */
static const char *const puncts[] = {
	">>=", "<<=", "...", "->*",
	"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::", ".*",
};

/*
 * The lexer behind source_tokenize() and the per-line comment states of a
 * file: when states is given, states[n] records whether line n+1 starts
 * inside a block comment.
 */
static size_t lex(const char *s, size_t len, int in_comment, struct source_token **toks,
		  unsigned char *states, size_t nr_states)
{
	struct source_token *v = NULL;
	size_t nr = 0, alloc = 0, i = 0, line = 0;
	int at_line_start = 1;

	if (states && nr_states)
		states[0] = (unsigned char)in_comment;
	while (i < len) {
		char c = s[i];

		if (c == '\n') {
			line++;
			if (states && line < nr_states)
				states[line] = (unsigned char)in_comment;
			at_line_start = 1;
			i++;
			continue;
		}
		if (in_comment) {
			if (c == '*' && i + 1 < len && s[i + 1] == '/') {
				in_comment = 0;
				i += 2;
			} else {
				i++;
			}
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			i++;
			continue;
		}
		if (c == '/' && i + 1 < len && s[i + 1] == '/') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '/' && i + 1 < len && s[i + 1] == '*') {
			in_comment = 1;
			i += 2;
			continue;
		}
		if (c == '#' && at_line_start) {
			/* A preprocessor line, with its backslash continuations. */
			while (i < len && s[i] != '\n') {
				if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n') {
					line++;
					if (states && line < nr_states)
						states[line] = 0;
					i += 2;
					continue;
				}
				i++;
			}
			continue;
		}
		at_line_start = 0;
		ALLOC_GROW(v, nr + 1, alloc);
		v[nr].begin = i;
		if (is_ident_start((unsigned char)c)) {
			while (i < len && is_ident_char((unsigned char)s[i]))
				i++;
			v[nr].kind = SOURCE_TOKEN_IDENT;
		} else if (isdigit((unsigned char)c) ||
			   (c == '.' && i + 1 < len && isdigit((unsigned char)s[i + 1]))) {
			size_t b = i;
			int hex = c == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X');

			while (i < len) {
				char d = s[i];

				if ((d == '+' || d == '-') && i > b &&
				    (hex ? strchr("pP", s[i - 1]) : strchr("eE", s[i - 1]))) {
					i++;
					continue;
				}
				if (!is_ident_char((unsigned char)d) && d != '.' && d != '\'')
					break;
				i++;
			}
			v[nr].kind = SOURCE_TOKEN_NUMBER;
		} else if (c == '"' || c == '\'') {
			i++;
			while (i < len && s[i] != c && s[i] != '\n') {
				if (s[i] == '\\' && i + 1 < len)
					i++;
				i++;
			}
			if (i < len && s[i] == c)
				i++;
			v[nr].kind = SOURCE_TOKEN_STRING;
		} else {
			size_t k, plen = 1;
			for (k = 0; k < ARRAY_SIZE(puncts); k++) {
				size_t n = strlen(puncts[k]);
				if (i + n <= len && !memcmp(s + i, puncts[k], n)) {
					plen = n;
					break;
				}
			}
			i += plen;
			v[nr].kind = SOURCE_TOKEN_PUNCT;
		}
		v[nr].end = i;
		nr++;
	}
	*toks = v;
	return nr;
}

size_t source_tokenize(const char *text, size_t len, int in_comment,
		       struct source_token **toks)
{
	return lex(text, len, in_comment, toks, NULL, 0);
}

int source_token_is(const char *text, const struct source_token *t, const char *s)
{
	size_t n = strlen(s);

	return t->end - t->begin == n && !memcmp(text + t->begin, s, n);
}

struct source_file *source_file_load(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	struct source_file *sf;
	struct source_token *toks = NULL;
	size_t i, n;

	if (strbuf_read_file(&sb, path, SOURCE_FILE_MAX_BYTES)) {
		strbuf_release(&sb);
		return NULL;
	}
	sf = xcalloc(1, sizeof(*sf));
	sf->path = xstrdup(path);
	sf->len = sb.len;
	sf->text = strbuf_detach(&sb, NULL);
	digest_sha256_hex(sf->text, sf->len, sf->sha256);

	n = 0;
	for (i = 0; i < sf->len; i++)
		if (sf->text[i] == '\n')
			n++;
	if (sf->len && sf->text[sf->len - 1] != '\n')
		n++;
	sf->nr_lines = n;
	sf->line_off = xmalloc((n + 1) * sizeof(*sf->line_off));
	sf->line_off[0] = 0;
	n = 1;
	for (i = 0; i < sf->len; i++)
		if (sf->text[i] == '\n' && n <= sf->nr_lines)
			sf->line_off[n++] = i + 1;
	sf->line_off[sf->nr_lines] = sf->len;
	sf->in_comment = xcalloc(sf->nr_lines + 1, 1);
	lex(sf->text, sf->len, 0, &toks, sf->in_comment, sf->nr_lines + 1);
	free(toks);
	return sf;
}

void source_file_free(struct source_file *sf)
{
	if (!sf)
		return;
	free(sf->path);
	free(sf->text);
	free(sf->line_off);
	free(sf->in_comment);
	free(sf);
}

const char *source_file_line(const struct source_file *sf, size_t n, size_t *len)
{
	size_t b, e;

	if (n < 1 || n > sf->nr_lines)
		return NULL;
	b = sf->line_off[n - 1];
	e = sf->line_off[n];
	while (e > b && (sf->text[e - 1] == '\n' || sf->text[e - 1] == '\r'))
		e--;
	*len = e - b;
	return sf->text + b;
}

size_t source_file_line_of(const struct source_file *sf, size_t off)
{
	size_t lo = 0, hi = sf->nr_lines;

	/* The last line whose start is <= off (binary search). */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (sf->line_off[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo + 1;
}

void source_kernel_release(struct source_kernel *k)
{
	size_t i;

	for (i = 0; i < k->nr_params; i++) {
		free(k->params[i]);
		free(k->param_types[i]);
	}
	free(k->params);
	free(k->param_types);
	for (i = 0; i < k->nr_template_params; i++)
		free(k->template_params[i]);
	free(k->template_params);
	free(k->template_param_is_type);
	memset(k, 0, sizeof(*k));
}

/* source_file.h */
size_t source_token_close(const char *s, const struct source_token *t, size_t nr, size_t open)
{
	const char *o = NULL, *c = NULL;
	int depth = 0;
	size_t i;

	if (source_token_is(s, &t[open], "("))
		o = "(", c = ")";
	else if (source_token_is(s, &t[open], "["))
		o = "[", c = "]";
	else if (source_token_is(s, &t[open], "{"))
		o = "{", c = "}";
	else
		o = "<", c = ">";
	for (i = open; i < nr; i++) {
		if (source_token_is(s, &t[i], o)) {
			depth++;
		} else if (source_token_is(s, &t[i], c)) {
			if (--depth == 0)
				return i;
		} else if (*o == '<' && source_token_is(s, &t[i], ">>")) {
			depth -= 2;
			if (depth <= 0)
				return i;
		} else if (*o == '<' && (source_token_is(s, &t[i], ";") ||
					 source_token_is(s, &t[i], "{"))) {
			return nr;
		}
	}
	return nr;
}

static int is_qualifier(const char *s, const struct source_token *t)
{
	static const char *const q[] = { "const", "volatile", "__restrict__", "__restrict",
					 "restrict", "__grid_constant__" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(q); i++)
		if (source_token_is(s, t, q[i]))
			return 1;
	return 0;
}

static int is_builtin_type(const char *s, const struct source_token *t)
{
	static const char *const b[] = { "void", "char", "short", "int", "long", "float",
					 "double", "bool", "signed", "unsigned", "auto" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(b); i++)
		if (source_token_is(s, t, b[i]))
			return 1;
	return 0;
}

/* One parameter declaration toks[b, e): its name (or NULL) and type text. */
static void parse_param(const char *s, const struct source_token *t, size_t b, size_t e,
			char **name, char **type)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, n = e, name_at = e, idents = 0;

	for (i = b; i < e; i++) {
		if (source_token_is(s, &t[i], "=")) {
			n = i;
			break;
		}
	}
	for (i = b; i < n; i++) {
		if (t[i].kind == SOURCE_TOKEN_IDENT && !is_qualifier(s, &t[i])) {
			idents++;
			name_at = i;
		}
	}
	if (idents < 2 || (name_at > b && source_token_is(s, &t[name_at - 1], "::")) ||
	    is_builtin_type(s, &t[name_at]))
		name_at = e;
	*name = name_at < e ? xstrndup(s + t[name_at].begin, t[name_at].end - t[name_at].begin)
			    : NULL;
	for (i = b; i < n; i++) {
		if (i == name_at)
			continue;
		if (sb.len && sb.buf[sb.len - 1] != '*' && sb.buf[sb.len - 1] != '&' &&
		    (t[i].kind == SOURCE_TOKEN_IDENT || source_token_is(s, &t[i], "*") ||
		     source_token_is(s, &t[i], "&")))
			strbuf_addch(&sb, ' ');
		strbuf_add(&sb, s + t[i].begin, t[i].end - t[i].begin);
	}
	*type = strbuf_detach(&sb, NULL);
}

static void parse_params(const char *s, const struct source_token *t, size_t open,
			 size_t close, struct source_kernel *k)
{
	size_t i, start = open + 1, alloc = 0;
	int depth = 0;

	if (close == open + 1 ||
	    (close == open + 2 && source_token_is(s, &t[open + 1], "void")))
		return;
	for (i = open + 1; i <= close; i++) {
		if (i < close && (source_token_is(s, &t[i], "(") || source_token_is(s, &t[i], "[") ||
				  source_token_is(s, &t[i], "{") || source_token_is(s, &t[i], "<"))) {
			depth++;
		} else if (i < close && (source_token_is(s, &t[i], ")") ||
					 source_token_is(s, &t[i], "]") ||
					 source_token_is(s, &t[i], "}") ||
					 source_token_is(s, &t[i], ">"))) {
			depth--;
		} else if (i < close && source_token_is(s, &t[i], ">>")) {
			depth -= 2;
		} else if (i == close || (depth <= 0 && source_token_is(s, &t[i], ","))) {
			ALLOC_GROW(k->params, k->nr_params + 1, alloc);
			k->param_types = xrealloc(k->param_types, alloc * sizeof(*k->param_types));
			parse_param(s, t, start, i, &k->params[k->nr_params],
				    &k->param_types[k->nr_params]);
			k->nr_params++;
			start = i + 1;
			depth = 0;
		}
	}
}

/*
 * The "template < ... >" of the declaration whose name is t[name]: its
 * parameters' names, and whether each is a type (typename, class).
 */
static void parse_template_params(const char *s, const struct source_token *t, size_t nr,
				  size_t name, struct source_kernel *k)
{
	size_t j, open = nr, close, b;

	for (j = name; j-- > 0;) {
		if (source_token_is(s, &t[j], ";") || source_token_is(s, &t[j], "{") ||
		    source_token_is(s, &t[j], "}"))
			break;
		if (source_token_is(s, &t[j], "template") && j + 1 < name &&
		    source_token_is(s, &t[j + 1], "<"))
			open = j + 1;
	}
	if (open == nr || (close = source_token_close(s, t, nr, open)) >= nr)
		return;
	for (b = open + 1; b < close;) {
		size_t e = b, last = nr;
		int depth = 0, is_type;

		for (; e < close; e++) {
			if (source_token_is(s, &t[e], "<") || source_token_is(s, &t[e], "("))
				depth++;
			else if (source_token_is(s, &t[e], ">") || source_token_is(s, &t[e], ")"))
				depth--;
			else if (depth == 0 && (source_token_is(s, &t[e], ",") ||
						source_token_is(s, &t[e], "=")))
				break;
			if (depth == 0 && t[e].kind == SOURCE_TOKEN_IDENT)
				last = e;
		}
		is_type = source_token_is(s, &t[b], "typename") || source_token_is(s, &t[b], "class");
		k->template_params = xrealloc(k->template_params,
					      (k->nr_template_params + 1) * sizeof(char *));
		k->template_param_is_type = xrealloc(k->template_param_is_type,
						     (k->nr_template_params + 1) * sizeof(int));
		k->template_params[k->nr_template_params] =
			last < nr && last > b ? xstrndup(s + t[last].begin, t[last].end - t[last].begin) :
			NULL;
		k->template_param_is_type[k->nr_template_params++] = is_type;
		/* skip a default argument up to the next top-level comma */
		for (depth = 0; e < close; e++) {
			if (source_token_is(s, &t[e], "<") || source_token_is(s, &t[e], "("))
				depth++;
			else if (source_token_is(s, &t[e], ">") || source_token_is(s, &t[e], ")"))
				depth--;
			else if (depth == 0 && source_token_is(s, &t[e], ","))
				break;
		}
		b = e + 1;
	}
}

int source_file_find_kernel(const struct source_file *sf, const char *name,
			    struct source_kernel *k)
{
	const char *s = sf->text;
	struct source_token *t = NULL;
	size_t nr = source_tokenize(s, sf->len, 0, &t);
	size_t i;
	int found = 0;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < nr; i++) {
		size_t j, open, close, body, end;
		int global = 0;

		if (t[i].kind != SOURCE_TOKEN_IDENT || !source_token_is(s, &t[i], name))
			continue;
		open = i + 1;
		if (open < nr && source_token_is(s, &t[open], "<")) {
			open = source_token_close(s, t, nr, open);
			if (open >= nr)
				continue;
			open++;
		}
		if (open >= nr || !source_token_is(s, &t[open], "("))
			continue;
		for (j = i; j-- > 0;) {
			if (source_token_is(s, &t[j], ";") || source_token_is(s, &t[j], "{") ||
			    source_token_is(s, &t[j], "}"))
				break;
			if (source_token_is(s, &t[j], "__global__"))
				global = 1;
		}
		if (!global)
			continue;
		close = source_token_close(s, t, nr, open);
		if (close >= nr)
			continue;
		for (body = close + 1; body < nr; body++) {
			if (source_token_is(s, &t[body], "{") || source_token_is(s, &t[body], ";"))
				break;
			if (source_token_is(s, &t[body], "(")) {
				body = source_token_close(s, t, nr, body);
				if (body >= nr)
					break;
			}
		}
		if (body >= nr || !source_token_is(s, &t[body], "{"))
			continue;       /* a declaration */
		end = source_token_close(s, t, nr, body);
		if (end >= nr)
			continue;
		if (++found > 1)
			break;
		parse_params(s, t, open, close, k);
		parse_template_params(s, t, nr, i, k);
		k->decl_line = source_file_line_of(sf, t[i].begin);
		k->body_first_line = source_file_line_of(sf, t[body].begin);
		k->body_last_line = source_file_line_of(sf, t[end].begin);
		i = end;
	}
	free(t);
	if (found != 1) {
		source_kernel_release(k);
		return found ? -1 : 0;
	}
	return 1;
}

static int is_control_keyword(const char *s, const struct source_token *t)
{
	static const char *const kw[] = { "if", "for", "while", "switch", "catch", "return",
					  "sizeof", "decltype", "alignof", "__launch_bounds__",
					  "__attribute__", "__declspec", "defined" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kw); i++)
		if (source_token_is(s, t, kw[i]))
			return 1;
	return 0;
}

/*
 * Whether toks[i] names a function being defined: an identifier, not a
 * member call or keyword, followed by "(" (or "<...>(") ")", qualifiers and
 * "{". Sets *open, *close (the parameter list) and *body (the "{").
 */
static int definition_at(const char *s, const struct source_token *t, size_t nr, size_t i,
			 size_t *open, size_t *close, size_t *body)
{
	size_t o = i + 1, c, b;

	if (t[i].kind != SOURCE_TOKEN_IDENT || is_control_keyword(s, &t[i]))
		return 0;
	if (!i || !(t[i - 1].kind == SOURCE_TOKEN_IDENT || source_token_is(s, &t[i - 1], "*") ||
		    source_token_is(s, &t[i - 1], "&") || source_token_is(s, &t[i - 1], ">") ||
		    source_token_is(s, &t[i - 1], ">>") || source_token_is(s, &t[i - 1], "::")))
		return 0;
	if (t[i - 1].kind == SOURCE_TOKEN_IDENT &&
	    (source_token_is(s, &t[i - 1], "return") || source_token_is(s, &t[i - 1], "new") ||
	     source_token_is(s, &t[i - 1], "else") || source_token_is(s, &t[i - 1], "case")))
		return 0;
	if (o < nr && source_token_is(s, &t[o], "<")) {
		o = source_token_close(s, t, nr, o);
		if (o >= nr)
			return 0;
		o++;
	}
	if (o >= nr || !source_token_is(s, &t[o], "("))
		return 0;
	c = source_token_close(s, t, nr, o);
	if (c >= nr)
		return 0;
	for (b = c + 1; b < nr; b++) {
		if (source_token_is(s, &t[b], "{") || source_token_is(s, &t[b], ";") ||
		    source_token_is(s, &t[b], "=") || source_token_is(s, &t[b], ",") ||
		    source_token_is(s, &t[b], ")"))
			break;
		if (source_token_is(s, &t[b], "(")) {
			b = source_token_close(s, t, nr, b);
			if (b >= nr)
				return 0;
		}
	}
	if (b >= nr || !source_token_is(s, &t[b], "{"))
		return 0;
	*open = o;
	*close = c;
	*body = b;
	return 1;
}

int source_file_function_at(const struct source_file *sf, size_t line,
			    struct source_kernel *k, char **name)
{
	const char *s = sf->text;
	struct source_token *t = NULL;
	size_t nr = source_tokenize(s, sf->len, 0, &t), i, best = nr;
	size_t b_open = 0, b_close = 0, b_body = 0, b_end = 0;

	memset(k, 0, sizeof(*k));
	*name = NULL;
	for (i = 0; i < nr; i++) {
		size_t open, close, body, end;

		if (!definition_at(s, t, nr, i, &open, &close, &body))
			continue;
		end = source_token_close(s, t, nr, body);
		if (end >= nr)
			continue;
		if (source_file_line_of(sf, t[body].begin) <= line && line <= source_file_line_of(sf, t[end].begin)) {
			/* Innermost: a later definition inside this body wins. */
			best = i;
			b_open = open;
			b_close = close;
			b_body = body;
			b_end = end;
		}
	}
	if (best < nr) {
		size_t j;

		parse_params(s, t, b_open, b_close, k);
		parse_template_params(s, t, nr, best, k);
		k->decl_line = source_file_line_of(sf, t[best].begin);
		k->body_first_line = source_file_line_of(sf, t[b_body].begin);
		k->body_last_line = source_file_line_of(sf, t[b_end].begin);
		for (j = best; j > 0; j--)
			if (source_token_is(s, &t[j - 1], ";") || source_token_is(s, &t[j - 1], "{") ||
			    source_token_is(s, &t[j - 1], "}"))
				break;
		k->start_line = source_file_line_of(sf, t[j].begin);
		*name = xstrndup(s + t[best].begin, t[best].end - t[best].begin);
	}
	free(t);
	return best < nr;
}

size_t source_file_call_lines(const struct source_file *sf, const char *name, size_t **lines)
{
	const char *s = sf->text;
	struct source_token *t = NULL;
	size_t nr = source_tokenize(s, sf->len, 0, &t), i, n = 0;

	*lines = NULL;
	for (i = 0; i < nr; i++) {
		size_t o = i + 1, open, close, body;

		if (t[i].kind != SOURCE_TOKEN_IDENT || !source_token_is(s, &t[i], name))
			continue;
		if (definition_at(s, t, nr, i, &open, &close, &body)) {
			i = source_token_close(s, t, nr, body);  /* its own body: recursion aside */
			continue;
		}
		if (i && (source_token_is(s, &t[i - 1], ".") || source_token_is(s, &t[i - 1], "->")))
			continue;
		if (o < nr && source_token_is(s, &t[o], "<")) {
			o = source_token_close(s, t, nr, o);
			if (o >= nr)
				continue;
			o++;
		}
		if (o >= nr || !source_token_is(s, &t[o], "("))
			continue;
		*lines = xrealloc(*lines, (n + 1) * sizeof(**lines));
		(*lines)[n++] = source_file_line_of(sf, t[i].begin);
	}
	free(t);
	return n;
}

char *source_kernel_base_name(const char *mangled, const char *demangled)
{
	if (demangled && *demangled) {
		const char *end = demangled, *b;
		int depth = 0;

		/* The name ends at the parameter list's '(' outside template arguments. */
		for (; *end; end++) {
			if (*end == '<')
				depth++;
			else if (*end == '>')
				depth--;
			else if (*end == '(' && depth == 0)
				break;
		}
		/* Drop trailing template arguments: "mix<float>" -> "mix". */
		while (end > demangled && end[-1] == ' ')
			end--;
		if (end > demangled && end[-1] == '>') {
			depth = 0;
			while (end > demangled) {
				end--;
				if (*end == '>')
					depth++;
				else if (*end == '<' && --depth == 0)
					break;
			}
		}
		b = end;
		while (b > demangled && is_ident_char((unsigned char)b[-1]))
			b--;
		if (b < end)
			return xstrndup(b, (size_t)(end - b));
		return NULL;
	}
	if (!mangled)
		return NULL;
	if (!strncmp(mangled, "_Z", 2)) {
		const char *p = mangled + 2, *last = NULL;
		size_t last_len = 0;
		int nested = 0;

		if (*p == 'N') {
			nested = 1;
			p++;
			while (*p == 'K' || *p == 'V' || *p == 'r')
				p++;
		}
		for (;;) {
			char *endp;
			unsigned long n;

			if (!isdigit((unsigned char)*p))
				break;
			n = strtoul(p, &endp, 10);
			if (n == 0 || strlen(endp) < n)
				return NULL;
			last = endp;
			last_len = n;
			p = endp + n;
			if (!nested)
				break;
		}
		return last ? xstrndup(last, last_len) : NULL;
	}
	return xstrdup(mangled);
}

void source_template_args_free(char **args, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(args[i]);
	free(args);
}

static void add_arg(char ***args, size_t *nr, char *arg)
{
	*args = xrealloc(*args, (*nr + 1) * sizeof(**args));
	(*args)[(*nr)++] = arg;
}

/* An Itanium builtin type code ("f" -> "float"), NULL for others. */
static const char *builtin_code(char c)
{
	static const char *const codes[][2] = {
		{ "v", "void" }, { "b", "bool" }, { "c", "char" }, { "a", "signed char" },
		{ "h", "unsigned char" }, { "s", "short" }, { "t", "unsigned short" },
		{ "i", "int" }, { "j", "unsigned int" }, { "l", "long" }, { "m", "unsigned long" },
		{ "x", "long long" }, { "y", "unsigned long long" }, { "f", "float" },
		{ "d", "double" },
	};
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i][0][0] == c)
			return codes[i][1];
	return NULL;
}

char **source_template_args(const char *mangled, const char *demangled, size_t *nr)
{
	char **args = NULL;

	*nr = 0;
	if (demangled && *demangled) {
		const char *p = demangled, *open = NULL, *close = NULL, *b;
		int depth = 0;

		/* the template arguments just before the parameter list */
		for (; *p; p++) {
			if (*p == '<' && depth++ == 0)
				open = p;
			else if (*p == '>' && --depth == 0)
				close = p;
			else if (*p == '(' && depth == 0)
				break;
		}
		if (!open || !close || close < open)
			return NULL;
		for (b = open + 1, p = b, depth = 0; p <= close; p++) {
			if (*p == '<' || *p == '(')
				depth++;
			else if ((*p == '>' || *p == ')') && p != close)
				depth--;
			else if ((*p == ',' && depth == 0) || p == close) {
				const char *e = p;

				while (b < e && *b == ' ')
					b++;
				while (e > b && e[-1] == ' ')
					e--;
				add_arg(&args, nr, e > b ? xstrndup(b, (size_t)(e - b)) : NULL);
				b = p + 1;
			}
		}
		return args;
	}
	if (mangled && !strncmp(mangled, "_Z", 2)) {
		const char *p = mangled + 2;

		if (*p == 'N')
			p++;
		while (*p && !isdigit((unsigned char)*p))
			p++;
		while (isdigit((unsigned char)*p)) {   /* the names, up to the template's */
			char *endp;
			unsigned long n = strtoul(p, &endp, 10);

			if (!n || strlen(endp) < n)
				return NULL;
			p = endp + n;
		}
		if (*p != 'I')
			return NULL;
		for (p++; *p && *p != 'E';) {
			const char *bt = builtin_code(*p);

			if (bt) {
				add_arg(&args, nr, xstrdup(bt));
				p++;
			} else if (isdigit((unsigned char)*p)) {
				char *endp;
				unsigned long n = strtoul(p, &endp, 10);

				if (!n || strlen(endp) < n)
					break;
				add_arg(&args, nr, xstrndup(endp, n));
				p = endp + n;
			} else if (*p == 'L') {         /* a value: L <type> <digits> E */
				const char *e = strchr(p, 'E');

				if (!e)
					break;
				add_arg(&args, nr, NULL);
				p = e + 1;
			} else {
				add_arg(&args, nr, NULL);   /* not read here: the rest unknown */
				break;
			}
		}
	}
	return args;
}
