/*
 * Source rewriting's CUDA C++ back-end (emitters/rewrite/rewrite_backend.h):
 * a load's expression on its line, in the kernel or in an inlined __device__
 * helper, read through a parameter, a struct's member or a local pointer;
 * its form as a cacheadvise helper or an intrinsic (source_rewrite.h); the
 * checks that keep the rewrite right for every load of the expression,
 * every instantiation of a template and every call of a helper (a copy of
 * the helper per call site where they want different forms, or the form
 * as a template parameter: helper_form.h); the lines
 * source.patch writes.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/load_sites.h"
#include "analysis/ptx.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/helper_form.h"
#include "emitters/rewrite/rewrite_backend.h"
#include "emitters/rewrite/source_file.h"
#include "emitters/rewrite/source_locate.h"
#include "emitters/rewrite/source_macro.h"
#include "emitters/rewrite/source_rewrite.h"
#include "emitters/rewrite/source_types.h"

/* Whether the file declares `struct NAME` / `class NAME` (a user type no helper reads whole). */
static int declares_struct(const struct source_file *sf, const char *name)
{
	struct source_token *t = NULL;
	size_t nr = source_tokenize(sf->text, sf->len, 0, &t), i;
	int found = 0;

	for (i = 0; i + 1 < nr && !found; i++)
		if ((source_token_is(sf->text, &t[i], "struct") ||
		     source_token_is(sf->text, &t[i], "class") ||
		     source_token_is(sf->text, &t[i], "union")) &&
		    source_token_is(sf->text, &t[i + 1], name))
			found = 1;
	free(t);
	return found;
}

static const char *ld_type_text(const char *instruction)
{
	const char *p = strrchr(instruction, '.');
	const char *v = strstr(instruction, ".v");

	if (v && v[2] >= '2' && v[2] <= '8' && v[3] == '.')
		return v + 1;
	return p ? p + 1 : instruction;
}

/*
 * The load's line is in a __device__ helper inlined into kernel d (the
 * hint's call_line lies in d's body): finds the helper and the one read of
 * one of its parameters on the line. Returns 1 with c->rw and *pname set,
 * or 0 with c->why.
 */
static int find_in_helper(struct rewrite_resolver *r, struct rewrite_cand *c, const struct rewrite_kernel_def *d,
			  const struct report_source *src, const char *text, size_t len,
			  const char **pname, const char **ptype)
{
	struct report_load *l = c->l;
	struct source_hint *h = &l->hint;
	char *name = NULL;
	size_t i, found = 0;

	(void)r;
	if (!h->call_line || (size_t)h->call_line < d->def.body_first_line ||
	    (size_t)h->call_line > d->def.body_last_line) {
		c->why = xasprintf("line %d is outside the body of kernel '%s' and the PTX does not "
				   "say where it was inlined into the kernel", l->line, d->name);
		return 0;
	}
	if (!source_file_function_at(src->file, (size_t)l->line, &c->fn, &name)) {
		c->why = xasprintf("line %d (inlined at line %d) is in no function the matcher can "
				   "find (a macro or a lambda?)", l->line, h->call_line);
		return 0;
	}
	h->inlined_in = name;
	c->inl = 1;
	for (i = 0; i < c->fn.nr_params; i++) {
		struct source_rewrite rw;

		if (!c->fn.params[i])
			continue;
		source_rewrite_find(&rw, text, len, src->file->in_comment[l->line - 1],
				    c->fn.params[i], c->fn.param_types[i]);
		if (rw.nr_reads && !found++) {
			c->rw = rw;
			*pname = c->fn.params[i];
			*ptype = c->fn.param_types[i];
		} else {
			source_rewrite_release(&rw);
		}
	}
	if (found != 1) {
		c->why = found ? xasprintf("line %d of helper '%s' (inlined at line %d) reads more "
					   "than one of its parameters", l->line, name, h->call_line)
			       : xasprintf("line %d of helper '%s' (inlined at line %d) reads none of "
					   "its parameters directly", l->line, name, h->call_line);
		return 0;
	}
	if (c->rw.status != SOURCE_REWRITE_OK) {
		c->why = xasprintf("%s (in helper '%s', inlined at line %d)", c->rw.reason, name,
				   h->call_line);
		return 0;
	}
	if (h->call_line && l->line && d->def.body_first_line && d->source == h->source_index &&
	    ((size_t)l->line >= c->fn.body_first_line && (size_t)l->line <= c->fn.body_last_line) &&
	    c->fn.decl_line == d->def.decl_line) {
		c->why = xasprintf("line %d is in kernel '%s' itself", l->line, d->name);
		return 0;
	}
	return 1;
}

/*
 * A read through one member (p[i].m, p->m): the helper's overloads are
 * for the member's type, which the struct's definition tells, not the
 * load: a long member the compiler reads as .u32, an enum, a __half, a
 * pointer have no overload, and the patched source would not compile.
 * Finds the struct (emitters/rewrite/source_types.h) and sets c->rw.elem_type to
 * the member's type (through a #define or typedef); 0 with c->why when it
 * cannot.
 */
