/*
 * A program whose kernels read and write module-scope variables, as real
 * CUDA code does with __constant__ coefficients and __device__ tables or
 * counters set and read by name (cudaMemcpyToSymbol). It is profiled by
 * tests/gpu/t_module_vars.sh: the modules cacheadvise loads beside the
 * program's (capture variants, verification versions, the sampled monitor)
 * have their own copies of these variables, which the injection library
 * must fill from the program's before each launch and copy back after the
 * program's own launch ran one (collectors/inject/own_module.h). Any launch
 * that ran with unset copies changes the output printed at the end.
 *
 * mix (launched `iters` times) walks a dependent chain through d_table (a
 * __device__ table set from the host) keyed by a streaming key array,
 * scaled by c_scale (__constant__, changed before every launch) and
 * d_gain, accumulating into out. tally counts the outputs over c_limit
 * into d_count (__device__, atomics: the kernel cannot be replayed, so its
 * variants run as the program's own launches). Prints the checksum of out
 * and d_count, nothing timed.
 *
 * Usage: module_vars [iters] (default 100)
 */
#include "common.cuh"

#define TABLE 16384u          /* 64 KB of uint32 */
#define NKEYS (1u << 22)      /* 64 MB of uint4 keys */
#define THREADS 256

__device__ uint32_t d_table[TABLE];
__device__ float d_gain;
__device__ unsigned long long d_count;
__constant__ float c_scale[4];
__constant__ float c_limit;

__global__ void fill_keys(uint4 *keys, uint32_t n)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		keys[i] = make_uint4(hash32(4 * i), hash32(4 * i + 1), hash32(4 * i + 2), hash32(4 * i + 3));
}

__global__ void mix(const uint4 *keys, uint32_t nkeys, float *out)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t nthreads = gridDim.x * blockDim.x;
	uint32_t state = tid % TABLE, acc = 0;

	for (uint32_t r = tid; r < nkeys; r += nthreads) {
		uint4 k = keys[r];
		state = d_table[(state ^ k.x) % TABLE];
		state = d_table[(state ^ k.y) % TABLE];
		acc += state ^ k.z;
	}
	out[tid] += (float)(acc & 0xffffu) * c_scale[tid & 3] * d_gain;
}

__global__ void tally(const float *out, uint32_t n)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned over = i < n && out[i] > c_limit;
	unsigned warp = __popc(__ballot_sync(0xffffffffu, over));

	if ((threadIdx.x & 31) == 0 && warp)
		atomicAdd(&d_count, (unsigned long long)warp);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 100;
	int sms = 0;
	uint4 *keys;
	float *out;

	if (iters < 1) {
		fprintf(stderr, "usage: module_vars [iters >= 1]\n");
		return 2;
	}
	CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	uint32_t blocks = (uint32_t)sms * 4, n = blocks * THREADS;
	std::vector<uint32_t> table(TABLE);
	for (uint32_t i = 0; i < TABLE; i++)
		table[i] = hash32(i + 7) % TABLE;
	float gain = 0.5f, limit = 20000.0f;
	unsigned long long zero = 0;

	CHECK_CUDA(cudaMalloc(&keys, (size_t)NKEYS * sizeof(*keys)));
	CHECK_CUDA(cudaMalloc(&out, (size_t)n * sizeof(*out)));
	CHECK_CUDA(cudaMemset(out, 0, (size_t)n * sizeof(*out)));
	fill_keys<<<blocks, THREADS>>>(keys, NKEYS);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMemcpyToSymbol(d_table, table.data(), TABLE * sizeof(uint32_t)));
	CHECK_CUDA(cudaMemcpyToSymbol(d_gain, &gain, sizeof(gain)));
	CHECK_CUDA(cudaMemcpyToSymbol(d_count, &zero, sizeof(zero)));
	CHECK_CUDA(cudaMemcpyToSymbol(c_limit, &limit, sizeof(limit)));
	for (int it = 0; it < iters; it++) {
		float scale[4] = { 1.0f + 0.01f * (float)it, 0.5f, 0.25f + 0.001f * (float)it, 2.0f };

		CHECK_CUDA(cudaMemcpyToSymbol(c_scale, scale, sizeof(scale)));
		mix<<<blocks, THREADS>>>(keys, NKEYS, out);
		CHECK_CUDA(cudaGetLastError());
		tally<<<blocks, THREADS>>>(out, n);
		CHECK_CUDA(cudaGetLastError());
	}
	std::vector<float> host(n);
	unsigned long long count = 0;
	CHECK_CUDA(cudaMemcpy(host.data(), out, (size_t)n * sizeof(*out), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaMemcpyFromSymbol(&count, d_count, sizeof(count)));
	double sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += host[i] * (double)((i % 97) + 1);
	printf("checksum: %.6e\n", sum);
	printf("over the limit: %llu\n", count);
	CHECK_CUDA(cudaFree(keys));
	CHECK_CUDA(cudaFree(out));
	return 0;
}
