/*
 * The PTX parser (analysis/ptx_internal.h): instructions. Loads, memops,
 * calls and the definitions that the dataflow solves.
 */
#include "analysis/ptx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

/* ------------------------------------------------------ instructions */

static int intern(struct parser *P, struct slice name)
{
	return name.n ? ptx_regmap_intern(&P->regs, name.s, name.n) : -1;
}

static void add_def(struct parser *P, int dst, enum def_op op, int a, int b, struct val k)
{
	struct def *d;

	if (dst < 0)
		return;
	ALLOC_GROW(P->defs, P->nr_defs + 1, P->alloc_defs);
	d = &P->defs[P->nr_defs++];
	d->dst = dst;
	d->op = (unsigned char)op;
	d->a = a;
	d->b = b;
	d->k = k;
}

static void add_use(struct parser *P, enum use_kind kind, int reg, size_t idx)
{
	ALLOC_GROW(P->uses, P->nr_uses + 1, P->alloc_uses);
	P->uses[P->nr_uses].kind = (unsigned char)kind;
	P->uses[P->nr_uses].reg = reg;
	P->uses[P->nr_uses].idx = idx;
	P->nr_uses++;
}

static int param_index(const struct ptx_function *f, struct slice name)
{
	size_t i;

	for (i = 0; i < f->nr_params; i++)
		if (slice_eq(name, f->params[i].name))
			return (int)i;
	return -1;
}

/* A name that is a number, not a register or symbol. */
static int is_immediate(struct slice op)
{
	return op.n && ((op.s[0] >= '0' && op.s[0] <= '9') || op.s[0] == '-' || op.s[0] == '+');
}

/* Registers defined by a destination operand: "%r1" or "{%f1, %f2}". */
static void def_dests(struct parser *P, struct slice dst, struct val k)
{
	const char *p = dst.s, *e = dst.s + dst.n;

	if (dst.n && *p == '{') {
		for (p++; p < e; p++) {
			if (is_ident_start((unsigned char)*p)) {
				const char *q = scan_ident(p + 1, e);
				struct slice n = { p, (size_t)(q - p) };
				add_def(P, intern(P, n), D_CONST, -1, -1, k);
				p = q - 1;
			}
		}
		return;
	}
	add_def(P, intern(P, ptx_operand_name(dst)), D_CONST, -1, -1, k);
}

static void note_shared_refs(struct parser *P, struct ptx_function *f, const struct slice *ops,
			     size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct slice nm = ptx_operand_name(ops[i]);
		if (!nm.n)
			continue;
		j = (size_t)ptx_regmap_find(&P->shnames, nm.s, nm.n);
		if (j < P->nr_shvars) {
			if (P->shvar_seen[j] != P->m->nr_functions + 1) {
				P->shvar_seen[j] = P->m->nr_functions + 1;
				f->uses_shared = 1;
				f->static_shared_bytes += P->shvars[j].bytes;
			}
		}
	}
}

/* Index of the first bracketed operand, or -1. */
static int bracket_operand(const struct slice *ops, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ops[i].n && ops[i].s[0] == '[')
			return (int)i;
	return -1;
}

static struct slice bracket_inner(struct slice op)
{
	const char *close = memchr(op.s, ']', op.n);
	return ptx_trim(op.s + 1, close ? close : op.s + op.n);
}

#define MAX_OPS 16

/* The current .loc of load (or memop) index, resolved once parsing ends. */
static void remember_loc(struct parser *P, size_t index, int memop)
{
	ALLOC_GROW(P->load_locs, P->nr_load_locs + 1, P->alloc_load_locs);
	P->load_locs[P->nr_load_locs].fn = P->m->nr_functions;
	P->load_locs[P->nr_load_locs].load = index;
	P->load_locs[P->nr_load_locs].memop = memop;
	P->load_locs[P->nr_load_locs].loc = P->cur_loc;
	P->nr_load_locs++;
}