static int member_type(struct rewrite_resolver *r, struct rewrite_cand *c, const struct report_source *src,
		       const char *ptype, const struct source_ld_type *t)
{
	char *sname = source_pointee_type(ptype), *type;
	const char *m = c->rw.member;
	int defined = 0, match, ok = 0;

	if (!sname) {
		c->why = xasprintf("cannot tell the struct whose member '%s' the line reads: its "
				   "member's type decides the helper; rewrite it by hand", m);
		return 0;
	}
	type = source_types_member(&r->types, src->read_path, sname, m, &defined);
	/* a type named through "#define fp double" or a typedef */
	match = type ? source_type_matches(type, t) : -1;
	if (type && match < 0 && !strchr(type, '*') && !strchr(type, '[')) {
		char *alias = source_types_alias(&r->types, src->read_path, type);

		if (alias) {
			free(type);
			type = alias;
			match = source_type_matches(type, t);
		}
	}
	if (!defined)
		c->why = xasprintf("cannot find the definition of struct '%s' beside '%s': the type "
				   "of its member '%s' decides the helper; rewrite it by hand", sname,
				   src->path, m);
	else if (!type)
		c->why = xasprintf("cannot read the type of member '%s' in the definition of struct "
				   "'%s': rewrite it by hand", m, sname);
	else if (strchr(type, '*') || strchr(type, '['))
		c->why = xasprintf("member '%s' of struct '%s' is %s: no helper loads it", m, sname,
				   strchr(type, '*') ? "a pointer" : "an array");
	else if (match == 0)
		c->why = xasprintf("member '%s' of struct '%s' is a %s but the load reads .%s (the "
				   "compiler reads part of it): no helper for .%s takes a %s; rewrite "
				   "it by hand", m, sname, type, ld_type_text(c->l->instruction),
				   ld_type_text(c->l->instruction), type);
	else if (match < 0)
		c->why = xasprintf("cannot tell what type '%s' (member '%s' of struct '%s') is: "
				   "rewrite it by hand", type, m, sname);
	else
		ok = 1;
	if (ok)
		c->rw.elem_type = type;
	else
		free(type);
	free(sname);
	return ok;
}

/*
 * A kernel template's type parameter (def's "template <typename T>") as
 * kernel k instantiates it ("float" for axpy<float>), from k's demangled or
 * mangled name; NULL when name is not one or the argument cannot be read.
 * Sets *from_template when it is one.
 */
static char *template_arg(const struct source_kernel *def, const struct report_kernel *k,
			  const char *name, int *from_template)
{
	size_t i, nr;
	char **args, *ret = NULL;

	for (i = 0; i < def->nr_template_params; i++)
		if (def->template_param_is_type[i] && def->template_params[i] &&
		    !strcmp(def->template_params[i], name))
			break;
	if (i == def->nr_template_params)
		return NULL;
	*from_template = 1;
	args = source_template_args(k->name, k->demangled, &nr);
	if (i < nr && args[i])
		ret = xstrdup(args[i]);
	source_template_args_free(args, nr);
	return ret;
}

/* Whether name is one of fn's template type parameters ("T" of template <typename T>). */
static int is_type_param(const struct source_kernel *fn, const char *name)
{
	size_t i;

	for (i = 0; i < fn->nr_template_params; i++)
		if (fn->template_param_is_type[i] && fn->template_params[i] &&
		    !strcmp(fn->template_params[i], name))
			return 1;
	return 0;
}

/*
 * The line reads the parameter through a local pointer into it ("const
 * float *row = a + i * k;" then "row[1]"): the one alias of the kernel's
 * body (source_pointer_aliases) that the line reads once takes the
 * parameter's place, with its own declared type. c->rw stays as it was
 * (not found) when none or several do. The aliases are the kernel's; once
 * they are found they are kept in c->alias_* for the hint.
 */
static void find_through_alias(struct rewrite_cand *c, const struct rewrite_kernel_def *d,
			       const struct report_source *src, const char *text, size_t len,
			       const char **pname, const char **ptype)
{
	char **names, **types;
	const char **pointers = xcalloc(d->def.nr_params + 1, sizeof(*pointers));
	size_t n, i, np = 0, found = 0, which = 0;
	struct source_rewrite rw;

	/* the other pointer parameters: an alias must point into none of them */
	for (i = 0; i < d->def.nr_params; i++)
		if (d->def.params[i] && d->def.param_types[i] &&
		    (strchr(d->def.param_types[i], '*') || strchr(d->def.param_types[i], '[')))
			pointers[np++] = d->def.params[i];
	n = source_pointer_aliases(src->file, d->def.body_first_line, d->def.body_last_line,
				   *pname, pointers, np, &names, &types);
	free(pointers);

	for (i = 0; i < n; i++) {
		source_rewrite_find(&rw, text, len, src->file->in_comment[c->l->line - 1], names[i],
				    types[i]);
		if (rw.nr_reads && !found++)
			which = i;
		source_rewrite_release(&rw);
	}
	if (found == 1) {
		source_rewrite_release(&c->rw);
		source_rewrite_find(&c->rw, text, len, src->file->in_comment[c->l->line - 1],
				    names[which], types[which]);
		c->alias_of = xstrdup(*pname);
		c->alias = xstrdup(names[which]);
		c->alias_type = xstrdup(types[which]);
		*pname = c->alias;
		*ptype = c->alias_type;
	}
	source_aliases_free(names, types, n);
}

/*
 * The files a macro the kernel's line uses may be defined in: the line's
 * own and the headers it includes with #include "..." (beside it, under
 * the source root). Returns how many; *files (caller frees) borrows them.
 */
