#ifndef CACHEADVISE_TEST_RECORDS_KERNELS_CUH
#define CACHEADVISE_TEST_RECORDS_KERNELS_CUH

/*
 * The record-streaming kernel of samples/records.cu (the software-cache
 * seed's example: char and int inputs, int output, each thread walking its
 * own run of records), in its plain form and rewritten with the software
 * cache exactly as the seed's compiler transformation does it: slice 1
 * monitors with simulate(), select() picks the structures, slice 2 goes
 * through the cache, flush() at the end. The plain kernel and
 * do_computation are kept identical to the sample's, so outputs can be
 * compared bit for bit.
 */
#include <cstdint>

#include "common.cuh"
#include "device/softcache.cuh"

#define RECORDS_THREADS 256

static __device__ __forceinline__ int do_computation(char a, int b)
{
	int x = (int)a * 40503 + (b ^ (b >> 7));
	return x ^ (x << 5) ^ (int)((unsigned)b >> 13);
}

__global__ void __launch_bounds__(RECORDS_THREADS)
process_records(const char *charInput, const int *intInput, int *intOutput,
		uint32_t per_thread, uint64_t nthreads)
{
	uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= nthreads)
		return;
	uint64_t start = t * per_thread, end = start + per_thread;
	for (uint64_t i = start; i < end; i++) {
		char a = charInput[i];
		int b = intInput[i];
		intOutput[i] = do_computation(a, b);
	}
}

/* IDs of the three data structures. */
enum { DS_CHAR, DS_INT, DS_OUT, DS_COUNT };

template <bool NoAlias>
__global__ void __launch_bounds__(RECORDS_THREADS)
process_records_sc(const char *charInput, const int *intInput, int *intOutput,
		   uint32_t per_thread, uint64_t nthreads, int cln, unsigned *selected)
{
	extern __shared__ uint4 softcache_region[];
	softcache::cache<DS_COUNT, NoAlias> sc;
	uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	sc.init(softcache_region, cln, 1u << DS_OUT);
	if (t >= nthreads)
		return;
	uint64_t i = t * per_thread, end = i + per_thread;
	/* slice 1: the monitoring phase */
	for (; i < end && sc.monitoring(); i++) {
		char a = charInput[i];
		sc.template simulate<DS_CHAR>(&charInput[i]);
		int b = intInput[i];
		sc.template simulate<DS_INT>(&intInput[i]);
		intOutput[i] = do_computation(a, b);
		sc.template simulate<DS_OUT>(&intOutput[i], true);
	}
	sc.select();
	if (selected && t == 0)
		*selected = (sc.template cached<DS_CHAR>() ? 1u : 0u) |
			    (sc.template cached<DS_INT>() ? 2u : 0u) |
			    (sc.template cached<DS_OUT>() ? 4u : 0u);
	/* slice 2: the rest of the computation, through the cache */
	for (; i < end; i++) {
		char a = sc.template read<DS_CHAR>(&charInput[i]);
		int b = sc.template read<DS_INT>(&intInput[i]);
		sc.template write<DS_OUT>(&intOutput[i], do_computation(a, b));
	}
	sc.flush();
}

#endif
