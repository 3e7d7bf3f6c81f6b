#ifndef CACHEADVISE_INJECT_MODULE_TABLE_H
#define CACHEADVISE_INJECT_MODULE_TABLE_H

/*
 * The injection library's table of the modules the program loaded, with the
 * PTX intake chose for them, their id and kernels (allocations are in
 * alloc_table.h, L2 windows in l2_windows.h). Not thread-safe: inject.c
 * holds its lock.
 */

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

struct seen_module {
	char id[17];
	char *origin;
	char *ptx;              /* chosen PTX text, NULL for cubin-only modules */
	size_t ptx_len;
	char **functions;       /* entry names */
	size_t nr_functions;
	void *handle;           /* CUlibrary or CUmodule the program holds */
	int is_library;
	int has_counters;       /* PTX defines the monitor counter array */
	/* A cubin with its PTX beside it (Triton's cache): that PTX file, and
	 * Triton's metadata of the kernel (intake.h), NULL / -1 otherwise. */
	char *ptx_file;
	int triton;
	long triton_num_warps, triton_shared, triton_global_scratch;
};

struct module_table {
	struct seen_module **items;
	size_t nr, alloc;
	unsigned device_arch;   /* 90 for sm_90: PTX above it is not chosen */
};

void module_table_init(struct module_table *t);

/*
 * Identifies the module in image (as passed to a load call; NULL with
 * file_name for the *FromFile / cuModuleLoad calls) and adds it to the
 * table. Returns the entry, or NULL with module_table_error() telling why.
 */
struct seen_module *module_table_identify(struct module_table *t, const void *image,
					  const char *file_name, const char *api);
const char *module_table_error(void);
/* Records the handle the program now holds for m. */
void module_table_bind(struct module_table *t, struct seen_module *m, void *handle, int is_library);
/* The most recently loaded module with an entry function called name. */
struct seen_module *module_table_find_function(struct module_table *t, const char *name);
/*
 * Synchronises, reads the module's monitor counter array, records a
 * "counters" event for the launch and zeroes the array.
 */
void module_table_read_counters(struct module_table *t, struct seen_module *m,
				const char *kernel, uint64_t seq);
/*
 * Synchronises, reads the monitor counter array at dptr (bytes long),
 * records it as a "counters" event of the launch and zeroes it (module_id
 * may be NULL). Shared by the substituted instrumented modules and the
 * launch plans' sampled monitor.
 */
void counters_emit(CUdeviceptr dptr, size_t bytes, const char *kernel, const char *module_id,
		   uint64_t seq);

#endif
