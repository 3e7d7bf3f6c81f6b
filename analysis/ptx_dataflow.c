/*
 * The PTX parser (analysis/ptx_internal.h): dataflow. Which parameter each
 * register derives from, per function and across calls.
 */
#include "analysis/ptx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

static int val_eq(struct val a, struct val b)
{
	return a.kind == b.kind && a.strong == b.strong && a.param == b.param;
}

/* Two definitions of one register (a phi): both must agree. */
static struct val join_phi(struct val a, struct val b)
{
	if (a.kind == V_BOT || (a.kind == V_NONE && b.kind != V_BOT))
		return b;
	if (b.kind == V_BOT || b.kind == V_NONE)
		return a;
	if (a.kind == V_UNK || b.kind == V_UNK || a.param != b.param)
		return val_unk;
	return a.strong >= b.strong ? a : b;
}

/* base + offset: an index adds nothing; a certain address beats a guess. */
static struct val join_add(struct val a, struct val b)
{
	if (a.kind == V_BOT || a.kind == V_NONE)
		return b.kind == V_BOT ? a : b;
	if (b.kind == V_BOT || b.kind == V_NONE)
		return a;
	if (a.kind == V_PARAM && b.kind == V_PARAM) {
		if (a.param == b.param)
			return a.strong >= b.strong ? a : b;
		if (a.strong != b.strong)
			return a.strong ? a : b;
		return val_unk;
	}
	if (a.kind == V_PARAM && a.strong)
		return a;
	if (b.kind == V_PARAM && b.strong)
		return b;
	return val_unk;
}

/* ------------------------------------------------------ dataflow */

static struct val reg_val(const struct parser *P, int r)
{
	return r < 0 ? val_bot : P->vals[r];
}

/*
 * Solves the definitions: each register's value is the join of what every
 * definition gives it. Values only rise in a lattice of height 4, so the
 * number of passes is small; a cap bounds it on pathological input.
 */
static void solve_flow(struct parser *P)
{
	size_t i, pass, n = P->regs.nr;

	ALLOC_GROW(P->vals, n + 1, P->alloc_vals);
	for (i = 0; i < n; i++)
		P->vals[i] = val_bot;
	/* a module-scope .global variable's name is its address */
	for (i = 0; i < P->m->nr_variables; i++) {
		const char *name = P->m->variables[i].name;
		int r = P->m->variables[i].is_const ? -1 :
			ptx_regmap_find(&P->regs, name, strlen(name));

		if (r >= 0)
			P->vals[r] = (struct val){ V_PARAM, 1, -2 - (int)i };
	}
	for (pass = 0; pass < 64; pass++) {
		int changed = 0;
		for (i = 0; i < P->nr_defs; i++) {
			const struct def *d = &P->defs[i];
			struct val v, old = P->vals[d->dst], nv;
			switch (d->op) {
			case D_CONST:
				v = d->k;
				break;
			case D_COPY:
				v = reg_val(P, d->a);
				break;
			case D_STRONG:
				v = reg_val(P, d->a);
				if (v.kind == V_PARAM)
					v.strong = 1;
				break;
			case D_ADD:
				v = join_add(reg_val(P, d->a), reg_val(P, d->b));
				break;
			default:
				v = join_phi(reg_val(P, d->a), reg_val(P, d->b));
				break;
			}
			nv = join_phi(old, v);
			if (!val_eq(nv, old)) {
				P->vals[d->dst] = nv;
				changed = 1;
			}
		}
		if (!changed)
			break;
	}
}

/* The parameter a value derives from, -1 none or unknown. */
static int val_param(struct val v)
{
	return v.kind == V_PARAM && v.param >= 0 ? v.param : -1;
}

/* The module-scope variable a value derives from, -1 none. */
static int val_module_var(struct val v)
{
	return v.kind == V_PARAM && v.param <= -2 ? -2 - v.param : -1;
}

static void add_escape(struct flow *fl, int param, const char *callee, size_t arg)
{
	ALLOC_GROW(fl->esc, fl->nr_esc + 1, fl->alloc_esc);
	fl->esc[fl->nr_esc].param = param;
	fl->esc[fl->nr_esc].callee = callee ? xstrdup(callee) : NULL;
	fl->esc[fl->nr_esc].arg = arg;
	fl->nr_esc++;
}

