/*
 * thrash_pair: two loads that thrash each other in L1.
 *
 * Each output row is a windowed correlation of two small arrays that every
 * block sweeps cyclically: at step k a block reads a contiguous chunk of
 * array A (float4, 16 bytes a thread) and of array B (float2, 8 bytes a
 * thread), then wraps around. The row's sum is scaled by a per-row weight
 * c[row] (read once: the third load, with no reuse) and counted into a
 * large per-block histogram in dynamic shared memory (about 180 KB, the
 * reason for the carve-out that leaves L1 small).
 *
 * Sizes follow the L1 left beside the shared memory (about 60 KB on sm_90):
 * A takes 85% of it and B 60%. Alone, either array's sweep fits L1 and
 * hits. Together they thrash: between two reads of one A line the block
 * reads half of A's size from B (reuse distance 1.5 x A > L1), and between
 * two reads of one B line it reads twice B's size from A. So
 * hit_{A,B} < hit_A + hit_B, and caching A (twice B's bytes a step) while
 * bypassing B is the best plan. All blocks read the same arrays, so misses
 * are served by L2 and the kernel is bound by L2 bandwidth.
 * Expected advice: keep the A load cached, bypass the B load
 * (L1::no_allocate); the c load has no reuse either way.
 *
 * Build variants for measuring without the tool: -DA_NA=1, -DB_NA=1,
 * -DC_NA=1 make the A, B or c load ld.global.L1::no_allocate.
 *
 * Usage: thrash_pair [key=value ...]; see --help and samples/README.md.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef A_NA
#define A_NA 0
#endif
#ifndef B_NA
#define B_NA 0
#endif
#ifndef C_NA
#define C_NA 0
#endif

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t err_ = (call);                                     \
		if (err_ != cudaSuccess) {                                     \
			fprintf(stderr, "thrash_pair: %s:%d: %s: %s\n",        \
				__FILE__, __LINE__, #call,                     \
				cudaGetErrorString(err_));                     \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define CHECK_LAUNCH(name) CHECK(cudaGetLastError())

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

static __device__ __forceinline__ float4 load_a(const float4 *p)
{
#if A_NA
	float4 v;
	asm("ld.global.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
	    : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
	    : "l"(p));
	return v;
#else
	return *p;
#endif
}

static __device__ __forceinline__ float2 load_b(const float2 *p)
{
#if B_NA
	float2 v;
	asm("ld.global.L1::no_allocate.v2.f32 {%0, %1}, [%2];"
	    : "=f"(v.x), "=f"(v.y)
	    : "l"(p));
	return v;
#else
	return *p;
#endif
}

static __device__ __forceinline__ float load_c(const float *p)
{
#if C_NA
	float v;
	asm("ld.global.L1::no_allocate.f32 %0, [%1];" : "=f"(v) : "l"(p));
	return v;
#else
	return *p;
#endif
}

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
	/* The block's position in both sweeps; every warp of it moves together. */
	uint32_t ia = (uint32_t)(((uint64_t)blockIdx.x * 977u * blockDim.x + threadIdx.x) % na);
	uint32_t ib = (uint32_t)(((uint64_t)blockIdx.x * 331u * blockDim.x + threadIdx.x) % nb);
	for (uint64_t row = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     row < nrows; row += nthreads) {
		float s = 0.0f;
		float4 va = make_float4(0.f, 0.f, 0.f, 0.f);
		float2 vb = make_float2(0.f, 0.f);
		/* Step k loads for step k and consumes step k-1's values, so one
		 * step's loads are in flight while the previous one is summed. */
#pragma unroll 1
		for (uint32_t k = 0; k <= steps; k++) {
			float4 na4 = load_a(a + ia);
			float2 nb2 = load_b(b + ib);
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
		s *= load_c(c + row);
		out[row] = s;
		atomicAdd(&hist[(__float_as_uint(s) >> 7) % nbins], 1u);
	}
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < nbins; i += blockDim.x)
		if (hist[i])
			atomicAdd(&hist_g[i], hist[i]);
}

/* Values in [-1, 1) from a hash of the index: no NaN, no denormals. */
__global__ void fill_float(float *p, uint64_t n, uint32_t seed)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t h = hash32((uint32_t)i ^ hash32((uint32_t)(i >> 32) + seed));
		p[i] = (float)(int32_t)h * (1.0f / 2147483648.0f);
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

