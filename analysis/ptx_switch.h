#ifndef CACHEADVISE_PTX_SWITCH_H
#define CACHEADVISE_PTX_SWITCH_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/ptx.h"
#include "base/strbuf.h"

/*
 * The switchable module (issue 15, docs/injection.md "Launch plans"): one
 * PTX module in which each chosen load of a kernel allocates in L1 or not
 * according to one bit of a per-kernel mask in constant memory, so that the
 * injection library can measure every variant of a kernel inside one
 * program run by writing the mask before a launch, without loading one
 * module per variant:
 *
 *     .visible .const .align 8 .u64 __cacheadvise_mask_<kernel> = -1;
 *
 * Bit b set: load b of the kernel's list keeps its original (allocating)
 * form; clear: it is the weak L1::no_allocate form (DESIGN.md "Modules,
 * baselines, variants"). The mask is read with ld.const, which does not go
 * through the L1 global-load pipeline, so the kernel's L1 counters see only
 * the program's own loads. The initial value (all ones) is the original
 * kernel; other loads are never touched.
 */

#define PTX_SWITCH_MASK_PREFIX "__cacheadvise_mask_"
#define PTX_SWITCH_MAX_LOADS 64

struct ptx_switch_kernel {
	const char *function;        /* an entry of the module */
	const unsigned *ordinals;    /* its loads to switch */
	/* the mask bit of each (several loads may share one); NULL: bit b is
	 * ordinals[b], and then at most PTX_SWITCH_MAX_LOADS loads */
	const unsigned char *bits;
	size_t nr_ordinals;
};

/* The bit that profile gives every patchable load it does not measure, so
 * that those loads bypass L1 in every variant as in separate runs. */
#define PTX_SWITCH_REST_BIT 63

/*
 * Appends the switchable module to out. Every listed load must be
 * patchable and allow the L1::no_allocate form (else CA_E_INPUT naming the
 * load, out untouched); a function listed twice, an unknown function or
 * ordinal, a load listed twice, a bit over 63 (or, without bits, more
 * than PTX_SWITCH_MAX_LOADS loads), a 32-bit module or one
 * that already declares a mask symbol are CA_E_INPUT too.
 */
int ptx_write_switchable(const struct ptx_module *m, const struct ptx_switch_kernel *kernels,
			 size_t nr_kernels, struct strbuf *out);

/* The mask symbol of kernel `function` (a new string, caller frees). */
char *ptx_switch_symbol(const char *function);

#endif