static size_t macro_files(struct rewrite_resolver *r, long src, const struct source_file ***files)
{
	const struct source_file *sf = r->in->sources[src].file;
	char *dir = xstrdup(r->in->sources[src].recorded), *slash = strrchr(dir, '/');
	size_t line, n = 0;

	*files = xcalloc(sf->nr_lines + 2, sizeof(**files));
	(*files)[n++] = sf;
	if (slash)
		slash[1] = '\0';
	for (line = 1; line <= sf->nr_lines; line++) {
		size_t len;
		const char *t = source_file_line(sf, line, &len), *q, *e;
		char *path;
		long at;

		if (sf->in_comment[line - 1] || len < 12 || strncmp(t, "#include \"", 10) ||
		    !(e = memchr(t + 10, '"', len - 10)))
			continue;
		q = t + 10;
		path = xasprintf("%s%.*s", slash ? dir : "", (int)(e - q), q);
		at = source_locate_file(r->in, path);
		if (r->in->sources[at].file && r->in->sources[at].under_root)
			(*files)[n++] = r->in->sources[at].file;
		free(path);
	}
	free(dir);
	return n;
}

/*
 * The line passes the parameter to a function-like macro whose body reads
 * it (source_macro.h): c->rw wraps the use. Returns 0 with c->why where
 * the macro cannot be wrapped, 1 otherwise (c->rw as it was when no macro
 * reads it).
 */
static int find_through_macro(struct rewrite_resolver *r, struct rewrite_cand *c, long src,
			      const char *text, size_t len, const char *pname, const char *ptype)
{
	const struct source_file **files;
	size_t n = macro_files(r, src, &files);
	const struct source_file *sf = r->in->sources[src].file;
	struct source_rewrite rw;
	int got;

	memset(&rw, 0, sizeof(rw));
	got = source_macro_read(files, n, text, len, sf->in_comment[c->l->line - 1], pname, ptype,
				&rw, &c->why);
	free(files);
	if (got > 0) {
		source_rewrite_release(&c->rw);
		c->rw = rw;
	}
	return got >= 0;
}

/*
 * The definition of c's kernel: in the file of the load's line, or where
 * the line is a helper's that was inlined (the PTX's inlined_at), in the
 * file of the call in the kernel's body (a helper in a header). NULL with
 * c->why when it is not there once.
 */
static struct rewrite_kernel_def *kernel_def(struct rewrite_resolver *r, struct rewrite_cand *c)
{
	long ks = c->call_source >= 0 ? c->call_source : c->l->hint.source_index;
	const struct report_source *ksrc = &r->in->sources[ks];
	struct rewrite_kernel_def *d;

	if (!ksrc->file || !ksrc->under_root) {
		c->why = xasprintf("the kernel's call of the helper is in '%s', which %s", ksrc->path,
				   ksrc->file ? "is outside the source root" : "cannot be read");
		return NULL;
	}
	d = source_locate_kernel(r, ks, c->k);
	if (!d->name)
		c->why = xasprintf("cannot read the kernel name '%s'", c->k->name);
	else if (d->found == 0)
		c->why = xasprintf("kernel '%s' is not defined in '%s'", d->name, ksrc->path);
	else if (d->found < 0)
		c->why = xasprintf("'%s' defines kernel '%s' more than once (overloads or "
				   "specialisations): cannot tell which one this is", ksrc->path, d->name);
	return d->name && d->found == 1 ? d : NULL;
}

/* Finds the load's expression on its line; sets c->ok or c->why. */
static void find_expression(struct rewrite_resolver *r, struct rewrite_cand *c)
{
	struct report_load *l = c->l;
	struct report_source *src;
	struct rewrite_kernel_def *d;
	struct source_ld_type t;
	const char *text, *pname = NULL, *ptype = NULL;
	size_t len;

	if (l->hint.source_index < 0 || (l->param < 0 && !l->hint.call_line))
		return;
	src = &r->in->sources[l->hint.source_index];
	if (!src->file || !src->under_root)
		return;
	text = source_file_line(src->file, (size_t)l->line, &len);
	if (!text) {
		c->why = xasprintf("line %d is past the end of '%s' (the file changed since the "
				   "build?)", l->line, src->path);
		return;
	}
	if (!(d = kernel_def(r, c)))
		return;
	if (source_ld_type_parse(l->instruction, &t) || !source_ld_type_supported(&t)) {
		c->why = xasprintf("no load helper reads .%s", ld_type_text(l->instruction));
		return;
	}
	if (d->source != l->hint.source_index || (size_t)l->line < d->def.body_first_line ||
	    (size_t)l->line > d->def.body_last_line) {
		if (!find_in_helper(r, c, d, src, text, len, &pname, &ptype))
			return;
	} else {
		if ((size_t)l->param >= d->def.nr_params || !d->def.params[l->param]) {
			c->why = xasprintf("kernel '%s' has no named parameter %d in '%s'", d->name,
					   l->param, src->path);
			return;
		}
		pname = d->def.params[l->param];
		ptype = d->def.param_types[l->param];
		source_rewrite_find(&c->rw, text, len, src->file->in_comment[l->line - 1], pname,
				    ptype);
		if (c->rw.status == SOURCE_REWRITE_NOT_FOUND)
			find_through_alias(c, d, src, text, len, &pname, &ptype);
		if (c->rw.status == SOURCE_REWRITE_NOT_FOUND &&
		    !find_through_macro(r, c, l->hint.source_index, text, len, pname, ptype))
			return;
		src = &r->in->sources[l->hint.source_index];  /* in->sources may have grown */
		if (c->rw.status != SOURCE_REWRITE_OK) {
			c->why = xstrdup(c->rw.reason);
			return;
		}
	}
	if (!c->rw.elem_type && c->rw.member && !member_type(r, c, src, ptype, &t))
		return;
	if (c->rw.elem_type) {
		int m = source_type_matches(c->rw.elem_type, &t);

		if (m == 0) {
			c->why = xasprintf("'%s' points to %s but the load reads .%s: the expression "
					   "on the line is not this load", pname, c->rw.elem_type,
					   ld_type_text(l->instruction));
			return;
		}
		if (m < 0 && c->inl && is_type_param(&c->fn, c->rw.elem_type)) {
			/* a helper template's T: the helper's overloads for every
			 * type the load reads as (.f32: float; .v4.u32: uint4 and
			 * int4), chosen where it is instantiated (a T of the user's
			 * own, a struct read as .v4, has none: the rebuilt program
			 * does not compile, which check --build and the profile's
			 * rebuild say) */
			free(c->rw.elem_type);
			c->rw.elem_type = NULL;
			m = 1;
		}
		if (m < 0 && declares_struct(src->file, c->rw.elem_type)) {
			c->why = xasprintf("'%s' points to the struct '%s': no helper loads a whole "
					   "struct", pname, c->rw.elem_type);
			return;
		}
		if (m < 0 && t.vector != 1) {
			c->why = xasprintf("'%s' points to '%s', which no helper reads as .%s", pname,
					   c->rw.elem_type, ld_type_text(l->instruction));
			return;
		}
		if (m < 0) {
			/* a typedef or #define of a type a helper reads: that one; a
			 * kernel template's type parameter: this instantiation's
			 * argument; else the helper would not take the pointer and
			 * the patched source would not compile */
			char *alias = source_types_alias(&r->types, src->read_path,
							 c->rw.elem_type);

			if (!alias && !c->inl)
				alias = template_arg(&d->def, c->k, c->rw.elem_type, &c->from_template);
			if (!alias || source_type_matches(alias, &t) != 1) {
				c->why = xasprintf("'%s' points to '%s', a type no load helper is written "
						   "for (a template parameter, an enum, a typedef cacheadvise "
						   "cannot see through): rewrite it by hand", pname,
						   c->rw.elem_type);
				free(alias);
				return;
			}
			free(c->rw.elem_type);
			c->rw.elem_type = alias;
		}
	} else if (t.vector != 1) {
		c->why = xasprintf("the load reads .%s, more than the member the line names",
				   ld_type_text(l->instruction));
		return;
	}
	c->ok = 1;
	c->l->hint.has_span = 1;
	c->l->hint.span_begin = c->rw.begin;
	c->l->hint.span_end = c->rw.end;
}

