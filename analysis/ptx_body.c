/* The PTX parser (analysis/ptx_internal.h): function bodies and the module level. */
#include "analysis/ptx_internal.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

static int perr(struct parser *P, unsigned line, const char *what)
{
	return error_set(CA_E_INPUT, "%s:%u: %s", P->name, line, what);
}

/*
 * A PTX ISA version as .version gives it: "major.minor", digits only, each
 * at most 99 (ISA 9.0 is current; ptxas refuses anything else). The rest
 * of the tool compares versions as numbers, so an out-of-range or
 * malformed one must not pass as "too old" (issue 36: .version
 * 99999999999999.x was).
 */
static int isa_version(struct slice v)
{
	size_t i, dot = v.n, digits = 0;

	for (i = 0; i < v.n; i++) {
		if (v.s[i] == '.' && dot == v.n && i) {
			dot = i;
			digits = 0;
		} else if (v.s[i] >= '0' && v.s[i] <= '9' && ++digits <= 2) {
			continue;
		} else {
			return 0;
		}
	}
	return dot < v.n && digits > 0;
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
	ptx_regmap_reset(&P->regs);
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
				ptx_finish_function(P, f);
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
					ptx_parse_loc_directive(P, q, le);
				else if (SLICE_IS(d, "file"))
					ptx_parse_file_directive(P, q, le);
				P->p = le;
				continue;
			}
			se = ptx_scan_statement(q, P->end, &P->line, &semi);
			if (se == STMT_EOF)
				return perr(P, line, "directive is truncated at end of file");
			if (se == STMT_BRACE)
				return perr(P, line, "missing ';' after directive");
			if (SLICE_IS(d, "shared")) {
				struct slice nm;
				f->uses_shared = 1;
				f->static_shared_bytes += ptx_decl_bytes(q, semi, &nm);
			}
			P->p = semi + 1;
			continue;
		}
		case '@': {
			const char *q = s + 1;
			q = ptx_skip_blank(q, P->end);
			if (q < P->end && *q == '!')
				q = ptx_skip_blank(q + 1, P->end);
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
				const char *r = ptx_skip_blank(q, P->end);
				if (r < P->end && *r == ':' && !(r + 1 < P->end && r[1] == ':')) {
					P->p = r + 1;   /* label */
					continue;
				}
			}
			while (q < P->end && is_opcode_char((unsigned char)*q))
				q++;
			opcode.s = s;
			opcode.n = (size_t)(q - s);
			se = ptx_scan_statement(q, P->end, &P->line, &semi);
			if (se == STMT_EOF)
				return perr(P, line, "instruction is truncated at end of file");
			if (se == STMT_BRACE)
				return perr(P, line, "missing ';' after instruction");
			ptx_do_instruction(P, f, opcode, pred, semi, line);
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

	f = ptx_new_function(P);
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
			ptx_function_release(f);
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
					ptx_add_param(P, f, &alloc_params, ptx_trim(s, c));
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
			ptx_function_release(f);
			return perr(P, decl_line, "function header is truncated at end of file");
		}
		if (*P->p == ';') {
			/* A prototype: no body, not a function of this module. */
			P->p++;
			ptx_function_release(f);
			return 0;
		}
		if (*P->p == '{')
			break;
		if (*P->p == '}') {
			ptx_function_release(f);
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
			ptx_function_release(f);
			return ret;
		}
	}
	P->m->nr_functions++;
	return 0;
}

/* Module-scope variable: record .shared ones for the functions that use
 * them, .global and .const ones in the module's variables. */
static int parse_module_var(struct parser *P, const char *after, struct slice space, unsigned line)
{
	const char *semi;
	enum stmt_end se = ptx_scan_statement(after, P->end, &P->line, &semi);
	int is_shared = SLICE_IS(space, "shared");

	if (se == STMT_EOF)
		return perr(P, line, "declaration is truncated at end of file");
	if (se == STMT_BRACE)
		return perr(P, line, "unbalanced '}'");
	if (SLICE_IS(space, "global") || SLICE_IS(space, "const")) {
		struct slice nm;
		size_t bytes = ptx_decl_bytes(after, semi, &nm);

		if (nm.n) {
			struct ptx_module *m = P->m;

			ALLOC_GROW(m->variables, m->nr_variables + 1, P->alloc_variables);
			m->variables[m->nr_variables++] = (struct ptx_variable){
				xstrndup(nm.s, nm.n), SLICE_IS(space, "const"), P->linkage_extern, bytes };
		}
	}
	if (is_shared) {
		struct slice nm;
		size_t bytes = ptx_decl_bytes(after, semi, &nm);
		if (nm.n && (size_t)ptx_regmap_intern(&P->shnames, nm.s, nm.n) == P->nr_shvars) {
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

int ptx_parse_module(struct parser *P)
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
			const char *e = ptx_skip_block(s, P->end, &P->line);
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
		    SLICE_IS(d, "extern")) {
			P->linkage_extern |= SLICE_IS(d, "extern");
			continue;
		}
		if (SLICE_IS(d, "entry") || SLICE_IS(d, "func")) {
			int ret = parse_function(P, SLICE_IS(d, "entry"), line);
			P->linkage_extern = 0;
			if (ret)
				return ret;
			continue;
		}
		if (SLICE_IS(d, "version") || SLICE_IS(d, "target") || SLICE_IS(d, "address_size") ||
		    SLICE_IS(d, "file")) {
			const char *le = line_end(q, P->end);
			struct slice v = ptx_trim(ptx_skip_blank(q, le), le);
			const char *cut = v.s;
			while (cut < v.s + v.n && *cut != ',' && !is_space(*cut) && *cut != '/')
				cut++;
			v.n = (size_t)(cut - v.s);
			if (SLICE_IS(d, "version")) {
				if (!v.n)
					return perr(P, line, ".version has no number");
				if (!isa_version(v))
					return error_set(CA_E_INPUT, "%s:%u: .version '%.*s' is not a PTX "
							 "ISA version (major.minor, each at most 99, as "
							 "in .version 8.5)", P->name, line,
							 (int)(v.n > 40 ? 40 : v.n), v.s);
				snprintf(m->version, sizeof(m->version), "%.*s", (int)v.n, v.s);
				P->seen_version = 1;
			} else if (SLICE_IS(d, "target")) {
				if (!v.n)
					return perr(P, line, ".target has no architecture");
				snprintf(m->target, sizeof(m->target), "%.*s", (int)v.n, v.s);
				P->seen_target = 1;
			} else if (SLICE_IS(d, "address_size")) {
				unsigned long a;
				if (ptx_parse_uint(v.s, v.s + v.n, &a) || (a != 32 && a != 64))
					return perr(P, line, ".address_size must be 32 or 64");
				m->address_size = (int)a;
			} else {
				ptx_parse_file_directive(P, q, le);
			}
			P->p = le;
			continue;
		}
		if (SLICE_IS(d, "section")) {
			/* .section NAME { ... }: debug sections (-lineinfo, -G). */
			unsigned l = P->line;
			const char *p = ptx_skip_ws(ptx_skip_blank(q, P->end), P->end, &l);
			p = ptx_skip_ws(p, P->end, &l);
			while (p < P->end && (is_ident_char((unsigned char)*p) || *p == '.'))
				p++;
			p = ptx_skip_ws(p, P->end, &l);
			if (p < P->end && *p == '{') {
				const char *e;
				P->line = l;
				e = ptx_skip_block(p, P->end, &P->line);
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
			int ret = parse_module_var(P, q, d, line);
			P->linkage_extern = 0;
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
				const char *e = ptx_skip_block(brace, P->end, &P->line);
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
