#include "emitters/source_hints.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/load_sites.h"
#include "analysis/ptx.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/path.h"
#include "base/xalloc.h"
#include "emitters/inductor.h"
#include "emitters/python_rewrite.h"
#include "emitters/report_input.h"
#include "emitters/source_file.h"
#include "emitters/source_rewrite.h"
#include "emitters/source_types.h"

const char *source_hint_status_name(enum source_hint_status s)
{
	switch (s) {
	case SOURCE_HINT_NONE: return "none";
	case SOURCE_HINT_REWRITTEN: return "rewritten";
	case SOURCE_HINT_NO_LINEINFO: return "no_lineinfo";
	case SOURCE_HINT_NO_SOURCE: return "no_source";
	case SOURCE_HINT_OUTSIDE_ROOT: return "outside_root";
	case SOURCE_HINT_NOT_REWRITTEN: return "not_rewritten";
	case SOURCE_HINT_NO_SOURCE_FORM: return "no_source_form";
	}
	return "none";
}

void source_hint_release(struct source_hint *h)
{
	free(h->message);
	free(h->path);
	free(h->source_text);
	free(h->rewritten);
	free(h->ptx_path);
	free(h->ptx_text);
	free(h->elem_type);
	free(h->inlined_in);
	free(h->insert_text);
	memset(h, 0, sizeof(*h));
	h->source_index = -1;
}

size_t source_hint_patch_line(const struct source_hint *h, int line)
{
	return h->rewrite_line ? h->rewrite_line : (size_t)line;
}

/* Per-load working state while hints are resolved. */
struct cand {
	struct report_kernel *k;
	struct report_load *l;
	const char *helper;         /* what the plan asks in source, NULL: no change */
	int ok;                     /* the expression was found and can be wrapped */
	char *why;                  /* why not (owned) */
	struct source_rewrite rw;
	/* In an inlined helper (hint.inlined_in): its definition. */
	int inl;
	struct source_kernel fn;
	/* The call sites of the helper want different forms: this call site
	 * gets its own copy of the helper. */
	int variant;
	/* In a Python file: a Triton tl.load, rewritten by python_hints(). */
	int py;
	/* The element type is a kernel template's parameter, this instantiation's
	 * argument: the rewrite changes every instantiation (check_templates) */
	int from_template;
	/* Read through a local pointer into the parameter alias_of: its name
	 * and declared type (find_through_alias), owned; NULL otherwise. */
	char *alias, *alias_type, *alias_of;
};

struct kernel_def {
	long source;
	char *name;
	int found;                  /* source_file_find_kernel's answer */
	struct source_kernel def;
};

struct resolver {
	struct report_input *in;
	struct kernel_def *defs;
	size_t nr_defs;
	struct { const char *id; const char *ptx; struct source_file *sf;
		 struct ptx_module *pm; } *mods;
	size_t nr_mods;
	/* what the sources say a struct's member or a type name is */
	struct source_types types;
};

/* Reads s from lookup_root/suffix, making suffix its path; 0 when unreadable. */
static int source_at(struct report_input *in, struct report_source *s, const char *suffix)
{
	char *rp = xasprintf("%s/%s", in->lookup_root, suffix);
	struct source_file *sf = source_file_load(rp);

	error_clear();
	if (!sf) {
		free(rp);
		return 0;
	}
	free(s->path);
	free(s->read_path);
	s->path = xstrdup(suffix);
	s->read_path = rp;
	s->file = sf;
	return 1;
}

/*
 * The tree given with --source-root may hold the program's sources at
 * another depth than the build's root puts them (the root is the deepest
 * directory holding every recorded source, the user may give the top of
 * the tree, or the reverse): tries the recorded path's other suffixes under
 * it, longer ones first ("cuda/bfs/kernel.cu" for "kernel.cu"), then
 * shorter ones. The suffix found is the path source.patch names.
 */
static void relocate_source(struct report_input *in, const char *file, struct report_source *s)
{
	size_t n = strlen(file), cur = strlen(s->path);
	const char *start = n >= cur && !strcmp(file + n - cur, s->path) ? file + n - cur : NULL;
	const char *q;

	if (!start)
		return;
	for (q = start - 1; q > file; q--)
		if (q[-1] == '/' && source_at(in, s, q))
			return;
	if (file[0] != '/' && start != file && source_at(in, s, file))
		return;
	for (q = start; *q; q++)
		if (*q == '/' && q[1] && source_at(in, s, q + 1))
			return;
}

