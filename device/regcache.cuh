#ifndef CACHEADVISE_REGCACHE_CUH
#define CACHEADVISE_REGCACHE_CUH

/*
 * The warp register cache (seeds/register-cache-warp-shuffle.ko.txt, after
 * NVIDIA's "Register Cache: Caching for Warp-Centric CUDA Programs"): the
 * inputs a warp needs are spread round-robin over its lanes' registers,
 * and what would be a shared-memory read of another thread's input
 * becomes a shuffle: no shared memory and no __syncthreads().
 *
 * The seed's two primitives are Read(src_lane, remote_reg) and
 * Publish(local_reg); __shfl_sync does both at once, so exchange() is the
 * one primitive here: every lane publishes `published` and receives the
 * value that lane src_lane published.
 *
 * window<T, K> is the 1-D k-stencil's cache: a warp's 32 + 2K consecutive
 * elements, element e in lane e % 32, register e / 32 (rc[0] for all lanes,
 * rc[1] for lanes < 2K). read(i) returns element lane + i, i in [0, 2K],
 * and costs one shuffle (none for i == 0). A k-stencil output then takes
 * 2 global loads (instead of 2K + 1) and 2K shuffles per thread:
 *
 *     __global__ void stencil_rc(const int *A, int *B, long long n)
 *     {
 *         long long first = regcache::warp_first(blockIdx.x, blockDim.x);
 *         regcache::window<int, K> w;
 *         w.load(A, first, n);          // every lane of the warp must call
 *         int sum = w.sum();            // A[i] + ... + A[i + 2K]
 *         long long i = first + regcache::lane();
 *         if (i < n - 2 * K)
 *             B[i] = sum / (2 * K + 1);
 *     }
 *
 * Every lane of the warp must take part in load(), read() and sum(): keep
 * out-of-range threads alive (load() fills past n with T()) and guard only
 * the store. Blocks must be a multiple of 32 threads.
 */

#include <cuda_runtime.h>

namespace regcache {

constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ int lane()
{
	return (int)(threadIdx.x & 31);
}

/* Index of the first element the calling thread's warp works on, for a 1-D
 * grid where element i belongs to thread i. */
__device__ __forceinline__ long long warp_first(unsigned block, unsigned block_threads)
{
	return (long long)block * block_threads + (threadIdx.x & ~31u);
}

/* Publish(published) and Read(src_lane) in one shuffle. */
template <typename T>
__device__ __forceinline__ T exchange(T published, int src_lane, unsigned mask = FULL_MASK)
{
	return __shfl_sync(mask, published, src_lane);
}

template <typename T, int K>
struct window {
	static_assert(K >= 0 && 2 * K < 32, "regcache::window holds 32 + 2K elements, 2K < 32");

	T rc[2];

	/* Fetches elements first .. first + 31 + 2K (T() at and past n). */
	__device__ __forceinline__ void load(const T *A, long long first, long long n)
	{
		long long e0 = first + lane(), e1 = e0 + 32;

		rc[0] = e0 < n ? A[e0] : T();
		rc[1] = (lane() < 2 * K && e1 < n) ? A[e1] : T();
	}

	/* The highest offset read() takes: 2K. */
	static constexpr int max_reach = 2 * K;

	/*
	 * load() for a radius known only at run time (a loop over a kernel
	 * parameter): fetches elements first .. first + 31 + reach, where
	 * reach (the highest offset read() will be asked for, 2k for a
	 * k-stencil) is at most max_reach and the same in every lane.
	 */
	__device__ __forceinline__ void load(const T *A, long long first, long long n, int reach)
	{
		long long e0 = first + lane(), e1 = e0 + 32;

		rc[0] = e0 < n ? A[e0] : T();
		rc[1] = (lane() < reach && e1 < n) ? A[e1] : T();
	}

	/* Element lane + i of the window; all lanes call with the same i. */
	__device__ __forceinline__ T read(int i) const
	{
		if (i == 0)
			return rc[0];
		/* The owner of element lane + i is lane (lane + i) % 32; it holds
		 * it in rc[1] exactly when it wrapped, i.e. when its lane < i. */
		T published = lane() < i ? rc[1] : rc[0];
		return exchange(published, (lane() + i) & 31);
	}

	/* A[lane] + A[lane + 1] + ... + A[lane + 2K], summed in that order. */
	__device__ __forceinline__ T sum() const
	{
		T acc = rc[0];
#pragma unroll
		for (int i = 1; i <= 2 * K; i++)
			acc += read(i);
		return acc;
	}
};

/* Shuffles per thread for one k-stencil output (what stencil_detect reports). */
__host__ __device__ constexpr int stencil_shuffles(int k)
{
	return 2 * k;
}

} /* namespace regcache */

#endif