/*
 * Whether a cp opcode copies from global to shared memory asynchronously:
 * cp.async.{ca,cg}.shared{::cta}.global, cp.async.bulk[.tensor.*].shared::
 * {cta,cluster}.global... (the destination's space comes first). Not
 * commit/wait groups, prefetches or shared-to-global bulk stores.
 */
static int async_copy_to_shared(struct slice opcode)
{
	const char *sh = NULL, *gl = NULL;
	size_t i;

	if (opcode.n < 9 || memcmp(opcode.s, "cp.async.", 9))
		return 0;
	for (i = 0; i + 7 <= opcode.n; i++) {
		if (!sh && !memcmp(opcode.s + i, ".shared", 7))
			sh = opcode.s + i;
		if (!gl && !memcmp(opcode.s + i, ".global", 7))
			gl = opcode.s + i;
	}
	return sh && gl && sh < gl;
}

static void record_load(struct parser *P, struct ptx_function *f, struct slice opcode,
			const struct quals *q, struct slice pred, const struct slice *ops,
			size_t nops, const char *stmt_end, unsigned line, int is_ldu)
{
	struct ptx_load *ld;
	int addr = bracket_operand(ops, nops < MAX_OPS ? nops : MAX_OPS);

	ALLOC_GROW(f->loads, f->nr_loads + 1, P->alloc_loads);
	ld = &f->loads[f->nr_loads];
	memset(ld, 0, sizeof(*ld));
	ld->ordinal = (unsigned)f->nr_loads;
	ld->ptx_line = line;
	ld->text_offset = (size_t)(opcode.s - P->base);
	ld->text_len = (size_t)(stmt_end - opcode.s + 1);
	ld->opcode = xstrndup(opcode.s, opcode.n);
	ld->dest = nops ? xstrndup(ops[0].s, ops[0].n) : xstrdup("");
	if (addr >= 0) {
		struct slice in = bracket_inner(ops[addr]);
		ld->address = xstrndup(in.s, in.n);
	} else {
		ld->address = xstrdup("");
	}
	ld->predicate = pred.n ? xstrndup(pred.s, pred.n) : NULL;
	ld->space = q->space_global ? PTX_SPACE_GLOBAL : PTX_SPACE_GENERIC;
	ld->is_ldu = is_ldu;
	ld->nc = q->nc;
	ld->cache_op = q->cop;
	ld->l1_eviction = q->l1;
	ld->has_l2_qualifier = q->l2;
	ld->vector = q->vec;
	ld->bits = q->bits;
	ld->strong = q->strong_sem || q->cop == PTX_CACHE_OP_CV;
	ld->param = -1;
	ld->read_only = -1;
	ld->line = 0;
	if (addr >= 0)
		add_use(P, U_LOAD, intern(P, ptx_operand_name(ops[addr])), f->nr_loads);
	remember_loc(P, f->nr_loads, 0);
	f->nr_loads++;
}

static void record_memop(struct parser *P, struct ptx_function *f, enum ptx_memop_kind kind,
			 struct slice opcode, unsigned line, int addr_reg)
{
	struct ptx_memop *op;

	ALLOC_GROW(f->memops, f->nr_memops + 1, P->alloc_memops);
	op = &f->memops[f->nr_memops];
	op->kind = kind;
	op->ptx_line = line;
	op->text_offset = (size_t)(opcode.s - P->base);
	op->opcode = xstrndup(opcode.s, opcode.n);
	op->param = -1;
	op->module_var = -1;
	/* set later only where a .loc names a known file: inspect printed
	 * whatever the allocator left here (a crash on libcublasLt.so.13) */
	op->file = NULL;
	op->line = op->column = 0;
	if (addr_reg >= 0)
		add_use(P, U_MEMOP, addr_reg, f->nr_memops);
	f->nr_memops++;
}

