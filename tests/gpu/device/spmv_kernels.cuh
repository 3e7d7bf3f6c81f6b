#ifndef CACHEADVISE_TEST_SPMV_KERNELS_CUH
#define CACHEADVISE_TEST_SPMV_KERNELS_CUH

/*
 * samples/spmv.cu's CSR products, plain (spmv_scalar, spmv_warp, and the
 * sample's generators) and rewritten with the software cache
 * (spmv_scalar_sc, spmv_warp_sc).
 *
 * spmv_scalar (a thread per row) walks its row's val and col sequentially,
 * 4 bytes at a time, and gathers x at the row's columns, half of which are
 * a band of consecutive columns: per-thread sub-line reuse in val, col and
 * x (as in records), plus rowptr[r] and rowptr[r + 1], one 16-byte line
 * for even r. The rewrite reads all of them and stores y[r] through the
 * cache and lets the monitoring phase choose.
 *
 * spmv_warp (a warp per row) reads val and col coalesced, 32 elements
 * apart in a lane, so only the row bounds share a line; the rewrite puts
 * the same accesses through the cache. Its lanes leave the monitoring
 * slice together (__any_sync on monitoring()), since each row ends in a
 * warp reduction that every lane must reach with the same row.
 *
 * The sums are the same fmaf chains in the same order, so outputs are
 * bit-identical to the plain kernels'.
 */
#include <cstdint>

#include "common.cuh"
#include "softcache_slices.cuh"

#define SPMV_THREADS 256

static uint32_t spmv_row_length(uint32_t r)
{
	return 16 + hash32(r * 2u + 1u) % 33;
}

/* One thread per row: columns and values of the generated matrix. */
__global__ void fill_matrix(const uint64_t *rowptr, uint32_t n, uint32_t *col, float *val)
{
	for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < n;
	     r += gridDim.x * blockDim.x) {
		uint64_t b = rowptr[r], e = rowptr[r + 1];
		uint32_t len = (uint32_t)(e - b), band = len / 2;
		for (uint32_t j = 0; j < len; j++) {
			uint32_t c;
			if (j < band) {
				int64_t cc = (int64_t)r - band / 2 + j;
				c = cc < 0 ? 0 : cc >= n ? n - 1 : (uint32_t)cc;
			} else {
				c = hash32(r * 64u + j) % n;
			}
			float u = (float)(hash32(r ^ (j << 24) ^ 0x5bd1e995u) >> 8) *
				  (1.0f / 16777216.0f);
			col[b + j] = c;
			val[b + j] = (0.5f + 0.5f * u) / (float)len;
		}
	}
}

/* Values in [0.5, 1.5) from a hash of the index. */
__global__ void fill_x(float *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] = 0.5f + (float)(hash32(i ^ seed) >> 8) * (1.0f / 16777216.0f);
}

__global__ void __launch_bounds__(SPMV_THREADS)
spmv_scalar(const uint64_t *rowptr, const uint32_t *col, const float *val,
	    const float *x, float *y, uint32_t n)
{
	for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < n;
	     r += gridDim.x * blockDim.x) {
		float s = 0.0f;
		for (uint64_t k = rowptr[r]; k < rowptr[r + 1]; k++)
			s = fmaf(val[k], x[col[k]], s);
		y[r] = s;
	}
}

__global__ void __launch_bounds__(SPMV_THREADS)
spmv_warp(const uint64_t *rowptr, const uint32_t *col, const float *val,
	  const float *x, float *y, uint32_t n)
{
	uint32_t lane = threadIdx.x & 31;
	uint32_t warps = gridDim.x * (blockDim.x / 32);
	for (uint32_t r = (blockIdx.x * blockDim.x + threadIdx.x) / 32; r < n; r += warps) {
		float s = 0.0f;
		uint64_t b = rowptr[r], e = rowptr[r + 1];
		for (uint64_t k = b + lane; k < e; k += 32)
			s = fmaf(val[k], x[col[k]], s);
		for (int o = 16; o > 0; o >>= 1)
			s += __shfl_down_sync(0xffffffffu, s, o);
		if (!lane)
			y[r] = s;
	}
}

