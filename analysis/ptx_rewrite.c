#include "analysis/ptx.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/load_sites.h"
#include "base/error.h"
#include "base/xalloc.h"

/*
 * Rewriting replaces only the opcode token of each edited load. The new
 * opcode keeps every qualifier of the old one in its order (.weak, state
 * space, .nc, .L2::*, vector, type) minus the cache operator and the L1
 * eviction priority, and places the action's qualifier where the PTX ISA
 * grammar wants it:
 *     ld{.weak}{.ss}{.cop}{.nc}{.level::cache_hint}{.level::prefetch_size}{.vec}.type
 *     ld{.weak}{.ss}{.nc}{.L1::evict_*}{.L2::evict_*}{...}{.vec}.type
 * i.e. a cache operator right after the state space (before .nc), an L1
 * eviction priority right after .nc (or the state space). Checked with
 * ptxas -arch=sm_90 by tests/cli/t_patch_ptxas.sh.
 */

static const char *const action_names[LOAD_ACTION__COUNT] = {
	[LOAD_ACTION_DEFAULT] = "default",
	[LOAD_ACTION_CACHE] = "cache",
	[LOAD_ACTION_BYPASS] = "bypass",
	[LOAD_ACTION_STREAM] = "stream",
	[LOAD_ACTION_LAST_USE] = "last_use",
	[LOAD_ACTION_NO_ALLOCATE] = "L1::no_allocate",
	[LOAD_ACTION_EVICT_FIRST] = "L1::evict_first",
	[LOAD_ACTION_EVICT_LAST] = "L1::evict_last",
	[LOAD_ACTION_AS_BUILT] = "as_built",
};

static const char *const l2_names[L2_PRIORITY__COUNT] = {
	[L2_PRIORITY_NONE] = "none",
	[L2_PRIORITY_EVICT_FIRST] = "L2::evict_first",
	[L2_PRIORITY_EVICT_LAST] = "L2::evict_last",
	[L2_PRIORITY_EVICT_NORMAL] = "L2::evict_normal",
	[L2_PRIORITY_EVICT_UNCHANGED] = "L2::evict_unchanged",
};

const char *load_action_name(enum load_action a)
{
	return (unsigned)a < LOAD_ACTION__COUNT ? action_names[a] : "unknown";
}

int load_action_parse(const char *name, enum load_action *a)
{
	int i;

	for (i = 0; i < LOAD_ACTION__COUNT; i++) {
		if (i != LOAD_ACTION_AS_BUILT && !strcmp(name, action_names[i])) {
			*a = (enum load_action)i;
			return 0;
		}
	}
	return -1;
}

const char *l2_priority_name(enum l2_priority p)
{
	return (unsigned)p < L2_PRIORITY__COUNT ? l2_names[p] : "unknown";
}

static int l2_priority_parse(const char *name, size_t len, enum l2_priority *p)
{
	int i;

	for (i = L2_PRIORITY_NONE + 1; i < L2_PRIORITY__COUNT; i++) {
		if (strlen(l2_names[i]) == len && !memcmp(name, l2_names[i], len)) {
			*p = (enum l2_priority)i;
			return 0;
		}
	}
	return -1;
}

const char *load_form_name(enum load_action a, enum l2_priority p)
{
	static char names[LOAD_ACTION__COUNT][L2_PRIORITY__COUNT][48];

	if ((unsigned)a >= LOAD_ACTION__COUNT || (unsigned)p >= L2_PRIORITY__COUNT)
		return "unknown";
	if (p == L2_PRIORITY_NONE)
		return action_names[a];
	if (a == LOAD_ACTION_AS_BUILT)
		return l2_names[p];
	if (!names[a][p][0])
		snprintf(names[a][p], sizeof(names[a][p]), "%s+%s", action_names[a], l2_names[p]);
	return names[a][p];
}

int load_form_is_l2_choice(enum load_action a, enum l2_priority p)
{
	return p != L2_PRIORITY_NONE || a == LOAD_ACTION_DEFAULT;
}

