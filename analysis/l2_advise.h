#ifndef CACHEADVISE_L2_ADVISE_H
#define CACHEADVISE_L2_ADVISE_H

#include <jansson.h>

#include "analysis/capture_model.h"

/*
 * Persisting-L2 window advice (seeds/cuda-l2-persistence-guide.txt, issue
 * 8), from what a capture recorded: the device's limits, the program's
 * device allocations (numbered in allocation order, so they can be named
 * across runs), which kernel parameters pointed into which allocation at
 * each launch, and how many bytes each kernel read through each parameter
 * (the monitor run). Every kernel the discovery run saw counts, not only the
 * measured ones: "all_kernels" entries carry "allocs_used" too, and a
 * kernel without PTX (cuBLAS, PyTorch, cubin-only builds) is assumed to
 * read each buffer once a launch, as is any kernel without monitor counts;
 * a window needs no patching, so those kernels get one too.
 *
 * A buffer is a candidate when several launches read it, the data the
 * program touches does not fit in L2 anyway, and a window can cover it
 * (at most accessPolicyMaxWindowSize). A buffer of at most an eighth of L2
 * already stays in L2 within a launch: a window can save only its reload
 * once a launch, and is not advised where that is under 1% of the bytes
 * the kernels read (a hot lookup table). The best candidate gets the guide's
 * recipe — set-aside min(3/4 of L2, persisting max), window over the
 * buffer, hitRatio = min(1, set-aside / window), hitProp persisting,
 * missProp streaming — scoped to the kernels that read it (set before each
 * of their launches, removed after), plus variants with a smaller hit
 * ratio and a window cut to the set-aside. FACTS.md found the recipe slower
 * as often as faster on an H200: the variants exist to be measured, and
 * only a measured win is kept.
 *
 * Every limit comes from capture.device; nothing is hard-coded. When the
 * device reports no persisting L2, or capture.device.partitioned says MIG
 * or MPS is in use, no window is advised and the result says why.
 */

/*
 * Returns a new object (caller owns), the "l2" section of capture.json:
 *   {"status": "advised" | "none", "reason": "...",
 *    "l2_bytes", "set_aside_bytes", "window_max_bytes",
 *    "footprint_bytes": bytes of all buffers the kernels touch,
 *    "candidates": [{"alloc", "bytes", "launches", "bytes_read", "reuse",
 *                    "kernels": [...], "kernels_without_ptx": [...], "score"}],
 *                   best first
 *    "windows": [{"variant": "guide" | "half_ratio" | "fit_set_aside",
 *                 "set_aside_bytes", "alloc", "offset", "num_bytes",
 *                 "hit_ratio", "hit_prop", "miss_prop", "kernels": [...],
 *                 "kernels_without_ptx": [...]}]}
 * kernels_without_ptx: those of "kernels" in a module without PTX
 * (capture.json "modules"[].kernels where has_ptx is false).
 * cap is the capture as its reader accepted it. Returns NULL with
 * CA_E_INPUT set when the capture lacks "device".
 */
json_t *l2_advise(const struct capture *cap);

/* The file the injection library reads (docs/injection.md) for one window
 * of the "l2" section, as capture_l2_from_json() read it. */
json_t *l2_advise_window_file(const struct capture_l2_window *window);

#endif