struct options {
	long a_pct;      /* A's size, percent of the L1 left */
	long b_pct;      /* B's size, percent of the L1 left */
	long a_kb;       /* A's size in KB (overrides a_pct) */
	long b_kb;       /* B's size in KB (overrides b_pct) */
	long steps;      /* window length: steps per row */
	long rpt;        /* rows per thread */
	long shared_kb;  /* histogram in shared memory, KB */
	long threads;    /* threads per block */
	long iters;      /* timed launches */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: thrash_pair [key=value ...]\n"
		"  a_pct=N      A's size in percent of the L1 left beside the shared\n"
		"               memory (default 85)\n"
		"  b_pct=N      B's size in percent of that L1 (default 60)\n"
		"  a_kb=N       A's size in KB (overrides a_pct)\n"
		"  b_kb=N       B's size in KB (overrides b_pct)\n"
		"  steps=N      steps per row (default 256)\n"
		"  rpt=N        rows per thread (default 16)\n"
		"  shared_kb=N  histogram in dynamic shared memory, KB (default 180)\n"
		"  threads=N    threads per block (default 1024)\n"
		"  iters=N      timed launches (default 10)\n");
}

static long parse_kv(const char *arg, const char *key, long cur, bool *hit)
{
	size_t n = strlen(key);
	if (strncmp(arg, key, n) || arg[n] != '=')
		return cur;
	char *end;
	long v = strtol(arg + n + 1, &end, 0);
	if (*end || end == arg + n + 1 || v < 0) {
		fprintf(stderr, "thrash_pair: bad value in '%s'\n", arg);
		exit(1);
	}
	*hit = true;
	return v;
}

static const int carveouts_sm90[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};

/* The L1 left beside a block's shared memory (see stream_table.cu). */
static long l1_left_kb(const cudaDeviceProp &prop, long shared_bytes, int blocks)
{
	long unified = (long)prop.sharedMemPerMultiprocessor / 1024 + 28;
	long need = (blocks * (shared_bytes + (long)prop.reservedSharedMemPerBlock) + 1023) / 1024;
	long carve = need;
	if (prop.major == 9) {
		for (int c : carveouts_sm90)
			if (c >= need) {
				carve = c;
				break;
			}
	}
	return std::max(unified - carve, 8L);
}

static unsigned long long sum_of(const void *p, uint64_t words, uint64_t salt,
				 unsigned long long *sum, int grid)
{
	CHECK(cudaMemset(sum, 0, sizeof(*sum)));
	checksum<<<grid, 256>>>((const uint32_t *)p, words, salt, sum);
	CHECK_LAUNCH("checksum");
	unsigned long long h;
	CHECK(cudaMemcpy(&h, sum, sizeof(h), cudaMemcpyDeviceToHost));
	return h;
}

