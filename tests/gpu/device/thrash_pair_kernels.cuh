#ifndef CACHEADVISE_TEST_THRASH_PAIR_KERNELS_CUH
#define CACHEADVISE_TEST_THRASH_PAIR_KERNELS_CUH

/*
 * samples/thrash_pair.cu's windowed correlation, plain (correlate, the
 * sample's kernel as built by default) and rewritten with the software
 * cache (correlate_sc).
 *
 * The plain kernel loads A[ia] (float4) and B[ib] (float2) whole, one
 * step ahead of the sum, so every step's last loads are never used. The
 * rewrite reads each operand where the sum uses it, a.x with b.x, a.y
 * with b.y, a.z with b.x, a.w with b.y, through the thread's line of A and
 * of B: one 16-byte fill and three hits each per step. The sums are the
 * same fmaf chain in the same order, so the outputs are bit-identical.
 * A thread's consecutive steps are blockDim elements apart, so there is no
 * reuse between steps in a 16-byte line; the sample's reuse (all warps of
 * a block sweeping the same arrays) is across threads, which a
 * thread-private cache cannot keep. c[row] and out[row] (once per row)
 * are monitored too and get no line. The histogram stays in the kernel's
 * shared memory, the cache's region follows it, and the block's barrier
 * before the global histogram update is sc.syncthreads().
 */
#include <cstdint>

#include "common.cuh"
#include "softcache_slices.cuh"

__global__ void __launch_bounds__(1024)
correlate(const float4 *a, uint32_t na, const float2 *b, uint32_t nb,
	  const float *c, uint64_t nrows, uint32_t steps, uint32_t nbins,
	  float *out, uint32_t *hist_g)
{
	extern __shared__ uint32_t hist[];

	for (uint32_t i = threadIdx.x; i < nbins; i += blockDim.x)
		hist[i] = 0;
	__syncthreads();

	uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
	uint32_t ia = (uint32_t)(((uint64_t)blockIdx.x * 977u * blockDim.x + threadIdx.x) % na);
	uint32_t ib = (uint32_t)(((uint64_t)blockIdx.x * 331u * blockDim.x + threadIdx.x) % nb);
	for (uint64_t row = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     row < nrows; row += nthreads) {
		float s = 0.0f;
		float4 va = make_float4(0.f, 0.f, 0.f, 0.f);
		float2 vb = make_float2(0.f, 0.f);
#pragma unroll 1
		for (uint32_t k = 0; k <= steps; k++) {
			float4 na4 = a[ia];
			float2 nb2 = b[ib];
			if (k) {
				s = fmaf(va.x, vb.x, s);
				s = fmaf(va.y, vb.y, s);
				s = fmaf(va.z, vb.x, s);
				s = fmaf(va.w, vb.y, s);
			}
			va = na4;
			vb = nb2;
			ia += blockDim.x;
			if (ia >= na)
				ia -= na;
			ib += blockDim.x;
			if (ib >= nb)
				ib -= nb;
		}
		s *= c[row];
		out[row] = s;
		atomicAdd(&hist[(__float_as_uint(s) >> 7) % nbins], 1u);
	}
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < nbins; i += blockDim.x)
		if (hist[i])
			atomicAdd(&hist_g[i], hist[i]);
}

/* Values in [-1, 1) from a hash of the index (the sample's fill_float). */
__global__ void fill_signed_float(float *p, uint64_t n, uint32_t seed)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t h = hash32((uint32_t)i ^ hash32((uint32_t)(i >> 32) + seed));
		p[i] = (float)(int32_t)h * (1.0f / 2147483648.0f);
	}
}

/* IDs of the structures the row loop touches. */
enum { TP_A, TP_B, TP_C, TP_OUT, TP_COUNT };

__device__ __forceinline__ void sweep(uint32_t &ia, uint32_t na, uint32_t &ib, uint32_t nb)
{
	ia += blockDim.x;
	if (ia >= na)
		ia -= na;
	ib += blockDim.x;
	if (ib >= nb)
		ib -= nb;
}

/* One output row: the plain kernel's steps + 1 sweep positions, of which
 * the first `steps` are summed. Returns the row's value. */
template <bool M, class C>
__device__ __forceinline__ float correlate_row(C &sc, const float4 *a, uint32_t na, const float2 *b,
					       uint32_t nb, const float *c, uint64_t row, uint32_t steps,
					       float *out, uint32_t &ia, uint32_t &ib)
{
	float s = 0.0f;

#pragma unroll 1
	for (uint32_t k = 0; k < steps; k++) {
		const float *pa = (const float *)(a + ia), *pb = (const float *)(b + ib);

		s = fmaf(slice::load<M, TP_A>(sc, &pa[0]), slice::load<M, TP_B>(sc, &pb[0]), s);
		s = fmaf(slice::load<M, TP_A>(sc, &pa[1]), slice::load<M, TP_B>(sc, &pb[1]), s);
		s = fmaf(slice::load<M, TP_A>(sc, &pa[2]), slice::load<M, TP_B>(sc, &pb[0]), s);
		s = fmaf(slice::load<M, TP_A>(sc, &pa[3]), slice::load<M, TP_B>(sc, &pb[1]), s);
		sweep(ia, na, ib, nb);
	}
	sweep(ia, na, ib, nb);   /* the position the plain kernel loads and drops */
	s *= slice::load<M, TP_C>(sc, &c[row]);
	slice::store<M, TP_OUT>(sc, &out[row], s);
	return s;
}

/*
 * correlate through the software cache. Dynamic shared memory: the
 * histogram (nbins words), then the cache at cache_offset. The row loop
 * is the main loop the two slices split. selected: per-structure count of
 * threads that cached it, or NULL.
 */
template <bool NoAlias>
__global__ void __launch_bounds__(1024)
correlate_sc(const float4 *a, uint32_t na, const float2 *b, uint32_t nb,
	     const float *c, uint64_t nrows, uint32_t steps, uint32_t nbins,
	     float *out, uint32_t *hist_g, size_t cache_offset, int cln, unsigned *selected)
{
	extern __shared__ uint4 tp_smem[];
	uint32_t *hist = (uint32_t *)tp_smem;
	softcache::cache<TP_COUNT, NoAlias> sc;

	sc.init((char *)tp_smem + cache_offset, cln, 1u << TP_OUT);
	for (uint32_t i = threadIdx.x; i < nbins; i += blockDim.x)
		hist[i] = 0;
	__syncthreads();

	uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
	uint32_t ia = (uint32_t)(((uint64_t)blockIdx.x * 977u * blockDim.x + threadIdx.x) % na);
	uint32_t ib = (uint32_t)(((uint64_t)blockIdx.x * 331u * blockDim.x + threadIdx.x) % nb);
	uint64_t row = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	/* slice 1: the monitoring phase (a row is 8 * steps accesses) */
	for (; row < nrows && sc.monitoring(); row += nthreads) {
		float s = correlate_row<true>(sc, a, na, b, nb, c, row, steps, out, ia, ib);
		atomicAdd(&hist[(__float_as_uint(s) >> 7) % nbins], 1u);
	}
	sc.select();
	slice::count_selected(sc, selected);
	/* slice 2: the rest, through the cache */
	for (; row < nrows; row += nthreads) {
		float s = correlate_row<false>(sc, a, na, b, nb, c, row, steps, out, ia, ib);
		atomicAdd(&hist[(__float_as_uint(s) >> 7) % nbins], 1u);
	}
	sc.syncthreads();
	for (uint32_t i = threadIdx.x; i < nbins; i += blockDim.x)
		if (hist[i])
			atomicAdd(&hist_g[i], hist[i]);
}

#endif
