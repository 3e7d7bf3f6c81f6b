#ifndef CACHEADVISE_INJECT_OWN_MODULE_H
#define CACHEADVISE_INJECT_OWN_MODULE_H

/*
 * Modules the injection library loads from PTX itself, beside the
 * program's: a capture variant, a verification version, the instrumented
 * monitor (docs/injection.md "Launch plans"). Such a module has its own
 * copy of every module-scope variable (__device__, __constant__), which
 * the program's host code never sets: it sets its own module's, by name
 * (cudaMemcpyToSymbol). So before each launch of ours the values of the
 * program's variables are copied into ours, and after the program's own
 * launch ran ours, ours (.global: a kernel may write them) back into the
 * program's. Both copies are on the launch's stream, outside the kernel's
 * activity record.
 */

#include <stddef.h>

#include <cuda.h>

struct own_global {
	CUdeviceptr ours, program;
	size_t bytes;
	int is_const;
};

struct own_module {
	CUmodule module;
	CUfunction fn;
	int failed;                 /* loading failed: not tried again */
	CUfunction program_fn;      /* whose module the globals were found in */
	struct own_global *globals;
	size_t nr_globals;
	size_t global_bytes;
};

/*
 * The function `kernel` of the module at ptx_path, loaded (JIT) on first
 * use and cached in om; the program's attributes of program_fn (dynamic
 * shared memory limit, carve-out; at least `shared` bytes) are set on it,
 * and its module-scope variables are matched by name with the program's
 * module of program_fn. NULL with an error event when it cannot be loaded
 * (tried once). `what` names it in messages.
 */
CUfunction own_module_function(struct own_module *om, const char *what, const char *ptx_path,
			       const char *kernel, CUfunction program_fn, unsigned shared);

/* Before a launch of ours: the program's values into our variables. */
void own_module_sync_in(const struct own_module *om, CUstream stream);

/* After the program's own launch ran ours: our .global variables back into
 * the program's. */
void own_module_sync_out(const struct own_module *om, CUstream stream);

void own_module_release(struct own_module *om);

#endif