/* A load whose source line is there to rewrite: rewritten, or why not. */
static void cuda_decide(struct rewrite_resolver *r, struct rewrite_cand *c)
{
	struct report_load *l = c->l;
	struct source_hint *h = &l->hint;

	(void)r;
	if (!c->helper && !strcmp(l->patch_action, "default")) {
		h->status = SOURCE_HINT_NOT_REWRITTEN;
		h->message = xasprintf("not rewritten: the plan makes this %s a plain load; in the "
				       "source, drop the cache hint or helper that qualifies it",
				       l->instruction);
	} else if (!c->helper) {
		h->status = SOURCE_HINT_NO_SOURCE_FORM;
		h->message = xasprintf("'%s' has no source form (a strong or legacy operator): apply "
				       "it without rebuilding, with cacheadvise run --plan",
				       l->patch_action);
	} else if (!c->ok) {
		h->status = SOURCE_HINT_NOT_REWRITTEN;
		h->message = xasprintf("not rewritten: %s", c->why ? c->why :
				       "the load's parameter is unknown");
	} else {
		h->status = SOURCE_HINT_REWRITTEN;
		h->helper = c->helper;
		if (c->rw.elem_type)
			h->elem_type = xstrdup(c->rw.elem_type);
	}
}


/* A load left as it is follows an advised load of the same expression when
 * it reads at most this share of the advised load's sectors. */
#define FOLLOW_FRACTION 0.05

/* Loads that come from one expression must all want the same form. */
static void check_conflicts(struct rewrite_cand *cands, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct source_hint *h = &cands[i].l->hint;

		if (h->status != SOURCE_HINT_REWRITTEN)
			continue;
		for (j = 0; j < n; j++) {
			const struct source_hint *o = &cands[j].l->hint;
			const char *a = cands[i].helper, *b = cands[j].helper;
			char *other;

			if (i == j || !o->has_span || o->source_index != h->source_index ||
			    cands[j].l->line != cands[i].l->line || o->span_begin != h->span_begin)
				continue;
			if (b && !strcmp(a, b))
				continue;
			if (!b && !cands[i].inl && cands[j].ok &&
			    cands[j].l->access <= FOLLOW_FRACTION * cands[i].l->access) {
				/* a copy that barely runs follows the advised one */
				struct source_hint *f = &cands[j].l->hint;

				free(f->message);
				f->status = SOURCE_HINT_REWRITTEN;
				f->helper = a;
				f->follows = cands[i].l->patch_action;
				cands[j].helper = a;
				if (!f->elem_type && h->elem_type)
					f->elem_type = xstrdup(h->elem_type);
				f->message = xasprintf("rewritten with load %u (%s), the same expression: "
						       "this copy read %.2g%% of its sectors", cands[i].l->ordinal,
						       cands[i].l->patch_action, cands[i].l->access > 0 ?
						       100.0 * cands[j].l->access / cands[i].l->access :
						       0.0);
				continue;
			}
			if (cands[i].inl) {
				/* The call sites differ: each gets its own copy. */
				cands[i].variant = 1;
				break;
			}
			other = report_kernel_label(cands[j].k);
			h->status = SOURCE_HINT_NOT_REWRITTEN;
			h->message = xasprintf("not rewritten: load %u of %s comes from the same "
					       "expression and is advised %s", cands[j].l->ordinal,
					       other, b ? cands[j].l->patch_action : "no change");
			free(other);
			h->helper = NULL;
			break;
		}
	}
}

