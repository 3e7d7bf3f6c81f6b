/*
 * The PTX parser (analysis/ptx_internal.h): module pieces (.file, .loc,
 * declaration sizes) and function headers.
 */
#include "analysis/ptx_internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/xalloc.h"

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
void ptx_parse_file_directive(struct parser *P, const char *p, const char *e)
{
	unsigned long idx;
	const char *q;

	p = ptx_skip_blank(p, e);
	q = p;
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	if (ptx_parse_uint(p, q, &idx))
		return;
	p = ptx_skip_blank(q, e);
	if (p < e && *p == '"') {
		unsigned dummy = 0;
		const char *close = ptx_skip_string(p, e, &dummy);
		struct slice name = { p + 1, (size_t)(close - p - 1) };
		if (close <= e && close[-1] == '"' && close - p >= 2)
			name.n--;
		add_file(P, idx, name);
	}
}

/* Up to n blank-separated decimal numbers from *pp into v: how many were
 * read; *pp is left after the last. */
static int parse_numbers(const char **pp, const char *e, unsigned long *v, int n)
{
	const char *p = *pp;
	int i;

	for (i = 0; i < n; i++) {
		const char *q;

		p = ptx_skip_blank(p, e);
		q = p;
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (ptx_parse_uint(p, q, &v[i]))
			break;
		p = q;
	}
	*pp = p;
	return i;
}

static unsigned clamp_uint(unsigned long v)
{
	return (unsigned)(v > UINT_MAX ? UINT_MAX : v);
}

/* .loc FILE LINE COL [, function_name L [+off], inlined_at FILE LINE COL] */
void ptx_parse_loc_directive(struct parser *P, const char *p, const char *e)
{
	struct loc_rec r;
	unsigned long v[3] = { 0, 0, 0 };
	const char *inl;
	int n;

	memset(&r, 0, sizeof(r));
	n = parse_numbers(&p, e, v, 3);
	if (n < 2)
		return;
	r.file = clamp_uint(v[0]);
	r.line = clamp_uint(v[1]);
	r.col = n == 3 ? clamp_uint(v[2]) : 0;   /* no column: unknown */
	r.parent = -1;
	inl = NULL;
	for (; p + 10 <= e; p++)
		if (*p == 'i' && !memcmp(p, "inlined_at", 10)) {
			inl = p + 10;
			break;
		}
	if (inl && (n = parse_numbers(&inl, e, v, 3)) >= 2) {
		r.has_inl = 1;
		r.inl_file = clamp_uint(v[0]);
		r.inl_line = clamp_uint(v[1]);
		r.inl_col = n == 3 ? clamp_uint(v[2]) : 0;
		r.parent = P->cur_loc;
	}
	ALLOC_GROW(P->locs, P->nr_locs + 1, P->alloc_locs);
	P->locs[P->nr_locs] = r;
	P->cur_loc = (long)P->nr_locs++;
}

/*
 * Size in bytes of a variable declaration's tail: "[.align N] [.vN] .type
 * name[dims]...". Unsized arrays ([]) are 0 bytes.
 */
size_t ptx_decl_bytes(const char *p, const char *e, struct slice *name)
{
	size_t elem = 0, vec = 1, count = 1;
	int in_init = 0;

	name->s = p;
	name->n = 0;
	while (p < e && !in_init) {
		p = ptx_skip_blank(p, e);
		while (p < e && *p == '\n')
			p = ptx_skip_blank(p + 1, e);
		if (p >= e)
			break;
		if (*p == '.') {
			const char *q = scan_ident(p + 1, e);
			struct slice t = { p + 1, (size_t)(q - p - 1) };
			int bits = ptx_type_bits(t);
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
			const char *ds = ptx_skip_blank(p + 1, e);
			if (!q)
				break;
			if (ptx_parse_uint(ds, q, &d))
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
struct ptx_function *ptx_new_function(struct parser *P)
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

void ptx_function_release(struct ptx_function *f)
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
		free(f->loads[i].inlined_at);
	}
	free(f->loads);
	for (i = 0; i < f->nr_memops; i++)
		free(f->memops[i].opcode);
	free(f->memops);
}

void ptx_flow_release(struct flow *fl)
{
	size_t i;

	free(fl->written);
	for (i = 0; i < fl->nr_esc; i++)
		free(fl->esc[i].callee);
	free(fl->esc);
}

/* One parameter "[.param|.reg] <attrs and type> name[dims]". */
void ptx_add_param(struct parser *P, struct ptx_function *f, size_t *alloc, struct slice t)
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