/* call{.uni} [(ret),] callee [, (args)] [, proto] */
static void record_call(struct parser *P, const struct slice *ops, size_t nops)
{
	struct call_rec *c;
	size_t i = 0;
	struct slice callee, args = { NULL, 0 };

	if (nops > MAX_OPS)
		nops = MAX_OPS;
	if (nops >= 2 && ops[0].n && ops[0].s[0] == '(')
		i = 1;
	if (i >= nops)
		return;
	callee = ops[i];
	if (i + 1 < nops && ops[i + 1].n && ops[i + 1].s[0] == '(')
		args = ops[i + 1];
	ALLOC_GROW(P->calls, P->nr_calls + 1, P->alloc_calls);
	c = &P->calls[P->nr_calls++];
	memset(c, 0, sizeof(*c));
	{
		struct slice nm = ptx_operand_name(callee);
		int is_reg = nm.n && nm.s[0] == '%';
		/* A register callee is an indirect call: unknown target. */
		c->callee = (nm.n && !is_reg) ? xstrndup(nm.s, nm.n) : NULL;
	}
	if (args.n >= 2) {
		struct slice inner = ptx_trim(args.s + 1, args.s + args.n - 1);
		struct slice a[64];
		size_t n = ptx_split_operands(inner.s, inner.s + inner.n, a, 64), k;
		if (n > 64)
			n = 64;
		c->args = xmalloc((n ? n : 1) * sizeof(*c->args));
		c->nr_args = n;
		for (k = 0; k < n; k++) {
			struct slice nm = ptx_operand_name(a[k]);
			size_t s;
			c->args[k] = -1;
			for (s = P->nr_pstores; s-- > 0;) {
				if (P->pstores[s].name.n == nm.n &&
				    !memcmp(P->pstores[s].name.s, nm.s, nm.n)) {
					c->args[k] = P->pstores[s].reg;
					break;
				}
			}
		}
	}
}

static void note_param_store(struct parser *P, struct slice name, int reg)
{
	size_t s;

	for (s = 0; s < P->nr_pstores; s++) {
		if (P->pstores[s].name.n == name.n && !memcmp(P->pstores[s].name.s, name.s, name.n)) {
			P->pstores[s].reg = reg;
			return;
		}
	}
	ALLOC_GROW(P->pstores, P->nr_pstores + 1, P->alloc_pstores);
	P->pstores[P->nr_pstores].name = name;
	P->pstores[P->nr_pstores].reg = reg;
	P->nr_pstores++;
}

#define mnem_is(mn, lit) SLICE_IS(mn, lit)

/*
 * One instruction: [opcode.s, opcode end) then operands up to semi.
 * Records loads, memops, definitions and uses.
 */
void ptx_do_instruction(struct parser *P, struct ptx_function *f, struct slice opcode,
			   struct slice pred, const char *semi, unsigned line)
{
	struct slice ops[MAX_OPS];
	struct quals q;
	size_t nops;
	const char *args = opcode.s + opcode.n;
	struct slice mn;
	int ptr_bits = P->m->address_size == 32 ? 32 : 64;

	nops = ptx_split_operands(args, semi, ops, MAX_OPS);
	if (P->nr_shvars)
		note_shared_refs(P, f, ops, nops < MAX_OPS ? nops : MAX_OPS);
	ptx_parse_quals(opcode, &q);
	mn = q.mnemonic;
	if (nops > MAX_OPS)
		nops = MAX_OPS;

