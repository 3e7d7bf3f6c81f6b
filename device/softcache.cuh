#ifndef CACHEADVISE_SOFTCACHE_CUH
#define CACHEADVISE_SOFTCACHE_CUH

/*
 * The software cache of "Resurrecting L1" (seeds/software-cache-
 * resurrecting-l1.txt): thread-private 16-byte cache lines in shared
 * memory, one line per selected data structure, chosen by a short
 * monitoring phase. docs/runtime.md shows a whole kernel; in short:
 *
 *     __global__ void k(const char *a, const int *b, int *out, int n, int cln)
 *     {
 *         extern __shared__ uint4 smem[];
 *         softcache::cache<3> sc;
 *         sc.init(smem, cln);                      // cln from softcache::plan()
 *         int i = begin;
 *         for (; i < end && sc.monitoring(); i++) {   // slice 1: monitoring
 *             char x = a[i];    sc.simulate<0>(&a[i]);
 *             int y = b[i];     sc.simulate<1>(&b[i]);
 *             out[i] = f(x, y); sc.simulate<2>(&out[i], true);
 *         }
 *         sc.select();                             // calculateWhatDataToCache
 *         for (; i < end; i++)                     // slice 2: through the cache
 *             sc.write<2>(&out[i], f(sc.read<0>(&a[i]), sc.read<1>(&b[i])));
 *         sc.flush();                              // before the kernel ends
 *     }
 *
 * Correctness rules (the seed's, plus DESIGN.md's barrier rule):
 *   - flush() before leaving the kernel: dirty lines live in shared memory.
 *   - sc.syncthreads() instead of __syncthreads(), sc.threadfence*()
 *     instead of __threadfence*(): both flush and invalidate every line
 *     first, so what other threads wrote is read afresh afterwards.
 *   - sc.flush<ID>(p) before an atomic on p (then do the atomic on memory).
 *   - Write-back is masked by byte: a dirty line writes only the bytes the
 *     thread wrote (whole words with plain stores, partial words with an
 *     atomicCAS that replaces just those bytes), so two threads writing
 *     different bytes of one 16-byte memory line lose nothing.
 *   - Without restrict (the default, cache<N, false>) every access is
 *     looked up in all of the thread's lines, so pointers that alias one
 *     another stay coherent within the thread; cache<N, true> promises
 *     that the N structures do not overlap and looks up only the
 *     structure's own line (the seed's fast path).
 *
 * Requirements: each access is 1, 2, 4, 8 or 16 bytes and naturally
 * aligned (so it never straddles a line); a line is read as one 16-byte
 * load, so memory must be readable up to the next 16-byte boundary (true
 * of anything cudaMalloc returned). The thread's state is in registers
 * when ID arguments are compile-time constants (they are template
 * parameters); the lines take 16 * lines_per_thread bytes of shared
 * memory per thread, laid out slot-major so a warp's accesses to one slot
 * are conflict-free.
 *
 * On Hopper L1 and shared memory share 256 KB per SM: shared memory given
 * to this cache is taken from L1 by the carve-out. Measure (docs/runtime.md).
 */

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#ifndef SOFTCACHE_THRESHOLD
#define SOFTCACHE_THRESHOLD 300   /* simulate() calls per thread in the monitoring phase */
#endif
#define SOFTCACHE_LINE_BYTES 16

