/*
 * The read path of the software cache (softcache.cuh) as PTX functions that
 * `cacheadvise profile` calls from a kernel it rewrites itself
 * (analysis/ptx_softcache.h, docs/runtime.md "The automatic rewrite").
 * The build compiles this file to PTX with nvcc and embeds the text in
 * cacheadvise; it is never linked into a program.
 *
 * One thread-private 16-byte line per cached data structure, in shared
 * memory: `line` is the shared-window address of this thread's line (the
 * caller computes it once per thread), `tag` the memory line (address / 16)
 * the line holds, kept in a register of the caller, 0 for none (no valid
 * address is below 16). After each call the line holds the memory line of
 * `p`, so the caller's new tag is p / 16. line == SOFTCACHE_CALL_OFF turns
 * the cache off: the access goes straight to memory (a launch with more
 * threads per block than the storage was sized for).
 *
 * Read-only structures only: a line is never written back, and another
 * thread's writes to the same memory during the kernel would not be seen.
 * Each access is 1, 2, 4, 8 or 16 bytes, naturally aligned, so it never
 * straddles a line; memory is readable up to the next 16-byte boundary
 * (true of cudaMalloc'd arrays). Returned values are raw bits, zero-extended.
 */
#include <stdint.h>

#include "device/softcache.cuh"

#define SOFTCACHE_CALL_OFF 0xffffffffu

/* This thread's line, filled with p's memory line when tag does not hold it. */
static __device__ __forceinline__ uint32_t softcache_fill(uint64_t a, uint32_t line, uint64_t tag)
{
	uint64_t l = a / SOFTCACHE_LINE_BYTES;

	if (l != tag) {
		uint32_t x, y, z, w;

		asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
			     : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
			     : "l"(l * SOFTCACHE_LINE_BYTES));
		asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
			     :: "r"(line), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
	}
	return line + (uint32_t)(a % SOFTCACHE_LINE_BYTES);
}

extern "C" __device__ __noinline__ uint32_t __cacheadvise_sc_read1(uint64_t a, uint32_t line,
								   uint64_t tag)
{
	uint16_t v;

	if (line == SOFTCACHE_CALL_OFF) {
		asm volatile("ld.global.u8 %0, [%1];" : "=h"(v) : "l"(a));
		return v;
	}
	asm volatile("ld.shared.u8 %0, [%1];" : "=h"(v) : "r"(softcache_fill(a, line, tag)) : "memory");
	return v;
}

extern "C" __device__ __noinline__ uint32_t __cacheadvise_sc_read2(uint64_t a, uint32_t line,
								   uint64_t tag)
{
	uint16_t v;

	if (line == SOFTCACHE_CALL_OFF) {
		asm volatile("ld.global.u16 %0, [%1];" : "=h"(v) : "l"(a));
		return v;
	}
	asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(softcache_fill(a, line, tag)) : "memory");
	return v;
}

extern "C" __device__ __noinline__ uint32_t __cacheadvise_sc_read4(uint64_t a, uint32_t line,
								   uint64_t tag)
{
	uint32_t v;

	if (line == SOFTCACHE_CALL_OFF) {
		asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(a));
		return v;
	}
	asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(softcache_fill(a, line, tag)) : "memory");
	return v;
}

extern "C" __device__ __noinline__ uint64_t __cacheadvise_sc_read8(uint64_t a, uint32_t line,
								   uint64_t tag)
{
	uint64_t v;

	if (line == SOFTCACHE_CALL_OFF) {
		asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(a));
		return v;
	}
	asm volatile("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"(softcache_fill(a, line, tag)) : "memory");
	return v;
}

extern "C" __device__ __noinline__ uint4 __cacheadvise_sc_read16(uint64_t a, uint32_t line,
								 uint64_t tag)
{
	uint4 v;

	if (line == SOFTCACHE_CALL_OFF) {
		asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
			     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(a));
		return v;
	}
	asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
		     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
		     : "r"(softcache_fill(a, line, tag)) : "memory");
	return v;
}
