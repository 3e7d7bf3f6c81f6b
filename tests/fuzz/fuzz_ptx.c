/*
 * libFuzzer target for the PTX parser and rewriter: parse anything; when it
 * parses, rewrite every patchable load to L1::no_allocate and check that
 * the result parses again with the same functions and loads (rewriting
 * changes opcodes only). Seeds: tests/fuzz/corpus/ptx/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_module(const struct ptx_module *m)
{
	size_t i, j;

	for (i = 0; i < m->nr_functions; i++) {
		const struct ptx_function *f = &m->functions[i];
		if (f->body_begin >= m->len || f->body_end >= m->len || f->body_end <= f->body_begin)
			__builtin_trap();
		for (j = 0; j < f->nr_loads; j++) {
			const struct ptx_load *ld = &f->loads[j];
			size_t n = strlen(ld->opcode);
			if (ld->ordinal != j || ld->text_offset + ld->text_len > m->len ||
			    n > ld->text_len || memcmp(m->text + ld->text_offset, ld->opcode, n) ||
			    m->text[ld->text_offset + ld->text_len - 1] != ';')
				__builtin_trap();
			if (ld->param >= (int)f->nr_params || ld->patchable != !ld->unpatchable_reason)
				__builtin_trap();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptx_module *m = NULL, *r = NULL;
	struct ptx_load_edit *edits = NULL;
	struct strbuf out = STRBUF_INIT;
	size_t i, j, n = 0, alloc = 0;

	if (ptx_parse("fuzz.ptx", (const char *)data, size, &m))
		return 0;
	check_module(m);
	for (i = 0; i < m->nr_functions; i++)
		for (j = 0; j < m->functions[i].nr_loads; j++) {
			/* the priority a load's cache hint carries: traced back
			 * through the function's text (check's reader) */
			if ((unsigned)ptx_load_l2_priority(m, &m->functions[i],
							   &m->functions[i].loads[j]) >
			    L2_PRIORITY__COUNT)
				__builtin_trap();
			if (!m->functions[i].loads[j].patchable)
				continue;
			ALLOC_GROW(edits, n + 1, alloc);
			edits[n].function = m->functions[i].name;
			edits[n].ordinal = (unsigned)j;
			edits[n].action = LOAD_ACTION_NO_ALLOCATE;
			n++;
		}
	if (!ptx_rewrite_loads(m, edits, n, &out)) {
		if (ptx_parse("rewritten.ptx", out.buf, out.len, &r))
			__builtin_trap();
		check_module(r);
		if (r->nr_functions != m->nr_functions)
			__builtin_trap();
		for (i = 0; i < m->nr_functions; i++)
			if (r->functions[i].nr_loads != m->functions[i].nr_loads)
				__builtin_trap();
		ptx_module_free(r);
	}
	strbuf_release(&out);
	free(edits);
	ptx_module_free(m);
	return 0;
}
