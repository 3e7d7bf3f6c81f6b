#ifndef CACHEADVISE_INDUCTOR_H
#define CACHEADVISE_INDUCTOR_H

/*
 * Kernels torch.compile generated (Inductor, issue 27). Their Triton source
 * lies under Inductor's cache folder, /tmp/torchinductor_<user>/ (or
 * $TORCHINDUCTOR_CACHE_DIR): it is not the user's to patch. Inductor's
 * output code (the module that launches the kernels, in the same folder)
 * precedes each kernel with comments that say where it came from:
 *
 *     # kernel path: /tmp/torchinductor_root/ab/cabc....py
 *     # Topologically Sorted Source Nodes: [x_1, gelu], Original ATen: [aten.gelu, ...]
 *     # Source node to ATen node mapping:
 *     #   gelu => add_2, erf, mul_2
 *
 * Their wording changes between PyTorch versions, so they are shown as
 * written, not parsed.
 */

/* Whether path is a file of Inductor's cache: it has a "torchinductor_"
 * folder, or lies under $TORCHINDUCTOR_CACHE_DIR. */
int inductor_generated(const char *path);

/*
 * The comment lines after "# kernel path: <kernel_file>" in Inductor's
 * output code under the cache folder of kernel_file, each without its "# ",
 * joined by '\n' (caller frees); NULL when none is found. Reads at most a
 * few hundred files of at most 16 MiB each.
 */
char *inductor_provenance(const char *kernel_file);

#endif
