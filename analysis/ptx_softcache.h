#ifndef CACHEADVISE_PTX_SOFTCACHE_H
#define CACHEADVISE_PTX_SOFTCACHE_H

#include <stddef.h>

#include "analysis/ptx.h"
#include "base/strbuf.h"

/*
 * The automatic software cache (issue 18; docs/runtime.md "The automatic
 * rewrite"): PTX in, PTX out. The global loads of a kernel's read-only data
 * structures (pointer parameters the software-cache ranking selected) go
 * through thread-private 16-byte lines in shared memory, as the seed's
 * accessThroughCache does:
 *
 *   - the read functions of device/softcache_calls.cu, compiled to PTX by
 *     nvcc at build time and embedded here, are appended to the module as
 *     .func (names __cacheadvise_sc_read1/2/4/8/16);
 *   - each entry gets a static .shared array of lines, one per structure
 *     and thread of a block, slot-major (slot k of thread t at
 *     (k * threads + t) * 16, conflict-free across a warp);
 *   - at the top of the entry each thread computes its line addresses and
 *     clears its tags (kept in registers); a launch with more threads per
 *     block than the storage was sized for runs with the cache off;
 *   - each ld.global of a cached structure becomes a call, its tag update
 *     and a conversion of the raw bits into the load's destination.
 *
 * Only read-only structures are cached (lines are never written back), and
 * only loads of the entry itself (not of the .func bodies it calls). The
 * original text is kept apart from the replaced loads and added lines.
 */

struct ptx_softcache_kernel {
	const char *function;           /* the entry */
	const int *params;              /* structures (parameter indices) to cache, best first */
	size_t nr_params;
	unsigned threads_per_block;     /* the launch's block: the storage is sized for it */
	unsigned long long dynamic_shared_bytes;   /* what its launches ask for */
	unsigned long long shared_per_block_optin; /* the device's per-block limit, 0 unknown */
};

/* What the rewrite did to one kernel. */
struct ptx_softcache_done {
	size_t nr_loads;                /* loads now read through the cache */
	size_t nr_left;                 /* loads of the cached structures left as they were */
	size_t shared_bytes;            /* static shared memory added */
	int *params;                    /* structures cached (owned) */
	size_t nr_params;
	char *note;                     /* why loads or structures were left out, NULL none (owned) */
};

/* Static shared memory a block may declare (PTX: 48 KB). */
#define PTX_SOFTCACHE_STATIC_SHARED_MAX 49152
/* The prefix of every name the rewrite adds. */
#define PTX_SOFTCACHE_PREFIX "__cacheadvise_sc_"

/* Whether the read functions were compiled in (nvcc at build time). */
int ptx_softcache_available(void);

/* The embedded PTX of device/softcache_calls.cu, "" without nvcc. */
const char *ptx_softcache_functions(void);

void ptx_softcache_done_release(struct ptx_softcache_done *d);

/*
 * Rewrites the nr kernels k[] of module m (give every kernel of a module in
 * one call: a rewritten module is refused). done[] (nr entries, zeroed by
 * the caller; release each) says per kernel what was done. Returns 0 and
 * appends the module to out when at least one kernel was rewritten; a
 * kernel that cannot be while others can is left unchanged and its
 * done[i].note says why. Returns 1 with *reason (caller frees) when none
 * can be, with out untouched: "not built with nvcc", "parameter 2 is
 * written by the kernel", "... need 40960 bytes of static shared memory
 * ...", "too little free shared memory ...", a module rewritten before.
 */
int ptx_softcache_rewrite(const struct ptx_module *m, const struct ptx_softcache_kernel *k,
			  size_t nr, struct strbuf *out, struct ptx_softcache_done *done,
			  char **reason);

#endif
