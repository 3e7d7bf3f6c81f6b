#ifndef CACHEADVISE_TEST_STENCIL_KERNELS_CUH
#define CACHEADVISE_TEST_STENCIL_KERNELS_CUH

/*
 * The register-cache seed's 1-D k-stencil, B[i] = (A[i] + ... + A[i + 2k])
 * / (2k + 1) for i < n - 2k, three ways (ints, so all three agree bit for
 * bit):
 *   stencil_plain<K>   2K + 1 global loads per thread (neighbouring lanes
 *                      read overlapping elements: the shape stencil_detect
 *                      looks for);
 *   stencil_shared<K>  the seed's shared-memory version (blockDim + 2K
 *                      inputs, __syncthreads);
 *   stencil_rc<K>      the warp register cache (device/regcache.cuh).
 * Plus kernels the detector must not flag, and one with a run-time k.
 */
#include "device/regcache.cuh"

template <int K>
__global__ void stencil_plain(const int *A, int *B, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n - 2 * K) {
		int acc = 0;
#pragma unroll
		for (int j = 0; j <= 2 * K; j++)
			acc += A[i + j];
		B[i] = acc / (2 * K + 1);
	}
}

template <int K>
__global__ void stencil_shared(const int *A, int *B, long long n)
{
	extern __shared__ int s[];          /* blockDim.x + 2K */
	int t = threadIdx.x;
	long long g = (long long)blockIdx.x * blockDim.x + t;

	s[t] = g < n ? A[g] : 0;
	if (t < 2 * K)
		s[blockDim.x + t] = g + blockDim.x < n ? A[g + blockDim.x] : 0;
	__syncthreads();
	if (g < n - 2 * K) {
		int acc = 0;
#pragma unroll
		for (int j = 0; j <= 2 * K; j++)
			acc += s[t + j];
		B[g] = acc / (2 * K + 1);
	}
}

template <int K>
__global__ void stencil_rc(const int *A, int *B, long long n)
{
	long long first = regcache::warp_first(blockIdx.x, blockDim.x);
	regcache::window<int, K> w;

	w.load(A, first, n);
	int acc = w.sum();
	long long i = first + regcache::lane();
	if (i < n - 2 * K)
		B[i] = acc / (2 * K + 1);
}

/* k known only at run time: nvcc unrolls the loop by 4 (k is a lower bound). */
__global__ void stencil_runtime_k(const int *A, int *B, long long n, int k)
{
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n - 2 * k;
	     i += (long long)gridDim.x * blockDim.x) {
		int acc = 0;
		for (int j = 0; j <= 2 * k; j++)
			acc += A[i + j];
		B[i] = acc / (2 * k + 1);
	}
}

/* Not stencils: rows of 8 per thread (lanes 32 bytes apart), and a gather. */
__global__ void rows_of_8(const int *A, int *B, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;

	if (8 * i + 2 < n)
		B[i] = A[8 * i] + A[8 * i + 1] + A[8 * i + 2];
}

__global__ void gather3(const int *A, const int *idx, int *B, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		long long j = idx[i];
		B[i] = A[j] + A[j + 1] + A[j + 2];
	}
}

#endif