/* How many kernels of module id are instantiations of the template whose
 * base name is name ("axpy" for axpy<float> and axpy<double>). */
static size_t template_instances(struct rewrite_resolver *r, const char *id, const char *name)
{
	const char *ptx_path;
	const struct ptx_module *pm;
	size_t i, n = 0;

	source_locate_ptx(r, id, &ptx_path);
	pm = source_locate_module(r, id);
	for (i = 0; pm && i < pm->nr_functions; i++) {
		char *b;

		if (!pm->functions[i].is_entry)
			continue;
		b = source_kernel_base_name(pm->functions[i].name, NULL);
		n += b && !strcmp(b, name);
		free(b);
	}
	return n;
}

/*
 * A template kernel's expression is one text for every instantiation: the
 * rewrite changes them all, so it is made only when each instantiation in
 * the module is advised this form there (instantiations the profile did
 * not measure, or advised otherwise, would change unverified).
 */
static void check_templates(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct source_hint *h = &cands[i].l->hint;
		const char **seen;
		size_t nr_seen = 0, inst;
		char *name;

		if (h->status != SOURCE_HINT_REWRITTEN || !cands[i].from_template)
			continue;
		name = source_kernel_base_name(cands[i].k->name, cands[i].k->demangled);
		inst = name ? template_instances(r, cands[i].k->module, name) : 0;
		seen = xcalloc(n + 1, sizeof(*seen));
		for (j = 0; j < n; j++) {
			const struct source_hint *o = &cands[j].l->hint;
			size_t s;

			if (o->status != SOURCE_HINT_REWRITTEN || o->source_index != h->source_index ||
			    cands[j].l->line != cands[i].l->line || o->span_begin != h->span_begin ||
			    !cands[j].helper || strcmp(cands[j].helper, cands[i].helper) ||
			    strcmp(cands[j].k->module, cands[i].k->module))
				continue;
			for (s = 0; s < nr_seen && strcmp(seen[s], cands[j].k->name); s++)
				;
			if (s == nr_seen)
				seen[nr_seen++] = cands[j].k->name;
		}
		if (name && nr_seen < inst) {
			free(h->message);
			h->status = SOURCE_HINT_NOT_REWRITTEN;
			h->message = xasprintf("not rewritten: kernel template '%s' has %zu instantiations "
					       "in its module and the rewrite of its source changes them all, "
					       "but %zu %s advised %s here: the others would change "
					       "unverified", name, inst, nr_seen,
					       nr_seen == 1 ? "is" : "are", cands[i].l->patch_action);
			h->helper = NULL;
		}
		free(seen);
		free(name);
	}
}

static void apply_lines(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct source_hint *h = &cands[i].l->hint;
		const struct source_rewrite **rws;
		const char **helpers;
		struct report_source *src;
		const char *text;
		size_t len, m = 0;
		char *line;

		if (h->status != SOURCE_HINT_REWRITTEN || h->rewritten || cands[i].variant)
			continue;
		rws = xcalloc(n, sizeof(*rws));
		helpers = xcalloc(n, sizeof(*helpers));
		/* Every rewrite on this line, each expression once. */
		for (j = 0; j < n; j++) {
			const struct source_hint *o = &cands[j].l->hint;
			size_t q;
			int seen = 0;

			if (o->status != SOURCE_HINT_REWRITTEN || o->source_index != h->source_index ||
			    cands[j].l->line != cands[i].l->line || cands[j].variant)
				continue;
			for (q = 0; q < m; q++)
				if (rws[q]->begin == cands[j].rw.begin)
					seen = 1;
			if (seen)
				continue;
			rws[m] = &cands[j].rw;
			helpers[m++] = cands[j].helper;
		}
		src = &r->in->sources[h->source_index];
		text = source_file_line(src->file, (size_t)cands[i].l->line, &len);
		line = source_rewrite_apply(text, len, rws, helpers, m);
		for (j = 0; j < n; j++) {
			struct source_hint *o = &cands[j].l->hint;

			if (o->status != SOURCE_HINT_REWRITTEN || o->source_index != h->source_index ||
			    cands[j].l->line != cands[i].l->line || cands[j].variant)
				continue;
			if (line) {
				o->rewritten = xstrdup(line);
			} else {
				o->status = SOURCE_HINT_NOT_REWRITTEN;
				o->helper = NULL;
				o->message = xstrdup("not rewritten: two advised loads overlap on "
						     "this line");
			}
		}
		free(line);
		free(rws);
		free(helpers);
	}
}

/* Whether a and b are one expression of one inlined helper (its line). */
static int same_helper_line(const struct rewrite_cand *a, const struct rewrite_cand *b)
{
	return a->inl && b->inl && a->nr_at && b->nr_at &&
	       a->l->hint.source_index == b->l->hint.source_index &&
	       a->fn.decl_line == b->fn.decl_line && a->l->line == b->l->line &&
	       a->l->hint.span_begin == b->l->hint.span_begin;
}

/*
 * The first line of file src that calls c's helper and is no advised call
 * site of c's load wanting c's form; 0 when every call is one.
 */
static size_t uncovered_call(struct rewrite_resolver *r, const struct rewrite_cand *cands, size_t n,
			     const struct rewrite_cand *c, long src)
{
	const struct source_file *sf = src >= 0 ? r->in->sources[src].file : NULL;
	size_t *lines = NULL, nr, k, j, ret = 0;

	nr = sf ? source_file_call_lines(sf, c->l->hint.inlined_in, &lines) : 0;
	for (k = 0; k < nr && !ret; k++) {
		int covered = 0;

		for (j = 0; j < n && !covered; j++) {
			const struct rewrite_cand *o = &cands[j];

			covered = same_helper_line(c, o) && o->direct_source == src &&
				  (size_t)o->at[0].line == lines[k] &&
				  o->l->hint.status == SOURCE_HINT_REWRITTEN && o->helper &&
				  !strcmp(o->helper, c->helper);
		}
		if (!covered)
			ret = lines[k];
	}
	free(lines);
	return ret;
}

