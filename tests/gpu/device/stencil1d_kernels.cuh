#ifndef CACHEADVISE_TEST_STENCIL1D_KERNELS_CUH
#define CACHEADVISE_TEST_STENCIL1D_KERNELS_CUH

/*
 * samples/stencil1d.cu's 1-D k-stencil: the sample's two kernels
 * (stencil_global, stencil_shared) and stencil_global rewritten with the
 * software cache (stencil_global_sc). Each output sums 2k + 1 consecutive
 * floats, so a thread's reads of `in` walk a few 16-byte lines (k = 4: 9
 * reads, 2 or 3 lines): the seed's per-thread sub-line reuse, which the
 * monitoring phase finds. out[i] (one store per output, grid-stride) is
 * monitored too and gets no line. stencil_shared, which already stages
 * its inputs in shared memory, is left as it is.
 */
#include <cstdint>

#include "common.cuh"
#include "softcache_slices.cuh"

#define STENCIL1D_THREADS 256

__global__ void __launch_bounds__(STENCIL1D_THREADS)
stencil_global(const float *in, float *out, uint64_t nout, int k)
{
	float scale = 1.0f / (float)(2 * k + 1);
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nout;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		float s = 0.0f;
		for (int j = 0; j <= 2 * k; j++)
			s += in[i + j];
		out[i] = s * scale;
	}
}

__global__ void __launch_bounds__(STENCIL1D_THREADS)
stencil_shared(const float *in, float *out, uint64_t nout, int k)
{
	extern __shared__ float tile[]; /* blockDim.x + 2k inputs */
	float scale = 1.0f / (float)(2 * k + 1);
	uint64_t nin = nout + 2 * k;
	for (uint64_t base = (uint64_t)blockIdx.x * blockDim.x; base < nout;
	     base += (uint64_t)gridDim.x * blockDim.x) {
		for (uint32_t l = threadIdx.x; l < blockDim.x + 2 * k; l += blockDim.x)
			if (base + l < nin)
				tile[l] = in[base + l];
		__syncthreads();
		uint64_t i = base + threadIdx.x;
		if (i < nout) {
			float s = 0.0f;
			for (int j = 0; j <= 2 * k; j++)
				s += tile[threadIdx.x + j];
			out[i] = s * scale;
		}
		__syncthreads();
	}
}

/* IDs of the structures of stencil_global's loop. */
enum { SD_IN, SD_OUT, SD_COUNT };

template <bool M, class C>
__device__ __forceinline__ void stencil_point(C &sc, const float *in, float *out, uint64_t i, int k,
					      float scale)
{
	float s = 0.0f;

	for (int j = 0; j <= 2 * k; j++)
		s += slice::load<M, SD_IN>(sc, &in[i + j]);
	slice::store<M, SD_OUT>(sc, &out[i], s * scale);
}

/*
 * stencil_global through the software cache (no shared memory of its own:
 * the cache's region is all of the dynamic shared memory). selected:
 * per-structure count of threads that cached it, or NULL.
 */
template <bool NoAlias>
__global__ void __launch_bounds__(STENCIL1D_THREADS)
stencil_global_sc(const float *in, float *out, uint64_t nout, int k, int cln, unsigned *selected)
{
	extern __shared__ uint4 sd_smem[];
	softcache::cache<SD_COUNT, NoAlias> sc;
	float scale = 1.0f / (float)(2 * k + 1);
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t step = (uint64_t)gridDim.x * blockDim.x;

	sc.init(sd_smem, cln, 1u << SD_OUT);
	/* slice 1: the monitoring phase (2k + 2 accesses an output) */
	for (; i < nout && sc.monitoring(); i += step)
		stencil_point<true>(sc, in, out, i, k, scale);
	sc.select();
	slice::count_selected(sc, selected);
	/* slice 2: the rest, through the cache */
	for (; i < nout; i += step)
		stencil_point<false>(sc, in, out, i, k, scale);
	sc.flush();
}

#endif
