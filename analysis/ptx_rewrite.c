#include "analysis/ptx.h"

#include <stdlib.h>
#include <string.h>

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
};

const char *load_action_name(enum load_action a)
{
	return (unsigned)a < LOAD_ACTION__COUNT ? action_names[a] : "unknown";
}

int load_action_parse(const char *name, enum load_action *a)
{
	int i;

	for (i = 0; i < LOAD_ACTION__COUNT; i++) {
		if (!strcmp(name, action_names[i])) {
			*a = (enum load_action)i;
			return 0;
		}
	}
	return -1;
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
		if (is_cop(c, n) || (n > 4 && !memcmp(c, "L1::", 4)))
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

struct edit_at {
	const struct ptx_load *ld;
	const char *function;
	enum load_action action;
};

static int cmp_edit(const void *a, const void *b)
{
	size_t x = ((const struct edit_at *)a)->ld->text_offset;
	size_t y = ((const struct edit_at *)b)->ld->text_offset;
	return x < y ? -1 : x > y;
}

int ptx_rewrite_loads(const struct ptx_module *m, const struct ptx_load_edit *edits,
		      size_t nr_edits, struct strbuf *out)
{
	struct edit_at *at = xmalloc((nr_edits + 1) * sizeof(*at));
	struct strbuf op = STRBUF_INIT;
	size_t i, n = 0, pos = 0, start = out->len;
	int ret = 0;

	for (i = 0; i < nr_edits; i++) {
		const struct ptx_function *f = ptx_module_find(m, edits[i].function);
		const struct ptx_load *ld;

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
		if ((unsigned)edits[i].action >= LOAD_ACTION__COUNT) {
			ret = error_set(CA_E_INPUT, "load %u of '%s': unknown action %d", ld->ordinal,
					f->name, (int)edits[i].action);
			goto out;
		}
		at[n].ld = ld;
		at[n].function = f->name;
		at[n].action = edits[i].action;
		n++;
	}
	qsort(at, n, sizeof(*at), cmp_edit);
	for (i = 0; i + 1 < n; i++) {
		if (at[i].ld == at[i + 1].ld && at[i].action != at[i + 1].action) {
			ret = error_set(CA_E_INPUT, "load %u of '%s' is given two actions: '%s' and '%s'",
					at[i].ld->ordinal, at[i].function,
					load_action_name(at[i].action), load_action_name(at[i + 1].action));
			goto out;
		}
	}

	strbuf_grow(out, m->len + 16 * n);
	for (i = 0; i < n; i++) {
		const struct ptx_load *ld = at[i].ld;
		size_t oplen = strlen(ld->opcode);

		if (i && at[i - 1].ld == ld)
			continue;
		if (ld->text_offset < pos || ld->text_offset + oplen > m->len ||
		    memcmp(m->text + ld->text_offset, ld->opcode, oplen)) {
			ret = error_set(CA_E_INTERNAL, "load %u of '%s': opcode not found at its offset",
					ld->ordinal, at[i].function);
			goto out;
		}
		strbuf_reset(&op);
		ret = ptx_load_rewrite_opcode(ld, at[i].action, &op);
		if (ret) {
			error_prefix(ret, "load %u of '%s' (PTX line %u)", ld->ordinal, at[i].function,
				     ld->ptx_line);
			goto out;
		}
		strbuf_add(out, m->text + pos, ld->text_offset - pos);
		strbuf_add(out, op.buf, op.len);
		pos = ld->text_offset + oplen;
	}
	strbuf_add(out, m->text + pos, m->len - pos);
out:
	if (ret)
		strbuf_setlen(out, start);
	strbuf_release(&op);
	free(at);
	return ret;
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