/*
 * A helper line rewritten in place changes every call of the helper: that
 * is right only when every call, in the helper's file and in the file of
 * the calls the PTX names (a helper in a header), is an advised call site
 * of a load on that line wanting the same form. Otherwise the call sites
 * get copies (make_variants) or the helper is left as it is.
 * NEEDSWORK: calls from translation units the capture has no load of are
 * not seen here.
 */
static void check_other_calls(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct rewrite_cand *c = &cands[i];

		if (!c->inl || !c->nr_at || c->variant || c->l->hint.status != SOURCE_HINT_REWRITTEN)
			continue;
		if (uncovered_call(r, cands, n, c, c->l->hint.source_index) ||
		    (c->direct_source != c->l->hint.source_index &&
		     uncovered_call(r, cands, n, c, c->direct_source)))
			c->variant = 1;
	}
}

/* A copy of the helper per call site is made where the helper and its
 * call are in one file, called from the kernel's body. */
static int can_copy(const struct rewrite_cand *c)
{
	return c->nr_at == 1 && c->direct_source == c->l->hint.source_index;
}

/* "produce (helper_loads.cu:44) L2::evict_first": one use of c's helper line. */
static void add_use(struct strbuf *sb, struct rewrite_resolver *r, const struct rewrite_cand *o)
{
	char *k = report_kernel_label(o->k);
	const char *form = o->l->changes && o->l->action ? o->l->action : "as built";
	char *use = xasprintf("%s (%s:%d) %s", k, r->in->sources[o->direct_source].path,
			      o->at[0].line, form);

	if (!strstr(sb->buf, use))
		strbuf_addf(sb, "%s%s", sb->len ? ", " : "", use);
	free(use);
	free(k);
}

/*
 * The helper of c cannot be given a copy per call site (it is in another
 * file than its calls, or inlined into another helper): it stays as it is,
 * and the hint names its uses and their forms, or the call no advised
 * load comes from.
 */
static void name_helper_uses(struct rewrite_resolver *r, const struct rewrite_cand *cands, size_t n,
			     struct rewrite_cand *c, const char *why)
{
	struct source_hint *h = &c->l->hint;
	struct strbuf uses = STRBUF_INIT;
	size_t j, other = 0, differ = 0;
	long f = c->direct_source;

	for (j = 0; j < n; j++)
		if (same_helper_line(c, &cands[j])) {
			add_use(&uses, r, &cands[j]);
			differ |= !cands[j].helper || strcmp(cands[j].helper, c->helper);
		}
	if (!differ && !(other = uncovered_call(r, cands, n, c, f)))
		other = uncovered_call(r, cands, n, c, f = h->source_index);
	free(h->message);
	h->status = SOURCE_HINT_NOT_REWRITTEN;
	h->helper = NULL;
	if (differ)
		h->message = xasprintf("not rewritten: the uses of helper '%s' (%s:%d) are advised "
				       "different forms: %s; %s: give the helper the form as a "
				       "template parameter by hand, or apply the plan without "
				       "rebuilding with cacheadvise run --plan", h->inlined_in,
				       h->path, c->l->line, uses.buf, why ? why : "one text cannot "
				       "carry them all (the helper is inlined two calls deep, or "
				       "called from a file outside the source root)");
	else
		h->message = xasprintf("not rewritten: helper '%s' (%s:%d) is also called at %s:%zu, "
				       "where no advised load of the profile comes from: rewriting the "
				       "helper would change that call unmeasured (uses: %s); apply the "
				       "plan with cacheadvise run --plan", h->inlined_in, h->path,
				       c->l->line, r->in->sources[f].path, other, uses.buf);
	strbuf_release(&uses);
}

/* A short name of the action, for the names of helper copies: "na", "el",
 * "ef", "l2el", "na_l2ef", ...; "adv" for the others. Static. */
static const char *action_suffix(const char *action)
{
	enum load_action a;
	enum l2_priority p;
	const char *code;

	if (load_form_parse(action, &a, &p) || !(code = source_form_code(a, p)))
		return "adv";
	return code;
}

/* Same variant: same file, same helper definition, same action. */
static int same_variant(const struct rewrite_cand *a, const struct rewrite_cand *b)
{
	return b->variant && b->l->hint.status == SOURCE_HINT_REWRITTEN &&
	       a->l->hint.source_index == b->l->hint.source_index &&
	       a->fn.decl_line == b->fn.decl_line &&
	       !strcmp(a->l->patch_action, b->l->patch_action);
}

/* Whether the identifier name occurs in text. */
static int has_ident(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while ((p = strstr(p, name))) {
		int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';

		if (!before && !after)
			return 1;
		p += n;
	}
	return 0;
}

/* line with the first call of name ("name(" or "name<...>(") renamed; NULL unless exactly one. */
static char *rename_call(const char *line, size_t len, int in_comment, const char *name,
			 const char *to, int definition)
{
	struct source_token *t = NULL;
	size_t nr = source_tokenize(line, len, in_comment, &t), i, at = nr, calls = 0;
	char *out = NULL;

	for (i = 0; i + 1 < nr; i++) {
		if (t[i].kind != SOURCE_TOKEN_IDENT || !source_token_is(line, &t[i], name))
			continue;
		if (!source_token_is(line, &t[i + 1], "(") && !source_token_is(line, &t[i + 1], "<"))
			continue;
		if (i && (source_token_is(line, &t[i - 1], ".") ||
			  source_token_is(line, &t[i - 1], "->")))
			continue;
		if (!calls++)
			at = i;
	}
	if (calls == 1 || (definition && calls))
		out = xasprintf("%.*s%s%.*s", (int)t[at].begin, line, to,
				(int)(len - t[at].end), line + t[at].end);
	free(t);
	return out;
}

