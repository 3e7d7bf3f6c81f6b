#ifndef CACHEADVISE_INJECT_ALLOC_TABLE_H
#define CACHEADVISE_INJECT_ALLOC_TABLE_H

/*
 * The injection library's table of the program's device allocations, by
 * sequence number (stable across runs of one program) and by address. Not
 * thread-safe: inject.c holds its lock.
 */

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

struct alloc_entry {
	uint64_t seq;           /* allocation sequence number, stable across runs */
	CUdeviceptr ptr;
	size_t size;
	int live;
};

struct alloc_table {
	struct alloc_entry *items;
	size_t nr, alloc;
	uint64_t next_seq;
};

void alloc_table_init(struct alloc_table *t);
const struct alloc_entry *alloc_table_add(struct alloc_table *t, CUdeviceptr ptr, size_t size);
void alloc_table_remove(struct alloc_table *t, CUdeviceptr ptr);
/* The live allocation containing ptr, or NULL. */
const struct alloc_entry *alloc_table_find(const struct alloc_table *t, CUdeviceptr ptr);
/* The allocation with sequence number seq (live or not), or NULL. */
const struct alloc_entry *alloc_table_by_seq(const struct alloc_table *t, uint64_t seq);

#endif