int load_form_parse(const char *name, enum load_action *a, enum l2_priority *p)
{
	const char *plus = strchr(name, '+');
	char l1[32];

	if (!plus) {
		*p = L2_PRIORITY_NONE;
		if (!load_action_parse(name, a))
			return 0;
		*a = LOAD_ACTION_AS_BUILT;
		return l2_priority_parse(name, strlen(name), p);
	}
	if ((size_t)(plus - name) >= sizeof(l1))
		return -1;
	memcpy(l1, name, (size_t)(plus - name));
	l1[plus - name] = '\0';
	if (load_action_parse(l1, a) || l2_priority_parse(plus + 1, strlen(plus + 1), p))
		return -1;
	return 0;
}

/* The qualifier an action writes, without the dot; NULL for default. */
static const char *action_qualifier(enum load_action a, int *is_cop)
{
	*is_cop = 1;
	switch (a) {
	case LOAD_ACTION_CACHE: return "ca";
	case LOAD_ACTION_BYPASS: return "cg";
	case LOAD_ACTION_STREAM: return "cs";
	case LOAD_ACTION_LAST_USE: return "lu";
	default: break;
	}
	*is_cop = 0;
	switch (a) {
	case LOAD_ACTION_NO_ALLOCATE: return "L1::no_allocate";
	case LOAD_ACTION_EVICT_FIRST: return "L1::evict_first";
	case LOAD_ACTION_EVICT_LAST: return "L1::evict_last";
	default: return NULL;
	}
}

static int comp_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(s, lit, n);
}

static int is_cop(const char *s, size_t n)
{
	return comp_eq(s, n, "ca") || comp_eq(s, n, "cg") || comp_eq(s, n, "cs") ||
	       comp_eq(s, n, "lu") || comp_eq(s, n, "cv");
}