/*
 * The copy of c's helper named vname, with the lines of the group's loads
 * wrapped in ghelper. Returns it (caller frees), or NULL with *why.
 */
static char *helper_copy(const struct source_file *sf, const struct rewrite_cand *cands, size_t n,
			 const struct rewrite_cand *c, const char *vname, const char *ghelper, char **why)
{
	struct strbuf sb = STRBUF_INIT;
	size_t line, j, len;

	for (line = c->fn.start_line; line <= c->fn.body_last_line; line++) {
		const char *text = source_file_line(sf, line, &len);
		const struct source_rewrite **rws = xcalloc(n + 1, sizeof(*rws));
		const char **helpers = xcalloc(n + 1, sizeof(*helpers));
		size_t m = 0, q;
		char *out = NULL;

		for (j = 0; j < n; j++) {
			int seen = 0;

			if (!same_variant(c, &cands[j]) && &cands[j] != c)
				continue;
			if ((size_t)cands[j].l->line != line)
				continue;
			for (q = 0; q < m; q++)
				if (rws[q]->begin == cands[j].rw.begin)
					seen = 1;
			if (!seen) {
				rws[m] = &cands[j].rw;
				helpers[m++] = ghelper;
			}
		}
		if (m)
			out = source_rewrite_apply(text, len, rws, helpers, m);
		else if (line == c->fn.decl_line)
			out = rename_call(text, len, sf->in_comment[line - 1], c->l->hint.inlined_in,
					  vname, 1);
		else
			out = xstrndup(text, len);
		free(rws);
		free(helpers);
		if (!out || (m && line == c->fn.decl_line)) {
			*why = xasprintf("cannot copy helper '%s' (lines %zu-%zu)",
					 c->l->hint.inlined_in, c->fn.start_line, c->fn.body_last_line);
			free(out);
			strbuf_release(&sb);
			return NULL;
		}
		strbuf_addf(&sb, "%s\n", out);
		free(out);
	}
	{
		const char *last = source_file_line(sf, c->fn.body_last_line, &len);

		while (len && (last[len - 1] == ' ' || last[len - 1] == '\t' || last[len - 1] == '\r'))
			len--;
		if (!len || last[len - 1] != '}') {
			*why = xasprintf("helper '%s' does not end its line %zu with its closing brace",
					 c->l->hint.inlined_in, c->fn.body_last_line);
			strbuf_release(&sb);
			return NULL;
		}
	}
	return strbuf_detach(&sb, NULL);
}

/*
 * The call sites of an inlined helper want different forms: each call site
 * whose load changes calls a copy of the helper (load_key -> load_key_na)
 * whose line reads through the load helper, added after the helper; the
 * helper itself and its other calls stay as they are.
 */
static void make_variants(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct rewrite_cand *c = &cands[i];
		struct source_hint *h = &c->l->hint;
		const struct source_file *sf;
		const char *ghelper = c->helper, *call_text;
		char *vname, *copy = NULL, *why = NULL, *call = NULL;
		size_t len;
		enum load_action action;
		enum l2_priority l2;

		if (!c->variant || h->status != SOURCE_HINT_REWRITTEN || h->rewritten)
			continue;
		if (!can_copy(c)) {
			if (!helper_form_rewrite(r, cands, n, c, &why))
				name_helper_uses(r, cands, n, c, why);
			free(why);
			continue;
		}
		sf = r->in->sources[h->source_index].file;
		vname = xasprintf("%s_%s", h->inlined_in, action_suffix(c->l->patch_action));
		for (j = 0; j < n; j++)
			if (same_variant(c, &cands[j]) && strcmp(cands[j].helper, ghelper) &&
			    !load_form_parse(c->l->patch_action, &action, &l2))
				ghelper = source_helper_name(action, l2, 0, 0);
		if (has_ident(sf->text, vname))
			why = xasprintf("'%s' already defines or uses '%s'", h->path, vname);
		else
			copy = helper_copy(sf, cands, n, c, vname, ghelper, &why);
		/* Each call site of the group: one call of the helper on its line,
		 * and every load of the helper there wants what the copy does. */
		for (j = 0; j < n && copy; j++) {
			struct rewrite_cand *o = &cands[j];
			size_t q;

			if (!same_variant(c, o) && o != c)
				continue;
			call_text = source_file_line(sf, (size_t)o->l->hint.call_line, &len);
			call = call_text ? rename_call(call_text, len,
						       sf->in_comment[o->l->hint.call_line - 1],
						       h->inlined_in, vname, 0) : NULL;
			if (!call) {
				why = xasprintf("line %d calls '%s' more than once", o->l->hint.call_line,
						h->inlined_in);
				break;
			}
			for (q = 0; q < n; q++) {
				const struct rewrite_cand *p = &cands[q];
				int in_copy = 0, wants, k2;

				if (!p->inl || p->l->hint.source_index != h->source_index ||
				    p->fn.decl_line != c->fn.decl_line ||
				    p->l->hint.call_line != o->l->hint.call_line)
					continue;
				for (k2 = 0; (size_t)k2 < n; k2++)
					if ((same_variant(c, &cands[k2]) || &cands[k2] == c) &&
					    cands[k2].l->line == p->l->line)
						in_copy = 1;
				wants = p->l->hint.status == SOURCE_HINT_REWRITTEN &&
					!strcmp(p->l->patch_action, c->l->patch_action);
				if (in_copy != wants) {
					why = xasprintf("the loads of '%s' called at line %d want "
							"different forms", h->inlined_in,
							o->l->hint.call_line);
					break;
				}
			}
			free(call);
			call = NULL;
			if (why)
				break;
		}
		for (j = 0; j < n; j++) {
			struct rewrite_cand *o = &cands[j];
			struct source_hint *oh = &o->l->hint;

			if (!same_variant(c, o) && o != c)
				continue;
			if (why || !copy) {
				const char *t = source_file_line(sf, (size_t)o->l->line, &len);
				char *wrapped = NULL;
				const struct source_rewrite *rw = &o->rw;

				if (t)
					wrapped = source_rewrite_apply(t, len, &rw, &ghelper, 1);
				oh->status = SOURCE_HINT_NOT_REWRITTEN;
				oh->message = xasprintf("not rewritten: the call sites of helper '%s' want "
							"different forms, and %s; by hand: copy '%s' "
							"(lines %zu-%zu) as '%s' with line %d reading "
							"`%s`, and call '%s' at line %d",
							oh->inlined_in, why ? why : "it cannot be copied",
							oh->inlined_in, o->fn.start_line,
							o->fn.body_last_line, vname, o->l->line,
							wrapped ? wrapped : "?", vname, oh->call_line);
				free(wrapped);
				continue;
			}
			call_text = source_file_line(sf, (size_t)oh->call_line, &len);
			oh->rewritten = rename_call(call_text, len, sf->in_comment[oh->call_line - 1],
						    oh->inlined_in, vname, 0);
			oh->rewrite_line = (size_t)oh->call_line;
			oh->insert_text = xstrdup(copy);
			oh->insert_after = o->fn.body_last_line;
			o->helper = ghelper;
		}
		free(why);
		free(copy);
		free(vname);
	}
}

