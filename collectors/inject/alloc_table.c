#include "collectors/inject/alloc_table.h"

#include <string.h>

#include "base/xalloc.h"

void alloc_table_init(struct alloc_table *t)
{
	memset(t, 0, sizeof(*t));
}

const struct alloc_entry *alloc_table_add(struct alloc_table *t, CUdeviceptr ptr, size_t size)
{
	struct alloc_entry *a;

	ALLOC_GROW(t->items, t->nr + 1, t->alloc);
	a = &t->items[t->nr++];
	a->seq = t->next_seq++;
	a->ptr = ptr;
	a->size = size;
	a->live = 1;
	return a;
}

void alloc_table_remove(struct alloc_table *t, CUdeviceptr ptr)
{
	size_t i;

	for (i = t->nr; i-- > 0;)
		if (t->items[i].live && t->items[i].ptr == ptr) {
			t->items[i].live = 0;
			return;
		}
}

const struct alloc_entry *alloc_table_find(const struct alloc_table *t, CUdeviceptr ptr)
{
	size_t i;

	for (i = t->nr; i-- > 0;) {
		const struct alloc_entry *a = &t->items[i];
		if (a->live && ptr >= a->ptr && ptr < a->ptr + a->size)
			return a;
	}
	return NULL;
}

const struct alloc_entry *alloc_table_by_seq(const struct alloc_table *t, uint64_t seq)
{
	return seq < t->nr ? &t->items[seq] : NULL;
}