static int is_sem_or_scope(const char *s, size_t n)
{
	static const char *const words[] = {
		"weak", "volatile", "relaxed", "acquire", "mmio", "cta", "cluster", "gpu", "sys",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (comp_eq(s, n, words[i]))
			return 1;
	return 0;
}

static int is_space_qual(const char *s, size_t n)
{
	return comp_eq(s, n, "global") || comp_eq(s, n, "shared") || comp_eq(s, n, "local") ||
	       comp_eq(s, n, "const") || (n >= 6 && !memcmp(s, "shared", 6));
}

int ptx_load_rewrite_opcode(const struct ptx_load *ld, enum load_action action,
			    struct strbuf *out)
{
	const char *op = ld->opcode, *p, *e = op + strlen(op);
	const char *qual;
	int cop, placed = 0;
	size_t start = out->len;

	if ((unsigned)action >= LOAD_ACTION__COUNT)
		return error_set(CA_E_INPUT, "unknown load action %d", (int)action);
	if (strncmp(op, "ld.", 3) || ld->is_ldu)
		return error_set(CA_E_INPUT, "'%s' is not an ld instruction that can be rewritten", op);
	if (action == LOAD_ACTION_LAST_USE && ld->nc)
		return error_set(CA_E_INPUT,
				 "'%s' is .nc and .lu has no .nc form (ptxas rejects ld.global.lu.nc): "
				 "use \"stream\" or \"L1::evict_first\"", op);
	qual = action_qualifier(action, &cop);

	/*
	 * Walk the components; emit each kept one. The new qualifier goes
	 * before the first component that must come after it.
	 */
	strbuf_addstr(out, "ld");
	p = op + 2;
	while (p < e) {
		const char *c = p + 1, *next = memchr(c, '.', (size_t)(e - c));
		size_t n;

		next = next ? next : e;
		n = (size_t)(next - c);
		p = next;
		if (action != LOAD_ACTION_AS_BUILT &&
		    (is_cop(c, n) || (n > 4 && !memcmp(c, "L1::", 4))))
			continue;
		if (qual && !placed && !is_sem_or_scope(c, n) && !is_space_qual(c, n)) {
			/* A cache operator precedes .nc; an eviction priority follows it. */
			if (cop || !comp_eq(c, n, "nc")) {
				strbuf_addch(out, '.');
				strbuf_addstr(out, qual);
				placed = 1;
			}
		}
		strbuf_addch(out, '.');
		strbuf_add(out, c, n);
	}
	if (qual && !placed) {
		/* No type component: not a well-formed load. */
		strbuf_setlen(out, start);
		return error_set(CA_E_INPUT, "'%s' has no type", op);
	}
	return 0;
}

/*
 * The opcode with ".L2::cache_hint" added where the grammar wants it: after
 * the state space, cache operator, .nc and eviction priorities, before a
 * prefetch size, the vector width and the type.
 */
static void add_cache_hint(const char *op, struct strbuf *out)
{
	const char *p = op + 2, *e = op + strlen(op);
	int placed = 0;

	strbuf_addstr(out, "ld");
	while (p < e) {
		const char *c = p + 1, *next = memchr(c, '.', (size_t)(e - c));
		size_t n;

		next = next ? next : e;
		n = (size_t)(next - c);
		p = next;
		if (!placed && !is_sem_or_scope(c, n) && !is_space_qual(c, n) && !is_cop(c, n) &&
		    !comp_eq(c, n, "nc") && !(n > 4 && !memcmp(c, "L1::", 4)) &&
		    !(n > 10 && !memcmp(c, "L2::evict_", 10))) {
			strbuf_addstr(out, ".L2::cache_hint");
			placed = 1;
		}
		strbuf_addch(out, '.');
		strbuf_add(out, c, n);
	}
}

/* Why a module cannot carry L2 cache hints, NULL when it can: createpolicy
 * and .L2::cache_hint need PTX ISA 7.4 and sm_80 (docs/l2-priority-ptx.md). */
const char *ptx_l2_unsupported(const struct ptx_module *m)
{
	unsigned major = 0, minor = 0, sm = 0;

	if (sscanf(m->version, "%u.%u", &major, &minor) != 2 || major * 10 + minor < 74)
		return "per-load L2 priority needs PTX ISA 7.4 or later (createpolicy and "
		       ".L2::cache_hint): rebuild for sm_80 or later, or leave L2 out of the plan";
	if (sscanf(m->target, "sm_%u", &sm) != 1 || sm < 80)
		return "per-load L2 priority needs .target sm_80 or later (createpolicy and "
		       ".L2::cache_hint): rebuild for sm_80 or later, or leave L2 out of the plan";
	return NULL;
}

/* Why a load cannot take an L2 priority of the plan's, NULL when it can. */
const char *ptx_load_l2_refused(const struct ptx_load *ld)
{
	/* a cache hint of the program's own (Triton's eviction_policy): its
	 * policy operand is replaced by the plan's */
	if (strstr(ld->opcode, ".L2::evict_"))
		return "it already carries an L2 eviction priority qualifier of its own";
	return NULL;
}

/*
 * The policy operand of a load that carries .L2::cache_hint: [*begin, *end)
 * in m->text, after the address's ']' and a ','. Returns 0, or -1 when the
 * instruction has none.
 */
static int policy_operand(const struct ptx_module *m, const struct ptx_load *ld, size_t *begin,
			  size_t *end)
{
	const char *t = m->text, *semi = memchr(t + ld->text_offset, ';', m->len - ld->text_offset);
	const char *close = NULL, *p, *b, *e;

	if (!semi)
		return -1;
	for (p = t + ld->text_offset; p < semi; p++)
		if (*p == ']')
			close = p;
	p = close ? memchr(close, ',', (size_t)(semi - close)) : NULL;
	if (!p)
		return -1;
	for (b = p + 1; b < semi && strchr(" \t\n", *b); b++)
		;
	for (e = semi; e > b && strchr(" \t\n", e[-1]); e--)
		;
	if (e == b)
		return -1;
	*begin = (size_t)(b - t);
	*end = (size_t)(e - t);
	return 0;
}

/* A piece of the output: remove len bytes at offset and put text there. */
struct splice {
	size_t offset, len;
	char *text;                 /* owned */
	size_t order;               /* among splices at one offset: as added */
};

static int cmp_splice(const void *a, const void *b)
{
	const struct splice *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct edit_at {
	const struct ptx_load *ld;
	const struct ptx_function *fn;
	enum load_action action;
	enum l2_priority l2;
};

static int cmp_edit(const void *a, const void *b)
{
	size_t x = ((const struct edit_at *)a)->ld->text_offset;
	size_t y = ((const struct edit_at *)b)->ld->text_offset;
	return x < y ? -1 : x > y;
}

/* The register prefix of the hoisted policies: one no name of the module has. */
static char *policy_prefix(const struct ptx_module *m)
{
	char *prefix = xstrdup("%ca_l2p");
	int i;

	for (i = 1; strstr(m->text, prefix); i++) {
		free(prefix);
		prefix = xasprintf("%%ca%d_l2p", i);
	}
	return prefix;
}

/* "first", "last", ...: the priority's suffix in register names. */
static const char *l2_suffix(enum l2_priority p)
{
	return l2_priority_name(p) + strlen("L2::evict_");
}

int ptx_rewrite_loads(const struct ptx_module *m, const struct ptx_load_edit *edits,
		      size_t nr_edits, struct strbuf *out)
{
	struct edit_at *at = xmalloc((nr_edits + 1) * sizeof(*at));
	struct splice *sp = NULL;
	struct strbuf op = STRBUF_INIT;
	size_t i, n = 0, nsp = 0, asp = 0, pos = 0, start = out->len;
	char *prefix = NULL;
	int ret = 0;

	for (i = 0; i < nr_edits; i++) {
		const struct ptx_function *f = ptx_module_find(m, edits[i].function);
		const struct ptx_load *ld;
		const char *why;

		if (!f) {
			ret = error_set(CA_E_INPUT, "no function '%s' in the module", edits[i].function);
			goto out;
		}
		if (edits[i].ordinal >= f->nr_loads) {
			ret = error_set(CA_E_INPUT, "function '%s' has %zu global loads: no load %u",
					f->name, f->nr_loads, edits[i].ordinal);
			goto out;
		}
		ld = &f->loads[edits[i].ordinal];
		if (!ld->patchable) {
			ret = error_set(CA_E_INPUT, "load %u of '%s' (PTX line %u, '%s') cannot be rewritten: %s",
					ld->ordinal, f->name, ld->ptx_line, ld->opcode,
					ld->unpatchable_reason ? ld->unpatchable_reason : "not patchable");
			goto out;
		}
		if ((unsigned)edits[i].action >= LOAD_ACTION__COUNT ||
		    (unsigned)edits[i].l2 >= L2_PRIORITY__COUNT) {
			ret = error_set(CA_E_INPUT, "load %u of '%s': unknown action %d", ld->ordinal,
					f->name, (int)edits[i].action);
			goto out;
		}
		if (edits[i].l2 != L2_PRIORITY_NONE &&
		    ((why = ptx_l2_unsupported(m)) || (why = ptx_load_l2_refused(ld)))) {
			ret = error_set(CA_E_INPUT, "load %u of '%s' (PTX line %u, '%s') cannot take "
					"%s: %s", ld->ordinal, f->name, ld->ptx_line, ld->opcode,
					l2_priority_name(edits[i].l2), why);
			goto out;
		}
		at[n].ld = ld;
		at[n].fn = f;
		at[n].action = edits[i].action;
		at[n].l2 = edits[i].l2;
		n++;
	}
	qsort(at, n, sizeof(*at), cmp_edit);
	for (i = 0; i + 1 < n; i++) {
		if (at[i].ld == at[i + 1].ld &&
		    (at[i].action != at[i + 1].action || at[i].l2 != at[i + 1].l2)) {
			ret = error_set(CA_E_INPUT, "load %u of '%s' is given two actions: '%s' and '%s'",
					at[i].ld->ordinal, at[i].fn->name,
					load_form_name(at[i].action, at[i].l2),
					load_form_name(at[i + 1].action, at[i + 1].l2));
			goto out;
		}
	}

	for (i = 0; i < n; i++) {
		const struct ptx_load *ld = at[i].ld;
		size_t oplen = strlen(ld->opcode);

		if (i && at[i - 1].ld == ld)
			continue;
		if (ld->text_offset < pos || ld->text_offset + oplen > m->len ||
		    memcmp(m->text + ld->text_offset, ld->opcode, oplen)) {
			ret = error_set(CA_E_INTERNAL, "load %u of '%s': opcode not found at its offset",
					ld->ordinal, at[i].fn->name);
			goto out;
		}
		pos = ld->text_offset + oplen;
		strbuf_reset(&op);
		ret = ptx_load_rewrite_opcode(ld, at[i].action, &op);
		if (ret) {
			error_prefix(ret, "load %u of '%s' (PTX line %u)", ld->ordinal, at[i].fn->name,
				     ld->ptx_line);
			goto out;
		}
		if (at[i].action == LOAD_ACTION_DEFAULT && at[i].l2 == L2_PRIORITY_NONE &&
		    load_sites_is_python(ld->file) && strstr(op.buf, ".L2::cache_hint")) {
			/* A Triton load's "default" is what a tl.load without
			 * eviction_policy compiles to (docs/triton.md): a plain load,
			 * without the cache hint and the policy its eviction_policy
			 * gave it, as the Python patch writes it. */
			char *q = strstr(op.buf, ".L2::cache_hint");
			size_t b, e, comma;

			if (policy_operand(m, ld, &b, &e)) {
				ret = error_set(CA_E_INPUT, "load %u of '%s' (PTX line %u): its L2 cache "
						"hint has no policy operand", ld->ordinal, at[i].fn->name,
						ld->ptx_line);
				goto out;
			}
			memmove(q, q + 15, strlen(q + 15) + 1);
			op.len -= 15;
			for (comma = b; comma > pos && m->text[comma - 1] != ','; comma--)
				;
			ALLOC_GROW(sp, nsp + 1, asp);
			sp[nsp] = (struct splice){ comma - 1, e - (comma - 1), xstrdup(""), nsp };
			nsp++;
		}
		if (at[i].l2 != L2_PRIORITY_NONE) {
			struct strbuf hinted = STRBUF_INIT;
			const char *semi = memchr(m->text + pos, ';', m->len - pos);

			if (!semi) {
				ret = error_set(CA_E_INTERNAL, "load %u of '%s': no ';' after it",
						ld->ordinal, at[i].fn->name);
				goto out;
			}
			if (!prefix)
				prefix = policy_prefix(m);
			ALLOC_GROW(sp, nsp + 1, asp);
			if (strstr(op.buf, ".L2::cache_hint")) {
				/* the program's own policy: the plan's takes its place */
				size_t b, e;

				strbuf_release(&hinted);
				if (policy_operand(m, ld, &b, &e)) {
					ret = error_set(CA_E_INPUT, "load %u of '%s' (PTX line %u): "
							"its L2 cache hint has no policy operand",
							ld->ordinal, at[i].fn->name, ld->ptx_line);
					goto out;
				}
				sp[nsp] = (struct splice){ b, e - b, xasprintf("%s_%s", prefix,
							   l2_suffix(at[i].l2)), nsp };
			} else {
				add_cache_hint(op.buf, &hinted);
				strbuf_release(&op);
				op = hinted;
				sp[nsp] = (struct splice){ (size_t)(semi - m->text), 0,
							   xasprintf(", %s_%s", prefix,
								     l2_suffix(at[i].l2)), nsp };
			}
			nsp++;
		}
		ALLOC_GROW(sp, nsp + 1, asp);
		sp[nsp] = (struct splice){ ld->text_offset, oplen, strbuf_detach(&op, NULL), nsp };
		nsp++;
	}
	/* the policies, once per function and priority, at the top of its body */
	for (i = 0; i < n; i++) {
		struct strbuf decl = STRBUF_INIT;
		int used[L2_PRIORITY__COUNT] = { 0 };
		size_t j, p;

		if (at[i].l2 == L2_PRIORITY_NONE)
			continue;
		for (j = 0; j < i; j++)
			if (at[j].fn == at[i].fn && at[j].l2 != L2_PRIORITY_NONE)
				break;
		if (j < i)
			continue;   /* this function's policies are written */
		for (j = i; j < n; j++)
			if (at[j].fn == at[i].fn)
				used[at[j].l2] = 1;
		strbuf_addstr(&decl, "\n\t// cacheadvise: L2 eviction policies of this function's loads");
		for (p = L2_PRIORITY_NONE + 1; p < L2_PRIORITY__COUNT; p++) {
			if (!used[p])
				continue;
			strbuf_addf(&decl, "\n\t.reg .b64 %s_%s;\n\tcreatepolicy.fractional.%s.b64 %s_%s, 1.0;",
				    prefix, l2_suffix((enum l2_priority)p),
				    l2_priority_name((enum l2_priority)p), prefix,
				    l2_suffix((enum l2_priority)p));
		}
		ALLOC_GROW(sp, nsp + 1, asp);
		sp[nsp] = (struct splice){ at[i].fn->body_begin + 1, 0, strbuf_detach(&decl, NULL),
					   nsp };
		nsp++;
	}
	if (nsp)
		qsort(sp, nsp, sizeof(*sp), cmp_splice);
	strbuf_grow(out, m->len + 24 * nsp);
	pos = 0;
	for (i = 0; i < nsp; i++) {
		strbuf_add(out, m->text + pos, sp[i].offset - pos);
		strbuf_addstr(out, sp[i].text);
		pos = sp[i].offset + sp[i].len;
	}
	strbuf_add(out, m->text + pos, m->len - pos);
out:
	if (ret)
		strbuf_setlen(out, start);
	for (i = 0; i < nsp; i++)
		free(sp[i].text);
	free(sp);
	free(prefix);
	strbuf_release(&op);
	free(at);
	return ret;
}

/*
 * The priority of a cache-policy constant as libcu++'s cuda::annotated_ptr
 * writes it (no createpolicy: a 64-bit descriptor moved into the register).
 * Measured with nvcc 13.0 for sm_90 (docs/l2-priority-ptx.md): ptxas turns
 * createpolicy.fractional.L2::evict_{unchanged,first,last,normal} with
 * fraction 1.0 into the descriptors 0x10f.., 0x12f.., 0x14f.., 0x16f..,
 * and annotated_ptr's global, streaming, persisting and normal properties
 * into the same ones: the top byte names the priority, the next nibble
 * the fraction in fifteenths. L2_PRIORITY__COUNT for any other constant.
 */
static enum l2_priority policy_constant_priority(unsigned long long v)
{
	switch (v >> 56) {
	case 0x10: return L2_PRIORITY_EVICT_UNCHANGED;
	case 0x12: return L2_PRIORITY_EVICT_FIRST;
	case 0x14: return L2_PRIORITY_EVICT_LAST;
	case 0x16: return L2_PRIORITY_EVICT_NORMAL;
	default: return L2_PRIORITY__COUNT;
	}
}

/* An integer immediate of PTX (decimal, 0x hex, an optional U suffix) at
 * *p, advancing past it; 0 when there is none. */
static int read_immediate(const char **p, const char *end, unsigned long long *v)
{
	const char *s = *p;
	char *stop;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || !isdigit((unsigned char)*s))
		return 0;
	errno = 0;
	*v = strtoull(s, &stop, 0);
	if (errno || stop == s || stop > end)
		return 0;
	if (stop < end && *stop == 'U')
		stop++;
	*p = stop;
	return 1;
}

/*
 * The priority an instruction that writes the policy register gives it:
 * a createpolicy.fractional of a priority, or a mov or selp of constants
 * that all decode to one (policy_constant_priority). ins points at the
 * mnemonic, args just past it, end at the ';'.
 */
static enum l2_priority policy_writer_priority(const char *ins, const char *args,
					       const char *end)
{
	unsigned long long v, w;
	enum l2_priority pr;

	if (!strncmp(ins, "createpolicy.fractional.", strlen("createpolicy.fractional."))) {
		const char *pri = ins + strlen("createpolicy.fractional.");

		return l2_priority_parse(pri, strcspn(pri, ". \t"), &pr) ? L2_PRIORITY__COUNT : pr;
	}
	if (!strncmp(ins, "mov.b64", 7) || !strncmp(ins, "mov.u64", 7)) {
		if (!read_immediate(&args, end, &v))
			return L2_PRIORITY__COUNT;
		return policy_constant_priority(v);
	}
	if (!strncmp(ins, "selp.b64", 8) || !strncmp(ins, "selp.u64", 8)) {
		if (!read_immediate(&args, end, &v) || *args != ',')
			return L2_PRIORITY__COUNT;
		args++;
		if (!read_immediate(&args, end, &w))
			return L2_PRIORITY__COUNT;
		pr = policy_constant_priority(v);
		return pr == policy_constant_priority(w) ? pr : L2_PRIORITY__COUNT;
	}
	return L2_PRIORITY__COUNT;
}

/* From p, past blanks, braces, comments, .loc lines and labels, to an instruction's
 * first character (or its guard's '@'); end when none is before end. */
static const char *skip_to_instruction(const char *p, const char *end)
{
	for (;;) {
		size_t word;

		while (p < end && strchr(" \t\n\r{}", *p))
			p++;
		/* a comment, or a .loc (a directive without a ';') */
		if ((end - p >= 2 && p[0] == '/' && p[1] == '/') ||
		    (end - p >= 5 && !strncmp(p, ".loc", 4) && strchr(" \t", p[4]))) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));

			p = nl ? nl : end;
			continue;
		}
		word = strcspn(p, " \t\n;");
		if (p < end && word && p[word - 1] == ':') {    /* a label */
			p += word;
			continue;
		}
		return p < end ? p : end;
	}
}