namespace softcache {

/* ------------------------------------------------------------------ host */

/* What plan() decided for one launch configuration. */
struct launch_plan {
	int lines_per_thread;     /* CLN: 0 turns the caching layer off */
	size_t dynamic_smem;      /* pass as the launch's dynamic shared memory */
	size_t cache_offset;      /* byte offset of the cache region in dynamic shared memory */
	int blocks_per_sm;        /* occupancy, unchanged by the cache */
	size_t shared_free_per_sm;/* what the seed's formula divided */
};

/*
 * CLN at run time (the seed's formula): the shared memory the device has
 * per SM, less what the resident blocks of `kernel` already use (static,
 * user_dynamic_smem and the driver's reserve per block), divided by the
 * threads per SM and by the 16-byte line. Capped by `structures` (no use
 * for more lines than data structures), by max_lines when > 0, by the
 * per-block opt-in limit, and lowered until the kernel keeps its
 * occupancy. Raises the kernel's dynamic shared memory limit when the
 * result needs more than 48 KB. Returns the first CUDA error, if any.
 */
template <typename Kernel>
static cudaError_t plan(Kernel kernel, int block_threads, size_t user_dynamic_smem,
			int structures, launch_plan *out, int max_lines = 0)
{
	int dev, smem_sm, reserved, optin, blocks = 0, blocks2 = 0;
	cudaFuncAttributes fa;
	cudaError_t err;
	long long used, free_sm, cln, cap;
	size_t user = (user_dynamic_smem + 15) & ~(size_t)15;

	out->lines_per_thread = 0;
	out->dynamic_smem = user_dynamic_smem;
	out->cache_offset = user;
	out->blocks_per_sm = 0;
	out->shared_free_per_sm = 0;
	if ((err = cudaGetDevice(&dev)) ||
	    (err = cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev)) ||
	    (err = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev)) ||
	    (err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) ||
	    (err = cudaFuncGetAttributes(&fa, kernel)) ||
	    (err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block_threads,
								 user_dynamic_smem)))
		return err;
	out->blocks_per_sm = blocks;
	if (blocks <= 0 || block_threads <= 0)
		return cudaSuccess;
	used = (long long)blocks * (long long)(fa.sharedSizeBytes + user + (size_t)reserved);
	free_sm = (long long)smem_sm - used;
	if (free_sm <= 0)
		return cudaSuccess;
	out->shared_free_per_sm = (size_t)free_sm;
	cln = free_sm / ((long long)blocks * block_threads) / SOFTCACHE_LINE_BYTES;
	cap = ((long long)optin - (long long)fa.sharedSizeBytes - (long long)user) /
	      ((long long)block_threads * SOFTCACHE_LINE_BYTES);
	if (cln > cap)
		cln = cap;
	if (cln > structures)
		cln = structures;
	if (max_lines > 0 && cln > max_lines)
		cln = max_lines;
	for (; cln > 0; cln--) {
		size_t dyn = user + (size_t)cln * SOFTCACHE_LINE_BYTES * (size_t)block_threads;

		if ((err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
						(int)dyn)))
			return err;
		if ((err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks2, kernel,
									 block_threads, dyn)))
			return err;
		if (blocks2 >= blocks) {
			out->lines_per_thread = (int)cln;
			out->dynamic_smem = dyn;
			return cudaSuccess;
		}
	}
	return cudaSuccess;
}

/* ---------------------------------------------------------------- device */

/* 0xff in each byte whose bit is set in the low 4 bits of m. */
__device__ __forceinline__ uint32_t byte_mask(uint32_t m)
{
	return ((m & 1) ? 0x000000ffu : 0) | ((m & 2) ? 0x0000ff00u : 0) |
	       ((m & 4) ? 0x00ff0000u : 0) | ((m & 8) ? 0xff000000u : 0);
}

__device__ __forceinline__ uint32_t word_of(const uint4 &v, int w)
{
	return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
}

/* Merges the bytes of `mine` selected by the 16-bit byte mask over `base`. */
__device__ __forceinline__ uint4 merge(uint4 base, uint4 mine, uint32_t mask)
{
	uint32_t m0 = byte_mask(mask), m1 = byte_mask(mask >> 4), m2 = byte_mask(mask >> 8),
		 m3 = byte_mask(mask >> 12);
	uint4 r;

	r.x = (base.x & ~m0) | (mine.x & m0);
	r.y = (base.y & ~m1) | (mine.y & m1);
	r.z = (base.z & ~m2) | (mine.z & m2);
	r.w = (base.w & ~m3) | (mine.w & m3);
	return r;
}

/*
 * Writes the bytes of `data` selected by `mask` to the 16-byte memory line
 * at `line`: the whole line with one store, whole words with plain stores,
 * and partial words with an atomicCAS loop that replaces only the dirty
 * bytes, so concurrent writers of other bytes keep theirs.
 */