/* IDs of the structures both products touch. */
enum { SP_ROWPTR, SP_COL, SP_VAL, SP_X, SP_Y, SP_COUNT };

/* Row r's entries k = first, first + step, ... < rowptr[r + 1]: the fmaf
 * chain of both kernels. */
template <bool M, class C>
__device__ __forceinline__ float spmv_partial(C &sc, const uint64_t *rowptr, const uint32_t *col,
					      const float *val, const float *x, uint32_t r,
					      uint32_t first, uint32_t step)
{
	uint64_t b = slice::load<M, SP_ROWPTR>(sc, &rowptr[r]);
	uint64_t e = slice::load<M, SP_ROWPTR>(sc, &rowptr[r + 1]);
	float s = 0.0f;

	for (uint64_t k = b + first; k < e; k += step) {
		float v = slice::load<M, SP_VAL>(sc, &val[k]);
		s = fmaf(v, slice::load<M, SP_X>(sc, &x[slice::load<M, SP_COL>(sc, &col[k])]), s);
	}
	return s;
}

/* spmv_scalar through the software cache (the cache is all of the dynamic
 * shared memory). selected: per-structure count of threads that cached
 * it, or NULL. */
template <bool NoAlias>
__global__ void __launch_bounds__(SPMV_THREADS)
spmv_scalar_sc(const uint64_t *rowptr, const uint32_t *col, const float *val,
	       const float *x, float *y, uint32_t n, int cln, unsigned *selected)
{
	extern __shared__ uint4 sp_smem[];
	softcache::cache<SP_COUNT, NoAlias> sc;
	uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;

	sc.init(sp_smem, cln, 1u << SP_Y);
	/* slice 1: the monitoring phase (about 3 rows of 32 entries) */
	for (; r < n && sc.monitoring(); r += gridDim.x * blockDim.x)
		slice::store<true, SP_Y>(sc, &y[r], spmv_partial<true>(sc, rowptr, col, val, x, r, 0, 1));
	sc.select();
	slice::count_selected(sc, selected);
	/* slice 2: the rest, through the cache */
	for (; r < n; r += gridDim.x * blockDim.x)
		slice::store<false, SP_Y>(sc, &y[r], spmv_partial<false>(sc, rowptr, col, val, x, r, 0, 1));
	sc.flush();
}

template <bool M, class C>
__device__ __forceinline__ void spmv_warp_row(C &sc, const uint64_t *rowptr, const uint32_t *col,
					      const float *val, const float *x, float *y, uint32_t r,
					      uint32_t lane)
{
	float s = spmv_partial<M>(sc, rowptr, col, val, x, r, lane, 32);

	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if (!lane)
		slice::store<M, SP_Y>(sc, &y[r], s);
}

/* spmv_warp through the software cache; as spmv_scalar_sc. */
template <bool NoAlias>
__global__ void __launch_bounds__(SPMV_THREADS)
spmv_warp_sc(const uint64_t *rowptr, const uint32_t *col, const float *val,
	     const float *x, float *y, uint32_t n, int cln, unsigned *selected)
{
	extern __shared__ uint4 sp_smem[];
	softcache::cache<SP_COUNT, NoAlias> sc;
	uint32_t lane = threadIdx.x & 31;
	uint32_t warps = gridDim.x * (blockDim.x / 32);
	uint32_t r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;   /* the same in all lanes */

	sc.init(sp_smem, cln, 1u << SP_Y);
	/* slice 1: until every lane of the warp has monitored its share */
	for (; r < n && __any_sync(0xffffffffu, sc.monitoring()); r += warps)
		spmv_warp_row<true>(sc, rowptr, col, val, x, y, r, lane);
	sc.select();
	slice::count_selected(sc, selected);
	/* slice 2: the rest, through the cache */
	for (; r < n; r += warps)
		spmv_warp_row<false>(sc, rowptr, col, val, x, y, r, lane);
	sc.flush();
}

#endif