enum l2_priority ptx_load_l2_priority(const struct ptx_module *m, const struct ptx_function *f,
				      const struct ptx_load *ld)
{
	const char *t = m->text, *end, *close, *op, *p, *load = t + ld->text_offset;
	enum l2_priority found = L2_PRIORITY__COUNT;
	size_t oplen;

	if (!strstr(ld->opcode, ".L2::cache_hint"))
		return L2_PRIORITY_NONE;
	end = memchr(load, ';', m->len - ld->text_offset);
	close = end ? memchr(load, ']', (size_t)(end - load)) : NULL;
	op = close ? memchr(close, ',', (size_t)(end - close)) : NULL;
	if (!op)
		return L2_PRIORITY__COUNT;
	for (op++; op < end && (*op == ' ' || *op == '\t'); op++)
		;
	for (oplen = 0; op + oplen < end && !strchr(" \t\n", op[oplen]); oplen++)
		;
	if (!oplen)
		return L2_PRIORITY__COUNT;
	/* the last instruction before the load whose destination is the register */
	for (p = t + f->body_begin; p < load; ) {
		const char *semi = memchr(p, ';', (size_t)(load - p)), *ins, *dst;
		int guarded;

		if (!semi)
			break;
		ins = skip_to_instruction(p, semi);
		guarded = ins < semi && *ins == '@';
		if (guarded)
			ins = skip_to_instruction(ins + strcspn(ins, " \t"), semi);
		dst = ins + strcspn(ins, " \t;");
		while (dst < semi && (*dst == ' ' || *dst == '\t'))
			dst++;
		if ((size_t)(semi - dst) > oplen && !strncmp(dst, op, oplen) &&
		    (dst[oplen] == ',' || dst[oplen] == ' ' || dst[oplen] == '\t')) {
			const char *args = memchr(dst, ',', (size_t)(semi - dst));

			found = guarded || !args ? L2_PRIORITY__COUNT :
				policy_writer_priority(ins, args + 1, semi);
		}
		p = semi + 1;
	}
	return found;
}

int ptx_keep_one_entry(const struct ptx_module *m, const char *entry, struct strbuf *out)
{
	size_t i, at = 0;
	int found = 0;

	for (i = 0; i < m->nr_functions; i++)
		if (m->functions[i].is_entry && !strcmp(m->functions[i].name, entry))
			found = 1;
	if (!found)
		return error_set(CA_E_INPUT, "no kernel '%s' in the module", entry);
	for (i = 0; i < m->nr_functions; i++) {
		const struct ptx_function *f = &m->functions[i];

		if (!f->is_entry || !strcmp(f->name, entry) || f->body_begin < at)
			continue;
		strbuf_add(out, m->text + at, f->body_begin - at);
		strbuf_addstr(out, "{\n\tret;\n}");
		at = f->body_end + 1;
	}
	strbuf_add(out, m->text + at, m->len - at);
	return 0;
}
