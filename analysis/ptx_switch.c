#include "analysis/ptx_switch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

/*
 * One edit of the text: bytes [begin, end) become text (end == begin for
 * an insertion). Edits never overlap; they are applied in offset order.
 */
struct edit {
	size_t begin, end;
	char *text;
};

struct edits {
	struct edit *items;
	size_t nr, alloc;
};

static void edits_add(struct edits *e, size_t begin, size_t end, char *text)
{
	if (e->nr == e->alloc) {
		e->alloc = e->alloc ? 2 * e->alloc : 16;
		e->items = xrealloc(e->items, e->alloc * sizeof(*e->items));
	}
	e->items[e->nr++] = (struct edit){ begin, end, text };
}

static int cmp_edit(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return 0;
}

static void edits_release(struct edits *e)
{
	size_t i;

	for (i = 0; i < e->nr; i++)
		free(e->items[i].text);
	free(e->items);
}

char *ptx_switch_symbol(const char *function)
{
	return xasprintf("%s%s", PTX_SWITCH_MASK_PREFIX, function);
}

/*
 * Where the load's instruction starts: at its guard ("@%p1", "@!%p1") when
 * it has one (ld->predicate), else at its opcode.
 */
static size_t load_start(const struct ptx_module *m, const struct ptx_load *ld)
{
	size_t i = ld->text_offset, n;

	if (!ld->predicate)
		return i;
	while (i > 0 && (m->text[i - 1] == ' ' || m->text[i - 1] == '\t'))
		i--;
	n = strlen(ld->predicate);
	if (i >= n && !memcmp(m->text + i - n, ld->predicate, n))
		return i - n;
	return ld->text_offset;
}

/* The block that replaces one load: both forms, each under its predicate. */
static int switch_load(const struct ptx_module *m, const struct ptx_function *f,
		       const struct ptx_load *ld, unsigned bit, struct edits *e)
{
	struct strbuf op = STRBUF_INIT, sb = STRBUF_INIT;
	const char *rest = m->text + ld->text_offset + strlen(ld->opcode);
	size_t rest_len = ld->text_len - strlen(ld->opcode);
	int ret;

	if (!ld->patchable)
		return error_set(CA_E_INPUT, "%s: load %u cannot be switched: %s", f->name,
				 ld->ordinal, ld->unpatchable_reason ? ld->unpatchable_reason : "not patchable");
	if (strncmp(m->text + ld->text_offset, ld->opcode, strlen(ld->opcode)) ||
	    ld->text_len < strlen(ld->opcode))
		return error_set(CA_E_INPUT, "%s: load %u: its text does not start with its opcode",
				 f->name, ld->ordinal);
	ret = ptx_load_rewrite_opcode(ld, LOAD_ACTION_NO_ALLOCATE, &op);
	if (ret) {
		strbuf_release(&op);
		return ret;
	}
	strbuf_addf(&sb, "and.b64 %%cacheadvise_t, %%cacheadvise_mask, %lluU;\n",
		    (unsigned long long)1 << bit);
	strbuf_addstr(&sb, "\tsetp.ne.u64 %cacheadvise_p0, %cacheadvise_t, 0;\n");
	strbuf_addstr(&sb, "\tsetp.eq.u64 %cacheadvise_p1, %cacheadvise_t, 0;\n");
	if (ld->predicate) {
		const char *g = ld->predicate + 1;          /* past '@' */
		int negated = *g == '!';

		if (negated)
			g++;
		if (negated)
			strbuf_addf(&sb, "\tnot.pred %%cacheadvise_p2, %s;\n", g);
		else
			strbuf_addf(&sb, "\tmov.pred %%cacheadvise_p2, %s;\n", g);
		strbuf_addstr(&sb, "\tand.pred %cacheadvise_p0, %cacheadvise_p0, %cacheadvise_p2;\n");
		strbuf_addstr(&sb, "\tand.pred %cacheadvise_p1, %cacheadvise_p1, %cacheadvise_p2;\n");
	}
	strbuf_addf(&sb, "\t@%%cacheadvise_p0 %.*s\n", (int)ld->text_len, m->text + ld->text_offset);
	strbuf_addf(&sb, "\t@%%cacheadvise_p1 %s%.*s", op.buf, (int)rest_len, rest);
	strbuf_release(&op);
	edits_add(e, load_start(m, ld), ld->text_offset + ld->text_len, strbuf_detach(&sb, NULL));
	return 0;
}