__device__ __forceinline__ void write_back(uintptr_t line, uint4 data, uint32_t mask)
{
	uint32_t *g = (uint32_t *)(line * SOFTCACHE_LINE_BYTES);
	int w;

	if (mask == 0xffffu) {
		*(uint4 *)g = data;
		return;
	}
#pragma unroll
	for (w = 0; w < 4; w++) {
		uint32_t m = (mask >> (4 * w)) & 0xfu, word = word_of(data, w);

		if (!m)
			continue;
		if (m == 0xfu) {
			g[w] = word;
		} else {
			uint32_t bm = byte_mask(m), assumed, old = *(volatile uint32_t *)&g[w];

			do {
				assumed = old;
				old = atomicCAS(&g[w], assumed, (assumed & ~bm) | (word & bm));
			} while (old != assumed);
		}
	}
}

template <typename T>
__device__ __forceinline__ uint32_t access_mask(uintptr_t off)
{
	static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 ||
			      sizeof(T) == 16,
		      "softcache accesses must be 1, 2, 4, 8 or 16 bytes");
	return (sizeof(T) == 16 ? 0xffffu : ((1u << sizeof(T)) - 1)) << off;
}

/*
 * One thread's cache over NDS data structures (IDs 0..NDS-1). NoAlias:
 * the caller promises the structures never overlap (restrict).
 */
template <int NDS, bool NoAlias = false>
class cache {
	static_assert(NDS >= 1 && NDS <= 16, "softcache: 1 to 16 data structures");

	/* monitoring phase (simulateCache) */
	uintptr_t sim_line_[NDS];
	unsigned sim_hits_[NDS];
	unsigned count_;
	unsigned written_;          /* structures stored to while monitoring */
	unsigned rw_;               /* declared read-write */
	/* caching phase, per structure */
	int slot_[NDS];             /* line slot, -1: not cached */
	uintptr_t tag_[NDS];        /* memory line (address / 16) held, 0: none */
	uint32_t dirty_[NDS];       /* bytes written since the fill (also the dirty bit) */
	unsigned filled_;           /* bit per structure: data was read from memory */
	int cln_;
	uint4 *base_;               /* this thread's slot 0 */
	unsigned stride_;           /* threads per block: slot s is base_ + s * stride_ */

	__device__ __forceinline__ uint4 *line_ptr(int k) const
	{
		return base_ + (size_t)slot_[k] * stride_;
	}

	/* Writes back line k if dirty and forgets it. */
	template <int K>
	__device__ __forceinline__ void drop()
	{
		if (tag_[K] && dirty_[K])
			write_back(tag_[K], *line_ptr(K), dirty_[K]);
		tag_[K] = 0;
		dirty_[K] = 0;
		filled_ &= ~(1u << K);
	}

	template <int K, typename T>
	__device__ __forceinline__ T read_line(uintptr_t line, uintptr_t off)
	{
		uint4 *d = line_ptr(K);
		uint32_t need = access_mask<T>(off);

		if (!(filled_ & (1u << K)) && (dirty_[K] & need) != need) {
			/* written before it was read: fetch and keep the written bytes */
			uint4 mem = *(const uint4 *)(line * SOFTCACHE_LINE_BYTES);
			*d = merge(mem, *d, dirty_[K]);
			filled_ |= 1u << K;
		}
		return *(const T *)((const char *)d + off);
	}

	template <int K, typename T>
	__device__ __forceinline__ void write_line(uintptr_t off, T v)
	{
		*(T *)((char *)line_ptr(K) + off) = v;
		dirty_[K] |= access_mask<T>(off);
	}

	/* Calls f.template operator()<K>() for the structure whose line holds `line`. */
	template <int K, typename F>
	__device__ __forceinline__ bool find_from(uintptr_t line, F &f)
	{
		if constexpr (K < NDS) {
			if (slot_[K] >= 0 && tag_[K] == line) {
				f.template operator()<K>();
				return true;
			}
			return find_from<K + 1>(line, f);
		} else {
			return false;
		}
	}

	template <int ID, typename F>
	__device__ __forceinline__ bool find(uintptr_t line, F &f)
	{
		if constexpr (NoAlias) {
			if (slot_[ID] >= 0 && tag_[ID] == line) {
				f.template operator()<ID>();
				return true;
			}
			return false;
		} else {
			return find_from<0>(line, f);
		}
	}

