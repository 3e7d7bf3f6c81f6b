#ifndef CACHEADVISE_TEST_STREAM_TABLE_KERNELS_CUH
#define CACHEADVISE_TEST_STREAM_TABLE_KERNELS_CUH

/*
 * samples/stream_table.cu's decoder, plain (decode_keys, the sample's
 * kernel as built by default) and rewritten with the software cache
 * (decode_keys_sc).
 *
 * The plain kernel loads each 16-byte key whole into registers (with the
 * next one in flight) and cuts it into 16-bit symbols there. The rewrite
 * reads symbol j of key r where it is used, ((const uint16_t *)key)[j],
 * through the key's cache line: one 16-byte fill, then steps - 1 hits in
 * the thread's line (the seed's per-thread sub-line reuse; the symbols
 * are the same bytes, little-endian, as the plain kernel's shifts). The
 * transition-table lookup goes through the cache too; the monitoring
 * phase is expected to leave it out (its rows are gathered at
 * data-dependent states, so a thread's next lookup is seldom in the same
 * 16-byte line). The class map stays in the kernel's shared memory; the
 * cache's region follows it (launch_plan.cache_offset). The prologue
 * (class-map fill) and the one store per thread are outside the loop.
 */
#include <cstdint>

#include "common.cuh"
#include "softcache_slices.cuh"

#define ST_NCLASS 64u   /* classes per state: one state's row is 256 bytes */
#define ST_PREFETCH 8   /* L2 prefetch distance, in keys of this thread */

__global__ void __launch_bounds__(1024)
decode_keys(const uint4 *keys, uint32_t stride, uint64_t nkeys,
	    uint32_t passes, const uint32_t *trans, uint32_t nstates,
	    const uint32_t *classmap_g, uint32_t nmap, uint32_t steps,
	    uint32_t *out)
{
	extern __shared__ uint32_t classmap[];

	for (uint32_t i = threadIdx.x; i < nmap; i += blockDim.x)
		classmap[i] = classmap_g[i];
	__syncthreads();

	uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
	uint32_t state = (uint32_t)(tid % nstates), acc = 0;

	for (uint32_t p = 0; p < passes; p++) {
		uint64_t r = tid;
		uint4 cur = make_uint4(0, 0, 0, 0);
		if (r < nkeys)
			cur = keys[r * stride];
		for (; r < nkeys; r += nthreads) {
			uint4 nxt = make_uint4(0, 0, 0, 0);
			if (r + nthreads < nkeys)
				nxt = keys[(r + nthreads) * stride];
			if (r + ST_PREFETCH * nthreads < nkeys)
				asm volatile("prefetch.global.L2 [%0];" ::"l"(
					keys + (r + ST_PREFETCH * nthreads) * stride));
			uint64_t lo = cur.x | (uint64_t)cur.y << 32;
			uint64_t hi = cur.z | (uint64_t)cur.w << 32;
#pragma unroll 1
			for (uint32_t j = 0; j < steps; j++) {
				uint64_t w = j < 4 ? lo >> (16 * j) : hi >> (16 * (j - 4));
				uint32_t sym = (uint32_t)w & 0xffffu;
				uint32_t c = classmap[(sym * nmap) >> 16];
				state = trans[state * ST_NCLASS + (c & (ST_NCLASS - 1))];
				acc += state ^ c;
			}
			cur = nxt;
		}
	}
	out[tid] = acc ^ (state << 20);
}

/* IDs of the structures the decoding loop reads. */
enum { ST_KEYS, ST_TRANS, ST_COUNT };

/* Key r of this thread: its `steps` symbols, each a class-map and a table
 * lookup (and, as in the plain kernel, an L2 prefetch of a later key). */
template <bool M, class C>
__device__ __forceinline__ void decode_one(C &sc, const uint4 *keys, uint32_t stride, uint64_t nkeys,
					   uint64_t r, uint64_t nthreads, const uint32_t *trans,
					   const uint32_t *classmap, uint32_t nmap, uint32_t steps,
					   uint32_t &state, uint32_t &acc)
{
	const uint16_t *sym = (const uint16_t *)(keys + r * stride);

	if (r + ST_PREFETCH * nthreads < nkeys)
		asm volatile("prefetch.global.L2 [%0];" ::"l"(keys + (r + ST_PREFETCH * nthreads) * stride));
#pragma unroll 1
	for (uint32_t j = 0; j < steps; j++) {
		uint32_t s = slice::load<M, ST_KEYS>(sc, &sym[j]);
		uint32_t c = classmap[(s * nmap) >> 16];
		state = slice::load<M, ST_TRANS>(sc, &trans[state * ST_NCLASS + (c & (ST_NCLASS - 1))]);
		acc += state ^ c;
	}
}

/*
 * decode_keys through the software cache. Dynamic shared memory: the
 * class map (nmap words), then the cache at cache_offset. The (pass, key)
 * loop is the main loop the two slices split. selected: per-structure
 * count of threads that cached it, or NULL.
 */
template <bool NoAlias>
__global__ void __launch_bounds__(1024)
decode_keys_sc(const uint4 *keys, uint32_t stride, uint64_t nkeys,
	       uint32_t passes, const uint32_t *trans, uint32_t nstates,
	       const uint32_t *classmap_g, uint32_t nmap, uint32_t steps,
	       uint32_t *out, size_t cache_offset, int cln, unsigned *selected)
{
	extern __shared__ uint4 st_smem[];
	uint32_t *classmap = (uint32_t *)st_smem;
	softcache::cache<ST_COUNT, NoAlias> sc;

	sc.init((char *)st_smem + cache_offset, cln);
	for (uint32_t i = threadIdx.x; i < nmap; i += blockDim.x)
		classmap[i] = classmap_g[i];
	__syncthreads();

	uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t nthreads = (uint64_t)gridDim.x * blockDim.x;
	uint32_t state = (uint32_t)(tid % nstates), acc = 0;
	uint32_t p = tid < nkeys ? 0 : passes;   /* a thread without keys has no passes */
	uint64_t r = tid;

	/* slice 1: the monitoring phase */
	while (p < passes && sc.monitoring()) {
		decode_one<true>(sc, keys, stride, nkeys, r, nthreads, trans, classmap, nmap, steps,
				 state, acc);
		if ((r += nthreads) >= nkeys) {
			r = tid;
			p++;
		}
	}
	sc.select();
	slice::count_selected(sc, selected);
	/* slice 2: the rest, through the cache */
	while (p < passes) {
		decode_one<false>(sc, keys, stride, nkeys, r, nthreads, trans, classmap, nmap, steps,
				  state, acc);
		if ((r += nthreads) >= nkeys) {
			r = tid;
			p++;
		}
	}
	sc.flush();
	out[tid] = acc ^ (state << 20);
}

#endif
