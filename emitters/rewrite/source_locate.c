/*
 * Locating a PTX load in the source (emitters/rewrite/source_locate.h).
 */
#include "emitters/rewrite/source_locate.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/ptx.h"
#include "base/error.h"
#include "base/path.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/inductor.h"

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

long source_locate_file(struct report_input *in, const char *file)
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

/* The parsed PTX of module id, once source_locate_ptx() has read it; NULL if none. */
const struct ptx_module *source_locate_module(struct rewrite_resolver *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->nr_mods; i++)
		if (!strcmp(r->mods[i].id, id))
			return r->mods[i].pm;
	return NULL;
}

struct source_file *source_locate_ptx(struct rewrite_resolver *r, const char *id, const char **ptx)
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

struct rewrite_kernel_def *source_locate_kernel(struct rewrite_resolver *r, long source,
						 const struct report_kernel *k)
{
	struct rewrite_kernel_def *d;
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


void source_locate_init(struct rewrite_resolver *r, struct report_input *in)
{
	memset(r, 0, sizeof(*r));
	r->in = in;
	source_types_init(&r->types, in->lookup_root);
}

void source_locate_release(struct rewrite_resolver *r)
{
	size_t i;

	for (i = 0; i < r->nr_defs; i++) {
		free(r->defs[i].name);
		if (r->defs[i].found == 1)
			source_kernel_release(&r->defs[i].def);
	}
	free(r->defs);
	source_types_release(&r->types);
	for (i = 0; i < r->nr_mods; i++) {
		source_file_free(r->mods[i].sf);
		ptx_module_free(r->mods[i].pm);
	}
	free(r->mods);
}

/* The load of c in its module's PTX model, NULL when the model does not
 * have it at the capture's line. */
static const struct ptx_load *module_load(struct rewrite_resolver *r, const struct rewrite_cand *c)
{
	const struct ptx_module *pm = source_locate_module(r, c->k->module);
	const struct ptx_function *pf = pm ? ptx_module_find(pm, c->k->name) : NULL;

	if (!c->l->file || !pf || c->l->ordinal >= pf->nr_loads ||
	    pf->loads[c->l->ordinal].line != c->l->line)
		return NULL;
	return &pf->loads[c->l->ordinal];
}

/*
 * The PTX's path p as the capture records it: the capture's file of the
 * load may name another directory than the module's PTX (sources profiled
 * elsewhere, a capture edited), and the calls' files are in the same
 * tree: the directory part the two paths of the load do not share is
 * swapped. Returns a new string.
 */
static char *capture_path(const char *p, const char *ptx_file, const char *file)
{
	size_t a = strlen(ptx_file), b = strlen(file);

	while (a && b && ptx_file[a - 1] == file[b - 1]) {
		a--;
		b--;
	}
	if (!strncmp(p, ptx_file, a))
		return xasprintf("%.*s%s", (int)b, file, p + a);
	return xstrdup(p);
}

/* c's inlining chain and the files of its calls, from the PTX load pl. */
static void locate_calls(struct rewrite_resolver *r, struct rewrite_cand *c, const struct ptx_load *pl)
{
	char *path;

	c->direct_source = c->call_source = -1;
	if (!pl || pl->inline_depth < 1 || !pl->call_file || !pl->inlined_at[0].file)
		return;
	c->at = pl->inlined_at;
	c->nr_at = (size_t)pl->inline_depth;
	c->l->hint.call_line = pl->call_line;
	path = capture_path(pl->call_file, pl->file, c->l->file);
	c->call_source = source_locate_file(r->in, path);
	free(path);
	path = capture_path(pl->inlined_at[0].file, pl->file, c->l->file);
	c->direct_source = source_locate_file(r->in, path);
	free(path);
}

void source_locate_load(struct rewrite_resolver *r, struct rewrite_cand *c)
{
	struct report_kernel *k = c->k;
	struct report_load *l = c->l;
	struct source_hint *h = &l->hint;
	struct source_file *ptx;
	const struct ptx_load *pl;
	const char *ptx_path = NULL, *text;
	size_t len;

	h->source_index = -1;
	ptx = source_locate_ptx(r, k->module, &ptx_path);
	if (ptx_path)
		h->ptx_path = xstrdup(ptx_path);
	if (ptx && l->ptx_line && (text = source_file_line(ptx, l->ptx_line, &len)))
		h->ptx_text = trimmed(text, len);
	/* the column from the module's PTX (Triton: which tl.load of the line) */
	pl = module_load(r, c);
	if (pl)
		l->column = pl->column;
	if (l->file) {
		h->source_index = source_locate_file(r->in, l->file);
		h->path = xstrdup(r->in->sources[h->source_index].path);
		if (r->in->sources[h->source_index].file &&
		    (text = source_file_line(r->in->sources[h->source_index].file,
					     (size_t)l->line, &len)))
			h->source_text = xstrndup(text, len);
	}
	locate_calls(r, c, pl);
}

/* The kernel's async copies from its module's PTX (report_kernel.async_copies). */
void source_locate_async_copies(struct rewrite_resolver *r, struct report_kernel *k)
{
	const struct ptx_module *pm;
	const struct ptx_function *pf;
	struct ptx_async_site *sites;
	const char *ptx_path;
	size_t i, nr;

	source_locate_ptx(r, k->module, &ptx_path);
	pm = source_locate_module(r, k->module);
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