/* After the body: parameters of loads and memops, what is written. */
void ptx_finish_function(struct parser *P, struct ptx_function *f)
{
	struct flow *fl = &P->flows[P->m->nr_functions];
	size_t i, k;

	solve_flow(P);
	fl->written = xcalloc(f->nr_params ? f->nr_params : 1, 1);
	for (i = 0; i < P->nr_uses; i++) {
		const struct use *u = &P->uses[i];
		int pi = val_param(reg_val(P, u->reg));
		switch (u->kind) {
		case U_LOAD: {
			struct ptx_load *ld = &f->loads[u->idx];
			struct val v = reg_val(P, u->reg);
			ld->param = pi;
			/*
			 * A generic address derived from a kernel's pointer
			 * parameter is global: CUDA passes only global (device or
			 * mapped host) pointers to kernels.
			 */
			if (ld->space == PTX_SPACE_GENERIC && f->is_entry && v.kind == V_PARAM &&
			    (size_t)pi < f->nr_params && f->params[pi].is_pointer_sized)
				ld->patchable = 2;  /* provisional: provably global */
			break;
		}
		case U_MEMOP: {
			struct ptx_memop *op = &f->memops[u->idx];
			op->param = pi;
			op->module_var = val_module_var(reg_val(P, u->reg));
			if (pi >= 0 && (op->kind == PTX_MEMOP_STORE || op->kind == PTX_MEMOP_ATOMIC))
				fl->written[pi] = 1;
			break;
		}
		case U_WRITE:
		case U_ESCAPE:
			if (pi >= 0)
				fl->written[pi] = 1;
			break;
		}
	}
	for (i = 0; i < P->nr_calls; i++) {
		struct call_rec *c = &P->calls[i];
		for (k = 0; k < c->nr_args; k++) {
			int pi = val_param(reg_val(P, c->args[k]));
			if (pi >= 0 && !fl->written[pi])
				add_escape(fl, pi, c->callee, k);
		}
		free(c->callee);
		free(c->args);
	}
	P->nr_calls = 0;
}

struct name_index {
	const char *name;
	size_t idx;
};

static int cmp_name_index(const void *a, const void *b)
{
	return strcmp(((const struct name_index *)a)->name, ((const struct name_index *)b)->name);
}

/* The function with a body called name, or -1 (unknown, or a prototype only). */
static int lookup_name(const struct name_index *ix, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (name && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, ix[mid].name);
		if (!r)
			return (int)ix[mid].idx;
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/*
 * Which parameters are written, through calls too: a parameter passed to a
 * callee is written when the callee writes that argument, or when the
 * callee is unknown (extern, indirect). A fixpoint over the call graph.
 */
void ptx_resolve_written(struct parser *P)
{
	struct ptx_module *m = P->m;
	struct name_index *ix = xmalloc((m->nr_functions + 1) * sizeof(*ix));
	size_t i, j, k, round, total = 0;
	int *callee_of;

	for (i = 0; i < m->nr_functions; i++) {
		ix[i].name = m->functions[i].name;
		ix[i].idx = i;
		total += P->flows[i].nr_esc;
	}
	qsort(ix, m->nr_functions, sizeof(*ix), cmp_name_index);
	callee_of = xmalloc((total + 1) * sizeof(*callee_of));
	for (i = 0, k = 0; i < m->nr_functions; i++)
		for (j = 0; j < P->flows[i].nr_esc; j++, k++)
			callee_of[k] = lookup_name(ix, m->nr_functions, P->flows[i].esc[j].callee);
	for (round = 0; round <= total; round++) {
		int changed = 0;
		for (i = 0, k = 0; i < m->nr_functions; i++) {
			struct flow *fl = &P->flows[i];
			for (j = 0; j < fl->nr_esc; j++, k++) {
				const struct escape *e = &fl->esc[j];
				int c = callee_of[k];
				if (fl->written[e->param])
					continue;
				if (c < 0 || e->arg >= m->functions[c].nr_params ||
				    P->flows[c].written[e->arg]) {
					fl->written[e->param] = 1;
					changed = 1;
				}
			}
		}
		if (!changed)
			break;
	}
	free(ix);
	free(callee_of);
}
