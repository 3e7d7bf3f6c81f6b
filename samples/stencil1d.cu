/*
 * stencil1d: a 1-D k-stencil, B[i] = (A[i] + ... + A[i + 2k]) / (2k + 1),
 * the register-cache seed's example, in two versions:
 *
 *   stencil_global  every thread reads its 2k + 1 inputs with plain global
 *                   loads; neighbouring lanes read overlapping elements, so
 *                   each input is loaded 2k + 1 times and L1 serves the
 *                   repeats (the case a warp register cache replaces);
 *   stencil_shared  each block copies its inputs (blockDim + 2k) into
 *                   shared memory once, then sums from there.
 *
 * Both sum in the same order, so their outputs are bit-identical; the
 * program checks that and exits 1 if they differ.
 *
 * Usage: stencil1d [key=value ...]; see --help and samples/README.md.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t err_ = (call);                                     \
		if (err_ != cudaSuccess) {                                     \
			fprintf(stderr, "stencil1d: %s:%d: %s: %s\n",          \
				__FILE__, __LINE__, #call,                     \
				cudaGetErrorString(err_));                     \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define CHECK_LAUNCH(name) CHECK(cudaGetLastError())

#define THREADS 256

static __host__ __device__ __forceinline__ uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static __device__ __forceinline__ uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

__global__ void __launch_bounds__(THREADS)
stencil_global(const float *in, float *out, uint64_t nout, int k)
{
	float scale = 1.0f / (float)(2 * k + 1);
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nout;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		float s = 0.0f;
		for (int j = 0; j <= 2 * k; j++)
			s += in[i + j];
		out[i] = s * scale;
	}
}

__global__ void __launch_bounds__(THREADS)
stencil_shared(const float *in, float *out, uint64_t nout, int k)
{
	extern __shared__ float tile[]; /* blockDim.x + 2k inputs */
	float scale = 1.0f / (float)(2 * k + 1);
	uint64_t nin = nout + 2 * k;
	for (uint64_t base = (uint64_t)blockIdx.x * blockDim.x; base < nout;
	     base += (uint64_t)gridDim.x * blockDim.x) {
		for (uint32_t l = threadIdx.x; l < blockDim.x + 2 * k; l += blockDim.x)
			if (base + l < nin)
				tile[l] = in[base + l];
		__syncthreads();
		uint64_t i = base + threadIdx.x;
		if (i < nout) {
			float s = 0.0f;
			for (int j = 0; j <= 2 * k; j++)
				s += tile[threadIdx.x + j];
			out[i] = s * scale;
		}
		__syncthreads();
	}
}

/* Values in [0, 1) from a hash of the index. */
__global__ void fill_float(float *p, uint64_t n, uint32_t seed)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t h = hash32((uint32_t)i ^ hash32((uint32_t)(i >> 32) + seed));
		p[i] = (float)(h >> 8) * (1.0f / 16777216.0f);
	}
}

__global__ void checksum(const uint32_t *p, uint64_t n, uint64_t salt,
			 unsigned long long *sum)
{
	uint64_t s = 0;
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		s += mix64((i + salt) * 0x9e3779b97f4a7c15ULL ^ p[i]);
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(sum, (unsigned long long)s);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: stencil1d [key=value ...]\n"
		"  n=N      number of outputs in units of 2^20 (default 384: 1.5 GB per array)\n"
		"  k=N      stencil radius, 1..64 (default 4)\n"
		"  iters=N  timed launches of each kernel (default 10)\n");
}

static long parse_kv(const char *arg, const char *key, long cur, bool *hit)
{
	size_t n = strlen(key);
	if (strncmp(arg, key, n) || arg[n] != '=')
		return cur;
	char *end;
	long v = strtol(arg + n + 1, &end, 0);
	if (*end || end == arg + n + 1 || v < 0) {
		fprintf(stderr, "stencil1d: bad value in '%s'\n", arg);
		exit(1);
	}
	*hit = true;
	return v;
}

static unsigned long long sum_of(const void *p, uint64_t words,
				 unsigned long long *sum, int grid)
{
	CHECK(cudaMemset(sum, 0, sizeof(*sum)));
	checksum<<<grid, 256>>>((const uint32_t *)p, words, 0, sum);
	CHECK_LAUNCH("checksum");
	unsigned long long h;
	CHECK(cudaMemcpy(&h, sum, sizeof(h), cudaMemcpyDeviceToHost));
	return h;
}

