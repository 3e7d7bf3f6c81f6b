#ifndef CACHEADVISE_SAMPLE_HELPER_LOADS_CUH
#define CACHEADVISE_SAMPLE_HELPER_LOADS_CUH

/*
 * The load helpers of samples/helper_loads.cu, in a header as real code
 * keeps them: every global read of both kernels goes through load_at<T> or
 * LOAD_ROW. Each kernel wants another form of the same helper's load, so a
 * source patch must give the helper the form per call site.
 */

#include <cstddef>

template <typename T>
__device__ __forceinline__ T load_at(const T *p, size_t i)
{
	return p[i];
}

/* A row element of a row-major matrix with `cols` columns. */
#define LOAD_ROW(m, cols, r, c) ((m)[(size_t)(r) * (cols) + (c)])

#endif