static long source_index(struct report_input *in, const char *file)
{
	struct report_source *s;
	const char *root = in->source_root;
	size_t i, rl = root ? strlen(root) : 0;
	int under;
	char *norm;

	for (i = 0; i < in->nr_sources; i++)
		if (!strcmp(in->sources[i].recorded, file))
			return (long)i;
	in->sources = xrealloc(in->sources, (in->nr_sources + 1) * sizeof(*in->sources));
	s = &in->sources[in->nr_sources];
	memset(s, 0, sizeof(*s));
	s->recorded = xstrdup(file);
	/* "kernel/./k.cu" (an #include "./k.cu"): the path a diff can name */
	file = norm = path_normalize(file);
	if (file[0] == '/') {
		under = root && !strncmp(file, root, rl) && (file[rl] == '/' || !strcmp(root, "/"));
		s->path = xstrdup(under ? file + rl + (strcmp(root, "/") ? 1 : 0) : file);
	} else {
		under = 1;
		s->path = xstrdup(file);
	}
	s->under_root = under;
	s->read_path = under ? xasprintf("%s/%s", in->lookup_root, s->path) : xstrdup(file);
	s->file = source_file_load(s->read_path);
	error_clear();
	if (!s->file && under)
		relocate_source(in, file, s);
	free(norm);
	return (long)in->nr_sources++;
}

static char *trimmed(const char *s, size_t len)
{
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	return xstrndup(s, len);
}

/* The parsed PTX of module id, once module_ptx() has read it; NULL if none. */
static const struct ptx_module *module_model(struct resolver *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->nr_mods; i++)
		if (!strcmp(r->mods[i].id, id))
			return r->mods[i].pm;
	return NULL;
}

static struct source_file *module_ptx(struct resolver *r, const char *id, const char **ptx)
{
	const struct capture_module *m = capture_find_module(&r->in->model, id);
	size_t i;

	for (i = 0; i < r->nr_mods; i++) {
		if (!strcmp(r->mods[i].id, id)) {
			*ptx = r->mods[i].ptx;
			return r->mods[i].sf;
		}
	}
	r->mods = xrealloc(r->mods, (r->nr_mods + 1) * sizeof(*r->mods));
	memset(&r->mods[r->nr_mods], 0, sizeof(r->mods[0]));
	r->mods[r->nr_mods].id = id;
	if (m && m->ptx) {
		char *path = xasprintf("%s/%s", r->in->dir, m->ptx);

		r->mods[r->nr_mods].ptx = m->ptx;
		r->mods[r->nr_mods].sf = source_file_load(path);
		if (r->mods[r->nr_mods].sf &&
		    ptx_parse(path, r->mods[r->nr_mods].sf->text, r->mods[r->nr_mods].sf->len,
			      &r->mods[r->nr_mods].pm))
			r->mods[r->nr_mods].pm = NULL;
		error_clear();
		free(path);
	}
	*ptx = r->mods[r->nr_mods].ptx;
	return r->mods[r->nr_mods++].sf;
}

static struct kernel_def *kernel_def(struct resolver *r, long source, const struct report_kernel *k)
{
	struct kernel_def *d;
	char *name = source_kernel_base_name(k->name, k->demangled);
	size_t i;