	template <int K>
	__device__ __forceinline__ void flush_from()
	{
		if constexpr (K < NDS) {
			if (slot_[K] >= 0)
				drop<K>();
			flush_from<K + 1>();
		}
	}

	template <typename T>
	struct reader {
		cache *c;
		uintptr_t line, off;
		T v;
		template <int K>
		__device__ __forceinline__ void operator()() { v = c->template read_line<K, T>(line, off); }
	};

	template <typename T>
	struct writer {
		cache *c;
		uintptr_t off;
		T v;
		template <int K>
		__device__ __forceinline__ void operator()() { c->template write_line<K, T>(off, v); }
	};

	struct dropper {
		cache *c;
		template <int K>
		__device__ __forceinline__ void operator()() { c->template drop<K>(); }
	};

public:
	/*
	 * Starts the monitoring phase. region: the cache's part of dynamic
	 * shared memory (16-byte aligned, lines_per_thread * 16 bytes per
	 * thread of the block); lines_per_thread: CLN from plan(), 0 disables
	 * caching; rw_mask: bit ID set for structures the kernel writes (stores
	 * seen while monitoring count too).
	 */
	__device__ __forceinline__ void init(void *region, int lines_per_thread, unsigned rw_mask = 0)
	{
		unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
		int k;

		stride_ = blockDim.x * blockDim.y * blockDim.z;
		base_ = (uint4 *)region + tid;
		cln_ = lines_per_thread > 0 ? lines_per_thread : 0;
		count_ = 0;
		written_ = 0;
		rw_ = rw_mask;
		filled_ = 0;
#pragma unroll
		for (k = 0; k < NDS; k++) {
			sim_line_[k] = 0;
			sim_hits_[k] = 0;
			slot_[k] = -1;
			tag_[k] = 0;
			dirty_[k] = 0;
		}
	}

	/*
	 * As init(), taking CLN from the launch itself: the dynamic shared
	 * memory from region_offset to its end (%dynamic_smem_size), divided
	 * among the block's threads.
	 */
	__device__ __forceinline__ void init_auto(void *dynamic_smem, size_t region_offset,
						  unsigned rw_mask = 0)
	{
		unsigned dyn, threads = blockDim.x * blockDim.y * blockDim.z;

		asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
		init((char *)dynamic_smem + region_offset,
		     dyn > region_offset ? (int)((dyn - region_offset) / (SOFTCACHE_LINE_BYTES * threads)) : 0,
		     rw_mask);
	}

	/* simulateCache: one imaginary line per structure; write: a store. */
	template <int ID>
	__device__ __forceinline__ void simulate(const void *addr, bool write = false)
	{
		uintptr_t line = (uintptr_t)addr / SOFTCACHE_LINE_BYTES;

		static_assert(ID >= 0 && ID < NDS, "softcache: structure ID out of range");
		if (line == sim_line_[ID])
			sim_hits_[ID]++;
		else
			sim_line_[ID] = line;
		if (write)
			written_ |= 1u << ID;
		count_++;
	}

	/* True until this thread has made SOFTCACHE_THRESHOLD simulate() calls. */
	__device__ __forceinline__ bool monitoring() const { return count_ < SOFTCACHE_THRESHOLD; }

	/*
	 * calculateWhatDataToCache: gives the CLN lines to the structures with
	 * the most simulated hits; a read-write structure wins over a
	 * read-only one only with more than twice its hits. Structures without
	 * a hit are not cached. Ends the monitoring phase.
	 */
	__device__ __forceinline__ void select()
	{
		int k, j;

#pragma unroll
		for (k = 0; k < NDS; k++) {
			bool rw_k = ((rw_ | written_) >> k) & 1;
			unsigned long long score_k = (unsigned long long)sim_hits_[k] * (rw_k ? 1 : 2);
			int rank = 0;

#pragma unroll
			for (j = 0; j < NDS; j++) {
				bool rw_j = ((rw_ | written_) >> j) & 1;
				unsigned long long score_j = (unsigned long long)sim_hits_[j] * (rw_j ? 1 : 2);

				if (j != k && (score_j > score_k ||
					       (score_j == score_k && (rw_j < rw_k || (rw_j == rw_k && j < k)))))
					rank++;
			}
			slot_[k] = (sim_hits_[k] > 0 && rank < cln_) ? rank : -1;
			tag_[k] = 0;
			dirty_[k] = 0;
		}
		filled_ = 0;
		count_ = SOFTCACHE_THRESHOLD;
	}

