#ifndef CACHEADVISE_CARVEOUT_VERDICT_H
#define CACHEADVISE_CARVEOUT_VERDICT_H

/*
 * The carve-out check (issue 18, docs/cmd-profile.md "Carve-out"): where a
 * program sets a kernel's preferred L1/shared carve-out itself
 * (cudaFuncSetAttribute(..., cudaFuncAttributePreferredSharedMemoryCarveout,
 * N)), its launches were timed with that setting and with the driver's
 * default, alternating in one run. This is the decision on those times:
 * the default is advised only when it is faster beyond the noise;
 * otherwise the program's setting is kept as it is. Pure computation.
 */

#include <stddef.h>

#include <jansson.h>

/* The driver's default carve-out (CU_SHAREDMEM_CARVEOUT_DEFAULT). */
#define CARVEOUT_DEFAULT (-1)

/* What one kernel's check measured, in ns. */
struct carveout_times {
	const double *program, *deflt;  /* with the program's setting, with the default */
	size_t nr_program, nr_default;
	int replays;                    /* replays of one launch in rounds (paired by
					 * index); else the program's launches A B B A */
};

/*
 * The entry of capture.json "carveout".kernels for kernel name, whose
 * program sets program_value (a percentage, or CARVEOUT_DEFAULT): {"name",
 * "program_value", "default_value", "speedup_of_default" (ab_verdict_judge's
 * or ab_verdict_abba's object with the program's times as baseline and the
 * default's as advice, or null when nothing could be compared), "kept":
 * "default" | "program", "reason", and "advice" (the call to remove or
 * change, only when the default is kept, phrased for the code that sets it:
 * carveout_advice() with library, NULL for the program's own)}. Launches
 * that differ by more
 * than max_noise are not judged (the program's setting is kept, not
 * measured). t may be NULL (nothing timed, e.g. why_unmeasured says why).
 * Returns a new object.
 */
json_t *carveout_verdict(const char *name, int program_value, const char *library,
			 const struct carveout_times *t, double max_noise, const char *why_unmeasured);

/*
 * What to do where the driver's default was faster (a new string, caller
 * frees), phrased for the code that sets the carve-out: the program's own
 * (library NULL: "remove the cudaFuncSetAttribute(...) call"), or a
 * library's (cuBLAS, PyTorch: the call is inside it, not in the user's
 * source, so the advice says who sets it and what the user can do).
 */
char *carveout_advice(const char *name, int program_value, const char *library);

#endif