	for (i = 0; i < r->nr_defs; i++) {
		if (r->defs[i].source == source && name && r->defs[i].name &&
		    !strcmp(r->defs[i].name, name)) {
			free(name);
			return &r->defs[i];
		}
	}
	r->defs = xrealloc(r->defs, (r->nr_defs + 1) * sizeof(*r->defs));
	d = &r->defs[r->nr_defs++];
	memset(d, 0, sizeof(*d));
	d->source = source;
	d->name = name;
	if (name)
		d->found = source_file_find_kernel(r->in->sources[source].file, name, &d->def);
	return d;
}

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
static int find_in_helper(struct resolver *r, struct cand *c, const struct kernel_def *d,
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
	if (h->call_line && l->line && d->def.body_first_line &&
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
 * Finds the struct (emitters/source_types.h) and sets c->rw.elem_type to
 * the member's type (through a #define or typedef); 0 with c->why when it
 * cannot.
 */
static int member_type(struct resolver *r, struct cand *c, const struct report_source *src,
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

/*
 * The line reads the parameter through a local pointer into it ("const
 * float *row = a + i * k;" then "row[1]"): the one alias of the kernel's
 * body (source_pointer_aliases) that the line reads once takes the
 * parameter's place, with its own declared type. c->rw stays as it was
 * (not found) when none or several do. The aliases are the kernel's; once
 * they are found they are kept in c->alias_* for the hint.
 */
static void find_through_alias(struct cand *c, const struct kernel_def *d,
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

/* Finds the load's expression on its line; sets c->ok or c->why. */
static void find_expression(struct resolver *r, struct cand *c)
{
	struct report_load *l = c->l;
	struct report_source *src;
	struct kernel_def *d;
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
	d = kernel_def(r, l->hint.source_index, c->k);
	if (!d->name) {
		c->why = xasprintf("cannot read the kernel name '%s'", c->k->name);
		return;
	}
	if (d->found == 0) {
		c->why = xasprintf("kernel '%s' is not defined in '%s'", d->name, src->path);
		return;
	}
	if (d->found < 0) {
		c->why = xasprintf("'%s' defines kernel '%s' more than once (overloads or "
				   "specialisations): cannot tell which one this is", src->path, d->name);
		return;
	}
	if (source_ld_type_parse(l->instruction, &t) || !source_ld_type_supported(&t)) {
		c->why = xasprintf("no load helper reads .%s", ld_type_text(l->instruction));
		return;
	}
	if ((size_t)l->line < d->def.body_first_line || (size_t)l->line > d->def.body_last_line) {
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

static void set_unchanged_message(struct cand *c)
{
	struct report_load *l = c->l;
	int decided = !strcmp(l->decision, "cache") || !strcmp(l->decision, "bypass");

	if (decided && !l->action) {
		double speedup;
		int kept = 1;
		const char *reason = c->k->verdict ? c->k->verdict->reason : NULL;

		if (report_kernel_verified(c->k, &speedup, &kept) && !kept)
			l->hint.message = xasprintf("the analysis advises to %s, but the verification "
						    "rejected this kernel's advice (%.3gx%s%s): left as is",
						    !strcmp(l->decision, "bypass") ? "bypass L1" :
						    "cache in L1", speedup, reason ? ", " : "",
						    reason ? reason : "");
		else
			l->hint.message = xasprintf("the analysis advises to %s, but the plan leaves "
						    "the load as is", !strcmp(l->decision, "bypass") ?
						    "bypass L1" : "cache in L1");
	} else if (!strcmp(l->decision, "cache")) {
		l->hint.message = xstrdup("keep as is: caching in L1 pays");
	} else if (!strcmp(l->decision, "bypass")) {
		l->hint.message = xstrdup("already bypasses L1 as advised");
	} else if (!strcmp(l->decision, "keep")) {
		l->hint.message = l->reason ? xasprintf("keep as is: %s", l->reason) :
			xstrdup("keep as is: caching or bypassing makes no measured difference");
	} else if (!strcmp(l->decision, "not patchable")) {
		l->hint.message = xasprintf("not advised: the load is never rewritten (%s)",
					    l->unpatchable_reason ? l->unpatchable_reason :
					    l->reason ? l->reason : "a strong load or an ldu");
	} else if (l->reason) {
		l->hint.message = xasprintf("not advised: %s", l->reason);
	} else {
		l->hint.message = xstrdup(l->measured ? "not advised: the load was not measured" :
					  "not advised: the load was not measured (beyond --max-loads)");
	}
}

/*
 * The origin of a module the program loaded from memory at run time
 * ("cuModuleLoadData#2", "cuLibraryLoadData#0": NVRTC's output, a JIT of
 * the program's own), NULL for one of the program's fatbins or a file.
 */
static const char *loaded_from_memory(const struct report_input *in, const char *module)
{
	static const char *const apis[] = { "cuModuleLoadData#", "cuModuleLoadDataEx#",
					    "cuModuleLoadFatBinary#", "cuLibraryLoadData#" };
	const struct capture_module *m = capture_find_module(&in->model, module);
	size_t i;

	for (i = 0; m && m->origin && i < ARRAY_SIZE(apis); i++)
		if (!strncmp(m->origin, apis[i], strlen(apis[i])))
			return m->origin;
	return NULL;
}

static void decide(struct resolver *r, struct cand *c)
{
	struct report_load *l = c->l;
	struct source_hint *h = &l->hint;
	struct report_source *src = h->source_index >= 0 ? &r->in->sources[h->source_index] : NULL;
	const char *lib, *mem = loaded_from_memory(r->in, c->k->module);

	if (!l->changes) {
		h->status = SOURCE_HINT_NONE;
		set_unchanged_message(c);
	} else if (!l->file) {
		h->status = SOURCE_HINT_NO_LINEINFO;
		h->message = mem ?
			xasprintf("no source line: the program loaded this module from memory at run "
				  "time (%s) without line info; compiled by NVRTC, pass \"-lineinfo\" "
				  "to nvrtcCompileProgram to map loads to source lines; meanwhile "
				  "cacheadvise run --plan applies the advice (here: PTX line %u of %s)",
				  mem, l->ptx_line, h->ptx_path ? h->ptx_path : "?") :
			xasprintf("no source line: the PTX was built without -lineinfo; rebuild "
				  "with nvcc -lineinfo to map loads to source lines (here: PTX "
				  "line %u of %s)", l->ptx_line, h->ptx_path ? h->ptx_path : "?");
	} else if ((lib = ptx_toolkit_library(l->file))) {
		enum load_action a;
		enum l2_priority l2;
		const char *cub = NULL;

		/* CUB's own spelling of a load's cache operator, for its algorithms' inputs */
		if (!strcmp(lib, "CUB") && !load_form_parse(l->action, &a, &l2) &&
		    l2 == L2_PRIORITY_NONE)
			cub = a == LOAD_ACTION_CACHE ? "LOAD_CA" : a == LOAD_ACTION_BYPASS ? "LOAD_CG" :
			      a == LOAD_ACTION_STREAM ? "LOAD_CS" : NULL;
		h->status = SOURCE_HINT_OUTSIDE_ROOT;
		h->message = xasprintf("in %s, a header of the CUDA Toolkit (%s:%d): the library's "
				       "code, not yours, so not rewritten; cacheadvise run --plan applies "
				       "it without a change%s%s%s", lib, ptx_toolkit_include_name(l->file), l->line,
				       cub ? " (for a CUB algorithm's input, cub::CacheModifiedInputIterator<cub::" : "",
				       cub ? cub : "", cub ? ", T> gives its loads this form)" : "");
	} else if (!src->under_root) {
		h->status = SOURCE_HINT_OUTSIDE_ROOT;
		h->message = xasprintf("'%s' is outside the source root '%s': not rewritten",
				       src->path, r->in->source_root ? r->in->source_root : "?");
	} else if (!src->file) {
		h->status = SOURCE_HINT_NO_SOURCE;
		h->message = mem ?
			xasprintf("cannot read '%s': the program loaded this module from memory at "
				  "run time (%s), as it does NVRTC's output: where '%s' is the name "
				  "of a source string, there is no file to patch and cacheadvise run "
				  "--plan applies the advice; where it is a file, pass --source-root "
				  "with its directory", src->read_path, mem, src->path) :
			xasprintf("cannot read '%s': pass --source-root with the directory that "
				  "holds '%s'", src->read_path, src->path);
	} else if (c->py) {
		h->status = SOURCE_HINT_NONE;   /* python_hints() decides */
	} else if (!c->helper && !strcmp(l->action, "default")) {
		h->status = SOURCE_HINT_NOT_REWRITTEN;
		h->message = xasprintf("not rewritten: the plan makes this %s a plain load; in the "
				       "source, drop the cache hint or helper that qualifies it",
				       l->instruction);
	} else if (!c->helper) {
		h->status = SOURCE_HINT_NO_SOURCE_FORM;
		h->message = xasprintf("'%s' has no source form (a strong or legacy operator): apply "
				       "it without rebuilding, with cacheadvise run --plan", l->action);
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
static void check_conflicts(struct cand *cands, size_t n)
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
				f->follows = cands[i].l->action;
				cands[j].helper = a;
				if (!f->elem_type && h->elem_type)
					f->elem_type = xstrdup(h->elem_type);
				f->message = xasprintf("rewritten with load %u (%s), the same expression: "
						       "this copy read %.2g%% of its sectors", cands[i].l->ordinal,
						       cands[i].l->action, cands[i].l->access > 0 ?
						       100.0 * cands[j].l->access / cands[i].l->access : 0.0);
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
					       other, b ? cands[j].l->action : "no change");
			free(other);
			h->helper = NULL;
			break;
		}
	}
}

/* How many kernels of module id are instantiations of the template whose
 * base name is name ("axpy" for axpy<float> and axpy<double>). */
static size_t template_instances(struct resolver *r, const char *id, const char *name)
{
	const char *ptx_path;
	const struct ptx_module *pm;
	size_t i, n = 0;

	module_ptx(r, id, &ptx_path);
	pm = module_model(r, id);
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
static void check_templates(struct resolver *r, struct cand *cands, size_t n)
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
					       nr_seen == 1 ? "is" : "are", cands[i].l->action);
			h->helper = NULL;
		}
		free(seen);
		free(name);
	}
}

static void apply_lines(struct resolver *r, struct cand *cands, size_t n)
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

/*
 * A helper line rewritten in place changes every call of the helper: that
 * is right only when every call in the file is an advised call site of a
 * load on that line wanting the same form. Otherwise the call sites get
 * copies (make_variants).
 * NEEDSWORK: calls from other translation units (a helper in a header) are
 * not seen here.
 */
static void check_other_calls(struct resolver *r, struct cand *cands, size_t n)
{
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		struct cand *c = &cands[i];
		const struct source_file *sf;
		size_t *lines = NULL, nr;

		if (!c->inl || c->variant || c->l->hint.status != SOURCE_HINT_REWRITTEN)
			continue;
		sf = r->in->sources[c->l->hint.source_index].file;
		nr = source_file_call_lines(sf, c->l->hint.inlined_in, &lines);
		for (k = 0; k < nr && !c->variant; k++) {
			int covered = 0;

			for (j = 0; j < n && !covered; j++) {
				const struct cand *o = &cands[j];

				covered = o->inl && o->l->hint.source_index == c->l->hint.source_index &&
					  o->l->line == c->l->line &&
					  (size_t)o->l->hint.call_line == lines[k] &&
					  o->l->hint.status == SOURCE_HINT_REWRITTEN && o->helper &&
					  !strcmp(o->helper, c->helper);
			}
			if (!covered)
				c->variant = 1;
		}
		free(lines);
	}
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
static int same_variant(const struct cand *a, const struct cand *b)
{
	return b->variant && b->l->hint.status == SOURCE_HINT_REWRITTEN &&
	       a->l->hint.source_index == b->l->hint.source_index &&
	       a->fn.decl_line == b->fn.decl_line && !strcmp(a->l->action, b->l->action);
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
static char *helper_copy(const struct source_file *sf, const struct cand *cands, size_t n,
			 const struct cand *c, const char *vname, const char *ghelper, char **why)
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
static void make_variants(struct resolver *r, struct cand *cands, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct cand *c = &cands[i];
		struct source_hint *h = &c->l->hint;
		const struct source_file *sf;
		const char *ghelper = c->helper, *call_text;
		char *vname, *copy = NULL, *why = NULL, *call = NULL;
		size_t len;
		enum load_action action;
		enum l2_priority l2;

		if (!c->variant || h->status != SOURCE_HINT_REWRITTEN || h->rewritten)
			continue;
		sf = r->in->sources[h->source_index].file;
		vname = xasprintf("%s_%s", h->inlined_in, action_suffix(c->l->action));
		for (j = 0; j < n; j++)
			if (same_variant(c, &cands[j]) && strcmp(cands[j].helper, ghelper) &&
			    !load_form_parse(c->l->action, &action, &l2))
				ghelper = source_helper_name(action, l2, 0, 0);
		if (has_ident(sf->text, vname))
			why = xasprintf("'%s' already defines or uses '%s'", h->path, vname);
		else
			copy = helper_copy(sf, cands, n, c, vname, ghelper, &why);
		/* Each call site of the group: one call of the helper on its line,
		 * and every load of the helper there wants what the copy does. */
		for (j = 0; j < n && copy; j++) {
			struct cand *o = &cands[j];
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
				const struct cand *p = &cands[q];
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
					!strcmp(p->l->action, c->l->action);
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
			struct cand *o = &cands[j];
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
static void check_patch_lines(struct cand *cands, size_t n)
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

static void describe_rewrites(struct cand *cands, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct report_load *l = cands[i].l;
		int na;

		if (l->hint.status != SOURCE_HINT_REWRITTEN || l->hint.follows)
			continue;   /* a follower keeps check_conflicts' message */
		na = !strcmp(l->action, "L1::no_allocate");
		if (l->hint.rewrite_line) {
			l->hint.message = xasprintf("%s in source.patch: line %zu calls a copy of "
						    "helper '%s' whose line %d %s the load through "
						    "%s() (its other call sites want another form)",
						    na ? "bypass L1" : l->action,
						    l->hint.rewrite_line, l->hint.inlined_in, l->line,
						    na ? "reads" : "marks", l->hint.helper);
			continue;
		}
		if (cands[i].alias)
			l->hint.message = xasprintf("%s in source.patch: %s the load through %s() "
						    "(the line reads '%s' through '%s', a pointer "
						    "into it)", na ? "bypass L1" : l->action,
						    na ? "reads" : "marks", l->hint.helper,
						    cands[i].alias_of, cands[i].alias);
		else
			l->hint.message = xasprintf("%s in source.patch: %s the load through %s()",
						    na ? "bypass L1" : l->action,
						    na ? "reads" : "marks", l->hint.helper);
	}
}

/* ---- Triton kernels: tl.load calls in Python (issue 27) ------------------ */

/* What a Triton form sets, for the user: eviction_policy="evict_last". */
static char *tl_form_text(const struct tl_load_edit *e)
{
	if (e->eviction_policy)
		return xasprintf("eviction_policy=\"%s\"", e->eviction_policy);
	if (e->cache_modifier)
		return xasprintf("cache_modifier=\"%s\"", e->cache_modifier);
	return xstrdup("no eviction_policy or cache_modifier");
}

static void set_hint(struct source_hint *h, enum source_hint_status st, char *message)
{
	h->status = st;
	free(h->message);
	h->message = message;
}

/*
 * The loads of Triton kernels: a tl.load compiles to several PTX loads
 * with its line and column, which are one decision. Each call whose loads
 * the plan changes, all to one form Triton can write, gets its keyword
 * arguments rewritten by emitters/tl_load_rewrite.py; loads of the call the
 * plan leaves alone follow it.
 */
static void python_hints(struct resolver *r, struct cand *cands, size_t n)
{
	/* the user's choice or python3 from PATH; never the capture's program */
	const char *python = python_rewrite_interpreter(r->in->python);
	size_t i, j, s;

	for (i = 0; i < r->in->nr_sources; i++) {
		const struct report_source *src = &r->in->sources[i];
		struct site { int line, column; const char *action; int mixed, formless;
			      struct tl_load_edit e; } *sites = NULL;
		struct tl_load_edit *edits;
		struct tl_load_result *res;
		size_t ns = 0;

		if (!src->file || !src->under_root || !load_sites_is_python(src->path))
			continue;
		/* the calls, by line and column, and the form their advised loads want */
		for (j = 0; j < n; j++) {
			const struct report_load *l = cands[j].l;

			if (!cands[j].py || l->hint.source_index != (long)i || !l->changes ||
			    !l->action || !l->line)
				continue;
			for (s = 0; s < ns; s++)
				if (sites[s].line == l->line && sites[s].column == l->column)
					break;
			if (s == ns) {
				sites = xrealloc(sites, (ns + 1) * sizeof(*sites));
				memset(&sites[ns], 0, sizeof(*sites));
				sites[ns].line = l->line;
				sites[ns].column = l->column;
				sites[ns].action = l->action;
				sites[ns].formless = !tl_load_form_of_action(l->action, &sites[ns].e);
				ns++;
			} else if (strcmp(sites[s].action, l->action)) {
				sites[s].mixed = 1;
			}
		}
		edits = xcalloc(ns + 1, sizeof(*edits));
		res = xcalloc(ns + 1, sizeof(*res));
		for (s = 0; s < ns; s++) {
			edits[s] = sites[s].e;
			edits[s].line = sites[s].line;
			edits[s].column = sites[s].column;
			if (sites[s].mixed || sites[s].formless ||
			    inductor_generated(r->in->sources[i].read_path)) {
				/* not asked of the helper: a call that is not there */
				edits[s].line = 0;
			}
		}
		if (ns && tl_load_rewrite(python, src->file->text, edits, ns, res)) {
			for (s = 0; s < ns; s++) {
				res[s].status = TL_LOAD_NOT_FOUND;
				res[s].why = xstrdup(error_message());
			}
			error_clear();
		}
		for (j = 0; j < n; j++) {
			struct report_load *l = cands[j].l;
			struct source_hint *h = &l->hint;
			char *form;

			if (!cands[j].py || h->source_index != (long)i || !l->line)
				continue;
			for (s = 0; s < ns; s++)
				if (sites[s].line == l->line && sites[s].column == l->column)
					break;
			if (s == ns)
				continue;   /* a call the plan does not change */
			form = tl_form_text(&sites[s].e);
			if (inductor_generated(l->file)) {
				set_hint(h, SOURCE_HINT_NOT_REWRITTEN, xasprintf(
					"not rewritten: torch.compile generated this kernel (%s), so "
					"it is not your source to patch; apply the advice without a "
					"change with cacheadvise run --plan", l->file));
			} else if (sites[s].mixed) {
				set_hint(h, SOURCE_HINT_NOT_REWRITTEN, xasprintf(
					"not rewritten: the PTX loads of the tl.load at %s:%d:%d are "
					"advised different forms; apply them without a change with "
					"cacheadvise run --plan", src->path, l->line, l->column));
			} else if (sites[s].formless) {
				set_hint(h, SOURCE_HINT_NO_SOURCE_FORM, xasprintf(
					"'%s' has no Triton form (tl.load sets eviction_policy "
					"evict_first or evict_last, for L1 and L2 at once, and "
					"cache_modifier .ca or .cg): apply it without a change with "
					"cacheadvise run --plan", sites[s].action));
			} else if (res[s].status == TL_LOAD_REWRITTEN) {
				h->status = SOURCE_HINT_REWRITTEN;
				h->rewrite_line = res[s].first;
				h->rewrite_last = res[s].last;
				free(h->rewritten);
				h->rewritten = xstrdup(res[s].text);
				if (!l->changes)
					h->follows = sites[s].action;
				set_hint(h, SOURCE_HINT_REWRITTEN, xasprintf(
					"%s in source.patch: the tl.load at %s:%d:%d (Triton)", form,
					src->path, l->line, l->column));
			} else if (res[s].status == TL_LOAD_UNCHANGED) {
				set_hint(h, SOURCE_HINT_NONE, xasprintf(
					"the tl.load at %s:%d:%d already has %s", src->path, l->line,
					l->column, form));
			} else {
				set_hint(h, SOURCE_HINT_NOT_REWRITTEN, xasprintf("not rewritten: %s",
					 res[s].why ? res[s].why : "the call was not found"));
			}
			free(form);
		}
		for (s = 0; s < ns; s++)
			tl_load_result_release(&res[s]);
		free(res);
		free(edits);
		free(sites);
	}
}

/* The kernel's async copies from its module's PTX (report_kernel.async_copies). */
static void async_copies(struct resolver *r, struct report_kernel *k)
{
	const struct ptx_module *pm;
	const struct ptx_function *pf;
	struct ptx_async_site *sites;
	const char *ptx_path;
	size_t i, nr;

	module_ptx(r, k->module, &ptx_path);
	pm = module_model(r, k->module);
	pf = pm ? ptx_module_find(pm, k->name) : NULL;
	if (!pf)
		return;
	nr = ptx_async_copy_sites(pf, &sites);
	if (!nr)
		return;
	k->async_copies = xcalloc(nr, sizeof(*k->async_copies));
	for (i = 0; i < nr; i++) {
		k->async_copies[i].file = sites[i].file && sites[i].line > 0 ?
					  xstrdup(sites[i].file) : NULL;
		k->async_copies[i].line = sites[i].line;
		k->async_copies[i].copies = sites[i].copies;
	}
	k->nr_async_copies = nr;
	free(sites);
}

void source_hints_resolve(struct report_input *in)
{
	struct resolver r = { in, NULL, 0, NULL, 0, { NULL, NULL, 0, NULL, 0, NULL, 0 } };
	struct cand *cands;
	size_t i, j, n = 0, at = 0;

	source_types_init(&r.types, in->lookup_root);

	for (i = 0; i < in->nr_kernels; i++)
		n += in->kernels[i].nr_loads;
	cands = xcalloc(n + 1, sizeof(*cands));
	for (i = 0; i < in->nr_kernels; i++)
		async_copies(&r, &in->kernels[i]);
	for (i = 0; i < in->nr_kernels; i++) {
		struct report_kernel *k = &in->kernels[i];

		for (j = 0; j < k->nr_loads; j++) {
			struct report_load *l = &k->loads[j];
			struct source_hint *h = &l->hint;
			struct cand *c = &cands[at++];
			struct source_file *ptx;
			const struct ptx_module *pm;
			const struct ptx_function *pf;
			const char *ptx_path = NULL, *text;
			enum load_action action;
			enum l2_priority l2;
			size_t len;

			c->k = k;
			c->l = l;
			h->source_index = -1;
			ptx = module_ptx(&r, k->module, &ptx_path);
			if (ptx_path)
				h->ptx_path = xstrdup(ptx_path);
			if (ptx && l->ptx_line && (text = source_file_line(ptx, l->ptx_line, &len)))
				h->ptx_text = trimmed(text, len);
			/* the column from the module's PTX (Triton: which tl.load of the line) */
			if (l->file && (pm = module_model(&r, k->module)) &&
			    (pf = ptx_module_find(pm, k->name)) && l->ordinal < pf->nr_loads &&
			    pf->loads[l->ordinal].line == l->line)
				l->column = pf->loads[l->ordinal].column;
			if (l->file && (pm = module_model(&r, k->module)) &&
			    (pf = ptx_module_find(pm, k->name)) && l->ordinal < pf->nr_loads &&
			    pf->loads[l->ordinal].line == l->line &&
			    pf->loads[l->ordinal].inline_depth == 1 &&
			    !strcmp(pf->loads[l->ordinal].call_file, pf->loads[l->ordinal].file))
				h->call_line = pf->loads[l->ordinal].call_line;
			if (l->file) {
				h->source_index = source_index(in, l->file);
				h->path = xstrdup(in->sources[h->source_index].path);
				if (in->sources[h->source_index].file &&
				    (text = source_file_line(in->sources[h->source_index].file,
							     (size_t)l->line, &len)))
					h->source_text = xstrndup(text, len);
			}
			c->py = load_sites_is_python(l->file);
			if (c->py)
				continue;   /* a Triton kernel's tl.load: python_hints() */
			if (l->changes && l->action && !load_form_parse(l->action, &action, &l2))
				c->helper = source_helper_name(action, l2,
							       strstr(l->instruction, ".nc") != NULL,
							       l->read_only);
			find_expression(&r, c);
		}
	}
	for (i = 0; i < n; i++)
		decide(&r, &cands[i]);
	check_conflicts(cands, n);
	check_templates(&r, cands, n);
	check_other_calls(&r, cands, n);
	make_variants(&r, cands, n);
	apply_lines(&r, cands, n);
	check_patch_lines(cands, n);
	describe_rewrites(cands, n);
	python_hints(&r, cands, n);

	for (i = 0; i < n; i++) {
		source_rewrite_release(&cands[i].rw);
		source_kernel_release(&cands[i].fn);
		free(cands[i].why);
		free(cands[i].alias);
		free(cands[i].alias_type);
		free(cands[i].alias_of);
	}
	free(cands);
	for (i = 0; i < r.nr_defs; i++) {
		free(r.defs[i].name);
		if (r.defs[i].found == 1)
			source_kernel_release(&r.defs[i].def);
	}
	free(r.defs);
	source_types_release(&r.types);
	for (i = 0; i < r.nr_mods; i++) {
		source_file_free(r.mods[i].sf);
		ptx_module_free(r.mods[i].pm);
	}
	free(r.mods);
}