	/* accessThroughCache for a load: the value at p. */
	template <int ID, typename T>
	__device__ __forceinline__ T read(const T *p)
	{
		uintptr_t a = (uintptr_t)p, line = a / SOFTCACHE_LINE_BYTES, off = a % SOFTCACHE_LINE_BYTES;
		reader<T> r{ this, line, off, T() };

		static_assert(ID >= 0 && ID < NDS, "softcache: structure ID out of range");
		if (find<ID>(line, r))
			return r.v;
		if (slot_[ID] < 0)
			return *p;
		drop<ID>();
		*line_ptr(ID) = *(const uint4 *)(line * SOFTCACHE_LINE_BYTES);
		tag_[ID] = line;
		filled_ |= 1u << ID;
		return *(const T *)((const char *)line_ptr(ID) + off);
	}

	/* accessThroughCache for a store: *p = v. A miss allocates the line
	 * without reading memory; only the written bytes are ever written back. */
	template <int ID, typename T>
	__device__ __forceinline__ void write(T *p, T v)
	{
		uintptr_t a = (uintptr_t)p, line = a / SOFTCACHE_LINE_BYTES, off = a % SOFTCACHE_LINE_BYTES;
		writer<T> w{ this, off, v };

		static_assert(ID >= 0 && ID < NDS, "softcache: structure ID out of range");
		if (find<ID>(line, w))
			return;
		if (slot_[ID] < 0) {
			*p = v;
			return;
		}
		drop<ID>();
		tag_[ID] = line;
		write_line<ID, T>(off, v);
	}

	/* Writes back every dirty line and invalidates all lines. */
	__device__ __forceinline__ void flush() { flush_from<0>(); }

	/* The seed's flush(cacheConfig, address, id), before an atomic on p. */
	template <int ID>
	__device__ __forceinline__ void flush(const void *p)
	{
		dropper d{ this };

		static_assert(ID >= 0 && ID < NDS, "softcache: structure ID out of range");
		find<ID>((uintptr_t)p / SOFTCACHE_LINE_BYTES, d);
	}

	/* __syncthreads() for kernels using the cache: flush, then the barrier. */
	__device__ __forceinline__ void syncthreads()
	{
		flush();
		__syncthreads();
	}

	__device__ __forceinline__ void threadfence()
	{
		flush();
		__threadfence();
	}

	__device__ __forceinline__ void threadfence_block()
	{
		flush();
		__threadfence_block();
	}

	__device__ __forceinline__ void threadfence_system()
	{
		flush();
		__threadfence_system();
	}

	/* After select(): whether structure ID has a line; its simulated hits. */
	template <int ID>
	__device__ __forceinline__ bool cached() const { return slot_[ID] >= 0; }
	template <int ID>
	__device__ __forceinline__ unsigned hits() const { return sim_hits_[ID]; }
	__device__ __forceinline__ int lines_per_thread() const { return cln_; }
};

/*
 * The same calls as free functions: inside a template, where `sc` has a
 * dependent type, sc.read<0>(p) must be written sc.template read<0>(p);
 * softcache::read<0>(sc, p) needs no `template`.
 */
template <int ID, class C>
__device__ __forceinline__ void simulate(C &sc, const void *addr, bool write = false)
{
	sc.template simulate<ID>(addr, write);
}

template <int ID, class C, typename T>
__device__ __forceinline__ T read(C &sc, const T *p)
{
	return sc.template read<ID, T>(p);
}

template <int ID, class C, typename T>
__device__ __forceinline__ void write(C &sc, T *p, T v)
{
	sc.template write<ID, T>(p, v);
}

template <int ID, class C>
__device__ __forceinline__ void flush(C &sc, const void *p)
{
	sc.template flush<ID>(p);
}

} /* namespace softcache */

#endif
