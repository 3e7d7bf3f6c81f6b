#ifndef CACHEADVISE_GPU_H
#define CACHEADVISE_GPU_H

#include "analysis/device_model.h"

/*
 * Asking the CUDA driver about the GPU from the CLI. The driver is loaded
 * with dlopen("libcuda.so.1"), so the CLI starts, and says what is wrong,
 * on machines without one (FACTS.md).
 */

/*
 * Checks that the driver loads, initialises and sees a device, and fills
 * from device 0 what the driver reports: name, UUID, compute capability,
 * SM count, clock, threads and shared memory per SM, L2 size, persisting-L2
 * and access-policy-window limits. Other fields of dm are left alone.
 * Returns 0, or CA_E_NOGPU with a message that says what is missing ("no
 * CUDA driver: libcuda.so.1 not found", "cuInit failed: ...", "no CUDA
 * device is visible").
 */
int gpu_query(struct device_model *dm);

/* Whether MIG is enabled or the process runs under MPS, where L2 persisting
 * windows are not advised. Returns 1 and fills why, else 0. */
int gpu_shared_partitioned(char *why, size_t len);

#endif