int main(int argc, char **argv)
{
	options o = {85, 60, 0, 0, 256, 16, 180, 1024, 10};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		bool hit = false;
		o.a_pct = parse_kv(argv[i], "a_pct", o.a_pct, &hit);
		o.b_pct = parse_kv(argv[i], "b_pct", o.b_pct, &hit);
		o.a_kb = parse_kv(argv[i], "a_kb", o.a_kb, &hit);
		o.b_kb = parse_kv(argv[i], "b_kb", o.b_kb, &hit);
		o.steps = parse_kv(argv[i], "steps", o.steps, &hit);
		o.rpt = parse_kv(argv[i], "rpt", o.rpt, &hit);
		o.shared_kb = parse_kv(argv[i], "shared_kb", o.shared_kb, &hit);
		o.threads = parse_kv(argv[i], "threads", o.threads, &hit);
		o.iters = parse_kv(argv[i], "iters", o.iters, &hit);
		if (!hit) {
			fprintf(stderr, "thrash_pair: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 1;
		}
	}
	if (o.steps < 1 || o.rpt < 1 || o.shared_kb < 1 || o.threads < 32 ||
	    o.threads > 1024 || o.threads % 32 || o.iters < 1 ||
	    (!o.a_kb && !o.a_pct) || (!o.b_kb && !o.b_pct)) {
		fprintf(stderr, "thrash_pair: option out of range\n");
		usage(stderr);
		return 1;
	}

	int dev;
	cudaDeviceProp prop;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));

	size_t shared_bytes = (size_t)o.shared_kb * 1024;
	if (shared_bytes > prop.sharedMemPerBlockOptin) {
		fprintf(stderr, "thrash_pair: shared_kb=%ld exceeds the device's %zu KB per block\n",
			o.shared_kb, prop.sharedMemPerBlockOptin / 1024);
		return 1;
	}
	CHECK(cudaFuncSetAttribute(correlate, cudaFuncAttributeMaxDynamicSharedMemorySize,
				   (int)shared_bytes));
	int per_sm = 0;
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, correlate, (int)o.threads,
							     shared_bytes));
	if (per_sm < 1) {
		fprintf(stderr, "thrash_pair: a block of %ld threads with %ld KB of shared memory does not fit an SM\n",
			o.threads, o.shared_kb);
		return 1;
	}
	long l1_kb = l1_left_kb(prop, (long)shared_bytes, per_sm);
	long a_bytes = o.a_kb ? o.a_kb * 1024 : l1_kb * 1024 * o.a_pct / 100;
	long b_bytes = o.b_kb ? o.b_kb * 1024 : l1_kb * 1024 * o.b_pct / 100;
	/* Whole chunks of one block, so every sweep step stays contiguous. */
	uint32_t na = (uint32_t)std::max<long>(a_bytes / 16 / o.threads, 1) * (uint32_t)o.threads;
	uint32_t nb = (uint32_t)std::max<long>(b_bytes / 8 / o.threads, 1) * (uint32_t)o.threads;
	uint32_t nbins = (uint32_t)(shared_bytes / 4);

	int grid = prop.multiProcessorCount * per_sm;
	uint64_t nthreads = (uint64_t)grid * o.threads;
	uint64_t nrows = nthreads * (uint64_t)o.rpt;

	printf("device: %s, %d SMs, L2 %d KB\n", prop.name, prop.multiProcessorCount,
	       prop.l2CacheSize / 1024);
	printf("shared histogram: %u bins (%ld KB), L1 left about %ld KB\n", nbins,
	       o.shared_kb, l1_kb);
	printf("A: %u x 16 B (%u KB), B: %u x 8 B (%u KB), %llu rows x %ld steps\n", na,
	       na * 16 / 1024, nb, nb * 8 / 1024, (unsigned long long)nrows, o.steps);
	printf("launch: %d blocks x %ld threads (%d per SM); variant: A %s, B %s, c %s\n",
	       grid, o.threads, per_sm, A_NA ? "L1::no_allocate" : "default",
	       B_NA ? "L1::no_allocate" : "default", C_NA ? "L1::no_allocate" : "default");

	float4 *a;
	float2 *b;
	float *c, *out;
	uint32_t *hist;
	unsigned long long *sum;
	CHECK(cudaMalloc(&a, (size_t)na * 16));
	CHECK(cudaMalloc(&b, (size_t)nb * 8));
	CHECK(cudaMalloc(&c, nrows * 4));
	CHECK(cudaMalloc(&out, nrows * 4));
	CHECK(cudaMalloc(&hist, (size_t)nbins * 4));
	CHECK(cudaMalloc(&sum, sizeof(*sum)));

	int fill_grid = prop.multiProcessorCount * 8;
	fill_float<<<fill_grid, 256>>>((float *)a, (uint64_t)na * 4, 1);
	CHECK_LAUNCH("fill_float");
	fill_float<<<fill_grid, 256>>>((float *)b, (uint64_t)nb * 2, 2);
	CHECK_LAUNCH("fill_float");
	fill_float<<<fill_grid, 256>>>(c, nrows, 3);
	CHECK_LAUNCH("fill_float");
	CHECK(cudaDeviceSynchronize());

	cudaEvent_t start, stop;
	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	std::vector<float> ms;
	/* Launch 0 is a warm-up and is not timed; the histogram of the last
	 * launch is kept. */
	for (long it = 0; it <= o.iters; it++) {
		CHECK(cudaMemset(hist, 0, (size_t)nbins * 4));
		CHECK(cudaEventRecord(start));
		correlate<<<grid, (unsigned)o.threads, shared_bytes>>>(
			a, na, b, nb, c, nrows, (uint32_t)o.steps, nbins, out, hist);
		CHECK_LAUNCH("correlate");
		CHECK(cudaEventRecord(stop));
		CHECK(cudaEventSynchronize(stop));
		float t;
		CHECK(cudaEventElapsedTime(&t, start, stop));
		if (it)
			ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	float med = ms[ms.size() / 2];
	double bytes = (double)nrows * (o.steps + 1) * 24;
	fprintf(stderr, "kernel correlate: %.4f ms\n", med);
	fprintf(stderr, "  min %.4f ms, max %.4f ms; %.1f GB/s of A and B loads\n", ms.front(),
	       ms.back(), bytes / med / 1e6);

	unsigned long long h = sum_of(out, nrows, 0, sum, fill_grid) +
			       sum_of(hist, nbins, 1ULL << 40, sum, fill_grid);
	printf("checksum: %016llx\n", h);

	CHECK(cudaFree(a));
	CHECK(cudaFree(b));
	CHECK(cudaFree(c));
	CHECK(cudaFree(out));
	CHECK(cudaFree(hist));
	CHECK(cudaFree(sum));
	return 0;
}