/* Two rewrites of one line must agree on its new text. */
static void check_patch_lines(struct rewrite_cand *cands, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct source_hint *h = &cands[i].l->hint;
		size_t li = source_hint_patch_line(h, cands[i].l->line);

		if (h->status != SOURCE_HINT_REWRITTEN || !h->rewritten)
			continue;
		for (j = 0; j < n; j++) {
			struct source_hint *o = &cands[j].l->hint;

			if (i == j || o->status != SOURCE_HINT_REWRITTEN || !o->rewritten ||
			    o->source_index != h->source_index ||
			    source_hint_patch_line(o, cands[j].l->line) != li ||
			    !strcmp(o->rewritten, h->rewritten))
				continue;
			h->status = SOURCE_HINT_NOT_REWRITTEN;
			h->helper = NULL;
			free(h->message);
			h->message = xasprintf("not rewritten: line %zu would need two different "
					       "rewrites (load %u changes it too)", li,
					       cands[j].l->ordinal);
			break;
		}
	}
}

static void describe_rewrites(struct rewrite_cand *cands, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct report_load *l = cands[i].l;
		int na;

		if (l->hint.status != SOURCE_HINT_REWRITTEN || l->hint.follows || l->hint.nr_edits)
			continue;   /* a follower keeps check_conflicts' message, a
				       helper given the form helper_form's */
		na = !strcmp(l->patch_action, "L1::no_allocate");
		if (l->hint.rewrite_line) {
			l->hint.message = xasprintf("%s in source.patch: line %zu calls a copy of "
						    "helper '%s' whose line %d %s the load through "
						    "%s() (its other call sites want another form)",
						    na ? "bypass L1" : l->patch_action,
						    l->hint.rewrite_line, l->hint.inlined_in, l->line,
						    na ? "reads" : "marks", l->hint.helper);
			continue;
		}
		if (cands[i].alias)
			l->hint.message = xasprintf("%s in source.patch: %s the load through %s() "
						    "(the line reads '%s' through '%s', a pointer "
						    "into it)", na ? "bypass L1" : l->patch_action,
						    na ? "reads" : "marks", l->hint.helper,
						    cands[i].alias_of, cands[i].alias);
		else
			l->hint.message = xasprintf("%s in source.patch: %s the load through %s()",
						    na ? "bypass L1" : l->patch_action,
						    na ? "reads" : "marks", l->hint.helper);
	}
}


static int cuda_recognises(const char *path)
{
	return !load_sites_is_python(path);
}

/* The helper the plan's form is in source, and the load's expression. */
static void cuda_find(struct rewrite_resolver *r, struct rewrite_cand *c)
{
	struct report_load *l = c->l;
	enum load_action action;
	enum l2_priority l2;

	if (l->patch_changes && l->patch_action && !load_form_parse(l->patch_action, &action, &l2))
		c->helper = source_helper_name(action, l2,
					       strstr(l->instruction, ".nc") != NULL,
					       l->read_only);
	find_expression(r, c);
}

static void cuda_rewrite(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n)
{
	check_conflicts(cands, n);
	check_templates(r, cands, n);
	check_other_calls(r, cands, n);
	make_variants(r, cands, n);
	apply_lines(r, cands, n);
	check_patch_lines(cands, n);
	describe_rewrites(cands, n);
}

const struct rewrite_backend rewrite_backend_cuda = {
	.name = "cuda",
	.language = "CUDA C++",
	.recognises = cuda_recognises,
	.find = cuda_find,
	.decide = cuda_decide,
	.rewrite = cuda_rewrite,
	.patch = NULL,
};