static int switch_function(const struct ptx_module *m, const struct ptx_switch_kernel *k,
			   struct edits *e, struct strbuf *decls)
{
	const struct ptx_function *f = ptx_module_find(m, k->function);
	char *sym;
	size_t b, i;
	int ret;

	if (!f || !f->is_entry)
		return error_set(CA_E_INPUT, "'%s' is not a kernel of the module", k->function);
	if (!k->bits && k->nr_ordinals > PTX_SWITCH_MAX_LOADS)
		return error_set(CA_E_INPUT, "%s: %zu loads to switch, at most %d fit the mask",
				 f->name, k->nr_ordinals, PTX_SWITCH_MAX_LOADS);
	for (b = 0; b < k->nr_ordinals; b++) {
		const struct ptx_load *ld = NULL;
		unsigned bit = k->bits ? k->bits[b] : (unsigned)b;

		if (bit >= PTX_SWITCH_MAX_LOADS)
			return error_set(CA_E_INPUT, "%s: load %u: mask bit %u is over 63", f->name,
					 k->ordinals[b], bit);

		for (i = 0; i < f->nr_loads; i++)
			if (f->loads[i].ordinal == k->ordinals[b])
				ld = &f->loads[i];
		if (!ld)
			return error_set(CA_E_INPUT, "%s has no load %u", f->name, k->ordinals[b]);
		for (i = 0; i < b; i++)
			if (k->ordinals[i] == k->ordinals[b])
				return error_set(CA_E_INPUT, "%s: load %u is listed twice", f->name,
						 k->ordinals[b]);
		ret = switch_load(m, f, ld, bit, e);
		if (ret)
			return ret;
	}
	sym = ptx_switch_symbol(f->name);
	if (strstr(m->text, sym)) {
		ret = error_set(CA_E_INPUT, "the module already declares %s", sym);
		free(sym);
		return ret;
	}
	strbuf_addf(decls, ".visible .const .align 8 .u64 %s = 0xffffffffffffffff;\n", sym);
	edits_add(e, f->body_begin + 1, f->body_begin + 1,
		  xasprintf("\n\t// cacheadvise: L1 allocation of %zu loads chosen by %s\n"
			    "\t.reg .b64 %%cacheadvise_mask, %%cacheadvise_t;\n"
			    "\t.reg .pred %%cacheadvise_p<3>;\n"
			    "\tld.const.u64 %%cacheadvise_mask, [%s];",
			    k->nr_ordinals, sym, sym));
	free(sym);
	return 0;
}

int ptx_write_switchable(const struct ptx_module *m, const struct ptx_switch_kernel *kernels,
			 size_t nr_kernels, struct strbuf *out)
{
	struct edits e = { 0 };
	struct strbuf decls = STRBUF_INIT;
	size_t i, j, pos;
	int ret = 0;

	if (m->address_size != 64) {
		ret = error_set(CA_E_INPUT, "PTX module has .address_size %d: only 64-bit modules can be switched",
				m->address_size);
		goto out;
	}
	for (i = 0; i < nr_kernels; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(kernels[i].function, kernels[j].function)) {
				ret = error_set(CA_E_INPUT, "kernel '%s' is listed twice",
						kernels[i].function);
				goto out;
			}
		ret = switch_function(m, &kernels[i], &e, &decls);
		if (ret)
			goto out;
	}
	pos = ptx_header_end(m->text, m->len);
	edits_add(&e, pos, pos, xasprintf("\n// cacheadvise: switchable module (docs/injection.md)\n%s\n",
					  decls.buf ? decls.buf : ""));
	qsort(e.items, e.nr, sizeof(*e.items), cmp_edit);
	pos = 0;
	for (i = 0; i < e.nr; i++) {
		strbuf_add(out, m->text + pos, e.items[i].begin - pos);
		strbuf_addstr(out, e.items[i].text);
		pos = e.items[i].end;
	}
	strbuf_add(out, m->text + pos, m->len - pos);
out:
	strbuf_release(&decls);
	edits_release(&e);
	return ret;
}