	switch (mn.s[0]) {
	case 'l':
		if (mnem_is(mn, "ld") || mnem_is(mn, "ldu")) {
			int is_ldu = mn.n == 3;
			int width = q.bits;
			if (q.space_param) {
				/* ld.param: a function parameter (or a call's return value). */
				int addr = bracket_operand(ops, nops);
				struct val k = { V_NONE, 0, -1 };
				if (width == ptr_bits && q.vec == 1 && addr >= 0) {
					int pi = param_index(f, ptx_operand_name(bracket_inner(ops[addr])));
					if (pi >= 0) {
						k.kind = V_PARAM;
						k.param = pi;
					} else {
						k = val_unk;
					}
				}
				if (k.kind != V_NONE && nops)
					def_dests(P, ops[0], k);
				return;
			}
			if (!q.space_other)
				record_load(P, f, opcode, &q, pred, ops, nops, semi, line, is_ldu);
			/* A loaded pointer-sized value may be a pointer of unknown origin. */
			if (width >= ptr_bits && nops)
				def_dests(P, ops[0], val_unk);
			return;
		}
		break;
	case 's':
		if (mnem_is(mn, "st")) {
			int addr = bracket_operand(ops, nops);
			int reg = addr >= 0 ? intern(P, ptx_operand_name(ops[addr])) : -1;
			if (q.space_param) {
				if (addr >= 0 && (size_t)addr + 1 < nops) {
					struct slice v = ptx_operand_name(ops[addr + 1]);
					note_param_store(P, ptx_operand_name(bracket_inner(ops[addr])),
							 is_immediate(ops[addr + 1]) ? -1 : intern(P, v));
				}
				return;
			}
			if (!q.space_other)
				record_memop(P, f, PTX_MEMOP_STORE, opcode, line, reg);
			/* Storing a pointer as data lets it escape. */
			if (addr >= 0 && (size_t)addr + 1 < nops && q.bits >= ptr_bits) {
				struct slice v = ops[addr + 1];
				if (v.n && v.s[0] == '{') {
					const char *p = v.s, *e = v.s + v.n;
					for (p++; p < e; p++) {
						if (is_ident_start((unsigned char)*p)) {
							const char *qq = scan_ident(p + 1, e);
							struct slice n = { p, (size_t)(qq - p) };
							add_use(P, U_ESCAPE, intern(P, n), 0);
							p = qq - 1;
						}
					}
				} else if (!is_immediate(v)) {
					add_use(P, U_ESCAPE, intern(P, ptx_operand_name(v)), 0);
				}
			}
			return;
		}
		if (mnem_is(mn, "sub"))
			goto arith;
		if (mnem_is(mn, "selp")) {
			if (nops >= 3)
				add_def(P, intern(P, ptx_operand_name(ops[0])), D_PHI,
					is_immediate(ops[1]) ? -1 : intern(P, ptx_operand_name(ops[1])),
					is_immediate(ops[2]) ? -1 : intern(P, ptx_operand_name(ops[2])),
					val_bot);
			return;
		}
		break;
	case 'a':
		if (mnem_is(mn, "atom"))
			goto atomic;
		if (mnem_is(mn, "add") || mnem_is(mn, "and"))
			goto arith;
		if (mnem_is(mn, "applypriority"))
			return;
		break;
	case 'r':
		if (mnem_is(mn, "red"))
			goto atomic;
		if (mnem_is(mn, "ret"))
			return;
		break;
	case 'o':
		if (mnem_is(mn, "or"))
			goto arith;
		break;
	case 'x':
		if (mnem_is(mn, "xor"))
			goto arith;
		break;
	case 'm':
		if (mnem_is(mn, "mov")) {
			if (nops >= 2) {
				int dst = intern(P, ptx_operand_name(ops[0]));
				if (ops[1].n && ops[1].s[0] == '{')
					add_def(P, dst, D_CONST, -1, -1,
						q.bits >= ptr_bits ? val_unk : (struct val){ V_NONE, 0, -1 });
				else if (!is_immediate(ops[1]))
					add_def(P, dst, D_COPY, intern(P, ptx_operand_name(ops[1])), -1,
						val_bot);
			}
			return;
		}
		if (mnem_is(mn, "mad")) {
			if (nops >= 4 && !is_immediate(ops[3]))
				add_def(P, intern(P, ptx_operand_name(ops[0])), D_COPY,
					intern(P, ptx_operand_name(ops[3])), -1, val_bot);
			return;
		}
		if (mnem_is(mn, "membar")) {
			record_memop(P, f, PTX_MEMOP_FENCE, opcode, line, -1);
			return;
		}
		break;
	case 'f':
		if (mnem_is(mn, "fence")) {
			record_memop(P, f, PTX_MEMOP_FENCE, opcode, line, -1);
			return;
		}
		break;
	case 'b':
		if (mnem_is(mn, "bar") || mnem_is(mn, "barrier")) {
			/* Block barriers only: not bar.warp.sync, not barrier.cluster. */
			const char *rest = opcode.s + mn.n;
			size_t rn = opcode.n - mn.n;
			if (!(rn >= 5 && !memcmp(rest, ".warp", 5)) &&
			    !(rn >= 8 && !memcmp(rest, ".cluster", 8)))
				record_memop(P, f, PTX_MEMOP_BARRIER, opcode, line, -1);
			return;
		}
		if (mnem_is(mn, "bra"))
			return;
		break;
	case 'c':
		if (mnem_is(mn, "cvta")) {
			/* cvta.to.global: certainly a global address. cvta.global:
			 * its generic form. Other spaces: not a parameter's memory. */
			if (nops >= 2 && q.space_global && !is_immediate(ops[1])) {
				int to = opcode.n >= 8 && !memcmp(opcode.s + 4, ".to.", 4);
				add_def(P, intern(P, ptx_operand_name(ops[0])), to ? D_STRONG : D_COPY,
					intern(P, ptx_operand_name(ops[1])), -1, val_bot);
			}
			return;
		}
		if (mnem_is(mn, "call")) {
			record_call(P, ops, nops);
			return;
		}
		if (mnem_is(mn, "cp")) {
			/* cp.async*: the first address operand is written. */
			int addr = bracket_operand(ops, nops);
			if (addr >= 0)
				add_use(P, U_WRITE, intern(P, ptx_operand_name(ops[addr])), 0);
			if (async_copy_to_shared(opcode)) {
				record_memop(P, f, PTX_MEMOP_ASYNC_COPY, opcode, line, -1);
				remember_loc(P, f->nr_memops - 1, 1);
			}
			return;
		}
		if (mnem_is(mn, "createpolicy"))
			return;
		break;
	case 'p':
		if (mnem_is(mn, "prefetch") || mnem_is(mn, "prefetchu"))
			return;
		break;
	default:
		break;
	}
	/* Anything else that addresses memory may write it, unless it only reads. */
	{
		static const char *const readers[] = {
			"ldmatrix", "tex", "tld4", "suld", "txq", "suq", "isspacep", "istypep",
		};
		size_t i;
		for (i = 0; i < ARRAY_SIZE(readers); i++)
			if (slice_eq(mn, readers[i]))
				return;
		if (mnem_is(mn, "wmma") && opcode.n > 10 && !memcmp(opcode.s, "wmma.load.", 10))
			return;
		for (i = 0; i < nops; i++)
			if (ops[i].n && ops[i].s[0] == '[')
				add_use(P, U_WRITE, intern(P, ptx_operand_name(ops[i])), 0);
	}
	return;

arith:
	if (nops >= 3)
		add_def(P, intern(P, ptx_operand_name(ops[0])), D_ADD,
			is_immediate(ops[1]) ? -1 : intern(P, ptx_operand_name(ops[1])),
			is_immediate(ops[2]) ? -1 : intern(P, ptx_operand_name(ops[2])), val_bot);
	return;

atomic:
	if (!q.space_other) {
		int addr = bracket_operand(ops, nops);
		record_memop(P, f, PTX_MEMOP_ATOMIC, opcode, line,
			     addr >= 0 ? intern(P, ptx_operand_name(ops[addr])) : -1);
	}
	if (mn.n == 4 && nops && q.bits >= ptr_bits)
		def_dests(P, ops[0], val_unk);
	/* The stored operand may be a pointer. */
	{
		size_t i;
		int addr = bracket_operand(ops, nops);
		for (i = (size_t)(addr + 1); addr >= 0 && i < nops; i++)
			if (q.bits >= ptr_bits && !is_immediate(ops[i]))
				add_use(P, U_ESCAPE, intern(P, ptx_operand_name(ops[i])), 0);
	}
}