int main(int argc, char **argv)
{
	long n_m = 384, k = 4, iters = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		bool hit = false;
		n_m = parse_kv(argv[i], "n", n_m, &hit);
		k = parse_kv(argv[i], "k", k, &hit);
		iters = parse_kv(argv[i], "iters", iters, &hit);
		if (!hit) {
			fprintf(stderr, "stencil1d: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 1;
		}
	}
	if (n_m < 1 || n_m > 1024 || k < 1 || k > 64 || iters < 1) {
		fprintf(stderr, "stencil1d: option out of range\n");
		usage(stderr);
		return 1;
	}

	int dev;
	cudaDeviceProp prop;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));

	uint64_t nout = (uint64_t)n_m << 20;
	uint64_t nin = nout + 2 * (uint64_t)k;
	size_t shared_bytes = (THREADS + 2 * (size_t)k) * sizeof(float);
	int per_sm_g = 0, per_sm_s = 0;
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_g, stencil_global, THREADS, 0));
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_s, stencil_shared, THREADS,
							     shared_bytes));
	int grid_g = prop.multiProcessorCount * per_sm_g;
	int grid_s = prop.multiProcessorCount * per_sm_s;

	printf("device: %s, %d SMs, L2 %d KB\n", prop.name, prop.multiProcessorCount,
	       prop.l2CacheSize / 1024);
	printf("stencil: %llu outputs, radius %ld (%ld taps), %.0f MB per array\n",
	       (unsigned long long)nout, k, 2 * k + 1, nin * 4.0 / 1e6);

	float *in, *out_g, *out_s;
	unsigned long long *sum;
	CHECK(cudaMalloc(&in, nin * 4));
	CHECK(cudaMalloc(&out_g, nout * 4));
	CHECK(cudaMalloc(&out_s, nout * 4));
	CHECK(cudaMalloc(&sum, sizeof(*sum)));
	int fill_grid = prop.multiProcessorCount * 8;
	fill_float<<<fill_grid, 256>>>(in, nin, 7);
	CHECK_LAUNCH("fill_float");
	CHECK(cudaDeviceSynchronize());

	cudaEvent_t start, stop;
	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	std::vector<float> ms_g, ms_s;
	/* Launch 0 of each is a warm-up and is not timed. */
	for (long it = 0; it <= iters; it++) {
		float t;
		CHECK(cudaEventRecord(start));
		stencil_global<<<grid_g, THREADS>>>(in, out_g, nout, (int)k);
		CHECK_LAUNCH("stencil_global");
		CHECK(cudaEventRecord(stop));
		CHECK(cudaEventSynchronize(stop));
		CHECK(cudaEventElapsedTime(&t, start, stop));
		if (it)
			ms_g.push_back(t);

		CHECK(cudaEventRecord(start));
		stencil_shared<<<grid_s, THREADS, shared_bytes>>>(in, out_s, nout, (int)k);
		CHECK_LAUNCH("stencil_shared");
		CHECK(cudaEventRecord(stop));
		CHECK(cudaEventSynchronize(stop));
		CHECK(cudaEventElapsedTime(&t, start, stop));
		if (it)
			ms_s.push_back(t);
	}
	std::sort(ms_g.begin(), ms_g.end());
	std::sort(ms_s.begin(), ms_s.end());
	double bytes = (double)(nin + nout) * 4;
	fprintf(stderr, "kernel stencil_global: %.4f ms\n", ms_g[ms_g.size() / 2]);
	fprintf(stderr, "  min %.4f ms, max %.4f ms; %.1f GB/s (input read once + output)\n",
	       ms_g.front(), ms_g.back(), bytes / ms_g[ms_g.size() / 2] / 1e6);
	fprintf(stderr, "kernel stencil_shared: %.4f ms\n", ms_s[ms_s.size() / 2]);
	fprintf(stderr, "  min %.4f ms, max %.4f ms; %.1f GB/s (input read once + output)\n",
	       ms_s.front(), ms_s.back(), bytes / ms_s[ms_s.size() / 2] / 1e6);

	unsigned long long hg = sum_of(out_g, nout, sum, fill_grid);
	unsigned long long hs = sum_of(out_s, nout, sum, fill_grid);
	if (hg != hs) {
		fprintf(stderr, "stencil1d: stencil_global and stencil_shared disagree (%016llx vs %016llx)\n",
			hg, hs);
		return 1;
	}
	printf("checksum: %016llx\n", hg + hs);

	CHECK(cudaFree(in));
	CHECK(cudaFree(out_g));
	CHECK(cudaFree(out_s));
	CHECK(cudaFree(sum));
	return 0;
}
