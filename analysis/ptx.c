#include "analysis/ptx.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ptx_internal.h"
#include "base/xalloc.h"

/* ------------------------------------------------------ after parsing */

/* The first function called name (in the module's order), or -1. */
static int find_function_index(const struct ptx_module *m, const char *name)
{
	size_t i, lo = 0, hi = m->nr_functions;

	if (!m->by_name) {
		for (i = 0; i < m->nr_functions; i++)
			if (!strcmp(m->functions[i].name, name))
				return (int)i;
		return -1;
	}
	while (lo < hi) {           /* the leftmost name >= name */
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(m->by_name[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nr_functions && !strcmp(m->by_name[lo].name, name) ?
	       (int)m->by_name[lo].index : -1;
}

static int cmp_function_name(const void *a, const void *b)
{
	const struct ptx_function_name *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : (x->index > y->index) - (x->index < y->index);
}

/* Sorts the functions' names into m->by_name. */
static void index_functions(struct ptx_module *m)
{
	size_t i;

	m->by_name = xmalloc((m->nr_functions + 1) * sizeof(*m->by_name));
	for (i = 0; i < m->nr_functions; i++) {
		m->by_name[i].name = m->functions[i].name;
		m->by_name[i].index = i;
	}
	qsort(m->by_name, m->nr_functions, sizeof(*m->by_name), cmp_function_name);
}

/* A header of the CUDA toolkit (intrinsics, cccl), not the user's source. */
static int toolkit_path(const char *p);

const char *ptx_toolkit_library(const char *path)
{
	if (!toolkit_path(path))
		return NULL;
	if (strstr(path, "/cub/"))
		return "CUB";
	if (strstr(path, "/thrust/"))
		return "Thrust";
	if (strstr(path, "/cuda/std/") || strstr(path, "/cuda/__") || strstr(path, "libcudacxx"))
		return "libcu++";
	if (strstr(path, "cooperative_groups"))
		return "cooperative groups";
	return "the CUDA Toolkit";
}

const char *ptx_toolkit_include_name(const char *path)
{
	const char *s, *t;

	if (!toolkit_path(path))
		return NULL;
	if ((s = strstr(path, "/include/cccl/")))
		return s + 14;
	for (s = NULL, t = strstr(path, "/include/"); t; t = strstr(t + 1, "/include/"))
		s = t;
	return s ? s + 9 : path;
}

static int toolkit_path(const char *p)
{
	const char *s;

	if (!p)
		return 0;
	if (strstr(p, "/targets/") && strstr(p, "/include/"))
		return 1;
	if (strstr(p, "/include/cccl/") || strstr(p, "/include/crt/"))
		return 1;
	for (s = strstr(p, "/cuda"); s; s = strstr(s + 1, "/cuda")) {
		const char *t = s + 5;
		while (*t == '-' || *t == '.' || (*t >= '0' && *t <= '9'))
			t++;
		if (!strncmp(t, "/include/", 9))
			return 1;
	}
	return 0;
}

static const char *file_name(const struct ptx_module *m, unsigned idx)
{
	return idx < m->nr_files ? m->files[idx] : NULL;
}

static int clamp_int(unsigned v)
{
	return (int)(v > INT_MAX ? INT_MAX : v);
}

/*
 * The .loc that the inlined .loc r was inlined at (its inlined_at's file
 * and line), found back along the .loc lines before it; -1 when none.
 * Bounded: a chain of inlined .loc lines may be long.
 */
static long loc_caller(const struct parser *P, long r)
{
	const struct loc_rec *at = &P->locs[r];
	long up = at->parent;
	int walk = 0;

	while (up >= 0 && walk++ < 256 &&
	       !(P->locs[up].file == at->inl_file && P->locs[up].line == at->inl_line))
		up = P->locs[up].parent;
	return walk > 256 ? -1 : up;
}

/*
 * The inlining chain of the .loc r (the load's user-code line): each call
 * site from the innermost out to the call in the body of the function
 * being compiled, which is also kept apart with the chain's depth.
 */
static void call_site(struct parser *P, struct ptx_load *ld, long r)
{
	struct ptx_module *m = P->m;
	struct ptx_call_site *chain = NULL;
	size_t nr = 0, alloc = 0;

	while (r >= 0 && P->locs[r].has_inl && nr < 64) {
		const struct loc_rec *at = &P->locs[r];

		ALLOC_GROW(chain, nr + 1, alloc);
		chain[nr++] = (struct ptx_call_site){ file_name(m, at->inl_file),
						      clamp_int(at->inl_line),
						      clamp_int(at->inl_col) };
		r = loc_caller(P, r);
	}
	if (!nr || !chain[nr - 1].file) {
		free(chain);
		return;
	}
	ld->call_file = chain[nr - 1].file;
	ld->call_line = chain[nr - 1].line;
	ld->inline_depth = (int)nr;
	ld->inlined_at = chain;
}

/*
 * The source line of a load: the innermost .loc, unless that lies in a
 * toolkit header (__ldg, atomics), in which case the call site it was
 * inlined at, walking outwards until user code.
 */
static void resolve_locations(struct parser *P)
{
	struct ptx_module *m = P->m;
	/* Per file: 1 a toolkit header, 0 not (computed once, not per load). */
	unsigned char *tk = xmalloc(m->nr_files + 1);
	size_t i;

	for (i = 0; i < m->nr_files; i++)
		tk[i] = (unsigned char)toolkit_path(m->files[i]);

	for (i = 0; i < P->nr_load_locs; i++) {
		struct ptx_function *f = &m->functions[P->load_locs[i].fn];
		struct ptx_load *ld = P->load_locs[i].memop ? NULL : &f->loads[P->load_locs[i].load];
		long r = P->load_locs[i].loc;
		unsigned file, line;
		int steps = 0, column;

		if (r < 0)
			continue;
		file = P->locs[r].file;
		line = P->locs[r].line;
		while (file < m->nr_files && tk[file] && P->locs[r].has_inl && steps++ < 64) {
			long up = loc_caller(P, r);

			file = P->locs[r].inl_file;
			line = P->locs[r].inl_line;
			if (up < 0)
				break;
			r = up;
		}
		if (!file_name(m, file))
			continue;
		column = P->locs[r].file == file && P->locs[r].line == line &&
			 P->locs[r].col <= INT_MAX ? (int)P->locs[r].col : 0;
		if (!ld) {
			struct ptx_memop *op = &f->memops[P->load_locs[i].load];

			op->file = file_name(m, file);
			op->line = clamp_int(line);
			op->column = column;
			continue;
		}
		ld->file = file_name(m, file);
		ld->line = clamp_int(line);
		ld->column = column;
		if (P->locs[r].file == file && P->locs[r].line == line)
			call_site(P, ld, r);
	}
	free(tk);
}

static const char *unpatchable_reason(const struct ptx_load *ld)
{
	if (ld->is_ldu)
		return "ldu loads are never rewritten";
	if (ld->strong) {
		if (ld->cache_op == PTX_CACHE_OP_CV)
			return "strong load (.cv)";
		return "strong load (.volatile, .relaxed, .acquire or .mmio)";
	}
	if (ld->cache_op == PTX_CACHE_OP_CG)
		return "already .cg, a strong load on sm_70 and later";
	if (ld->cache_op == PTX_CACHE_OP_CA)
		return "already .ca, a strong load on sm_70 and later";
	if (ld->space == PTX_SPACE_GENERIC && ld->patchable != 2)
		return "generic address not proven to be global";
	return NULL;
}

static void finish_module(struct parser *P)
{
	struct ptx_module *m = P->m;
	size_t i, j;

	index_functions(m);
	ptx_resolve_written(P);
	resolve_locations(P);
	for (i = 0; i < m->nr_functions; i++) {
		struct ptx_function *f = &m->functions[i];
		const struct flow *fl = &P->flows[i];
		for (j = 0; j < f->nr_loads; j++) {
			struct ptx_load *ld = &f->loads[j];
			ld->unpatchable_reason = unpatchable_reason(ld);
			ld->patchable = ld->unpatchable_reason == NULL;
			if (ld->param >= 0 && (size_t)ld->param < f->nr_params)
				ld->read_only = fl->written[ld->param] ? 0 : 1;
			else
				ld->read_only = -1;
		}
	}
}

/* ------------------------------------------------------ public */

void ptx_module_free(struct ptx_module *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_functions; i++)
		ptx_function_release(&m->functions[i]);
	free(m->functions);
	for (i = 0; i < m->nr_files; i++)
		free(m->files[i]);
	free(m->files);
	for (i = 0; i < m->nr_variables; i++)
		free(m->variables[i].name);
	free(m->variables);
	free(m->by_name);
	free(m->text);
	free(m);
}

int ptx_parse(const char *name, const char *text, size_t len, struct ptx_module **out)
{
	struct parser P;
	struct ptx_module *m;
	int ret;
	size_t i;

	*out = NULL;
	m = xcalloc(1, sizeof(*m));
	m->text = xmalloc(len + 1);
	if (len)
		memcpy(m->text, text, len);
	m->text[len] = '\0';
	m->len = len;
	m->address_size = 32;   /* the PTX default without .address_size */

	memset(&P, 0, sizeof(P));
	P.name = name ? name : "PTX";
	P.m = m;
	P.base = m->text;
	P.p = m->text;
	P.end = m->text + len;
	P.line = 1;
	P.cur_loc = -1;

	ret = ptx_parse_module(&P);
	if (!ret)
		finish_module(&P);

	for (i = 0; i < P.alloc_flows; i++)
		ptx_flow_release(&P.flows[i]);
	free(P.flows);
	for (i = 0; i < P.nr_calls; i++) {
		free(P.calls[i].callee);
		free(P.calls[i].args);
	}
	free(P.calls);
	free(P.shvars);
	free(P.shvar_seen);
	ptx_regmap_release(&P.shnames);
	free(P.locs);
	free(P.load_locs);
	free(P.defs);
	free(P.uses);
	free(P.pstores);
	free(P.vals);
	ptx_regmap_release(&P.regs);
	if (ret) {
		ptx_module_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

const struct ptx_function *ptx_module_find(const struct ptx_module *m, const char *name)
{
	int i = find_function_index(m, name);
	return i < 0 ? NULL : &m->functions[i];
}

const char *ptx_cache_op_name(enum ptx_cache_op op)
{
	switch (op) {
	case PTX_CACHE_OP_CA: return "ca";
	case PTX_CACHE_OP_CG: return "cg";
	case PTX_CACHE_OP_CS: return "cs";
	case PTX_CACHE_OP_LU: return "lu";
	case PTX_CACHE_OP_CV: return "cv";
	default: return "default";
	}
}

const char *ptx_l1_eviction_name(enum ptx_l1_eviction ev)
{
	switch (ev) {
	case PTX_L1_EVICT_NORMAL: return "L1::evict_normal";
	case PTX_L1_EVICT_UNCHANGED: return "L1::evict_unchanged";
	case PTX_L1_EVICT_FIRST: return "L1::evict_first";
	case PTX_L1_EVICT_LAST: return "L1::evict_last";
	case PTX_L1_NO_ALLOCATE: return "L1::no_allocate";
	default: return "default";
	}
}

size_t ptx_async_copy_sites(const struct ptx_function *f, struct ptx_async_site **out)
{
	struct ptx_async_site *sites = NULL;
	size_t i, k, nr = 0, alloc = 0;

	for (i = 0; i < f->nr_memops; i++) {
		const struct ptx_memop *op = &f->memops[i];

		if (op->kind != PTX_MEMOP_ASYNC_COPY)
			continue;
		for (k = 0; k < nr; k++)
			if (sites[k].line == op->line && sites[k].column == op->column &&
			    (sites[k].file == op->file ||
			     (sites[k].file && op->file && !strcmp(sites[k].file, op->file))))
				break;
		if (k == nr) {
			ALLOC_GROW(sites, nr + 1, alloc);
			sites[nr].file = op->file;
			sites[nr].line = op->line;
			sites[nr].column = op->column;
			sites[nr].copies = 0;
			sites[nr].first_ptx_line = op->ptx_line;
			nr++;
		}
		sites[k].copies++;
	}
	*out = sites;
	return nr;
}
