#ifndef CACHEADVISE_TEST_L2_REUSE_KERNELS_CUH
#define CACHEADVISE_TEST_L2_REUSE_KERNELS_CUH

/*
 * samples/l2_reuse.cu's two kernels, plain (gather_mix, stream_scale) and
 * rewritten with the software cache (gather_mix_sc, stream_scale_sc).
 *
 * stream_scale rewrites the cold buffer in place, cold[i] = cold[i] * a + b:
 * through the cache the load fills the thread's line and the store hits it
 * (a read-write structure: the line is written back with a byte mask of the
 * one word, so the neighbours' words in the same 16-byte line are not
 * touched). gather_mix reads cold once per element and gathers the hot
 * buffer at hashed indices; its reuse is in L2 across all threads, not in
 * a thread's 16-byte lines, and its monitoring phase is expected to select
 * nothing (the rewrite then reads memory directly). Its grid fixes the
 * per-thread partial sums, so the rewrite is launched with the sample's
 * grid.
 */
#include <cstdint>

#include "common.cuh"
#include "softcache_slices.cuh"

#define L2_REUSE_THREADS 256

__global__ void __launch_bounds__(L2_REUSE_THREADS)
gather_mix(const float *hot, uint32_t nhot, const float *cold, uint64_t ncold,
	   uint32_t gathers, float *partial)
{
	uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	float acc = 0.0f;
	for (uint64_t i = tid; i < ncold; i += (uint64_t)gridDim.x * blockDim.x) {
		float v = cold[i];
		uint32_t h = hash32((uint32_t)i);
		for (uint32_t g = 0; g < gathers; g++) {
			h = hash32(h + g);
			v = fmaf(v, 0.5f, hot[h % nhot]);
		}
		acc += v;
	}
	partial[tid] = acc;
}

__global__ void __launch_bounds__(L2_REUSE_THREADS)
stream_scale(float *cold, uint64_t ncold, float a, float b)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ncold;
	     i += (uint64_t)gridDim.x * blockDim.x)
		cold[i] = fmaf(cold[i], a, b);
}

/* IDs of gather_mix's structures; stream_scale has one, cold (ID 0). */
enum { LR_COLD, LR_HOT, LR_COUNT };

template <bool M, class C>
__device__ __forceinline__ float gather_one(C &sc, const float *hot, uint32_t nhot, const float *cold,
					    uint64_t i, uint32_t gathers)
{
	float v = slice::load<M, LR_COLD>(sc, &cold[i]);
	uint32_t h = hash32((uint32_t)i);

	for (uint32_t g = 0; g < gathers; g++) {
		h = hash32(h + g);
		v = fmaf(v, 0.5f, slice::load<M, LR_HOT>(sc, &hot[h % nhot]));
	}
	return v;
}

/* gather_mix through the software cache (the cache is all of the dynamic
 * shared memory). selected: per-structure count of threads that cached
 * it, or NULL. */
template <bool NoAlias>
__global__ void __launch_bounds__(L2_REUSE_THREADS)
gather_mix_sc(const float *hot, uint32_t nhot, const float *cold, uint64_t ncold,
	      uint32_t gathers, float *partial, int cln, unsigned *selected)
{
	extern __shared__ uint4 lr_smem[];
	softcache::cache<LR_COUNT, NoAlias> sc;
	uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t i = tid, step = (uint64_t)gridDim.x * blockDim.x;
	float acc = 0.0f;

	sc.init(lr_smem, cln);
	/* slice 1: the monitoring phase */
	for (; i < ncold && sc.monitoring(); i += step)
		acc += gather_one<true>(sc, hot, nhot, cold, i, gathers);
	sc.select();
	slice::count_selected(sc, selected);
	/* slice 2: the rest, through the cache */
	for (; i < ncold; i += step)
		acc += gather_one<false>(sc, hot, nhot, cold, i, gathers);
	sc.flush();
	partial[tid] = acc;
}

template <bool M, class C>
__device__ __forceinline__ void scale_one(C &sc, float *cold, uint64_t i, float a, float b)
{
	slice::store<M, 0>(sc, &cold[i], fmaf(slice::load<M, 0>(sc, &cold[i]), a, b));
}

/* stream_scale through the software cache; as gather_mix_sc. */
template <bool NoAlias>
__global__ void __launch_bounds__(L2_REUSE_THREADS)
stream_scale_sc(float *cold, uint64_t ncold, float a, float b, int cln, unsigned *selected)
{
	extern __shared__ uint4 lr_smem[];
	softcache::cache<1, NoAlias> sc;
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t step = (uint64_t)gridDim.x * blockDim.x;

	sc.init(lr_smem, cln, 1u);
	/* slice 1: the monitoring phase (a load and a store an element) */
	for (; i < ncold && sc.monitoring(); i += step)
		scale_one<true>(sc, cold, i, a, b);
	sc.select();
	slice::count_selected(sc, selected);
	/* slice 2: the rest, through the cache */
	for (; i < ncold; i += step)
		scale_one<false>(sc, cold, i, a, b);
	sc.flush();
}

#endif
