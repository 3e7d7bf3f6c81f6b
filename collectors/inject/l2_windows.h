#ifndef CACHEADVISE_INJECT_L2_WINDOWS_H
#define CACHEADVISE_INJECT_L2_WINDOWS_H

/*
 * Persisting-L2 windows (docs/injection.md): which kernels get which window
 * over which allocation. Applied on the launch's stream before the launch
 * and removed after it, so other kernels keep the whole L2. Not
 * thread-safe: inject.c holds its lock.
 */

#include <cuda.h>

struct alloc_table;
struct l2_windows;

/* Reads the windows file at path; NULL (reported with inject_error) when it cannot. */
struct l2_windows *l2_windows_load(const char *path);
void l2_windows_apply(struct l2_windows *w, const char *kernel, CUstream stream,
		      const struct alloc_table *allocs, int have_params);
void l2_windows_after_launch(struct l2_windows *w, const char *kernel, CUstream stream);

#endif
